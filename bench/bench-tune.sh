#!/bin/sh
# bench-tune.sh: hogtrain tune with its trials side by side on every core, against the same search one trial at a time and against the machine's parallel limit measured in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-tune.sh BUILD_DIR
# Data: LIBLINEAR's heart_scale (270 rows, 13 features; Debian's
# liblinear-tools, skipped when absent) and ROWS (default 50,000) rows of
# gen_sparse RCV1-shaped data (47,000 features, 75 non-zeros a row, seed
# 5) as a .hgd under BENCH_DIR. Each repetition, in turn:
#   one at a time  tune --threads 1: one lane, each trial one thread, one
#                  trial after another (the search as it ran before its
#                  trials ran side by side, but for their thread count)
#   side by side   tune --threads T (T: THREADS, default every CPU): T
#                  lanes, each trial one thread
#   limit          T runs of `tune --threads 1` at once, each pinned to its
#                  own CPU with taskset: what T cores give T independent
#                  searches here and now
# All with TRIALS (16) trials of EPOCHS (8) epochs, seed 3, the same
# leaderboard (checked). Reported: the median wall time of each, the
# speed-up of side by side over one at a time, and the limit's (T times one
# at a time's wall over the slowest of the T at once).
# Environment: ROWS, TRIALS, EPOCHS, THREADS, REPS (default 3), BENCH_DIR.
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-50000}
trials=${TRIALS:-16}
epochs=${EPOCHS:-8}
threads=${THREADS:-$(nproc)}
bin=$build/hogtrain
sparse="$bench_dir/tune-n$rows.hgd"
if [ ! -s "$sparse" ]; then
    "$build/tools/gen_sparse" -n "$rows" -d 47000 -k 75 -s 5 -q -o "$bench_dir/tune-n$rows.svm"
    "$bin" convert "$bench_dir/tune-n$rows.svm" -o "$sparse" -q
    rm -f "$bench_dir/tune-n$rows.svm"
fi
sets=$sparse
heart=/usr/share/doc/liblinear-tools/examples/heart_scale
[ -s "$heart" ] && sets="$heart $sets"
tmp=$(mktemp -d /tmp/bench-tune-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
tune() { # tune DATA THREADS OUT
    "$bin" tune "$1" -o "$3.hog" --trials "$trials" --epochs "$epochs" --seed 3 --threads "$2" -q >"$3.txt"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for data in $sets; do
    name=$(basename "$data")
    : >"$tmp/one" ; : >"$tmp/side" ; : >"$tmp/limit"
    r=1
    while [ "$r" -le "$reps" ]; do
        t=$(now); tune "$data" 1 "$tmp/one"; since "$t" >>"$tmp/one"
        t=$(now); tune "$data" "$threads" "$tmp/side"; since "$t" >>"$tmp/side"
        cmp -s "$tmp/one.txt" "$tmp/side.txt" || { echo "bench-tune: $name: the leaderboards differ" >&2; exit 1; }
        t=$(now)
        c=0
        while [ "$c" -lt "$threads" ]; do
            taskset -c "$c" "$bin" tune "$data" -o "$tmp/l$c.hog" --trials "$trials" --epochs "$epochs" --seed 3 \
                --threads 1 -q >"$tmp/l$c.txt" &
            c=$((c + 1))
        done
        wait
        since "$t" >>"$tmp/limit"
        r=$((r + 1))
    done
    one=$(median <"$tmp/one") side=$(median <"$tmp/side") limit=$(median <"$tmp/limit")
    echo "bench-tune: $name, $trials trials of $epochs epochs, $threads threads, $reps repetitions (median wall s):" \
        "one at a time $one, side by side $side, $threads searches at once $limit"
    awk -v o="$one" -v s="$side" -v l="$limit" -v t="$threads" -v n="$name" \
        'BEGIN { printf "bench-tune: %s: side by side %.2fx one at a time; limit %.2fx (%d one-at-a-time searches at once)\n", n, o / s, t * o / l, t }'
done
