#!/bin/sh
# make-corpus.sh: makes the binary fuzz targets' seed corpora (tests/fuzz/corpus/{hgd,model,mf,hgr}) with the hogtrain command, from a few lines of text each.
# SPDX-License-Identifier: BSD-2-Clause
# usage: tests/fuzz/make-corpus.sh [HOGTRAIN (build/hogtrain)]
# Each seed is a small valid file of one kind the readers meet (the .hgd seeds
# named -v2 were made by a build that wrote version 2, without a summary); the targets'
# mutators make the rest (more blocks, version 1 datasets, broken sizes).
# Model files record the time trained, so seeds made again differ in those bytes.
set -eu
cd "$(dirname "$0")/../.."
hog=$(realpath "${1:-build/hogtrain}")
c=$(pwd)/tests/fuzz/corpus
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$c/hgd" "$c/model" "$c/mf" "$c/hgr"
cd "$t"

# data sets: 1-based and 0-based libsvm, weighted VW, CSV (numbers, and class names), feature names (a CSV
# header, VW asked for them), LIBFFM's fields (version 6), and a cache (with its source record)
printf '1 1:0.5 3:1\n-1 2:1\n1 1:2 4:-1.5\n-1\n1 5:1e-3\n-1 2:0.25 3:4\n' >one.svm
printf '0 0:1 7:2\n1 3:0.5\n2 1:1 2:1 9:-3\n0\n1 0:4\n' >zero.svm
printf '1 2.5 |a x y\n-1 |a z\n1 0 |b x:2\n-1 0.25 |a y\n' >w.vw
printf 'y,a,b,c\n1,0.5,0,2\n0,1,1,0\n1,0,0,0\n' >d.csv
printf 'a,b,species\n0.5,1,virginica\n1,0,setosa\n0,2,versicolor\n1.5,1,setosa\n' >names.csv
printf 'y,age,color,height\n1,30,red,1.5\n0,40,blue,0\n1,0,red,1.7\n' >fnames.csv
printf '1 0:3:1 1:7:0.5 2:12:-2\n0 2:40:1 0:5:1\n1 1:8:2\n0 0:2:1 2:9:1\n' >f.ffm
"$hog" convert -q one.svm -o "$c/hgd/libsvm-one-based.hgd"
"$hog" convert -q zero.svm -o "$c/hgd/libsvm-zero-based.hgd"
"$hog" convert -q w.vw -b 8 -o "$c/hgd/vw-weighted.hgd"
"$hog" convert -q d.csv -o "$c/hgd/csv-header.hgd"
"$hog" convert -q names.csv --label species -o "$c/hgd/csv-class-names.hgd"
"$hog" convert -q fnames.csv --categorical color --feature-names -b 6 -o "$c/hgd/csv-feature-names.hgd"
"$hog" convert -q w.vw -b 2 --feature-names -o "$c/hgd/vw-feature-names.hgd"
"$hog" convert -q f.ffm -o "$c/hgd/ffm-fields.hgd"
"$hog" convert -q one.svm -b 4 -o "$c/hgd/libsvm-hashed.hgd"
"$hog" train -q one.svm --cache "$c/hgd/cache-source.hgd" -o m.hog --epochs 1 --threads 1

# linear models: each loss's shape of outputs and classes (the plain update:
# version 1), then feature scales (version 3), class names (version 2) and both
"$hog" train -q one.svm -o "$c/model/logistic.hog" --epochs 2 --threads 1 --normalized 0
"$hog" train -q one.svm -o "$c/model/hinge.hog" --loss hinge --epochs 2 --threads 1 --normalized 0
"$hog" train -q zero.svm -o "$c/model/softmax.hog" --loss softmax --epochs 2 --threads 1 --normalized 0
"$hog" train -q zero.svm -o "$c/model/squared.hog" --loss squared --epochs 2 --threads 1 --normalized 0
"$hog" train -q one.svm -o "$c/model/scaled.hog" --epochs 2 --threads 1
"$hog" train -q one.svm -b 4 -o "$c/model/hashed.hog" --epochs 2 --threads 1
"$hog" train -q names.csv --label species --loss softmax -o "$c/model/named.hog" --epochs 2 --threads 1 --normalized 0
"$hog" train -q names.csv --label species --loss softmax -o "$c/model/named-scaled.hog" --epochs 2 --threads 1
"$hog" train -q fnames.csv --categorical color --feature-names -b 6 -o "$c/model/feature-names.hog" --epochs 2 \
    --threads 1 --normalized 0
"$hog" train -q w.vw -b 2 --feature-names -o "$c/model/vw-feature-names-scaled.hog" --epochs 2 --threads 1

# ratings, and matrix factorisation models of rank 2 and 5
printf 'u1 i1 4\nu2 i1 3\nu1 i2 5\nu3 i3 1\n' >r.txt
printf 'alice film-a 4.5\nbob film-b 2\ncarol film-a 3\nbob film-c 5\nalice film-c 1\n' >s.txt
"$hog" convert -q r.txt --ratings -o "$c/hgr/three-users.hgr"
"$hog" convert -q s.txt --ratings -o "$c/hgr/names.hgr"
"$hog" train -q r.txt --model mf -o "$c/mf/rank2.hog" --rank 2 --epochs 2 --threads 1
"$hog" train -q s.txt --model mf -o "$c/mf/rank5.hog" --rank 5 --epochs 2 --threads 1
ls -l "$c/hgd" "$c/model" "$c/mf" "$c/hgr"
