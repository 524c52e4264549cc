#!/bin/sh
# bench-threads.sh: measures HOGWILD! training throughput against the number of threads on synthetic sparse data; prints a Markdown table.
#
# Usage: sh bench/bench-threads.sh BUILD_DIR
#
# Data: 1,000,000 rows, 2^20 features, 75 non-zeros per row, seed 1, made once
# by BUILD_DIR/tools/gen_sparse and converted to .hgd under $BENCH_DIR.
# Runs: `hogtrain train --loss logistic --epochs 5` for 1, 2, ..., nproc
# threads (at least 1 and 2), one warm-up run and then $REPS measured runs
# each. Every run goes to results/bench-threads-YYYYmmdd-HHMMSS.csv; the
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

for t in $threads; do
    train "$t" # warm-up: page cache, CPU frequency; not counted
    rep=1
    while [ "$rep" -le "$reps" ]; do
        train "$t"
        "$py" - "$report" "$t" "$rep" >>"$csv" <<'PY'
import json, sys
path, threads, rep = sys.argv[1:4]
with open(path) as f:
    r = json.load(f)
train_s = r.get("train_seconds")  # not in every version of the report
print("%s,%s,%s,%.6f,%s,%.1f,%.1f,%.9g" % (threads, r["threads"], rep, r["wall_seconds"],
      "" if train_s is None else "%.6f" % train_s, r["examples_per_s"], r["nnz_per_s"],
      r["train_loss"]))
PY
        tail -n 1 "$csv" | awk -F, '{ printf "threads %s, run %s: %.3g examples/s, %.3g M non-zeros/s, %.3g s\n", $1, $3, $6, $7 / 1e6, $4 }' >&2
        rep=$((rep + 1))
    done
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
print("| threads | median examples/s | median non-zeros/s (M) | min examples/s | max examples/s | speedup |")
print("|--------:|------------------:|-----------------------:|---------------:|---------------:|--------:|")
base = None
for t in sorted(runs):
    ex = [float(r["examples_per_s"]) for r in runs[t]]
    nz = [float(r["nnz_per_s"]) for r in runs[t]]
    med = statistics.median(ex)
    if base is None and t == 1:
        base = med
    speedup = "%.2fx" % (med / base) if base else "-"
    print("| %7d | %17.0f | %22.1f | %14.0f | %14.0f | %7s |"
          % (t, med, statistics.median(nz) / 1e6, min(ex), max(ex), speedup))
PY
