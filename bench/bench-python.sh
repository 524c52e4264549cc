#!/bin/sh
# bench-python.sh: a Python fit on a SciPy CSR matrix against `hogtrain train` on the same rows, same threads and epochs, runs interleaved: rows per second and their ratio.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-python.sh BUILD_DIR
# Data: BUILD_DIR/tools/gen_sparse, ROWS (default 1,000,000) rows of NNZ
# (75) non-zeros over FEATURES (47,000) features, seed 3, as libsvm text and
# as a .hgd (hogtrain convert) under BENCH_DIR. Python loads the text with
# scikit-learn's load_svmlight_file(dtype=float32): a float32 CSR matrix with
# int32 indices, which the library trains in place. Each repetition runs
# `hogtrain train DATA.hgd` and HogwildClassifier.fit(X, y) with the same
# THREADS (default: every CPU), EPOCHS (10) and seed, in alternating order.
# Both sides time the whole call: the command from its start to its exit
# (opening and checking the .hgd, the scan, the epochs, the training
# metrics, writing the model), the fit from its call to its return (the
# arrays checked and their block checksums, the same scan, epochs and
# metrics). The epochs alone are reported too (the report's train_seconds,
# the estimator's train_seconds_). The medians and the ratio Python /
# command of rows per second go to the last lines (target: at least 0.9).
# Environment: ROWS, FEATURES, NNZ, EPOCHS, THREADS, REPS (default 3),
# BENCH_DIR (default /tmp/hogtrain-bench).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-1000000}
features=${FEATURES:-47000}
nnz=${NNZ:-75}
epochs=${EPOCHS:-10}
threads=${THREADS:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
svm="$bench_dir/python-n$rows-d$features-k$nnz.svm"
hgd="${svm%.svm}.hgd"
[ -s "$svm" ] || "$build/tools/gen_sparse" -n "$rows" -d "$features" -k "$nnz" -s 3 -q -o "$svm"
[ -s "$hgd" ] || "$build/hogtrain" convert "$svm" -o "$hgd" -q

PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root/python" HOGTRAIN_LIB="$build/libhogtrain.so.0" \
"$py" - "$build/hogtrain" "$svm" "$hgd" "$bench_dir" "$epochs" "$threads" "$reps" <<'PY'
import json, statistics, subprocess, sys, time
import numpy as np
from sklearn.datasets import load_svmlight_file
from hogtrain import HogwildClassifier

bin, svm, hgd, out, epochs, threads, reps = sys.argv[1:4] + [sys.argv[4]] + [int(a) for a in sys.argv[5:8]]
t0 = time.perf_counter()
X, y = load_svmlight_file(svm, dtype=np.float32)
print("loaded %s: %d x %d, %d non-zeros, in %.1f s (%s values, %s indices)" % (
    svm, X.shape[0], X.shape[1], X.nnz, time.perf_counter() - t0, X.dtype, X.indices.dtype), file=sys.stderr)
rows = X.shape[0]

def command():
    report = out + "/python-cli.json"
    t = time.perf_counter()
    subprocess.run([bin, "train", hgd, "-o", out + "/python-cli.hog", "--epochs", str(epochs), "--threads",
                    str(threads), "-q", "--report", report], check=True)
    wall = time.perf_counter() - t
    return wall, json.load(open(report))["train_seconds"]

def python():
    est = HogwildClassifier(epochs=epochs, n_jobs=threads)
    t = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t, est.train_seconds_

runs = {"command": [], "python": []}
print("rep,side,wall_seconds,train_seconds,rows_per_s", flush=True)
for rep in range(1, reps + 1):
    for side in (("command", "python") if rep % 2 else ("python", "command")):
        wall, train = (command if side == "command" else python)()
        runs[side].append((wall, train))
        print("%d,%s,%.3f,%.3f,%.0f" % (rep, side, wall, train, rows * epochs / wall), flush=True)

med = {s: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for s, v in runs.items()}
rate = {s: (rows * epochs / w, rows * epochs / t) for s, (w, t) in med.items()}
print()
print("| %d x %d, %d nnz, %d threads, %d epochs | whole call (median) | rows/s | epochs only | rows/s |" % (
    rows, X.shape[1], X.nnz, threads, epochs))
print("|---|---:|---:|---:|---:|")
for s in ("command", "python"):
    print("| %s | %.2f s | %.3g | %.2f s | %.3g |" % (s, med[s][0], rate[s][0], med[s][1], rate[s][1]))
print("python / command: %.3f of the rate on the whole call, %.3f on the epochs alone (target 0.9)" % (
    rate["python"][0] / rate["command"][0], rate["python"][1] / rate["command"][1]))
# Each repetition's pair ran back to back: the median of their ratios is
# the figure the host's drift between repetitions does not move.
pair = [(c[0] / p[0], c[1] / p[1]) for c, p in zip(runs["command"], runs["python"])]
print("paired (each repetition's command over its python, median of %d): %.3f on the whole call, %.3f on the "
      "epochs alone (from %.2f to %.2f)" % (len(pair), statistics.median(r[0] for r in pair),
                                            statistics.median(r[1] for r in pair), min(r[0] for r in pair),
                                            max(r[0] for r in pair)))
PY
