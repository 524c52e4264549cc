# test_string_labels.py: class labels that are strings: y of str or object arrays mapped to classes sorted as LabelEncoder sorts them, predictions in them, and the names of a model the command trained on a CSV of names.
# SPDX-License-Identifier: BSD-2-Clause
import subprocess

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import LabelEncoder

import hogtrain
from hogtrain import HogwildClassifier

OPTIONS = dict(epochs=5, random_state=7, n_jobs=1, bind=False)
NAMES = np.array(["virginica", "setosa", "versicolor"])


def three_classes():
    X, k = make_classification(n_samples=600, n_features=8, n_informative=5, n_classes=3, random_state=3)
    return X.astype(np.float32), k


@pytest.mark.parametrize("dtype", [str, object])
def test_string_y_is_mapped_to_sorted_classes_and_predicted_by_name(dtype):
    X, k = three_classes()
    y = NAMES[k].astype(dtype)
    est = HogwildClassifier(**OPTIONS).fit(X, y)
    assert list(est.classes_) == ["setosa", "versicolor", "virginica"]
    assert list(est.classes_) == list(LabelEncoder().fit(y).classes_)
    pred = est.predict(X)
    assert set(pred) <= set(est.classes_)
    assert est.score(X, y) == pytest.approx(np.mean(pred == y)) and est.score(X, y) > 0.5  # chance: 1/3
    assert est.predict_proba(X).shape == (600, 3)
    # the same run as on LabelEncoder's codes, weight for weight
    codes = HogwildClassifier(**OPTIONS).fit(X, LabelEncoder().fit_transform(y))
    np.testing.assert_array_equal(est.coef_, codes.coef_)
    np.testing.assert_array_equal(est.intercept_, codes.intercept_)
    np.testing.assert_array_equal(pred, est.classes_[codes.predict(X)])
    # a name the model does not know
    with pytest.raises(ValueError, match="daisy"):
        est.partial_fit(X[:2], np.array(["daisy", "setosa"], dtype=dtype))


def test_two_string_classes_make_the_second_sorted_one_positive():
    X, k = make_classification(n_samples=400, n_features=6, random_state=4)
    y = np.where(k == 1, "yes", "no")
    est = HogwildClassifier(**OPTIONS).fit(X.astype(np.float32), y)
    assert list(est.classes_) == ["no", "yes"]
    d = est.decision_function(X.astype(np.float32))
    np.testing.assert_array_equal(est.predict(X.astype(np.float32)), np.where(d > 0, "yes", "no"))


def test_a_model_the_command_trained_on_class_names_loads_with_them(tmp_path, hogtrain_bin):
    X, k = three_classes()
    csv = tmp_path / "iris.csv"
    with open(csv, "w") as f:
        f.write("species," + ",".join("x%d" % j for j in range(X.shape[1])) + "\n")
        for row, c in zip(X, k):
            f.write(NAMES[c] + "," + ",".join("%.9g" % v for v in row) + "\n")
    model = tmp_path / "m.hog"
    subprocess.run([hogtrain_bin, "train", str(csv), "--label", "species", "--loss", "softmax", "-o", str(model),
                    "--epochs", "5", "--seed", "7", "--threads", "1", "-q"], check=True, capture_output=True)
    est = hogtrain.load(str(model))
    assert list(est.classes_) == ["setosa", "versicolor", "virginica"]
    out = subprocess.run([hogtrain_bin, "predict", str(model), str(csv), "--label", "species", "-q"], check=True,
                         capture_output=True, text=True).stdout.split()
    np.testing.assert_array_equal(est.predict(X), out)
    # trained from the file's path: the names too, and its predictions
    fitted = HogwildClassifier(**OPTIONS).fit(str(csv))
    assert list(fitted.classes_) == ["setosa", "versicolor", "virginica"]
    assert set(fitted.predict(str(csv))) <= set(fitted.classes_)
    with pytest.raises(ValueError, match="score the file's rows as arrays"):
        fitted.score(str(csv))


def test_a_model_trained_on_a_csv_header_has_its_feature_names(tmp_path, hogtrain_bin):
    csv = tmp_path / "h.csv"
    csv.write_text("y,age,my height,color\n1,30,1.8,red\n0,40,1.6,blue\n1,35,1.7,red\n0,50,1.5,blue\n")
    model = tmp_path / "h.hog"
    subprocess.run([hogtrain_bin, "train", str(csv), "--categorical", "color", "--feature-names", "-o", str(model),
                    "--threads", "1", "-q"], check=True, capture_output=True)
    est = hogtrain.load(str(model))
    names = est.feature_names_
    assert len(names) == est.n_features_in_ == est.coef_.shape[1]
    assert list(names[:2]) == ["age", "my height"]
    named = {n: j for j, n in enumerate(names) if n is not None}
    assert set(named) == {"age", "my height", "color=red", "color=blue"}
    # each name's weight is the one export prints for it
    out = subprocess.run([hogtrain_bin, "export", str(model)], check=True, capture_output=True, text=True).stdout
    red = [line for line in out.splitlines() if line.startswith("color=red ")]
    assert len(red) == 1 and float(red[0].split()[-1]) == pytest.approx(est.coef_[0, named["color=red"]], rel=1e-6)
    # fitted from a path (its numeric columns): the same names; refitted on arrays: none
    numeric = tmp_path / "num.csv"
    numeric.write_text("y,age,my height\n1,30,1.8\n0,40,1.6\n1,35,1.7\n0,50,1.5\n")
    fitted = HogwildClassifier(**OPTIONS).fit(str(numeric))
    assert list(fitted.feature_names_[:2]) == ["age", "my height"]
    fitted.fit(np.ones((4, 2), dtype=np.float32), np.array([0, 1, 0, 1]))
    assert not hasattr(fitted, "feature_names_")
    # a headerless file names nothing
    plain = tmp_path / "n.csv"
    plain.write_text("1,30,1.8\n0,40,1.6\n1,35,1.7\n0,50,1.5\n")
    assert not hasattr(HogwildClassifier(**OPTIONS).fit(str(plain)), "feature_names_")
