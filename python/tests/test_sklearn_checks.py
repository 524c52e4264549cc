# test_sklearn_checks.py: scikit-learn's own estimator checks (check_estimator) on every estimator, and a grid search over each kind.
# SPDX-License-Identifier: BSD-2-Clause
"""scikit-learn's checks, every one run.

The checks that are expected to fail are named, with why, in each
estimator's _more_tags()["_xfail_checks"]: check_sample_weights_invariance
(a zero weight is not the same as removing the row, for any SGD that
shuffles; its kind=ones variant shares the name and passes), and for
HogwildFMRegressor check_fit2d_1sample (one dense row diverges at
AdaGrad's default step, refused as diverged, not as one sample). Checks of
pandas input are skipped by scikit-learn itself when pandas is not
installed (Debian's python3-pandas is not among the test dependencies).
"""
import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from hogtrain import HogwildClassifier, HogwildFMClassifier, HogwildFMRegressor, HogwildRegressor

ESTIMATORS = [HogwildClassifier(), HogwildRegressor(), HogwildFMClassifier(), HogwildFMRegressor()]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_expected_failures_are_only_the_zero_weight_check_and_the_machine_s_one_row():
    for est in ESTIMATORS:
        want = ["check_sample_weights_invariance"] + (["check_fit2d_1sample"] if type(est) is HogwildFMRegressor
                                                      else [])
        assert list(est._get_tags()["_xfail_checks"]) == want


def test_grid_search_over_a_classifier_picks_among_its_parameters():
    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), HogwildClassifier(random_state=3))
    grid = {"hogwildclassifier__step": [1e-4, 2.0], "hogwildclassifier__l2": [1e-6, 1e-2]}
    search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    assert len(search.cv_results_["mean_test_score"]) == 4
    assert search.best_score_ > 0.95
    assert search.best_params_["hogwildclassifier__step"] == 2.0, "1e-4 barely moves in 20 epochs"
    assert search.score(X, y) > 0.95


def test_grid_search_over_a_regressor_in_parallel_processes():
    X, y = load_diabetes(return_X_y=True)
    search = GridSearchCV(HogwildRegressor(random_state=1), {"epochs": [1, 20], "l2": [0.0, 1e-3]}, cv=3,
                          n_jobs=2).fit(X, (y - y.mean()) / y.std())
    assert search.best_score_ > 0.3
    assert search.best_params_["epochs"] == 20


def test_grid_search_over_a_factorisation_machine_s_factors():
    rng = np.random.RandomState(2)
    a, b = rng.randint(0, 8, 1500), rng.randint(0, 8, 1500)
    X = np.zeros((1500, 16), dtype=np.float32)
    X[np.arange(1500), a] = 1
    X[np.arange(1500), 8 + b] = 1
    y = (a % 2) != (b % 2)
    search = GridSearchCV(HogwildFMClassifier(random_state=1), {"n_factors": [1, 4], "l2": [1e-4, 1e-1]},
                          cv=3).fit(X, y)
    assert len(search.cv_results_["mean_test_score"]) == 4
    assert search.best_score_ > 0.95
    assert search.best_params_["l2"] == 1e-4, "a penalty of 0.1 holds the factors at 0"
