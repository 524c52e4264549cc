#!/bin/sh
# bench-dense.sh: the dense (OpenBLAS mini-batch) kernel against the sparse kernel on Fashion-MNIST softmax: examples/s, their ratio and test accuracy.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-dense.sh BUILD_DIR
#
# Data: Fashion-MNIST as datasets/fashion-mnist.sh builds it (60,000 training
# rows, 10,000 test rows, 784 features, half of them non-zero) in .hgd form.
# Runs: `hogtrain train train.hgd --test test.hgd --loss softmax` with the
# demo's settings (--step 0.01 --decay 0.7 --l2 1e-4, plain updates:
# --normalized 0, which the dense kernel needs), $EPOCHS epochs,
# $THREADS threads, once with --kernel sparse and once with --kernel auto (which
# must choose the dense kernel: the script checks the report), one warm-up
# each, then $REPS repetitions, the two kernels interleaved and their order
# alternated, so that a noisy spell on a shared machine falls on both. Every
# run goes to results/bench-dense-YYYYmmdd-HHMMSS.csv; the summary gives the
# medians of examples/s (training time only) and of test accuracy per kernel,
# the ratio of the medians and the median of the per-repetition ratios, and
# the targets: dense at least 2x sparse, test accuracy at least 0.84.
#
# Environment (all optional):
#   REPS     repetitions per kernel (default 5)
#   EPOCHS   epochs per run (default 10)
#   THREADS  worker threads (default: one per core)
#   BATCH    --batch for the dense run (default: hogtrain's)
#   EXTRA    more options for both kernels' runs, e.g. "--seed 2"
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
if ! build=$(cd "$1" 2>/dev/null && pwd); then
    echo "bench-dense.sh: build folder $1 not found: run make first" >&2
    exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
hogtrain="$build/hogtrain"
if [ ! -x "$hogtrain" ]; then
    echo "bench-dense.sh: $hogtrain not found: run make first" >&2
    exit 1
fi
if ! py=$(command -v python3); then
    echo "bench-dense.sh: python3 is needed to read the JSON reports (apt-get install python3)" >&2
    exit 1
fi

sh "$root/datasets/fashion-mnist.sh" "$build"
data="$root/datasets/fashion-mnist"
reps=${REPS:-5}
epochs=${EPOCHS:-10}
threads=${THREADS:-0}
batch=${BATCH:+--batch $BATCH}
extra=${EXTRA:-}
scratch=$(mktemp -d /tmp/hogtrain-bench-dense.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$root/results"
stamp=$(date +%Y%m%d-%H%M%S)
csv="$root/results/bench-dense-$stamp.csv"
echo "kernel,kernel_used,rep,threads,train_seconds,examples_per_s,test_accuracy,test_logloss" >"$csv"

# run KERNEL REP: one training run on KERNEL (sparse or auto); REP 0 is the warm-up.
run() {
    rm -f "$scratch/report.json"
    opts="--kernel $1"
    [ "$1" = auto ] && opts="$opts $batch"
    # shellcheck disable=SC2086 # options are words
    if ! "$hogtrain" train "$data/train.hgd" --test "$data/test.hgd" -o "$scratch/model.hog" \
        --loss softmax --epochs "$epochs" --step 0.01 --decay 0.7 --l2 1e-4 --normalized 0 --threads "$threads" \
        $opts $extra --report "$scratch/report.json" -q; then
        echo "bench-dense.sh: hogtrain train --kernel $1 failed" >&2
        exit 1
    fi
    [ "$2" -eq 0 ] && return 0
    "$py" - "$scratch/report.json" "$1" "$2" >>"$csv" <<'PY'
import json, sys
path, want, rep = sys.argv[1:4]
with open(path) as f:
    r = json.load(f)
if want == "auto" and r["kernel"] != "dense":
    sys.exit("bench-dense.sh: --kernel auto chose %s on Fashion-MNIST, not dense" % r["kernel"])
print("%s,%s,%s,%d,%.6f,%.1f,%.6f,%.6f" % (want, r["kernel"], rep, r["threads"], r["train_seconds"],
      r["examples_per_s"], r["test"]["accuracy"], r["test"]["logloss"]))
PY
    tail -n 1 "$csv" | awk -F, '{ printf "run %s, %s (%s): %.3g examples/s, test accuracy %.4f\n", $3, $1, $2, $6, $7 }' >&2
}

run sparse 0
run auto 0
rep=1
while [ "$rep" -le "$reps" ]; do
    if [ $((rep % 2)) -eq 1 ]; then
        run sparse "$rep"
        run auto "$rep"
    else
        run auto "$rep"
        run sparse "$rep"
    fi
    rep=$((rep + 1))
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo
echo "Fashion-MNIST softmax, $epochs epochs, --step 0.01 --decay 0.7 --l2 1e-4${batch:+ $batch}${extra:+ $extra},"
echo "threads: ${THREADS:-one per core}; medians of $reps interleaved runs after one warm-up each."
echo "Machine: ${cpu:-unknown CPU}, $(nproc) CPUs. Raw runs: results/bench-dense-$stamp.csv"
echo
"$py" - "$csv" <<'PY'
import csv, statistics, sys
runs = {}
with open(sys.argv[1]) as f:
    for row in csv.DictReader(f):
        runs.setdefault(row["kernel"], {})[row["rep"]] = row
sp, dn = runs["sparse"], runs["auto"]
def med(rs, key):
    return statistics.median(float(r[key]) for r in rs.values())
print("| kernel | median examples/s | min | max | median test accuracy | min test accuracy |")
print("|---|---:|---:|---:|---:|---:|")
for name, rs in (("sparse", sp), ("auto (dense)", dn)):
    ex = [float(r["examples_per_s"]) for r in rs.values()]
    acc = [float(r["test_accuracy"]) for r in rs.values()]
    print("| %s | %.0f | %.0f | %.0f | %.4f | %.4f |" % (name, statistics.median(ex), min(ex), max(ex),
          statistics.median(acc), min(acc)))
ratio = med(dn, "examples_per_s") / med(sp, "examples_per_s")
paired = statistics.median(float(dn[k]["examples_per_s"]) / float(sp[k]["examples_per_s"]) for k in dn if k in sp)
acc = med(dn, "test_accuracy")
print()
print("dense / sparse examples/s: %.2fx (ratio of medians), %.2fx (median of paired ratios); target >= 2x: %s"
      % (ratio, paired, "met" if ratio >= 2 else "MISSED"))
print("dense median test accuracy: %.4f; target >= 0.84: %s" % (acc, "met" if acc >= 0.84 else "MISSED"))
PY
