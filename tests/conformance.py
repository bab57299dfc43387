"""The conformance suite every ranker's tests inherit (CONTRIBUTING.md).

A test class sets ``make_estimator`` (a fresh, seeded, unfitted ranker that fits the tiny
dialogs in well under a second) and ``param_grid`` (a small grid for GridSearchCV).
"""

import pickle

import joblib
import numpy as np
import pytest
from conftest import make_tiny_dialogs
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold


def _comparable(params: dict) -> dict:
    """Parameters in a form ``==`` can compare: an estimator-valued parameter (estimators
    define no equality) becomes its class and its own parameters."""
    return {
        name: (type(v), _comparable(v.get_params(deep=False))) if hasattr(v, "get_params") else v
        for name, v in params.items()
    }


class RankerConformance:
    param_grid: dict = {}

    def make_estimator(self):
        raise NotImplementedError

    def fitted(self):
        X, y, _ = make_tiny_dialogs()
        return self.make_estimator().fit(X, y), X, y

    def test_fit_returns_self(self):
        X, y, _ = make_tiny_dialogs()
        est = self.make_estimator()
        assert est.fit(X, y) is est

    @pytest.mark.parametrize("method", ["decision_function", "predict", "rank"])
    def test_not_fitted_error(self, method):
        X, _, _ = make_tiny_dialogs()
        with pytest.raises(NotFittedError):
            getattr(self.make_estimator(), method)(X)

    def test_clone_keeps_params(self):
        est = self.make_estimator()
        assert _comparable(clone(est).get_params(deep=False)) == _comparable(
            est.get_params(deep=False)
        )

    def test_fit_does_not_change_params(self):
        est = self.make_estimator()
        before = _comparable(est.get_params(deep=False))
        X, y, _ = make_tiny_dialogs()
        est.fit(X, y)
        assert _comparable(est.get_params(deep=False)) == before

    def test_decision_function_shape_and_finite(self):
        est, X, _ = self.fitted()
        scores = est.decision_function(X)
        assert scores.shape == (len(X), len(est.candidates_))
        assert np.isfinite(scores).all()

    def test_rank_agrees_with_decision_function(self):
        est, X, _ = self.fitted()
        scores = est.decision_function(X)
        top = est.rank(X, k=3)
        assert top.shape == (len(X), min(3, len(est.candidates_)))
        best = np.take_along_axis(scores, top, axis=1)
        assert (np.diff(best, axis=1) <= 0).all()
        np.testing.assert_allclose(best[:, 0], scores.max(axis=1))
        np.testing.assert_array_equal(est.predict(X), est.candidates_[top[:, 0]])

    def test_rank_of_a_new_pool_matches_its_pair_scores(self):
        est, X, y = self.fitted()
        pool = [*reversed(est.candidates_), "completely unseen reply", str(y[0])]
        top = est.rank(X, k=3, candidates=pool)
        assert top.shape == (len(X), 3)
        scores = est.rank_candidates(X, [pool] * len(X))  # every (context, candidate) pair
        best = np.take_along_axis(scores, top, axis=1)
        # the pool path may score in float32: the k best scores, up to that precision
        np.testing.assert_allclose(best, -np.sort(-scores, axis=1)[:, :3], rtol=1e-5, atol=1e-6)
        with pytest.raises(ValueError, match="candidates is empty"):
            est.rank(X, k=3, candidates=[])

    def test_score_is_hits_at_1(self):
        est, X, y = self.fitted()
        expected = np.mean(est.predict(X) == np.asarray(y, dtype=object))
        assert est.score(X, y) == pytest.approx(expected)

    def test_rank_candidates_matches_decision_function(self):
        est, X, _ = self.fitted()
        lists = [list(est.candidates_)] * len(X)
        np.testing.assert_allclose(
            est.rank_candidates(X, lists), est.decision_function(X), rtol=1e-5, atol=1e-6
        )

    def test_rank_candidates_ragged_lists(self):
        est, X, y = self.fitted()
        lists = [[y[i], "completely unseen reply"][: 1 + i % 2] for i in range(len(X))]
        scores = est.rank_candidates(X, lists)
        assert scores.shape == (len(X), 2)
        assert np.isneginf(scores[::2, 1]).all()
        assert np.isfinite(scores[:, 0]).all()

    def test_rank_candidates_rejects_empty_list(self):
        est, X, _ = self.fitted()
        with pytest.raises(ValueError, match="empty"):
            est.rank_candidates(X[:2], [["a"], []])

    def test_pickle_and_joblib_round_trip(self, tmp_path):
        est, X, _ = self.fitted()
        again = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
        joblib.dump(est, tmp_path / "model.joblib")
        loaded = joblib.load(tmp_path / "model.joblib")
        np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))

    def test_same_seed_same_scores(self):
        a, X, _ = self.fitted()
        b, _, _ = self.fitted()
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))

    def test_unknown_words_and_empty_query(self):
        est, _, _ = self.fitted()
        scores = est.decision_function(["zzqx unseenword", "", "in paris please"])
        assert np.isfinite(scores).all()

    def test_bad_input_errors(self):
        est, X, y = self.fitted()
        with pytest.raises(ValueError, match="empty"):
            est.decision_function([])
        with pytest.raises(TypeError, match=r"X\[1\]"):
            est.decision_function(["hi", float("nan")])
        with pytest.raises(ValueError, match="responses"):
            self.make_estimator().fit(X, y[:-1])
        with pytest.raises(TypeError, match="single str"):
            est.predict("hi")

    def test_grid_search_with_group_kfold(self):
        X, y, groups = make_tiny_dialogs()
        search = GridSearchCV(self.make_estimator(), self.param_grid, cv=GroupKFold(n_splits=2))
        search.fit(X, y, groups=groups)
        assert 0.0 <= search.best_score_ <= 1.0
        assert set(search.best_params_) == set(self.param_grid)
