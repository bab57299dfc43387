"""The conformance suite every estimator's tests inherit (CONTRIBUTING.md).

scikit-learn's ``check_estimator`` skips its numeric checks for estimators that take text;
:class:`EstimatorChecks` runs their text equivalents. A test class sets ``make_estimator``
(a fresh, seeded, unfitted estimator that fits the tiny dialogs in well under a second);
a ranker's class inherits :class:`RankerConformance` and sets ``param_grid`` (a small grid
for GridSearchCV), a context transformer's inherits :class:`TransformerConformance`.
"""

import copy
import inspect
import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_tiny_dialogs
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold

from irdialog.persist import load, save


def _comparable(value):
    """A value in a form ``==`` can compare: an estimator (estimators define no equality)
    becomes its class and its own parameters, inside lists, tuples and dicts too."""
    if hasattr(value, "get_params"):
        return type(value), _comparable(value.get_params(deep=False))
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_comparable(v) for v in value)
    return value


def public_class(estimator) -> type:
    """The irdialog class of an estimator, past the subclasses some tests define."""
    return next(c for c in type(estimator).__mro__ if c.__module__.startswith("irdialog"))


def no_pickle(*args, **kwargs):
    raise AssertionError("pickle was called")


def persist_round_trip(estimator, path, monkeypatch):
    """``estimator`` saved with :func:`irdialog.persist.save` and loaded back, with pickle
    forbidden while loading."""
    if type(estimator) is not public_class(estimator):
        # A test's subclass (e.g. one whose fit adds arguments) is not in the allowlist of
        # persist; its fitted state is its irdialog class's.
        estimator = copy.copy(estimator)
        estimator.__class__ = public_class(estimator)
    save(estimator, path)
    with monkeypatch.context() as m:
        for name in ("loads", "load", "Unpickler"):
            m.setattr(pickle, name, no_pickle)
        return load(path)


def _params_with(estimator, name: str, value) -> dict:
    """Every parameter ``name`` of an estimator and of the estimators inside it, set to
    ``value`` (for ``set_params``); empty when it has none."""
    return {
        key: value for key in estimator.get_params() if key == name or key.endswith(f"__{name}")
    }


# A k of rank larger than any candidate set of the tests: the whole ranking.
ALL = 10_000

# Public methods that need no fit (they fit, or configure the estimator).
NO_FIT_NEEDED = {
    "fit",
    "fit_chunks",
    "fit_predict",
    "fit_ratings",
    "fit_transform",
    "get_metadata_routing",
    "get_params",
    "partial_fit",
    "set_output",
    "set_params",
}
# Pipeline's, with no meaning when the steps output contexts: they have no feature names.
NOT_APPLICABLE = {"get_feature_names_out"}


def _method_calls(X, y) -> dict:
    """How to call each public method that needs a fit, on the tiny dialogs."""
    texts = [x.text() for x in X]
    return {
        "attention": lambda e: e.attention(X),
        "attention_turns": lambda e: e.attention_turns(X[3]),
        "decision_function": lambda e: e.decision_function(X),
        "entity_ids": lambda e: e.entity_ids(texts[3]),
        "item_matrix": lambda e: e.item_matrix(X),
        "parse": lambda e: e.parse(texts[3]),
        "predict": lambda e: e.predict(X),
        "predict_supporting": lambda e: e.predict_supporting(X),
        "rank": lambda e: e.rank(X, k=3),
        "rank_candidates": lambda e: e.rank_candidates(X, [[r] for r in y]),
        "score": lambda e: e.score(X, y),
        "score_items": lambda e: e.score_items(sp.csr_matrix((1, 1))),
        "transform": lambda e: e.transform(X),
        "transform_text": lambda e: e.transform_text(texts),
        "update_gates": lambda e: e.update_gates(X),
    }


class EstimatorChecks:
    """The checks of scikit-learn's ``check_estimator`` that it cannot run on text input:
    fit leaves its input and the parameters alone, a refit, a clone and a saved copy give
    the same model, the same seed the same model and n_jobs none of it (for a fit on
    threads: a seeded fit repeats for each n_jobs), ``__init__`` only stores its
    arguments, fit adds only ``_``-ending public attributes, and every method that needs a
    fit says so before one."""

    # A seeded estimator fits another model from another seed.
    seed_changes_the_model = True
    # The fit's n_jobs shares training between threads, which may change the model (as
    # Hogwild or a reduction in another order does): then the checks are that n_jobs=1 is
    # the default's model and, unless the fit is Hogwild (whose threads race), that a
    # seeded fit repeats for a given n_jobs.
    fit_runs_on_threads = False
    fit_is_hogwild = False

    def make_estimator(self):
        raise NotImplementedError

    def output(self, est, X):
        """What a fitted estimator computes from X, as a list of what must repeat."""
        raise NotImplementedError

    def assert_same_output(self, a, b, X):
        for got, expected in zip(self.output(a, X), self.output(b, X), strict=True):
            if isinstance(expected, np.ndarray):
                np.testing.assert_array_equal(got, expected)
            else:
                assert got == expected

    def fitted(self):
        X, y, _ = make_tiny_dialogs()
        return self.make_estimator().fit(X, y), X, y

    def test_fit_returns_self(self):
        X, y, _ = make_tiny_dialogs()
        est = self.make_estimator()
        assert est.fit(X, y) is est

    def test_fit_does_not_change_its_input(self):
        X, y, _ = make_tiny_dialogs()
        before = copy.deepcopy((X, y))
        self.make_estimator().fit(X, y)
        assert (X, y) == before

    def test_fit_does_not_change_params(self):
        est = self.make_estimator()
        # a deep copy: a parameter changed in place (a KB, a candidate list) is a change too
        before = _comparable(copy.deepcopy(est.get_params(deep=False)))
        X, y, _ = make_tiny_dialogs()
        est.fit(X, y)
        assert _comparable(est.get_params(deep=False)) == before

    def test_clone_keeps_params(self):
        est = self.make_estimator()
        assert _comparable(clone(est).get_params(deep=False)) == _comparable(
            est.get_params(deep=False)
        )

    def test_init_only_stores_its_arguments(self):
        template = self.make_estimator()
        params = template.get_params(deep=False)
        est = type(template)(**params)
        assert set(vars(est)) == set(params)
        # stored as given: not copied, converted or validated
        assert [name for name, value in params.items() if vars(est)[name] is not value] == []

    def test_fit_adds_only_attributes_ending_in_underscore(self):
        est = self.make_estimator()
        before = set(vars(est))
        X, y, _ = make_tiny_dialogs()
        est.fit(X, y)
        added = set(vars(est)) - before
        assert [a for a in added if not a.startswith("_") and not a.endswith("_")] == []

    def test_refit_gives_the_same_model(self):
        X, y, _ = make_tiny_dialogs()
        fresh = self.make_estimator().fit(X, y)
        # A first fit on other dialogs must leave nothing behind for the second fit.
        again = self.make_estimator().fit(X[12:], y[12:]).fit(X, y)
        self.assert_same_output(again, fresh, X)

    def test_clone_then_fit_equals_fit(self):
        est, X, y = self.fitted()
        copied = clone(est)
        with pytest.raises(NotFittedError):
            self.output(copied, X)
        self.assert_same_output(copied.fit(X, y), est, X)

    def test_pickle_joblib_and_persist_round_trips(self, tmp_path, monkeypatch):
        est, X, _ = self.fitted()
        self.assert_same_output(pickle.loads(pickle.dumps(est)), est, X)
        joblib.dump(est, tmp_path / "model.joblib")
        self.assert_same_output(joblib.load(tmp_path / "model.joblib"), est, X)
        loaded = persist_round_trip(est, tmp_path / "model.npz", monkeypatch)
        assert type(loaded) is public_class(est)
        assert _comparable(loaded.get_params(deep=False)) == _comparable(est.get_params(deep=False))
        self.assert_same_output(loaded, est, X)

    def test_same_seed_same_model(self):
        est = self.make_estimator()
        if not _params_with(est, "random_state", 0):
            pytest.skip("not a seeded estimator")
        X, y, _ = make_tiny_dialogs()

        def fit(seed):
            return clone(est).set_params(**_params_with(est, "random_state", seed)).fit(X, y)

        a = fit(7)
        self.assert_same_output(fit(7), a, X)
        if self.seed_changes_the_model:  # else the seed could be ignored
            outputs = zip(self.output(fit(8), X), self.output(a, X), strict=True)
            assert not all(np.array_equal(p, q) for p, q in outputs)

    def test_n_jobs_does_not_change_the_model(self):
        est, X, y = self.fitted()
        checked = False
        if _params_with(est, "n_jobs", 2):
            threaded = clone(est).set_params(**_params_with(est, "n_jobs", 2)).fit(X, y)
            if self.fit_runs_on_threads:
                # Threads share the training: n_jobs=1 is the single-thread model, and a
                # seeded fit repeats for a given n_jobs.
                single = clone(est).set_params(**_params_with(est, "n_jobs", 1)).fit(X, y)
                self.assert_same_output(single, est, X)
                if not self.fit_is_hogwild:
                    again = clone(est).set_params(**_params_with(est, "n_jobs", 2)).fit(X, y)
                    self.assert_same_output(again, threaded, X)
                for got, expected in zip(self.output(threaded, X), self.output(est, X)):
                    assert np.shape(got) == np.shape(expected)
            else:
                self.assert_same_output(threaded, est, X)
            checked = True
        if "n_jobs" in inspect.signature(getattr(est, "rank", lambda: None)).parameters:
            # more than one chunk of texts and of queries, so that threads share the work
            many = X * 43
            np.testing.assert_array_equal(est.rank(many, k=5, n_jobs=2), est.rank(many, k=5))
            checked = True
        if not checked:
            pytest.skip("no n_jobs")

    def test_every_method_that_needs_a_fit_says_so(self):
        X, y, _ = make_tiny_dialogs()
        est = self.make_estimator()
        calls = _method_calls(X, y)
        methods = {
            name
            for name in dir(type(est))
            if not name.startswith(("_", "set_")) and callable(getattr(est, name, None))
        }
        methods -= NO_FIT_NEEDED | NOT_APPLICABLE
        assert methods <= set(calls), "add a call for the new public methods"
        for name in sorted(methods):
            with pytest.raises(NotFittedError):
                calls[name](est)


class RankerConformance(EstimatorChecks):
    param_grid: dict = {}

    def output(self, est, X):
        # the whole ranking and the scores it comes from
        return [est.rank(X, k=ALL), est.decision_function(X)]

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

    def test_score_counts_the_contexts_whose_gold_response_ranks_first(self):
        est, X, _ = self.fitted()
        best = [str(r) for r in est.predict(X)]
        unseen = "a gold reply that is no candidate"
        assert est.score(X, best) == 1.0
        assert est.score(X, [unseen] * len(X)) == 0.0
        assert est.score(X, est.candidates_[est.rank(X, k=2)[:, 1]]) == 0.0  # ranked second
        # every other gold response made a miss: exactly half of the 24 contexts are right
        half = [unseen if i % 2 else r for i, r in enumerate(best)]
        assert est.score(X, half) == 0.5
        assert est.score(X, half, sample_weight=np.arange(len(X)) % 2 == 0) == 1.0

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


class TransformerConformance(EstimatorChecks):
    def output(self, est, X):
        return [est.transform(X)]
