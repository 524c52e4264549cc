# peers.sh: time to a target test logloss, throughput and peak memory on the same data for hogtrain, liblinear-train, scikit-learn's SGDClassifier and vw (when on PATH).
# SPDX-License-Identifier: BSD-2-Clause
#
# Data: gen_sparse, 2^16 features, 40 non-zeros per row, power-law feature
# frequencies, 100,000 training rows (--quick 20,000) and a fifth as many
# held out. All fit L2-regularised logistic regression with the same
# penalty (hogtrain --l2 L, liblinear C = 1 / (L * rows), SGDClassifier
# alpha = L, vw --l2 L); hogtrain with --schedule adagrad --step 0.5. The
# target is --target, or else LIBLINEAR's
# converged test logloss plus 2%. Time to target: training seconds until
# the first epoch whose test logloss is at or below it (LIBLINEAR and vw:
# their whole run, if they reach it). LIBLINEAR, SGDClassifier and vw run on
# one thread; hogtrain on 1 and on all the thread counts given. A peer that
# is missing is skipped and said so.

study_peers() {
    rows=100000 l2=1e-5 epochs=10
    # AdaGrad's per-coordinate steps reach the optimum on the rare features
    # of power-law data within a few epochs, as the decaying global step of
    # the default schedule does not; 0.5 is Vowpal Wabbit's default rate.
    hflags="--schedule adagrad --step 0.5 --normalized 0"
    [ "$QUICK" -eq 1 ] && rows=20000
    note peers command "bench/run peers --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')${TARGET:+ --target $TARGET}"
    sparse_set "$rows" 65536 40 11
    train="$DATA_DIR/$SET.train.svm" test="$DATA_DIR/$SET.test.svm"
    case="sparse n=$rows d=2^16 nnz=40"
    params="rows=$rows;l2=$l2"
    h="$PY $ROOT/bench/harness.py"
    target=$TARGET
    liblinear=0
    if command -v liblinear-train >/dev/null 2>&1 && command -v liblinear-predict >/dev/null 2>&1; then
        liblinear=1
        if [ -z "$target" ]; then
            $h liblinear --train "$train" --test "$test" --l2 "$l2" --report "$OUT/tmp/ll.json"
            target=$("$PY" -c 'import json, sys; print("%.6g" % (json.load(open(sys.argv[1]))["test"]["logloss"] * 1.02))' "$OUT/tmp/ll.json")
            note peers target "test logloss $target (LIBLINEAR -s 0 converged, plus 2%)"
        fi
    else
        note peers skipped "liblinear-train not found (Debian liblinear-tools)"
    fi
    if [ -z "$target" ]; then
        # No reference: hogtrain's own final test logloss on all threads, plus 2%.
        "$HOGTRAIN" train "$DATA_DIR/$SET.train.hgd" --test "$DATA_DIR/$SET.test.hgd" --l2 "$l2" \
            --epochs "$epochs" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/ref.json" -q
        target=$("$PY" -c 'import json, sys; print("%.6g" % (json.load(open(sys.argv[1]))["test"]["logloss"] * 1.02))' "$OUT/tmp/ref.json")
        note peers target "test logloss $target (hogtrain's own after $epochs epochs plus 2%: no LIBLINEAR)"
    fi

    sk=0
    if "$PY" -c 'import sklearn' 2>/dev/null; then
        sk=1
    else
        note peers skipped "scikit-learn not importable by $PY (Debian python3-sklearn)"
    fi
    vw=0
    if command -v vw >/dev/null 2>&1; then
        vw=1
        "$PY" "$ROOT/bench/harness.py" tovw "$train" "$OUT/tmp/train.vw"
        "$PY" "$ROOT/bench/harness.py" tovw "$test" "$OUT/tmp/test.vw"
    else
        note peers skipped "vw not found on PATH (Vowpal Wabbit is not packaged in Debian 12)"
    fi
    hthreads=$(printf '1 %s\n' "$THREADS" | tr ' ' '\n' | grep . | sort -nu | tr '\n' ' ')

    # Interleaved: each repetition runs every tool once (repetition 0 is the warm-up).
    rep=0
    while [ "$rep" -le "$REPS" ]; do
        w=
        [ "$rep" -eq 0 ] && w=--warmup
        for t in $hthreads; do
            measure peers "$case" hogtrain "$params;epochs=$epochs;$hflags" "$t" "$rep" --data "$train" \
                --target "$target" --report "$OUT/tmp/h.json" $w -- \
                "$HOGTRAIN" train "$DATA_DIR/$SET.train.hgd" --test "$DATA_DIR/$SET.test.hgd" \
                --l2 "$l2" --epochs "$epochs" $hflags --threads "$t" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/h.json"
        done
        [ "$liblinear" -eq 0 ] || measure peers "$case" liblinear-train "$params;-s 0" 1 "$rep" --data "$train" \
            --target "$target" --report "$OUT/tmp/ll.json" $w -- \
            $h liblinear --train "$train" --test "$test" --l2 "$l2" --report "$OUT/tmp/ll.json"
        [ "$sk" -eq 0 ] || measure peers "$case" sklearn-SGDClassifier "$params;epochs<=$epochs" 1 "$rep" --data "$train" \
            --target "$target" --report "$OUT/tmp/sk.json" $w -- \
            $h sgd --train "$train" --test "$test" --l2 "$l2" --epochs "$epochs" --report "$OUT/tmp/sk.json"
        [ "$vw" -eq 0 ] || measure peers "$case" vw "$params;passes=$epochs" 1 "$rep" --data "$train" \
            --target "$target" --report "$OUT/tmp/vw.json" $w -- \
            $h vw --train "$OUT/tmp/train.vw" --test "$OUT/tmp/test.vw" --l2 "$l2" --epochs "$epochs" --report "$OUT/tmp/vw.json"
        rep=$((rep + 1))
    done
}
