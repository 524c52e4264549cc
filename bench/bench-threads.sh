#!/bin/sh
# bench-threads.sh: measures HOGWILD! training throughput against the number of threads on synthetic sparse data; prints a Markdown table.
#
# Usage: sh bench/bench-threads.sh BUILD_DIR
#
# Data: 1,000,000 rows, 2^20 features, 75 non-zeros per row, seed 1, made once
# by BUILD_DIR/tools/gen_sparse and converted to .hgd under $BENCH_DIR.
# Runs: `hogtrain train --loss logistic --epochs 5` for 1, 2, ..., nproc
# threads (at least 1 and 2), one warm-up run each and then $REPS measured
# runs each, interleaved across thread counts. Every run goes to results/bench-threads-YYYYmmdd-HHMMSS.csv; the
# table shows per thread count the median, min and max of examples/s, the
# median of non-zeros/s and the speedup of the median over 1 thread.
#
# Environment (all optional):
#   THREADS    thread counts to run, e.g. "1 2 4 8" (default 1..nproc)
#   REPS       measured runs per thread count (default 5)
#   EPOCHS     epochs per run (default 5)
#   ROWS       rows of the synthetic set (default 1000000)
#   BENCH_DIR  where the data and scratch files go (default /tmp/hogtrain-bench)
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
if ! build=$(cd "$1" 2>/dev/null && pwd); then
    echo "bench-threads.sh: build folder $1 not found: run make first" >&2
    exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
hogtrain="$build/hogtrain"
gen="$build/tools/gen_sparse"
for tool in "$hogtrain" "$gen"; do
    if [ ! -x "$tool" ]; then
        echo "bench-threads.sh: $tool not found: run make first" >&2
        exit 1
    fi
done
if [ -x /usr/bin/python3 ]; then
    py=/usr/bin/python3
elif py=$(command -v python3); then
    :
else
    echo "bench-threads.sh: python3 is needed to read the JSON reports (apt-get install python3)" >&2
    exit 1
fi

cpus=$(nproc)
reps=${REPS:-5}
epochs=${EPOCHS:-5}
rows=${ROWS:-1000000}
features=1048576
nnz=75
seed=1
if [ -n "${THREADS:-}" ]; then
    threads=$THREADS
else
    max=$cpus
    [ "$max" -ge 2 ] || max=2
    threads=$(seq 1 "$max" | tr '\n' ' ')
fi
bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
mkdir -p "$bench_dir" "$root/results"

# ---- data ----
data="$bench_dir/sparse-n$rows-d$features-k$nnz-s$seed.hgd"
# Made again when missing or unreadable (say, left by an older format).
if [ ! -s "$data" ] || ! "$hogtrain" info "$data" >/dev/null 2>&1; then
    svm="$bench_dir/sparse-n$rows-d$features-k$nnz-s$seed.svm"
    trap 'rm -f "$svm"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    echo "bench-threads.sh: generating $data" >&2
    "$gen" -n "$rows" -d "$features" -k "$nnz" -s "$seed" -o "$svm"
    "$hogtrain" convert "$svm" -o "$data" --format libsvm -q
    rm -f "$svm"
fi

# ---- runs ----
stamp=$(date +%Y%m%d-%H%M%S)
csv="$root/results/bench-threads-$stamp.csv"
report="$bench_dir/report.json"
model="$bench_dir/model.hog"
echo "threads,threads_used,rep,wall_seconds,train_seconds,examples_per_s,nnz_per_s,train_loss" >"$csv"

# train T: one run with T threads; its report in $report.
train() {
    rm -f "$report"
    if ! "$hogtrain" train "$data" -o "$model" --loss logistic --epochs "$epochs" \
        --threads "$1" --report "$report" -q; then
        echo "bench-threads.sh: hogtrain train failed with $1 threads" >&2
        exit 1
    fi
}

# One warm-up per thread count (page cache, CPU frequency; not counted), then
# the repetitions interleaved across thread counts, so that a noisy spell on
# this shared machine falls on every thread count alike.
for t in $threads; do
    train "$t"
done
rep=1
while [ "$rep" -le "$reps" ]; do
    for t in $threads; do
        train "$t"
        "$py" - "$report" "$t" "$rep" >>"$csv" <<'PY'
import json, sys
path, threads, rep = sys.argv[1:4]
with open(path) as f:
    r = json.load(f)
print("%s,%s,%s,%.6f,%.6f,%.1f,%.1f,%.9g" % (threads, r["threads"], rep, r["wall_seconds"],
      r["train_seconds"], r["examples_per_s"], r["nnz_per_s"], r["train_loss"]))
PY
        tail -n 1 "$csv" | awk -F, '{ printf "threads %s, run %s: %.3g examples/s, %.3g M non-zeros/s, %.3g s\n", $1, $3, $6, $7 / 1e6, $4 }' >&2
    done
    rep=$((rep + 1))
done

# ---- table ----
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
version=$("$hogtrain" version 2>/dev/null || echo "hogtrain (version unknown)")
echo
echo "HOGWILD! thread scaling: $rows rows, $features features, $nnz non-zeros per row (seed $seed),"
echo "logistic loss, $epochs epochs, median of $reps runs after one warm-up."
echo "Machine: ${cpu:-unknown CPU}, $cpus CPUs. $version. Raw runs: results/bench-threads-$stamp.csv"
echo
"$py" - "$csv" <<'PY'
import csv, statistics, sys
runs = {}
with open(sys.argv[1]) as f:
    for row in csv.DictReader(f):
        runs.setdefault(int(row["threads"]), []).append(row)
print("| threads | median examples/s | median non-zeros/s (M) | min examples/s | max examples/s | speedup of medians | median paired speedup |")
print("|--------:|------------------:|-----------------------:|---------------:|---------------:|-------------------:|----------------------:|")
# Paired: each run against the 1-thread run of the same repetition, which
# ran moments before it; a slow spell on the machine then cancels out.
one = {r["rep"]: float(r["examples_per_s"]) for r in runs.get(1, [])}
base = statistics.median(one.values()) if one else None
for t in sorted(runs):
    ex = [float(r["examples_per_s"]) for r in runs[t]]
    nz = [float(r["nnz_per_s"]) for r in runs[t]]
    med = statistics.median(ex)
    speedup = "%.2fx" % (med / base) if base else "-"
    pairs = [float(r["examples_per_s"]) / one[r["rep"]] for r in runs[t] if r["rep"] in one]
    paired = "%.2fx" % statistics.median(pairs) if pairs else "-"
    print("| %7d | %17.0f | %22.1f | %14.0f | %14.0f | %18s | %21s |"
          % (t, med, statistics.median(nz) / 1e6, min(ex), max(ex), speedup, paired))
PY
