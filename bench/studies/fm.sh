# fm.sh: click-through models: test logloss against training time on gen_click data with a field-aware truth, for hogtrain (linear, FM), LIBFFM, xLearn (LR, FM, FFM) and Vowpal Wabbit with every pair of fields crossed.
# SPDX-License-Identifier: BSD-2-Clause
#
# Data: tools/gen_click, 1,000,000 training rows and 200,000 held out (the
# rows that follow them in the same stream), 20 categorical fields of 4 to
# 4,096 values drawn from Zipf laws, labels from a known field-aware
# factorisation machine (k 4): a linear model, one with the pairs crossed,
# an FM and an FFM come apart on it. Every tool gets the same rows in its
# own format (LIBFFM's field:index:value, libsvm, Vowpal Wabbit's
# namespaces) and the test set as its validation set; each tool's test
# logloss after every epoch against its cumulative training seconds is the
# curve (Vowpal Wabbit: one point, 5 passes from its cache). The table gives
# each tool's best test logloss and the training time to it, and the time
# to the target: the better of the peers' two FFMs' best (median of the runs).
# Peers, found on PATH or built in DATA_DIR/peers (see docs/benchmarks.md,
# "Click-through models", for how to build them from their public sources):
#   LIBFFM        ffm-train (k 4, its default step and L2), DATA_DIR/peers/libffm/
#   xLearn        xlearn_train -s 0, 1, 2 (LR, FM, FFM; k 4; early stopping
#                 off), DATA_DIR/peers/xlearn/build/; USER is set for it
#   Vowpal Wabbit vw -q :: -b 24 --passes 5
# A missing peer's rows are left out and table.md says so. The FFM's two
# threads are measured against the parallel limit too, in the threads
# study's section (time to one thread's loss after 3 epochs). hogtrain trains
# its linear model, its factorisation machine (--model fm, k 4), its
# field-aware one (--model ffm, k 4, from the LIBFFM text's .hgd; also from
# the .hgd out of core, --mem-limit a quarter of its size) and its linear
# model with every pair of namespaces crossed (--interactions ::
# --cross-bits 24, as vw -q :: -b 24, as many epochs as vw's passes), each
# with its defaults. The target is the peers' better FFM best (hogtrain's
# own best when no peer's FFM ran).

study_fm() {
    rows=1000000 test=200000 epochs=8 k=4 passes=5
    [ "$QUICK" -eq 1 ] && rows=30000 test=10000 epochs=3 passes=2
    note fm command "bench/run fm --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    set_=click-n$rows
    tr=$DATA_DIR/$set_.train te=$DATA_DIR/$set_.test
    for f in ffm libsvm vw; do
        e=$f
        [ "$f" = libsvm ] && e=svm
        [ -s "$tr.$e" ] || "$BUILD/tools/gen_click" --rows "$rows" --seed 7 --format "$f" -q -o "$tr.$e"
        [ -s "$te.$e" ] || "$BUILD/tools/gen_click" --rows "$test" --first "$rows" --seed 7 --format "$f" -q -o "$te.$e"
    done
    to_hgd "$tr.svm" "$tr.hgd" --format libsvm
    to_hgd "$te.svm" "$te.hgd" --format libsvm
    to_hgd "$tr.vw" "$tr.vw.hgd" --format vw --fields
    to_hgd "$te.vw" "$te.vw.hgd" --format vw --fields
    to_hgd "$tr.ffm" "$tr.ffm.hgd" --format ffm
    to_hgd "$te.ffm" "$te.ffm.hgd" --format ffm
    ooc=$(( $(wc -c <"$tr.ffm.hgd") / 4 ))
    h="$PY $ROOT/bench/harness.py"
    libffm=$(command -v ffm-train || true)
    [ -n "$libffm" ] || [ ! -x "$DATA_DIR/peers/libffm/ffm-train" ] || libffm=$DATA_DIR/peers/libffm/ffm-train
    [ -n "$libffm" ] || note fm skipped "LIBFFM not found (ffm-train on PATH or in $DATA_DIR/peers/libffm)"
    xlearn=$(command -v xlearn_train || true)
    [ -n "$xlearn" ] || [ ! -x "$DATA_DIR/peers/xlearn/build/xlearn_train" ] ||
        xlearn=$DATA_DIR/peers/xlearn/build/xlearn_train
    [ -n "$xlearn" ] || note fm skipped "xLearn not found (xlearn_train on PATH or in $DATA_DIR/peers/xlearn/build)"
    vw=0
    if command -v vw >/dev/null 2>&1; then vw=1; else note fm skipped "vw not found on PATH"; fi
    hthreads=$(printf '1 %s\n' "$THREADS" | tr ' ' '\n' | grep . | sort -nu | tr '\n' ' ')
    case="click n=$rows fields=20"
    rep=0
    while [ "$rep" -le "$REPS" ]; do
        w=
        [ "$rep" -eq 0 ] && w=--warmup
        for t in $hthreads; do
            measure fm "$case" "hogtrain linear" "rows=$rows;epochs=$epochs;defaults" "$t" "$rep" --data "$tr.svm" \
                --report "$OUT/tmp/h.json" $w -- \
                "$HOGTRAIN" train "$tr.hgd" --test "$te.hgd" --epochs "$epochs" --threads "$t" \
                -o "$OUT/tmp/model.hog" --report "$OUT/tmp/h.json"
            measure fm "$case" "hogtrain FM" "rows=$rows;k=$k;epochs=$epochs;defaults" "$t" "$rep" --data "$tr.svm" \
                --report "$OUT/tmp/h.json" $w -- \
                "$HOGTRAIN" train "$tr.hgd" --test "$te.hgd" --model fm --factors "$k" --epochs "$epochs" \
                --threads "$t" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/h.json"
            measure fm "$case" "hogtrain FFM" "rows=$rows;k=$k;epochs=$epochs;defaults" "$t" "$rep" --data "$tr.ffm" \
                --report "$OUT/tmp/h.json" $w -- \
                "$HOGTRAIN" train "$tr.ffm.hgd" --test "$te.ffm.hgd" --model ffm --factors "$k" --epochs "$epochs" \
                --threads "$t" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/h.json"
            # the same from a .hgd four times --mem-limit: block by block, out of core
            # (not with --quick: a quarter of its data would not hold the model)
            [ "$QUICK" -eq 1 ] || measure fm "$case" "hogtrain FFM, out of core" "rows=$rows;k=$k;epochs=$epochs;mem-limit=$ooc" "$t" "$rep" \
                --data "$tr.ffm" --report "$OUT/tmp/h.json" $w -- \
                "$HOGTRAIN" train "$tr.ffm.hgd" --test "$te.ffm.hgd" --model ffm --factors "$k" --epochs "$epochs" \
                --threads "$t" --mem-limit "$ooc" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/h.json"
            [ -z "$libffm" ] || measure fm "$case" "LIBFFM FFM" "rows=$rows;k=$k;epochs=$epochs" "$t" "$rep" \
                --data "$tr.ffm" --report "$OUT/tmp/lf.json" $w -- \
                $h libffm --bin "$libffm" --train "$tr.ffm" --test "$te.ffm" --k "$k" --epochs "$epochs" \
                --threads "$t" --report "$OUT/tmp/lf.json"
            for mdl in lr fm ffm; do
                [ -z "$xlearn" ] || measure fm "$case" "xLearn $(echo "$mdl" | tr a-z A-Z)" \
                    "rows=$rows;k=$k;epochs=$epochs" "$t" "$rep" --data "$tr.ffm" --report "$OUT/tmp/xl.json" $w -- \
                    $h xlearn --bin "$xlearn" --model "$mdl" --train "$tr.ffm" --test "$te.ffm" --k "$k" \
                    --epochs "$epochs" --threads "$t" --report "$OUT/tmp/xl.json"
            done
        done
        for t in $hthreads; do
            w=
            [ "$rep" -eq 0 ] && w=--warmup
            measure fm "$case" "hogtrain linear -q ::" "rows=$rows;--cross-bits 24;epochs=$passes;defaults" "$t" "$rep" \
                --data "$tr.vw" --report "$OUT/tmp/h.json" $w -- \
                "$HOGTRAIN" train "$tr.vw.hgd" --test "$te.vw.hgd" --interactions :: --cross-bits 24 \
                --epochs "$passes" --threads "$t" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/h.json"
        done
        [ "$vw" -eq 0 ] || measure fm "$case" "vw -q ::" "rows=$rows;-b 24;passes=$passes" 1 "$rep" --data "$tr.vw" \
            --report "$OUT/tmp/vw.json" $w -- \
            $h vwq --train "$tr.vw" --test "$te.vw" --epochs "$passes" --bits 24 --report "$OUT/tmp/vw.json"
        rep=$((rep + 1))
    done
    # Two threads against the parallel limit (two pinned one-thread runs at
    # once, in the same rounds), in the threads study's terms: the time to
    # one thread's test loss after 3 epochs, its speedup, the efficiency.
    plain=$PLAIN
    PLAIN= COPIES=1
    train_runs threads "ffm, click n=$rows fields=20" "rows=$rows;k=$k;epochs=5;defaults" "$tr.ffm.hgd" \
        "$te.ffm.hgd" --model ffm --factors "$k" --epochs 5
    PLAIN=$plain COPIES=0
}
