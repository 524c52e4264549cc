#!/bin/sh
# bench-cache.sh: the first epoch from libsvm text (parse and write the --cache) against later epochs from the cache, in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-cache.sh BUILD_DIR
# Data: BUILD_DIR/tools/gen_sparse, ROWS rows (default 1,000,000) x 75
# non-zeros, as libsvm text under $BENCH_DIR. Each repetition deletes the
# cache, runs `hogtrain train DATA.svm --cache DATA.hgd --epochs 5`, and
# takes from its report the first epoch's cost (the parse and the cache
# written, with epoch 1 trained meanwhile: read_seconds; read_seconds plus
# epoch 1 with --stream 0) and the median of epochs 2..5.
# Environment: ROWS, REPS (default 3), BENCH_DIR (default /tmp/hogtrain-bench).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-1000000}
svm=$(bench_sparse_text "$rows")
cache="$bench_dir/cache-n$rows.hgd"

csv="$bench_dir/cache.csv"
echo "rep,text_bytes,first_epoch_seconds,later_epoch_seconds,ratio" >"$csv"
rep=1
while [ "$rep" -le "$reps" ]; do
    rm -f "$cache"
    "$build/hogtrain" train "$svm" --cache "$cache" -o "$bench_dir/cache.hog" --epochs 5 -q \
        --report "$bench_dir/cache.json"
    "$py" - "$bench_dir/cache.json" "$rep" "$(stat -c %s "$svm")" >>"$csv" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
e = r["epoch_seconds"]
# Streamed, the first epoch trained while the text was read: read_seconds
# runs until the cache was whole, the first epoch inside it.
first = r["read_seconds"] if r.get("streamed") else r["read_seconds"] + e[0]
later = statistics.median(e[1:])
print("%s,%s,%.3f,%.3f,%.2f" % (sys.argv[2], sys.argv[3], first, later, first / later))
PY
    tail -n 1 "$csv" >&2
    rep=$((rep + 1))
done
"$py" - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda k: statistics.median(float(r[k]) for r in rows)
print("| text | first epoch (parse + cache + epoch 1) | later epochs (median) | first / later |")
print("|---:|---:|---:|---:|")
print("| %.0f MB | %.2f s | %.2f s | %.1fx |" % (float(rows[0]["text_bytes"]) / 1e6, med("first_epoch_seconds"),
      med("later_epoch_seconds"), med("ratio")))
PY
