#!/bin/sh
# run-fuzz.sh: builds the fuzz targets (text parsers, LIBFFM's too, the chunked reader, the binary dataset, model and ratings readers, the frame decoder) with Debian's clang (libFuzzer, ASan, UBSan) and runs each for a while.
# SPDX-License-Identifier: BSD-2-Clause
# usage: tests/fuzz/run-fuzz.sh [SECONDS per target (20)] [TARGET...]
#        (targets: libsvm csv vw ffm reader frame hgd model mf hgr)
# New inputs go to build-fuzz/corpus/NAME; crashes to build-fuzz/crash-*. Exits non-zero on the first failure.
# FUZZ_RUNS=N runs each target for N inputs instead of SECONDS (a campaign: FUZZ_RUNS=10000000).
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-libsvm csv vw ffm reader frame hgd model mf hgr}
if ! command -v clang >/dev/null 2>&1; then
    echo "run-fuzz: installing clang (Debian's clang package)"
    apt-get install -y clang >/dev/null
fi
out=build-fuzz
mkdir -p "$out"
# The library, instrumented like the targets, built by the Makefile into its
# own folder (only what a target uses is linked from it). Checksums and
# hashes are left out of the coverage: their branches say nothing of the
# input and their instrumentation cost a third of each run. CI= keeps
# clang's extra warnings from failing the build under CI=true.
echo "run-fuzz: building the instrumented library in $out/lib"
if ! make --no-print-directory -j2 BUILD="$out/lib" CC=clang CI= SANITIZE=fuzzer-no-link,address,undefined \
    CFLAGS="-g -fsanitize-coverage-ignorelist=$(pwd)/tests/fuzz/coverage-ignore.txt" "$out/lib/libhogtrain.a" \
    >"$out/lib.log" 2>&1; then
    tail -n 30 "$out/lib.log"
    exit 1
fi
# the CPU level the Makefile builds for, so the fuzzers run the paths hogtrain ships
arch=
[ "$(uname -m)" = x86_64 ] && arch=-march=x86-64-v2
for t in $targets; do
    # -max_len: text up to 1 MiB, without libFuzzer's slow growth of the
    # length it tries (-len_control=0), so that long lines and many chunks
    # are tried in a short run; binary files up to 64 KiB (seeds of a few
    # KiB, room to grow; their mutators set the lengths).
    len_control=
    case $t in
    libsvm|csv|vw|ffm) name=fuzz_parse_$t; max_len=1048576; len_control=-len_control=0 ;;
    reader) name=fuzz_etl_reader; max_len=1048576; len_control=-len_control=0 ;;
    frame) name=fuzz_net_frame; max_len=4096 ;;
    hgd) name=fuzz_etl_hgd; max_len=65536 ;;
    model) name=fuzz_train_model_file; max_len=65536 ;;
    mf) name=fuzz_train_mf_file; max_len=65536 ;;
    hgr) name=fuzz_etl_ratings_hgr; max_len=65536 ;;
    *) echo "run-fuzz: unknown target $t (libsvm csv vw ffm reader frame hgd model mf hgr)"; exit 2 ;;
    esac
    bin=$out/$name
    clang -g -O1 $arch -std=c11 -D_GNU_SOURCE -pthread -Iinclude -Isrc \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
        tests/fuzz/$name.c "$out/lib/libhogtrain.a" -lopenblas -lhwloc -luring -lzmq -lzstd -lz -lm -o "$bin"
    mkdir -p "$out/corpus/$t"
    if [ -n "${FUZZ_RUNS:-}" ]; then
        limit="-runs=$FUZZ_RUNS"
        echo "run-fuzz: $t for $FUZZ_RUNS inputs"
    else
        limit="-max_total_time=$secs"
        echo "run-fuzz: $t for $secs s"
    fi
    rc=0
    (cd "$out" && ./$name "$limit" -max_len="$max_len" $len_control -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=crash-$t- \
        "corpus/$t" "../tests/fuzz/corpus/$t" >"$name.log" 2>&1) || rc=$?
    grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)' "$out/$name.log" | tail -n 30
    if [ "$rc" -ne 0 ]; then
        echo "run-fuzz: $t failed (exit $rc); the input is in $out/crash-$t-*"
        exit "$rc"
    fi
done
