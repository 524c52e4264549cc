#!/bin/sh
# predict-test.sh: hogtrain predict end to end on a 150 MB libsvm file: peak memory that does not grow with the input, text and .hgd alike, float32 output, the same predictions through a pipe, a report alone, and a bad line mid-file.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/predict-test.sh   (prints TAP lines; run by make test)
# Peak memory is the kernel's high-water mark of the resident set, as
# /usr/bin/time -f %M reports it (KiB).
set -u
build=${HOG_BUILD:-build}
bin=$build/hogtrain
tmp=$(mktemp -d /tmp/hog-predict-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; [ -f "$tmp/log" ] && tail -n 5 "$tmp/log" | sed 's/^/# /'; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
check() { # check WHAT CONDITION...: ok when every condition holds
    what=$1
    shift
    for c in "$@"; do eval "$c" || { not_ok "$what (not: $c)"; return; }; done
    ok "$what"
}
peak() { # peak FILE: the KiB /usr/bin/time wrote on FILE's last line
    tail -n 1 "$1"
}

# 400,000 rows x 30 non-zeros over 20,000 features: 151 MB of text.
"$build/tools/gen_sparse" -n 400000 -d 20000 -k 30 -s 4 -q -o "$tmp/f.svm" || exit 1
"$bin" train "$tmp/f.svm" -o "$tmp/m.hog" --epochs 1 -q || exit 1
"$bin" convert "$tmp/f.svm" -o "$tmp/f.hgd" -q || exit 1

if [ -x /usr/bin/time ]; then
    # Text: the parsers' chunks and rows (as convert holds them) and a few
    # blocks in flight; the old predict held the whole data set (188 MB).
    /usr/bin/time -f %M -o "$tmp/rss1" "$bin" predict "$tmp/m.hog" "$tmp/f.svm" -o "$tmp/p.txt" -q 2>"$tmp/log"
    rc=$?
    rss1=$(peak "$tmp/rss1")
    check "text: exit 0, 400,000 predictions, peak $((rss1 / 1024)) MiB under 128 MiB" '[ "$rc" -eq 0 ]' \
        '[ "$(wc -l <"$tmp/p.txt")" -eq 400000 ]' '[ "$rss1" -lt 131072 ]'
    # Twice the rows, through a pipe: the same peak, give or take 16 MiB.
    cat "$tmp/f.svm" "$tmp/f.svm" | /usr/bin/time -f %M -o "$tmp/rss2" "$bin" predict "$tmp/m.hog" - -q \
        >"$tmp/p2.txt" 2>"$tmp/log"
    rc=$?
    rss2=$(peak "$tmp/rss2")
    check "twice the input: peak $((rss2 / 1024)) MiB against $((rss1 / 1024)) MiB" '[ "$rc" -eq 0 ]' \
        '[ "$(wc -l <"$tmp/p2.txt")" -eq 800000 ]' '[ "$rss2" -lt $((rss1 + 16384)) ]'
    # .hgd: mapped, each block unmapped once scored (the old predict: 106 MB).
    /usr/bin/time -f %M -o "$tmp/rss3" "$bin" predict "$tmp/m.hog" "$tmp/f.hgd" -o "$tmp/p3.txt" -q 2>"$tmp/log"
    rc=$?
    rss3=$(peak "$tmp/rss3")
    check ".hgd: the same predictions, peak $((rss3 / 1024)) MiB under 48 MiB" '[ "$rc" -eq 0 ]' \
        'cmp -s "$tmp/p.txt" "$tmp/p3.txt"' '[ "$rss3" -lt 49152 ]'
else
    skip "peak memory: /usr/bin/time is not installed"
    skip "peak memory of twice the input: /usr/bin/time is not installed"
    "$bin" predict "$tmp/m.hog" "$tmp/f.svm" -o "$tmp/p.txt" -q
    "$bin" predict "$tmp/m.hog" "$tmp/f.hgd" -o "$tmp/p3.txt" -q
    check ".hgd: the same predictions as text" 'cmp -s "$tmp/p.txt" "$tmp/p3.txt"'
fi

# float32: four bytes a row, the values the text shows.
"$bin" predict "$tmp/m.hog" "$tmp/f.hgd" -o "$tmp/p.f32" --output-format f32 -q 2>"$tmp/log"
rc=$?
same=$(/usr/bin/python3 - "$tmp/p.f32" "$tmp/p.txt" <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
text = open(sys.argv[2]).read().split()
vals = struct.unpack("<%df" % (len(raw) // 4), raw)
# the text rounds the double to 6 decimals (5e-7), the float holds it to 2^-24 (6e-8)
print(int(len(vals) == len(text) and all(abs(v - float(t)) <= 5.7e-7 for v, t in zip(vals, text))))
PY
)
check "--output-format f32: a little-endian float per row, the text's values" '[ "$rc" -eq 0 ]' \
    '[ "$(wc -c <"$tmp/p.f32")" -eq 1600000 ]' '[ "$same" = 1 ]'
"$bin" predict "$tmp/m.hog" "$tmp/f.hgd" --output-format csv -q 2>"$tmp/log"
rc=$?
check "--output-format csv is refused" '[ "$rc" -eq 2 ]' 'grep -q "expected text or f32, found .csv." "$tmp/log"'

# Through a pipe, read as it comes and scored whenever the pipe has nothing
# more ready: the file's predictions, byte for byte, whether the writer
# keeps the pipe full (cat) or writes pieces of any size that cut lines.
cat "$tmp/f.svm" | "$bin" predict "$tmp/m.hog" - -q --output-format f32 >"$tmp/pp.f32" 2>"$tmp/log"
rc=$?
/usr/bin/python3 - "$tmp/f.svm" <<'PY' | "$bin" predict "$tmp/m.hog" - -q >"$tmp/pp.txt" 2>>"$tmp/log"
import random, sys
data, out, at, rng = open(sys.argv[1], "rb").read(), sys.stdout.buffer, 0, random.Random(5)
while at < len(data):
    n = rng.choice((1, 7, 100, 4096, 65536))
    out.write(data[at:at + n])
    out.flush()
    at += n
PY
rc2=$?
check "through a pipe: the file's predictions byte for byte, float32 and text" '[ "$rc" -eq 0 ]' '[ "$rc2" -eq 0 ]' \
    'cmp -s "$tmp/pp.f32" "$tmp/p.f32"' 'cmp -s "$tmp/pp.txt" "$tmp/p.txt"'

# A report alone: the metrics, no predictions formatted; -o - prints them too.
"$bin" predict "$tmp/m.hog" "$tmp/f.hgd" --report "$tmp/r.json" >"$tmp/out" 2>"$tmp/log"
rc=$?
rows=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["test"]["rows"])' "$tmp/r.json")
# The pass's time and rate: rows over seconds, as the stderr line gives them.
rate=$(/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(int(r["rows"] == 400000 and r["seconds"] > 0 and abs(r["rows_per_s"] * r["seconds"] - r["rows"]) < 1))' "$tmp/r.json")
check "--report without -o: metrics only, and the pass's rows/s" '[ "$rc" -eq 0 ]' '[ ! -s "$tmp/out" ]' \
    '[ "$rows" = 400000 ]' '[ "$rate" = 1 ]' \
    'grep -q "f.hgd: 400000 rows, accuracy 0\.[0-9]*, logloss 0\.[0-9]*, auc 0\.[0-9]*; [0-9.]* s, [0-9]* rows/s" "$tmp/log"'
"$bin" predict "$tmp/m.hog" "$tmp/f.hgd" --report "$tmp/r2.json" -o - -q >"$tmp/out" 2>"$tmp/log"
rc=$?
check "--report with -o -: the predictions on standard output as well" '[ "$rc" -eq 0 ]' \
    'cmp -s "$tmp/out" "$tmp/p.txt"' \
    '/usr/bin/python3 -c "import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(a[\"test\"] != b[\"test\"])" "$tmp/r.json" "$tmp/r2.json"'

# A bad line mid-file: its file and line, exit 1, the older output kept.
head -n 100000 "$tmp/f.svm" | awk 'NR == 60001 { print "1 7:x"; next } { print }' >"$tmp/bad.svm"
echo "older" >"$tmp/p.txt"
"$bin" predict "$tmp/m.hog" "$tmp/bad.svm" -o "$tmp/p.txt" -q 2>"$tmp/log"
rc=$?
check "a bad line at 60,001: named, exit 1, the older predictions stay" '[ "$rc" -eq 1 ]' \
    'grep -q "hogtrain: .*bad.svm:60001:[0-9]*: expected a number" "$tmp/log"' '[ "$(cat "$tmp/p.txt")" = older ]' \
    '[ "$(ls -A "$tmp" | grep -c tmp)" -eq 0 ]'

# Features beyond the model's: the note, and the rows are still predicted.
"$build/tools/gen_sparse" -n 2000 -d 100 -k 10 -s 5 -q -o "$tmp/small.svm" || exit 1
"$bin" train "$tmp/small.svm" -o "$tmp/small.hog" --epochs 1 -q || exit 1
head -n 1000 "$tmp/f.svm" >"$tmp/wide.svm"
"$bin" predict "$tmp/small.hog" "$tmp/wide.svm" -o "$tmp/w.txt" 2>"$tmp/log"
rc=$?
check "features beyond the model's: a note, every row predicted" '[ "$rc" -eq 0 ]' \
    'grep -q "note: .*wide.svm has features up to [0-9]*, the model [0-9]*: the extra ones are ignored" "$tmp/log"' \
    '[ "$(wc -l <"$tmp/w.txt")" -eq 1000 ]'

# Text hashed in training (-b 20): predict and info follow the model, and
# another -b is refused, naming both. Vowpal Wabbit text of the words of
# the libsvm rows: at the default 18 bits they would land elsewhere.
head -n 20000 "$tmp/f.svm" | awk '{ printf "%s |w", $1; for (i = 2; i <= NF; i++) { split($i, a, ":"); printf " x%s:%s", a[1], a[2] } print "" }' >"$tmp/h.vw"
head -n 15000 "$tmp/h.vw" >"$tmp/htr.vw"
tail -n 5000 "$tmp/h.vw" >"$tmp/hte.vw"
"$bin" train "$tmp/htr.vw" -b 20 -o "$tmp/h.hog" -q || exit 1
"$bin" predict "$tmp/h.hog" "$tmp/hte.vw" --report "$tmp/h1.json" -q 2>"$tmp/log"
rc1=$?
"$bin" predict "$tmp/h.hog" "$tmp/hte.vw" -b 20 --report "$tmp/h2.json" -q 2>>"$tmp/log"
rc2=$?
"$bin" predict "$tmp/h.hog" "$tmp/hte.vw" -b 18 -o "$tmp/h3.txt" 2>"$tmp/log3"
rc3=$?
same=$(/usr/bin/python3 -c 'import json, sys; a, b = (json.load(open(f))["test"] for f in sys.argv[1:]); print(int(a == b and a["auc"] > 0.8))' "$tmp/h1.json" "$tmp/h2.json")
check "text hashed with -b 20: predict hashes so unless told, info says it, -b 18 is refused" \
    '[ "$rc1" -eq 0 ]' '[ "$rc2" -eq 0 ]' '[ "$same" = 1 ]' '[ "$rc3" -eq 2 ]' '[ ! -e "$tmp/h3.txt" ]' \
    'grep -q "hash-bits 18: .*h.hog was trained on text hashed into 2^20 features (-b 20)" "$tmp/log3"' \
    '"$bin" info "$tmp/h.hog" | grep -q "text hashed *into 2^20 features"'
