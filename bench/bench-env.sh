# bench-env.sh: what the single-measurement scripts share, sourced: the build folder argument, the data folder, python, and the sparse libsvm text they train on.
# SPDX-License-Identifier: BSD-2-Clause
#
# bench_init SCRIPT "$@" checks for one BUILD_DIR argument and sets build,
# reps (REPS, default 3), bench_dir (BENCH_DIR, default /tmp/hogtrain-bench,
# made) and py. bench_sparse_text ROWS prints the path of ROWS rows x 75
# non-zeros over 2^20 features of gen_sparse libsvm text (seed 3), made
# once under bench_dir. bench_thread_counts SCRIPT sets counts to 1 and then
# the other thread counts of THREADS (default "1 2"), checked.

bench_init() {
    script=$1
    shift
    if [ $# -ne 1 ]; then
        echo "usage: $script BUILD_DIR" >&2
        exit 2
    fi
    build=$(cd "$1" && pwd)
    reps=${REPS:-3}
    bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
    py=/usr/bin/python3
    [ -x "$py" ] || py=python3
    mkdir -p "$bench_dir"
}

bench_sparse_text() {
    text="$bench_dir/cache-n$1.svm"
    [ -s "$text" ] || "$build/tools/gen_sparse" -n "$1" -d 1048576 -k 75 -s 3 -q -o "$text"
    echo "$text"
}

bench_thread_counts() {
    counts=1
    for t in ${THREADS:-1 2}; do
        case $t in
            *[!0-9]*|0) echo "$1: THREADS: '$t' is not a thread count" >&2; exit 2 ;;
            1) ;;
            *) counts="$counts $t" ;;
        esac
    done
}
