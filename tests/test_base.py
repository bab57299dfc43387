import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import BaseEstimator

from irdialog.base import (
    Context,
    RankerMixin,
    Turn,
    _top_k,
    check_contexts,
    check_responses,
    resolve_candidates,
)


@given(
    arrays(
        np.float64, st.tuples(st.integers(1, 6), st.integers(1, 12)), elements=st.integers(-3, 3)
    ),
    st.integers(1, 14),
)
def test_top_k_is_stable_descending_sort(scores, k):
    expected = np.argsort(-scores, axis=1, kind="stable")[:, : min(k, scores.shape[1])]
    np.testing.assert_array_equal(_top_k(scores, k), expected)


def test_top_k_handles_infinite_scores():
    scores = np.array([[-np.inf, 1.0, -np.inf, 1.0]])
    np.testing.assert_array_equal(_top_k(scores, 4), [[1, 3, 0, 2]])


class _TableRanker(RankerMixin, BaseEstimator):
    """Scores from a table of query -> candidate scores: the best candidate of each context
    is known without running any of the code under test."""

    def __init__(self, table=None):
        self.table = table

    def fit(self, X, y):
        self.candidates_ = np.array(["a", "b", "c"], dtype=object)
        return self

    def decision_function(self, X):
        return np.array([self.table[x.query] for x in check_contexts(X)], dtype=float)


def test_score_is_the_fraction_of_gold_responses_ranked_first():
    # best: q1 b, q2 a, q3 c, q4 a (a tie goes to the first candidate)
    table = {"q1": [0, 2, 1], "q2": [5, 1, 1], "q3": [0, 1, 2], "q4": [1, 1, 0]}
    X, y = ["q1", "q2", "q3", "q4"], ["b", "a", "b", "a"]  # right, right, wrong, right
    model = _TableRanker(table).fit(X, y)
    assert model.score(X, y) == 0.75
    assert model.score(X, y, sample_weight=[1, 2, 4, 1]) == 0.5  # (1 + 2 + 1) / 8
    assert model.score(X, ["c", "b", "c", "unseen"]) == 0.25  # a gold reply no candidate is a miss


def test_score_with_several_right_responses_is_p_at_1():
    # best: q1 b, q2 a, q3 c, q4 a (a tie goes to the first candidate)
    table = {"q1": [0, 2, 1], "q2": [5, 1, 1], "q3": [0, 1, 2], "q4": [1, 1, 0]}
    X = ["q1", "q2", "q3", "q4"]
    model = _TableRanker(table).fit(X, ["a"] * 4)
    y = [["a", "b"], ("c", "b"), ["a", "b", "unseen"], "a"]  # right, wrong, wrong, right
    assert model.score(X, y) == 0.5
    assert model.score(X, y, sample_weight=[1, 2, 4, 1]) == 0.25  # (1 + 1) / 8
    assert model.score(X, [["c"], ["a"], ["c", "a"], ["b", "a"]]) == 0.75
    with pytest.raises(ValueError, match=r"y\[2\] is an empty list"):
        model.score(X, ["a", "b", [], "c"])
    with pytest.raises(TypeError, match=r"y\[1\]\[0\] must be a str, got int"):
        model.score(X, ["a", [1], "b", "c"])
    with pytest.raises(ValueError, match="4 contexts but y has 3"):
        model.score(X, ["a", ["b"], "c"])


def test_check_contexts_accepts_strings_and_contexts():
    ctx = Context(history=(Turn("user", "hi"),), query="q")
    out = check_contexts(["plain", ctx])
    assert out[0] == Context(query="plain") and out[1] is ctx


@pytest.mark.parametrize(
    "X, error, match",
    [
        ([], ValueError, "empty"),
        ("hello", TypeError, "single str"),
        (["ok", None], TypeError, r"X\[1\]"),
        (["ok", float("nan")], TypeError, r"X\[1\] must be a Context or a str, got float"),
        (5, TypeError, "sequence"),
    ],
)
def test_check_contexts_errors(X, error, match):
    with pytest.raises(error, match=match):
        check_contexts(X)


def test_turn_rejects_unknown_speaker():
    with pytest.raises(ValueError, match="speaker"):
        Turn("narrator", "hello")


def test_check_responses_errors():
    with pytest.raises(ValueError, match="2 contexts but y has 1"):
        check_responses(["a"], 2)
    with pytest.raises(TypeError, match=r"y\[0\]"):
        check_responses([float("nan")])
    with pytest.raises(TypeError, match=r"y\[1\] holds several right responses.*one \(context"):
        check_responses(["a", ["b", "c"]])


def test_resolve_candidates_dedupes_in_order():
    assert list(resolve_candidates(None, ["b", "a", "b"])) == ["b", "a"]
    assert list(resolve_candidates(["x", "y", "x"], ["a"])) == ["x", "y"]
    with pytest.raises(ValueError, match="candidates is empty"):
        resolve_candidates([], ["a"])


def test_compat_names_the_scikit_learn_version_it_needs(monkeypatch):
    import importlib.util

    import sklearn.base

    import irdialog._compat as compat

    monkeypatch.delattr(sklearn.base, "_fit_context")
    spec = importlib.util.spec_from_file_location("_compat_copy", compat.__file__)
    with pytest.raises(ImportError, match=r"irdialog needs scikit-learn >= 1\.6 \(found "):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_compat_minimum_is_pyproject_bound():
    import pathlib

    from irdialog._compat import MIN_SKLEARN

    pyproject = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
    assert f'"scikit-learn>={MIN_SKLEARN}"' in pyproject.read_text()
