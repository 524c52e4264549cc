# harness.sh: shell helpers the studies share (data sets made once and cached, limits, measured runs); sourced by bench/run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Set by bench/run before this is sourced: ROOT, BUILD, OUT (the run's folder),
# DATA_DIR (cached data sets), REPS, REPS_ASKED (--reps, or empty), THREADS,
# QUICK (0/1), COMMIT, PY.

HOGTRAIN="$BUILD/hogtrain"

# note STUDY KIND TEXT: a line for table.md (KIND "command": how to reproduce;
# "skipped" and the like: said on stderr too).
note() {
    "$PY" "$ROOT/bench/harness.py" note --out "$OUT" --study "$1" --kind "$2" --note "$3"
}

is_root_cold() { [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/drop_caches ]; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# to_hgd TEXT HGD [convert options]: converts once; an unreadable .hgd (an
# older format) is made again.
to_hgd() {
    _txt=$1 _hgd=$2
    shift 2
    if [ ! -s "$_hgd" ] || ! "$HOGTRAIN" info "$_hgd" >/dev/null 2>&1; then
        "$HOGTRAIN" convert "$_txt" -o "$_hgd" -q "$@"
    fi
}

# split_text ALL TRAIN TEST TEST_ROWS: the last TEST_ROWS lines are the test
# set. The generators' rows are independent draws from one model, so this is
# a held-out sample of the same distribution.
split_text() {
    if [ ! -s "$2" ] || [ ! -s "$3" ] || [ "$2" -ot "$1" ]; then
        _n=$(wc -l <"$1")
        head -n $((_n - $4)) "$1" >"$2.tmp" && mv "$2.tmp" "$2"
        tail -n "$4" "$1" >"$3.tmp" && mv "$3.tmp" "$3"
    fi
}

# gen_set NAME EXT FORMAT TEST_ROWS GENERATOR [ARGS...]: sets SET=NAME and
# makes, once, DATA_DIR/NAME.all.EXT with the generator (which is given -q
# -o FILE), then NAME.{train,test}.EXT (the last TEST_ROWS rows held out) and
# their .hgd.
gen_set() {
    SET=$1 _ext=$2 _fmt=$3 _test=$4
    shift 4
    [ -s "$DATA_DIR/$SET.all.$_ext" ] || "$@" -q -o "$DATA_DIR/$SET.all.$_ext"
    split_text "$DATA_DIR/$SET.all.$_ext" "$DATA_DIR/$SET.train.$_ext" "$DATA_DIR/$SET.test.$_ext" "$_test"
    to_hgd "$DATA_DIR/$SET.train.$_ext" "$DATA_DIR/$SET.train.hgd" --format "$_fmt"
    to_hgd "$DATA_DIR/$SET.test.$_ext" "$DATA_DIR/$SET.test.hgd" --format "$_fmt"
}

# sparse_set ROWS FEATURES NNZ SEED: gen_sparse data (power-law feature
# frequencies, a known model) in libsvm text, ROWS for training and ROWS/5
# held out; sets SET.
sparse_set() {
    gen_set "sparse-n$1-d$2-k$3-s$4" svm libsvm $(($1 / 5)) \
        "$BUILD/tools/gen_sparse" -n $(($1 + $1 / 5)) -d "$2" -k "$3" -s "$4"
}

# dense_set ROWS FEATURES CLASSES SEED: as sparse_set, from gen_dense (CSV,
# every feature non-zero; CLASSES 2 for binary labels).
dense_set() {
    gen_set "dense-n$1-d$2-c$3-s$4" csv csv $(($1 / 5)) \
        "$BUILD/tools/gen_dense" -n $(($1 + $1 / 5)) -d "$2" -c "$3" -s "$4"
}

file_bytes() { stat -L -c %s "$1"; }

# membw_limit: the memory read bandwidth on 1 and all cores (and the counts
# in THREADS), once per run, into limits.csv.
membw_limit() {
    grep -q '^membw_read,' "$OUT/limits.csv" 2>/dev/null && return 0
    _mib=
    [ "$QUICK" -eq 1 ] && _mib="-m 512"
    # shellcheck disable=SC2086
    "$BUILD/bench/bench_membw" $_mib -r "$( [ "$QUICK" -eq 1 ] && echo 3 || echo 5 )" \
        -t "1 $THREADS $(nproc)" | tail -n +2 | while IFS=, read -r t b m lo hi; do
        "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name membw_read --threads "$t" \
            --value "$m" --unit GB/s --note "bench_membw: streaming read of $((b >> 20)) MiB, median (min $lo, max $hi)"
    done
}

# read_limit FILE: the raw read rate of FILE with hog_reader, warm (page
# cache, buffered reads) and cold (caches dropped, O_DIRECT where allowed;
# root only), medians of 3, into limits.csv.
read_limit() {
    _f=$1 _base=$(basename "$1")
    grep -q "^file_read_warm,1,[^,]*,[^,]*,$_base," "$OUT/limits.csv" 2>/dev/null && return 0
    cat "$_f" >/dev/null
    _w=$(for _i in 1 2 3; do "$BUILD/bench/bench_read" --buffered "$_f" | sed -n 's/.*gbps=\([0-9.]*\).*/\1/p'; done | sort -g | sed -n 2p)
    "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name file_read_warm --threads 1 \
        --value "$_w" --unit GB/s --file "$_f" --note "bench_read --buffered from the page cache, median of 3"
    if is_root_cold; then
        _c=$(for _i in 1 2 3; do drop_caches; "$BUILD/bench/bench_read" "$_f" | sed -n 's/.*gbps=\([0-9.]*\).*/\1/p'; done | sort -g | sed -n 2p)
        "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name file_read_cold --threads 1 \
            --value "$_c" --unit GB/s --file "$_f" --note "bench_read (io_uring, O_DIRECT where allowed) after drop_caches, median of 3"
        cat "$_f" >/dev/null # leave it warm for what follows
    else
        "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name file_read_cold --threads 1 \
            --value "" --unit GB/s --file "$_f" --note "skipped: dropping the page cache needs root; warm only"
    fi
}

# measure STUDY CASE TOOL PARAMS THREADS REP [--data F] [--bytes B] [--target L]
#         [--report R] [--warmup] -- COMMAND...: one run into results.csv.
measure() {
    _s=$1 _c=$2 _t=$3 _p=$4 _th=$5 _r=$6
    shift 6
    "$PY" "$ROOT/bench/harness.py" measure --out "$OUT" --commit "$COMMIT" --study "$_s" \
        --case "$_c" --tool "$_t" --params "$_p" --threads "$_th" --rep "$_r" "$@"
}

# The plain loop, at the settings the README's figures were measured with
# (train's defaults have been the normalized update since, at a fraction of
# its speed): the studies measure the loops, not the defaults. A study's own
# --step or --decay, given after, wins.
PLAIN="--normalized 0 --step 0.1 --decay 0.9"

# train_runs STUDY CASE PARAMS DATA TEST [hogtrain train options]: for each
# thread count in THREADS one warm-up run (not recorded), then REPS runs
# interleaved across the thread counts, so that a noisy spell on a shared
# machine falls on every count alike. TEST may be empty. With COPIES=1,
# each count T above 1 also runs, in the same rounds, T one-thread copies
# of the command at once, each pinned to a CPU of its own (tool
# "independent"): the parallel limit at T, measured beside the figure it
# bounds.
train_runs() {
    _st=$1 _ca=$2 _pa=$3 _da=$4 _te=$5
    shift 5
    _bytes=$(file_bytes "$_da")
    _plain=$PLAIN
    case " $* " in *" --model mf "*) _plain= ;; esac # factorisation has no normalized update
    # Without a test set, every row every epoch: train's default holdout
    # (a tenth kept back, early stopping) would change the work measured.
    _hold=
    case " $* " in *" --holdout "*|*" --cv "*) ;; *) [ -n "$_te" ] || _hold="--holdout 0" ;; esac
    _rep=0
    while [ "$_rep" -le "$REPS" ]; do
        for _th in $THREADS; do
            _w=
            [ "$_rep" -eq 0 ] && _w=--warmup
            [ -z "${BEFORE_RUN:-}" ] || $BEFORE_RUN
            # shellcheck disable=SC2086 # _plain and _hold are lists of options
            measure "$_st" "$_ca" hogtrain "$_pa" "$_th" "$_rep" --data "$_da" --bytes "$_bytes" \
                --report "$OUT/tmp/report.json" $_w -- \
                "$HOGTRAIN" train "$_da" ${_te:+--test "$_te"} -o "$OUT/tmp/model.hog" \
                --threads "$_th" --report "$OUT/tmp/report.json" $_plain $_hold "$@"
            if [ "${COPIES:-0}" -eq 1 ] && [ "$_th" -gt 1 ]; then
                # shellcheck disable=SC2086
                measure "$_st" "$_ca" independent "$_pa" "$_th" "$_rep" --data "$_da" --bytes "$_bytes" \
                    --report "$OUT/tmp/report.json" --copies "$_th" $_w -- \
                    "$HOGTRAIN" train "$_da" ${_te:+--test "$_te"} -o "$OUT/tmp/model.hog" \
                    --threads 1 --report "$OUT/tmp/report.json" $_plain $_hold "$@"
            fi
        done
        _rep=$((_rep + 1))
    done
}
