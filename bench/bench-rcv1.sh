#!/bin/sh
# bench-rcv1.sh: sparse logistic regression on RCV1-shaped data, non-zeros per second on 1 and 2 threads against the 200M/s target.
#
# Usage: sh bench/bench-rcv1.sh BUILD_DIR
# Data: BUILD_DIR/tools/gen_sparse, 800,000 rows x 47,000 features x 75
# non-zeros (RCV1's shape), converted once to a binary dataset and cached
# under $BENCH_DIR. Each repetition runs `hogtrain train --epochs EPOCHS`
# on 1 thread and then on 2 (the order alternates between repetitions, so
# the two see the same noise from whatever else runs on the machine), after
# one unmeasured warm-up of each, and reads nnz_per_s (non-zeros trained
# per second of training, reading and evaluation excluded) from --report.
# Prints the medians (min/max) of both, the 1-thread median against the
# target, and the 2-vs-1 speedup: the ratio of the medians and the median
# of the per-repetition ratios (paired: the two runs of one repetition ran
# side by side in time).
# Environment: REPS (default 5), EPOCHS (default 3), TARGET (non-zeros/s,
# default 200000000), BENCH_DIR (default /tmp/hogtrain-bench), HOGTRAIN
# (the binary to measure, default BUILD_DIR/hogtrain: point it at an older
# build to compare).
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
reps=${REPS:-5}
epochs=${EPOCHS:-3}
target=${TARGET:-200000000}
bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
bin=${HOGTRAIN:-$build/hogtrain}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
mkdir -p "$bench_dir"
svm="$bench_dir/rcv1-shape.svm"
data="$bench_dir/rcv1-shape.hgd"
if [ ! -s "$data" ]; then
    "$build/tools/gen_sparse" -n 800000 -d 47000 -k 75 -s 1 -q -o "$svm"
    "$build/hogtrain" convert "$svm" -o "$data" -q
    rm -f "$svm"
fi

# run THREADS: one training run; prints its nnz_per_s.
run() {
    "$bin" train "$data" -o "$bench_dir/rcv1.hog" --threads "$1" --epochs "$epochs" -q \
        --report "$bench_dir/rcv1.json"
    "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["nnz_per_s"])' "$bench_dir/rcv1.json"
}

run 1 >/dev/null
run 2 >/dev/null
csv="$bench_dir/rcv1.csv"
echo "rep,nnz_per_s_1,nnz_per_s_2" >"$csv"
rep=1
while [ "$rep" -le "$reps" ]; do
    if [ $((rep % 2)) -eq 1 ]; then
        one=$(run 1)
        two=$(run 2)
    else
        two=$(run 2)
        one=$(run 1)
    fi
    echo "$rep,$one,$two" >>"$csv"
    echo "rep $rep: 1 thread $one, 2 threads $two non-zeros/s" >&2
    rep=$((rep + 1))
done
"$py" - "$csv" "$target" "$bin" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
target = float(sys.argv[2])
one = [float(r["nnz_per_s_1"]) for r in rows]
two = [float(r["nnz_per_s_2"]) for r in rows]
m1, m2 = statistics.median(one), statistics.median(two)
paired = statistics.median(b / a for a, b in zip(one, two))
print("%s, %d repetitions" % (sys.argv[3], len(rows)))
print("| threads | non-zeros/s, median (min / max) | vs %.0fM target |" % (target / 1e6))
print("|---:|---:|---:|")
print("| 1 | %.1fM (%.1fM / %.1fM) | %.2fx |" % (m1 / 1e6, min(one) / 1e6, max(one) / 1e6, m1 / target))
print("| 2 | %.1fM (%.1fM / %.1fM) | %.2fx |" % (m2 / 1e6, min(two) / 1e6, max(two) / 1e6, m2 / target))
print("2 vs 1 thread: %.2fx (ratio of medians), %.2fx (median of paired ratios)" % (m2 / m1, paired))
PY
