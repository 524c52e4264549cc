#!/bin/sh
# fashion-mnist.sh: builds datasets/fashion-mnist/{train,test}.hgd from the IDX files of Debian's dataset-fashion-mnist.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh datasets/fashion-mnist.sh BUILD_DIR
# BUILD_DIR holds the hogtrain command and tools/idx2libsvm (make builds both).
# A .hgd is rebuilt only when it is missing, older than this script or
# unreadable by BUILD_DIR/hogtrain. The libsvm text in between (pixel index
# 0..783 : pixel/255, label 0..9) is removed once converted.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
if ! build=$(cd "$1" 2>/dev/null && pwd); then
    echo "fashion-mnist.sh: build folder $1 not found: run make first" >&2
    exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
self="$here/fashion-mnist.sh"
idx=/usr/share/datasets/fashion-mnist
out="$here/fashion-mnist"

# A non-empty file not older than this script, which this build's hogtrain
# (if there is one yet) can read: a file left by an older format is rebuilt.
up_to_date() {
    [ -s "$1" ] && [ -z "$(find "$self" -newer "$1")" ] &&
        { [ ! -x "$build/hogtrain" ] || "$build/hogtrain" info "$1" >/dev/null 2>&1; }
}

if up_to_date "$out/train.hgd" && up_to_date "$out/test.hgd"; then
    exit 0
fi

have_idx() {
    for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz \
             t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
        [ -r "$idx/$f" ] || return 1
    done
}
if ! have_idx; then
    sh "$root/tools/install-deps.sh"
    if ! have_idx; then
        echo "fashion-mnist.sh: the IDX files are not in $idx (package dataset-fashion-mnist)" >&2
        exit 1
    fi
fi
for tool in "$build/tools/idx2libsvm" "$build/hogtrain"; do
    if [ ! -x "$tool" ]; then
        echo "fashion-mnist.sh: $tool not found: run make first" >&2
        exit 1
    fi
done

mkdir -p "$out"
cleanup() {
    rm -f "$out/train.svm" "$out/test.svm"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# name:prefix of the IDX files
for split in train:train test:t10k; do
    name=${split%%:*}
    prefix=${split#*:}
    if up_to_date "$out/$name.hgd"; then
        continue
    fi
    echo "fashion-mnist.sh: building $out/$name.hgd"
    "$build/tools/idx2libsvm" "$idx/$prefix-images-idx3-ubyte.gz" \
        "$idx/$prefix-labels-idx1-ubyte.gz" "$out/$name.svm"
    "$build/hogtrain" convert "$out/$name.svm" -o "$out/$name.hgd" --format libsvm --index-base 0
    rm -f "$out/$name.svm"
done
