#!/bin/sh
# movielens.sh: exports dslabs' MovieLens ratings (about 100k) and splits them 90/10, seeded, into datasets/movielens/{train,test}.csv, and the same split with side information into datasets/movielens/{train,test}.ffm.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh datasets/movielens.sh [BUILD_DIR]
# BUILD_DIR is accepted like the other dataset scripts' and not needed.
# Installs r-base-core and r-cran-dslabs (apt-get, --no-install-recommends)
# when they are missing: R is needed only for this data set, so
# tools/install-deps.sh does not pull it in for every build. Writes
# "userId,movieId,rating" CSV with a header line, for --model mf. The split
# is R's sample() under set.seed(SEED) (SEED=1 unless set in the
# environment): round(10%) of the rows, chosen at random, go to test.csv,
# the rest to train.csv, both in the original row order.
#
# The .ffm files hold the same ratings in the same order (line N of
# train.ffm is line N + 1 of train.csv) as LIBFFM text, `rating
# field:index:value ...`, for --model fm and --model ffm with --loss
# squared. Five fields, each a disjoint range of indices, counted from 0 in
# this order, the ranges following each other:
#   field 0  the user: one index per userId, in increasing order of the id
#            (671 users: 0..670 in dslabs 0.7.4), value 1
#   field 1  the movie: one index per movieId, in increasing order of the id
#            (9,066 movies: 671..9736), value 1
#   field 2  the movie's genres: one index per genre name, in alphabetical
#            order ("(no genres listed)" is one; 20 names: 9737..9756), one
#            feature per genre of the movie, value 1/sqrt(its genres)
#   field 3  the movie's year, in 5-year buckets from the first year's
#            (1900-1904, 1905-1909, ..., 2015-2019: 9757..9780), then one
#            index for a missing year (9781), value 1
#   field 4  the rating's year (its timestamp's, UTC), one index per year
#            from the first (1995..2016: 9782..9803), value 1
# The indices are made from all the ratings, test ones too, so that a
# test row names the same features (a movie rated only in test.ffm has an
# index that training never moved). The script prints the ranges.
#
# All four files are rebuilt only when one is missing or older than this
# script, and are written to temporary files and renamed, so a failed run
# leaves none half-written. The data is gitignored: never commit it.
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
fresh=1
for f in train.csv test.csv train.ffm test.ffm; do
    up_to_date "$out/$f" || fresh=0
done
if [ "$seed" = 1 ] && [ "$fresh" = 1 ]; then
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
tmp_train_ffm="$out/train.ffm.tmp.$$"
tmp_test_ffm="$out/test.ffm.tmp.$$"
trap 'rm -f "$tmp_train" "$tmp_test" "$tmp_train_ffm" "$tmp_test_ffm"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

Rscript --vanilla - "$tmp_train" "$tmp_test" "$seed" "$tmp_train_ffm" "$tmp_test_ffm" <<'RSCRIPT'
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages(library(dslabs))
data("movielens", package = "dslabs", envir = environment())
m <- movielens
r <- m[, c("userId", "movieId", "rating")]
if (nrow(r) < 90000) stop(sprintf("expected about 100k ratings, found %d", nrow(r)))
set.seed(as.integer(args[3]))
test <- sort(sample.int(nrow(r), round(0.1 * nrow(r))))
write.csv(r[-test, ], args[1], row.names = FALSE, quote = FALSE)
write.csv(r[test, ], args[2], row.names = FALSE, quote = FALSE)

# The side information: the layout is in the header comment.
users <- sort(unique(m$userId))
movies <- sort(unique(m$movieId))
first_genre <- length(users) + length(movies)
# Genres per level of the factor (about 900 combinations), not per rating.
level_genres <- strsplit(levels(m$genres), "|", fixed = TRUE)
genres <- sort(unique(unlist(level_genres)))
level_text <- vapply(level_genres, function(g)
    paste0("2:", first_genre + match(g, genres) - 1L, ":", sprintf("%.6g", 1 / sqrt(length(g))),
           collapse = " "), "")
first_year <- first_genre + length(genres)
year_base <- 5L * (min(m$year, na.rm = TRUE) %/% 5L)
year_buckets <- (max(m$year, na.rm = TRUE) - year_base) %/% 5L + 1L
year <- ifelse(is.na(m$year), year_buckets, (m$year - year_base) %/% 5L)
first_rated <- first_year + year_buckets + 1L
rated <- as.POSIXlt(m$timestamp, origin = "1970-01-01", tz = "UTC")$year + 1900L
end <- first_rated + max(rated) - min(rated)
ffm <- paste0(as.character(m$rating), " 0:", match(m$userId, users) - 1L,
              ":1 1:", length(users) + match(m$movieId, movies) - 1L,
              ":1 ", level_text[as.integer(m$genres)], " 3:", first_year + year,
              ":1 4:", first_rated + rated - min(rated), ":1")
writeLines(ffm[-test], args[4])
writeLines(ffm[test], args[5])
cat(sprintf(paste0("movielens.sh: .ffm indices: users 0..%d, movies %d..%d, %d genres %d..%d,",
                   " movie years from %d in 5-year buckets %d..%d (no year: %d),",
                   " rating years %d..%d: %d..%d\n"),
            length(users) - 1L, length(users), first_genre - 1L, length(genres), first_genre,
            first_year - 1L, year_base, first_year, first_year + year_buckets - 1L,
            first_year + year_buckets, min(rated), max(rated), first_rated, end))
cat(sprintf("movielens.sh: %d ratings, %d users, %d movies: %d train, %d test\n",
            nrow(r), length(unique(r$userId)), length(unique(r$movieId)),
            nrow(r) - length(test), length(test)))
RSCRIPT
mv -f "$tmp_train" "$out/train.csv"
mv -f "$tmp_test" "$out/test.csv"
mv -f "$tmp_train_ffm" "$out/train.ffm"
mv -f "$tmp_test_ffm" "$out/test.ffm"
