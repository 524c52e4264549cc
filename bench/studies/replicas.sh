# replicas.sh: DimmWitted's design space: one model for the machine against one per NUMA node against one per core, throughput and time to a target test loss.
# SPDX-License-Identifier: BSD-2-Clause
#
# Data: gen_sparse, 2^16 features, 40 non-zeros per row (as the peers
# study), 200,000 training rows (--quick 20,000) and a fifth as many held
# out; sparse logistic regression on all the thread counts given, with
# `--replicas machine`, `node` and `core`. The target is --target, or else
# the test logloss that `machine` reaches after 10 epochs on all threads,
# plus 2%. Time to target: training seconds until the first epoch whose
# test logloss is at or below it. On a machine of one NUMA node `node`
# holds one replica (the model's copy), so it differs from `machine` only
# by the averaging after each epoch.

study_replicas() {
    rows=200000 epochs=10
    [ "$QUICK" -eq 1 ] && rows=20000
    note replicas command "bench/run replicas --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')${TARGET:+ --target $TARGET}"
    sparse_set "$rows" 65536 40 13
    train="$DATA_DIR/$SET.train.hgd" test="$DATA_DIR/$SET.test.hgd"
    maxt=$(echo "$THREADS" | tr ' ' '\n' | grep . | sort -n | tail -n 1)
    target=$TARGET
    if [ -z "$target" ]; then
        # shellcheck disable=SC2086 # PLAIN is a list of options
        "$HOGTRAIN" train "$train" --test "$test" --epochs "$epochs" --threads "$maxt" $PLAIN \
            -o "$OUT/tmp/model.hog" --report "$OUT/tmp/ref.json" -q
        target=$("$PY" -c 'import json, sys; print("%.6g" % (json.load(open(sys.argv[1]))["test"]["logloss"] * 1.02))' "$OUT/tmp/ref.json")
        note replicas target "test logloss $target (replicas machine on $maxt threads after $epochs epochs, plus 2%)"
    fi
    case="sparse n=$rows d=2^16 nnz=40"
    rep=0
    while [ "$rep" -le "$REPS" ]; do
        w=
        [ "$rep" -eq 0 ] && w=--warmup
        for kind in machine node core; do
            for t in $THREADS; do
                # shellcheck disable=SC2086 # PLAIN is a list of options
                measure replicas "$case" "replicas $kind" "rows=$rows;epochs=$epochs;replicas=$kind" "$t" "$rep" \
                    --data "$train" --bytes "$(file_bytes "$train")" --target "$target" \
                    --report "$OUT/tmp/report.json" $w -- \
                    "$HOGTRAIN" train "$train" --test "$test" --epochs "$epochs" --threads "$t" $PLAIN \
                    --replicas "$kind" -o "$OUT/tmp/model.hog" --report "$OUT/tmp/report.json"
            done
        done
        rep=$((rep + 1))
    done
}
