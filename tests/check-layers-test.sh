#!/bin/sh
# check-layers-test.sh: tests tools/check-layers.py on small made-up trees, one clean and one per kind of violation.
# SPDX-License-Identifier: BSD-2-Clause
# usage: sh tests/check-layers-test.sh   (from the top of the tree; prints TAP lines, exits 1 on a failure)
# Each case copies a clean tree that follows CONTRIBUTING.md's rules (the real
# CONTRIBUTING.md), breaks one rule, builds the objects and runs the check.
set -u
top=$(pwd)
py=${PYTHON3:-/usr/bin/python3}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

put() { # put FILE LINE...: writes the lines into FILE under the case's tree
    mkdir -p "$(dirname "$tree/$1")"
    f=$1
    shift
    printf '%s\n' "$@" >"$tree/$f"
}

clean_tree() {
    put CONTRIBUTING.md "$(cat "$top/CONTRIBUTING.md")"
    put include/hogtrain.h 'int hog_api(void);'
    put src/util/util.h '#include "hogtrain.h"' 'int hog_util_sum(int a, int b);'
    put src/util/util_sum.c '#include "util.h"' 'int hog_util_sum(int a, int b) { return a + b; }'
    put src/etl/etl.h '#include "../util/util.h"' 'int hog_etl_read(void);' 'int hog_etl_more(void);'
    put src/etl/etl_read.c '#include "etl.h"' 'int hog_etl_read(void) { return hog_util_sum(1, hog_etl_more()); }'
    put src/etl/etl_more.c '#include "etl.h"' 'int hog_etl_more(void) { return 2; }'
    put src/pool/pool.h '#include "../util/util.h"' 'int hog_pool_size(void);'
    put src/pool/pool_size.c '#include "pool.h"' 'int hog_pool_size(void) { return hog_util_sum(2, 2); }'
    put src/train/train.h '#include "../etl/etl.h"' '#include "../pool/pool.h"' 'int hog_train_step(void);'
    put src/train/train_step.c '#include "train.h"' 'int hog_train_step(void) { return hog_etl_read() + hog_pool_size(); }'
    put src/train/train_api.c '#include "train.h"' 'int hog_api(void) { return hog_train_step(); }'
    put src/cli/cli.h '#include <hogtrain.h>'
    put src/cli/cli_main.c '#include "cli.h"' 'int main(void) { return hog_api(); }'
}

n=0 failed=0
# check NAME WANT_RC PATTERN [CFLAGS]: builds $tree's objects, runs the check,
# and wants its exit status WANT_RC and a line matching PATTERN (grep -E).
check() {
    n=$((n + 1))
    flags="-Iinclude ${4:-}"
    out=
    for c in "$tree"/src/*/*.c; do
        o="$tree/build/src/$(basename "$(dirname "$c")")/$(basename "$c" .c).o"
        mkdir -p "$(dirname "$o")"
        # shellcheck disable=SC2086 # the flags are words
        (cd "$tree" && $cc -std=c11 $flags -c -o "$o" "$c") || out="build failed"
    done
    [ -n "${REMOVE:-}" ] && rm -f "$tree/$REMOVE"
    if [ -z "$out" ]; then
        out=$("$py" "$top/tools/check-layers.py" --root "$tree" --build build --cflags "$flags" 2>&1)
        rc=$?
    else
        rc=-1
    fi
    if [ "$rc" -eq "$2" ] && printf '%s\n' "$out" | grep -Eq -- "$3"; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1 (exit $rc, wanted $2 and a line matching: $3)"
        printf '%s\n' "$out" | sed 's/^/#   /'
        failed=$((failed + 1))
    fi
}

case_tree() { # case_tree NAME: a fresh clean tree to break
    tree=$tmp/$1
    clean_tree
}

case_tree clean
check "a tree that keeps the rules passes" 0 'keep the layers of CONTRIBUTING.md, without a cycle'

case_tree cli-include
put src/cli/cli_main.c '#include "cli.h"' '#include "../etl/etl.h"' 'int main(void) { return hog_api(); }'
check "the command including a private header fails" 1 \
    '^check-layers: src/cli/cli_main.c:2 includes "../etl/etl.h" \(src/etl/etl.h\): cli may use only hogtrain.h'

case_tree cli-flags
check "an -I that opens src/ to the command fails" 1 'have -I src, which lets src/cli reach src/' "-I src"

case_tree cli-flags-above
check "an -I above src/ fails too" 1 'have -I\., which lets src/cli reach src/' "-I."

case_tree util-include
put src/util/util_sum.c '#include "util.h"' '#include "../pool/pool.h"' 'int hog_util_sum(int a, int b) { return a + b; }'
check "util including another folder's header fails" 1 \
    'src/util/util_sum.c:2 includes "../pool/pool.h" \(src/pool/pool.h\): util may use nothing but hogtrain.h'

case_tree etl-include-pool
put src/etl/etl_more.c '#include "etl.h"' '#include "../pool/pool.h"' 'int hog_etl_more(void) { return 2; }'
check "etl including pool's header fails" 1 'src/etl/etl_more.c:2 includes .*: etl may use util and hogtrain.h'

case_tree outside
put tests/helper.h 'int hog_helper(void);'
put src/util/util_sum.c '#include "util.h"' '#include "../../tests/helper.h"' 'int hog_util_sum(int a, int b) { return a + b; }'
check "including a file outside src/ and include/ fails" 1 'includes "../../tests/helper.h" \(tests/helper.h\), outside src/'

case_tree util-call
put src/util/util_sum.c '#include "util.h"' 'int hog_etl_more(void);' 'int hog_util_sum(int a, int b) { return a + b + hog_etl_more(); }'
check "util calling etl without its header fails" 1 \
    '^check-layers: src/util/util_sum.c calls src/etl/etl_more.c: hog_etl_more \(util may use nothing but hogtrain.h\)'

case_tree cli-private-call
put src/cli/cli_main.c '#include "cli.h"' 'int hog_etl_more(void);' 'int main(void) { return hog_api() + hog_etl_more(); }'
check "the command calling a private function fails" 1 'src/cli/cli_main.c calls src/etl/etl_more.c: hog_etl_more'

case_tree cycle
put src/etl/etl_more.c '#include "etl.h"' 'int hog_etl_more(void) { static int d; return d++ ? 2 : hog_etl_read(); }'
check "two files calling each other fail" 1 \
    '^check-layers: call cycle among 2 files: src/etl/etl_more.c src/etl/etl_read.c'

case_tree cycle-three
put src/train/train.h '#include "../etl/etl.h"' '#include "../pool/pool.h"' 'int hog_train_step(void);' 'int hog_train_b(int);' 'int hog_train_c(int);'
put src/train/train_step.c '#include "train.h"' 'int hog_train_step(void) { return hog_train_b(3); }'
put src/train/train_b.c '#include "train.h"' 'int hog_train_b(int k) { return k ? hog_train_c(k - 1) : 0; }'
put src/train/train_c.c '#include "train.h"' 'int hog_train_c(int k) { return k ? hog_train_step() : hog_etl_read(); }'
check "three files calling round in a ring fail" 1 \
    'call cycle among 3 files: src/train/train_b.c src/train/train_c.c src/train/train_step.c'

case_tree include-cycle
put src/etl/etl.h '#ifndef ETL_H' '#define ETL_H' '#include "../util/util.h"' '#include "etl_extra.h"' \
    'int hog_etl_read(void);' 'int hog_etl_more(void);' '#endif'
put src/etl/etl_extra.h '#ifndef ETL_EXTRA_H' '#define ETL_EXTRA_H' '#include "etl.h"' '#endif'
check "headers including each other fail" 1 'include cycle among 2 files: src/etl/etl.h src/etl/etl_extra.h'

case_tree storage-policy
put src/etl/etl.h '#include "../util/util.h"' 'int hog_etl_read(void);' 'int hog_etl_more(void);' \
    'void hog_dataset_willneed(int b);'
put src/etl/etl_more.c '#include "etl.h"' 'int hog_etl_more(void) { return 2; }' 'void hog_dataset_willneed(int b) { (void)b; }'
put src/train/train_step.c '#include "train.h"' \
    'int hog_train_step(void) { hog_dataset_willneed(1); return hog_etl_read() + hog_pool_size(); }'
check "train calling the block store's policy itself fails" 1 \
    '^check-layers: src/train/train_step.c calls src/etl/etl_more.c: hog_dataset_willneed \(forbidden to train'

case_tree storage-policy-pattern
put src/etl/etl.h '#include "../util/util.h"' 'int hog_etl_read(void);' 'int hog_etl_more(void);' \
    'int hog_block_ring_get(int b);'
put src/etl/etl_more.c '#include "etl.h"' 'int hog_etl_more(void) { return 2; }' 'int hog_block_ring_get(int b) { return b; }'
put src/train/train_step.c '#include "train.h"' \
    'int hog_train_step(void) { return hog_block_ring_get(1) + hog_etl_read() + hog_pool_size(); }'
check "train calling a function a pattern forbids fails" 1 \
    'src/train/train_step.c calls src/etl/etl_more.c: hog_block_ring_get \(forbidden to train'

case_tree new-folder
put src/misc/misc_x.c 'int hog_misc_x(void);' 'int hog_misc_x(void) { return 1; }'
check "a folder the rules do not name fails" 1 'src/misc has no line in the layer rules'

case_tree no-object
REMOVE=build/src/etl/etl_more.o check "a missing object stops the check" 2 'etl_more.o is missing'

echo "1..$n"
[ "$failed" -eq 0 ]
