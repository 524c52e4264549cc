#!/bin/sh
# bench-ffm.sh: the field-aware factorisation machines alone, interleaved: hogtrain --model ffm against LIBFFM and xLearn's FFM on the fm study's click data, their best test logloss and hogtrain's time to the better peer's best, as a ratio in each round.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-ffm.sh BUILD_DIR [ROUNDS (default 2)] [THREADS (default 1)]
#
# The FFM rows of `bench/run fm` without the study's other tools, for a
# quick answer to "does the FFM beat its peers here, and how much sooner":
# every round runs hogtrain (its defaults, --factors 4, 8 epochs, the test
# set after each), LIBFFM (k 4, its defaults) and xLearn (-s 2, k 4, early
# stopping off) one after another on the same files, each on THREADS
# threads. Per round: the target is the better of the peers' best test
# logloss; hogtrain's time to it is the training seconds up to the first
# epoch at or below it, against the faster peer's training seconds to its
# own best. Prints each round and the medians. The data and peers are the
# fm study's (bench/run fm makes the data in BENCH_DIR, default
# /tmp/hogtrain-bench, and docs/benchmarks.md says how to build the peers
# from their public sources into BENCH_DIR/peers); a missing peer is left
# out, saying so.
set -eu
build=${1:?usage: bench-ffm.sh BUILD_DIR [ROUNDS] [THREADS]}
rounds=${2:-2}
threads=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
data=${BENCH_DIR:-/tmp/hogtrain-bench}
py=/usr/bin/python3
tr=$data/click-n1000000.train te=$data/click-n1000000.test
for f in "$tr.ffm" "$te.ffm" "$tr.ffm.hgd" "$te.ffm.hgd"; do
    [ -s "$f" ] || { echo "bench-ffm.sh: $f is missing: run bench/run fm once to make the data" >&2; exit 1; }
done
libffm=$(command -v ffm-train || true)
[ -n "$libffm" ] || [ ! -x "$data/peers/libffm/ffm-train" ] || libffm=$data/peers/libffm/ffm-train
xlearn=$(command -v xlearn_train || true)
[ -n "$xlearn" ] || [ ! -x "$data/peers/xlearn/build/xlearn_train" ] || xlearn=$data/peers/xlearn/build/xlearn_train
[ -n "$libffm" ] || echo "# LIBFFM not found: its rows are left out"
[ -n "$xlearn" ] || echo "# xLearn not found: its rows are left out"
out=$(mktemp -d /tmp/bench-ffm.XXXXXX)
trap 'rm -rf "$out"' EXIT
export USER="${USER:-root}"
r=1
while [ "$r" -le "$rounds" ]; do
    "$build/hogtrain" train "$tr.ffm.hgd" --test "$te.ffm.hgd" --model ffm --factors 4 --epochs 8 \
        --threads "$threads" -o "$out/m.hog" --report "$out/h$r.json" -q
    [ -z "$libffm" ] || $py "$here/harness.py" libffm --bin "$libffm" --train "$tr.ffm" --test "$te.ffm" --k 4 \
        --epochs 8 --threads "$threads" --report "$out/l$r.json" >/dev/null
    [ -z "$xlearn" ] || $py "$here/harness.py" xlearn --bin "$xlearn" --model ffm --train "$tr.ffm" \
        --test "$te.ffm" --k 4 --epochs 8 --threads "$threads" --report "$out/x$r.json" >/dev/null
    r=$((r + 1))
done
$py - "$out" "$rounds" "$threads" <<'EOF'
import json, os, statistics, sys
out, rounds, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def curve(path, hog):
    if not os.path.exists(path):
        return None
    r = json.load(open(path))
    if hog:  # cumulative training seconds after each epoch, and its test loss
        t, c = 0.0, []
        for e, (s, l) in enumerate(zip(r["epoch_seconds"], r["epoch_test_loss"]), 1):
            t += s
            c.append((e, t, l))
        return c
    return [tuple(x) for x in r["curve"]]

def best(c):
    return min(c, key=lambda x: x[2])

rows, ratios, hbest, target_l = [], [], [], []
for r in range(1, rounds + 1):
    h = curve(f"{out}/h{r}.json", True)
    peers = {n: c for n, c in (("LIBFFM", curve(f"{out}/l{r}.json", False)),
                               ("xLearn", curve(f"{out}/x{r}.json", False))) if c}
    hb = best(h)
    hbest.append(hb[2])
    line = f"round {r}: hogtrain best {hb[2]:.4f} (epoch {hb[0]}, {hb[1]:.1f} s)"
    for n, c in peers.items():
        b = best(c)
        line += f"; {n} best {b[2]:.4f} (epoch {b[0]}, {b[1]:.1f} s)"
    if peers:
        target = min(best(c)[2] for c in peers.values())
        faster = min(best(c)[1] for c in peers.values())  # the faster peer's seconds to its own best
        reach = next((s for e, s, l in h if l <= target), None)
        target_l.append(target)
        if reach is None:
            line += f"; target {target:.4f} not reached"
        else:
            ratios.append(reach / faster)
            line += f"; target {target:.4f} reached in {reach:.1f} s, {reach / faster:.2f} of the faster peer's time to its best"
    print(line)
print(f"median over {rounds} rounds on {threads} thread(s): hogtrain best {statistics.median(hbest):.4f}" +
      (f", target {statistics.median(target_l):.4f}" if target_l else "") +
      (f", time to target / faster peer's time {statistics.median(ratios):.2f}" if ratios else
       (", target not reached" if target_l else "")))
EOF
