#!/bin/sh
# bench-movielens-fm.sh: MovieLens with side information: the test RMSE and training seconds of matrix factorisation against factorisation machines (plain and field-aware) on the same 90/10 split, with and without the movies' genres and years and the ratings' years.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-movielens-fm.sh BUILD_DIR
# Data: datasets/movielens.sh (dslabs' MovieLens 100k, 90/10 with seed 1;
# installs R and dslabs when missing, as root): train.csv and test.csv for
# --model mf, train.ffm and test.ffm (five fields: user, movie, genres, the
# movie's year, the rating's year; the layout is in that script's header)
# for --model fm and --model ffm with --loss squared, and fields 0 and 1 of
# them alone (user and movie: the ratings matrix as a factorisation machine
# sees it), cut once under BENCH_DIR. Runs, each with --test:
#   MF   --model mf, its defaults (rank 32, 20 epochs)
#   FM   --model fm --loss squared: its defaults (k 4, 20 epochs, AdaGrad
#        step 0.2, --l2 1e-4) and --factors 32 --epochs 5 on user and movie
#        only; its defaults and --factors 8 --l2 20/rows --step 0.1 with
#        the side fields
#   FFM  --model ffm --loss squared with the side fields, its defaults
#        (--l2 1/rows) and --l2 5/rows
# One unrecorded warm-up of each, then REPS rounds (default 3) with every
# run of a round in turn, round R with --seed R (the shuffles and the
# initial factors; the split stays seed 1's): the table gives each run's
# median test RMSE after the last epoch, its range over the rounds, and its
# median training seconds (the report's train_seconds: reading and
# evaluation excluded). Every run goes to BENCH_DIR/movielens-fm.csv.
# Environment: REPS (default 3), THREADS (one count, default 1),
# BENCH_DIR (default /tmp/hogtrain-bench).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
root=$(cd "$(dirname "$0")/.." && pwd)
threads=${THREADS:-1}
case $threads in
    *[!0-9]*|0|'') echo "bench-movielens-fm.sh: THREADS: '$threads' is not one thread count" >&2; exit 2 ;;
esac
bin=$build/hogtrain
[ -x "$bin" ] || { echo "bench-movielens-fm.sh: $bin not found: run make first" >&2; exit 1; }

sh "$root/datasets/movielens.sh" >&2
ml=$root/datasets/movielens
for s in train test; do
    um=$bench_dir/movielens-um-$s.ffm
    if [ ! -s "$um" ] || [ -n "$(find "$ml/$s.ffm" -newer "$um")" ]; then
        awk '{ o = $1; for (i = 2; i <= NF; i++) if ($i ~ /^[01]:/) o = o " " $i; print o }' "$ml/$s.ffm" >"$um.tmp.$$"
        mv -f "$um.tmp.$$" "$um"
    fi
done

csv=$bench_dir/movielens-fm.csv
report=$bench_dir/movielens-fm.json
model=$bench_dir/movielens-fm.model
trap 'rm -f "$report" "$model"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "round,tool,fields,settings,test_rmse,train_seconds" >"$csv"

run() { # run ROUND TOOL FIELDS SETTINGS TRAIN TEST ARGS...
    r=$1 tool=$2 fields=$3 settings=$4 train=$5 test=$6
    shift 6
    seed=$r
    [ "$r" = warmup ] && seed=1
    "$bin" train "$train" --test "$test" "$@" --threads "$threads" --seed "$seed" -q -o "$model" \
        --report "$report"
    "$py" - "$report" "$r" "$tool" "$fields" "$settings" >>"$csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rmse = d["test_rmse"] if "test_rmse" in d else d["test"]["rmse"]
print("%s,%s,%s,%s,%.5f,%.4f" % (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], rmse, d["train_seconds"]))
PY
}

round() { # round R
    run "$1" MF "user and movie" defaults "$ml/train.csv" "$ml/test.csv" --model mf
    run "$1" FM "user and movie" defaults "$bench_dir/movielens-um-train.ffm" "$bench_dir/movielens-um-test.ffm" \
        --model fm --loss squared
    run "$1" FM "user and movie" "--factors 32 --epochs 5" "$bench_dir/movielens-um-train.ffm" \
        "$bench_dir/movielens-um-test.ffm" --model fm --loss squared --factors 32 --epochs 5
    run "$1" FM "all five" defaults "$ml/train.ffm" "$ml/test.ffm" --model fm --loss squared
    run "$1" FM "all five" "--factors 8 --l2 20/rows --step 0.1" "$ml/train.ffm" "$ml/test.ffm" --model fm --loss squared \
        --factors 8 --l2 20/rows --step 0.1
    run "$1" FFM "all five" defaults "$ml/train.ffm" "$ml/test.ffm" --model ffm --loss squared
    run "$1" FFM "all five" "--l2 5/rows" "$ml/train.ffm" "$ml/test.ffm" --model ffm --loss squared --l2 5/rows
}

echo "bench-movielens-fm.sh: a warm-up, then $reps rounds on $threads thread(s)" >&2
round warmup
r=1
while [ "$r" -le "$reps" ]; do
    round "$r"
    r=$((r + 1))
done

"$py" - "$csv" "$reps" "$threads" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["round"] != "warmup"]
runs = []
for r in rows:
    key = (r["tool"], r["fields"], r["settings"])
    if key not in runs:
        runs.append(key)
print("MovieLens 100k (dslabs, 90/10, seed 1), %s thread(s), median of %s rounds (--seed 1..%s):\n"
      % (sys.argv[3], sys.argv[2], sys.argv[2]))
print("| tool | fields | settings | test RMSE (median) | range | training seconds (median) |")
print("|---|---|---|--:|--:|--:|")
for key in runs:
    mine = [r for r in rows if (r["tool"], r["fields"], r["settings"]) == key]
    rmse = [float(r["test_rmse"]) for r in mine]
    secs = [float(r["train_seconds"]) for r in mine]
    settings = key[2] if key[2] == "defaults" else "`%s`" % key[2]
    print("| %s | %s | %s | %.4f | %.4f to %.4f | %.3f |" % (key[0], key[1], settings, statistics.median(rmse),
                                                           min(rmse), max(rmse), statistics.median(secs)))
PY
echo "runs: $csv" >&2
