# test_sklearn_checks.py: scikit-learn's own estimator checks (check_estimator) on both estimators, and a grid search over one.
# SPDX-License-Identifier: BSD-2-Clause
"""scikit-learn's checks, every one run.

The checks that are expected to fail are named, with why, in each
estimator's _more_tags()["_xfail_checks"]: check_sample_weights_invariance
(a zero weight is not the same as removing the row, for any SGD that
shuffles; its kind=ones variant shares the name and passes). Checks of
pandas input are skipped by scikit-learn itself when pandas is not
installed (Debian's python3-pandas is not among the test dependencies).
"""
import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from hogtrain import HogwildClassifier, HogwildRegressor


@parametrize_with_checks([HogwildClassifier(), HogwildRegressor()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_expected_failures_are_only_the_zero_weight_check():
    for est in (HogwildClassifier(), HogwildRegressor()):
        assert list(est._get_tags()["_xfail_checks"]) == ["check_sample_weights_invariance"]


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
