#!/bin/sh
# bench-parse.sh: builds and runs the text parsing benchmark (hog_parse_chunk on libsvm and CSV, 1 and 2 threads).
# usage: bench/bench-parse.sh [MB per format (256)] [runs (5)]; run from the repository root after `make`.
set -eu
cd "$(dirname "$0")/.."
[ -f build/libhogtrain.a ] || make build/libhogtrain.a
cc -O2 -std=c11 -D_GNU_SOURCE -pthread -Iinclude -Isrc bench/bench_parse.c build/libhogtrain.a \
    -lhwloc -lz -lm -ljemalloc -o build/bench_parse
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec build/bench_parse "${1:-256}" "${2:-5}"
