#!/bin/sh
# faults-test.sh: hogtrain's outputs under faults: a full disk, a read-only folder, an output that is a folder, a symbolic link, a FIFO or /dev/null, an input truncated while it is read, a memory cgroup smaller than the run, a FIFO nobody writes to; each ends with a clear message and exit 1 (or as said), nothing stray and nothing lost.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/faults-test.sh   (prints TAP lines; run by make test)
# The full disk (a small tmpfs), the read-only folder (a read-only bind
# mount: root ignores mode bits) and the cgroup (v1, under this process's
# own) need root; without it, or without cgroup v1, those cases are skipped.
set -u
build=${HOG_BUILD:-build}
bin=$build/hogtrain
py=/usr/bin/python3
[ -x "$py" ] || py=python3
notmpfile="$py $(dirname "$0")/notmpfile.py"
tmp=$(mktemp -d /tmp/hog-faults-XXXXXX)
mounts= cg= pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    for m in $mounts; do umount "$m" 2>/dev/null; done
    [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; [ -f "$tmp/log" ] && sed 's/^/# /' "$tmp/log" | tail -n 5; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
root=0
[ "$(id -u)" -eq 0 ] && root=1

"$build/tools/gen_sparse" -n 100000 -d 1000 -k 10 -s 2 -q -o "$tmp/mid.svm" || exit 1
"$build/tools/gen_sparse" -n 2000 -d 1000 -k 10 -s 3 -q -o "$tmp/small.svm" || exit 1
"$bin" convert "$tmp/small.svm" -o "$tmp/small.hgd" -q || exit 1
"$bin" convert "$tmp/mid.svm" -o "$tmp/mid.hgd" -q || exit 1
"$bin" train "$tmp/small.svm" -o "$tmp/small.hog" --epochs 1 -q || exit 1
"$bin" predict "$tmp/small.hog" "$tmp/small.svm" -o "$tmp/small.pred" -q || exit 1

# run COMMAND...: runs it, its messages in $tmp/log; rc is its status.
run() {
    "$@" >"$tmp/log" 2>&1
    rc=$?
}
# only DIR NAME...: DIR holds exactly the NAMEs (none: it is empty).
only() {
    d=$1
    shift
    got=$(ls -A "$d" | sort | tr '\n' ' ')
    want=$(for x in "$@"; do echo "$x"; done | sort | tr '\n' ' ')
    [ "$got" = "$want" ]
}
# expect WHAT STATUS MESSAGE CHECK...: a case passes when the status is
# STATUS, the log holds MESSAGE (a fixed string) and every CHECK (a shell
# command) succeeds.
expect() {
    what=$1 want=$2 msg=$3
    shift 3
    why=
    [ "$rc" -eq "$want" ] || why="$why; exit status $rc, not $want"
    [ -z "$msg" ] || grep -qF -- "$msg" "$tmp/log" || why="$why; no message '$msg'"
    for c in "$@"; do eval "$c" || why="$why; not: $c"; done
    if [ -z "$why" ]; then ok "$what"; else not_ok "$what$why"; fi
}
# mount_tmpfs DIR SIZE [ro]: a tmpfs of SIZE at DIR (made), read-only with ro.
mount_tmpfs() {
    mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" && mounts="$1 $mounts"
}

# ---- a full disk: a tmpfs of 1 MiB, too small for the new dataset (10 MB) ----
if [ "$root" -eq 1 ] && mount_tmpfs "$tmp/full" 1m; then
    for wrap in "" "$notmpfile"; do
        how=$([ -n "$wrap" ] && echo ", without O_TMPFILE" || echo "")
        cp "$tmp/small.hgd" "$tmp/full/out.hgd"
        run $wrap "$bin" convert "$tmp/mid.svm" -o "$tmp/full/out.hgd" -q
        expect "a full disk: convert$how fails, the older dataset stays" 1 "out.hgd: No space left on device" \
            'cmp -s "$tmp/full/out.hgd" "$tmp/small.hgd"' 'only "$tmp/full" out.hgd'
        run $wrap "$bin" train "$tmp/mid.svm" --cache "$tmp/full/c.hgd" -o "$tmp/m.hog" --epochs 1 -q
        expect "a full disk: train --cache$how fails, no model" 1 "c.hgd: No space left on device" \
            '[ ! -e "$tmp/m.hog" ]' 'only "$tmp/full" out.hgd'
    done
    # Filled to the last block: even a model or predictions do not fit.
    cp "$tmp/small.hog" "$tmp/full/m.hog"
    cp "$tmp/small.pred" "$tmp/full/p.txt"
    dd if=/dev/zero of="$tmp/full/fill" bs=4k count=1024 2>/dev/null
    run "$bin" train "$tmp/small.svm" -o "$tmp/full/m.hog" --epochs 1 -q
    expect "a full disk: train fails to save, the older model stays" 1 "m.hog: cannot save the model: No space left" \
        'cmp -s "$tmp/full/m.hog" "$tmp/small.hog"' 'only "$tmp/full" out.hgd m.hog p.txt fill'
    run "$bin" predict "$tmp/small.hog" "$tmp/mid.svm" -o "$tmp/full/p.txt" -q
    expect "a full disk: predict fails, the older predictions stay" 1 "p.txt: write failed: No space left on device" \
        'cmp -s "$tmp/full/p.txt" "$tmp/small.pred"' 'only "$tmp/full" out.hgd m.hog p.txt fill'
    run "$bin" keygen "$tmp/full/key"
    expect "a full disk: keygen fails" 1 "key: cannot write the secret: No space left on device" \
        'only "$tmp/full" out.hgd m.hog p.txt fill'
else
    skip "a full disk: needs root to mount a tmpfs"
fi

# ---- a read-only folder: a read-only bind mount ----
mkdir "$tmp/ro"
cp "$tmp/small.hgd" "$tmp/ro/out.hgd"
cp "$tmp/small.hog" "$tmp/ro/m.hog"
if [ "$root" -eq 1 ] && mount --bind "$tmp/ro" "$tmp/ro" && mounts="$tmp/ro $mounts" &&
    mount -o remount,bind,ro "$tmp/ro"; then
    run "$bin" convert "$tmp/small.svm" -o "$tmp/ro/out.hgd" -q
    expect "a read-only folder: convert fails, the dataset stays" 1 "out.hgd: Read-only file system" \
        'cmp -s "$tmp/ro/out.hgd" "$tmp/small.hgd"' 'only "$tmp/ro" out.hgd m.hog'
    run "$bin" train "$tmp/mid.svm" -o "$tmp/ro/m.hog" --epochs 1
    expect "a read-only folder: train fails before its first epoch, the model stays" 1 \
        "m.hog: cannot create a file beside it: Read-only file system" '! grep -q "^epoch" "$tmp/log"' \
        'cmp -s "$tmp/ro/m.hog" "$tmp/small.hog"' 'only "$tmp/ro" out.hgd m.hog'
    run "$bin" predict "$tmp/small.hog" "$tmp/small.svm" -o "$tmp/ro/p.txt" -q
    expect "a read-only folder: predict fails" 1 "p.txt: cannot create a file beside it: Read-only file system" \
        'only "$tmp/ro" out.hgd m.hog'
else
    skip "a read-only folder: needs root for a read-only bind mount"
fi

# ---- an output that is a folder ----
mkdir -p "$tmp/d/sub"
run "$bin" convert "$tmp/small.svm" -o "$tmp/d/sub" -q
expect "an output that is a folder is refused" 1 "sub: Is a directory" 'only "$tmp/d/sub"' 'only "$tmp/d" sub'
run "$bin" convert "$tmp/small.svm" -o "$tmp/d/new/" -q
expect "an output named as a folder (new/) is refused" 1 "new/: Is a directory" 'only "$tmp/d" sub'
run "$bin" train "$tmp/small.svm" -o "$tmp/d/sub" --epochs 1
expect "a model that would replace a folder is refused before the first epoch" 1 \
    "sub: cannot create a file beside it: Is a directory" '! grep -q "^epoch" "$tmp/log"' 'only "$tmp/d/sub"' \
    'only "$tmp/d" sub'
printf '1 1 3\n1 2 4\n2 1 5\n2 2 1\n' >"$tmp/r.txt"
run "$bin" train "$tmp/r.txt" --model mf --rank 2 -o "$tmp/d/none/m.mf"
expect "a factorisation's model in a missing folder is refused before the first epoch" 1 \
    "m.mf: cannot create a file beside it: No such file or directory" '! grep -q "^epoch" "$tmp/log"' \
    'only "$tmp/d" sub'
for what in "--report $tmp/d/none/r.json" "--checkpoint $tmp/d/none/c.ckpt"; do
    run "$bin" train "$tmp/small.svm" -o "$tmp/d/m.hog" --epochs 1 $what
    expect "${what%% *} in a missing folder is refused before the first epoch, no model" 1 \
        "cannot create a file beside it: No such file or directory" '! grep -q "^epoch" "$tmp/log"' \
        'only "$tmp/d" sub'
done

# ---- an output that is a symbolic link: replaced, not followed ----
mkdir "$tmp/l"
cp "$tmp/small.hog" "$tmp/l/target"
ln -s target "$tmp/l/link"
ln -s nowhere "$tmp/l/dangling"
run "$bin" convert "$tmp/small.svm" -o "$tmp/l/link" -q
expect "a symbolic link at the output is replaced by the file, its target untouched" 0 "" \
    '[ ! -L "$tmp/l/link" ] && cmp -s "$tmp/l/link" "$tmp/small.hgd"' 'cmp -s "$tmp/l/target" "$tmp/small.hog"'
run "$bin" convert "$tmp/small.svm" -o "$tmp/l/dangling" -q
expect "a dangling symbolic link is replaced; nothing is made where it pointed" 0 "" \
    '[ ! -L "$tmp/l/dangling" ] && cmp -s "$tmp/l/dangling" "$tmp/small.hgd"' 'only "$tmp/l" target link dangling'

# ---- a FIFO as the output: written into whole, never replaced ----
# The reader waits in its open for a writer. A run that fails never opens
# the FIFO, so the same reader then gets the next run's whole output: had
# the failed run opened it, the reader would have ended with an empty or
# partial file and the next run would wait for a reader until timeout.
mkdir "$tmp/f"
mkfifo "$tmp/f/out"
cat "$tmp/f/out" >"$tmp/got" &
reader=$!
: >"$tmp/empty.svm"
run timeout 60 "$bin" convert "$tmp/empty.svm" -o "$tmp/f/out" -q
expect "a run that fails with a FIFO as the output says why" 1 "no data rows" '[ -p "$tmp/f/out" ]'
run timeout 60 "$bin" convert "$tmp/small.svm" -o "$tmp/f/out" -q
wait "$reader"
expect "a FIFO as the output gets the whole file, after a failed run that never opened it" 0 "" \
    '[ -p "$tmp/f/out" ] && cmp -s "$tmp/got" "$tmp/small.hgd"' 'only "$tmp/f" out'
rm -f "$tmp/got" "$tmp/empty.svm"
run "$bin" convert "$tmp/small.svm" -o /dev/null -q
expect "/dev/null as the output takes it and stays a device" 0 "" '[ -c /dev/null ]'

# ---- an input truncated while it is read ----
# Cut to a third once the command has it open: the reader knows the size it
# had then and says where it ended.
"$build/tools/gen_sparse" -n 400000 -d 20000 -k 30 -s 4 -q -o "$tmp/big.svm" || exit 1
for cmd in convert train; do
    rm -rf "$tmp/t" && mkdir "$tmp/t"
    cp "$tmp/big.svm" "$tmp/t/in.svm"
    size=$(wc -c <"$tmp/t/in.svm")
    case $cmd in
    convert) "$bin" convert "$tmp/t/in.svm" -o "$tmp/t/out.hgd" --parse-threads 1 -q >"$tmp/log" 2>&1 & ;;
    train) "$bin" train "$tmp/t/in.svm" -o "$tmp/t/out.hog" --parse-threads 1 --threads 1 -q >"$tmp/log" 2>&1 & ;;
    esac
    pid=$!
    tries=0
    until ls -l /proc/"$pid"/fd 2>/dev/null | grep -q "$tmp/t/in.svm" || [ "$tries" -ge 5000 ]; do
        tries=$((tries + 1))
    done
    truncate -s $((size / 3)) "$tmp/t/in.svm"
    wait "$pid"
    rc=$?
    pid=
    expect "an input truncated while $cmd reads it: an error that says where it ended" 1 \
        "in.svm: the file ended at byte $((size / 3)), short of the $size bytes it had when opened" \
        'only "$tmp/t" in.svm'
done

# ---- a FIFO as the input ----
# A FIFO is a stream, read as cat reads it: with no writer the command
# waits for one (here until timeout's SIGTERM), and writes nothing.
mkfifo "$tmp/f/in"
cp "$tmp/small.hgd" "$tmp/f/out.hgd"
run timeout 1 "$bin" convert "$tmp/f/in" -o "$tmp/f/out.hgd" -q
expect "a FIFO nobody writes to: convert waits for a writer, and a SIGTERM leaves nothing" 124 "" \
    'cmp -s "$tmp/f/out.hgd" "$tmp/small.hgd"' 'only "$tmp/f" in out out.hgd'
run timeout 1 "$bin" train "$tmp/f/in" -o "$tmp/f/m.hog" -q
expect "a FIFO nobody writes to: train waits for a writer, and a SIGTERM leaves nothing" 124 "" \
    'only "$tmp/f" in out out.hgd'
# A writer that closes at once: an empty stream.
: >"$tmp/f/in" &
run "$bin" convert "$tmp/f/in" -o "$tmp/f/out.hgd" -q
wait
expect "a FIFO closed empty: convert fails, the older dataset stays" 1 "no data rows" \
    'cmp -s "$tmp/f/out.hgd" "$tmp/small.hgd"' 'only "$tmp/f" in out out.hgd'

# ---- a memory cgroup (v1) smaller than the run needs ----
# 100 MiB for a 150 MB text file (a 100 MB dataset). convert streams the
# text and the binary dataset is mapped, so those fit; training on the text
# holds the blocks it builds up to half of the limit (by default half of
# what the cgroup leaves), then goes on in a scratch file next to the
# model, which has no name and leaves nothing behind.
cgmem=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup 2>/dev/null)
if [ "$root" -eq 1 ] && [ -n "$cgmem" ] && [ -d "/sys/fs/cgroup/memory$cgmem" ] &&
    mkdir "/sys/fs/cgroup/memory$cgmem/hog-faults-$$" 2>/dev/null; then
    cg=/sys/fs/cgroup/memory$cgmem/hog-faults-$$
    echo 100M >"$cg/memory.limit_in_bytes"
    in_cg() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }
    "$bin" convert "$tmp/big.svm" -o "$tmp/big.hgd" -q || exit 1 # outside: each case stands alone
    rm -rf "$tmp/c" && mkdir "$tmp/c"
    run in_cg "$bin" convert "$tmp/big.svm" -o "$tmp/c/big.hgd" -q
    expect "a 100 MiB cgroup: convert of 150 MB of text fits" 0 "" '"$bin" info "$tmp/c/big.hgd" >/dev/null' \
        'only "$tmp/c" big.hgd'
    for lim in "" "--mem-limit 32M"; do
        rm -rf "$tmp/c" && mkdir "$tmp/c"
        run in_cg "$bin" train "$tmp/big.hgd" -o "$tmp/c/m.hog" --threads 1 --epochs 1 $lim -q
        expect "a 100 MiB cgroup: train of a 100 MB dataset ${lim:-with the default limit} fits" 0 "" \
            '"$bin" info "$tmp/c/m.hog" >/dev/null' 'only "$tmp/c" m.hog'
    done
    for lim in "" "--mem-limit 64M"; do
        cp "$tmp/small.hog" "$tmp/c/m.hog"
        run in_cg "$bin" train "$tmp/big.svm" -o "$tmp/c/m.hog" --threads 1 --epochs 2 $lim
        expect "a 100 MiB cgroup: train of 150 MB of text ${lim:-with the default limit} fits, spilled next to the model" \
            0 "go to a scratch file in $tmp/c" '"$bin" info "$tmp/c/m.hog" >/dev/null' 'only "$tmp/c" m.hog'
    done
    rm -rf "$tmp/c" "$tmp/s" && mkdir "$tmp/c" "$tmp/s"
    # Two epochs: one pass (--epochs 1) keeps no text to spill
    run in_cg "$bin" train "$tmp/big.svm" -o "$tmp/c/m.hog" --threads 1 --epochs 2 --temp-dir "$tmp/s"
    expect "a 100 MiB cgroup: --temp-dir says where the text goes" 0 "go to a scratch file in $tmp/s" \
        'only "$tmp/c" m.hog' 'only "$tmp/s"'
    rm -rf "$tmp/c" "$tmp/s" && mkdir "$tmp/c" "$tmp/s"
    run in_cg "$bin" train "$tmp/big.svm" -o "$tmp/c/m.hog" --threads 1 --epochs 1 --temp-dir "$tmp/s"
    expect "a 100 MiB cgroup: one pass over 150 MB of text keeps none of it, in memory or in a scratch file" 0 "" \
        'only "$tmp/c" m.hog' 'only "$tmp/s"' '! grep -q "scratch file" "$tmp/log"'
    # The size the issue names: 450 MB of text in 300 MiB, every setting
    # its default (both cores, ten epochs).
    echo 300M >"$cg/memory.limit_in_bytes"
    "$build/tools/gen_sparse" -n 1200000 -d 47000 -k 30 -s 7 -q -o "$tmp/huge.svm" || exit 1
    rm -f "$tmp/big.svm" "$tmp/big.hgd"
    rm -rf "$tmp/c" && mkdir "$tmp/c"
    run in_cg "$bin" train "$tmp/huge.svm" -o "$tmp/c/m.hog"
    expect "a 300 MiB cgroup: train of 450 MB of text with the default settings fits" 0 "accuracy" \
        '"$bin" info "$tmp/c/m.hog" >/dev/null' 'only "$tmp/c" m.hog'
    rm -f "$tmp/huge.svm"
    rmdir "$cg" 2>/dev/null && cg=
else
    skip "a memory cgroup: needs root and cgroup v1 (/sys/fs/cgroup/memory)"
fi

# A mapped dataset truncated, or rewritten in place, under a run: the run
# stops with a message that names the file and writes no model. The change
# is made once the run has mapped the file (its /proc maps say so).
for how in truncated rewritten; do
    cp "$tmp/mid.hgd" "$tmp/live.hgd"
    rm -f "$tmp/live.hog"
    "$bin" train "$tmp/live.hgd" -o "$tmp/live.hog" --threads 2 --epochs 5000 -q >"$tmp/log" 2>&1 &
    pid=$!
    mapped=0
    for _ in $(seq 1 2000); do
        grep -q "live.hgd" "/proc/$pid/maps" 2>/dev/null && { mapped=1; break; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    if [ "$how" = truncated ]; then
        truncate -s 4096 "$tmp/live.hgd"
    else
        size=$(stat -c %s "$tmp/live.hgd")
        head -c "$size" /dev/urandom | dd of="$tmp/live.hgd" conv=notrunc status=none
    fi
    wait "$pid"
    rc=$?
    pid=
    [ "$mapped" -eq 1 ] || echo "not mapped before the change" >>"$tmp/log"
    expect "a mapped dataset $how under a run: stopped, named, no model" 1 "live.hgd changed while it was read" \
        '[ ! -e "$tmp/live.hog" ]' '[ "$mapped" -eq 1 ]'
done
