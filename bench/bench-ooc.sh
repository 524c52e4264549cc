#!/bin/sh
# bench-ooc.sh: out-of-core training: an epoch over a binary dataset twice the size of --mem-limit, cold cache, inside a memory cgroup, against dd's O_DIRECT read rate of the same file.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-ooc.sh BUILD_DIR
#
# Needs root (drop_caches, cgroup v1 memory controller). Data: a seeded
# sparse set of about 2 x LIMIT bytes in .hgd form under $BENCH_DIR. Each
# repetition: drop the page cache, read the file with dd iflag=direct
# (the reference), drop the page cache, train 1 epoch with --mem-limit LIMIT
# in a cgroup whose memory limit is LIMIT + 64 MiB (so the run would be
# killed if it held the data), and record the epoch's data rate (file bytes
# over train_seconds from --report) and the peak RSS.
#
# Environment: LIMIT (bytes, default 536870912), REPS (default 3),
# BENCH_DIR (default /tmp/hogtrain-bench).
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
hogtrain="$build/hogtrain"
gen="$build/tools/gen_sparse"
limit=${LIMIT:-536870912}
reps=${REPS:-3}
bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
mkdir -p "$bench_dir"

if [ "$(id -u)" -ne 0 ] || [ ! -w /proc/sys/vm/drop_caches ] || [ ! -d /sys/fs/cgroup/memory ]; then
    echo "bench-ooc.sh: needs root, /proc/sys/vm/drop_caches and the cgroup v1 memory controller" >&2
    exit 1
fi

# About 2 x limit: an .hgd row of 75 non-zeros takes 75 * 8 + 8 bytes.
rows=$((limit * 2 / 608))
data="$bench_dir/ooc-n$rows.hgd"
if [ ! -s "$data" ] || ! "$hogtrain" info "$data" >/dev/null 2>&1; then
    svm="$bench_dir/ooc-n$rows.svm"
    echo "bench-ooc.sh: generating $data" >&2
    "$gen" -n "$rows" -d 1048576 -k 75 -s 7 -q -o "$svm"
    "$hogtrain" convert "$svm" -o "$data" -q
    rm -f "$svm"
fi
bytes=$(stat -c %s "$data")

cg=/sys/fs/cgroup/memory/hogtrain-bench-$$
mkdir "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo $((limit + 64 * 1024 * 1024)) >"$cg/memory.limit_in_bytes"

csv="$bench_dir/ooc.csv"
echo "rep,file_bytes,dd_bytes_per_s,epoch_bytes_per_s,train_seconds,wall_seconds,peak_rss_kb" >"$csv"
rep=1
while [ "$rep" -le "$reps" ]; do
    sync
    echo 3 >/proc/sys/vm/drop_caches
    t0=$(date +%s.%N)
    dd if="$data" of=/dev/null bs=4M iflag=direct status=none
    t1=$(date +%s.%N)
    echo 3 >/proc/sys/vm/drop_caches
    # The child joins the cgroup, then becomes hogtrain.
    sh -c "echo \$\$ > $cg/cgroup.procs && exec /usr/bin/time -f '%M' -o $bench_dir/rss.txt \
        $hogtrain train $data -o $bench_dir/ooc.hog --epochs 1 --mem-limit $limit --report $bench_dir/ooc.json -q"
    "$py" - "$bench_dir/ooc.json" "$rep" "$bytes" "$t0" "$t1" "$(cat "$bench_dir/rss.txt")" >>"$csv" <<'PY'
import json, sys
path, rep, size, t0, t1, rss = sys.argv[1:7]
r = json.load(open(path))
size = int(size)
print("%s,%d,%.0f,%.0f,%.3f,%.3f,%s" % (rep, size, size / (float(t1) - float(t0)),
      size / r["train_seconds"], r["train_seconds"], r["wall_seconds"], rss))
PY
    tail -n 1 "$csv" >&2
    rep=$((rep + 1))
done

echo
echo "Out-of-core epoch, cold cache: $(( bytes / 1048576 )) MiB .hgd, --mem-limit $(( limit / 1048576 )) MiB,"
echo "cgroup memory limit $(( limit / 1048576 + 64 )) MiB, 1 epoch, median of $reps."
echo
"$py" - "$csv" "$limit" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
limit = int(sys.argv[2])
med = lambda k: statistics.median(float(r[k]) for r in rows)
dd, ep = med("dd_bytes_per_s"), med("epoch_bytes_per_s")
rss = max(int(r["peak_rss_kb"]) for r in rows)
print("| dd O_DIRECT read | epoch data rate | epoch / dd | peak RSS | --mem-limit |")
print("|---:|---:|---:|---:|---:|")
print("| %.0f MB/s | %.0f MB/s | %.2f | %.0f MiB | %.0f MiB |" % (dd / 1e6, ep / 1e6, ep / dd, rss / 1024, limit / 1048576))
PY
