#!/bin/sh
# bench-mf.sh: matrix factorisation (the default grid schedule): updates/s on 1 and 2 threads (or $THREADS) on a generated low-rank matrix, and the MovieLens test RMSE.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-mf.sh BUILD_DIR
#
# Part 1, speed: a rank-16 matrix of $RATINGS ratings (default 20,000,000)
# over $USERS users and $ITEMS items (200,000 and 20,000), noise 0.1, seed 1,
# made once by BUILD_DIR/tools/gen_ratings as a binary ratings file under
# $BENCH_DIR. Runs `hogtrain train --model mf --rank 16 --epochs $EPOCHS` on
# each thread count: one warm-up each, then $REPS measured runs each,
# interleaved (1, 2, 1, 2, ...) so that all see the same machine load.
# Prints per thread count the median, min and max updates/s (training time
# only, evaluation and reading excluded), the speedup of the medians, and
# the median of the paired speedups (each run over the 1-thread run of the
# same round). Every run goes to results/bench-mf-YYYYmmdd-HHMMSS.csv.
#
# Part 2, accuracy: dslabs' MovieLens (about 100k ratings; datasets/movielens.sh
# installs R and dslabs if missing and splits it 90/10 with seed 1), trained
# with the defaults (rank 32, 20 epochs) on 1 thread; prints the test RMSE
# against LIBMF's 0.9139 (k=32, 20 iterations, on such a split).
#
# Environment (all optional):
#   RATINGS, USERS, ITEMS  the size of the generated matrix
#   THREADS    the thread counts (default "1 2"; 1 is always measured)
#   REPS       measured runs per thread count (default 5)
#   EPOCHS     epochs per run (default 3)
#   MOVIELENS  0 to skip part 2 (default 1)
#   BENCH_DIR  where the data and scratch files go (default /tmp/hogtrain-bench)
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
if ! build=$(cd "$1" 2>/dev/null && pwd); then
    echo "bench-mf.sh: build folder $1 not found: run make first" >&2
    exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/bench-env.sh"
bench_thread_counts bench-mf.sh
hogtrain="$build/hogtrain"
gen="$build/tools/gen_ratings"
for tool in "$hogtrain" "$gen"; do
    if [ ! -x "$tool" ]; then
        echo "bench-mf.sh: $tool not found: run make first" >&2
        exit 1
    fi
done
py=$(command -v python3) || { echo "bench-mf.sh: python3 is needed to read the JSON reports" >&2; exit 1; }

ratings=${RATINGS:-20000000}
users=${USERS:-200000}
items=${ITEMS:-20000}
rank=16
reps=${REPS:-5}
epochs=${EPOCHS:-3}
bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
mkdir -p "$bench_dir" "$root/results"


# ---- data ----
data="$bench_dir/ratings-n$ratings-u$users-i$items-k$rank-s1.hgr"
if [ ! -s "$data" ] || ! "$hogtrain" info "$data" >/dev/null 2>&1; then
    echo "bench-mf.sh: generating $data" >&2
    "$gen" -u "$users" -i "$items" -k "$rank" -n "$ratings" -s 1 --noise 0.1 -o "$data"
fi

# ---- runs ----
stamp=$(date +%Y%m%d-%H%M%S)
csv="$root/results/bench-mf-$stamp.csv"
echo "run,threads,updates_per_s,train_seconds,train_rmse" > "$csv"
report="$bench_dir/mf-report.json"
model="$bench_dir/mf-model.mf"
trap 'rm -f "$report" "$model"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run() { # run THREADS LABEL
    # --holdout 0: every epoch over every rating, not the default holdout's early stop
    "$hogtrain" train "$data" --model mf --rank "$rank" --epochs "$epochs" --threads "$1" --holdout 0 \
        -o "$model" --report "$report" -q
    "$py" - "$report" "$2" "$1" >> "$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("%s,%s,%.1f,%.4f,%.5f" % (sys.argv[2], sys.argv[3], r["updates_per_s"], r["train_seconds"], r["train_rmse"]))
PY
}

echo "bench-mf.sh: $ratings ratings, rank $rank, $epochs epochs; warm-up, then $reps runs each on $counts threads, interleaved" >&2
for t in $counts; do run "$t" warmup; done
i=1
while [ "$i" -le "$reps" ]; do
    for t in $counts; do run "$t" "$i"; done
    i=$((i + 1))
done

"$py" - "$csv" "$ratings" "$rank" "$epochs" "$reps" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["run"] != "warmup"]
by, run = {}, {}
for r in rows:
    by.setdefault(int(r["threads"]), []).append(float(r["updates_per_s"]))
    run.setdefault(int(r["threads"]), {})[r["run"]] = float(r["updates_per_s"])
med1 = statistics.median(by[1])
print("Matrix factorisation, %s ratings, rank %s, %s epochs, %s runs per thread count (interleaved):\n"
      % (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]))
print("| threads | median updates/s | min updates/s | max updates/s | speedup of medians | median paired speedup |")
print("|--------:|-----------------:|--------------:|--------------:|-------------------:|----------------------:|")
for t in sorted(by):
    v = by[t]
    paired = "%.2fx" % statistics.median(run[t][k] / run[1][k] for k in run[t])
    print("| %d | %s | %s | %s | %.2fx | %s |" % (t, format(int(statistics.median(v)), ","), format(int(min(v)), ","),
                                               format(int(max(v)), ","), statistics.median(v) / med1, paired))
rmse = [float(r["train_rmse"]) for r in rows]
print("\ntrain RMSE after %s epochs: %.4f to %.4f (noise floor 0.1)" % (sys.argv[4], min(rmse), max(rmse)))
PY
echo "runs: $csv"

# ---- MovieLens ----
if [ "${MOVIELENS:-1}" != 0 ]; then
    sh "$root/datasets/movielens.sh"
    ml="$root/datasets/movielens"
    "$hogtrain" train "$ml/train.csv" --model mf --rank 32 --epochs 20 --threads 1 --test "$ml/test.csv" \
        -o "$model" --report "$report" -q
    "$py" - "$report" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("\nMovieLens (dslabs, %d train / %d test ratings), rank 32, 20 epochs: test RMSE %.4f (LIBMF: 0.9139; target <= 0.914)"
      % (r["train_ratings"], r["test_ratings"], r["test_rmse"]))
PY
fi
