#!/bin/sh
# run-fuzz.sh: builds the chunk-parser and frame-decoder fuzz targets with Debian's clang (libFuzzer, ASan, UBSan) and runs each for a while.
# SPDX-License-Identifier: BSD-2-Clause
# usage: tests/fuzz/run-fuzz.sh [SECONDS per target (20)] [TARGET...]   (targets: libsvm csv vw frame)
# New inputs go to build-fuzz/corpus/NAME; crashes to build-fuzz/crash-*. Exits non-zero on the first failure.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-libsvm csv vw frame}
if ! command -v clang >/dev/null 2>&1; then
    echo "run-fuzz: installing clang (Debian's clang package)"
    apt-get install -y clang >/dev/null
fi
out=build-fuzz
# the chunk parsers (src/etl/etl_parse.h lists them)
parsers="src/etl/etl_parse.c src/etl/etl_parse_rows.c src/etl/etl_parse_number.c
         src/etl/etl_parse_libsvm.c src/etl/etl_parse_csv.c src/etl/etl_parse_vw.c"
mkdir -p "$out"
# the CPU level the Makefile builds for, so the fuzzers run the parser paths hogtrain ships
arch=
[ "$(uname -m)" = x86_64 ] && arch=-march=x86-64-v2
for t in $targets; do
    # The sources each target uses, compiled in and instrumented like the
    # target: util and the parser files (or the frame codec) only, so the
    # readers' extra libraries (liburing, zstd, the thread pool) and ZeroMQ
    # are not needed here.
    case $t in
    libsvm|csv|vw) name=fuzz_parse_$t; srcs=$parsers ;;
    frame) name=fuzz_net_frame; srcs=src/net/net_frame.c ;;
    *) echo "run-fuzz: unknown target $t (libsvm csv vw frame)"; exit 2 ;;
    esac
    bin=$out/$name
    clang -g -O1 $arch -std=c11 -D_GNU_SOURCE -pthread -Iinclude -Isrc \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
        tests/fuzz/$name.c src/util/*.c $srcs -lz -lm -lhwloc -o "$bin"
    mkdir -p "$out/corpus/$t"
    echo "run-fuzz: $t for $secs s"
    rc=0
    (cd "$out" && ./$name -max_total_time="$secs" -max_len=4096 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=crash-$t- \
        "corpus/$t" "../tests/fuzz/corpus/$t" >"$name.log" 2>&1) || rc=$?
    grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)' "$out/$name.log" | tail -n 30
    if [ "$rc" -ne 0 ]; then
        echo "run-fuzz: $t failed (exit $rc); the input is in $out/crash-$t-*"
        exit "$rc"
    fi
done
