#!/bin/sh
# bench-libmf.sh: matrix factorisation side by side with LIBMF (FPSGD): updates/s, seconds to LIBMF's final test RMSE and the final test RMSE, per tool and thread count, on a generated matrix and on MovieLens.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-libmf.sh BUILD_DIR
#        sh bench/bench-libmf.sh --table CSV   (the table of an earlier run's csv)
#
# LIBMF (github.com/cjlin1/libmf) is built with its own Makefile (SSE, OpenMP,
# -march=native) in $BENCH_DIR/libmf, never kept in this tree: from the git
# directory $LIBMF_GIT when set (a mirror or a clone: `git archive HEAD`),
# else cloned from GitHub. When neither can be had the LIBMF rows are left
# out, saying so, and hogtrain runs alone (the target RMSE is then its own).
#
# Data, the same files for both tools, in LIBMF's text format (`user item
# rating` lines, ids 0-based):
#   generated  tools/gen_ratings -u $USERS -i $ITEMS -k 16 -n $RATINGS -s 1
#              --noise 0.1 (20,000,000 ratings, 200,000 users, 20,000 items),
#              every tenth line the test set; hogtrain reads both converted
#              once to .hgr (reading is timed by neither tool)
#   movielens  dslabs' MovieLens (datasets/movielens.sh: 90/10, seed 1), its
#              ids renumbered from 0 in order of appearance
#
# Parameters equated: rank (-k 16 / --rank 16); L2 on the factors per rating
# (LIBMF's default -l2 0.1 / --l2 0.1: both step p by -(e q - l2 p)); epochs
# (LIBMF's default -t 20 / --epochs 20); threads (-s N / --threads N); the
# test set (-p / --test). Each tool keeps its own choice where the other has
# none to match: LIBMF its learning rate 0.1 with per-row adaptive steps, its
# 20 bins (raised to 2 threads + 1 by LIBMF), no biases, no clamp; hogtrain
# its step 0.01 x 0.95^epoch, user and item biases (--l2-bias 0.01), the
# clamp to the training range and its grid's bands.
#
# Timing: hogtrain's seconds are its training time (its report's
# epoch_seconds: evaluation excluded); LIBMF's are taken as each
# iteration's line reaches this script, from its header line, printed once
# its data are read and its grid is made (under `stdbuf -oL`: LIBMF
# flushes its iteration lines but not the header; without stdbuf the
# first iteration is given the mean time of the others), so they include
# its per-iteration RMSE on the test set (a tenth of the ratings: a few
# per cent of an iteration). updates/s: training ratings x epochs / those seconds. The
# time to LIBMF's RMSE is the first epoch whose test RMSE is at or below
# LIBMF's final one (the median over its runs on that thread count), "-"
# when never reached. Runs interleave (LIBMF 1, hogtrain 1, LIBMF 2,
# hogtrain 2, ...), $REPS rounds each, after one warm-up round of both;
# medians are printed as a markdown table and every epoch of every run goes
# to results/bench-libmf-YYYYmmdd-HHMMSS.csv.
#
# Environment (all optional):
#   RATINGS, USERS, ITEMS  the size of the generated matrix
#   THREADS    the thread counts (default "1 2"; 1 is always measured)
#   REPS       measured rounds (default 3 on the generated matrix, 5 on MovieLens)
#   EPOCHS     epochs (LIBMF's iterations; default 20)
#   L2         L2 on the factors (default 0.1, LIBMF's)
#   DATA       "generated movielens" (default), or one of them
#   HOGTRAIN_ARGS  hogtrain's variants, separated by ';', each the further options of
#              its runs, run in turn with the others (default: one, no further
#              options; e.g. ";--step 0.05;--mf-schedule hogwild": three)
#   WARMUP     0: no warm-up round (default 1)
#   LIBMF_GIT  a git directory of LIBMF's source to build from
#   BENCH_DIR  where the data, LIBMF and scratch files go (default /tmp/hogtrain-bench)
set -eu

table() { # table CSV: the medians of the runs in CSV as a markdown table
    "${py:-python3}" - "$1" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["run"] != "warmup"]
runs = {}
for r in rows:
    runs.setdefault((r["data"], r["tool"], int(r["threads"]), r["run"]), []).append(
        (int(r["epoch"]), float(r["seconds"]), float(r["test_rmse"]), float(r["updates_per_s"])))
med = statistics.median
print("Medians over the runs (interleaved):\n")
print("| data | tool | threads | updates/s | seconds to LIBMF's RMSE | epochs to it | final test RMSE | training seconds |")
print("|---|---|--:|--:|--:|--:|--:|--:|")
for data in sorted({k[0] for k in runs}):
    for t in sorted({k[2] for k in runs if k[0] == data}):
        ref = [v[-1][2] for k, v in runs.items() if k[0] == data and k[1] == "libmf" and k[2] == t]
        target = med(ref) if ref else None
        tools = sorted({k[1] for k in runs if k[0] == data and k[2] == t}, key=lambda x: (x != "libmf", x))
        for tool in tools:
            mine = [v for k, v in runs.items() if k[0] == data and k[1] == tool and k[2] == t]
            hit = [next((e for e in v if target is not None and e[2] <= target + 1e-12), None) for v in mine]
            reached = [h for h in hit if h]
            enough = len(reached) * 2 > len(hit)
            to = "%.3f" % med(h[1] for h in reached) if enough else "-"
            ep = "%g" % med(h[0] for h in reached) if enough else "-"
            print("| %s | %s | %d | %s | %s | %s | %.4f | %.3f |" % (
                data, "`%s`" % tool if tool != "libmf" else "LIBMF", t, format(int(med(v[-1][3] for v in mine)), ","),
                to, ep, med(v[-1][2] for v in mine), med(v[-1][1] for v in mine)))
PY
}

if [ $# -eq 2 ] && [ "$1" = --table ]; then
    table "$2"
    exit
fi
if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
if ! build=$(cd "$1" 2>/dev/null && pwd); then
    echo "bench-libmf.sh: build folder $1 not found: run make first" >&2
    exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/bench-env.sh"
bench_thread_counts bench-libmf.sh
hogtrain="$build/hogtrain"
gen="$build/tools/gen_ratings"
for tool in "$hogtrain" "$gen"; do
    if [ ! -x "$tool" ]; then
        echo "bench-libmf.sh: $tool not found: run make first" >&2
        exit 1
    fi
done
py=$(command -v python3) || { echo "bench-libmf.sh: python3 is needed" >&2; exit 1; }

ratings=${RATINGS:-20000000}
users=${USERS:-200000}
items=${ITEMS:-20000}
rank=16
epochs=${EPOCHS:-20}
l2=${L2:-0.1}
bench_dir=${BENCH_DIR:-/tmp/hogtrain-bench}
mkdir -p "$bench_dir" "$root/results"
scratch="$bench_dir/libmf-run.$$"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- LIBMF ----
libmf="$bench_dir/libmf"
mftrain=
if [ -x "$libmf/mf-train" ]; then
    mftrain="$libmf/mf-train"
else
    rm -rf "$libmf.new"
    mkdir -p "$libmf.new"
    got=0
    if [ -n "${LIBMF_GIT:-}" ]; then
        git -C "$LIBMF_GIT" archive HEAD | tar -x -C "$libmf.new" && got=1
    elif command -v git >/dev/null 2>&1; then
        rmdir "$libmf.new"
        git clone -q --depth 1 https://github.com/cjlin1/libmf "$libmf.new" 2>/dev/null && got=1
    fi
    if [ "$got" = 1 ] && make -C "$libmf.new" -s mf-train >"$scratch/libmf-make.log" 2>&1; then
        rm -rf "$libmf"
        mv "$libmf.new" "$libmf"
        mftrain="$libmf/mf-train"
    else
        rm -rf "$libmf.new"
        echo "bench-libmf.sh: LIBMF could not be fetched or built (set LIBMF_GIT to a clone): its rows are left out" >&2
        [ -s "$scratch/libmf-make.log" ] && tail -5 "$scratch/libmf-make.log" >&2
    fi
fi

# ---- data ----
generated() { # prints the folder of the generated split, made once
    d="$bench_dir/libmf-n$ratings-u$users-i$items-k$rank-s1"
    if [ ! -s "$d/test.hgr" ]; then
        echo "bench-libmf.sh: generating $d" >&2
        mkdir -p "$d"
        "$gen" -u "$users" -i "$items" -k "$rank" -n "$ratings" -s 1 --noise 0.1 -q -o "$d/all.txt"
        awk -v tr="$d/train.txt" -v te="$d/test.txt" '{ print > (NR % 10 == 0 ? te : tr) }' "$d/all.txt"
        rm -f "$d/all.txt"
        "$hogtrain" convert "$d/train.txt" --ratings -o "$d/train.hgr" -q
        "$hogtrain" convert "$d/test.txt" --ratings -o "$d/test.hgr" -q
    fi
    echo "$d"
}

movielens() {
    d="$bench_dir/libmf-movielens"
    if [ ! -s "$d/test.txt" ]; then
        sh "$root/datasets/movielens.sh" >&2
        mkdir -p "$d"
        ml="$root/datasets/movielens"
        # user,item,rating with a header line; ids from 0 in order of appearance
        awk -F, -v tr="$d/train.txt" -v te="$d/test.txt" 'FNR == 1 { next }
            { if (!($1 in u)) u[$1] = nu++; if (!($2 in i)) i[$2] = ni++
              print u[$1], i[$2], $3 > (FILENAME ~ /test/ ? te : tr) }' "$ml/train.csv" "$ml/test.csv"
        "$hogtrain" convert "$d/train.txt" --ratings -o "$d/train.hgr" -q
        "$hogtrain" convert "$d/test.txt" --ratings -o "$d/test.hgr" -q
    fi
    echo "$d"
}

# ---- runs ----
stamp=$(date +%Y%m%d-%H%M%S)
csv="$root/results/bench-libmf-$stamp.csv"
echo "data,run,tool,threads,epoch,seconds,test_rmse,updates_per_s" > "$csv"

# run DATA_NAME DIR TOOL THREADS RUN: one run, its epochs appended to the csv
run() {
    "$py" - "$@" "$hogtrain" "$mftrain" "$rank" "$epochs" "$l2" "$scratch" >> "$csv" <<'PY'
import json, re, shutil, subprocess, sys, time
name, d, tool, threads, run, hogtrain, mftrain, rank, epochs, l2, scratch = sys.argv[1:12]
extra = tool[len("hogtrain"):]
ntrain = sum(1 for _ in open(d + "/train.txt"))
rows = []
if tool == "libmf":
    cmd = [mftrain, "-k", rank, "-t", epochs, "-s", threads, "-l2", l2, "-p", d + "/test.txt",
           d + "/train.txt", scratch + "/libmf.model"]
    stdbuf = shutil.which("stdbuf")
    p = subprocess.Popen(([stdbuf, "-oL"] if stdbuf else []) + cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
    t0 = None
    for line in p.stdout:
        now = time.monotonic()
        f = line.split()
        if f and f[0] == "iter":
            t0 = now
        elif t0 is not None and len(f) >= 3 and f[0].isdigit():
            rows.append((int(f[0]) + 1, now - t0, float(f[2])))
    if p.wait() != 0:
        sys.exit("bench-libmf.sh: mf-train failed")
    if not stdbuf and len(rows) > 1: # the header came with the first iteration's line
        first = (rows[-1][1] - rows[0][1]) / (len(rows) - 1)
        rows = [(e, s + first, r) for e, s, r in rows]
else:
    cmd = [hogtrain, "train", d + "/train.hgr", "--model", "mf", "--rank", rank, "--epochs", epochs,
           "--threads", threads, "--l2", l2, "--test", d + "/test.hgr", "-o", scratch + "/hog.mf",
           "--report", scratch + "/hog.json"] + extra.split()
    r = subprocess.run(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    if r.returncode != 0:
        sys.exit("bench-libmf.sh: hogtrain failed: " + r.stderr)
    # each epoch's test RMSE from its line, its seconds from the report (full precision)
    secs = json.load(open(scratch + "/hog.json"))["epoch_seconds"]
    total = 0.0
    for m in re.finditer(r"^epoch (\d+)/\d+ .*\| test rmse ([0-9.]+)", r.stderr, re.M):
        e = int(m.group(1))
        total += secs[e - 1]
        rows.append((e, total, float(m.group(2))))
if not rows:
    sys.exit("bench-libmf.sh: no epochs read from " + tool)
rate = ntrain * rows[-1][0] / rows[-1][1]
for e, s, rmse in rows:
    print("%s,%s,\"%s\",%s,%d,%.4f,%.5f,%.1f" % (name, run, tool, threads, e, s, rmse, rate))
PY
}

round() { # round NAME DIR RUN: each tool (and hogtrain variant) on each thread count
    for t in $counts; do
        [ -n "$mftrain" ] && run "$1" "$2" libmf "$t" "$3"
        printf '%s\n' "${HOGTRAIN_ARGS:-}" | tr ';' '\n' | while IFS= read -r args; do
            run "$1" "$2" "hogtrain${args:+ $args}" "$t" "$3"
        done
    done
}

study() { # study NAME DIR REPS
    echo "bench-libmf.sh: $1: $3 rounds of ${mftrain:+LIBMF and }hogtrain (${HOGTRAIN_ARGS:-no further options}) on $counts threads, interleaved" >&2
    [ "${WARMUP:-1}" = 0 ] || round "$1" "$2" warmup
    i=1
    while [ "$i" -le "$3" ]; do
        round "$1" "$2" "$i"
        i=$((i + 1))
    done
}

for data in ${DATA:-generated movielens}; do
    case $data in
        generated) study generated "$(generated)" "${REPS:-3}" ;;
        movielens) study movielens "$(movielens)" "${REPS:-5}" ;;
        *) echo "bench-libmf.sh: DATA: no data set '$data' (generated, movielens)" >&2; exit 2 ;;
    esac
done

echo "Rank $rank, $epochs epochs, L2 $l2."
table "$csv"
echo "runs: $csv"
