# test_cli_parity.py: a model trained from Python is the model `hogtrain train` makes of the same data with the same options and seed, weight for weight.
# SPDX-License-Identifier: BSD-2-Clause
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file, make_classification

import hogtrain
from hogtrain import HogwildClassifier, HogwildFMClassifier, HogwildFMRegressor, HogwildRegressor

# One thread: a HOGWILD! run is bit-for-bit reproducible only on one.
OPTIONS = dict(epochs=5, random_state=7, n_jobs=1, bind=False)
# --holdout 0: the command's several epochs without --test hold out a tenth
# to stop early, the estimators train on every row as scikit-learn's do
FLAGS = ["--epochs", "5", "--seed", "7", "--threads", "1", "--bind", "0", "--holdout", "0", "-q"]


def command(bin, *args):
    subprocess.run([bin, *args], check=True, capture_output=True)


@pytest.fixture
def binary(tmp_path, gen_sparse, hogtrain_bin):
    svm = tmp_path / "a.svm"
    subprocess.run([gen_sparse, "-n", "9000", "-d", "700", "-k", "12", "-s", "5", "-q", "-o", str(svm)], check=True)
    command(hogtrain_bin, "convert", str(svm), "-o", str(tmp_path / "a.hgd"), "-q")
    return svm


def test_a_binary_model_from_a_csr_matrix_is_the_command_s_on_the_same_rows(binary, tmp_path, hogtrain_bin):
    command(hogtrain_bin, "train", str(tmp_path / "a.hgd"), "-o", str(tmp_path / "cli.hog"), *FLAGS)
    cli = hogtrain.load(tmp_path / "cli.hog")
    X, y = load_svmlight_file(str(binary), dtype=np.float32)
    est = HogwildClassifier(**OPTIONS).fit(X, y)
    assert list(est.classes_) == [-1, 1] == list(cli.classes_)
    assert est.coef_.shape == cli.coef_.shape == (1, 700)
    np.testing.assert_array_equal(est.coef_, cli.coef_)
    np.testing.assert_array_equal(est.intercept_, cli.intercept_)
    assert est.score(X, y) > 0.85
    np.testing.assert_array_equal(est.predict_proba(X), cli.predict_proba(X))


def test_a_file_trained_from_python_is_the_command_s_model(binary, tmp_path, hogtrain_bin):
    for name in ("a.svm", "a.hgd"):  # text streams its first epoch; the .hgd is mapped
        path = tmp_path / name
        command(hogtrain_bin, "train", str(path), "-o", str(tmp_path / "cli.hog"), *FLAGS)
        cli = hogtrain.load(tmp_path / "cli.hog")
        est = HogwildClassifier(**OPTIONS).fit(str(path))
        np.testing.assert_array_equal(est.coef_, cli.coef_)
        np.testing.assert_array_equal(est.intercept_, cli.intercept_)
        X, y = load_svmlight_file(str(binary), dtype=np.float32)
        assert est.score(str(path)) == pytest.approx(est.score(X, y))
        np.testing.assert_array_equal(est.predict(str(path)), est.predict(X))


def test_softmax_and_regression_match_the_command_too(tmp_path, hogtrain_bin):
    X, y = make_classification(n_samples=5000, n_features=30, n_informative=10, n_classes=3, random_state=0)
    X = X.astype(np.float32)
    dump_svmlight_file(X, y, tmp_path / "c.svm", zero_based=True)
    command(hogtrain_bin, "train", str(tmp_path / "c.svm"), "--loss", "softmax", "--stream", "0", "-o",
            str(tmp_path / "c.hog"), *FLAGS)
    cli = hogtrain.load(tmp_path / "c.hog")
    Xs, ys = load_svmlight_file(str(tmp_path / "c.svm"), dtype=np.float32, n_features=30, zero_based=True)
    est = HogwildClassifier(**OPTIONS).fit(Xs, ys)
    assert est.coef_.shape == (3, 30)
    np.testing.assert_array_equal(est.coef_, cli.coef_)
    np.testing.assert_array_equal(est.intercept_, cli.intercept_)

    target = X[:, :5].sum(axis=1) + 0.5
    dump_svmlight_file(X, target, tmp_path / "r.svm", zero_based=True)
    command(hogtrain_bin, "train", str(tmp_path / "r.svm"), "--loss", "squared", "--normalized", "--stream", "0",
            "-o", str(tmp_path / "r.hog"), *FLAGS)
    cli = hogtrain.load(tmp_path / "r.hog")
    assert isinstance(cli, HogwildRegressor) and cli.normalized
    Xr, yr = load_svmlight_file(str(tmp_path / "r.svm"), dtype=np.float32, n_features=30, zero_based=True)
    est = HogwildRegressor(**OPTIONS).fit(Xr, yr)
    np.testing.assert_array_equal(est.coef_, cli.coef_)
    assert est.score(Xr, yr) > 0.9


def test_a_model_saved_from_python_is_read_by_the_command(tmp_path, hogtrain_bin):
    X, y = make_classification(n_samples=2000, n_features=10, random_state=1)
    est = HogwildClassifier(**OPTIONS).fit(X, y)
    est.save(tmp_path / "p.hog")
    out = subprocess.run([hogtrain_bin, "info", str(tmp_path / "p.hog")], check=True, capture_output=True,
                         text=True).stdout
    assert "logistic" in out
    back = hogtrain.load(tmp_path / "p.hog")
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_factorisation_machines_with_their_defaults_are_the_command_s(binary, tmp_path, hogtrain_bin):
    """`--model fm` and `--model ffm` with the command's defaults for them
    (AdaGrad at 0.2 or 0.3, plain steps, l2 1e-4 or 1/rows) make the model the
    estimators' defaults make, factor for factor."""
    command(hogtrain_bin, "train", str(tmp_path / "a.hgd"), "--model", "fm", "-o", str(tmp_path / "fm.hog"), *FLAGS)
    cli = hogtrain.load(tmp_path / "fm.hog")
    assert isinstance(cli, HogwildFMClassifier)
    X, y = load_svmlight_file(str(binary), dtype=np.float32)
    est = HogwildFMClassifier(**OPTIONS).fit(X, y)
    assert dict(est.get_params(), l2=1e-4, step=0.2) == dict(cli.get_params(), n_jobs=1, bind=False)
    np.testing.assert_array_equal(est.factors_, cli.factors_)
    np.testing.assert_array_equal(est.coef_, cli.coef_)
    np.testing.assert_array_equal(est.intercept_, cli.intercept_)
    np.testing.assert_array_equal(est.decision_function(X), cli.decision_function(X))

    # LIBFFM text of 6 fields, each field's features its own columns, and a
    # regression target
    rng = np.random.RandomState(4)
    fields = np.repeat(np.arange(6), 20)
    cols = np.column_stack([20 * f + rng.randint(0, 20, 3000) for f in range(6)])
    target = np.round(np.sin(cols[:, 0]) * np.cos(cols[:, 1]) + 0.1 * (cols[:, 2] % 3), 2)  # as the text has it
    with open(tmp_path / "r.ffm", "w") as f:
        for i in range(3000):
            f.write("%.2f %s\n" % (target[i], " ".join("%d:%d:1" % (fields[j], j) for j in cols[i])))
    command(hogtrain_bin, "train", str(tmp_path / "r.ffm"), "--model", "ffm", "--loss", "squared", "-o",
            str(tmp_path / "ffm.hog"), *FLAGS)
    cli = hogtrain.load(tmp_path / "ffm.hog")
    assert isinstance(cli, HogwildFMRegressor) and cli.field_aware and cli.l2_rows == 1
    X = sp.csr_matrix((np.ones(cols.size, dtype=np.float32), cols.ravel(), np.arange(0, cols.size + 1, 6)),
                      shape=(3000, 120))
    est = HogwildFMRegressor(field_aware=True, **OPTIONS).fit(X, np.float32(target), fields=fields)
    assert cli.n_fields_ == est.n_fields_ == 6
    np.testing.assert_array_equal(est.factors_, cli.factors_)
    np.testing.assert_array_equal(est.predict(str(tmp_path / "r.ffm")), cli.predict(str(tmp_path / "r.ffm")))
