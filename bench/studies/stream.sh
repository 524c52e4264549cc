# stream.sh: one pass over a pipe (a generator's rows through cat) against the same rows from a file, train --epochs 1, linear and matrix factorisation: rows/s, their ratio and peak RSS; Vowpal Wabbit on the same pipe when it is built.
# SPDX-License-Identifier: BSD-2-Clause
#
# Data: gen_sparse, 1,000,000 rows (--quick 200,000) of 40 non-zeros among
# 2^20 features (libsvm text, about 525 bytes a row), made once; the stream
# is that file through `cat |`, so the pipe carries the same bytes a file
# run reads. Every round runs, in this order, hogtrain train FILE --epochs 1
# (the reference, page cache warm), cat FILE | hogtrain train - --epochs 1,
# and cat FILE.vw | vw -b 20 (one pass, logistic loss; its progressive
# validation is what it learns from), so that a noisy spell of a shared
# machine falls on all alike; the first round is a warm-up, not recorded.
# Rows/s is rows over the command's wall time (reading and writing the
# model included), the ratio is each round's pipe over its file run (median
# of the rounds), and peak RSS is the command's (ru_maxrss of the children:
# cat's is smaller). Vowpal Wabbit: vw on PATH or
# DATA_DIR/vw/build/vowpalwabbit/cli/vw; its rows are left out, and the
# table says so, when neither is there. Then one more pipe run with
# --save-every 100000: when its first snapshot was written (a note); then
# matrix factorisation's ratings the same two ways (stream_mf); last, the
# long stream (stream_long, below).

study_stream() {
    rows=1000000
    [ "$QUICK" -eq 1 ] && rows=200000
    note stream command "bench/run stream --reps $REPS$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    sparse_set "$rows" 1048576 40 7
    svm="$DATA_DIR/$SET.train.svm"
    n=$(wc -l <"$svm") t=$(nproc)
    vw=$(command -v vw || true)
    [ -n "$vw" ] || vw="$DATA_DIR/vw/build/vowpalwabbit/cli/vw"
    if [ -x "$vw" ]; then
        vwtext="${svm%.svm}.vw"
        [ -s "$vwtext" ] && [ "$vwtext" -nt "$svm" ] || "$PY" "$ROOT/bench/harness.py" tovw "$svm" "$vwtext"
    else
        note stream vw "Vowpal Wabbit not found (vw on PATH or $DATA_DIR/vw/build/vowpalwabbit/cli/vw): its row is left out"
        vw=
    fi
    rep=0
    while [ "$rep" -le "$REPS" ]; do
        w=
        [ "$rep" -eq 0 ] && w=--warmup
        cat "$svm" >/dev/null
        measure stream "file" hogtrain "rows=$n" "$t" "$rep" --data "$svm" --report "$OUT/tmp/stream.json" $w -- \
            "$HOGTRAIN" train "$svm" --epochs 1 -q -o "$OUT/tmp/stream.hog" --report "$OUT/tmp/stream.json"
        measure stream "pipe" hogtrain "rows=$n" "$t" "$rep" --data "$svm" --report "$OUT/tmp/stream.json" $w -- \
            sh -c 'cat "$1" | "$2" train - --epochs 1 -q -o "$3" --report "$4"' sh "$svm" "$HOGTRAIN" \
            "$OUT/tmp/stream.hog" "$OUT/tmp/stream.json"
        if [ -n "$vw" ]; then
            measure stream "pipe" "Vowpal Wabbit" "rows=$n" 1 "$rep" --data "$svm" $w -- \
                sh -c 'cat "$1" | "$2" --quiet --loss_function logistic -b 20 -f "$3"' sh "$vwtext" "$vw" \
                "$OUT/tmp/stream.vw.model"
        fi
        rep=$((rep + 1))
    done
    stream_mf "$t"
    # Models while it runs: the pipe once more with --save-every 100000,
    # the time from the command's start to its first snapshot (its log).
    snaplog="$OUT/tmp/stream.snap.log"
    sh -c 'cat "$1" | "$2" train - --epochs 1 -o "$3" --save-every 100000' sh "$svm" "$HOGTRAIN" \
        "$OUT/tmp/stream.hog" 2>"$snaplog"
    first=$(sed -n 's/.*snapshot after \([0-9]*\) rows, \([0-9.]*\) s into the run (\([0-9.]*\) s to make.*/\1 rows, \2 s into the run (\3 s to make and write)/p' "$snaplog" | head -n 1)
    note stream snapshots "--save-every 100000 on the pipe: the first snapshot after ${first:-none}; $(grep -c 'snapshot after' "$snaplog") in all"
    rm -f "$OUT/tmp/stream.hog" "$OUT/tmp/stream.json" "$OUT/tmp/stream.vw.model" "$snaplog"
    stream_long "$svm" "$n"
}

# stream_mf THREADS: matrix factorisation in one pass, "user item rating"
# text from gen_ratings (5,000,000 ratings of 200,000 users x 20,000
# items, rank 16; --quick 1,000,000), the file against the same bytes
# through `cat |`, train --model mf --rank 16 --epochs 1, interleaved in
# rounds as above (cases "mf file" and "mf pipe"; the ratio is against the
# "mf file" run of the same round).
stream_mf() {
    _rn=5000000
    [ "$QUICK" -eq 1 ] && _rn=1000000
    _txt="$DATA_DIR/ratings-stream-n$_rn.txt"
    [ -s "$_txt" ] || "$BUILD/tools/gen_ratings" -u 200000 -i 20000 -k 16 -n "$_rn" -s 3 -q -o "$_txt" || return 1
    _mf="--model mf --rank 16 --epochs 1 -q"
    rep=0
    while [ "$rep" -le "$REPS" ]; do
        w=
        [ "$rep" -eq 0 ] && w=--warmup
        cat "$_txt" >/dev/null
        measure stream "mf file" hogtrain "rows=$_rn" "$1" "$rep" --data "$_txt" --report "$OUT/tmp/stream.json" $w -- \
            "$HOGTRAIN" train "$_txt" $_mf -o "$OUT/tmp/stream.mf" --report "$OUT/tmp/stream.json"
        measure stream "mf pipe" hogtrain "rows=$_rn" "$1" "$rep" --data "$_txt" --report "$OUT/tmp/stream.json" $w -- \
            sh -c 'cat "$1" | "$2" train - $3 -o "$4" --report "$5"' sh "$_txt" "$HOGTRAIN" "$_mf" \
            "$OUT/tmp/stream.mf" "$OUT/tmp/stream.json"
        rep=$((rep + 1))
    done
    rm -f "$OUT/tmp/stream.mf" "$OUT/tmp/stream.json"
}

# stream_long SVM ROWS: an endless stream, bounded. The file again and again
# through one pipe until STREAM_GB gigabytes have passed (default 20,
# --quick 2; 0: none), trained in one pass with --save-every 10s, its RSS
# read every second; beside it, before and after, the file once with
# --epochs 1, the reference of its rows/s. Notes the rows, rows/s against
# the file's (the mean of the two), and the RSS over the run: its largest,
# and a quarter, half and three quarters in and at the end, so that a
# growth shows. Then Vowpal Wabbit on the same stream (its text of the same
# rows as many times over) when it is built, and hogtrain's rows/s over it.
stream_long() {
    _svm=$1 _n=$2
    _gb=${STREAM_GB:-20}
    [ "$QUICK" -eq 1 ] && _gb=${STREAM_GB:-2}
    [ "$_gb" -gt 0 ] || return 0
    _bytes=$(file_bytes "$_svm")
    _copies=$(( (_gb * 1000000000 + _bytes - 1) / _bytes ))
    _rss="$OUT/tmp/stream.rss" _log="$OUT/tmp/stream.long.log"
    _file_rate() {
        _t0=$(date +%s.%N)
        "$HOGTRAIN" train "$_svm" --epochs 1 -q -o "$OUT/tmp/stream.hog"
        echo "$_t0 $(date +%s.%N)" | awk -v n="$_n" '{ printf "%.0f\n", n / ($2 - $1) }'
    }
    _before=$(_file_rate)
    : >"$_rss"
    _t0=$(date +%s.%N)
    sh -c 'i=0; while [ "$i" -lt "$2" ]; do cat "$1" || exit 1; i=$((i + 1)); done' sh "$_svm" "$_copies" |
        "$HOGTRAIN" train - --epochs 1 -o "$OUT/tmp/stream.hog" --save-every 10s 2>"$_log" &
    _pid=$!
    while kill -0 "$_pid" 2>/dev/null; do
        awk '/^VmRSS:/ { print $2 }' "/proc/$_pid/status" 2>/dev/null >>"$_rss"
        sleep 1
    done
    _rc=0
    wait "$_pid" || _rc=$?
    _t1=$(date +%s.%N)
    _after=$(_file_rate)
    if [ "$_rc" -ne 0 ]; then
        note stream long "the stream of ${_gb} GB failed (exit $_rc): $(tail -n 1 "$_log")"
        return 0
    fi
    _rows=$((_n * _copies))
    _hog_rate=$(echo "$_t0 $_t1" | awk -v rows="$_rows" '{ printf "%.0f", rows / ($2 - $1) }')
    note stream long "$(awk -v rows="$_rows" -v gb="$_gb" -v c="$_copies" -v t0="$_t0" -v t1="$_t1" \
        -v f1="$_before" -v f2="$_after" -v snaps="$(grep -c 'snapshot after' "$_log")" '
        { r[NR] = $1; if ($1 > max) max = $1 }
        END {
            s = t1 - t0; rate = rows / s; file = (f1 + f2) / 2
            printf "a stream of %d GB (the file %d times through one pipe, %d rows) in one pass with --save-every 10s: %.0f s, %.0f rows/s, %.2f of the file run with --epochs 1 beside it (%.0f and %.0f rows/s before and after); %d snapshots; RSS, sampled every second: at most %.1f MiB; %.1f, %.1f and %.1f MiB a quarter, half and three quarters in; %.1f MiB at the end", \
                gb, c, rows, s, rate, rate / file, f1, f2, snaps, max / 1024, r[int(NR / 4) + 1] / 1024, r[int(NR / 2) + 1] / 1024, r[int(3 * NR / 4) + 1] / 1024, r[NR] / 1024
        }' "$_rss")"
    rm -f "$_rss" "$_log" "$OUT/tmp/stream.hog"
    # Vowpal Wabbit on the same long stream (its text of the same rows, as
    # many times), when it is built: the target's "same stream".
    [ -n "${vw:-}" ] || return 0
    _t0=$(date +%s.%N)
    sh -c 'i=0; while [ "$i" -lt "$2" ]; do cat "$1" || exit 1; i=$((i + 1)); done' sh "$vwtext" "$_copies" |
        "$vw" --quiet --loss_function logistic -b 20 -f "$OUT/tmp/stream.vw.model"
    _rc=$?
    _t1=$(date +%s.%N)
    rm -f "$OUT/tmp/stream.vw.model"
    if [ "$_rc" -ne 0 ]; then
        note stream long_vw "Vowpal Wabbit on the long stream failed (exit $_rc)"
        return 0
    fi
    note stream long_vw "$(awk -v rows="$_rows" -v t0="$_t0" -v t1="$_t1" -v hog="$_hog_rate" 'BEGIN {
        rate = rows / (t1 - t0)
        printf "Vowpal Wabbit on the same long stream (its text of the same rows, one pass, -b 20): %.0f s, %.0f rows/s; hogtrain on it: %.2fx", t1 - t0, rate, hog / rate }')"
}
