#!/bin/sh
# bench-ffm-threads.sh: a field-aware machine on two threads against the parallel limit, interleaved between builds: the time to one thread's test logloss after 3 epochs, the epochs it took, and the efficiency.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-ffm-threads.sh ROUNDS BUILD_DIR [BUILD_DIR ...]
#
# Each round runs, for every build in turn: two one-thread runs at once,
# pinned to CPUs 0 and 1 (3 epochs with the test set after each: the
# parallel limit, and the target, their test logloss after the third),
# then that build's two-thread run (5 epochs). The two-thread run's time
# to the target is its training seconds up to the epoch that reaches it,
# linear within that epoch; the efficiency is the time the limit allows
# (half a pinned run's 3 epochs) over it. Prints one line a build a round
# and each build's medians; the epochs to the target and the seconds an
# epoch separate what the run converged from how fast it ran. The data is
# the fm study's (bench/run fm makes it in BENCH_DIR, default
# /tmp/hogtrain-bench): gen_click, 1,000,000 training rows, 20 fields, k 4.
# Each round also measures the cache-line round trip between CPUs 0 and 1
# before its runs (bench_coherence, from the first build that has it:
# make bench-tools): where the host put the vCPUs, which moves what two
# threads sharing one model reach and not what two independent runs do.
set -eu
rounds=${1:?usage: bench-ffm-threads.sh ROUNDS BUILD_DIR [BUILD_DIR ...]}
shift
[ "$#" -ge 1 ] || { echo "usage: bench-ffm-threads.sh ROUNDS BUILD_DIR [BUILD_DIR ...]" >&2; exit 2; }
data=${BENCH_DIR:-/tmp/hogtrain-bench}
tr=$data/click-n1000000.train.ffm.hgd te=$data/click-n1000000.test.ffm.hgd
for f in "$tr" "$te"; do
    [ -s "$f" ] || { echo "bench-ffm-threads.sh: $f is missing: run bench/run fm once to make the data" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "bench-ffm-threads.sh: needs 2 CPUs" >&2; exit 1; }
out=$(mktemp -d /tmp/bench-ffm-threads.XXXXXX)
trap 'rm -rf "$out"' EXIT
r=1
while [ "$r" -le "$rounds" ]; do
    coh=
    for build in "$@"; do [ -x "$build/bench/bench_coherence" ] && coh=$build/bench/bench_coherence && break; done
    if [ -n "$coh" ]; then "$coh" -n 20000 -r 3 | tail -n 1 | cut -d, -f4 > "$out/rt-$r"; else echo nan > "$out/rt-$r"; fi
    b=0
    for build in "$@"; do
        taskset -c 0 "$build/hogtrain" train "$tr" --test "$te" --model ffm --factors 4 --epochs 3 --threads 1 \
            -o "$out/p0.hog" --report "$out/p0-$r-$b.json" -q &
        taskset -c 1 "$build/hogtrain" train "$tr" --test "$te" --model ffm --factors 4 --epochs 3 --threads 1 \
            -o "$out/p1.hog" --report "$out/p1-$r-$b.json" -q &
        wait
        "$build/hogtrain" train "$tr" --test "$te" --model ffm --factors 4 --epochs 5 --threads 2 \
            -o "$out/t2.hog" --report "$out/t2-$r-$b.json" -q
        b=$((b + 1))
    done
    r=$((r + 1))
done
/usr/bin/python3 - "$out" "$rounds" "$@" <<'PY'
import json, statistics, sys
out, rounds, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {b: [] for b in range(len(builds))}
for r in range(1, rounds + 1):
    rt = float(open(f"{out}/rt-{r}").read() or "nan")
    for b, build in enumerate(builds):
        p = [json.load(open(f"{out}/p{i}-{r}-{b}.json")) for i in (0, 1)]
        target = p[0]["epoch_test_loss"][2]
        limit = sum(sum(x["epoch_seconds"][:3]) for x in p) / 2 / 2  # a pinned run's 3 epochs, halved
        t = json.load(open(f"{out}/t2-{r}-{b}.json"))
        done, prev, reach, epochs = 0.0, None, None, None
        for e, (s, l) in enumerate(zip(t["epoch_seconds"], t["epoch_test_loss"])):
            if l <= target:
                part = 1.0 if prev is None else (prev - target) / (prev - l)
                reach, epochs = done + s * part, e + part
                break
            done, prev = done + s, l
        per_epoch = limit * 2 / 3 / 2 / (sum(t["epoch_seconds"][:3]) / 3)
        eff = limit / reach if reach else 0.0
        rows[b].append((eff, epochs or float("nan"), per_epoch))
        print(f"round {r} {build}: round trip {rt:.0f} ns, target {target:.4f}, pinned {limit * 2 / 3:.2f} s an epoch, "
              f"two threads {sum(t['epoch_seconds'][:3]) / 3:.2f} s an epoch ({per_epoch:.3f} of the limit), "
              f"{'%.2f epochs, %.2f s' % (epochs, reach) if reach else 'not reached in 5 epochs'}, efficiency {eff:.3f}")
for b, build in enumerate(builds):
    e = [x[0] for x in rows[b]]
    print(f"{build}: efficiency median {statistics.median(e):.3f} ({min(e):.3f} to {max(e):.3f}); "
          f"epochs to target median {statistics.median(x[1] for x in rows[b]):.2f}; "
          f"epochs at {statistics.median(x[2] for x in rows[b]):.3f} of the limit (median)")
PY
