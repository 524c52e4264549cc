#!/bin/sh
# bench-defaults.sh: hogtrain with no flags but the loss against LIBLINEAR and scikit-learn on data as users have it (raw features, fixed splits): test accuracy, RMSE for regression.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-defaults.sh BUILD_DIR [accuracy|speed]
#
# accuracy (the default):
# The data, made once under $BENCH_DIR/defaults (the same rows on every
# machine):
#   scikit-learn's bundled sets, features unscaled, 75/25 split
#     (datasets/sklearn-sets.py, /usr/bin/python3 with python3-sklearn):
#     breast_cancer, digits, iris, wine, diabetes (as bundled: features
#     scaled, target raw) and diabetes_raw (features unscaled);
#   heart_scale, LIBLINEAR's sample, every 4th row to test (datasets/heart_scale.sh);
#   Fashion-MNIST (Debian's dataset-fashion-mnist, pixels / 255): the first
#     FMNIST_ROWS training images (default 10000, to keep LIBLINEAR and
#     scikit-learn to seconds; 60000 is the whole set) and all 10000 test ones;
#   rcv1_shape: gen_sparse's RCV1 shape (47,000 features, 75 non-zeros a
#     row, seed 1), the first RCV1_ROWS rows (default 100000) to train and
#     the next quarter as many to test.
# A set whose source is missing is left out, and the table says so.
# The tools, each on the same files:
#   LIBLINEAR   liblinear-train -s 0 -B 1 (logistic regression, C = 1, an
#               intercept; one-against-rest for several classes), or for
#               regression -s 11 -p 0 -B 1 (L2-regularised least squares,
#               C = 1: ridge regression), then liblinear-predict;
#   sklearn     LogisticRegression() (C = 1, L-BFGS, multinomial), or for
#               regression LinearRegression(), with scikit-learn's defaults;
#   sklearn SGD SGDClassifier(loss="log_loss", random_state=0), or
#               SGDRegressor(random_state=0), with their defaults;
#   hogtrain    hogtrain train with no flag but --loss (softmax for several
#               classes, squared for regression) and $HOGTRAIN_ARGS (none
#               by default: set it to compare other settings), on every core;
#               and the same with the earlier defaults (--normalized 0 --step
#               0.1 --decay 0.9 --epochs 10), for comparison.
# Prints a markdown table of test accuracy (RMSE for regression) with, for
# hogtrain, its gap to LIBLINEAR: the aim is at most 1 point of accuracy
# below, or an RMSE at most 5% above. Environment: BENCH_DIR (default
# /tmp/hogtrain-bench), HOGTRAIN (the binary, default BUILD_DIR/hogtrain),
# HOGTRAIN_ARGS, FMNIST_ROWS, RCV1_ROWS. A few minutes on 2 cores.
#
# speed: what the defaults cost. On bench-rcv1.sh's data (RCV1's shape,
# 800,000 rows, made once under $BENCH_DIR), `hogtrain train --epochs
# $EPOCHS` (default 3) with the defaults and with the plain loop at the
# settings of earlier versions (--normalized 0 --step 0.1 --decay 0.9), on
# 1 and 2 threads (or $THREADS): one unmeasured warm-up of each, then REPS
# (default 5) repetitions, the thread counts and the two settings
# interleaved and their order alternated. Prints the medians (min / max) of
# non-zeros trained per second, the ratio of the medians and the median of
# the paired ratios (default over plain, same repetition), and what a whole
# run costs: the defaults' 20 epochs against the earlier 10.
set -eu
mode=accuracy
if [ $# -eq 2 ]; then
    mode=$2
    set -- "$1"
fi
case $mode in
    accuracy|speed) ;;
    *) echo "usage: $0 BUILD_DIR [accuracy|speed]" >&2; exit 2 ;;
esac
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"

if [ "$mode" = speed ]; then
    bench_thread_counts "$0"
    reps=${REPS:-5}
    epochs=${EPOCHS:-3}
    bin=${HOGTRAIN:-$build/hogtrain}
    data="$bench_dir/rcv1-shape.hgd"
    if [ ! -s "$data" ]; then
        "$build/tools/gen_sparse" -n 800000 -d 47000 -k 75 -s 1 -q -o "$bench_dir/rcv1-shape.svm"
        "$build/hogtrain" convert "$bench_dir/rcv1-shape.svm" -o "$data" -q
        rm -f "$bench_dir/rcv1-shape.svm"
    fi
    plain="--normalized 0 --step 0.1 --decay 0.9"
    # speed_run THREADS SETTING: one run; prints its non-zeros per second.
    speed_run() {
        opts=
        [ "$2" = plain ] && opts=$plain
        # shellcheck disable=SC2086 # a list of options
        "$bin" train "$data" -o "$bench_dir/defaults-speed.hog" --threads "$1" --epochs "$epochs" -q $opts \
            --report "$bench_dir/defaults-speed.json"
        "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["nnz_per_s"])' "$bench_dir/defaults-speed.json"
    }
    for t in $counts; do
        speed_run "$t" plain >/dev/null
        speed_run "$t" default >/dev/null
    done
    csv="$bench_dir/defaults-speed.csv"
    echo "rep,threads,setting,nnz_per_s" >"$csv"
    rep=1
    while [ "$rep" -le "$reps" ]; do
        tord=$counts settings="plain default"
        [ $((rep % 2)) -eq 0 ] && tord=$(echo "$counts" | tr ' ' '\n' | sort -rn | tr '\n' ' ') settings="default plain"
        for t in $tord; do
            for s in $settings; do
                r=$(speed_run "$t" "$s")
                echo "$rep,$t,$s,$r" >>"$csv"
                echo "rep $rep: $t threads, $s: $r non-zeros/s" >&2
            done
        done
        rep=$((rep + 1))
    done
    "$py" - "$csv" "$bin" "$epochs" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(int(r["threads"]), {}).setdefault(r["setting"], {})[r["rep"]] = float(r["nnz_per_s"])
print("%s, RCV1-shaped data, %s epochs a run, %d repetitions" % (sys.argv[2], sys.argv[3], len(rows) // (2 * len(by))))
print("| threads | plain loop (--normalized 0 --step 0.1 --decay 0.9), non-zeros/s | defaults, non-zeros/s | "
      "defaults / plain (ratio of medians) | (median of paired ratios) | a whole run: 20 epochs / 10 |")
print("|---:|---:|---:|---:|---:|---:|")
for t in sorted(by):
    p, d = by[t]["plain"], by[t]["default"]
    mp, md = statistics.median(p.values()), statistics.median(d.values())
    paired = statistics.median(d[k] / p[k] for k in d if k in p)
    print("| %d | %.1fM (%.1fM / %.1fM) | %.1fM (%.1fM / %.1fM) | %.2f | %.2f | %.1fx the time |" % (
        t, mp / 1e6, min(p.values()) / 1e6, max(p.values()) / 1e6, md / 1e6, min(d.values()) / 1e6,
        max(d.values()) / 1e6, md / mp, paired, 2 * mp / md))
PY
    exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${HOGTRAIN:-$build/hogtrain}
extra=${HOGTRAIN_ARGS:-}
fmnist_rows=${FMNIST_ROWS:-10000}
rcv1_rows=${RCV1_ROWS:-100000}
dir="$bench_dir/defaults"
mkdir -p "$dir"
missing=""

# --- the data ---------------------------------------------------------------
sk_sets="breast_cancer digits iris wine diabetes diabetes_raw"
if "$py" -c 'import sklearn' 2>/dev/null; then
    "$py" "$root/datasets/sklearn-sets.py" "$dir/sklearn"
    have_sklearn=1
else
    missing="$missing scikit-learn's sets (no python3-sklearn);"
    have_sklearn=0
    sk_sets=""
fi
if sh "$root/datasets/heart_scale.sh" "$build" 2>/dev/null; then
    mkdir -p "$dir/heart_scale"
    cp "$root/datasets/heart_scale/train.svm" "$root/datasets/heart_scale/test.svm" "$dir/heart_scale/"
    heart=heart_scale
else
    missing="$missing heart_scale (no liblinear-tools example);"
    heart=""
fi
idx=/usr/share/datasets/fashion-mnist
fm="$dir/fashion_mnist"
fashion=""
if [ -r "$idx/train-images-idx3-ubyte.gz" ] && [ -r "$idx/t10k-images-idx3-ubyte.gz" ]; then
    if [ ! -s "$fm/train-$fmnist_rows.svm" ] || [ ! -s "$fm/test.svm" ]; then
        mkdir -p "$fm"
        # idx2libsvm writes 0-based pixel indices; LIBLINEAR takes 1-based.
        shift1='{ printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, f, ":"); printf " %d:%s", f[1] + 1, f[2] } print "" }'
        "$build/tools/idx2libsvm" "$idx/train-images-idx3-ubyte.gz" "$idx/train-labels-idx1-ubyte.gz" "$fm/all.svm"
        head -n "$fmnist_rows" "$fm/all.svm" | awk "$shift1" >"$fm/train-$fmnist_rows.svm"
        "$build/tools/idx2libsvm" "$idx/t10k-images-idx3-ubyte.gz" "$idx/t10k-labels-idx1-ubyte.gz" "$fm/all.svm"
        awk "$shift1" "$fm/all.svm" >"$fm/test.svm"
        rm -f "$fm/all.svm"
    fi
    ln -sf "train-$fmnist_rows.svm" "$fm/train.svm"
    fashion=fashion_mnist
else
    missing="$missing Fashion-MNIST (no dataset-fashion-mnist);"
fi
rcv="$dir/rcv1_shape"
rcv_test=$((rcv1_rows / 4))
if [ ! -s "$rcv/train-$rcv1_rows.svm" ] || [ ! -s "$rcv/test-$rcv1_rows.svm" ]; then
    mkdir -p "$rcv"
    "$build/tools/gen_sparse" -n $((rcv1_rows + rcv_test)) -d 47000 -k 75 -s 1 -q -o "$rcv/all.svm"
    head -n "$rcv1_rows" "$rcv/all.svm" >"$rcv/train-$rcv1_rows.svm"
    tail -n "$rcv_test" "$rcv/all.svm" >"$rcv/test-$rcv1_rows.svm"
    rm -f "$rcv/all.svm"
fi
ln -sf "train-$rcv1_rows.svm" "$rcv/train.svm"
ln -sf "test-$rcv1_rows.svm" "$rcv/test.svm"

# kind SET: binary, multi or reg.
kind() {
    case $1 in
        diabetes*) echo reg ;;
        digits|iris|wine|fashion_mnist) echo multi ;;
        *) echo binary ;;
    esac
}
# folder SET
folder() {
    case $1 in
        breast_cancer|digits|iris|wine|diabetes|diabetes_raw) echo "$dir/sklearn/$1" ;;
        *) echo "$dir/$1" ;;
    esac
}

# liblinear SET: test accuracy (0..1) or RMSE.
liblinear() {
    d=$(folder "$1")
    if [ "$(kind "$1")" = reg ]; then
        liblinear-train -q -s 11 -p 0 -B 1 "$d/train.svm" "$dir/ll.model" >/dev/null
        liblinear-predict "$d/test.svm" "$dir/ll.model" "$dir/ll.out" |
            awk '/Mean squared error/ { printf "%.2f\n", sqrt($5) }'
    else
        liblinear-train -q -s 0 -B 1 "$d/train.svm" "$dir/ll.model" >/dev/null
        liblinear-predict "$d/test.svm" "$dir/ll.model" "$dir/ll.out" |
            awk '/Accuracy/ { v = $3; sub("%", "", v); printf "%.4f\n", v / 100 }'
    fi
}

# sklearn SET: "LOGREG SGD" (accuracies, or RMSEs for regression).
sklearn() {
    d=$(folder "$1")
    "$py" - "$d/train.svm" "$d/test.svm" "$(kind "$1")" <<'PY'
import sys, warnings
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression, SGDClassifier, SGDRegressor
warnings.simplefilter("ignore", ConvergenceWarning)
train, test, kind = sys.argv[1:]
Xa, ya = load_svmlight_file(train, zero_based=False)
Xb, yb = load_svmlight_file(test, zero_based=False)
n = max(Xa.shape[1], Xb.shape[1])
Xa, _ = load_svmlight_file(train, zero_based=False, n_features=n)
Xb, _ = load_svmlight_file(test, zero_based=False, n_features=n)
out = []
if kind == "reg":
    for m in (LinearRegression(), SGDRegressor(random_state=0)):
        p = m.fit(Xa, ya).predict(Xb)
        out.append("%.2f" % np.sqrt(np.mean((p - yb) ** 2)) if np.all(np.isfinite(p)) else "nan")
else:
    for m in (LogisticRegression(), SGDClassifier(loss="log_loss", random_state=0)):
        out.append("%.4f" % np.mean(m.fit(Xa, ya).predict(Xb) == yb))
print(" ".join(out))
PY
}

# hogtrain SET [OPTIONS]: test accuracy or RMSE, or "failed".
hogtrain() {
    d=$(folder "$1")
    case $(kind "$1") in
        reg) loss=squared ;;
        multi) loss=softmax ;;
        *) loss=logistic ;;
    esac
    shift
    if "$bin" train "$d/train.svm" --test "$d/test.svm" --loss "$loss" -o "$dir/hog.model" -q \
        --report "$dir/hog.json" "$@" 2>"$dir/hog.err"; then
        "$py" -c 'import json, sys
t = json.load(open(sys.argv[1]))["test"]
print("%.2f" % t["rmse"] if sys.argv[2] == "squared" else "%.4f" % t["accuracy"])' "$dir/hog.json" "$loss"
    elif grep -q "diverged" "$dir/hog.err"; then
        echo diverged
    else
        echo failed
        sed 's/^/    /' "$dir/hog.err" >&2
    fi
}

# --- the runs ---------------------------------------------------------------
csv="$dir/defaults.csv"
echo "set,kind,rows_train,rows_test,features,liblinear,sklearn,sklearn_sgd,hogtrain,hogtrain_before" >"$csv"
for s in $sk_sets $heart $fashion rcv1_shape; do
    d=$(folder "$s")
    rows_train=$(grep -c . "$d/train.svm")
    rows_test=$(grep -c . "$d/test.svm")
    features=$(cat "$d/train.svm" "$d/test.svm" | awk '{ for (i = 2; i <= NF; i++) { split($i, f, ":"); if (f[1] > m) m = f[1] } } END { print m }')
    ll=$(liblinear "$s")
    if [ "$have_sklearn" = 1 ]; then sk=$(sklearn "$s"); else sk="- -"; fi
    # shellcheck disable=SC2086 # HOGTRAIN_ARGS is a list of flags
    hg=$(hogtrain "$s" $extra)
    before=$(hogtrain "$s" --normalized 0 --step 0.1 --decay 0.9 --epochs 10 2>/dev/null)
    echo "$s: LIBLINEAR $ll, scikit-learn $sk, hogtrain $hg (earlier defaults $before)" >&2
    echo "$s,$(kind "$s"),$rows_train,$rows_test,$features,$ll,${sk% *},${sk#* },$hg,$before" >>"$csv"
done

"$py" - "$csv" "$bin" "$extra" "$missing" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("%s %s" % (sys.argv[2], sys.argv[3] or "(no flags but the loss)"))
print("| data | train / test rows | features | metric | LIBLINEAR | scikit-learn | scikit-learn SGD | "
      "hogtrain, earlier defaults | hogtrain | hogtrain against LIBLINEAR |")
print("|---|---:|---:|---|---:|---:|---:|---:|---:|---|")
bad = 0
for r in rows:
    reg = r["kind"] == "reg"
    ll, hg = float(r["liblinear"]), r["hogtrain"]
    if hg in ("failed", "diverged"):
        verdict, bad = hg, bad + 1
    elif reg:
        gap = float(hg) / ll - 1
        ok = gap <= 0.05
        verdict = "%+.1f%% RMSE %s" % (100 * gap, "ok" if ok else "MISSED")
        bad += not ok
    else:
        gap = 100 * (float(hg) - ll)
        ok = gap >= -1
        verdict = "%+.1f points %s" % (gap, "ok" if ok else "MISSED")
        bad += not ok
    def fmt(v):
        if v in ("nan", "-", "failed", "diverged"):
            return v
        return ("%.2f" if float(v) < 1e6 else "%.3g") % float(v) if reg else "%.3f" % float(v)
    print("| %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["set"], r["rows_train"], r["rows_test"], r["features"], "RMSE" if reg else "accuracy",
        fmt(r["liblinear"]), fmt(r["sklearn"]), fmt(r["sklearn_sgd"]), fmt(r["hogtrain_before"]), fmt(hg),
        verdict))
if sys.argv[4]:
    print("left out:%s" % sys.argv[4])
print("%d of %d rows within 1 point of LIBLINEAR (RMSE within 5%%)" % (len(rows) - bad, len(rows)))
PY
