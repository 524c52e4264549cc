# sklearn-sets.py: exports scikit-learn's bundled data sets, features as users have them, to libsvm text with fixed 75/25 splits.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: /usr/bin/python3 datasets/sklearn-sets.py [OUT_DIR] [NAME...]
# Needs scikit-learn (Debian: python3-sklearn); the data ship with it, so
# nothing is downloaded. Writes OUT_DIR/NAME/{train,test}.svm (default
# OUT_DIR: datasets/sklearn) for each NAME (default all):
#   breast_cancer  binary, 569 rows, 30 raw features (0.0005 to 4254)
#   digits         10 classes, 1797 rows, 64 pixels 0..16
#   iris           3 classes, 150 rows, 4 raw features
#   wine           3 classes, 178 rows, 13 raw features (0.13 to 1680)
#   diabetes       regression, 442 rows, load_diabetes() as bundled: the 10
#                  features mean-centred and scaled, the target raw (25..346)
#   diabetes_raw   the same rows with the features unscaled (scaled=False)
# The split is train_test_split(test_size=0.25, random_state=0), stratified
# by class for the classifiers, so every machine gets the same rows. Indices
# are 1-based (LIBLINEAR's convention) and zeros are left out. A file is
# rewritten only when missing or older than this script.
import os
import sys

from sklearn import datasets
from sklearn.datasets import dump_svmlight_file
from sklearn.model_selection import train_test_split

SETS = {
    "breast_cancer": (lambda: datasets.load_breast_cancer(return_X_y=True), True),
    "digits": (lambda: datasets.load_digits(return_X_y=True), True),
    "iris": (lambda: datasets.load_iris(return_X_y=True), True),
    "wine": (lambda: datasets.load_wine(return_X_y=True), True),
    "diabetes": (lambda: datasets.load_diabetes(return_X_y=True), False),
    "diabetes_raw": (lambda: datasets.load_diabetes(return_X_y=True, scaled=False), False),
}


def up_to_date(path):
    return os.path.getsize(path) > 0 and os.path.getmtime(path) >= os.path.getmtime(__file__) \
        if os.path.exists(path) else False


def export(name, out_dir):
    load, classify = SETS[name]
    folder = os.path.join(out_dir, name)
    train, test = os.path.join(folder, "train.svm"), os.path.join(folder, "test.svm")
    if up_to_date(train) and up_to_date(test):
        return
    X, y = load()
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.25, random_state=0,
                                      stratify=y if classify else None)
    os.makedirs(folder, exist_ok=True)
    for path, Xs, ys in ((train, Xa, ya), (test, Xb, yb)):
        tmp = "%s.tmp.%d" % (path, os.getpid())
        dump_svmlight_file(Xs, ys, tmp, zero_based=False)
        os.replace(tmp, path)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = argv[1] if len(argv) > 1 else os.path.join(here, "sklearn")
    names = argv[2:] or list(SETS)
    for name in names:
        if name not in SETS:
            sys.stderr.write("sklearn-sets.py: unknown set %s (known: %s)\n" % (name, " ".join(SETS)))
            return 2
    for name in names:
        export(name, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
