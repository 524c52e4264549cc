# test_data.py: how data reaches the library: CSR arrays borrowed in place, conversions only where needed, files by path, partial_fit in batches, and the library's messages as exceptions.
# SPDX-License-Identifier: BSD-2-Clause
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, make_classification, make_regression

import hogtrain
from hogtrain import HogtrainValueError, HogwildClassifier, HogwildRegressor
from hogtrain._data import csr_arrays, from_arrays


def sparse_problem(rows=3000, cols=400, seed=0):
    rng = np.random.RandomState(seed)
    X = sp.random(rows, cols, density=0.05, format="csr", dtype=np.float32, random_state=rng)
    w = rng.normal(size=cols)
    y = np.where(X @ w > 0, 1, 0)
    return X, y


def test_a_float32_csr_matrix_is_borrowed_not_copied():
    X, y = sparse_problem()
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    indptr, indices, values = csr_arrays(X)
    assert indptr is X.indptr
    assert np.shares_memory(indices, X.indices)
    assert values is X.data
    with from_arrays(X, y.astype(np.float32)) as d:
        kept = [a for a in d._keep if isinstance(a, np.ndarray)]
        assert any(a is X.data for a in kept) and any(np.shares_memory(a, X.indices) for a in kept)
        assert (d.rows, d.features) == X.shape


def test_other_matrices_are_converted_once_and_train_the_same():
    X, y = sparse_problem()
    X64 = X.astype(np.float64)
    X64.indices = X64.indices.astype(np.int64)
    X64.indptr = X64.indptr.astype(np.int64)
    indptr, indices, values = csr_arrays(X64)
    assert indptr.dtype == np.int64 and indices.dtype == np.uint32 and values.dtype == np.float32
    # The same rows with each row's indices reversed: sorted in a copy.
    Xr = X.copy()
    for i in range(Xr.shape[0]):
        a, b = Xr.indptr[i], Xr.indptr[i + 1]
        Xr.indices[a:b] = Xr.indices[a:b][::-1].copy()
        Xr.data[a:b] = Xr.data[a:b][::-1].copy()
    Xr.has_sorted_indices = False
    opts = dict(n_jobs=1, random_state=2)
    ref = HogwildClassifier(**opts).fit(X, y).coef_
    for other in (X64, Xr, X.tocsc(), X.toarray()):
        np.testing.assert_array_equal(HogwildClassifier(**opts).fit(other, y).coef_, ref)


def test_files_train_predict_and_score_by_path(tmp_path):
    X, y = make_classification(n_samples=4000, n_features=20, random_state=4)
    dump_svmlight_file(X.astype(np.float32), y, tmp_path / "d.svm", zero_based=False)
    est = HogwildClassifier(n_jobs=1).fit(str(tmp_path / "d.svm"))
    assert list(est.classes_) == [0, 1]
    assert est.n_features_in_ == 20
    assert est.score(str(tmp_path / "d.svm")) == pytest.approx(est.score(X, y))
    assert est.score(X, y) > 0.8
    np.testing.assert_array_equal(est.predict(tmp_path / "d.svm"), est.predict(X))
    # More than two labels in the file: softmax, with one row of weights per class.
    Xc, yc = make_classification(n_samples=3000, n_features=12, n_informative=6, n_classes=3, random_state=5)
    dump_svmlight_file(Xc.astype(np.float32), yc + 1, tmp_path / "c.svm", zero_based=False)
    multi = HogwildClassifier(n_jobs=1).fit(str(tmp_path / "c.svm"))
    assert list(multi.classes_) == [1, 2, 3] and multi.coef_.shape == (3, 12)
    assert multi.score(Xc, yc + 1) > 0.6
    assert multi.predict_proba(Xc[:5]).shape == (5, 3)
    Xr, yr = make_regression(n_samples=2000, n_features=8, noise=1.0, random_state=1)
    np.savetxt(tmp_path / "r.csv", np.column_stack([yr, Xr]), delimiter=",")
    reg = HogwildRegressor(n_jobs=1, epochs=20).fit(str(tmp_path / "r.csv"))
    assert reg.score(str(tmp_path / "r.csv")) > 0.95
    assert reg.score(str(tmp_path / "r.csv")) == pytest.approx(reg.score(Xr, yr), abs=1e-5)


def test_partial_fit_trains_on_batches_from_the_weights_so_far():
    X, y = sparse_problem(rows=8000)
    est = HogwildClassifier(random_state=1)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        est.partial_fit(X[:100], y[:100])
    scores = []
    for start in range(0, 8000, 2000):
        est.partial_fit(X[start:start + 2000], y[start:start + 2000], classes=[0, 1])
        scores.append(est.score(X, y))
    assert est.epochs_done_ == 4
    # Each batch starts from the weights so far: a later batch's model beats
    # the first batch's by far more than two threads' noise (on one thread,
    # 0.876, 0.898, 0.893, 0.878: the last batch alone is no better than
    # the first, and two threads moved the first to 0.878).
    assert max(scores[1:]) > scores[0] + 0.01 and min(scores) > 0.8, scores
    # A batch of one class, from a model that knows both.
    ones = y == 1
    before = est.intercept_[0]
    est.partial_fit(X[ones][:500], y[ones][:500])
    assert est.intercept_[0] > before
    with pytest.raises(ValueError, match="y holds 2, which is not one of the classes"):
        est.partial_fit(X[:10], np.full(10, 2))
    with pytest.raises(ValueError, match="X has 399 features, but HogwildClassifier is expecting 400"):
        est.partial_fit(X[:10, :-1], y[:10])
    reg = HogwildRegressor(random_state=1)
    Xr, yr = make_regression(n_samples=4000, n_features=10, noise=0.5, random_state=2)
    yr = yr / yr.std()
    for start in range(0, 4000, 1000):
        reg.partial_fit(Xr[start:start + 1000], yr[start:start + 1000])
    assert reg.score(Xr, yr) > 0.95


def test_the_library_s_messages_become_exceptions(tmp_path):
    X, y = sparse_problem(rows=200)
    with pytest.raises(ValueError, match=r"invalid parameter step \(hog_train_params.step\)"):
        HogwildClassifier(step=-1).fit(X, y)
    with pytest.raises(ValueError, match="loss='hinge' is binary, and y has 3 classes"):
        HogwildClassifier(loss="hinge").fit(X, np.arange(200) % 3)
    with pytest.raises(ValueError, match="schedule='fast' is not one the library knows"):
        HogwildClassifier(schedule="fast").fit(X, y)
    w = np.ones(200)
    w[7] = -1
    with pytest.raises(HogtrainValueError, match=r"hog_csr.weights\[7\] is -1: expected a finite number, not "
                                                 r"negative") as e:
        HogwildClassifier().fit(X, y, sample_weight=w)
    assert e.value.code == hogtrain.lib.HOG_EPARAM
    (tmp_path / "bad.svm").write_text("1 1:0.5\n-1 3:x\n")
    with pytest.raises(HogtrainValueError, match=r"bad.svm:2:6: expected a number, found 'x'"):
        HogwildClassifier().fit(str(tmp_path / "bad.svm"))
    with pytest.raises(FileNotFoundError, match="nothing.svm"):
        HogwildClassifier().fit(str(tmp_path / "nothing.svm"))
    with pytest.raises(ValueError, match="the training diverged"):
        HogwildRegressor(normalized=False, kernel="sparse", step=10.0).fit(X.toarray() * 100, y * 100.0)
