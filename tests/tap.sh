# tap.sh: what the shell tests that print TAP share, sourced by them: the build's hogtrain, python, the numbered ok/not ok/skip lines, waiting for a log line and reading a --report.
# SPDX-License-Identifier: BSD-2-Clause
# usage: TAP_TAIL=15 . "$(dirname "$0")/tap.sh"   (TAP_TAIL: lines of each log a failed case shows; 8)
# Sets build (HOG_BUILD, default build), bin (its hogtrain) and py.
build=${HOG_BUILD:-build}
bin=$build/hogtrain
py=/usr/bin/python3
[ -x "$py" ] || py=python3
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { # not_ok WHAT [LOG...]: a failed case, with the tail of each log
    n=$((n + 1))
    echo "not ok $n - $1"
    shift
    for f in "$@"; do [ -f "$f" ] && tail -n "${TAP_TAIL:-8}" "$f" | sed "s|^|# $(basename "$f"): |"; done
}
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
wait_for() { # wait_for PATTERN FILE [SECONDS]: until FILE shows PATTERN, SECONDS (30) at most
    tries=0
    while ! grep -q "$1" "$2" 2>/dev/null && [ "$tries" -lt $((${3:-30} * 50)) ]; do
        "$py" -c "import time; time.sleep(0.02)"
        tries=$((tries + 1))
    done
}
json() { # json FILE EXPR: a value of a --report
    "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}
