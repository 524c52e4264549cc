# threads.sh: speedup and efficiency against thread count for sparse logistic regression, softmax and matrix factorisation; test loss against training time per thread count.
# SPDX-License-Identifier: BSD-2-Clause
#
# Cases:
#   logistic  gen_sparse data shaped like RCV1: 47,000 features, 75 non-zeros
#             per row, power-law feature frequencies; 1,000,000 rows (--quick
#             50,000)
#   softmax   Fashion-MNIST (60,000 x 784, 10 classes) when datasets/
#             fashion-mnist.sh can build it; with --quick, or without it,
#             gen_dense data: 100 features, 10 classes
#   mf        hogtrain train RATINGS --model mf --rank K on tools/gen_ratings
#             data, when both exist in this build; otherwise skipped, saying so
#
# Every case runs 5 epochs on each thread count and, in the same rounds, the
# parallel limit of each count T above 1: T one-thread runs at once, each
# pinned to a CPU of its own (harness.sh's COPIES). The report gives the
# time to the target test loss (one thread's after 3 epochs) per count, its
# speedup over one thread, the limit and the efficiency (speedup / limit).

study_threads() {
    rows=1000000 epochs=5
    [ "$QUICK" -eq 1 ] && rows=50000
    note threads command "bench/run threads --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')"

    sparse_set "$rows" 47000 75 1
    read_limit "$DATA_DIR/$SET.train.hgd"
    COPIES=1
    train_runs threads logistic "rows=$rows;d=47000;k=75;epochs=$epochs" \
        "$DATA_DIR/$SET.train.hgd" "$DATA_DIR/$SET.test.hgd" --loss logistic --epochs "$epochs"

    fm="$ROOT/datasets/fashion-mnist"
    if [ "$QUICK" -eq 0 ] && sh "$ROOT/datasets/fashion-mnist.sh" "$BUILD" >&2; then
        train_runs threads softmax "fashion-mnist;epochs=$epochs" "$fm/train.hgd" "$fm/test.hgd" \
            --loss softmax --epochs "$epochs" --step 0.01 --decay 0.7 --l2 1e-4
    else
        [ "$QUICK" -eq 0 ] && note threads fallback "Fashion-MNIST could not be built: softmax on gen_dense data instead"
        srows=100000
        [ "$QUICK" -eq 1 ] && srows=20000
        dense_set "$srows" 100 10 2
        train_runs threads softmax "gen_dense;rows=$srows;d=100;classes=10;epochs=$epochs" \
            "$DATA_DIR/$SET.train.hgd" "$DATA_DIR/$SET.test.hgd" --loss softmax --epochs "$epochs" --step 0.05
    fi

    users=20000 items=5000 ratings=2000000 rank=16
    [ "$QUICK" -eq 1 ] && users=2000 items=1000 ratings=100000
    mf="$DATA_DIR/ratings-u$users-i$items-n$ratings-r$rank"
    if [ ! -s "$mf.hgr" ]; then
        "$BUILD/tools/gen_ratings" -u "$users" -i "$items" -n "$ratings" -k "$rank" -s 1 -q -o "$mf.hgr"
    fi
    train_runs threads mf "users=$users;items=$items;ratings=$ratings;rank=$rank;epochs=$epochs" \
        "$mf.hgr" "" --model mf --rank "$rank" --epochs "$epochs" --holdout 0.1
}
