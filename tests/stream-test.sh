#!/bin/sh
# stream-test.sh: hogtrain train --epochs 1 on a pipe trains in one pass, linear models and matrix factorisation alike: memory flat whatever the stream's length, the same model and progressive validation as the same rows from a file, snapshots and signals on a quiet stream, a label the first rows lacked named by its line, several epochs still read whole.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/stream-test.sh   (prints TAP lines; run by make test)
# The peak resident memory comes from --report (peak_rss_bytes, the
# process's getrusage maximum); the absolute bound is checked in normal
# builds only (a sanitizer's shadow memory and quarantine add their own).
set -u
. "$(dirname "$0")/tap.sh"
tmp=$(mktemp -d /tmp/hog-stream-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
# stream K [FILE]: the rows of FILE (part.svm) K times over, through a pipe
stream() {
    i=0
    while [ "$i" -lt "$1" ]; do
        cat "${2:-$tmp/part.svm}"
        i=$((i + 1))
    done
}

# 60,000 rows of 40 features among 2^20 (31 MB of text); a model of 2^20
# features, as the issue's target has.
"$build/tools/gen_sparse" -n 65000 -d 1048576 -k 40 -s 3 --noise 0.05 -q -o "$tmp/all.svm" || exit 1
head -n 60000 "$tmp/all.svm" >"$tmp/part.svm"
tail -n 5000 "$tmp/all.svm" >"$tmp/test.svm"

# ---- memory: flat from 1 to 6 times the rows ----
stream 1 | "$bin" train - -o "$tmp/a.hog" --epochs 1 -q --report "$tmp/a.json" 2>"$tmp/a.log"
rc1=$?
stream 6 | "$bin" train - -o "$tmp/b.hog" --epochs 1 -q --report "$tmp/b.json" 2>"$tmp/b.log"
rc6=$?
rss1=$(json "$tmp/a.json" "d['peak_rss_bytes'] >> 20")
rss6=$(json "$tmp/b.json" "d['peak_rss_bytes'] >> 20")
rows6=$(json "$tmp/b.json" "d['train']['rows']")
if [ "$rc1" -eq 0 ] && [ "$rc6" -eq 0 ] && [ "$rows6" = 360000 ] && [ $((rss6 - rss1)) -lt 32 ]; then
    ok "one pass over a pipe: peak RSS $rss1 MiB for 60,000 rows, $rss6 MiB for 360,000 (186 MB of text)"
else
    not_ok "one pass over a pipe: exit $rc1/$rc6, $rows6 rows, peak RSS $rss1 MiB then $rss6 MiB" "$tmp/b.log"
fi
case $build in
*asan* | *tsan* | *ubsan*) ;;
*)
    if [ -n "$rss6" ] && [ "$rss6" -lt 128 ]; then
        ok "one pass over a pipe: peak RSS $rss6 MiB, under 128 MiB with a 2^20-feature model"
    else
        not_ok "one pass over a pipe: peak RSS $rss6 MiB, not under 128 MiB"
    fi ;;
esac

# ---- the same rows from a file: the same model, the same progressive metrics (one thread) ----
one="--epochs 1 --threads 1 --bind 0 --test $tmp/test.svm"
stream 1 | "$bin" train - -o "$tmp/p.hog" $one --report "$tmp/p.json" 2>"$tmp/p.log"
rcp=$?
"$bin" train "$tmp/part.svm" -o "$tmp/f.hog" $one --report "$tmp/f.json" 2>"$tmp/f.log"
rcf=$?
pl=$(json "$tmp/p.json" "repr(d['train']['loss']), repr(d['test']['logloss']), d['train_metrics']")
fl=$(json "$tmp/f.json" "repr(d['train']['loss']), repr(d['test']['logloss']), d['train_metrics']")
curve=$(json "$tmp/p.json" "[(c['rows'], repr(c['all']['loss'])) for c in d['progressive']]")
fcurve=$(json "$tmp/f.json" "[(c['rows'], repr(c['all']['loss'])) for c in d['progressive']]")
last=$(json "$tmp/p.json" "d['progressive'][-1]['rows'] == d['train']['rows'] and repr(d['progressive'][-1]['all']['loss']) == repr(d['train']['loss'])")
if [ "$rcp" -eq 0 ] && [ "$rcf" -eq 0 ] && [ -n "$pl" ] && [ "$pl" = "$fl" ] && [ "$curve" = "$fcurve" ] &&
    [ "$last" = True ] && grep -q "in one pass" "$tmp/p.log"; then
    ok "one thread: a pipe's progressive loss and test logloss equal the file's ($pl)"
else
    not_ok "one thread: pipe $pl against file $fl; curve $curve against $fcurve; last point $last" "$tmp/p.log" "$tmp/f.log"
fi
doubling=$(json "$tmp/p.json" "all(b['rows'] >= 2 * a['rows'] for a, b in zip(d['progressive'][:-2], d['progressive'][1:-1]))")
if [ "$doubling" = True ] && grep -q "^progressive: 16384 rows  loss" "$tmp/p.log" &&
    grep -q "^progressive: 60000 rows" "$tmp/p.log" && grep -q "accuracy" "$tmp/p.log"; then
    ok "the progressive loss is printed at doubling rows and at the end, and kept in the report"
else
    not_ok "progressive lines or curve ($doubling)" "$tmp/p.log"
fi

# ---- the model: as good as reading the file whole first ----
"$bin" train "$tmp/part.svm" -o "$tmp/w.hog" $one --stream 0 --report "$tmp/w.json" 2>"$tmp/w.log"
close=$(json "$tmp/p.json" "abs(d['test']['accuracy'] - $(json "$tmp/w.json" "d['test']['accuracy']")) < 0.02")
if [ "$close" = True ]; then
    ok "one pass over a pipe: test accuracy within 0.02 of the file read whole first"
else
    not_ok "one pass: test accuracy $(json "$tmp/p.json" "d['test']['accuracy']") against $(json "$tmp/w.json" "d['test']['accuracy']")" "$tmp/w.log"
fi

# ---- a label the first rows lacked: an error naming its line ----
"$py" -c "
import random
r = random.Random(1)
for i in range(60000):
    y = 2 if i == 50000 else i % 2
    print(y, ' '.join('%d:1' % j for j in sorted(r.sample(range(1, 1000), 5))))
" >"$tmp/classes.svm"
(echo "# a comment line"; cat "$tmp/classes.svm") | "$bin" train - -o "$tmp/c.hog" --epochs 1 --loss softmax -q 2>"$tmp/c.log"
rc=$?
if [ "$rc" -eq 1 ] && grep -q -- ":50002: label 2 is not one of the 2 label values the first rows had (0, 1)" "$tmp/c.log" &&
    [ ! -e "$tmp/c.hog" ]; then
    ok "one pass: a label the first rows lacked stops the run naming its line"
else
    not_ok "one pass, a new label at line 50002: exit $rc" "$tmp/c.log"
fi

# ---- several epochs over a pipe: read whole first, as before ----
stream 1 | "$bin" train - -o "$tmp/e.hog" --epochs 2 2>"$tmp/e.log"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "reading .* whole before training: the input is a pipe" "$tmp/e.log" &&
    grep -q "^epoch 2/2" "$tmp/e.log"; then
    ok "two epochs over a pipe: read whole first, then trained"
else
    not_ok "two epochs over a pipe: exit $rc" "$tmp/e.log"
fi

# ---- a model kind beside the linear one: a factorisation machine in one pass ----
stream 1 | "$bin" train - -o "$tmp/fm.hog" --model fm --epochs 1 -q --report "$tmp/fm.json" 2>"$tmp/fm.log"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(json "$tmp/fm.json" "d['train_metrics']")" = progressive ] &&
    "$bin" predict "$tmp/fm.hog" "$tmp/test.svm" -o "$tmp/fm.pred" -q 2>>"$tmp/fm.log"; then
    ok "a factorisation machine trains on a pipe in one pass, and its model predicts"
else
    not_ok "factorisation machine in one pass: exit $rc" "$tmp/fm.log"
fi
# ---- models while it runs: a reader of the model file never finds less than a whole model ----
# Snapshots every 20,000 rows of 6 x 60,000 (one a window, 16,384 rows);
# `hogtrain info` reads the file in a loop while the run goes on.
stream 6 | "$bin" train - -o "$tmp/s.hog" --epochs 1 --threads 2 --save-every 20000 2>"$tmp/s.log" &
trainer=$!
reads=0 bad=0
while kill -0 "$trainer" 2>/dev/null; do
    if [ -e "$tmp/s.hog" ]; then
        if "$bin" info "$tmp/s.hog" >"$tmp/s.info" 2>&1; then
            reads=$((reads + 1))
        else
            bad=$((bad + 1))
            cp "$tmp/s.info" "$tmp/s.bad"
        fi
    fi
done
wait "$trainer"
rc=$?
snaps=$(grep -c "snapshot after" "$tmp/s.log")
rows=$("$bin" info "$tmp/s.hog" 2>/dev/null | sed -n 's/^training rows *//p')
if [ "$rc" -eq 0 ] && [ "$snaps" -ge 8 ] && [ "$bad" -eq 0 ] && [ "$rows" = 360000 ]; then
    ok "--save-every 20000: $snaps snapshots while 360,000 rows trained, $reads whole models read meanwhile, none torn"
else
    not_ok "--save-every: exit $rc, $snaps snapshots, $reads reads, $bad bad ones, final rows '$rows'" "$tmp/s.log" \
        "$tmp/s.bad"
fi

# ---- a quiet pipe: snapshots of the windows trained, SIGTERM writes the model of every row read ----
# 60,000 rows, then the writer stays silent with the FIFO open: the run
# trains its whole windows (16,384 rows), then, the stream quiet for a
# second, the blocks it holds; a SIGTERM must end its read (a read()
# waiting on the quiet pipe), learn every row read and write them.
mkfifo "$tmp/quiet"
"$bin" train "$tmp/quiet" -o "$tmp/q.hog" --epochs 1 --threads 2 --save-every 10000 2>"$tmp/q.log" &
trainer=$!
exec 3>"$tmp/quiet"
cat "$tmp/part.svm" >&3
printf '1 5:0.5 7:' >&3 # a row cut short: the stop leaves it out
wait_for "snapshot after 32768 rows" "$tmp/q.log" 60
snap_rows=$("$bin" info "$tmp/q.hog" 2>/dev/null | sed -n 's/^training rows *//p')
kill -TERM "$trainer"
wait "$trainer"
rc=$?
exec 3>&-
rows=$("$bin" info "$tmp/q.hog" 2>/dev/null | sed -n 's/^training rows *//p')
if [ "$snap_rows" -ge 32768 ] 2>/dev/null && [ "$snap_rows" -lt 60000 ] && [ "$rc" -eq 0 ] && [ "$rows" = 60000 ] &&
    grep -q "interrupted: the read stopped after 60000 rows" "$tmp/q.log" &&
    grep -q "the read was stopped" "$tmp/q.log" &&
    "$bin" predict "$tmp/q.hog" "$tmp/test.svm" -o "$tmp/q.pred" -q 2>>"$tmp/q.log"; then
    ok "a quiet pipe: a snapshot of $snap_rows rows meanwhile; SIGTERM ends the read and writes the model of all 60,000 (exit 0)"
else
    not_ok "a quiet pipe and SIGTERM: snapshot of '$snap_rows' rows, exit $rc, final rows '$rows'" "$tmp/q.log"
fi

# ---- SIGUSR1 writes one at once; kill -9 leaves the last one whole ----
rm -f "$tmp/q.hog" "$tmp/quiet"
mkfifo "$tmp/quiet"
"$bin" train "$tmp/quiet" -o "$tmp/u.hog" --epochs 1 --threads 2 2>"$tmp/u.log" &
trainer=$!
exec 3>"$tmp/quiet"
cat "$tmp/part.svm" >&3
wait_for "^progressive: 32768 rows" "$tmp/u.log" 60
kill -USR1 "$trainer"
wait_for "snapshot after" "$tmp/u.log" 60
kill -9 "$trainer"
wait "$trainer" 2>/dev/null
exec 3>&-
rows=$("$bin" info "$tmp/u.hog" 2>/dev/null | sed -n 's/^training rows *//p')
said=$(sed -n 's/.*snapshot after \([0-9]*\) rows.*/\1/p' "$tmp/u.log" | tail -n 1)
left=$(ls -A "$tmp" | grep -c '^\.\|u\.hog\.')
if [ -n "$rows" ] && [ "$rows" = "$said" ] && [ "$rows" -ge 32768 ] && [ "$left" -eq 0 ]; then
    ok "SIGUSR1 writes a snapshot at once ($rows rows); kill -9 after it leaves that model whole, and no stray file"
else
    not_ok "SIGUSR1 then kill -9: a model of '$rows' rows (the log: '$said'), $left stray files" "$tmp/u.log"
fi
# ---- a writer that dies inside a row: an error naming the line, and the last snapshot kept ----
(cat "$tmp/part.svm"; printf '1 5:0.5 7:') | "$bin" train - -o "$tmp/w.hog" --epochs 1 --threads 2 \
    --save-every 10000 2>"$tmp/w.log"
rc=$?
rows=$("$bin" info "$tmp/w.hog" 2>/dev/null | sed -n 's/^training rows *//p')
said=$(sed -n 's/.*snapshot after \([0-9]*\) rows.*/\1/p' "$tmp/w.log" | tail -n 1)
if [ "$rc" -eq 1 ] && grep -q "/dev/stdin:60001:.*expected a newline, found the end of the stream" "$tmp/w.log" &&
    [ -n "$rows" ] && [ "$rows" = "$said" ]; then
    ok "a writer that dies inside row 60,001: exit 1 naming its line, and -o keeps the last snapshot ($rows rows)"
else
    not_ok "a writer that dies inside a row: exit $rc, a model of '$rows' rows, the last snapshot '$said'" "$tmp/w.log"
fi
# ---- matrix factorisation's predict on a FIFO: each pair answered as it comes ----
awk 'BEGIN { for (k = 0; k < 3000; k++) printf "u%d,i%d,%d\n", k % 50, k % 40, 1 + (k * 7) % 5 }' >"$tmp/r.csv"
"$bin" train "$tmp/r.csv" --model mf -o "$tmp/mf.hog" -q 2>"$tmp/mf.log"
rm -f "$tmp/quiet"
mkfifo "$tmp/quiet"
"$bin" predict "$tmp/mf.hog" "$tmp/quiet" -o - >"$tmp/mf.pred" 2>>"$tmp/mf.log" &
scorer=$!
exec 3>"$tmp/quiet"
echo "u1,i1" >&3
wait_for "." "$tmp/mf.pred" 10
first=$(wc -l <"$tmp/mf.pred")
echo "u2 i2" >&3
exec 3>&-
wait "$scorer"
rc=$?
whole=$("$bin" predict "$tmp/mf.hog" - -o - 2>/dev/null <<EOF2
u1,i1
u2 i2
EOF2
)
if [ "$first" -eq 1 ] && [ "$rc" -eq 0 ] && [ "$(cat "$tmp/mf.pred")" = "$whole" ]; then
    ok "matrix factorisation's predict on a FIFO answers a pair written alone before the next comes, as from a file"
else
    not_ok "MF predict on a FIFO: $first lines before the second pair, exit $rc, '$(cat "$tmp/mf.pred")' against '$whole'" "$tmp/mf.log"
fi

# ---- feature crosses of hashed text in one pass: a pipe's model the file's; unhashed, a pipe is refused ----
head -n 10000 "$tmp/part.svm" >"$tmp/x.svm"
cross="--epochs 1 --threads 1 --bind 0 -b 20 --interactions :: --cross-bits 18 --test $tmp/test.svm"
cat "$tmp/x.svm" | "$bin" train - $cross -o "$tmp/xp.hog" --report "$tmp/xp.json" 2>"$tmp/xp.log"
rcp=$?
"$bin" train "$tmp/x.svm" $cross -o "$tmp/xf.hog" --report "$tmp/xf.json" 2>"$tmp/xf.log"
rcf=$?
xp=$(json "$tmp/xp.json" "repr(d['train']['loss']), repr(d['test']['logloss'])")
xf=$(json "$tmp/xf.json" "repr(d['train']['loss']), repr(d['test']['logloss'])")
cat "$tmp/x.svm" | "$bin" train - --epochs 1 --interactions :: -o "$tmp/xu.hog" 2>"$tmp/xu.log"
rcu=$?
if [ "$rcp" -eq 0 ] && [ "$rcf" -eq 0 ] && [ "$xp" = "$xf" ] && grep -q "in one pass" "$tmp/xp.log" &&
    "$bin" info "$tmp/xp.hog" | grep -q "^features *1310720" && [ "$rcu" -ne 0 ] && [ ! -e "$tmp/xu.hog" ] &&
    grep -q "hash it: --hash-bits" "$tmp/xu.log"; then
    ok "crosses of hashed text in one pass: a pipe's progressive loss and test logloss equal the file's ($xp); unhashed, a pipe is refused"
else
    not_ok "crosses in one pass: pipe $xp against file $xf (exit $rcp/$rcf); unhashed pipe: exit $rcu" "$tmp/xp.log" "$tmp/xu.log"
fi

# ---- matrix factorisation in one pass: memory flat, a pipe's model the file's ----
"$build/tools/gen_ratings" -u 20000 -i 4000 -k 8 -n 1000000 -s 4 -o "$tmp/rall.txt" -q || exit 1
head -n 950000 "$tmp/rall.txt" >"$tmp/rpart.txt"
tail -n 50000 "$tmp/rall.txt" >"$tmp/rtest.txt"
mf="--model mf --rank 8 --epochs 1"
stream 1 "$tmp/rpart.txt" | "$bin" train - $mf -o "$tmp/r1.mf" -q --report "$tmp/r1.json" 2>"$tmp/r1.log"
rc1=$?
stream 6 "$tmp/rpart.txt" | "$bin" train - $mf -o "$tmp/r6.mf" -q --report "$tmp/r6.json" 2>"$tmp/r6.log"
rc6=$?
rss1=$(json "$tmp/r1.json" "d['peak_rss_bytes'] >> 20")
rss6=$(json "$tmp/r6.json" "d['peak_rss_bytes'] >> 20")
n6=$(json "$tmp/r6.json" "d['train_ratings']")
if [ "$rc1" -eq 0 ] && [ "$rc6" -eq 0 ] && [ "$n6" = 5700000 ] && [ $((rss6 - rss1)) -lt 16 ]; then
    ok "matrix factorisation in one pass over a pipe: peak RSS $rss1 MiB for 950,000 ratings, $rss6 MiB for 5,700,000"
else
    not_ok "MF one pass over a pipe: exit $rc1/$rc6, $n6 ratings, peak RSS $rss1 MiB then $rss6 MiB" "$tmp/r6.log"
fi
one="$mf --threads 1 --bind 0 --test $tmp/rtest.txt"
stream 1 "$tmp/rpart.txt" | "$bin" train - $one -o "$tmp/rp.mf" --report "$tmp/rp.json" 2>"$tmp/rp.log"
rcp=$?
"$bin" train "$tmp/rpart.txt" $one -o "$tmp/rf.mf" --report "$tmp/rf.json" 2>"$tmp/rf.log"
rcf=$?
"$bin" info "$tmp/rp.mf" | grep -v -e "^training time" -e "matrix factorisation model" >"$tmp/rp.info"
"$bin" info "$tmp/rf.mf" | grep -v -e "^training time" -e "matrix factorisation model" >"$tmp/rf.info"
pl=$(json "$tmp/rp.json" "repr(d['train_rmse']), repr(d['test_rmse']), d['progressive'][-1]['ratings']")
fl=$(json "$tmp/rf.json" "repr(d['train_rmse']), repr(d['test_rmse']), d['progressive'][-1]['ratings']")
if [ "$rcp" -eq 0 ] && [ "$rcf" -eq 0 ] && [ "$pl" = "$fl" ] && cmp -s "$tmp/rp.info" "$tmp/rf.info" &&
    grep -q "^progressive: 950000 ratings  rmse" "$tmp/rp.log"; then
    ok "MF one pass, one thread: a pipe's model, progressive and test rmse equal the file's ($pl)"
else
    not_ok "MF one pass: pipe $pl against file $fl" "$tmp/rp.log" "$tmp/rf.log"
fi

# ---- MF on a quiet FIFO: snapshots meanwhile, SIGUSR1 one at once, SIGTERM the model of every rating read ----
rm -f "$tmp/quiet"
mkfifo "$tmp/quiet"
"$bin" train "$tmp/quiet" $mf --threads 2 -o "$tmp/rq.mf" --save-every 100000 2>"$tmp/rq.log" &
trainer=$!
exec 3>"$tmp/quiet"
head -n 300000 "$tmp/rpart.txt" >&3
wait_for "snapshot after" "$tmp/rq.log" 60
snap=$("$bin" info "$tmp/rq.mf" 2>/dev/null | sed -n 's/^training ratings *//p')
printf 'u1 i2' >&3 # a line cut short: the stop leaves it out
sleep 1
kill -USR1 "$trainer"
sleep 1
kill -TERM "$trainer"
wait "$trainer"
rc=$?
exec 3>&-
rows=$("$bin" info "$tmp/rq.mf" 2>/dev/null | sed -n 's/^training ratings *//p')
if [ "$snap" -ge 100000 ] 2>/dev/null && [ "$rc" -eq 0 ] && [ "$rows" = 300000 ] &&
    grep -q "snapshot after 300000 ratings" "$tmp/rq.log" &&
    grep -q "interrupted: the read stopped after 300000 ratings" "$tmp/rq.log" &&
    grep -q "the read was stopped inside this line" "$tmp/rq.log" &&
    "$bin" predict "$tmp/rq.mf" "$tmp/rtest.txt" -o "$tmp/rq.pred" 2>>"$tmp/rq.log"; then
    ok "MF on a quiet FIFO: a snapshot of $snap ratings meanwhile; SIGTERM ends the read and writes all 300,000 (exit 0)"
else
    not_ok "MF on a quiet FIFO and SIGTERM: snapshot '$snap', exit $rc, final ratings '$rows'" "$tmp/rq.log"
fi

# ---- MF: a writer that dies inside a line: the error names it, -o keeps the last snapshot; --on-error skip ----
(head -n 300000 "$tmp/rpart.txt"; printf 'u1 i2') | "$bin" train - $mf --threads 2 -o "$tmp/rw.mf" \
    --save-every 100000 2>"$tmp/rw.log"
rc=$?
rows=$("$bin" info "$tmp/rw.mf" 2>/dev/null | sed -n 's/^training ratings *//p')
said=$(sed -n 's/.*snapshot after \([0-9]*\) ratings.*/\1/p' "$tmp/rw.log" | tail -n 1)
(head -n 1000 "$tmp/rpart.txt"; echo "u1 i2 x"; head -n 1000 "$tmp/rtest.txt") |
    "$bin" train - $mf -o "$tmp/rs.mf" --on-error skip 2>"$tmp/rs.log"
rcs=$?
kept=$("$bin" info "$tmp/rs.mf" 2>/dev/null | sed -n 's/^training ratings *//p')
if [ "$rc" -eq 1 ] && grep -q "/dev/stdin:300001:6: expected a separator and a rating" "$tmp/rw.log" &&
    [ -n "$rows" ] && [ "$rows" = "$said" ] && [ "$rcs" -eq 0 ] && [ "$kept" = 2000 ] &&
    grep -q "skipped 1 malformed line; the first:" "$tmp/rs.log" && grep -q "/dev/stdin:1001:7:" "$tmp/rs.log"; then
    ok "MF one pass: a writer that dies inside line 300,001 is named and -o keeps the last snapshot ($rows ratings); --on-error skip counts and names a bad line"
else
    not_ok "MF writer dies: exit $rc, a model of '$rows' ratings, the last snapshot '$said'; skip: exit $rcs, '$kept' kept" \
        "$tmp/rw.log" "$tmp/rs.log"
fi
echo "1..$n"
