#!/bin/sh
# run-tests.sh: runs Criterion test binaries one after another and sums their results into one closing line.
# SPDX-License-Identifier: BSD-2-Clause
# usage: tests/run-tests.sh BUILD_DIR TEST...
# A TEST is a Criterion binary, or a shell script (NAME.sh) that prints TAP
# lines: `ok N - what` for each case that passed, `not ok N - what` otherwise.
set -u
build=$1
shift
HOG_BUILD=$(cd "$build" && pwd)
export HOG_BUILD
passed=0 failed=0 skipped=0 status=0
failures='' flaky=''
# A Criterion test that fails is run again once, alone: one that passes
# then is counted as passed and named as flaky in the closing lines, so a
# failure that depends on the machine's load is seen, and one that does
# not still fails the run.
rerun() { # BINARY SUITE::TEST: 0 when it passes alone
    o=$("$1" --jobs 1 --filter "$(printf '%s' "$2" | sed 's|::|/|')" 2>&1)
    printf '%s\n' "$o" | grep -q 'Synthesis:.*Failing: 0 | Crashing: 0'
}
for t in "$@"; do
    name=$(basename "$t")
    case $name in
    *.sh)
        out=$(sh "$t" 2>&1)
        rc=$?
        p=$(printf '%s\n' "$out" | grep -c '^ok ' || true)
        f=$(printf '%s\n' "$out" | grep -c '^not ok ' || true)
        printf '%s\n' "$out" | grep -E '^(not ok |#)' || true
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
            printf '%s\n' "$out" | tail -n 20
            echo "$name: failed (exit $rc) outside its cases"
            f=1
        fi
        passed=$((passed + p)); failed=$((failed + f))
        echo "$name: $((p + f)) tested, $p passed, $f failed"
        if [ "$f" -ne 0 ]; then
            status=1
            failures="$failures $name"
        fi
        continue ;;
    esac
    out=$("$t" --jobs 1 --verbose 2>&1) # --verbose: Criterion prints [SKIP] lines only then
    rc=$?
    printf '%s\n' "$out" | grep -v -e '^\[====\] Synthesis' -e '^\[----\] Criterion v' | grep -E '^\[(FAIL|----|SKIP|WARN)\]|Assertion|ERROR|SUMMARY|runtime error' || true
    line=$(printf '%s\n' "$out" | grep 'Synthesis:' | tail -n 1)
    if [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -n 20
        echo "$name: crashed (exit $rc), no summary"
        failed=$((failed + 1)); status=1; failures="$failures $name"; continue
    fi
    p=$(printf '%s' "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    f=$(printf '%s' "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    c=$(printf '%s' "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    tested=$(printf '%s' "$line" | sed -n 's/.*Tested: \([0-9]*\).*/\1/p')
    s=$(printf '%s\n' "$out" | grep -c '^\[SKIP\]' || true)
    retried=0
    for test in $(printf '%s\n' "$out" | sed -n 's/^\[FAIL\] \([^:]*::[^:]*\):.*/\1/p'); do
        if rerun "$t" "$test"; then
            f=$((f - 1)); p=$((p + 1)); retried=1; flaky="$flaky $name:$test"
            echo "$name: $test failed, then passed when run again alone"
        else
            failures="$failures $name:$test"
        fi
    done
    passed=$((passed + p - s)); failed=$((failed + f)); skipped=$((skipped + s))
    echo "$name: $tested tested, $((p - s)) passed, $f failed ($c crashed), $s skipped"
    if [ "$f" -ne 0 ]; then
        status=1
    elif [ "$rc" -ne 0 ] && [ "$retried" -eq 0 ]; then
        status=1; failures="$failures $name(exit $rc)"
    fi
done
[ -z "$flaky" ] || echo "flaky (failed once, passed alone):$flaky"
[ -z "$failures" ] || echo "failed:$failures"
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $status
