# nodes.sh: hogtrain as several ranks on this machine (Dogwild!): epochs and time to the one-node test loss on 1, 2 and 4 ranks, a run with drops and a killed rank, bytes and link CPU against --link-rate.
# SPDX-License-Identifier: BSD-2-Clause
#
# Data: gen_sparse shaped like RCV1 (47,000 features, 75 non-zeros per row,
# power-law feature frequencies), 500,000 training rows (--quick 50,000)
# and a fifth as many held out. Logistic regression; every rank is a
# `hogtrain train` process with one worker thread (--threads 1 --bind 0),
# rank 0 evaluates the test set after each of its epochs, and a rank's
# epoch is one pass over its share (1/N) of the rows. An unrecorded
# one-node run of E = 10 epochs first sets the target: its final test
# logloss L1 (one thread: the same in every run). Then, REPS times
# (--reps, else 3; --quick 1), interleaved:
#   one node     E epochs: time to L1 on one node
#   async N      2 and 4 ranks, --sync async, 2E epochs: the first of rank
#   average N    0's epochs at or below L1 against E (target: <= 1.2x),
#                and its training time up to it
#   faults       4 ranks as async 4 with --link-drop 0.1 --link-timeout 2,
#                rank 2 killed (SIGKILL) when its log shows epoch E of 2E:
#                exit 0 with 3 live ranks, and a final test logloss within
#                5% of the async 4-rank run's of the same repetition
#   independent  N = 1, 2, 4 one-node runs of E epochs at once: the
#                machine's parallel limit, N x one's training time alone
#                over the slowest's at once (limits.csv); the time-to-target
#                speedup over one node is quoted against it (efficiency)
#   rate R       2 and 4 ranks, E epochs, --link-rate 1M, 8M, 64M (the
#                default): bytes per update and the link thread's CPU share,
#                from the report, and what the rate does to the loss
# As root with iproute2 each rank runs in a network namespace of its own,
# joined to a bridge (in one more namespace) by a veth pair; otherwise on
# loopback. table.md says which.

# nodes_net_up: sets NODES_NET (netns or loopback), NODES_NS (rank R's
# namespace is NODES_NS followed by R) and NODES_HOST (rank 0's address).
nodes_net_up() {
    NODES_NET=loopback NODES_NS='' NODES_HOST=127.0.0.1 NODES_NSLIST=''
    [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null 2>&1 || return 0
    _p=hogn$$
    ip netns add "${_p}b" 2>/dev/null || return 0
    NODES_NSLIST="${_p}b"
    if ! ip -n "${_p}b" link add hbr type bridge 2>/dev/null || ! ip -n "${_p}b" link set hbr up; then
        nodes_net_down
        return 0
    fi
    for _r in 0 1 2 3; do
        ip netns add "${_p}r$_r" 2>/dev/null || { nodes_net_down; return 0; }
        NODES_NSLIST="$NODES_NSLIST ${_p}r$_r"
        if ! { ip -n "${_p}b" link add "hb$_r" type veth peer name "hv$_r" netns "${_p}r$_r" &&
            ip -n "${_p}b" link set "hb$_r" master hbr up &&
            ip -n "${_p}r$_r" addr add "10.79.0.$((_r + 1))/24" dev "hv$_r" &&
            ip -n "${_p}r$_r" link set "hv$_r" up && ip -n "${_p}r$_r" link set lo up; } 2>/dev/null; then
            nodes_net_down
            return 0
        fi
    done
    NODES_NET=netns NODES_NS=${_p}r NODES_HOST=10.79.0.1
}

nodes_net_down() {
    for _ns in $NODES_NSLIST; do
        ip netns del "$_ns" 2>/dev/null || true
    done
    NODES_NSLIST=
}

# nodes_run CASE RANKS REP [harness_nodes.py run options] -- [train options]:
# one run of RANKS ranks (1: one node, no link) on its own port.
nodes_run() {
    _case=$1 _n=$2 _rep=$3
    shift 3
    NODES_PORT=$((NODES_PORT + 1))
    _ns=
    [ "$_n" -gt 1 ] && [ -n "$NODES_NS" ] && _ns="--netns $NODES_NS"
    # shellcheck disable=SC2086
    "$PY" "$ROOT/bench/harness_nodes.py" run --out "$OUT" --commit "$COMMIT" --case "$_case" \
        --params "rows=$NODES_ROWS" --rep "$_rep" \
        --hogtrain "$HOGTRAIN" --train "$NODES_TRAIN" --test "$NODES_TEST" --secret "$NODES_KEY" \
        --nodes "$_n" --port "$NODES_PORT" --host "$NODES_HOST" $_ns --network "$NODES_NET" \
        --target "$NODES_TARGET" --ref-epochs "$NODES_EPOCHS" "$@" --threads 1 --bind 0
}

study_nodes() {
    NODES_ROWS=500000 NODES_EPOCHS=10 reps=${REPS_ASKED:-3}
    [ "$QUICK" -eq 1 ] && NODES_ROWS=50000 reps=${REPS_ASKED:-1}
    e=$NODES_EPOCHS e2=$((2 * NODES_EPOCHS))
    note nodes command "bench/run nodes --reps $reps$([ "$QUICK" -eq 1 ] && echo ' --quick')"
    sparse_set "$NODES_ROWS" 47000 75 17
    NODES_TRAIN="$DATA_DIR/$SET.train.hgd" NODES_TEST="$DATA_DIR/$SET.test.hgd"
    NODES_KEY="$OUT/tmp/nodes.key"
    "$HOGTRAIN" keygen "$NODES_KEY" >/dev/null
    # A port per run, from one the kernel would not hand out soon.
    NODES_PORT=$((20000 + $$ % 20000))

    "$HOGTRAIN" train "$NODES_TRAIN" --test "$NODES_TEST" --threads 1 --bind 0 --epochs "$e" \
        -o "$OUT/tmp/model.hog" --report "$OUT/tmp/ref.json" -q
    NODES_TARGET=$("$PY" -c 'import json, sys; print("%.10g" % json.load(open(sys.argv[1]))["test"]["logloss"])' "$OUT/tmp/ref.json")
    note nodes target "test logloss $NODES_TARGET: one node, one thread, after $e epochs"

    nodes_net_up
    trap nodes_net_down EXIT
    trap 'nodes_net_down; exit 130' INT TERM
    if [ "$NODES_NET" = netns ]; then
        note nodes network "each rank in a network namespace of its own, joined to a bridge by a veth pair (10.79.0.0/24)"
    else
        note nodes network "loopback (network namespaces need root and iproute2)"
    fi

    rep=1
    while [ "$rep" -le "$reps" ]; do
        nodes_run "one node" 1 "$rep" -- --epochs "$e"
        for sync in async average; do
            for n in 2 4; do
                nodes_run "$sync" "$n" "$rep" -- --epochs "$e2" --sync "$sync"
            done
        done
        nodes_run faults 4 "$rep" --kill-rank 2 --kill-epoch "$e" -- --epochs "$e2" --sync async \
            --link-drop 0.1 --link-timeout 2
        for n in 1 2 4; do
            nodes_run independent 1 "$rep" --independent "$n" -- --epochs "$e"
        done
        for rate in 1M 8M 64M; do
            for n in 2 4; do
                nodes_run "rate $rate" "$n" "$rep" --link-rate "$((${rate%M} * 1048576))" -- --epochs "$e" \
                    --sync async --link-rate "$rate"
            done
        done
        rep=$((rep + 1))
    done
    nodes_net_down
    trap - EXIT INT TERM
    "$PY" "$ROOT/bench/harness_nodes.py" limits --out "$OUT"
    "$PY" "$ROOT/bench/harness_nodes.py" summary --out "$OUT"
}
