#!/bin/sh
# bench-large.sh: one epoch and one predict on a .hgd larger than the memory limit, from a cold page cache: wall time, the epoch, the bytes read against the file's size, against the cold read of the same file measured in the same run.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/bench-large.sh BUILD_DIR   (as root: it drops the page cache)
# Data: ROWS rows (default 150,000,000) x 14 non-zeros over 1,000 features
# from gen_sparse (seed 3), a .hgd of about 18 GB made once under BENCH_DIR
# (its text removed once converted). Each repetition (REPS, default 3) runs,
# the page cache dropped before each, on THREADS (default: the CPUs):
#   read      `cat DATA.hgd >/dev/null`: the file's cold read, the limit of
#             every run here where the disk is slower than the cores
#   train     `hogtrain train DATA.hgd --epochs 1 --mem-limit LIMIT`
#             (default 4G, so out of core): the command's wall time, its
#             report's epoch, and the bytes it read (getrusage's ru_inblock,
#             what /proc/PID/io counts as read_bytes) over the file's size
#   train-v2  the same on the same file with its header as version 2 has it
#             (no summary: the trainer scans the labels and degrees in a
#             pass of its own), the header put back after; with V2=0, not run
#   predict   `hogtrain predict MODEL DATA.hgd --report R` (the metrics, no
#             predictions formatted): rows / wall, and its bytes read
#   warm      the file read into the page cache, then train with a memory
#             limit that holds it (WARM_LIMIT, default 20G): the epoch where
#             the cores, not the disk, are the limit; WARM_LIMIT=0: not run
# and prints the medians, with wall / the cold read's time, and predict's
# rows/s over the epoch's examples/s, and each repetition's cold train over
# its limit: the slower of its cold read (the disk) and its warm epoch (the
# cores).
set -eu
. "$(dirname "$0")/bench-env.sh"
bench_init "$0" "$@"
rows=${ROWS:-150000000}
threads=${THREADS:-$(nproc)}
limit=${LIMIT:-4G}
if [ "$(id -u)" -ne 0 ] || [ ! -w /proc/sys/vm/drop_caches ]; then
    echo "$0: the cold runs drop the page cache, which needs root" >&2
    exit 2
fi
hgd="$bench_dir/large-n$rows.hgd"
if [ ! -s "$hgd" ]; then
    "$build/tools/gen_sparse" -n "$rows" -d 1000 -k 14 -s 3 -q -o "$bench_dir/large-n$rows.svm"
    "$build/hogtrain" convert "$bench_dir/large-n$rows.svm" -o "$hgd" -q
    rm -f "$bench_dir/large-n$rows.svm"
fi
model="$bench_dir/large.hog"
report="$bench_dir/large.json"
csv="$bench_dir/large.csv"
echo "rep,what,wall_s,epoch_s,read_bytes,peak_kb" >"$csv"

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# timed WHAT EPOCH_FROM_REPORT COMMAND...: one cold run into the csv (warm:
# the file read whole first instead of the cache dropped)
timed() {
    what=$1 from_report=$2
    shift 2
    if [ "$what" = warm ]; then cat "$hgd" >/dev/null; else drop; fi
    rm -f "$report"
    "$py" - "$csv" "$rep" "$what" "$from_report" "$report" "$@" <<'PY'
import json, os, resource, subprocess, sys, time
csv, rep, what, from_report, report = sys.argv[1:6]
cmd = sys.argv[6:]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic()
out = subprocess.DEVNULL
subprocess.run(cmd, stdout=out, check=True)
wall = time.monotonic() - t0
after = resource.getrusage(resource.RUSAGE_CHILDREN)
read = (after.ru_inblock - before.ru_inblock) * 512
epoch = ""
if from_report == "1":
    epoch = "%.3f" % json.load(open(report))["epoch_seconds"][0]
line = "%s,%s,%.3f,%s,%d,%d" % (rep, what, wall, epoch, read, after.ru_maxrss)
open(csv, "a").write(line + "\n")
print(line, file=sys.stderr)
PY
}
# as_version VERSION: the header of DATA.hgd rewritten as version 3 (with its
# summary) or 2 (without); the blocks, table and summary bytes stay where
# they are, and the checksums follow (the summary's sum is kept aside).
keep="$bench_dir/large.summary-fields"
as_version() {
    "$py" - "$hgd" "$1" "$keep" <<'PY'
import struct, sys
path, version, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "r+b") as f:
    h = bytearray(f.read(4096))
    flags = struct.unpack_from("<I", h, 48)[0]
    if version == 2 and flags & 8:
        open(keep, "wb").write(bytes(h[224:248]))
        h[224:248] = bytes(24)
        struct.pack_into("<II", h, 8, 2, 4096)
        struct.pack_into("<I", h, 48, flags & ~8)
    elif version == 3 and not flags & 8:
        h[224:248] = open(keep, "rb").read()
        struct.pack_into("<I", h, 8, 3)
        struct.pack_into("<I", h, 48, flags | 8)
    else:
        sys.exit(0)
    import ctypes, ctypes.util
    xx = ctypes.CDLL(ctypes.util.find_library("xxhash"))
    xx.XXH3_64bits_withSeed.restype = ctypes.c_uint64
    xx.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    h[88:96] = bytes(8)
    struct.pack_into("<Q", h, 88, xx.XXH3_64bits_withSeed(bytes(h), 4096, 0))
    f.seek(0)
    f.write(h)
PY
}
trap 'as_version 3' EXIT
trap 'exit 1' INT TERM HUP

bytes=$(stat -c %s "$hgd")
"$build/hogtrain" train "$hgd" -o "$model" --epochs 1 --mem-limit "$limit" --threads "$threads" -q # a model to predict with
rep=1
while [ "$rep" -le "$reps" ]; do
    timed read 0 cat "$hgd"
    timed train 1 "$build/hogtrain" train "$hgd" -o "$model" --epochs 1 --mem-limit "$limit" \
        --threads "$threads" -q --report "$report"
    if [ "${V2:-1}" = 1 ]; then
        as_version 2
        timed train-v2 1 "$build/hogtrain" train "$hgd" -o "$model" --epochs 1 --mem-limit "$limit" \
            --threads "$threads" -q --report "$report"
        as_version 3
    fi
    timed predict 0 "$build/hogtrain" predict "$model" "$hgd" --report "$report" --threads "$threads" -q
    if [ "${WARM_LIMIT:-20G}" != 0 ]; then
        timed warm 1 "$build/hogtrain" train "$hgd" -o "$model" --epochs 1 --mem-limit "${WARM_LIMIT:-20G}" \
            --threads "$threads" -q --report "$report"
    fi
    rep=$((rep + 1))
done
"$py" - "$csv" "$bytes" "$rows" "$threads" "$limit" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
size, n = int(sys.argv[2]), int(sys.argv[3])
def med(what, key):
    v = [float(r[key]) for r in rows if r["what"] == what and r[key] != ""]
    return statistics.median(v) if v else None
read = med("read", "wall_s")
epoch = med("train", "epoch_s")
print("| run | wall (s) | epoch (s) | wall / cold read | bytes read / file | rows/s | peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|")
for what in ("read", "train", "train-v2", "predict", "warm"):
    w = med(what, "wall_s")
    if w is None:
        continue
    e = med(what, "epoch_s")
    rate = n / (e if e else w)
    print("| %s | %.1f | %s | %.2f | %.2f | %.2f M | %.0f MiB |" % (
        what, w, "%.1f" % e if e else "-", w / read, med(what, "read_bytes") / size,
        rate / 1e6, med(what, "peak_kb") / 1024))
warm = med("warm", "epoch_s")
# The limit of a cold epoch is the slower of the disk (the cold read) and
# the cores (the warm epoch): each repetition's train over its own limit.
by_rep = {}
for r in rows:
    by_rep.setdefault(r["rep"], {})[r["what"]] = r
pairs = []
for rep, d in sorted(by_rep.items()):
    if "train" in d and "read" in d and "warm" in d and d["warm"]["epoch_s"]:
        lim = max(float(d["read"]["wall_s"]), float(d["warm"]["epoch_s"]))
        pairs.append((float(d["train"]["wall_s"]) / lim, float(d["read"]["wall_s"]) > float(d["warm"]["epoch_s"])))
if pairs:
    print("\ncold train's wall over its repetition's limit, the slower of the cold read and the warm epoch: "
          "median %.2f (%s)" % (statistics.median(p for p, _ in pairs),
                                ", ".join("%.2f %s" % (p, "disk" if d else "cores") for p, d in pairs)))
print("\n%.1f GB .hgd, %d rows, %s threads, --mem-limit %s, page cache dropped before each run but warm "
      "(read whole first, trained in memory); medians of %d; predict's rows/s over the epoch's: %.2f%s" % (
          size / 1e9, n, sys.argv[4], sys.argv[5], len({r["rep"] for r in rows}),
          (n / med("predict", "wall_s")) / (n / epoch),
          "; the cold train's wall over the warm epoch: %.2f" % (med("train", "wall_s") / warm) if warm else ""))
PY
