#!/bin/sh
# bench-predict-latency.sh: hogtrain predict on a stream: the latency of a row written alone to a quiet pipe, and rows/s on a file and through a pipe against cat of the same file, in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-predict-latency.sh BUILD_DIR
# Data: BUILD_DIR/tools/gen_sparse, ROWS rows (default 5,000,000) x 14
# non-zeros over 1,000 features as libsvm text (bench-predict.sh's file,
# made once under $BENCH_DIR), and a model trained on it for one epoch.
#   latency     `hogtrain predict MODEL - -q [OPTS]` reading a pipe of
#               ours: N rows of the file (default 200), each written alone
#               once the answer to the one before has come and the pipe has
#               been quiet for GAP_MS (default 5), timed from the write to
#               the last byte of its answer; for the plain output,
#               --probabilities and --output-format f32. The first row,
#               written once the command has had a second to start, is
#               timed apart: it also waits for the parsers' plan and the
#               threads' first wake-up.
#   throughput  in each repetition, interleaved: `cat DATA >/dev/null`
#               (the file's read rate), `hogtrain predict MODEL DATA -o -
#               -q >/dev/null` and `cat DATA | hogtrain predict MODEL - -o
#               - -q >/dev/null`: rows / the wall time, and each over cat's
#               rate in the same repetition; and the CPU seconds of each
#               (a pipe's include cat's).
# With BASELINE=DIR the hogtrain in DIR (an older build) runs the same
# throughput commands, interleaved with this build's: before and after.
# Environment: ROWS, REPS (default 3), N, GAP_MS, THREADS (default: the
# CPUs), BASELINE, BENCH_DIR (default /tmp/hogtrain-bench).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-5000000}
n=${N:-200}
gap=${GAP_MS:-5}
threads=${THREADS:-$(nproc)}
case $threads in
    *[!0-9]*|0) echo "$0: THREADS: '$threads' is not a thread count" >&2; exit 2 ;;
esac
base=
if [ -n "${BASELINE:-}" ]; then
    base=$(cd "$BASELINE" && pwd)/hogtrain
    [ -x "$base" ] || { echo "$0: BASELINE: no hogtrain in $BASELINE" >&2; exit 2; }
fi
svm="$bench_dir/predict-n$rows.svm"
[ -s "$svm" ] || "$build/tools/gen_sparse" -n "$rows" -d 1000 -k 14 -s 3 -q -o "$svm"
model="$bench_dir/predict-latency.hog"
[ -s "$model" ] || "$build/hogtrain" train "$svm" -o "$model" --epochs 1 -q

# ---- latency: a row at a time on a quiet pipe ----
lat="$bench_dir/predict-latency.csv"
"$py" - "$build/hogtrain" "$model" "$svm" "$n" "$gap" "$threads" >"$lat" <<'PY'
import os, select, subprocess, sys, time
binary, model, data, n, gap, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), \
    float(sys.argv[5]) / 1e3, sys.argv[6]
with open(data, "rb") as f:
    rows = [f.readline() for _ in range(n + 1)]
print("output,row,ms")
for name, opts, header, per_row in (("text", [], 0, 0), ("probabilities", ["--probabilities"], 1, 0),
                                    ("f32", ["--output-format", "f32"], 0, 4)):
    p = subprocess.Popen([binary, "predict", model, "-", "-q", "--threads", threads] + opts,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    got = b""
    time.sleep(1.0)  # the model loaded, the command waits for its input
    for i, row in enumerate(rows):
        time.sleep(gap)  # the pipe is quiet: nothing more is coming
        t0 = time.perf_counter()
        os.write(p.stdin.fileno(), row)
        while (len(got) < (i + 1) * per_row) if per_row else (got.count(b"\n") < header + i + 1):
            ready, _, _ = select.select([p.stdout], [], [], 10.0)
            if not ready:
                sys.exit("predict %s: no answer to row %d within 10 s" % (name, i + 1))
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                sys.exit("predict %s: the output ended at row %d" % (name, i + 1))
            got += chunk
        print("%s,%d,%.4f" % (name, i + 1, (time.perf_counter() - t0) * 1e3), flush=True)
    p.stdin.close()
    p.stdout.read()
    if p.wait() != 0:
        sys.exit("predict %s: exit %d" % (name, p.returncode))
PY

# ---- throughput: a file and a pipe against cat ----
csv="$bench_dir/predict-throughput.csv"
cat "$svm" >/dev/null # warm the page cache
"$py" - "$build/hogtrain" "${base:-}" "$model" "$svm" "$reps" "$threads" >"$csv" <<'PY'
import resource, subprocess, sys, time
this, base, model, data, reps, threads = sys.argv[1:7]
def run(cmd):
    """The wall seconds of a shell command, and its processes' CPU seconds."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, shell=True, check=True)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print("rep,build,what,seconds,cpu_seconds", flush=True)
for rep in range(1, int(reps) + 1):
    w, c = run("cat '%s' >/dev/null" % data)
    print("%d,cat,cat,%.4f,%.4f" % (rep, w, c), flush=True)
    for name, binary in (("this", this), ("baseline", base)):
        if not binary:
            continue
        predict = "'%s' predict '%s' %%s -o - -q --threads %s >/dev/null" % (binary, model, threads)
        for what, cmd in (("file", predict % ("'%s'" % data)), ("pipe", "cat '%s' | " % data + predict % "-")):
            w, c = run(cmd)
            print("%d,%s,%s,%.4f,%.4f" % (rep, name, what, w, c), flush=True)
PY

"$py" - "$lat" "$csv" "$svm" "$rows" "$threads" "$gap" <<'PY'
import csv, os, statistics, sys
lat = list(csv.DictReader(open(sys.argv[1])))
runs = list(csv.DictReader(open(sys.argv[2])))
rows, threads, gap = int(sys.argv[4]), sys.argv[5], sys.argv[6]
print("| output | first row | rows after it: median | 90th percentile | max |")
print("|---|---:|---:|---:|---:|")
for o in ("text", "probabilities", "f32"):
    v = [float(r["ms"]) for r in lat if r["output"] == o]
    rest = sorted(v[1:])
    print("| %s | %.2f ms | %.3f ms | %.3f ms | %.3f ms |" % (
        o, v[0], statistics.median(rest), rest[int(0.9 * (len(rest) - 1))], rest[-1]))
print("\n%d rows each, written alone to a quiet pipe (%s ms between an answer and the next row), %s threads\n" % (
    len(lat) // 3 - 1, gap, threads))
reps = sorted({r["rep"] for r in runs})
def get(b, w, rep, field="seconds"):
    return [float(r[field]) for r in runs if r["build"] == b and r["what"] == w and r["rep"] == rep][0]
print("| build | input | rows/s (median) | / cat's rows/s (median of the repetitions' ratios) | CPU seconds (median; a pipe's include cat's) |")
print("|---|---|---:|---:|---:|")
print("| cat | file | %.2f M | 1 | %.3f |" % (statistics.median(rows / get("cat", "cat", r) for r in reps) / 1e6,
                                           statistics.median(get("cat", "cat", r, "cpu_seconds") for r in reps)))
for b in ("this", "baseline"):
    for w in ("file", "pipe"):
        if not any(r["build"] == b for r in runs):
            continue
        rate = statistics.median(rows / get(b, w, r) for r in reps)
        ratio = statistics.median(get("cat", "cat", r) / get(b, w, r) for r in reps)
        cpu = statistics.median(get(b, w, r, "cpu_seconds") for r in reps)
        print("| %s | %s | %.2f M | %.3f | %.3f |" % (b, w, rate / 1e6, ratio, cpu))
print("\n%s (%.0f MB, %d rows), %s threads; medians of %d repetitions, interleaved" % (
    os.path.basename(sys.argv[3]), os.path.getsize(sys.argv[3]) / 1e6, rows, threads, len(reps)))
PY
