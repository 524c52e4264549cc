# stream.sh: one pass over a pipe (a generator's rows through cat) against the same rows from a file, train --epochs 1: rows/s, their ratio and peak RSS; Vowpal Wabbit on the same pipe when it is built.
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
# table says so, when neither is there. Last, one more pipe run with
# --save-every 100000: when its first snapshot was written (a note).

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
    # Models while it runs: the pipe once more with --save-every 100000,
    # the time from the command's start to its first snapshot (its log).
    snaplog="$OUT/tmp/stream.snap.log"
    sh -c 'cat "$1" | "$2" train - --epochs 1 -o "$3" --save-every 100000' sh "$svm" "$HOGTRAIN" \
        "$OUT/tmp/stream.hog" 2>"$snaplog"
    first=$(sed -n 's/.*snapshot after \([0-9]*\) rows, \([0-9.]*\) s into the run (\([0-9.]*\) s to make.*/\1 rows, \2 s into the run (\3 s to make and write)/p' "$snaplog" | head -n 1)
    note stream snapshots "--save-every 100000 on the pipe: the first snapshot after ${first:-none}; $(grep -c 'snapshot after' "$snaplog") in all"
    rm -f "$OUT/tmp/stream.hog" "$OUT/tmp/stream.json" "$OUT/tmp/stream.vw.model" "$snaplog"
}
