# size.sh: throughput as the data set grows from fitting in cache to larger than the memory limit: in memory, out of core from the page cache, out of core cold.
# SPDX-License-Identifier: BSD-2-Clause
#
# Logistic regression on gen_sparse data (2^20 features, 75 non-zeros per
# row, about 608 bytes a row in .hgd) on the largest thread count. Cases:
#   memory N MiB    the .hgd fits: memory-mapped, warm
#   ooc-warm N MiB  larger than --mem-limit (MEM_LIMIT, --mem-limit of
#                   bench/run), streamed out of core, from the page cache
#   ooc-cold N MiB  the same after dropping the page cache before every run
#                   (root only; skipped, saying so, otherwise)
# Each rate is quoted against memory bandwidth and the file's own read rate
# (limits.csv), with the wall time and, cold, the bytes read from the disk
# against the file's size (the passes over it; the command's own binary and
# libraries, about 40 MB read cold, count too). For 18 GB out of core
# against a cold `cat` of the same file see bench/bench-large.sh; for a run
# inside a memory cgroup, bench/bench-ooc.sh.

study_size() {
    limit=$MEM_LIMIT sizes="4 64 512 1024"
    [ "$QUICK" -eq 1 ] && limit=16777216 sizes="2 32 64"
    note size command "bench/run size --reps $REPS --mem-limit $limit$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    saved=$THREADS
    THREADS=$(echo "$THREADS" | tr ' ' '\n' | grep . | sort -n | tail -n 1)
    for mib in $sizes; do
        rows=$((mib * 1048576 / 608))
        sparse_set "$rows" 1048576 75 5
        data="$DATA_DIR/$SET.train.hgd"
        read_limit "$data"
        bytes=$(file_bytes "$data")
        real=$((bytes >> 20))
        if [ "$bytes" -le "$limit" ]; then
            train_runs size "memory $real MiB" "rows=$rows;epochs=2" "$data" "" --epochs 2
        else
            train_runs size "ooc-warm $real MiB" "rows=$rows;epochs=2;mem-limit=$limit" "$data" "" \
                --epochs 2 --mem-limit "$limit"
            if is_root_cold; then
                BEFORE_RUN=drop_caches
                train_runs size "ooc-cold $real MiB" "rows=$rows;epochs=1;mem-limit=$limit;cold" "$data" "" \
                    --epochs 1 --mem-limit "$limit"
                BEFORE_RUN=
            else
                note size skipped "ooc-cold $real MiB: dropping the page cache needs root"
            fi
        fi
    done
    THREADS=$saved
}
