#!/bin/sh
# bench-stream.sh: training from libsvm text with the first epoch streamed (trained while the file is read) against reading it whole first, in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-stream.sh BUILD_DIR
# Data: the gen_sparse set of bench-cache.sh (ROWS rows, default 1,000,000,
# x 75 non-zeros, about 1 GB of text) under $BENCH_DIR. Each repetition
# runs `hogtrain train DATA.svm --cache DATA.hgd --epochs E` with --stream 1
# and --stream 0, the cache deleted before each, for E = 1 (the time to a
# first model) and E = EPOCHS, and records the wall time of each run.
# With ZSTD=1 the input is that text compressed with `zstd -1` (one thread
# decompresses it, the other cores are left to parse and train). With
# READ_MBPS=N (root, cgroup v1 blkio) every run starts from a cold page
# cache and reads its input at N MB/s at most, as from a slow or remote
# disk: the parsers then wait for the disk.
# Environment: ROWS, REPS (default 3), EPOCHS (default 5), ZSTD (default 0),
# READ_MBPS (default: no limit), BENCH_DIR (default /tmp/hogtrain-bench).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-1000000}
epochs=${EPOCHS:-5}
svm=$(bench_sparse_text "$rows")
cache="$bench_dir/stream-n$rows.hgd"
if [ "${ZSTD:-0}" = 1 ]; then
    [ -s "$svm.zst" ] || zstd -q -1 "$svm" -o "$svm.zst"
    svm="$svm.zst"
fi

# A slow disk: a blkio cgroup that throttles reads of the input's device.
run_in=""
if [ -n "${READ_MBPS:-}" ]; then
    cg=/sys/fs/cgroup/blkio/hogtrain-bench-stream
    mkdir -p "$cg"
    dev=$(mountpoint -d "$(df --output=target "$svm" | tail -n 1)")
    # a partition's reads are throttled at its disk
    [ -e "/sys/dev/block/$dev/partition" ] && dev=$(cat "/sys/dev/block/$dev/../dev")
    echo "$dev $((READ_MBPS * 1000000))" >"$cg/blkio.throttle.read_bps_device"
    run_in="$cg/tasks"
    trap 'rmdir "$cg" 2>/dev/null || true' EXIT
fi

csv="$bench_dir/stream.csv"
echo "rep,epochs,stream,wall_seconds,streamed,test_logloss" >"$csv"
rep=1
while [ "$rep" -le "$reps" ]; do
    for e in 1 "$epochs"; do
        for stream in 1 0; do
            rm -f "$cache"
            if [ -n "$run_in" ]; then
                sync
                echo 3 >/proc/sys/vm/drop_caches
            fi
            t0=$(date +%s.%N)
            sh -c '[ -z "$1" ] || echo $$ >"$1"; shift; exec "$@"' sh "$run_in" \
                "$build/hogtrain" train "$svm" --cache "$cache" -o "$bench_dir/stream.hog" --epochs "$e" \
                --stream "$stream" --holdout 0.05 -q --report "$bench_dir/stream.json"
            t1=$(date +%s.%N)
            "$py" - "$bench_dir/stream.json" "$rep" "$e" "$stream" "$t0" "$t1" >>"$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("%s,%s,%s,%.3f,%d,%.4f" % (sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[6]) - float(sys.argv[5]),
                                 r["streamed"], r["test"]["logloss"]))
PY
            tail -n 1 "$csv" >&2
        done
    done
    rep=$((rep + 1))
done
rm -f "$cache"
"$py" - "$csv" "$svm" "${READ_MBPS:+, cold, read at $READ_MBPS MB/s at most}" <<'PY'
import csv, os, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| epochs | read whole first | streamed | whole / streamed | holdout logloss (whole, streamed) |")
print("|---:|---:|---:|---:|---:|")
for e in sorted({int(r["epochs"]) for r in rows}):
    def med(stream, key):
        return statistics.median(float(r[key]) for r in rows if int(r["epochs"]) == e and r["stream"] == stream)
    w, s = med("0", "wall_seconds"), med("1", "wall_seconds")
    print("| %d | %.2f s | %.2f s | %.2fx | %.4f, %.4f |" % (e, w, s, w / s, med("0", "test_logloss"),
                                                             med("1", "test_logloss")))
print("\n%s, %.0f MB%s; medians of %d runs" % (os.path.basename(sys.argv[2]), os.path.getsize(sys.argv[2]) / 1e6,
      sys.argv[3], len(rows) // (2 * len({r["epochs"] for r in rows}))))
PY
