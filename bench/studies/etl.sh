# etl.sh: parse and convert rates per text format (libsvm, CSV, VW) against the file read rate and memory bandwidth.
# SPDX-License-Identifier: BSD-2-Clause
#
# parse FORMAT (memory)  bench_parse: hog_parse_chunk on text generated in
#                        memory, 1..N threads (libsvm and CSV; the median of
#                        REPS passes, one row per thread count)
# convert FORMAT         hogtrain convert FILE -o FILE.hgd --parse-threads T,
#                        warm page cache, the whole command timed (the .hgd
#                        written and fsync'ed), rate = input bytes / wall time
# scan hgd (warm)        bench_scan: every block of the converted libsvm set
#                        read from the mapping once it is in memory, 1..N
#                        threads, against a heap read of the same size
# The inputs: gen_sparse libsvm (75 non-zeros per row), gen_dense CSV (100
# columns) and the libsvm set as VW text. Each file's warm and cold read
# rates are in limits.csv.

study_etl() {
    rows=400000 drows=100000 mb=256
    [ "$QUICK" -eq 1 ] && rows=40000 drows=10000 mb=32
    note etl command "bench/run etl --reps $REPS --threads \"$THREADS\"$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    maxt=$(echo "$THREADS" | tr ' ' '\n' | grep . | sort -n | tail -n 1)
    "$PY" "$ROOT/bench/harness.py" parse-bench --out "$OUT" --commit "$COMMIT" \
        --bench "$BUILD/bench/bench_parse" --mb "$mb" --reps "$REPS" --threads "$maxt"
    sparse_set "$rows" 1048576 75 7
    svm="$DATA_DIR/$SET.train.svm"
    dense_set "$drows" 100 2 7
    csv="$DATA_DIR/$SET.train.csv"
    vw="$DATA_DIR/${svm##*/}"
    vw="${vw%.svm}.vw"
    [ -s "$vw" ] && [ "$vw" -nt "$svm" ] || "$PY" "$ROOT/bench/harness.py" tovw "$svm" "$vw"
    for f in "$svm" "$csv" "$vw"; do
        read_limit "$f"
    done
    rep=0
    while [ "$rep" -le "$REPS" ]; do
        for f in "$svm:libsvm" "$csv:csv" "$vw:vw"; do
            file=${f%:*} fmt=${f##*:}
            for t in $THREADS; do
                w=
                [ "$rep" -eq 0 ] && w=--warmup
                cat "$file" >/dev/null
                measure etl "convert $fmt" hogtrain "format=$fmt" "$t" "$rep" --data "$file" \
                    --bytes "$(file_bytes "$file")" $w -- \
                    "$HOGTRAIN" convert "$file" -o "$OUT/tmp/etl.hgd" --format "$fmt" --parse-threads "$t" -q
            done
        done
        rep=$((rep + 1))
    done
    "$HOGTRAIN" convert "$svm" -o "$OUT/tmp/etl.hgd" -q
    "$PY" "$ROOT/bench/harness.py" scan-bench --out "$OUT" --commit "$COMMIT" \
        --bench "$BUILD/bench/bench_scan" --data "$OUT/tmp/etl.hgd" --reps "$REPS" --threads "$maxt"
    rm -f "$OUT/tmp/etl.hgd"
}
