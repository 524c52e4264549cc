#!/bin/sh
# bench-read.sh: measures hog_reader's sequential read throughput, cold and warm, against dd (O_DIRECT) and cat on the same file; prints a Markdown table.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-read.sh [BUILD_DIR]      (default build/)
#
# Builds BUILD_DIR/bench/bench_read with make. The file is $FILE, or a 2 GiB file of random bytes made once under
# /var/tmp (or /tmp) after checking there is room. Each measurement is the
# median of $RUNS runs, the methods interleaved within a run:
#   cold: echo 3 > /proc/sys/vm/drop_caches before every run (root only;
#         skipped with a note otherwise). hog_reader (io_uring, O_DIRECT where
#         the file system takes it) against `dd bs=4M iflag=direct`.
#   warm: the file read once first so it is in the page cache. hog_reader
#         against `cat FILE > /dev/null`. Note: O_DIRECT bypasses the page
#         cache, so the reader's default path reads the disk even here; the
#         --buffered row (O_DIRECT refused) is the like-for-like one. From the
#         page cache, 4 MiB chunks are slower than cat's 128 KiB reads: the
#         copies land in buffers larger than the CPU caches (try CHUNK=131072).
#
# Environment (all optional):
#   FILE   the file to read (default: generated as above)
#   SIZE_MIB size of the generated file (default 2048)
#   RUNS   runs per measurement (default 5)
#   CHUNK  chunk bytes for the reader (default 0: the reader's 4 MiB)
#   DEPTH  reads in flight (default 0: the reader's 4)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
RUNS=${RUNS:-5}
CHUNK=${CHUNK:-0}
DEPTH=${DEPTH:-0}
SIZE_MIB=${SIZE_MIB:-2048}

# ---- build ----
bench="$build/bench/bench_read"
cd "$root"
make --no-print-directory -s BUILD="$build" "$bench"

# ---- the file ----
if [ -z "${FILE:-}" ]; then
    dir=/var/tmp
    [ -w "$dir" ] || dir=/tmp
    FILE="$dir/hog-bench-read-${SIZE_MIB}m.bin"
    if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne $((SIZE_MIB * 1048576)) ]; then
        echo "free space where the test file goes:"
        df -h "$dir"
        avail_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
        need_kib=$((SIZE_MIB * 1024 + 1048576)) # the file plus 1 GiB to spare
        if [ "$avail_kib" -lt "$need_kib" ]; then
            echo "bench-read.sh: $dir has $((avail_kib / 1024)) MiB free, need $((need_kib / 1024)); set FILE=..." >&2
            exit 1
        fi
        echo "making $FILE ($SIZE_MIB MiB of random bytes: nothing to compress, nothing sparse)"
        head -c $((SIZE_MIB * 1048576)) /dev/urandom > "$FILE.tmp"
        mv "$FILE.tmp" "$FILE"
    fi
fi
[ -r "$FILE" ] || { echo "bench-read.sh: cannot read $FILE" >&2; exit 1; }
bytes=$(stat -L -c %s "$FILE")

# ---- timing helpers ----
now_ns() { date +%s%N; }
# gbps BYTES NANOSECONDS
gbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.3f", (ns > 0 ? b / ns : 0) }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
reader() { # reader [bench_read options]: prints GB/s
    out=$("$bench" -c "$CHUNK" -d "$DEPTH" "$@" "$FILE")
    echo "$out" | sed -n 's/.*gbps=\([0-9.]*\).*/\1/p'
}
reader_direct() { "$bench" -c "$CHUNK" -d "$DEPTH" "$FILE" | sed -n 's/.*direct=\([01]\).*/\1/p'; }
ddd() {
    t0=$(now_ns); dd if="$FILE" of=/dev/null bs=4M iflag=direct status=none; t1=$(now_ns)
    gbps "$bytes" $((t1 - t0))
}
catf() {
    t0=$(now_ns); cat "$FILE" > /dev/null; t1=$(now_ns)
    gbps "$bytes" $((t1 - t0))
}
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }

echo "file: $FILE ($bytes bytes, $(stat -f -L -c %T "$FILE")), runs: $RUNS, chunk: $CHUNK, depth: $DEPTH (0 = reader default)"
echo "reader path on this file: O_DIRECT=$(reader_direct)"
echo "kernel $(uname -r), $(nproc) CPUs"

# ---- cold ----
cold=1
if [ "$(id -u)" -ne 0 ] || ! [ -w /proc/sys/vm/drop_caches ]; then
    cold=0
    echo "note: not root (or /proc/sys/vm/drop_caches not writable): cold runs skipped"
fi
c_rd='' c_rb='' c_rp='' c_dd=''
if [ $cold -eq 1 ]; then
    i=0
    while [ $i -lt "$RUNS" ]; do
        drop; c_rd="$c_rd $(reader)"
        drop; c_rb="$c_rb $(reader --buffered)"
        drop; c_rp="$c_rp $(reader --pread)"
        drop; c_dd="$c_dd $(ddd)"
        i=$((i + 1))
    done
    echo "cold runs (GB/s): reader$c_rd | reader --buffered$c_rb | reader --pread$c_rp | dd direct$c_dd"
fi

# ---- warm ----
cat "$FILE" > /dev/null
w_rd='' w_rb='' w_rp='' w_cat=''
i=0
while [ $i -lt "$RUNS" ]; do
    w_rd="$w_rd $(reader)"
    w_rb="$w_rb $(reader --buffered)"
    w_rp="$w_rp $(reader --pread)"
    w_cat="$w_cat $(catf)"
    i=$((i + 1))
done
echo "warm runs (GB/s): reader$w_rd | reader --buffered$w_rb | reader --pread$w_rp | cat$w_cat"

# ---- table ----
m() { if [ -n "$1" ]; then echo "$1" | median; else echo "-"; fi; }
ratio() { if [ "$1" = "-" ] || [ "$2" = "-" ]; then echo "-"; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; fi; }
mc_rd=$(m "$c_rd"); mc_rb=$(m "$c_rb"); mc_rp=$(m "$c_rp"); mc_dd=$(m "$c_dd")
mw_rd=$(m "$w_rd"); mw_rb=$(m "$w_rb"); mw_rp=$(m "$w_rp"); mw_cat=$(m "$w_cat")
echo
echo "| method | cold GB/s | cold vs dd direct | warm GB/s | warm vs cat |"
echo "|---|---:|---:|---:|---:|"
echo "| hog_reader (io_uring, O_DIRECT=$(reader_direct)) | $mc_rd | $(ratio "$mc_rd" "$mc_dd") | $mw_rd | $(ratio "$mw_rd" "$mw_cat") |"
echo "| hog_reader --buffered (io_uring, page cache) | $mc_rb | $(ratio "$mc_rb" "$mc_dd") | $mw_rb | $(ratio "$mw_rb" "$mw_cat") |"
echo "| hog_reader --pread (no io_uring; O_DIRECT as above) | $mc_rp | $(ratio "$mc_rp" "$mc_dd") | $mw_rp | $(ratio "$mw_rp" "$mw_cat") |"
echo "| dd bs=4M iflag=direct | $mc_dd | 1.00x | - | - |"
echo "| cat > /dev/null | - | - | $mw_cat | 1.00x |"
echo
echo "medians of $RUNS runs; GB/s = 10^9 bytes per second"
