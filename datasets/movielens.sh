#!/bin/sh
# movielens.sh: exports dslabs' MovieLens ratings (about 100k) and splits them 90/10, seeded, into datasets/movielens/{train,test}.csv.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh datasets/movielens.sh [BUILD_DIR]
# BUILD_DIR is accepted like the other dataset scripts' and not needed.
# Installs r-base-core and r-cran-dslabs (apt-get, --no-install-recommends)
# when they are missing: R is needed only for this data set, so
# tools/install-deps.sh does not pull it in for every build. Writes
# "userId,movieId,rating" CSV with a header line. The split is R's
# sample() under set.seed(SEED) (SEED=1 unless set in the environment):
# round(10%) of the rows, chosen at random, go to test.csv, the rest to
# train.csv, both in the original row order. The files are rebuilt only when
# missing or older than this script, and are written to temporary files
# and renamed, so a failed run leaves none half-written. The data is
# gitignored: never commit it.
set -eu

if [ $# -gt 1 ]; then
    echo "usage: $0 [BUILD_DIR]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
self="$here/movielens.sh"
out="$here/movielens"
seed=${SEED:-1}

up_to_date() {
    [ -s "$1" ] && [ -z "$(find "$self" -newer "$1")" ]
}
if [ "$seed" = 1 ] && up_to_date "$out/train.csv" && up_to_date "$out/test.csv"; then
    exit 0
fi

installed() {
    case $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) in
        *" installed") return 0 ;;
        *) return 1 ;;
    esac
}
missing=
for p in r-base-core r-cran-dslabs; do
    installed "$p" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "movielens.sh: missing Debian packages:$missing; as root:" >&2
        echo "  apt-get install -y --no-install-recommends$missing" >&2
        exit 1
    fi
    echo "movielens.sh: installing$missing"
    # An update only when the package lists do not know dslabs yet.
    apt-cache show r-cran-dslabs >/dev/null 2>&1 || apt-get update
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi

mkdir -p "$out"
tmp_train="$out/train.csv.tmp.$$"
tmp_test="$out/test.csv.tmp.$$"
trap 'rm -f "$tmp_train" "$tmp_test"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

Rscript --vanilla - "$tmp_train" "$tmp_test" "$seed" <<'RSCRIPT'
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages(library(dslabs))
data("movielens", package = "dslabs", envir = environment())
r <- movielens[, c("userId", "movieId", "rating")]
if (nrow(r) < 90000) stop(sprintf("expected about 100k ratings, found %d", nrow(r)))
set.seed(as.integer(args[3]))
test <- sort(sample.int(nrow(r), round(0.1 * nrow(r))))
write.csv(r[-test, ], args[1], row.names = FALSE, quote = FALSE)
write.csv(r[test, ], args[2], row.names = FALSE, quote = FALSE)
cat(sprintf("movielens.sh: %d ratings, %d users, %d movies: %d train, %d test\n",
            nrow(r), length(unique(r$userId)), length(unique(r$movieId)),
            nrow(r) - length(test), length(test)))
RSCRIPT
mv -f "$tmp_train" "$out/train.csv"
mv -f "$tmp_test" "$out/test.csv"
