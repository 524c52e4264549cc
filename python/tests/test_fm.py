# test_fm.py: the factorisation machines, HogwildFMClassifier and HogwildFMRegressor: an interaction no linear model learns, fields from an array or a file, partial_fit, pickle, save and load, and the errors.
# SPDX-License-Identifier: BSD-2-Clause
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import hogtrain
from hogtrain import (HogtrainValueError, HogwildClassifier, HogwildFMClassifier, HogwildFMRegressor,
                      HogwildRegressor)
from hogtrain._data import column_fields, from_arrays

# One thread: a HOGWILD! run is bit-for-bit reproducible only on one.
OPTIONS = dict(random_state=3, n_jobs=1, bind=False)


def xor(rows, seed, noise=0):
    """Rows of two categorical features, a in columns 0..9 and b in 10..19
    (one-hot, CSR float32), and noise more columns of a third that carries
    nothing (20..); the label is 1 when exactly one of a, b is odd: every
    column is positive in half its rows, so no linear model does better than
    chance, and a pair's factors learn it. fields: a's columns are field 0,
    b's 1, the noise's 2."""
    rng = np.random.RandomState(seed)
    a, b = rng.randint(0, 10, rows), rng.randint(10, 20, rows)
    cols = [a, b] + ([20 + rng.randint(0, noise, rows)] if noise else [])
    indices = np.column_stack(cols).ravel()
    X = sp.csr_matrix((np.ones(len(indices), dtype=np.float32), indices, np.arange(0, len(indices) + 1, len(cols))),
                      shape=(rows, 20 + noise))
    fields = np.array([0] * 10 + [1] * 10 + [2] * noise)
    return X, ((a % 2) != (b % 2)).astype(int), fields


def test_a_factorisation_machine_learns_an_interaction_a_linear_model_cannot():
    X, y, _ = xor(4000, 1)
    Xt, yt, _ = xor(1000, 2)
    fm = HogwildFMClassifier(**OPTIONS).fit(X, y)
    assert fm.score(Xt, yt) > 0.95
    assert HogwildClassifier(**OPTIONS).fit(X, y).score(Xt, yt) < 0.6
    assert fm.coef_.shape == (1, 20) and fm.factors_.shape == (20, 4) and fm.intercept_.shape == (1,)
    assert fm.n_fields_ == 0 and fm.fields_ is None
    proba = fm.predict_proba(Xt)
    assert proba.shape == (1000, 2)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-fm.decision_function(Xt))), rtol=1e-6)
    # a dense array is the same rows
    np.testing.assert_array_equal(HogwildFMClassifier(**OPTIONS).fit(X.toarray(), y).decision_function(Xt),
                                  fm.decision_function(Xt))


def test_a_factorisation_machine_regresses_an_interaction_a_linear_model_cannot():
    X, y, _ = xor(4000, 3)
    Xt, yt, _ = xor(1000, 4)
    target, truth = 2.0 * y - 1, 2.0 * yt - 1
    fm = HogwildFMRegressor(**OPTIONS).fit(X, target)
    assert np.sqrt(np.mean((fm.predict(Xt) - truth) ** 2)) < 0.1
    linear = HogwildRegressor(**OPTIONS).fit(X, target)
    assert np.sqrt(np.mean((linear.predict(Xt) - truth) ** 2)) > 0.9, "the target's spread: 1"
    assert fm.score(Xt, truth) > 0.99


def test_a_field_aware_machine_takes_the_columns_fields_from_an_array():
    X, y, fields = xor(4000, 5, noise=30)
    Xt, yt, _ = xor(1000, 6, noise=30)
    ffm = HogwildFMClassifier(field_aware=True, **OPTIONS).fit(X, y, fields=fields)
    assert ffm.score(Xt, yt) > 0.95
    assert ffm.n_fields_ == 3
    np.testing.assert_array_equal(ffm.fields_, fields)
    assert ffm.factors_.shape == (50, 3, 4), "a feature's factors for each field"
    with pytest.raises(AttributeError, match="no linear weights"):
        ffm.coef_
    reg = HogwildFMRegressor(field_aware=True, **OPTIONS).fit(X, 2.0 * y - 1, fields=list(fields))
    assert reg.score(Xt, 2.0 * yt - 1) > 0.9
    # a dense X is the same rows, its zeros dropped
    dense = HogwildFMClassifier(field_aware=True, **OPTIONS).fit(X.toarray(), y, fields=fields)
    np.testing.assert_array_equal(dense.decision_function(Xt.toarray()), ffm.decision_function(Xt))


def test_each_value_gets_its_column_s_field_and_the_count_is_the_largest_plus_one():
    X, y, fields = xor(100, 13, noise=2)
    column = column_fields(fields + 4, X.shape[1])
    with from_arrays(X, y.astype(np.float32), None, column) as d:
        assert d.fields == 7, "fields 4 to 6: the count is the largest + 1, not how many are used"
        given = [a for a in d._keep if isinstance(a, np.ndarray) and a.dtype == np.uint16]
        np.testing.assert_array_equal(given[0], fields[X.indices] + 4)
    with from_arrays(X, y.astype(np.float32)) as d:
        assert d.fields == 0


def test_fields_from_an_array_train_the_model_the_same_rows_in_libffm_text_train(tmp_path):
    X, y, fields = xor(3000, 7, noise=5)
    with open(tmp_path / "x.ffm", "w") as f:
        for i in range(X.shape[0]):
            row = X.indices[X.indptr[i]:X.indptr[i + 1]]
            f.write("%d %s\n" % (y[i], " ".join("%d:%d:1" % (fields[j], j) for j in row)))
    from_file = HogwildFMClassifier(field_aware=True, **OPTIONS).fit(str(tmp_path / "x.ffm"))
    from_array = HogwildFMClassifier(field_aware=True, **OPTIONS).fit(X, y, fields=fields)
    assert from_file.n_fields_ == from_array.n_fields_ == 3
    assert from_file.fields_ is None
    assert from_file.factors_.shape == from_array.factors_.shape
    # The file's first epoch trains while it is read, its rows in file order
    # (shuffled within windows of blocks), the array's in a shuffled order:
    # the same model up to SGD's order, the same cross learned.
    file_score, array_score = from_file.score(str(tmp_path / "x.ffm")), from_array.score(X, y)
    assert file_score > 0.95 and array_score > 0.95
    assert file_score == pytest.approx(array_score, abs=0.02)
    assert np.corrcoef(from_file.decision_function(str(tmp_path / "x.ffm")), from_array.decision_function(X))[0, 1] > 0.95
    with pytest.raises(ValueError, match="fitted on a data file's fields, and X's columns have none"):
        from_file.predict(X)


def test_partial_fit_goes_on_from_the_model_with_the_first_call_s_fields():
    X, y, fields = xor(6000, 8, noise=4)
    Xt, yt, _ = xor(1000, 9, noise=4)
    ffm = HogwildFMClassifier(field_aware=True, **OPTIONS)
    for epoch in range(8):
        for k in range(3):
            batch = slice(2000 * k, 2000 * (k + 1))
            Xb = X[batch].copy()
            first = epoch == 0 and k == 0
            if first:  # without the noise field's values: the model has its three fields all the same
                Xb.data[Xb.indices >= 20] = 0
                Xb.eliminate_zeros()
            ffm.partial_fit(Xb, y[batch], classes=[0, 1], fields=fields if first else None)
    assert ffm.n_fields_ == 3
    assert ffm.epochs_done_ == 24
    assert ffm.score(Xt, yt) > 0.95
    with pytest.raises(ValueError, match="fields are not those of the first fit"):
        ffm.partial_fit(X[:100], y[:100], fields=np.zeros(24, dtype=int))
    reg = HogwildFMRegressor(**OPTIONS)
    for _ in range(10):
        reg.partial_fit(X, 2.0 * y - 1)
    assert reg.score(Xt, 2.0 * yt - 1) > 0.9


def test_the_defaults_are_the_command_s_for_each_machine(tmp_path):
    X, y, fields = xor(2000, 10)
    for est, l2, l2_rows in ((HogwildFMClassifier(), 1e-4, None), (HogwildFMClassifier(field_aware=True), None, 1.0),
                             (HogwildFMRegressor(l2=1e-3), 1e-3, None),
                             (HogwildFMRegressor(field_aware=True, l2_rows=4), None, 4.0)):
        est.fit(X, y, fields=fields).save(tmp_path / "m.hog")
        back = hogtrain.load(tmp_path / "m.hog")
        assert type(back) is type(est)
        got = back.get_params()
        assert (got["schedule"], got["step"], got["normalized"]) == ("adagrad", 0.3 if est.field_aware else 0.2,
                                                                     False)
        assert (got["n_factors"], got["field_aware"], got["l2_rows"]) == (4, est.field_aware, l2_rows)
        if l2 is None:
            assert got["l2"] is None
        else:
            assert got["l2"] == pytest.approx(l2)


def test_a_machine_pickles_saves_and_loads_whole(tmp_path):
    X, y, fields = xor(3000, 11, noise=3)
    for est in (HogwildFMClassifier(**OPTIONS), HogwildFMClassifier(field_aware=True, **OPTIONS),
                HogwildFMRegressor(**OPTIONS)):
        est.fit(X, y, fields=fields)
        back = pickle.loads(pickle.dumps(est))
        assert back.get_params() == est.get_params()
        np.testing.assert_array_equal(back.fields_, est.fields_)
        np.testing.assert_array_equal(back.factors_, est.factors_)
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
        back.partial_fit(X, y)  # and trains on from there
    est = HogwildFMClassifier(**OPTIONS).fit(X, y)
    est.save(str(tmp_path / "fm.hog"))
    loaded = hogtrain.load(tmp_path / "fm.hog")
    assert type(loaded) is HogwildFMClassifier
    assert list(loaded.classes_) == [0, 1]
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))


def test_what_a_machine_cannot_take_is_refused_saying_what_it_needs(tmp_path):
    X, y, fields = xor(500, 12)
    with pytest.raises(ValueError, match=r"field_aware=True\) pairs features by their fields: pass one field id "
                                         r"for each column of X, fit\(X, y, fields=...\)"):
        HogwildFMClassifier(field_aware=True).fit(X, y)
    with pytest.raises(ValueError, match="fields has shape \\(19,\\): expected one field id for each of the 20"):
        HogwildFMClassifier(field_aware=True).fit(X, y, fields=fields[:19])
    with pytest.raises(ValueError, match="fields\\[3\\] is 70000: expected field ids 0 to 65535"):
        HogwildFMRegressor(field_aware=True).fit(X, y, fields=np.r_[0, 0, 0, 70000, np.zeros(16, dtype=int)])
    with pytest.raises(ValueError, match="fields\\[0\\] is -1"):
        HogwildFMClassifier(field_aware=True).fit(X, y, fields=np.r_[-1, np.zeros(19, dtype=int)])
    with pytest.raises(ValueError, match="fields has dtype float64: expected integer field ids"):
        HogwildFMClassifier(field_aware=True).fit(X, y, fields=fields.astype(float))
    with open(tmp_path / "x.svm", "w") as f:
        f.write("1 1:1 12:1\n0 2:1 12:1\n")
    with pytest.raises(ValueError, match="a data file holds its own fields: fields must be None with a path"):
        HogwildFMClassifier().fit(str(tmp_path / "x.svm"), fields=fields)
    with pytest.raises(HogtrainValueError, match="the training data has no fields"):
        HogwildFMClassifier(field_aware=True).fit(str(tmp_path / "x.svm"))
    with pytest.raises(ValueError, match="HogwildFMClassifier is binary, and y has 3 classes: wrap it in "
                                         "sklearn.multiclass.OneVsRestClassifier"):
        HogwildFMClassifier().fit(X, y + (np.arange(500) % 7 == 0))
    with pytest.raises(ValueError, match="n_factors=0: expected a whole number from 1 to 256"):
        HogwildFMClassifier(n_factors=0).fit(X, y)
    with pytest.raises(ValueError, match="l2=0.001 and l2_rows=1: give a fixed penalty or one over the rows"):
        HogwildFMRegressor(l2=1e-3, l2_rows=1).fit(X, y)
    with pytest.raises(ValueError, match="normalized"):
        HogwildFMClassifier(normalized=True).fit(X, y)
