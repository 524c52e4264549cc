#!/bin/sh
# check.sh: end-to-end test of the benchmark harness: quick threads and click-through studies and the data generators' promises, checked on their outputs.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh bench/check.sh [BUILD_DIR]   (make bench-check; about 15 s)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
tmp=$(mktemp -d /tmp/hogtrain-bench-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench-check: FAIL: $*" >&2; exit 1; }

# --list names every study file; an unknown study is refused with status 2.
n=$("$root/bench/run" --list | wc -l)
[ "$n" -eq "$(ls "$root"/bench/studies/*.sh | wc -l)" ] || fail "--list printed $n lines"
for s in threads nodes; do
    "$root/bench/run" --list | grep -q "^$s " || fail "--list does not name $s"
done
set +e
"$root/bench/run" --build "$build" nosuchstudy 2>"$tmp/err"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "no study 'nosuchstudy'" "$tmp/err" || fail "unknown study: status $rc"

# gen_dense: same seed, same bytes; a different seed, different data;
# multiclass labels are 0..c-1, all of them used.
"$build/tools/gen_dense" -n 300 -d 8 -c 3 -s 5 -q -o "$tmp/a.csv"
"$build/tools/gen_dense" -n 300 -d 8 -c 3 -s 5 -q -o "$tmp/b.csv"
"$build/tools/gen_dense" -n 300 -d 8 -c 3 -s 6 -q -o "$tmp/c.csv"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || fail "gen_dense is not reproducible"
! cmp -s "$tmp/a.csv" "$tmp/c.csv" || fail "gen_dense ignores the seed"
[ "$(cut -d, -f1 "$tmp/a.csv" | sort -u | tr '\n' ' ')" = "0 1 2 " ] || fail "gen_dense labels are not 0 1 2"
[ "$(awk -F, '{ print NF }' "$tmp/a.csv" | sort -u)" = 9 ] || fail "gen_dense rows are not label + 8 features"
# ...and the known model is learnable: softmax beats chance (1/3) by far.
"$build/hogtrain" train "$tmp/a.csv" --loss softmax --epochs 20 -o "$tmp/a.hog" --report "$tmp/a.json" -q
acc=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["train"]["accuracy"])' "$tmp/a.json")
awk -v a="$acc" 'BEGIN { exit !(a > 0.8) }' || fail "softmax on gen_dense data: accuracy $acc"

# gen_click: same seed, same bytes; another seed, other rows; --first
# continues the stream; 20 fields a row, in order, labels 0/1 about 31%
# positive; the libsvm rows are the ffm rows without their fields, the vw
# rows the same indices in 20 namespaces.
gc="$build/tools/gen_click"
"$gc" --rows 3000 --seed 5 -q -o "$tmp/a.ffm"
"$gc" --rows 3000 --seed 5 -q -o "$tmp/b.ffm"
"$gc" --rows 3000 --seed 6 -q -o "$tmp/c.ffm"
cmp -s "$tmp/a.ffm" "$tmp/b.ffm" || fail "gen_click is not reproducible"
! cmp -s "$tmp/a.ffm" "$tmp/c.ffm" || fail "gen_click ignores the seed"
"$gc" --rows 1000 --seed 5 -q -o "$tmp/head.ffm"
"$gc" --rows 2000 --seed 5 --first 1000 -q -o "$tmp/tail.ffm"
cat "$tmp/head.ffm" "$tmp/tail.ffm" | cmp -s - "$tmp/a.ffm" || fail "gen_click --first does not continue the rows"
awk '{ if (NF != 21 || ($1 != "0" && $1 != "1")) exit 1
       for (f = 0; f < 20; f++) if (split($(f + 2), t, ":") != 3 || t[1] != f || t[3] != "1") exit 1 }' \
    "$tmp/a.ffm" || fail "gen_click rows are not a 0/1 label and fields 0..19"
pos=$(awk '{ p += $1 } END { printf "%d", 1000 * p / NR }' "$tmp/a.ffm")
[ "$pos" -ge 280 ] && [ "$pos" -le 340 ] || fail "gen_click: $pos per mille positive, not about 310"
"$gc" --rows 3000 --seed 5 --format libsvm -q -o "$tmp/a.libsvm"
sed 's/ [0-9]*:\([0-9]*:1\)/ \1/g' "$tmp/a.ffm" | cmp -s - "$tmp/a.libsvm" || fail "gen_click libsvm rows are not the ffm rows"
"$gc" --rows 3000 --seed 5 --format vw -q -o "$tmp/a.vw"
awk '{ printf "%s", $1; for (i = 3; i <= NF; i += 2) printf " %s:1", $i; printf "\n" }' "$tmp/a.vw" |
    cmp -s - "$tmp/a.libsvm" || fail "gen_click vw rows are not the libsvm rows"
[ "$(awk '{ for (i = 2; i <= NF; i += 2) s = s $i } END { print length(s) / NR }' "$tmp/a.vw")" = 40 ] ||
    fail "gen_click vw rows do not have 20 namespaces"
# ...and the truth is field-aware: a linear model on the same features
# stays far above the truth's own log loss on held-out rows.
"$gc" --rows 20000 --seed 5 --format libsvm -o "$tmp/tr.libsvm" 2>"$tmp/gc.log"
"$gc" --rows 10000 --seed 5 --first 20000 --format libsvm -q -o "$tmp/te.libsvm"
truth=$(sed -n 's/.*the truth.s log loss \([0-9.]*\),.*/\1/p' "$tmp/gc.log")
"$build/hogtrain" train "$tmp/tr.libsvm" --loss logistic --epochs 10 --test "$tmp/te.libsvm" -o "$tmp/c.hog" \
    --report "$tmp/c.json" -q
lin=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["test"]["logloss"])' "$tmp/c.json")
awk -v l="$lin" -v t="$truth" 'BEGIN { exit !(t > 0 && l > t + 0.1) }' ||
    fail "gen_click: a linear model's test log loss $lin is not far above the truth's $truth"

# A quick threads study, one repetition, into a folder of its own.
out="$tmp/run"
"$root/bench/run" --quick --reps 1 --threads "1 2" --build "$build" --out "$out" threads >"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; fail "bench/run threads failed"; }
header=commit,study,case,tool,params,data,threads,rep,wall_s,train_s,examples_per_s,nnz_per_s,bytes_per_s,loss,test_metric,metric,time_to_target_s,peak_rss_kb,read_bytes
[ "$(head -n 1 "$out/results.csv")" = "$header" ] || fail "results.csv header: $(head -n 1 "$out/results.csv")"
# 3 cases (logistic, softmax, mf) x (2 thread counts + the parallel limit at
# 2: two pinned one-thread runs at once) x 1 repetition; warm-ups not recorded.
[ "$(tail -n +2 "$out/results.csv" | wc -l)" -eq 9 ] || fail "results.csv has $(tail -n +2 "$out/results.csv" | wc -l) runs, not 9"
/usr/bin/python3 - "$out/results.csv" <<'PY' || fail "results.csv values"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cases = ("logistic", "softmax", "mf")
assert {(r["case"], r["threads"]) for r in rows if r["tool"] == "hogtrain"} == {(c, t) for c in cases for t in "12"}, rows
assert {(r["case"], r["threads"]) for r in rows if r["tool"] == "independent"} == {(c, "2") for c in cases}, rows
for r in rows:
    assert r["rep"] == "1" and r["study"] == "threads" and r["tool"] in ("hogtrain", "independent"), r
    assert float(r["examples_per_s"]) > 0 and float(r["wall_s"]) > 0 and int(r["peak_rss_kb"]) > 0 and int(r["read_bytes"]) >= 0, r
    if r["case"] == "mf":  # ratings of 1..5 around 3.5: a held-out RMSE well under the spread
        assert r["metric"] == "test_rmse" and 0 < float(r["test_metric"]) < 1.5, r
    else:
        assert r["metric"] == "test_logloss" and 0 < float(r["test_metric"]) < 0.7, r
PY
grep -q '^membw_read,1,' "$out/limits.csv" || fail "limits.csv has no memory bandwidth"
grep -q '^file_read_warm,1,[0-9]' "$out/limits.csv" || fail "limits.csv has no warm file read rate"
for k in cpu cores numa memory kernel compiler commit; do
    grep -q "^$k: ." "$out/machine.txt" || fail "machine.txt has no $k"
done
grep -q '^| logistic | 2 | 1 | ' "$out/table.md" || fail "table.md has no logistic 2-thread row"
grep -q '^| mf | 2 | 1 | ' "$out/table.md" || fail "table.md has no mf 2-thread row"
# the time to the target against the parallel limit: speedup, limit, efficiency
# (a run that did not reach the target in its 5 epochs has no speedup: "-")
grep -Eq '^\| logistic \| 2 \| [0-9.]+ \| [01] of 1 \| .* \| ([0-9.]+x|-) \| [0-9.]+x \| ([0-9.]+|-) \|$' "$out/table.md" ||
    fail "table.md has no logistic 2-thread efficiency row"
if command -v gnuplot >/dev/null 2>&1; then
    for p in threads-speedup threads-efficiency threads-loss-logistic threads-loss-softmax; do
        [ "$(head -c 4 "$out/plots/$p.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "plots/$p.png is not a PNG"
    done
else
    echo "bench-check: gnuplot not installed: plots not checked (sh tools/install-deps.sh)" >&2
fi
# A quick click-through study: hogtrain's row at least (the peers join when
# found), its curve per epoch, the target and the table.
out="$tmp/fm"
"$root/bench/run" --quick --reps 1 --threads "1 2" --build "$build" --data-dir "$tmp/data" --out "$out" fm \
    >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; fail "bench/run fm failed"; }
/usr/bin/python3 - "$out/results.csv" "$out/curves.csv" <<'PY' || fail "fm: results.csv or curves.csv values"
import csv, sys
every = list(csv.DictReader(open(sys.argv[1])))
fm = [r for r in every if r["tool"] == "hogtrain FM"]
assert sorted(r["threads"] for r in fm) == ["1", "2"], every
rows = [r for r in every if r["tool"] == "hogtrain linear"]
assert sorted(r["threads"] for r in rows) == ["1", "2"], rows
# on data whose signal sits in pairs of fields, the factorisation machine's best epoch beats the linear
# model's (on these 30,000 rows it overfits after its first: its default L2 suits a million)
best = lambda tool: min(float(c["test_loss"]) for c in csv.DictReader(open(sys.argv[2])) if c["tool"] == tool)
assert best("hogtrain FM") < best("hogtrain linear"), (best("hogtrain FM"), best("hogtrain linear"))
for r in rows:
    assert r["study"] == "fm" and r["metric"] == "test_logloss" and 0.3 < float(r["test_metric"]) < 0.7, r
curve = [c for c in csv.DictReader(open(sys.argv[2])) if c["tool"] == "hogtrain linear" and c["threads"] == "1"]
assert [c["epoch"] for c in curve] == ["1", "2", "3"], curve
assert all(float(a["seconds"]) < float(b["seconds"]) for a, b in zip(curve, curve[1:])), curve
PY
grep -q '^Target: test logloss 0\.[0-9]* ' "$out/table.md" || fail "fm: table.md has no target"
grep -Eq '^\| hogtrain linear \| 2 \| 1 \| 0\.[0-9]{4} \| ' "$out/table.md" || fail "fm: table.md has no hogtrain 2-thread row"
echo "bench-check: passed"
