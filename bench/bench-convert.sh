#!/bin/sh
# bench-convert.sh: `hogtrain convert` of a large libsvm file from a cold page cache, against the parse-only rate of the same file's bytes in memory: how much of the reading and writing the pipeline hides.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-convert.sh BUILD_DIR [FILE]   (root: it drops the page cache)
#
# FILE defaults to a 4 GiB gen_sparse set (2^20 features, 75 non-zeros per
# row) made once under $BENCH_DIR. Each repetition, for each parser thread
# count T in THREADS: `bench_parse --file FILE 1024 3 T` measures the
# parse-only rate of the file's first GiB in memory on T threads (median of
# 3 passes), then the page cache is dropped and `hogtrain convert FILE -o
# OUT.hgd --parse-threads T` timed (the output fsync'ed and renamed, as
# always). One thread runs pinned: the parse-only pass and the convert on
# the same CPU, the next CPU each repetition. Then, each from a cold cache,
# the disk alone doing convert's I/O (FILE read by bench_read, io_uring and
# O_DIRECT, while as many bytes as OUT.hgd are written with `dd
# oflag=direct`) and `dd iflag=direct bs=4M` of FILE. Prints, per thread
# count, the medians, convert against parse-only (of the medians, and the
# median of each repetition's pair; the target: 0.9) and convert against
# the slower of parse-only and each disk figure: where the parsers are the
# limit, I/O fully hidden means converting at the parse-only rate; where
# the disk is slower than the parsers parse, at the disk's rate.
#
# Environment: REPS (default 3), THREADS (parser thread counts, default "1
# nproc"), BENCH_DIR (default /tmp/hogtrain-bench), OUT_DIR (where OUT.hgd
# goes, default BENCH_DIR: the same disk; /dev/shm keeps the output's
# writeback off the disk being read).
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [FILE]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
reps=${REPS:-3}
threads=${THREADS:-$( (echo 1; nproc) | sort -nu | tr '\n' ' ')}
dir=${BENCH_DIR:-/tmp/hogtrain-bench}
mkdir -p "$dir"
file=${2:-$dir/convert-4g.svm}
if [ ! -s "$file" ]; then
    echo "bench-convert.sh: making $file (4.3M rows, about 4.3 GB)" >&2
    "$build/tools/gen_sparse" -n 4300000 -d 1048576 -k 75 -s 7 -o "$file" -q
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "bench-convert.sh: needs root to drop the page cache (a cold read is the point)" >&2
    exit 1
fi
out="${OUT_DIR:-$dir}/convert-out.hgd"
bytes=$(stat -c %s "$file")
echo "file: $file, $bytes bytes; parser threads: $threads; $(nproc) cores"
# The parse-only rate of the file's first GiB in memory on T threads
# (bench_parse prints a line for each count from 1 to T; the median of 3
# passes), run by "$@" in front (taskset or nothing).
parse_only() {
    pt=$1
    shift
    r=$("$@" "$build/bench/bench_parse" --file "$file" 1024 3 "$pt" |
        awk -v t="$pt" '$1 == t && /parse/ { sub(/.*parse +/, ""); print $1 }')
    if [ -z "$r" ]; then
        echo "bench-convert.sh: bench_parse gave no rate for $pt threads" >&2
        exit 1
    fi
    echo "  run $((i + 1)): parse-only, $pt parser threads (in memory) $r MB/s"
}
# One parser thread runs pinned, its parse-only pass and its convert on the
# same CPU (the next one each repetition): this host's CPUs can run at
# different speeds for minutes at a time. Everything convert does then
# shares that one CPU: the reads and writes hidden, the blocks' gathering
# and checksums not.
pin() {
    [ "$1" -eq 1 ] && echo "taskset -c $((i % $(nproc)))"
    return 0
}
med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { echo "$1 $2" | awk '{ printf "%.2f", $1 / $2 }'; }
slower() { echo "$1 $2" | awk '{ print $1 < $2 ? $1 : $2 }'; }
# One cold run of a command over the file: prints and returns (in $r) the
# input's MB/s.
cold_run() {
    label=$1
    shift
    # The last run's output goes first, and sync waits for the file system
    # to free it: on a disk mounted with discard, freeing 2.6 GB while the
    # next run reads and writes halved that run's rate.
    rm -f "$out"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    t0=$(date +%s.%N)
    "$@"
    t1=$(date +%s.%N)
    r=$(echo "$bytes $t0 $t1" | awk '{ printf "%.0f", $1 / ($3 - $2) / 1e6 }')
    echo "  run $((i + 1)): $label (cold) $r MB/s"
}
# The disk alone doing what convert asks of it: the input read through the
# same io_uring O_DIRECT reader while as many bytes as the output are
# written with O_DIRECT beside it. Where this is slower than parsing, the
# disk is the limit, and I/O fully hidden means converting at its rate.
disk_alone() {
    "$build/bench/bench_read" "$file" >/dev/null &
    dd if=/dev/zero of="$out" bs=4M count="$blocks4m" oflag=direct status=none
    wait $!
}
# Interleaved, so each kind of run sees the same spells of a shared disk.
for t in $threads; do
    eval "mp_$t= conv_$t= q_$t="
done
io=""
rd=""
i=0
while [ "$i" -lt "$reps" ]; do
    for t in $threads; do
        pinned=$(pin "$t")
        parse_only "$t" $pinned
        p=$r
        cold_run "convert, $t parser threads${pinned:+, $pinned}" $pinned \
            "$build/hogtrain" convert "$file" -o "$out" --parse-threads "$t" -q
        eval "mp_$t=\"\$mp_$t $p\" conv_$t=\"\$conv_$t $r\" q_$t=\"\$q_$t $(ratio "$r" "$p")\""
    done
    blocks4m=$((($(stat -c %s "$out") + 4194303) / 4194304))
    cold_run "disk alone, read and write" disk_alone
    io="$io $r"
    cold_run "dd iflag=direct" dd if="$file" of=/dev/null bs=4M iflag=direct status=none
    rd="$rd $r"
    i=$((i + 1))
done
rm -f "$out"
mi=$(med $io)
mr=$(med $rd)
echo "median: cold read $mr MB/s; the disk alone reading the input and writing the output's bytes at once $mi MB/s"
for t in $threads; do
    eval "mp=\$(med \$mp_$t) mc=\$(med \$conv_$t) mq=\$(med \$q_$t)"
    echo "median, $t parser threads$( [ "$t" -eq 1 ] && echo ', pinned'): convert $mc MB/s cold, parse-only $mp MB/s:" \
        "ratio $(ratio "$mc" "$mp"), paired $mq (target 0.90);" \
        "against the slower of parse-only and the cold read $(ratio "$mc" "$(slower "$mp" "$mr")")," \
        "of parse-only and the disk alone $(ratio "$mc" "$(slower "$mp" "$mi")")"
done
