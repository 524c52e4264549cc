#!/bin/sh
# bench-predict.sh: hogtrain predict's rows/s against one training epoch's examples/s on the same data and threads, measured interleaved in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-predict.sh BUILD_DIR
# Data: BUILD_DIR/tools/gen_sparse, ROWS rows (default 5,000,000) x 14
# non-zeros over 1,000 features (the shape of the large-data runs), as
# libsvm text and as a .hgd under $BENCH_DIR, made once. Each repetition
# runs, one after another on the same THREADS:
#   epoch     `hogtrain train DATA.hgd --epochs 2 --train-metrics exact`:
#             the rows over its report's second epoch_seconds, an epoch
#             alone whose blocks were all checked before (the reference of
#             every ratio of the .hgd), and over the first, which checks
#             each block as it first reads it (with text input: the one
#             epoch of the next run, streamed as the parsers read, is the
#             reference)
#   train     `hogtrain train DATA.hgd --epochs 1 --train-metrics exact`:
#             the command's wall time (the epoch, each block checked as
#             read, the metrics' own pass; the labels and degrees from the
#             .hgd's summary, no scan); and the same with the default
#             progressive metrics (scored during the epoch: no pass of
#             their own), the command's wall time
#   predict   `hogtrain predict MODEL DATA.hgd -o -` to /dev/null: every
#             prediction formatted as text, rows / the command's wall time
#             (loading the model, opening the .hgd and checking each block
#             as it is read included); with --output-format f32; and
#             --report alone (the metrics, nothing formatted); and
#             `hogtrain info DATA.hgd`, which checks every block at the
#             open (a pass over the file of its own, what predict's open
#             cost before it checked blocks as it read them), rows / its
#             wall time
#   text      the same train and predict from the libsvm text (train's
#             first epoch streamed while the parsers read)
# and the table gives the medians, and predict's rows/s over the epoch's.
# Environment: ROWS, REPS (default 3), THREADS (default: the CPUs),
# BENCH_DIR (default /tmp/hogtrain-bench).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-5000000}
threads=${THREADS:-$(nproc)}
case $threads in
    *[!0-9]*|0) echo "$0: THREADS: '$threads' is not a thread count" >&2; exit 2 ;;
esac
svm="$bench_dir/predict-n$rows.svm"
hgd="$bench_dir/predict-n$rows.hgd"
[ -s "$svm" ] || "$build/tools/gen_sparse" -n "$rows" -d 1000 -k 14 -s 3 -q -o "$svm"
[ -s "$hgd" ] || "$build/hogtrain" convert "$svm" -o "$hgd" -q
model="$bench_dir/predict.hog"

now() { date +%s.%N; }
csv="$bench_dir/predict.csv"
echo "rep,input,what,seconds,rows_per_s" >"$csv"
# record INPUT WHAT T0 T1 [ROWS_PER_S]: one line; rows/s from the wall time unless given
record() {
    "$py" -c 'import sys; i, w, a, b, rate = sys.argv[1:6]; s = float(b) - float(a)
print("%s,%s,%s,%.3f,%.0f" % (sys.argv[6], i, w, s, float(rate) if rate else int(sys.argv[7]) / s))' \
        "$1" "$2" "$3" "$4" "${5:-}" "$rep" "$rows" >>"$csv"
    tail -n 1 "$csv" >&2
}
rep=1
while [ "$rep" -le "$reps" ]; do
    for input in hgd text; do
        data=$hgd
        [ "$input" = text ] && data=$svm
        if [ "$input" = hgd ]; then
            t0=$(now)
            "$build/hogtrain" train "$data" -o "$model" --epochs 2 --threads "$threads" -q --train-metrics exact \
                --report "$bench_dir/predict-train.json"
            t1=$(now)
            for e in 1 0; do
                eps=$("$py" -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(int(sys.argv[3]) / r["epoch_seconds"][int(sys.argv[2])])' "$bench_dir/predict-train.json" "$e" "$rows")
                [ "$e" = 1 ] && record "$input" train_epoch "$t0" "$t1" "$eps"
                [ "$e" = 0 ] && record "$input" train_first_epoch "$t0" "$t1" "$eps"
            done
        fi
        t0=$(now)
        "$build/hogtrain" train "$data" -o "$model" --epochs 1 --threads "$threads" -q --train-metrics exact \
            --report "$bench_dir/predict-train.json"
        t1=$(now)
        if [ "$input" = text ]; then
            eps=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["examples_per_s"])' \
                "$bench_dir/predict-train.json")
            record "$input" train_epoch "$t0" "$t1" "$eps"
        fi
        record "$input" train_wall_exact "$t0" "$t1"
        t0=$(now)
        "$build/hogtrain" train "$data" -o "$model" --epochs 1 --threads "$threads" -q
        t1=$(now)
        record "$input" train_wall "$t0" "$t1"
        t0=$(now)
        "$build/hogtrain" predict "$model" "$data" -o - --threads "$threads" -q >/dev/null
        t1=$(now)
        record "$input" predict_text "$t0" "$t1"
        if [ "$input" = hgd ]; then
            t0=$(now)
            "$build/hogtrain" info "$data" >/dev/null
            t1=$(now)
            record "$input" open "$t0" "$t1"
            t0=$(now)
            "$build/hogtrain" predict "$model" "$data" -o - --output-format f32 --threads "$threads" -q >/dev/null
            t1=$(now)
            record "$input" predict_f32 "$t0" "$t1"
            t0=$(now)
            "$build/hogtrain" predict "$model" "$data" --report "$bench_dir/predict-report.json" \
                --threads "$threads" -q
            t1=$(now)
            record "$input" predict_metrics "$t0" "$t1"
        fi
    done
    rep=$((rep + 1))
done
"$py" - "$csv" "$svm" "$hgd" "$threads" <<'PY'
import csv, os, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def med(i, w):
    v = [float(r["rows_per_s"]) for r in rows if r["input"] == i and r["what"] == w]
    return statistics.median(v) if v else None
names = {"train_epoch": "train, the epoch alone (.hgd: the second, its blocks checked before)",
         "train_first_epoch": "train, the first epoch, checking each block as it reads it",
         "train_wall_exact": "train --epochs 1 --train-metrics exact, the command",
         "train_wall": "train --epochs 1 (progressive metrics), the command",
         "predict_text": "predict -o - (text)", "predict_f32": "predict --output-format f32",
         "predict_metrics": "predict --report (metrics only)",
         "open": "info: an open that checks every block (a pass of its own)"}
print("| input | what | rows/s (median) | / the training epoch's |")
print("|---|---|---:|---:|")
for i in ("hgd", "text"):
    epoch = med(i, "train_epoch")
    for w in names:
        m = med(i, w)
        if m is not None:
            print("| %s | %s | %.2f M | %.2f |" % (i, names[w], m / 1e6, m / epoch))
print("\n%s (%.0f MB) and its .hgd (%.0f MB), %s threads; medians of %d runs, interleaved" % (
    os.path.basename(sys.argv[2]), os.path.getsize(sys.argv[2]) / 1e6, os.path.getsize(sys.argv[3]) / 1e6,
    sys.argv[4], len({r["rep"] for r in rows})))
PY
