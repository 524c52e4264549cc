#!/bin/sh
# make-man.sh: the man pages, made by help2man from the text of each command's --help, so that the two never differ.
# SPDX-License-Identifier: BSD-2-Clause
# usage: sh tools/make-man.sh BIN OUTDIR   (writes hogtrain.1 and hogtrain-COMMAND.1)
set -eu
bin=$1
out=$2
mkdir -p "$out"
version=$("$bin" version | awk '{ print $2 }')
# page command-words name
page() {
    name=$1 words=$2 what=$3
    tmp="$out/.$name.1.tmp"
    help2man --no-info --no-discard-stderr --version-string="$version" --help-option="$words --help" \
        --name="$what" "$bin" >"$tmp"
    # help2man names the page after the program: name it after the command
    upper=$(echo "$name" | tr 'a-z' 'A-Z')
    sed -e "s/^\.TH HOGTRAIN /.TH $upper /" -e "s/^hogtrain \\\\- /$name \\\\- /" "$tmp" >"$out/$name.1"
    rm -f "$tmp"
}
help2man --no-info --version-string="$version" --help-option=--help \
    --name="lock-free multicore SGD trainer for linear models and matrix factorisation" "$bin" >"$out/hogtrain.1"
page hogtrain-convert convert "convert text (CSV, libsvm, Vowpal Wabbit) to a binary dataset"
page hogtrain-train train "train a linear model with HOGWILD! SGD on every core"
page hogtrain-train-mf "train --model mf" "factorise a ratings matrix with HOGWILD! SGD"
page hogtrain-tune tune "search the step, schedule and penalties, then train the best"
page hogtrain-predict predict "score a data set with a saved model"
page hogtrain-info info "describe a data set, a model, a checkpoint or the machine"
page hogtrain-export export "write a linear model's weights as text or JSON"
page hogtrain-keygen keygen "make the secret key of a run on several machines"
