#!/bin/sh
# crash-test.sh: kill -9 at seeded random instants during hogtrain convert and train --cache, on file systems with and without O_TMPFILE, and SIGINT or SIGTERM during convert, train and train --model mf: each output is then absent, the old file or the whole new one, and nothing stray is left.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/crash-test.sh [N]   (prints TAP lines)
# N trials of each command (default 10, as make test runs it; 100 by hand).
# CRASH_SEED changes the instants (default 19). Trials alternate between an
# output folder that starts empty and one that holds older outputs, and
# between the normal kernel and one that refuses O_TMPFILE (a seccomp filter
# set by tests/notmpfile.py, as NFS, vfat or an old kernel would): there
# a killed run may leave NAME.hogtmp.XXXXXX, which the next output written
# in that folder must remove.
set -u
build=${HOG_BUILD:-build}
bin=$build/hogtrain
trials=${1:-10}
seed=${CRASH_SEED:-19}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d /tmp/hog-crash-XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
now() { date +%s.%N; }

# A command where O_TMPFILE is refused; a word list, so that $! is the
# command's own pid.
notmpfile="$py $(dirname "$0")/notmpfile.py"

# The data: about 450 MB of libsvm, so that a run lasts a second or two.
"$build/tools/gen_sparse" -n 1200000 -d 20000 -k 20 -s 5 -q -o "$tmp/data.svm" || exit 1
"$build/tools/gen_sparse" -n 2000 -d 20000 -k 20 -s 6 -q -o "$tmp/small.svm" || exit 1
# One parse thread (and hashing, for convert): the runs last longer, and so
# does the window in which the outputs are written.
convert_opts="--parse-threads 1 -b 20 -q"
train_opts="--threads 1 --epochs 3 --bind 0 --parse-threads 1 -q"
mkdir "$tmp/ref" "$tmp/old" "$tmp/w"
# seconds COMMAND...: runs it, and prints how long it took.
seconds() {
    t0=$(now)
    "$@" || return 1
    awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'
}
# The kill window: the shorter of two runs (the machine's load varies).
c1=$(seconds "$bin" convert "$tmp/data.svm" -o "$tmp/ref/out.hgd" $convert_opts) || exit 1
c2=$(seconds "$bin" convert "$tmp/data.svm" -o "$tmp/ref/out.hgd" $convert_opts) || exit 1
t1=$(seconds "$bin" train "$tmp/data.svm" --cache "$tmp/ref/c.hgd" -o "$tmp/ref/m.hog" --report "$tmp/ref/r.json" \
    $train_opts) || exit 1
rm "$tmp/ref/c.hgd" # built again, not read from the cache
t2=$(seconds "$bin" train "$tmp/data.svm" --cache "$tmp/ref/c.hgd" -o "$tmp/ref/m.hog" --report "$tmp/ref/r.json" \
    $train_opts) || exit 1
convert_s=$(printf '%s\n%s\n' "$c1" "$c2" | sort -n | head -n 1)
train_s=$(printf '%s\n%s\n' "$t1" "$t2" | sort -n | head -n 1)
"$bin" convert "$tmp/small.svm" -o "$tmp/old/out.hgd" -q || exit 1
"$bin" train "$tmp/small.svm" --cache "$tmp/old/c.hgd" -o "$tmp/old/m.hog" --report "$tmp/old/r.json" $train_opts || exit 1
echo "# one convert takes ${convert_s} s, one train --cache ${train_s} s; $trials trials of each, seed $seed"
model_info() { "$bin" info "$1" | sed -e 1d -e '/^training time/d'; }
model_info "$tmp/ref/m.hog" >"$tmp/ref/m.info"
"$bin" predict "$tmp/ref/m.hog" "$tmp/small.svm" -o "$tmp/ref/m.pred" -q || exit 1
rows=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'])" "$tmp/ref/r.json")

# state FILE KIND: what FILE is after a crash: absent, old (byte for byte
# the saved older file) or new (whole, equal to the reference run's); else
# "bad: why".
state() {
    f=$tmp/w/$1
    if [ ! -e "$f" ]; then echo absent; return; fi
    if cmp -s "$f" "$tmp/old/$1"; then echo old; return; fi
    case $2 in
    hgd)
        if ! "$bin" info "$f" >/dev/null 2>&1; then echo "bad: info refuses $1"; return; fi
        cmp -s "$f" "$tmp/ref/$1" || { echo "bad: $1 differs from the reference"; return; } ;;
    hog)
        if ! model_info "$f" >"$tmp/m.info" 2>&1; then echo "bad: info refuses $1"; return; fi
        cmp -s "$tmp/m.info" "$tmp/ref/m.info" || { echo "bad: $1 is another model"; return; }
        "$bin" predict "$f" "$tmp/small.svm" -o "$tmp/m.pred" -q 2>/dev/null &&
            cmp -s "$tmp/m.pred" "$tmp/ref/m.pred" || { echo "bad: $1 predicts otherwise"; return; } ;;
    json)
        got=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'])" "$f" 2>/dev/null)
        [ "$got" = "$rows" ] || { echo "bad: $1 is not the run's report"; return; } ;;
    esac
    echo new
}

# strays ALLOWED...: the names in the output folder other than ALLOWED.
strays() {
    ls -A "$tmp/w" | while read -r name; do
        keep=
        for a in "$@"; do [ "$name" = "$a" ] && keep=1; done
        [ -z "$keep" ] && echo "$name"
    done
}

# trial CMD I SECONDS OUTPUT:KIND...: one kill -9 of CMD at a seeded instant.
counts=
trial() {
    cmd=$1 i=$2 window=$3
    shift 3
    rm -rf "$tmp/w" && mkdir "$tmp/w"
    names=
    for o in "$@"; do names="$names ${o%%:*}"; done
    with_old=$((i % 2)) named=$((i / 2 % 2))
    if [ "$with_old" -eq 1 ]; then
        for o in $names; do cp -p "$tmp/old/$o" "$tmp/w/$o"; done
    fi
    wrap=
    [ "$named" -eq 1 ] && wrap=$notmpfile
    at=$(sed -n "$((i + 1))p" "$tmp/instants.$cmd" | awk -v w="$window" '{ printf "%.3f", $1 * w * 1.1 }')
    case $cmd in
    convert) $wrap "$bin" convert "$tmp/data.svm" -o "$tmp/w/out.hgd" $convert_opts 2>/dev/null & ;;
    train) $wrap "$bin" train "$tmp/data.svm" --cache "$tmp/w/c.hgd" -o "$tmp/w/m.hog" --report "$tmp/w/r.json" \
        $train_opts 2>/dev/null & ;;
    esac
    pid=$!
    sleep "$at"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    pid=
    how=killed
    [ "$rc" -eq 137 ] || how="ended (exit $rc)"
    what= bad=
    for o in "$@"; do
        s=$(state "${o%%:*}" "${o#*:}")
        case $s in
        bad*) bad="$bad; $s" ;;
        absent) [ "$with_old" -eq 1 ] && bad="$bad; ${o%%:*} was lost" ;;
        esac
        [ "$rc" -eq 0 ] && [ "$s" != new ] && bad="$bad; ${o%%:*} is $s after a run that ended well"
        what="$what ${o%%:*}=$s"
        counts="$counts
$cmd ${o%%:*} $s"
    done
    left=$(strays $names)
    mode=unnamed
    [ "$named" -eq 1 ] && mode=named
    if [ "$named" -eq 1 ] || [ -n "$left" ]; then
        # A killed writer may leave its temporary file (named: any time;
        # unnamed, O_TMPFILE: only killed between the link and the rename,
        # README "What survives a crash"); the next output in the folder
        # removes it once the file's lock is free: writes still in flight
        # in io_uring hold the file a moment after the process is reaped,
        # and a sweep in that moment rightly leaves it.
        for s in $left; do
            case $s in
            *.hogtmp.??????)
                counts="$counts
$cmd left a temporary file"
                timeout 30 flock -x "$tmp/w/$s" true || bad="$bad; $s stays locked" ;;
            *) bad="$bad; stray $s" ;;
            esac
        done
        "$bin" convert "$tmp/small.svm" -o "$tmp/w/sweep.hgd" -q || bad="$bad; the sweeping convert failed"
        rm -f "$tmp/w/sweep.hgd"
        left=$(strays $names)
        [ -n "$left" ] && bad="$bad; not swept: $(echo $left)"
    fi
    label="$cmd trial $i ($mode, $([ "$with_old" -eq 1 ] && echo 'older outputs' || echo 'empty folder'), kill at ${at} s: $how):$what"
    if [ -z "$bad" ]; then ok "$label"; else not_ok "$label${bad}"; fi
}

# The instants, as fractions of a run's time (1.1 times it: some runs end).
for c in convert train; do
    awk -v s="$seed" -v n="$trials" -v c="$c" \
        'BEGIN { srand(s + length(c)); for (i = 0; i < n; i++) printf "%.4f\n", rand() }' >"$tmp/instants.$c"
done
i=0
while [ "$i" -lt "$trials" ]; do
    trial convert "$i" "$convert_s" out.hgd:hgd
    i=$((i + 1))
done
i=0
while [ "$i" -lt "$trials" ]; do
    trial train "$i" "$train_s" c.hgd:hgd m.hog:hog r.json:json
    i=$((i + 1))
done
printf '%s\n' "$counts" | sed '/^$/d' | sort | uniq -c | sed 's/^ */# /'

# ---- SIGINT and SIGTERM: no output at -o, nothing stray, status 130 or 143 ----
# A non-interactive shell starts background jobs with SIGINT ignored; env
# gives them the default back, as a terminal's Ctrl-C would find it.
"$build/tools/gen_ratings" -u 20000 -i 5000 -k 16 -n 3000000 -s 3 -o "$tmp/ratings.txt" 2>/dev/null || exit 1
# wait_for PID PATTERN FILE: until FILE shows PATTERN (or PID ends; 30 s at most)
wait_for() {
    tries=0
    while ! grep -q "$2" "$3" 2>/dev/null && kill -0 "$1" 2>/dev/null && [ "$tries" -lt 3000 ]; do
        "$py" -c "import time; time.sleep(0.01)"
        tries=$((tries + 1))
    done
}
# open_fds PID: where PID's descriptors lead, one a line, into FILE
open_fds() { # open_fds PID FILE
    : >"$2"
    for fd in /proc/"$1"/fd/*; do readlink "$fd" >>"$2" 2>/dev/null; done
}
# signal_case WHAT SIGNAL STATUS WAIT_FOR OLD WRAP COMMAND...: COMMAND writes
# into $tmp/w; SIGNAL is sent once the output is open (WAIT_FOR fd) or the
# first epoch is done (WAIT_FOR epoch); OLD: the folder holds an older out.hgd.
signal_case() {
    what=$1 sig=$2 want=$3 waitfor=$4 old=$5 wrap=$6
    shift 6
    rm -rf "$tmp/w" && mkdir "$tmp/w"
    [ "$old" -eq 1 ] && cp -p "$tmp/old/out.hgd" "$tmp/w/out.hgd"
    rm -f "$tmp/sig.log" # the last case's log would show its epoch at once
    $wrap env --default-signal=INT,TERM "$@" >"$tmp/sig.log" 2>&1 &
    pid=$!
    if [ "$waitfor" = fd ]; then
        tries=0
        while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 3000 ]; do
            open_fds "$pid" "$tmp/fds"
            grep -q "^$tmp/w/." "$tmp/fds" && break
            "$py" -c "import time; time.sleep(0.01)"
            tries=$((tries + 1))
        done
    else
        wait_for "$pid" "epoch 1" "$tmp/sig.log"
    fi
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    pid=
    left=$(strays $([ "$old" -eq 1 ] && echo out.hgd))
    bad=
    [ "$rc" -eq "$want" ] || bad="$bad; exit status $rc, not $want"
    [ -n "$left" ] && bad="$bad; left: $(echo $left)"
    if [ "$old" -eq 1 ] && ! cmp -s "$tmp/w/out.hgd" "$tmp/old/out.hgd"; then bad="$bad; the older out.hgd changed"; fi
    if [ -z "$bad" ]; then ok "$what: $sig gives $want, nothing written"; else
        not_ok "$what: $sig$bad"
        sed 's/^/# /' "$tmp/sig.log" | tail -n 5
    fi
}
signal_case "convert" INT 130 fd 0 "" "$bin" convert "$tmp/data.svm" -o "$tmp/w/out.hgd" -q
signal_case "convert over an older file" TERM 143 fd 1 "" "$bin" convert "$tmp/data.svm" -o "$tmp/w/out.hgd" -q
signal_case "convert without O_TMPFILE" INT 130 fd 0 "$notmpfile" "$bin" convert "$tmp/data.svm" -o "$tmp/w/out.hgd" -q
signal_case "convert without O_TMPFILE over an older file" TERM 143 fd 1 "$notmpfile" \
    "$bin" convert "$tmp/data.svm" -o "$tmp/w/out.hgd" -q
signal_case "train" INT 130 epoch 0 "" "$bin" train "$tmp/data.svm" -o "$tmp/w/m.hog" --threads 1 --epochs 50 --bind 0
signal_case "train" TERM 143 epoch 0 "" "$bin" train "$tmp/data.svm" -o "$tmp/w/m.hog" --threads 1 --epochs 50 --bind 0
signal_case "train --model mf" INT 130 epoch 0 "" \
    "$bin" train "$tmp/ratings.txt" --model mf -o "$tmp/w/mf.hog" --threads 1 --epochs 200 --bind 0 --holdout 0
signal_case "train --model mf" TERM 143 epoch 0 "" \
    "$bin" train "$tmp/ratings.txt" --model mf -o "$tmp/w/mf.hog" --threads 1 --epochs 200 --bind 0 --holdout 0
