#!/bin/sh
# heart_scale.sh: splits LIBLINEAR's heart_scale sample (270 rows) into datasets/heart_scale/{train,test}.svm, every 4th row to test.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh datasets/heart_scale.sh [BUILD_DIR]
# BUILD_DIR is accepted like the other dataset scripts' and not needed. The
# split depends only on line numbers (rows 4, 8, ..., 268: 67 test rows, 203
# train rows), so it is the same on every machine. The files are rebuilt
# only when missing or older than this script.
set -eu

if [ $# -gt 1 ]; then
    echo "usage: $0 [BUILD_DIR]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
self="$here/heart_scale.sh"
src=/usr/share/doc/liblinear-tools/examples/heart_scale
out="$here/heart_scale"

# A non-empty file not older than this script.
up_to_date() {
    [ -s "$1" ] && [ -z "$(find "$self" -newer "$1")" ]
}
if up_to_date "$out/train.svm" && up_to_date "$out/test.svm"; then
    exit 0
fi

# Debian may ship the example compressed; read either form.
have_src() {
    [ -r "$src" ] || [ -r "$src.gz" ]
}
if ! have_src; then
    sh "$root/tools/install-deps.sh"
    if ! have_src; then
        echo "heart_scale.sh: $src not found although liblinear-tools is installed;" >&2
        echo "  is /usr/share/doc excluded from packages (see /etc/dpkg/dpkg.cfg.d/)?" >&2
        exit 1
    fi
fi
read_src() {
    if [ -r "$src" ]; then cat "$src"; else gzip -dc "$src.gz"; fi
}

mkdir -p "$out"
tmp_train="$out/train.svm.tmp.$$"
tmp_test="$out/test.svm.tmp.$$"
trap 'rm -f "$tmp_train" "$tmp_test"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

read_src | awk -v train="$tmp_train" -v test="$tmp_test" '
    NF == 0 { next }
    { n++ }
    n % 4 == 0 { print > test; next }
    { print > train }
    END { if (n != 270) { printf "heart_scale.sh: expected 270 rows, found %d\n", n > "/dev/stderr"; exit 1 } }'
mv -f "$tmp_train" "$out/train.svm"
mv -f "$tmp_test" "$out/test.svm"
