#!/bin/sh
# checkpoint-test.sh: hogtrain train --checkpoint and --resume, and the signals: SIGINT and SIGTERM stop a run with its checkpoint and no model, a second signal ends it at once, and kill -9 at random instants never leaves a damaged checkpoint or a stray file.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/checkpoint-test.sh [TRIALS [SEED]]   (prints TAP lines; run by make test)
# TRIALS (default 10) is the number of kill -9 trials of the crash harness;
# SEED (default 1) picks their instants. Every run has one worker thread,
# so a resumed run must reach the uninterrupted run's test loss exactly.
set -u
. "$(dirname "$0")/tap.sh"
trials=${1:-10}
seed=${2:-1}
tmp=$(mktemp -d /tmp/hog-ckpt-XXXXXX)
out=$tmp/out # where the runs write: nothing else may show up there
mkdir "$out"
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
# stray: the files in $out other than those named (none: empty)
stray() {
    ls -A "$out" | grep -v -x -F -e "${1:-/}" -e "${2:-/}" -e "${3:-/}" | tr '\n' ' '
}
clean() { rm -f "$out"/* "$out"/.[!.]* 2>/dev/null; }

# Epochs of 150,000 rows, tested on 5,000: a signal lands in an epoch more
# often than between two.
"$build/tools/gen_sparse" -n 155000 -d 5000 -k 20 -s 7 --noise 0.05 -q -o "$tmp/all.svm" || exit 1
head -n 150000 "$tmp/all.svm" >"$tmp/train.svm"
tail -n 5000 "$tmp/all.svm" >"$tmp/test.svm"
"$bin" convert "$tmp/train.svm" -o "$tmp/train.hgd" -q || exit 1
common="$tmp/train.hgd --test $tmp/test.svm --threads 1 --bind 0 --epochs 20"
"$bin" train $common -q -o "$tmp/ref.hog" --report "$tmp/ref.json" || exit 1
ref=$(json "$tmp/ref.json" "d['test']['logloss']")

# train_bg LOG ARGS...: a run of the common settings in the background (pid).
train_bg() {
    log=$1
    shift
    "$bin" train $common "$@" >"$log" 2>&1 &
    pid=$!
}

# ---- SIGINT mid-run: its checkpoint, no model, the command to go on ----
clean
train_bg "$tmp/int.log" -o "$out/m.hog" --checkpoint "$out/c.ckpt"
wait_for "^epoch 3/" "$tmp/int.log"
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
resume=$(sed -n 's/^hogtrain: to go on from it: hogtrain //p' "$tmp/int.log")
if [ "$rc" -eq 130 ] && [ -s "$out/c.ckpt" ] && [ ! -e "$out/m.hog" ] && [ -z "$(stray c.ckpt)" ] &&
    grep -q -E "SIGINT: interrupted (in|before) epoch [0-9]+ of 20" "$tmp/int.log" && grep -q "no model was written" "$tmp/int.log" &&
    [ -n "$resume" ] && [ "${resume%--resume}" != "$resume" ]; then
    ok "SIGINT mid-run: exit 130, the checkpoint written, no model, nothing stray, the command to go on printed"
else
    not_ok "SIGINT mid-run: exit $rc, files: $(ls -A "$out" | tr '\n' ' ')" "$tmp/int.log"
fi

# ---- the printed command goes on to the uninterrupted run's test loss ----
eval "\"$bin\" $resume --report \"$tmp/res.json\"" >"$tmp/res.log" 2>&1
rc=$?
got=$(json "$tmp/res.json" "d['test']['logloss']")
if [ "$rc" -eq 0 ] && [ -s "$out/m.hog" ] && [ "$got" = "$ref" ] && [ -z "$(stray c.ckpt m.hog)" ] &&
    grep -q "resuming from" "$tmp/res.log"; then
    ok "--resume: exit 0, test logloss $got, as the run never interrupted"
else
    not_ok "--resume: exit $rc, test logloss $got against $ref" "$tmp/res.log"
fi

# ---- resumed once more after the end: nothing left to train, the same model ----
"$bin" train $common -q -o "$out/again.hog" --checkpoint "$out/c.ckpt" --resume --report "$tmp/again.json"
rc=$?
got=$(json "$tmp/again.json" "d['test']['logloss']")
if [ "$rc" -eq 0 ] && [ "$got" = "$ref" ] && [ "$(json "$tmp/again.json" "d['epochs_run']")" = 20 ]; then
    ok "--resume of a finished run: the same model (test logloss $got)"
else
    not_ok "--resume of a finished run: exit $rc, test logloss $got against $ref"
fi

# ---- SIGTERM: 143 ----
clean
train_bg "$tmp/term.log" -o "$out/m.hog" --checkpoint "$out/c.ckpt" --checkpoint-every 0.2
wait_for "^epoch 2/" "$tmp/term.log"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
if [ "$rc" -eq 143 ] && [ -s "$out/c.ckpt" ] && [ ! -e "$out/m.hog" ] && [ -z "$(stray c.ckpt)" ] &&
    grep -q "SIGTERM: interrupted" "$tmp/term.log"; then
    ok "SIGTERM mid-run: exit 143, the checkpoint written, no model, nothing stray"
else
    not_ok "SIGTERM mid-run: exit $rc, files: $(ls -A "$out" | tr '\n' ' ')" "$tmp/term.log"
fi

# ---- other parameters are refused by name ----
"$bin" train $common -q --step 0.2 -o "$out/m.hog" --checkpoint "$out/c.ckpt" --resume 2>"$tmp/other.log"
rc=$?
if [ "$rc" -eq 1 ] && grep -q -- "--step 2, this run has --step 0.2" "$tmp/other.log" && [ ! -e "$out/m.hog" ]; then
    ok "--resume with another --step: refused, naming both values"
else
    not_ok "--resume with another --step: exit $rc" "$tmp/other.log"
fi

# ---- options that need --checkpoint, or do not take it ----
"$bin" train $common -q -o "$out/m.hog" --resume 2>"$tmp/opt1.log"
rc1=$?
"$bin" train $common -q -o "$out/m.hog" --checkpoint "$out/x.ckpt" --nodes 2 2>"$tmp/opt2.log"
rc2=$?
if [ "$rc1" -eq 2 ] && grep -q -- "--resume needs --checkpoint FILE" "$tmp/opt1.log" && [ "$rc2" -eq 2 ] &&
    grep -q "takes no checkpoint" "$tmp/opt2.log" && [ ! -e "$out/x.ckpt" ]; then
    ok "--resume without --checkpoint, and --checkpoint with --nodes: refused (exit 2)"
else
    not_ok "--resume alone: exit $rc1; --checkpoint --nodes 2: exit $rc2" "$tmp/opt1.log" "$tmp/opt2.log"
fi

# ---- no checkpoint: SIGINT still stops the run cleanly ----
clean
train_bg "$tmp/none.log" -o "$out/m.hog"
wait_for "^epoch 2/" "$tmp/none.log"
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
if [ "$rc" -eq 130 ] && [ -z "$(stray)" ] && grep -q "nothing was saved" "$tmp/none.log" &&
    grep -q -- "--checkpoint FILE keeps" "$tmp/none.log"; then
    ok "SIGINT without --checkpoint: exit 130, no model, nothing stray"
else
    not_ok "SIGINT without --checkpoint: exit $rc, files: $(ls -A "$out" | tr '\n' ' ')" "$tmp/none.log"
fi

# ---- before training, a signal ends the command at once ----
# While the text is read nothing is trained yet: the command dies by the
# signal, with none of the words of an orderly stop and nothing written.
# A second signal does the same (two threads may take the two at once:
# either may count as the second).
for sigs in "INT" "INT TERM"; do
    clean
    "$bin" train "$tmp/all.svm" --parse-threads 1 --threads 1 --bind 0 -o "$out/m.hog" --checkpoint "$out/c.ckpt" \
        >"$tmp/read.log" 2>&1 &
    pid=$!
    wait_for "whole before training" "$tmp/read.log"
    for sig in $sigs; do kill -"$sig" "$pid"; done
    wait "$pid" 2>/dev/null
    rc=$?
    pid=
    if { [ "$rc" -eq 130 ] || { [ "$sigs" != INT ] && [ "$rc" -eq 143 ]; }; } && [ -z "$(stray)" ] &&
        ! grep -q "no model was written" "$tmp/read.log"; then
        ok "SIG$(echo $sigs | sed 's/ / then SIG/') while the input is read: the command ends at once (exit $rc), nothing written"
    else
        not_ok "SIG$sigs while the input is read: exit $rc, files: $(ls -A "$out" | tr '\n' ' ')" "$tmp/read.log"
    fi
done

# ---- the crash harness: kill -9 at random instants ----
# crash WHAT EXPR REF ARGS...: `train ARGS` killed at instants drawn
# (seeded) from the span of a whole run, with a checkpoint every 0.02 s so
# that some kills land while one is written. Then: the checkpoint is absent
# or whole and valid, the model is absent or whole, nothing else is there
# but, where the kill fell between a file's link and its rename, the whole
# new file under its temporary name (README, "What survives a crash"),
# which the next run's outputs sweep away; and --resume (or, with no
# checkpoint yet, a new run) reaches REF, the uninterrupted run's EXPR of
# its report, exactly, and leaves nothing stray.
crash() {
    what=$1 expr=$2 want=$3
    shift 3
    clean
    t0=$(date +%s.%N)
    "$bin" train "$@" -q -o "$out/m.hog" --checkpoint "$out/c.ckpt" --checkpoint-every 0.02
    span=$(echo "$t0 $(date +%s.%N)" | awk '{ print $2 - $1 }')
    delays=$(awk -v n="$trials" -v s="$seed" -v span="$span" \
        'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%.3f\n", 0.02 + rand() * span }')
    passed=0 absent=0 mid=0 finished=0 swept=0 failed=
    i=0
    for d in $delays; do
        i=$((i + 1))
        clean
        "$bin" train "$@" -q -o "$out/m.hog" --checkpoint "$out/c.ckpt" --checkpoint-every 0.02 2>"$tmp/k.log" &
        pid=$!
        sleep "$d" # the instant of the kill: no event to wait on, by design
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        pid=
        extra=$(stray c.ckpt m.hog)
        why= named=
        if [ -n "$extra" ] && [ -z "$(printf '%s\n' $extra | grep -v -e '^c\.ckpt\.hogtmp\.' -e '^m\.hog\.hogtmp\.')" ]; then
            named=$extra # killed between a link and its rename: swept by the next run below
            swept=$((swept + 1))
            extra=
        fi
        if [ -n "$extra" ]; then
            why="stray: $extra"
        elif [ -e "$out/m.hog" ] && ! "$bin" info "$out/m.hog" >/dev/null 2>&1; then
            why="a damaged model"
        elif [ ! -e "$out/c.ckpt" ]; then
            absent=$((absent + 1))
            if [ -n "$named" ]; then
                "$bin" train "$@" -q -o "$out/m.hog" --checkpoint "$out/c.ckpt" >"$tmp/k.log" 2>&1
                [ -n "$(stray c.ckpt m.hog)" ] && why="$named not swept by the next run: $(stray c.ckpt m.hog)"
            fi
        else
            "$bin" train "$@" -o "$out/m.hog" --checkpoint "$out/c.ckpt" --resume --report "$tmp/k.json" \
                >"$tmp/k.log" 2>&1
            rc=$?
            got=$(json "$tmp/k.json" "$expr")
            if [ "$rc" -ne 0 ]; then
                why="--resume exit $rc: $(tail -n 1 "$tmp/k.log")"
            elif [ "$got" != "$want" ]; then
                why="--resume: $got, not $want"
            elif [ -n "$(stray c.ckpt m.hog)" ]; then
                why="stray after --resume: $(stray c.ckpt m.hog)"
            fi
            grep -q "resuming from .*: the run after its last epoch" "$tmp/k.log" && finished=$((finished + 1))
            grep -q "resuming from .*: the run in epoch" "$tmp/k.log" && mid=$((mid + 1))
        fi
        if [ -z "$why" ]; then
            passed=$((passed + 1))
        else
            failed="$failed [trial $i, kill at ${d}s: $why]"
        fi
    done
    if [ -z "$failed" ]; then
        ok "$what: kill -9 at $trials random instants (seed $seed, runs of ${span}s): $passed passed ($absent killed before a checkpoint; resumed: $mid inside an epoch, $((passed - absent - finished - mid)) between two, $finished after the end; $swept left a file under its temporary name, swept by the next run)"
    else
        not_ok "$what: kill -9 at $trials random instants: $passed passed;$failed"
    fi
}
crash "train" "d['test']['logloss']" "$ref" $common

# ---- matrix factorisation: the same signals, checkpoints and crashes ----
"$build/tools/gen_ratings" -u 3000 -i 1000 -n 300000 -k 8 -s 2 -q -o "$tmp/r.hgr" || exit 1
# 40 epochs of about 0.05 s: the signals below are sent once the log shows
# epoch 2 or 3, and the run must still be going when they land, on a loaded
# machine too (with 12, a busy core let the run finish first). With early
# stopping (an explicit --holdout turns the default off, --early-stop back
# on), so that its state and best model go through every checkpoint; its
# test RMSE falls to the 40th epoch, so the run is as long as without.
mf="$tmp/r.hgr --model mf --rank 8 --threads 1 --bind 0 --holdout 0.1 --early-stop 3 --epochs 40"
"$bin" train $mf -q -o "$tmp/mfref.hog" --report "$tmp/mfref.json" || exit 1
mfref=$(json "$tmp/mfref.json" "d['test_rmse']")
clean
"$bin" train $mf -o "$out/m.hog" --checkpoint "$out/c.ckpt" >"$tmp/mfint.log" 2>&1 &
pid=$!
wait_for "^epoch 3/" "$tmp/mfint.log"
kill -INT "$pid"
wait "$pid" 2>/dev/null
rc=$?
pid=
resume=$(sed -n 's/^hogtrain: to go on from it: hogtrain //p' "$tmp/mfint.log")
if [ "$rc" -eq 130 ] && [ -s "$out/c.ckpt" ] && [ ! -e "$out/m.hog" ] && [ -z "$(stray c.ckpt)" ] && [ -n "$resume" ]; then
    ok "train --model mf, SIGINT mid-run: exit 130, the checkpoint written, no model, nothing stray"
else
    not_ok "train --model mf, SIGINT mid-run: exit $rc, files: $(ls -A "$out" | tr '\n' ' ')" "$tmp/mfint.log"
fi
eval "\"$bin\" $resume -q --report \"$tmp/mfres.json\"" 2>"$tmp/mfres.log"
rc=$?
got=$(json "$tmp/mfres.json" "d['test_rmse']")
if [ "$rc" -eq 0 ] && [ "$got" = "$mfref" ] && [ -s "$out/m.hog" ]; then
    ok "train --model mf --resume: test rmse $got, as the run never interrupted"
else
    not_ok "train --model mf --resume: exit $rc, test rmse $got against $mfref" "$tmp/mfres.log"
fi
clean
"$bin" train $mf -o "$out/m.hog" >"$tmp/mfterm.log" 2>&1 &
pid=$!
wait_for "^epoch 2/" "$tmp/mfterm.log"
kill -TERM "$pid"
wait "$pid" 2>/dev/null
rc=$?
pid=
if [ "$rc" -eq 143 ] && [ -z "$(stray)" ] && grep -q "SIGTERM: interrupted" "$tmp/mfterm.log"; then
    ok "train --model mf, SIGTERM without --checkpoint: exit 143, no model, nothing stray"
else
    not_ok "train --model mf, SIGTERM: exit $rc, files: $(ls -A "$out" | tr '\n' ' ')" "$tmp/mfterm.log"
fi
crash "train --model mf" "d['test_rmse']" "$mfref" $mf
echo "1..$n"
