#!/bin/sh
# alloc-fail-test.sh: makes each allocation of hogtrain convert, train, predict and info fail in turn (and, in a second sweep, every allocation from it on): each run ends with exit 1 and an out-of-memory message, no sanitizer report, nothing stray in the output folder and an older output intact.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build-asan sh tests/alloc-fail-test.sh [CASE...]   (prints TAP lines)
# Needs a build with ALLOC_FAULTS=1 (make asan, make alloc-faults): its
# src/util/util_alloc.c counts every malloc, calloc, realloc and
# posix_memalign of the library and the command, fails the one that
# HOG_ALLOC_FAIL_AT names (N, or N+ for it and all later ones) and writes the
# count and the failed call's stack to HOG_ALLOC_REPORT. A case first runs
# without failures to learn its count N, then once for each k from 1 to
# N + 2 (the count of a multi-threaded case varies a little): a k past the
# run's own count fails nothing, and that run must succeed. The second sweep
# runs again, with every allocation from the kth on failing, each k after
# which the first run allocated more (its cleanup and its message then meet
# failures too). CASE names run only those cases (as printed).
# ALLOC_FAIL_ONWARD=0 skips the second sweep; ALLOC_FAIL_SITES=FILE writes
# the call sites made to fail, as "function file:line".
#
# A run passes when it exits 1 with "out of memory" (or "Cannot allocate
# memory") in its messages, no sanitizer report (leaks included), nothing
# in the output folder but its outputs, and each output as it was before
# (odd k: absent; even k: the older file, byte for byte). A few failures
# are not fatal, and then the run exits 0 with whole outputs: the functions
# in `optional` below (each has one allocation, which it can do without: the
# normalized loop's row buffer falls back to the general loop, a segment's
# crossed rows to crossing each row as the loop meets it),
# and a warning that names the memory error (a checkpoint that cannot be
# written; that output may then be missing). A cache, a --save-ratings file
# or a checkpoint (NAME:side below) is written before the end of a run, so
# a later failure may leave the new one, which must be whole.
#
# Threads: workers and parsers are asked for one thread each (--threads 1,
# --parse-threads 1), and a case's count and order of allocations are then
# the same from run to run, each k one call site, except where a second
# thread allocates beside the first: text trained as it is read (its reader
# thread, the default --stream 1), the evaluation's workers (one per core)
# and the cases on two threads. There the kth allocation may be another call
# from one run to the next; what is asserted (a clean end) holds whichever
# it is, and repeated runs of the sweep meet more of the interleavings.
# Allocations made inside libc (stdio, threads' stacks) and by the shared
# libraries (hwloc, OpenBLAS, liburing, zstd, zlib, ZeroMQ) are not counted
# and never fail here.
set -u
build=$(cd "${HOG_BUILD:-build-asan}" && pwd) || exit 1
bin=$build/hogtrain
onward=${ALLOC_FAIL_ONWARD:-1}
tmp=$(mktemp -d /tmp/hog-allocfail-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap "exit 130" INT
trap "exit 143" TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
# A sanitizer report exits 99, never 1, so that it cannot pass for the
# expected failure; the reports are also looked for in the messages.
ASAN_OPTIONS=exitcode=99:detect_leaks=1:allocator_may_return_null=0
UBSAN_OPTIONS=exitcode=99:print_stacktrace=1
export ASAN_OPTIONS UBSAN_OPTIONS
unset HOG_ALLOC_FAIL_AT HOG_ALLOC_REPORT
optional='ring_setup plain_shrink norm_room cross_segment'

# The data, made and converted by the build under test (its hogtrain must
# work without failures for anything below to mean something).
gen=$build/tools/gen_sparse
cd "$tmp" || exit 1
"$gen" -n 300 -d 40 -k 5 -s 3 -j 1 -q -o d.svm || exit 1
"$gen" -n 60 -d 40 -k 5 -s 4 -j 1 -q -o t.svm || exit 1
# The same rows as CSV (a header, the label first, 40 columns), as Vowpal
# Wabbit text, gzip-compressed, and with three classes.
awk 'BEGIN { printf "y"; for (j = 1; j <= 40; j++) printf ",f%d", j; print "" }
     { for (j = 1; j <= 40; j++) v[j] = 0
       for (i = 2; i <= NF; i++) { split($i, a, ":"); v[a[1]] = a[2] }
       printf "%s", ($1 > 0 ? 1 : 0); for (j = 1; j <= 40; j++) printf ",%s", v[j]; print "" }' d.svm >d.csv
awk '{ printf "%s |", $1; for (i = 2; i <= NF; i++) { sub(":", "_x:", $i); printf " f%s", $i } print "" }' d.svm >d.vw
gzip -c d.svm >d.svm.gz
awk '{ $1 = NR % 3; print }' d.svm >c3.svm
# CSV with a categorical column, one to drop and long numbers; VW with
# importance weights; and 20,000 rows of 20,000 features (five blocks, two
# windows of a streamed epoch, and features that keep appearing).
awk -F , -v OFS=, 'NR > 1 { $2 = "c" NR % 7; $3 = $3 "000000000000000000000000000001"; print }' d.csv >d2.csv
awk '{ printf "%s %s |", $1, NR % 3 + 1; for (i = 2; i <= NF; i++) { sub(":", "_x:", $i); printf " f%s", $i } print "" }' \
    d.svm >dw.vw
"$gen" -n 20000 -d 20000 -k 3 -s 6 -j 1 -q -o big.svm || exit 1
# Ratings for matrix factorisation: training, test and an older set.
"$build/tools/gen_ratings" -u 50 -i 40 -k 3 -n 600 -s 1 -j 1 -o r.txt 2>/dev/null || exit 1
"$build/tools/gen_ratings" -u 50 -i 40 -k 3 -n 100 -s 2 -j 1 -o rt.txt 2>/dev/null || exit 1
"$bin" convert d.svm -o d.hgd -q || exit 1
"$bin" convert t.svm -o t.hgd -q || exit 1
"$bin" convert big.svm -o big.hgd -q || exit 1
"$bin" train d.svm -o m.hog --threads 1 --epochs 2 -q || exit 1
"$bin" convert r.txt --ratings -o r.hgr -q || exit 1
"$bin" train r.txt --model mf --rank 4 -o mf.hog --threads 1 --epochs 2 -q || exit 1
"$bin" train d.hgd --checkpoint ck-done.hog -o done.hog --threads 1 --epochs 2 -q || exit 1
# Older outputs, made from other data, that a failed run must leave as
# they are.
mkdir old
"$bin" convert t.svm -o old/d.hgd -q || exit 1
"$bin" train t.svm -o old/m.hog --threads 1 --epochs 1 --report old/r.json -q || exit 1
cp old/d.hgd old/c.hgd
"$bin" convert rt.txt --ratings -o old/r.hgr -q || exit 1
cp old/r.hgr old/s.hgr
cp old/m.hog old/ck.hog
"$bin" predict old/m.hog d.svm -o old/p.txt -q || exit 1

# Does this build inject failures at all?
rm -f rep
HOG_ALLOC_REPORT=$tmp/rep "$bin" info d.hgd >/dev/null 2>&1
if ! grep -q '^allocations [0-9]' rep 2>/dev/null; then
    skip "$bin was built without ALLOC_FAULTS=1 (make asan or make alloc-faults build one)"
    exit 0
fi

# The failed call, from the report: the first frame of our sources outside
# the allocation wrapper itself. The report gives offsets into the program;
# addr2line names each once (syms keeps "OFFSET FUNCTION FILE:LINE").
# Sets failed (1 or 0) and site ("function file:line", or empty).
: >"$tmp/syms"
: >"$tmp/rep"
parse_report() {
    out=$(awk 'FILENAME == ARGV[1] { f[$1] = $2 " " $3; next }
        /^failed/ { failed = 1; next }
        /^  / { if (!($1 in f)) unknown = unknown " " $1
                else if (site == "" && f[$1] !~ / src\/util\/util_alloc\.c:/) site = f[$1] }
        END { if (unknown != "") print "?" unknown; else print failed + 0, site }' "$tmp/syms" "$tmp/rep")
    case $out in
    "?"*)
        offs=${out#\?}
        # shellcheck disable=SC2086 # one offset per word
        addr2line -f -e "$bin" $offs | paste - - >"$tmp/a2l"
        # shellcheck disable=SC2086
        printf '%s\n' $offs | paste -d ' ' - "$tmp/a2l" |
            sed -e 's|\t.*/src/| src/|' -e 's|\t| |' -e 's| (discriminator [0-9]*)||' >>"$tmp/syms"
        parse_report
        return ;;
    esac
    failed=${out%% *}
    site=${out#* }
}

# check K OUTS: what the run just made (exit status in $rc, messages in
# err, the report parsed) has to be. Prints nothing when it is right, else
# one line of why. An output named NAME:side (a cache, a checkpoint) is a
# by-product of the run, written before its end: a failure after it leaves
# the new one, which must be whole (hogtrain info reads it).
check() {
    k=$1 outs=$2
    # What the messages hold: a sanitizer's report, the out-of-memory
    # message, a warning of it, and the last line.
    san='' oom=0 warn='' last=''
    eval "$(awk -v q="'" '/Sanitizer|runtime error|^SUMMARY/ && san == "" { san = $0 }
        /out of memory|Cannot allocate memory/ { oom = 1; if (/warning/) warn = warn " " $0 }
        { last = $0 }
        END { gsub(q, "", san); gsub(q, "", last); gsub(q, "", warn)
              print "san=" q san q " oom=" oom + 0 " warn=" q warn q " last=" q last q }' "$tmp/err")"
    if [ -n "$san" ]; then
        echo "a sanitizer report: $san"
        return
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "exit $rc: $last"
        return
    fi
    names=
    for f in $outs; do names="$names ${f%:side}"; done
    for f in w/* w/.[!.]*; do
        [ -e "$f" ] || continue
        f=${f#w/}
        case "$names " in
        *" $f "*) ;;
        *) echo "a stray file w/$f (exit $rc)"; return ;;
        esac
    done
    if [ "$rc" -eq 1 ]; then
        if [ "$failed" -eq 0 ]; then
            echo "exit 1 with nothing failed: $last"
            return
        fi
        if [ "$oom" -eq 0 ]; then
            echo "exit 1 without an out-of-memory message: $last"
            return
        fi
        for f in $outs; do
            name=${f%:side}
            if [ "$f" != "$name" ] && [ -e "w/$name" ] && ! cmp -s "w/$name" "old/$name"; then
                # A by-product written whole before the failure.
                "$bin" info "w/$name" >/dev/null 2>&1 || { echo "w/$name was left broken"; return; }
                continue
            fi
            if [ $((k % 2)) -eq 0 ]; then
                cmp -s "w/$name" "old/$name" || { echo "the older w/$name was changed or removed"; return; }
            elif [ -e "w/$name" ]; then
                echo "w/$name was left behind"
                return
            fi
        done
        return
    fi
    # Exit 0: nothing failed, or what failed was optional, or the command
    # warned of it (and of the outputs it could not write).
    if [ "$failed" -eq 1 ] && [ -z "$warn" ]; then
        case " $optional " in
        *" ${site%% *} "*) ;;
        *) echo "exit 0 although the allocation failed"; return ;;
        esac
    fi
    for f in $names; do
        case $warn in *"w/$f "*) continue ;; esac
        [ -s "w/$f" ] || { echo "exit 0 without w/$f"; return; }
    done
}

# sweep NAME OUTS ARGS...: the case's runs; OUTS are the names of the files
# it writes in w/, ARGS its command line (w/ is the output folder).
total_runs=0
sweep() {
    name=$1 outs=$2
    shift 2
    if [ -n "$only" ]; then
        case " $only " in
        *" $name "*) ;;
        *) return ;;
        esac
    fi
    rm -rf w
    mkdir w
    eval "$pre"
    : >"$tmp/rep"
    HOG_ALLOC_REPORT=$tmp/rep "$bin" "$@" <"$stdin" >/dev/null 2>err
    rc=$?
    count=$(sed -n 's/^allocations //p' rep)
    if [ "$rc" -ne 0 ] || [ -z "$count" ]; then
        not_ok "$name: the run without failures exits $rc"
        sed 's/^/# /' err | tail -n 5
        return
    fi
    bad=0 runs=0 opt=0 later=
    : >"$tmp/sites"
    ks=$(seq 1 $((count + 2)))
    for mode in at onward; do
        [ "$mode" = onward ] && { [ "$onward" = 0 ] && break; ks=$later; }
        for k in $ks; do
            rm -f w/* w/.[!.]*
            if [ $((k % 2)) -eq 0 ]; then
                for f in $outs; do cp "old/${f%:side}" w/; done
            fi
            eval "$pre"
            spec=$k
            [ "$mode" = onward ] && spec=$k+
            : >"$tmp/rep"
            HOG_ALLOC_FAIL_AT=$spec HOG_ALLOC_REPORT=$tmp/rep "$bin" "$@" <"$stdin" >/dev/null 2>err
            rc=$?
            runs=$((runs + 1))
            parse_report
            # A run that allocated after its failure is run again with
            # every later allocation failing too (its cleanup, its message).
            [ "$mode" = at ] && [ "$failed" -eq 1 ] && [ "$(sed -n 's/^allocations //p' rep)" != "$k" ] &&
                later="$later $k"
            [ -n "$site" ] && echo "$site" >>"$tmp/sites"
            if [ "$rc" -eq 0 ] && [ "$failed" -eq 1 ]; then
                opt=$((opt + 1))
                echo "${site%% *}" >>"$tmp/went-on"
            fi
            why=$(check "$k" "$outs")
            if [ -n "$why" ]; then
                bad=$((bad + 1))
                [ "$bad" -le 10 ] && echo "# $name: allocation $spec (${site:-none}): $why"
            fi
        done
    done
    total_runs=$((total_runs + runs))
    sites=$(sort -u "$tmp/sites" | wc -l)
    what="$count allocations at $sites call sites, $runs runs ($opt went on)"
    if [ "$bad" -eq 0 ]; then
        ok "$name: $what: each failure ends cleanly"
    else
        not_ok "$name: $what: $bad runs did not end cleanly"
    fi
    sort -u "$tmp/sites" >>"$tmp/all-sites"
}

only="$*"
stdin=/dev/null
pre=: # a command run before each run of a case, in $tmp
: >"$tmp/all-sites"
: >"$tmp/went-on"
t0=$(date +%s)
one="--parse-threads 1"
train="--threads 1 --parse-threads 1 --epochs 2"
sweep convert-libsvm "d.hgd" convert d.svm -o w/d.hgd $one
sweep convert-csv "d.hgd" convert d.csv -o w/d.hgd --header $one
sweep convert-vw "d.hgd" convert d.vw -o w/d.hgd $one
sweep convert-gzip "d.hgd" convert d.svm.gz -o w/d.hgd $one
stdin=d.svm
sweep convert-stdin "d.hgd" convert - -o w/d.hgd $one
stdin=/dev/null
sweep convert-csv-columns "d.hgd" convert d2.csv -o w/d.hgd --categorical 1 --ignore 5 $one
sweep convert-vw-weighted "d.hgd" convert dw.vw -o w/d.hgd $one
# feature names: VW's when asked for, and a CSV header's into the model
sweep convert-vw-names "d.hgd" convert d.vw -o w/d.hgd --feature-names $one
sweep train-csv-names "m.hog" train d.csv --header -o w/m.hog $train
sweep train-text "m.hog r.json" train d.svm -o w/m.hog --report w/r.json $train
sweep train-text-whole "m.hog" train d.svm -o w/m.hog --stream 0 $train
sweep train-text-blocks "m.hog" train big.svm -o w/m.hog $train
# past half of --mem-limit the blocks built from the text go to a scratch file
# (--holdout 0: the default holdout's best epoch would take a copy of the
# model out of that limit, and its features would no longer fit)
sweep train-text-spill "m.hog" train big.svm -o w/m.hog --mem-limit 400K --temp-dir w --holdout 0 $train
sweep train-hgd "m.hog" train d.hgd -o w/m.hog $train
sweep train-test "m.hog" train d.svm --test t.svm -o w/m.hog $train
sweep train-holdout "m.hog" train d.hgd --holdout 0.2 -o w/m.hog $train
sweep train-out-of-core "m.hog" train big.hgd --mem-limit 400K --holdout 0 -o w/m.hog $train
sweep train-optimisers "m.hog" train d.hgd --schedule adagrad --normalized --l1 1e-5 --average --early-stop 1 \
    --holdout 0.2 --bind 0 -o w/m.hog $train
sweep train-cache "m.hog c.hgd:side" train d.svm --cache w/c.hgd -o w/m.hog $train
sweep train-checkpoint "m.hog ck.hog:side" train d.hgd --checkpoint w/ck.hog -o w/m.hog $train
# Resuming: each run starts from the same checkpoint, of a finished run.
pre='cp ck-done.hog w/ck.hog'
sweep train-resume "m.hog ck.hog:side" train d.hgd --checkpoint w/ck.hog --resume -o w/m.hog $train
pre=:
sweep train-softmax "m.hog" train c3.svm --loss softmax -o w/m.hog $train
sweep train-dense "m.hog" train d.hgd --kernel dense --normalized 0 --step 0.1 -o w/m.hog $train
sweep train-threads "m.hog" train d.hgd -o w/m.hog --threads 2 --epochs 2
sweep train-replicas "m.hog" train d.hgd --replicas core -o w/m.hog --threads 2 --epochs 2
mf="--model mf --rank 4 --threads 1 --epochs 2"
sweep convert-ratings "r.hgr" convert r.txt --ratings -o w/r.hgr
sweep train-mf-text "m.hog r.json s.hgr:side" train r.txt $mf --test rt.txt --report w/r.json \
    --save-ratings w/s.hgr -o w/m.hog
sweep train-mf-hgr "m.hog ck.hog:side" train r.hgr $mf --holdout 0.2 --checkpoint w/ck.hog -o w/m.hog
sweep train-mf-one-pass "m.hog r.json" train r.txt --model mf --rank 4 --threads 1 --epochs 1 --test rt.txt \
    --report w/r.json -o w/m.hog
sweep train-cross-one-pass "m.hog" train d.svm --epochs 1 -b 16 --interactions :: --cross-bits 12 -o w/m.hog
sweep predict-mf "p.txt r.json" predict mf.hog rt.txt -o w/p.txt --report w/r.json
sweep predict-text "p.txt r.json" predict m.hog t.svm -o w/p.txt --report w/r.json $one
sweep predict-hgd "p.txt" predict m.hog t.hgd -o w/p.txt
sweep info-hgd "" info d.hgd
sweep info-text "" info d.svm
sweep info-model "" info m.hog
sweep info-mf "" info mf.hog
sweep info-ratings "" info r.hgr
sweep info-topology "" info --topology
[ -n "${ALLOC_FAIL_SITES:-}" ] && sort -u "$tmp/all-sites" >"$ALLOC_FAIL_SITES"
echo "# the runs that went on after a failed allocation: in $(sort -u "$tmp/went-on" | tr '\n' ' ')"
echo "# $total_runs runs in $(($(date +%s) - t0)) s; $(sort -u "$tmp/all-sites" | wc -l) call sites in all"
