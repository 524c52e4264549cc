#!/bin/sh
# bench-parse.sh: builds and runs the text parsing benchmark (hog_parse_chunk on libsvm and CSV, 1 to N threads).
# SPDX-License-Identifier: BSD-2-Clause
# usage: bench/bench-parse.sh [MB per format (256)] [runs (5)] [threads (2)]; run from the repository root after `make`.
set -eu
cd "$(dirname "$0")/.."
make --no-print-directory -s build/bench/bench_parse
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec build/bench/bench_parse "${1:-256}" "${2:-5}" "${3:-2}"
