#!/bin/sh
# python-test.sh: the Python package's tests (python/tests, pytest) against the build's libhogtrain.so, one TAP line per test.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/python-test.sh   (run by make test and make python-test)
# Skipped tests and expected failures are passes with their reason listed
# as "#" lines; a failure prints pytest's report of it.
set -u
build=$(cd "${HOG_BUILD:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
out=$(mktemp /tmp/hog-pytest-XXXXXX)
trap 'rm -f "$out"' EXIT INT TERM
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root/python" HOGTRAIN_LIB="$build/libhogtrain.so.0" HOG_BUILD="$build" \
    "$py" -m pytest -p no:cacheprovider -v -rsx --tb=short "$root/python/tests" >"$out" 2>&1
rc=$?
awk '
    $1 ~ /::/ && $2 ~ /^(PASSED|XPASS|XFAIL|SKIPPED|FAILED|ERROR)$/ {
        n++
        if ($2 == "PASSED" || $2 == "XPASS") print "ok " n " - " $1
        else if ($2 == "XFAIL") print "ok " n " - " $1 " # TODO expected failure"
        else if ($2 == "SKIPPED") print "ok " n " - " $1 " # SKIP"
        else { print "not ok " n " - " $1; failed = 1 }
    }
    /^(SKIPPED|XFAIL) / { print "# " $0 }
    END { if (n == 0) exit 1 }
' "$out" || { sed 's/^/# /' "$out" | tail -n 40; exit 1; }
if [ "$rc" -ne 0 ]; then
    sed -n '/= FAILURES =/,$p' "$out" | sed 's/^/# /' | tail -n 80
    exit 1
fi
