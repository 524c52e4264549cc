# sparsity.sh: HOGWILD!'s premise: speedup as rows get denser and features fewer (more write conflicts), from RCV1-like sparse to dense.
# SPDX-License-Identifier: BSD-2-Clause
#
# The same logistic regression on data sets from gen_sparse (power-law
# feature frequencies) with fewer features and more non-zeros per row, then
# gen_dense (every feature in every row). The ratio of non-zeros per row to
# features is the chance that two rows write the same weight.

study_sparsity() {
    rows=200000 epochs=3
    [ "$QUICK" -eq 1 ] && rows=20000
    note sparsity command "bench/run sparsity --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    for shape in "1048576 75" "65536 75" "4096 75" "1024 200"; do
        set -- $shape
        sparse_set "$rows" "$1" "$2" 3
        train_runs sparsity "sparse d=$1 nnz=$2" "rows=$rows;d=$1;k=$2;epochs=$epochs" \
            "$DATA_DIR/$SET.train.hgd" "$DATA_DIR/$SET.test.hgd" --loss logistic --epochs "$epochs"
    done
    for d in 256 32; do
        dense_set "$rows" "$d" 2 3
        train_runs sparsity "dense d=$d nnz=$d" "rows=$rows;d=$d;dense;epochs=$epochs" \
            "$DATA_DIR/$SET.train.hgd" "$DATA_DIR/$SET.test.hgd" --loss logistic --epochs "$epochs" --step 0.02
    done
}
