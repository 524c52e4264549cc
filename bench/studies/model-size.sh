# model-size.sh: large models at memory speed: non-zeros/s against the model's size (2^16 to 2^26 features) on 1 and more threads, against the parallel limit and the memory limit of the same accesses, measured in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# gen_sparse data (power-law feature frequencies, 40 non-zeros a row) with
# 2^16 to 2^26 features, trained with train's defaults (the normalized
# update, logistic loss, 3 epochs; every row every epoch, as train_runs
# runs without a test set) from a .hgd in the page cache. For each
# model size, in the same rounds:
#   hogtrain      the runs on each thread count of --threads
#   independent   as many pinned one-thread runs at once as threads: the
#                 parallel limit (train_runs' COPIES)
#   memory limit  bench_model_mem on the same .hgd: the same random
#                 read-and-update of each non-zero's weight, scale and L2
#                 scale (3 words a feature, packed in 16 bytes), over a
#                 model of the same features, prefetched at its best
#                 distance and pace (burst or spread), on huge pages, on each thread count; into
#                 limits.csv as model_mem_<features>
#   plain         the plain loop (--normalized 0) on one thread, for scale
#   hashed        the same rows with their features hashed into the same
#                 2^b (`convert --hash-bits b`): gen_sparse numbers features
#                 by frequency, so a row's hot features come first; hashed,
#                 as Vowpal Wabbit's text and hashed columns are, they fall
#                 anywhere in the row and across the model. hogtrain's runs,
#                 their parallel limit and their memory limit (bench_model_mem
#                 on the hashed rows, model_mem_<features> hashed), as above
#   round trip    bench_coherence before and after each size's runs: how
#                 long the first two CPUs take to pass a cache line there
#                 and back (limits.csv, core_round_trip_<features>), the
#                 price of each shared line the other core wrote last. On a
#                 virtual machine it changes with where the host puts the
#                 vCPUs, and with it what threads sharing one model reach
#                 against independent runs.
# MODEL_SIZE_BITS="16 22" measures those sizes alone (log2 of the features).
# Vowpal Wabbit is measured when `vw` is on PATH (-b bits, --passes 3 from
# its cache file, same data); else its row is left out, and table.md says so.

# The memory limit of FILE's accesses on each thread count, into limits.csv
# as NAME (bench_model_mem at its best distance and pace); WHAT names the
# rows in its note.
model_mem_limit() {
    "$BUILD/bench/bench_model_mem" "$1" -f 4 -r "$REPS" -t "$THREADS" | grep ',best,' |
        while IFS=, read -r t _f bpf _l huge ahead med lo hi mode; do
            "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name "$2" --threads "$t" \
                --value "$med" --unit nnz/s --file "$1" \
                --note "bench_model_mem -f 4$3: $bpf bytes a feature, huge pages $huge, prefetch $ahead rows ahead ($mode); median (min $lo, max $hi)"
        done
}

# The cache-line round trip between the first two CPUs, into limits.csv as
# NAME (threads 2); nothing where this process has one CPU.
coherence_limit() {
    "$BUILD/bench/bench_coherence" -r "$REPS" 2>/dev/null | tail -n +2 |
        while IFS=, read -r a b rounds med lo hi; do
            "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name "$1" --threads 2 \
                --value "$med" --unit ns \
                --note "bench_coherence: CPUs $a and $b, $rounds round trips a pass, median (min $lo, max $hi)$2"
        done
}

study_model_size() {
    rows=1000000 epochs=3 bits=${MODEL_SIZE_BITS:-"16 18 20 22 24 26"}
    [ "$QUICK" -eq 1 ] && rows=100000 bits=${MODEL_SIZE_BITS:-"16 20 22"}
    note model-size command "bench/run model-size --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    vw=0
    if command -v vw >/dev/null 2>&1; then
        vw=1
    else
        note model-size skipped "vw not found on PATH (Vowpal Wabbit is not packaged in Debian 12; build it from its source and put it on PATH to add its row)"
    fi
    _saved_plain=$PLAIN
    for b in $bits; do
        d=$((1 << b))
        sparse_set "$rows" "$d" 40 11
        train=$DATA_DIR/$SET.train.hgd
        cat "$train" >/dev/null
        model_mem_limit "$train" "model_mem_2^$b" ""
        coherence_limit "core_round_trip_2^$b" ", before the runs"
        PLAIN=
        COPIES=1 train_runs model-size "d=2^$b" "rows=$rows;d=$d;k=40;epochs=$epochs;default update" \
            "$train" "" --loss logistic --epochs "$epochs"
        hashed=$DATA_DIR/$SET.hashed.hgd
        [ -s "$hashed" ] || "$HOGTRAIN" convert "$DATA_DIR/$SET.train.svm" -o "$hashed" --hash-bits "$b" -q
        cat "$hashed" >/dev/null
        model_mem_limit "$hashed" "model_mem_2^$b hashed" " on the hashed rows"
        COPIES=1 train_runs model-size "d=2^$b hashed" "rows=$rows;d=$d;k=40;epochs=$epochs;default update;hashed" \
            "$hashed" "" --loss logistic --epochs "$epochs"
        coherence_limit "core_round_trip_2^$b" ", after the runs"
        PLAIN=$_saved_plain
        _rep=1
        while [ "$_rep" -le "$REPS" ]; do
            measure model-size "d=2^$b" "hogtrain plain" "rows=$rows;d=$d;k=40;epochs=$epochs;--normalized 0" 1 "$_rep" \
                --data "$train" --report "$OUT/tmp/report.json" -- \
                "$HOGTRAIN" train "$train" -o "$OUT/tmp/model.hog" --threads 1 --report "$OUT/tmp/report.json" \
                --loss logistic --epochs "$epochs" --holdout 0 --normalized 0
            _rep=$((_rep + 1))
        done
        if [ "$vw" -eq 1 ]; then
            _txt=$DATA_DIR/$SET.train.svm
            [ -s "$DATA_DIR/$SET.train.vw" ] || "$PY" "$ROOT/bench/harness.py" tovw "$_txt" "$DATA_DIR/$SET.train.vw"
            rm -f "$OUT/tmp/vw.cache"
            vw -d "$DATA_DIR/$SET.train.vw" -b "$b" --cache_file "$OUT/tmp/vw.cache" --passes 1 --quiet \
                --holdout_off -f "$OUT/tmp/vw.model" >/dev/null 2>&1
            nnz=$(awk '{ n += NF - 1 } END { print n * '"$epochs"' }' "$_txt")
            _rep=1
            while [ "$_rep" -le "$REPS" ]; do
                _t0=$(date +%s.%N)
                vw --cache_file "$OUT/tmp/vw.cache" -b "$b" --passes "$epochs" --loss_function logistic --quiet \
                    --holdout_off -f "$OUT/tmp/vw.model" >/dev/null 2>&1
                _t1=$(date +%s.%N)
                "$PY" "$ROOT/bench/harness.py" limit --out "$OUT" --name "vw_2^$b" --threads 1 \
                    --value "$(echo "$nnz $_t0 $_t1" | awk '{ printf "%.0f", $1 / ($3 - $2) }')" --unit nnz/s \
                    --file "$train" --note "vw -b $b --passes $epochs from its cache, rep $_rep"
                _rep=$((_rep + 1))
            done
        fi
    done
}
