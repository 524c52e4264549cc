#!/bin/sh
# bench-rcv1.sh: sparse logistic regression on RCV1-shaped data, non-zeros per second on 1 and 2 threads (or $THREADS) against the 200M/s target.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-rcv1.sh BUILD_DIR
# Data: BUILD_DIR/tools/gen_sparse, 800,000 rows x 47,000 features x 75
# non-zeros (RCV1's shape), converted once to a binary dataset and cached
# under $BENCH_DIR. Each repetition runs `hogtrain train --epochs EPOCHS
# $FLAGS` once on each thread count (the order reverses between repetitions, so
# all see the same noise from whatever else runs on the machine), after
# one unmeasured warm-up of each, and reads nnz_per_s (non-zeros trained
# per second of training, reading and evaluation excluded) from --report.
# Prints the medians (min/max) of each, the one-thread median against the
# target, and each count's speedup over one thread: the ratio of the
# medians and the median of the per-repetition ratios (paired: the runs of
# one repetition ran side by side in time).
# FLAGS is the plain loop by default ("--normalized 0 --step 0.1 --decay
# 0.9", the settings the target and the README's figures are for); FLAGS=
# measures train's defaults (bench-defaults.sh speed compares the two).
# Environment: THREADS (the thread counts, default "1 2"; 1 is always
# measured), REPS (default 5), EPOCHS (default 3), TARGET (non-zeros/s,
# default 200000000), BENCH_DIR (default /tmp/hogtrain-bench), HOGTRAIN
# (the binary to measure, default BUILD_DIR/hogtrain: point it at an older
# build to compare).
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
. "$(dirname "$0")/bench-env.sh"
bench_thread_counts "$0"
reps=${REPS:-5}
epochs=${EPOCHS:-3}
target=${TARGET:-200000000}
bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
bin=${HOGTRAIN:-$build/hogtrain}
flags=${FLAGS---normalized 0 --step 0.1 --decay 0.9}
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
    # shellcheck disable=SC2086 # FLAGS is a list of options
    "$bin" train "$data" -o "$bench_dir/rcv1.hog" --threads "$1" --epochs "$epochs" -q $flags \
        --report "$bench_dir/rcv1.json"
    "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["nnz_per_s"])' "$bench_dir/rcv1.json"
}

reversed=$(echo "$counts" | tr ' ' '\n' | sort -rn | tr '\n' ' ')

for t in $counts; do run "$t" >/dev/null; done
csv="$bench_dir/rcv1.csv"
echo "rep,threads,nnz_per_s" >"$csv"
rep=1
while [ "$rep" -le "$reps" ]; do
    order=$counts
    [ $((rep % 2)) -eq 0 ] && order=$reversed
    for t in $order; do
        r=$(run "$t")
        echo "$rep,$t,$r" >>"$csv"
        echo "rep $rep: $t threads $r non-zeros/s" >&2
    done
    rep=$((rep + 1))
done
"$py" - "$csv" "$target" "$bin" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
target = float(sys.argv[2])
by = {}
for r in rows:
    by.setdefault(int(r["threads"]), {})[r["rep"]] = float(r["nnz_per_s"])
one = by[1]
m1 = statistics.median(one.values())
print("%s, %d repetitions" % (sys.argv[3], len(one)))
print("| threads | non-zeros/s, median (min / max) | vs %.0fM target | speedup (ratio of medians) | speedup (median of paired ratios) |" % (target / 1e6))
print("|---:|---:|---:|---:|---:|")
for t in sorted(by):
    v = by[t]
    m = statistics.median(v.values())
    paired = statistics.median(v[k] / one[k] for k in v)
    print("| %d | %.1fM (%.1fM / %.1fM) | %.2fx | %.2fx | %.2fx |" % (t, m / 1e6, min(v.values()) / 1e6,
          max(v.values()) / 1e6, m / target, m / m1, paired))
PY
