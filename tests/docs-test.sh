#!/bin/sh
# docs-test.sh: the man pages and the bash completion: every page is made from its command's --help and holds each option it lists, renders without a warning, and installs with make install; the completion offers the commands, each command's options and the words some options take.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/docs-test.sh   (prints TAP lines; run by make test)
set -u
build=${HOG_BUILD:-build}
bin=$build/hogtrain
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/hog-docs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { # check WHAT COMMAND...
    what=$1
    shift
    if "$@" >"$tmp/log" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/# /' "$tmp/log" | tail -n 5; fi
}

sh "$here/tools/make-man.sh" "$bin" "$tmp/man" >"$tmp/log" 2>&1 || { not_ok "make-man.sh runs"; cat "$tmp/log"; exit 1; }
# page: the words of the command it documents
for page in "hogtrain:" "hogtrain-convert:convert" "hogtrain-train:train" "hogtrain-train-mf:train --model mf" \
    "hogtrain-tune:tune" "hogtrain-predict:predict" "hogtrain-info:info" "hogtrain-export:export" "hogtrain-keygen:keygen"; do
    name=${page%%:*} words=${page#*:}
    f="$tmp/man/$name.1"
    # shellcheck disable=SC2086 # the command's words
    "$bin" $words --help | grep -oE -- '--[a-zA-Z][a-zA-Z0-9_-]*' | sort -u >"$tmp/opts"
    missing=
    for o in $(cat "$tmp/opts"); do
        MANWIDTH=1000 man -l "$f" 2>/dev/null | col -b | grep -qF -- "$o" || missing="$missing $o"
    done
    check "$name.1: every option of '${words:-the command} --help' (${missing:-none missing})" test -z "$missing"
    check "$name.1: its title is its name" grep -q "^\.TH $(echo "$name" | tr 'a-z' 'A-Z') " "$f"
    check "$name.1: renders without a warning" sh -c "groff -ww -man -Tutf8 '$f' 2>&1 >/dev/null | grep . && exit 1 || exit 0"
done

# -o: the command as built is the one documented; nothing is rebuilt here
make -s -C "$here" BUILD="$(cd "$build" && pwd)" -o "$(cd "$build" && pwd)/hogtrain" install-docs \
    DESTDIR="$tmp/root" PREFIX=/usr/local >"$tmp/log" 2>&1
check "make install-docs puts the pages and the completion in place" \
    test -f "$tmp/root/usr/local/share/man/man1/hogtrain-train.1" -a \
    -f "$tmp/root/usr/local/share/bash-completion/completions/hogtrain"

# complete WORD...: what the completion offers for the last word
complete_words() {
    bash -c '. "$1"/tools/hogtrain-completion.bash; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hogtrain
             printf "%s\n" "${COMPREPLY[@]}"' sh "$here" "$@" | tr '\n' ' '
}
got=$(complete_words "$bin" t)
check "completion: the commands ($got)" test "$got" = "train tune "
got=$(complete_words "$bin" train x.svm --st)
check "completion: train's options ($got)" test "$got" = "--step --stream "
got=$(complete_words "$bin" train x.svm --model mf --ran)
check "completion: train --model mf's options ($got)" test "$got" = "--rank --rank-outputs "
got=$(complete_words "$bin" predict m.hog x.svm --rep)
check "completion: predict's options ($got)" test "$got" = "--report "
got=$(complete_words "$bin" train x.svm --loss so)
check "completion: the words of --loss ($got)" test "$got" = "softmax "
echo "1..$n"
