#!/bin/sh
# docs-test.sh: the README and docs/ (the README at most 300 lines, every page of docs/ linked from it, every relative link and anchor found, its examples run as written), the man pages (made from each command's --help, holding each option it lists, rendering without a warning, installed by make install) and the bash completion (the commands, each command's options and the words some options take).
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

py=/usr/bin/python3
[ -x "$py" ] || py=python3

# The README is the front door: short, and a link to every page of docs/.
lines=$(wc -l <"$here/README.md")
check "README.md is at most 300 lines ($lines)" test "$lines" -le 300
unlinked=
for f in "$here"/docs/*.md; do
    grep -qF "](docs/$(basename "$f"))" "$here/README.md" || unlinked="$unlinked docs/$(basename "$f")"
done
check "every page of docs/ is linked from README.md (${unlinked:-none unlinked})" test -z "$unlinked"
# Every relative link of the README, CONTRIBUTING.md and docs/ names a file
# that is there and, after a #, one of its headings (GitHub's anchors).
cat >"$tmp/links.py" <<'EOF'
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
def anchors(path):
    found, fence = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} (.*)", line)
        if m:
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found
bad = links = 0
for page in [root / "README.md", root / "CONTRIBUTING.md"] + sorted((root / "docs").glob("*.md")):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        links += 1
        name, _, anchor = target.partition("#")
        path = (page.parent / name).resolve() if name else page
        if not path.exists():
            print("%s: link to %s: no such file" % (page.relative_to(root), target)); bad = 1
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            print("%s: link to %s: no such heading" % (page.relative_to(root), target)); bad = 1
print(links)
sys.exit(bad)
EOF
check "every relative link of README.md, CONTRIBUTING.md and docs/ finds its file and heading" "$py" "$tmp/links.py" "$here"

# The examples marked "docs-test: NAME" (README.md, then docs/), each run
# as written by sh -eu after the ones before it, in one folder of data made
# for them, the build's command first on PATH. One word is changed: the
# coordinator's port 29517 becomes one of this run's own (below the
# kernel's ephemeral range), so that two runs of this test at once, or a
# run beside the nodes test, do not meet.
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
[ "${low:-0}" -gt 20200 ] 2>/dev/null || low=32768
port=$((20000 + $$ % (low - 20100)))
abs_build=$(cd "$build" && pwd)
ex=$tmp/ex
mkdir "$ex"
if (cd "$ex" && "$abs_build/tools/gen_dense" -n 6000 -d 3 -s 3 -o dense.csv &&
    "$abs_build/tools/gen_sparse" -q -n 25000 -d 2000 -k 20 -s 5 -o all.svm &&
    "$abs_build/tools/gen_ratings" -u 500 -i 200 -k 4 -n 20000 -s 2 -o ratings.csv &&
    "$abs_build/tools/gen_click" -q --rows 8000 --seed 7 --format ffm -o train.ffm &&
    "$abs_build/tools/gen_click" -q --rows 2000 --first 8000 --seed 7 --format ffm -o test.ffm &&
    "$abs_build/tools/gen_click" -q --rows 8000 --seed 7 --format vw -o train.vw &&
    "$abs_build/tools/gen_click" -q --rows 2000 --first 8000 --seed 7 --format vw -o test.vw &&
    { echo clicked,price,age,visits; head -n 5000 dense.csv; } >train.csv &&
    { echo clicked,price,age,visits; tail -n 1000 dense.csv; } >test.csv &&
    head -n 20000 all.svm >train.svm && tail -n 5000 all.svm >test.svm &&
    cut -d ' ' -f 1,2 ratings.csv >pairs.csv) >"$tmp/gen.log" 2>&1; then
    ok "the examples' data: train.csv, test.csv, train.svm, test.svm, train.ffm, test.ffm, train.vw, test.vw, ratings.csv, pairs.csv"
else
    not_ok "the examples' data: train.csv, test.csv, train.svm, test.svm, train.ffm, test.ffm, train.vw, test.vw, ratings.csv, pairs.csv"
    sed 's/^/# /' "$tmp/gen.log"
fi
blocks=$(cat "$here/README.md" "$here"/docs/*.md | sed -n 's/^<!-- docs-test: \([^ ]*\) .*/\1/p')
# shellcheck disable=SC2086,SC2116 # the names on one line
check "README.md marks its examples to run (docs-test: $(echo $blocks))" \
    sh -c 'printf "%s\n" "$1" | grep -qx examples.sh && printf "%s\n" "$1" | grep -qx nodes.sh' sh "$blocks"
for name in $blocks; do
    for f in "$here/README.md" "$here"/docs/*.md; do
        awk -v name="$name" '
            index($0, "<!-- docs-test: " name " ") == 1 { want = 1; next }
            want && /^```/ { if (inside) exit; inside = 1; next }
            inside { print }
        ' "$f"
    done | sed "s/:29517\\b/:$port/g" >"$ex/$name"
    check "docs-test: $name runs as written ($(grep -c '^hogtrain ' "$ex/$name") hogtrain commands)" \
        sh -c 'cd "$1" && PATH="$2:$PATH" sh -eu "./$3"' sh "$ex" "$abs_build" "$name"
done
missing=
for out in clicks.hog clicks.txt svm.hog svm.json predict.json train.hgd model.hog fm.hog ffm.hog crossed.hog \
    tuned.hog ratings.mf ratings.txt hog.key nodes.hog; do
    [ -s "$ex/$out" ] || missing="$missing $out"
done
check "the examples wrote every file they name (${missing:-none missing})" test -z "$missing"
rows=$( (wc -l <"$ex/clicks.txt") 2>/dev/null)
check "predict wrote a line per row of test.csv (${rows:-0} of 1000)" test "${rows:-0}" -eq 1000
check "the two ranks wrote a model that hogtrain info reads" "$bin" info "$ex/nodes.hog"
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
