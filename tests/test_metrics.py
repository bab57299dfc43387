"""Tests of irdialog.metrics: against scikit-learn, hand-computed cases, and properties."""

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.metrics import average_precision_score, ndcg_score, top_k_accuracy_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import irdialog.metrics as metrics_module
from irdialog.base import _top_k
from irdialog.metrics import (
    TIES,
    answer_recall_at_k,
    get_ranking_metric,
    gold_indices,
    gold_ranks,
    hits_at_k,
    make_ranking_scorer,
    mean_average_precision,
    mean_reciprocal_rank,
    ndcg_at_k,
    per_dialog_accuracy,
    per_response_accuracy,
    recall_at_k,
    response_accuracy,
)

INF = np.inf


def reference_ranks(gold_sets, scores, ties):
    """Rank of the first gold by sorting each row explicitly (a plain-Python reference)."""
    out = []
    for row, answers in zip(scores, gold_sets, strict=True):
        answers = {a for a in answers if a >= 0 and row[a] > -INF}
        if not answers:
            out.append(INF)
            continue
        if ties == "index":
            order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        else:  # gold after non-gold among equal scores
            order = sorted(range(len(row)), key=lambda j: (-row[j], j in answers, j))
        out.append(1 + next(p for p, j in enumerate(order) if j in answers))
    return np.array(out, dtype=float)


# -- against scikit-learn -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("ties", ["index", "pessimistic"])
def test_hits_at_k_matches_sklearn_top_k_accuracy(seed, ties):
    rng = np.random.default_rng(seed)
    n, c = 60, 3 + seed
    scores = rng.normal(size=(n, c))  # continuous: no ties
    gold = rng.integers(0, c, size=n)
    for k in range(1, c):
        expected = top_k_accuracy_score(gold, scores, k=k, labels=np.arange(c))
        assert hits_at_k(gold, scores, k, ties=ties) == pytest.approx(expected)


def test_hits_at_1_matches_rank_order_of_models_with_ties():
    # ties="index" must agree with RankerMixin.rank, so scorer "hits@1" == model.score.
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=(200, 6)).astype(float)  # many ties
    gold = rng.integers(0, 6, size=200)
    top = _top_k(scores, 3)
    for k in (1, 2, 3):
        expected = np.mean((top[:, :k] == gold[:, None]).any(axis=1))
        assert hits_at_k(gold, scores, k, ties="index") == pytest.approx(expected)


# -- hand-computed cases ------------------------------------------------------------------------


def test_mean_reciprocal_rank_hand_case():
    scores = np.array(
        [
            [0.1, 0.9, 0.5, 0.3],  # gold 2: behind 0.9 -> rank 2
            [0.8, 0.3, 0.1, 0.2],  # gold 0: rank 1
            [0.2, 0.1, 0.7, 0.4],  # gold 1: behind all three -> rank 4
            [0.2, 0.1, 0.7, 0.4],  # gold -1: miss -> 0
        ]
    )
    gold = [2, 0, 1, -1]
    np.testing.assert_array_equal(gold_ranks(gold, scores), [2, 1, 4, INF])
    assert mean_reciprocal_rank(gold, scores) == pytest.approx((1 / 2 + 1 + 1 / 4 + 0) / 4)
    assert hits_at_k(gold, scores, 1) == pytest.approx(1 / 4)
    assert hits_at_k(gold, scores, 2) == pytest.approx(2 / 4)
    assert hits_at_k(gold, scores, 4) == pytest.approx(3 / 4)
    assert hits_at_k(gold, scores, 100) == pytest.approx(3 / 4)


def test_recall_at_k_of_n_hand_case():
    # Ubuntu layout: the true response in column 0, then 4 distractors.
    scores = np.array(
        [
            [0.9, 0.1, 0.95, 0.3, 0.2],  # 1 in 2: rank 1; of 5: rank 2
            [0.2, 0.6, 0.1, 0.4, 0.3],  # 1 in 2: rank 2; of 5: rank 4
            [0.5, 0.1, 0.2, 0.3, 0.4],  # rank 1 everywhere
            [0.1, 0.2, 0.3, 0.4, 0.5],  # 1 in 2: rank 2; of 5: rank 5
        ]
    )
    assert recall_at_k(scores, 1, n=2) == pytest.approx(2 / 4)
    assert recall_at_k(scores, 1) == pytest.approx(1 / 4)
    assert recall_at_k(scores, 2) == pytest.approx(2 / 4)
    assert recall_at_k(scores, 4) == pytest.approx(3 / 4)
    assert recall_at_k(scores, 5) == 1.0
    assert recall_at_k(scores, 2, n=3) == pytest.approx(3 / 4)  # ranks 2, 2, 1, 3


def test_recall_at_k_equals_hits_at_k_with_gold_in_column_zero():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(40, 10))
    for k in (1, 2, 5):
        assert recall_at_k(scores, k, n=10) == hits_at_k(np.zeros(40, int), scores, k)
        assert recall_at_k(scores, k, n=4) == hits_at_k(np.zeros(40, int), scores[:, :4], k)


def test_ties_index_versus_pessimistic():
    scores = np.array([[1.0, 1.0, 1.0, 0.0], [2.0, 1.0, 1.0, 1.0]])
    # row 0: gold 1 ties with 0 and 2; row 1: gold 3 ties with 1 and 2, behind 0
    gold = [1, 3]
    np.testing.assert_array_equal(gold_ranks(gold, scores, ties="index"), [2, 4])
    np.testing.assert_array_equal(gold_ranks(gold, scores, ties="pessimistic"), [3, 4])
    np.testing.assert_array_equal(gold_ranks([0, 1], scores, ties="index"), [1, 2])
    np.testing.assert_array_equal(gold_ranks([0, 1], scores, ties="pessimistic"), [3, 4])


def test_recall_at_k_counts_ties_against_the_model_by_default():
    constant = np.zeros((5, 10))
    assert recall_at_k(constant, 1) == 0.0
    assert recall_at_k(constant, 9) == 0.0
    assert recall_at_k(constant, 10) == 1.0
    assert recall_at_k(constant, 1, ties="index") == 1.0  # column 0 would win every tie


def test_minus_inf_padding_is_absent():
    # rank_candidates output: lists of length 3, 2 and 1 padded with -inf.
    scores = np.array([[0.2, 0.5, 0.1], [0.3, 0.1, -INF], [-1.0, -INF, -INF]])
    assert recall_at_k(scores, 1) == pytest.approx(2 / 3)
    np.testing.assert_array_equal(gold_ranks([0, 0, 0], scores, ties="pessimistic"), [2, 1, 1])
    # a gold scored -inf is a miss, even though it is the lowest index among equal scores
    np.testing.assert_array_equal(gold_ranks([2, 2, 1], scores), [3, INF, INF])
    assert hits_at_k([2, 2, 1], scores, k=3) == pytest.approx(1 / 3)
    # all candidates absent: a miss under both tie rules
    assert hits_at_k([0], [[-INF, -INF]], k=2) == 0.0
    assert hits_at_k([0], [[-INF, -INF]], k=2, ties="pessimistic") == 0.0


def test_integer_and_float32_scores():
    scores = np.array([[3, 1, 2], [0, 5, 5]])
    assert hits_at_k([0, 2], scores, ties="index") == 0.5
    assert hits_at_k([0, 2], scores.astype(np.float32), ties="index") == 0.5
    assert hits_at_k([0, 2], scores.astype(np.float32)) == 0.75  # row 1: half of a tie
    assert hits_at_k([0, 2], scores.astype(np.float32), ties="pessimistic") == 0.5


# -- several acceptable answers -----------------------------------------------------------------

MULTI_SCORES = np.array(
    [
        [0.1, 0.9, 0.5, 0.3],  # answers {2, 3}: best is 2, rank 2
        [0.8, 0.3, 0.1, 0.2],  # answers {0, 1}: 0 is top, rank 1
        [0.2, 0.1, 0.7, 0.4],  # answers {}: miss
        [0.5, 0.5, 0.5, 0.0],  # answers {1, 2} tied with 0: index rank 2, pessimistic rank 2
        [0.5, 0.5, 0.5, 0.0],  # answers {0, 1}: index rank 1, pessimistic rank 2
    ]
)
MULTI_LISTS = [[3, 2], [1, 0, 0], [], [1, 2], [0, 1]]


def multi_gold_forms():
    mask = np.zeros(MULTI_SCORES.shape, dtype=bool)
    padded = np.full((5, 3), -1)
    for i, answers in enumerate(MULTI_LISTS):
        mask[i, answers] = True
        padded[i, : len(answers)] = answers
    sets = [set(a) for a in MULTI_LISTS]
    return {"lists": MULTI_LISTS, "mask": mask, "padded": padded, "sets": sets}


@pytest.mark.parametrize("form", ["lists", "mask", "padded", "sets"])
def test_multi_answer_gold(form):
    gold = multi_gold_forms()[form]
    np.testing.assert_array_equal(gold_ranks(gold, MULTI_SCORES), [2, 1, INF, 2, 1])
    np.testing.assert_array_equal(
        gold_ranks(gold, MULTI_SCORES, ties="pessimistic"), [2, 1, INF, 2, 2]
    )
    old = {"ties": "index", "no_answer": "miss"}
    assert hits_at_k(gold, MULTI_SCORES, 1, **old) == pytest.approx(2 / 5)
    mrr = mean_reciprocal_rank(gold, MULTI_SCORES, **old)
    assert mrr == pytest.approx((0.5 + 1 + 0 + 0.5 + 1) / 5)
    # expected ties, row 2 (no answer) left out: rows 3 and 4 are 3-way ties holding 2
    # right answers: hits@1 = 2/3, MRR = 2/3 * 1 + 1/3 * 1/2 = 5/6
    assert hits_at_k(gold, MULTI_SCORES, 1) == pytest.approx((0 + 1 + 2 / 3 + 2 / 3) / 4)
    mrr = mean_reciprocal_rank(gold, MULTI_SCORES)
    assert mrr == pytest.approx((0.5 + 1 + 5 / 6 + 5 / 6) / 4)


def test_multi_answer_with_one_answer_each_equals_single_gold():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 4, size=(50, 7)).astype(float)
    gold = rng.integers(-1, 7, size=50)
    for ties in ("index", "pessimistic"):
        np.testing.assert_array_equal(
            gold_ranks([[g] for g in gold], scores, ties=ties), gold_ranks(gold, scores, ties=ties)
        )


def test_multi_answer_ignores_minus_one_and_absent_answers():
    scores = [[0.9, 0.1, -INF]]
    assert gold_ranks([[-1, 2, 1]], scores)[0] == 2
    assert gold_ranks([[-1, 2]], scores)[0] == INF
    np.testing.assert_array_equal(gold_ranks([[], []], [[1.0], [2.0]]), [INF, INF])
    # a 2-D array pads with -1: these rows have no right answer
    assert hits_at_k(np.full((2, 3), -1), [[1.0], [2.0]], no_answer="miss") == 0.0
    with pytest.raises(ValueError, match="hits@1: no example has a right answer"):
        hits_at_k(np.full((2, 3), -1), [[1.0], [2.0]])
    # in a list, -1 is a right answer that is not a candidate: a miss, never skipped
    assert hits_at_k([[-1], [0]], [[1.0], [2.0]]) == 0.5


# -- accuracies and gold indices ----------------------------------------------------------------


def test_per_response_accuracy():
    assert per_response_accuracy(["a", "b", "c", "d"], ["a", "x", "c", "d"]) == 0.75
    assert per_response_accuracy(np.array(["a", "b"]), ["a", "b"]) == 1.0
    assert per_response_accuracy(("a",), ("b",)) == 0.0


def test_per_dialog_accuracy_hand_case():
    y_true = ["hi", "where", "api_call rome", "hi", "api_call paris", "hi", "ok"]
    y_pred = ["hi", "where", "api_call rome", "hi", "api_call rome", "hi", "ok"]
    groups = ["d0", "d0", "d0", "d1", "d1", "d2", "d2"]
    assert per_dialog_accuracy(y_true, y_pred, groups) == pytest.approx(2 / 3)
    # the turns of a dialog need not be contiguous
    order = [4, 0, 5, 2, 6, 1, 3]
    shuffled = [[v[i] for i in order] for v in (y_true, y_pred, groups)]
    assert per_dialog_accuracy(*shuffled) == pytest.approx(2 / 3)
    assert per_dialog_accuracy(y_true, y_true, groups) == 1.0
    assert per_dialog_accuracy(y_true, y_pred, np.zeros(7, int)) == 0.0


def test_per_dialog_accuracy_is_at_most_per_response_accuracy():
    rng = np.random.default_rng(0)
    y_true = rng.choice(["a", "b", "c"], size=100).tolist()
    y_pred = rng.choice(["a", "b", "c"], size=100).tolist()
    groups = rng.integers(0, 20, size=100)
    assert per_dialog_accuracy(y_true, y_pred, groups) <= per_response_accuracy(y_true, y_pred)


def test_gold_indices():
    candidates = np.array(["hello", "ok", "api_call rome", "ok"], dtype=object)
    got = gold_indices(["ok", "bye", "hello", "api_call rome"], candidates)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [1, -1, 0, 2])  # a duplicate maps to its first index
    np.testing.assert_array_equal(gold_indices([], candidates), [])


def test_gold_indices_rejects_unhashable_responses_with_a_hint():
    with pytest.raises(TypeError, match=r"y\[1\] must be a response string.*for answers in y"):
        gold_indices(["ok", ["ok", "hello"]], ["ok", "hello"])
    with pytest.raises(TypeError, match="single str"):
        gold_indices("ok", ["ok"])


# -- validation ---------------------------------------------------------------------------------


def test_nan_scores_are_rejected_naming_the_argument():
    scores = np.array([[0.1, 0.2], [0.3, np.nan]])
    with pytest.raises(ValueError, match=r"scores contains NaN \(first at row 1, column 1\)"):
        hits_at_k([0, 1], scores)
    with pytest.raises(ValueError, match="scores contains NaN"):
        recall_at_k(scores, 1)
    with pytest.raises(ValueError, match="scores contains NaN"):
        mean_reciprocal_rank([0, 1], scores)


@pytest.mark.parametrize(
    ("gold", "scores", "error", "match"),
    [
        ([0, 1], [0.1, 0.2], ValueError, "must be 2-D"),
        ([0], np.empty((1, 0)), ValueError, "empty"),
        ([0, 1], [[0.1, 0.2]], ValueError, "scores has 1 rows but gold has 2"),
        ([2], [[0.1, 0.2]], ValueError, r"gold\[0\] = 2 is not a valid index into 2 candidates"),
        ([-2], [[0.1, 0.2]], ValueError, "use -1 for a gold response"),
        ([[0], [5]], [[0.1], [0.2]], ValueError, r"gold\[1\]\[0\] = 5"),
        ([[0], [0, 5]], [[0.1], [0.2]], ValueError, r"gold\[1\]\[1\] = 5"),
        (["hello"], [[0.1, 0.2]], TypeError, r"gold_indices\(y, candidates\)"),
        ([0.0], [[0.1, 0.2]], TypeError, "gold has dtype float64"),
        ("a", [[0.1, 0.2]], TypeError, "single str"),
        ([[True, False]], [[0.1, 0.2, 0.3]], ValueError, "boolean gold mask must have the shape"),
        ([0], [["a", "b"]], TypeError, "scores must hold real numbers"),
    ],
)
def test_invalid_inputs_raise_clear_errors(gold, scores, error, match):
    with pytest.raises(error, match=match):
        hits_at_k(gold, scores)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "1", None])
def test_invalid_k(k):
    with pytest.raises(ValueError, match="k must be a positive integer"):
        hits_at_k([0], [[0.1, 0.2]], k)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        recall_at_k([[0.1, 0.2]], k)


def test_invalid_ties_and_n():
    with pytest.raises(
        ValueError, match=r"ties must be one of \('expected', 'index', 'pessimistic'\)"
    ):
        hits_at_k([0], [[0.1, 0.2]], ties="optimistic")
    with pytest.raises(ValueError, match="n=3 exceeds the 2 candidates"):
        recall_at_k([[0.1, 0.2]], 1, n=3)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        recall_at_k([[0.1, 0.2]], 1, n=0)


def test_accuracy_validation():
    with pytest.raises(ValueError, match="y_true has 2 entries but y_pred has 1"):
        per_response_accuracy(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="y_true is empty"):
        per_response_accuracy([], [])
    with pytest.raises(TypeError, match="single str"):
        per_response_accuracy("ab", "ab")
    with pytest.raises(ValueError, match="y_true has 2 entries but groups has 3"):
        per_dialog_accuracy(["a", "b"], ["a", "b"], [0, 0, 1])
    with pytest.raises(TypeError, match="groups must hold dialog ids"):
        per_dialog_accuracy(["a", "b"], ["a", "b"], [0, "d1"])


# -- scorers ------------------------------------------------------------------------------------


class TableRanker(BaseEstimator):
    """A stand-in fitted ranker: context i (an int, or the str of one) gets the score row
    ``table[i] + bonus * one_hot(favourite)``. ``bonus`` is a parameter to search over."""

    def __init__(self, table=None, candidates=None, bonus=0.0, favourite=0):
        self.table = table
        self.candidates = candidates
        self.bonus = bonus
        self.favourite = favourite

    def fit(self, X, y=None):
        self.candidates_ = np.asarray(self.candidates, dtype=object)
        return self

    def decision_function(self, X):
        rows = np.asarray([int(x) for x in X])
        self.calls_ = getattr(self, "calls_", 0) + 1
        out = np.array(self.table, dtype=float)[rows]
        out[:, self.favourite] += self.bonus
        return out


CANDS = ["hello", "where", "api_call rome", "ok"]
TABLE = [
    [0.9, 0.1, 0.2, 0.3],  # best: hello
    [0.1, 0.9, 0.5, 0.3],  # where, api_call rome, ok, hello
    [0.5, 0.5, 0.5, 0.5],  # all tied: hello by index
    [0.0, 0.2, 0.1, 0.8],  # ok, where, api_call rome, hello
]


def fitted(**params):
    return TableRanker(table=TABLE, candidates=CANDS, **params).fit(None)


def test_scorer_hits_and_mrr_match_the_functions():
    X = [0, 1, 2, 3]
    y = ["hello", "api_call rome", "where", "unknown response"]
    est = fitted()
    gold = gold_indices(y, est.candidates_)
    scores = np.asarray(TABLE)
    for k in (1, 2, 3, 10):
        assert make_ranking_scorer(f"hits@{k}")(est, X, y) == hits_at_k(gold, scores, k)
    index = make_ranking_scorer("mrr", ties="index")(est, X, y)
    assert index == pytest.approx((1 + 1 / 2 + 1 / 2 + 0) / 4)
    # row 2, a 4-way tie: (1 + 1/2 + 1/3 + 1/4) / 4 = 25/48
    expected = make_ranking_scorer("mrr")(est, X, y)
    assert expected == pytest.approx((1 + 1 / 2 + 25 / 48 + 0) / 4)
    pess = make_ranking_scorer("mrr", ties="pessimistic")(est, X, y)
    assert pess == pytest.approx((1 + 1 / 2 + 1 / 4 + 0) / 4)


def test_scorer_hits_at_1_equals_predict_accuracy_with_ties():
    est = fitted()
    X, y = [0, 1, 2, 3], ["hello", "where", "hello", "where"]
    predicted = est.candidates_[_top_k(est.decision_function(X), 1)[:, 0]]
    hits = make_ranking_scorer("hits@1", ties="index")(est, X, y)
    assert hits == per_response_accuracy(y, predicted) == 0.75
    # rows: hello first, where first, hello in a 4-way tie, where second
    assert make_ranking_scorer("hits@1")(est, X, y) == (1 + 1 + 1 / 4 + 0) / 4


class PredictingTableRanker(TableRanker):
    """A TableRanker with ``predict``, ties to the lower candidate index."""

    def predict(self, X):
        return self.candidates_[_top_k(self.decision_function(X), 1)[:, 0]]


def test_response_accuracy_counts_a_tie_at_its_expected_value():
    est = PredictingTableRanker(table=TABLE, candidates=CANDS).fit(None)
    X, y = [0, 1, 2, 2, 3], ["hello", "where", "ok", "hello", "unknown response"]
    groups = ["a", "a", "b", "c", "c"]
    # rows: right, right, 1/4 of a 4-way tie twice, not a candidate
    got = response_accuracy(est, X, y, groups)
    assert got.per_response == pytest.approx((1 + 1 + 1 / 4 + 1 / 4 + 0) / 5)
    # dialogs: a = 1 * 1, b = 1/4, c = 1/4 * 0
    assert got.per_dialog == pytest.approx((1 + 1 / 4 + 0) / 3)
    assert response_accuracy(est, X, y).per_dialog is None
    # "index" is predict's choice, "pessimistic" loses every tie
    predicted = est.predict(X)
    index = response_accuracy(est, X, y, groups, ties="index")
    assert index.per_response == per_response_accuracy(y, predicted) == 3 / 5
    assert index.per_dialog == per_dialog_accuracy(y, predicted, groups) == 1 / 3
    pessimistic = response_accuracy(est, X, y, groups, ties="pessimistic")
    assert pessimistic == (2 / 5, 1 / 3)


def test_response_accuracy_is_hits_at_1_in_blocks(monkeypatch):
    rng = np.random.default_rng(0)
    table = rng.integers(0, 3, size=(50, 4)).astype(float)  # many ties
    est = PredictingTableRanker(table=table, candidates=CANDS).fit(None)
    y = list(rng.choice(CANDS, size=50))
    whole = response_accuracy(est, list(range(50)), y)
    monkeypatch.setattr(metrics_module, "_SCORER_BLOCK_SIZE", 7)
    blocked = response_accuracy(est, list(range(50)), y)
    assert est.calls_ > 1
    assert blocked.per_response == pytest.approx(whole.per_response)
    assert whole.per_response == pytest.approx(hits_at_k(gold_indices(y, CANDS), table))


def test_response_accuracy_errors():
    est = PredictingTableRanker(table=TABLE, candidates=CANDS).fit(None)
    with pytest.raises(ValueError, match="ties must be one of"):
        response_accuracy(est, [0], ["hello"], ties="random")
    with pytest.raises(ValueError, match="X has 2 contexts but y has 1"):
        response_accuracy(est, [0, 1], ["hello"])
    with pytest.raises(TypeError, match="single str"):
        response_accuracy(est, [0], "hello")
    with pytest.raises(ValueError, match="y_true has 2 entries but groups has 1"):
        response_accuracy(est, [0, 1], ["hello", "ok"], groups=[0])


def test_scorer_multi_answer_y():
    est = fitted()
    X = [1, 3]
    y = [["hello", "api_call rome"], ("bye", "where")]  # ranks 2 and 2
    assert make_ranking_scorer("hits@1")(est, X, y) == 0.0
    assert make_ranking_scorer("hits@2")(est, X, y) == 1.0
    with pytest.raises(ValueError, match="needs one gold response per example"):
        make_ranking_scorer("r@1-of-2")(est, X, y)


def test_scorer_scores_in_blocks(monkeypatch):
    rng = np.random.default_rng(0)
    table = rng.normal(size=(25, 6))
    cands = [f"r{j}" for j in range(6)]
    y = [f"r{j}" for j in rng.integers(0, 7, size=25)]  # r6 is not a candidate
    X = np.arange(25)
    est = TableRanker(table=table, candidates=cands).fit(None)
    names = ["hits@1", "hits@3", "mrr", "r@1-of-2", "r@2-of-5"]
    whole = {name: make_ranking_scorer(name)(est, X, y) for name in names}
    monkeypatch.setattr(metrics_module, "_SCORER_BLOCK_SIZE", 4)
    est.calls_ = 0
    blocked = {name: make_ranking_scorer(name)(est, X, y) for name in names}
    assert est.calls_ == 7 * len(names)  # ceil(25 / 4) calls per scorer
    # the same numbers: r@K-of-N draws its distractors row by row from one stream
    assert blocked == whole
    gold = gold_indices(y, cands)
    assert blocked["hits@1"] == hits_at_k(gold, table, 1)


def test_recall_scorer_is_seeded_and_bounded_by_all_candidate_hits():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(300, 20))
    cands = [f"r{j}" for j in range(20)]
    gold = rng.integers(0, 20, size=300)
    y = [cands[g] for g in gold]
    est = TableRanker(table=table, candidates=cands).fit(None)
    X = np.arange(300)
    r1_of_2 = make_ranking_scorer("r@1-of-2", random_state=1)
    assert r1_of_2(est, X, y) == r1_of_2(est, X, y)  # same distractors at each call
    r1_of_20 = make_ranking_scorer("r@1-of-20")(est, X, y)
    assert r1_of_20 == hits_at_k(gold, table, 1)  # N = all candidates: no sampling left
    # fewer distractors can only help, and random scores give about k / N
    r1_of_5 = make_ranking_scorer("r@1-of-5")(est, X, y)
    assert r1_of_20 <= r1_of_5
    assert r1_of_2(est, X, y) == pytest.approx(0.5, abs=0.1)
    assert r1_of_5 == pytest.approx(0.2, abs=0.08)


def test_recall_scorer_with_a_perfect_and_a_constant_model():
    n, c = 30, 12
    cands = [f"r{j}" for j in range(c)]
    gold = np.arange(n) % c
    perfect = np.zeros((n, c))
    perfect[np.arange(n), gold] = 1.0
    y = [cands[g] for g in gold]
    est = TableRanker(table=perfect, candidates=cands).fit(None)
    assert make_ranking_scorer("r@1-of-10")(est, np.arange(n), y) == 1.0
    est_const = TableRanker(table=np.zeros((n, c)), candidates=cands).fit(None)
    assert make_ranking_scorer("r@1-of-10", ties="pessimistic")(est_const, np.arange(n), y) == 0.0
    const = make_ranking_scorer("r@1-of-10")(est_const, np.arange(n), y)
    assert const == pytest.approx(0.1)  # a 10-way tie: 1/10 a row
    assert make_ranking_scorer("r@1-of-10", ties="index")(est_const, np.arange(n), y) == 1.0
    with pytest.raises(ValueError, match="'r@1-of-20' needs at least 20 candidates, got 12"):
        make_ranking_scorer("r@1-of-20")(est, np.arange(n), y)


@pytest.mark.parametrize(
    ("name", "key"),
    [("hits@1", "hits@1"), ("HITS@10", "hits@10"), (" mrr ", "mrr"), ("R@2-of-10", "r@2-of-10")],
)
def test_scorer_names(name, key):
    scorer = make_ranking_scorer(name)
    assert scorer.name == key
    assert repr(scorer).startswith(f"make_ranking_scorer({key!r}")
    assert pickle.loads(pickle.dumps(scorer)).name == key


@pytest.mark.parametrize("name", ["hits", "hits@", "hits@k", "top1", "p@2", "r@1", "r@1of10", ""])
def test_unknown_scorer_name_lists_the_valid_ones(name):
    with pytest.raises(ValueError, match="unknown ranking metric") as info:
        make_ranking_scorer(name)
    for valid in ("'hits@K'", "'mrr'", "'map'", "'ndcg@K'", "'rN@K'", "'r@K-of-N'"):
        assert valid in str(info.value)


def test_scorer_argument_errors():
    with pytest.raises(ValueError, match="k must be at least 1"):
        make_ranking_scorer("hits@0")
    with pytest.raises(ValueError, match="k must be at least 1"):
        make_ranking_scorer("r@0-of-10")
    with pytest.raises(ValueError, match="N must be at least 2"):
        make_ranking_scorer("r@1-of-1")
    with pytest.raises(ValueError, match="ties must be one of"):
        make_ranking_scorer("mrr", ties="random")
    with pytest.raises(TypeError, match="name must be a str"):
        make_ranking_scorer(1)


def test_scorer_call_errors():
    scorer = make_ranking_scorer("hits@1")
    with pytest.raises(NotFittedError, match="candidates_ attribute"):
        scorer(TableRanker(table=TABLE, candidates=CANDS), [0], ["hello"])
    with pytest.raises(ValueError, match="X has 2 contexts but y has 1"):
        scorer(fitted(), [0, 1], ["hello"])
    with pytest.raises(TypeError, match="single str"):
        scorer(fitted(), [0], "hello")
    nan_table = np.array(TABLE)
    nan_table[0, 0] = np.nan
    est = TableRanker(table=nan_table, candidates=CANDS).fit(None)
    with pytest.raises(ValueError, match=r"decision_function\(X\) contains NaN"):
        scorer(est, [0], ["hello"])
    short = TableRanker(table=TABLE, candidates=CANDS[:3]).fit(None)
    with pytest.raises(ValueError, match=r"returned shape \(1, 4\), expected \(1, 3\)"):
        scorer(short, [0], ["hello"])


def test_scorer_in_grid_search_and_pipeline():
    # bonus=1 on candidate 3 ("ok") makes "ok" win every row.
    X = np.tile(np.arange(4), 3)
    y = ["hello", "where", "hello", "ok"] * 3
    grid = GridSearchCV(
        TableRanker(table=TABLE, candidates=CANDS, favourite=3),
        {"bonus": [0.0, 1.0]},
        scoring={"hits@1": make_ranking_scorer("hits@1"), "mrr": make_ranking_scorer("mrr")},
        refit="mrr",
        cv=KFold(3),
    ).fit(X, y)
    # bonus 0: row 2 is a 4-way tie (1/4); bonus 1: "ok" wins every row
    np.testing.assert_allclose(grid.cv_results_["mean_test_hits@1"], [3.25 / 4, 0.25])
    assert grid.best_params_ == {"bonus": 0.0}
    pipe = make_pipeline(FunctionTransformer(), fitted()).fit(X, y)
    assert make_ranking_scorer("hits@1", ties="index")(pipe, X, y) == 1.0


# -- properties ---------------------------------------------------------------------------------


@st.composite
def ranking_problems(draw):
    n = draw(st.integers(1, 8))
    c = draw(st.integers(1, 8))
    # few distinct values, so ties are common; -inf for absent candidates
    values = st.sampled_from([-INF, -1.0, 0.0, 0.5, 1.0, 2.0])
    scores = draw(hnp.arrays(np.float64, (n, c), elements=values))
    gold = draw(st.lists(st.lists(st.integers(-1, c - 1), max_size=3), min_size=n, max_size=n))
    return scores, gold


@settings(max_examples=200, deadline=None)
@given(ranking_problems())
def test_properties_of_ranks_and_metrics(problem):
    scores, gold = problem
    n, c = scores.shape
    for ties in ("index", "pessimistic"):
        ranks = gold_ranks(gold, scores, ties=ties)
        np.testing.assert_array_equal(ranks, reference_ranks(gold, scores, ties))
        hits = [hits_at_k(gold, scores, k, ties=ties, no_answer="miss") for k in range(1, c + 2)]
        assert all(0.0 <= h <= 1.0 for h in hits)
        assert hits == sorted(hits)  # monotone in k
        present = np.array(
            [any(a >= 0 and scores[i, a] > -INF for a in g) for i, g in enumerate(gold)]
        )
        assert hits[c - 1] == pytest.approx(present.mean())  # hits@n_candidates: every present gold
        mrr = mean_reciprocal_rank(gold, scores, ties=ties, no_answer="miss")
        assert hits[0] <= mrr + 1e-12
        assert mrr <= hits[-1] + 1e-12
    assert (
        gold_ranks(gold, scores, ties="index") <= gold_ranks(gold, scores, ties="pessimistic")
    ).all()


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
        elements=st.floats(-1e6, 1e6),
    ),
    st.data(),
)
def test_single_gold_present_and_finite(scores, data):
    n, c = scores.shape
    gold = np.array(data.draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
    ranks = gold_ranks(gold, scores)
    assert ((ranks >= 1) & (ranks <= c)).all()
    assert hits_at_k(gold, scores, c) == 1.0
    mrr = mean_reciprocal_rank(gold, scores)
    assert 0.0 < mrr <= 1.0
    top = _top_k(scores, c)  # the gold sits where `rank` puts it
    np.testing.assert_array_equal(ranks, 1 + np.argmax(top == gold[:, None], axis=1))


# -- several right answers, ties at their expected value ----------------------------------------

# Row 0: right answers {1, 3} in a 3-way tie at places 2-4 (one candidate above it).
# Row 1: right answer 2 at place 3, one right answer outside the candidates (-1), column 4
#        absent (-inf): R = 2 right answers.
# Row 2: no right answer (left out by no_answer="skip", 0 with "miss").
HAND_SCORES = np.array(
    [
        [0.9, 0.5, 0.5, 0.5, 0.1],
        [0.8, 0.6, 0.4, 0.2, -INF],
        [0.3, 0.3, 0.3, 0.3, 0.3],
    ]
)
HAND_GOLD = [[1, 3], [2, -1], []]
_D = 1 / np.log2(np.arange(2, 7))  # the DCG discounts of places 1..5
HAND_VALUES = {
    # row 0: the first place of the tie is right with P = C(2,1)/C(3,2) = 2/3; row 1: rank 3
    "p@1": [0.0, 0.0],
    "hits@1": [0.0, 0.0],
    "hits@2": [2 / 3, 0.0],
    "hits@3": [1.0, 1.0],
    # row 0: first right answer at rank 2 (P 2/3) or 3 (P 1/3): 2/3 * 1/2 + 1/3 * 1/3 = 4/9
    "mrr": [4 / 9, 1 / 3],
    "mrr@2": [1 / 3, 0.0],
    # row 0: the wrong candidate of the tie at place 2, 3 or 4 gives AP 7/12, 1/2, 5/12;
    # row 1: (1/3 + 0) / 2
    "map": [1 / 2, 1 / 6],
    # row 0: one of the tie's 3 places is in the top 2, so 2/3 of a right answer, of 2
    "recall@2": [1 / 3, 0.0],
    "recall@3": [2 / 3, 1 / 2],
    # row 0: gain 2/3 at places 2 and 3; ideal: gains 1 at places 1 and 2 (R = 2 both rows)
    "ndcg@3": [2 / 3 * (_D[1] + _D[2]) / (_D[0] + _D[1]), _D[2] / (_D[0] + _D[1])],
    "ndcg": [
        2 / 3 * (_D[1] + _D[2] + _D[3]) / (_D[0] + _D[1]),
        _D[2] / (_D[0] + _D[1]),
    ],
    # the first 3 candidates: row 0 right {1} tied with 2 at place 2; row 1 right {2} at 3
    "r3@1": [0.0, 0.0],
    "r3@2": [1 / 2, 0.0],
    "r3@3": [1.0, 1.0],
}


@pytest.mark.parametrize("name", sorted(HAND_VALUES))
def test_every_metric_on_a_hand_case(name):
    rows = HAND_VALUES[name]
    metric = get_ranking_metric(name)
    values = metric.per_example(HAND_GOLD, HAND_SCORES)
    np.testing.assert_allclose(values[:2], rows, atol=1e-12)
    assert np.isnan(values[2])  # no right answer: skipped
    assert metric(HAND_GOLD, HAND_SCORES) == pytest.approx(np.mean(rows))
    miss = get_ranking_metric(name, no_answer="miss")
    assert miss(HAND_GOLD, HAND_SCORES) == pytest.approx(np.sum(rows) / 3)


def test_the_functions_are_the_named_metrics():
    g, s = HAND_GOLD, HAND_SCORES
    assert hits_at_k(g, s, 2) == get_ranking_metric("hits@2")(g, s)
    assert mean_reciprocal_rank(g, s, k=2) == get_ranking_metric("mrr@2")(g, s)
    assert mean_average_precision(g, s) == get_ranking_metric("map")(g, s)
    assert ndcg_at_k(g, s, 3) == get_ranking_metric("ndcg@3")(g, s)
    assert ndcg_at_k(g, s) == get_ranking_metric("ndcg")(g, s)
    assert answer_recall_at_k(g, s, 2) == get_ranking_metric("recall@2")(g, s)
    assert answer_recall_at_k(g, s, 2, n=3) == get_ranking_metric("r3@2")(g, s)
    assert hits_at_k(g, s, 2, ties="index") == get_ranking_metric("hits@2", ties="index")(g, s)


def test_a_three_way_tie_at_the_top_earns_a_third():
    scores = [[0.7, 0.7, 0.7, 0.1]]
    assert get_ranking_metric("p@1")([0], scores) == 1 / 3
    assert hits_at_k([0], scores, ties="index") == 1.0
    assert hits_at_k([1], scores, ties="index") == 0.0
    assert hits_at_k([0], scores, ties="pessimistic") == 0.0
    assert hits_at_k([0], scores, k=2) == pytest.approx(2 / 3)
    assert mean_reciprocal_rank([0], scores) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert recall_at_k(scores, 1, ties="expected") == pytest.approx(1 / 3)


def test_a_model_that_scores_everything_alike_gets_chance():
    scores = np.zeros((50, 10))
    gold = [[0]] * 25 + [[3, 7]] * 25  # one right answer, then two
    assert hits_at_k(gold, scores) == pytest.approx((1 / 10 + 2 / 10) / 2)
    assert answer_recall_at_k(gold, scores, 5) == pytest.approx(1 / 2)
    assert get_ranking_metric("r10@1")(np.zeros(50, int), scores) == pytest.approx(1 / 10)
    assert get_ranking_metric("r2@1")(np.zeros(50, int), scores) == pytest.approx(1 / 2)


def _orders(row, gains, ties):
    """Every order of the present candidates of a row the tie rule allows (each equally
    likely under "expected")."""
    present = [j for j in range(len(row)) if row[j] > -INF]
    if ties == "index":
        return [sorted(present, key=lambda j: (-row[j], j))]
    if ties == "pessimistic":
        return [sorted(present, key=lambda j: (-row[j], gains[j], j))]
    levels = sorted({row[j] for j in present}, reverse=True)
    groups = [list(itertools.permutations([j for j in present if row[j] == v])) for v in levels]
    return [[j for part in parts for j in part] for parts in itertools.product(*groups)]


def _judge_order(kind, k, order, gains, outside):
    """One metric of one ranking, by its textbook definition; ``outside``: the gains of the
    right answers that are not candidates."""
    rel = [gains[j] for j in order]
    n_right = sum(g > 0 for g in gains) + len(outside)
    k = len(gains) + len(outside) if k is None else k
    if kind == "hits":
        return float(any(g > 0 for g in rel[:k]))
    if kind == "mrr":
        return next((1 / (p + 1) for p, g in enumerate(rel[:k]) if g > 0), 0.0)
    if kind == "map":
        found = np.cumsum([g > 0 for g in rel])
        return sum(found[p] / (p + 1) for p, g in enumerate(rel) if g > 0) / n_right
    if kind == "recall":
        return sum(g > 0 for g in rel[:k]) / n_right
    ideal = sorted(list(gains) + list(outside), reverse=True)[:k]
    dcg = sum(g / np.log2(p + 2) for p, g in enumerate(rel[:k]))
    return dcg / sum(g / np.log2(p + 2) for p, g in enumerate(ideal))


def reference_metric(name, gold_gains, outside, scores, ties, no_answer):
    """The mean of a metric over every order the tie rule allows, example by example."""
    spec = metrics_module._parse_name(name)
    out = []
    for row, gains, o in zip(scores, gold_gains, outside, strict=True):
        row, gains = list(row), list(gains)
        if spec.n is not None:
            row, gains, o = row[: spec.n], gains[: spec.n], []
        if not any(g > 0 for g in gains) and not o:
            out.append(np.nan if no_answer == "skip" else 0.0)
            continue
        orders = _orders(row, gains, ties)
        out.append(np.mean([_judge_order(spec.kind, spec.k, t, gains, o) for t in orders]))
    return np.array(out)


NAMES = ["hits@1", "hits@2", "p@1", "mrr", "mrr@2", "map", "recall@1", "recall@3", "ndcg",
         "ndcg@2", "r2@1", "r3@2"]  # fmt: skip


@st.composite
def judged_problems(draw):
    """Scores with many ties and -inf, and gold as index lists (with -1), graded gains, or
    mappings of indices to gains (negative keys: right answers outside the candidates);
    with the gains of each candidate and of the right answers outside the candidates."""
    n = draw(st.integers(1, 4))
    c = draw(st.integers(3, 6))
    values = st.sampled_from([-INF, 0.0, 0.5, 1.0, 2.0])
    scores = draw(hnp.arrays(np.float64, (n, c), elements=values))
    grades = st.sampled_from([0.0, 1.0, 3.0])
    form = draw(st.sampled_from(["gains", "lists", "mappings"]))
    if form == "gains":
        gains = draw(hnp.arrays(np.float64, (n, c), elements=grades))
        return scores, gains, gains, [[]] * n
    gains = np.zeros((n, c))
    if form == "mappings":
        keys = st.integers(-3, c - 1)
        maps = draw(st.lists(st.dictionaries(keys, grades, max_size=4), min_size=n, max_size=n))
        for i, answers in enumerate(maps):
            gains[i, [j for j in answers if j >= 0]] = [g for j, g in answers.items() if j >= 0]
        outside = [[g for j, g in answers.items() if j < 0 and g > 0] for answers in maps]
        return scores, maps, gains, outside
    lists = draw(st.lists(st.lists(st.integers(-1, c - 1), max_size=3), min_size=n, max_size=n))
    for i, answers in enumerate(lists):
        gains[i, [a for a in answers if a >= 0]] = 1.0
    return scores, lists, gains, [[1.0] * a.count(-1) for a in lists]


@settings(max_examples=150, deadline=None)
@given(judged_problems())
def test_every_metric_is_its_mean_over_the_orders_of_the_ties(problem):
    # "expected" is exact: the average over every order of the tied candidates
    scores, gold, gains, outside = problem
    for ties in TIES:
        for no_answer in ("skip", "miss"):
            for name in NAMES:
                got = get_ranking_metric(name, ties=ties, no_answer=no_answer)
                want = reference_metric(name, gains, outside, scores, ties, no_answer)
                np.testing.assert_allclose(
                    got.per_example(gold, scores), want, atol=1e-12, err_msg=f"{name} {ties}"
                )


@settings(max_examples=100, deadline=None)
@given(judged_problems(), st.randoms(use_true_random=False))
def test_no_metric_depends_on_the_order_of_the_candidates(problem, random):
    scores, gold, gains, outside = problem
    n, c = scores.shape
    for name in NAMES:
        metric = get_ranking_metric(name, no_answer="miss")
        head = metric.n or c  # rN@K: its first N stay the first N
        perm = random.sample(range(head), head) + random.sample(range(head, c), c - head)
        inverse = np.argsort(perm)
        if isinstance(gold, np.ndarray):
            moved = gold[:, perm]
        elif isinstance(gold[0], dict):
            moved = [{int(inverse[j]) if j >= 0 else j: g for j, g in a.items()} for a in gold]
        else:
            moved = [[int(inverse[a]) if a >= 0 else -1 for a in answers] for answers in gold]
        np.testing.assert_allclose(
            metric.per_example(moved, scores[:, perm]),
            metric.per_example(gold, scores),
            atol=1e-12,
            err_msg=name,
        )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [None, 1, 3, 5])
def test_ndcg_matches_sklearn_with_ties(seed, k):
    rng = np.random.default_rng(seed)
    gains = rng.choice([0.0, 0.0, 1.0, 2.0, 3.0], size=(30, 8))
    gains[gains.sum(axis=1) == 0, 0] = 1.0  # sklearn gives 0 to a row with no gain
    scores = rng.integers(0, 4, size=(30, 8)).astype(float)  # many ties
    expected = ndcg_score(gains, scores, k=k, ignore_ties=False)
    assert ndcg_at_k(gains, scores, k) == pytest.approx(expected)
    binary = gains > 0
    expected = ndcg_score(binary, scores, k=k, ignore_ties=False)
    assert ndcg_at_k(binary, scores, k) == pytest.approx(expected)
    lists = [np.flatnonzero(row).tolist() for row in binary]
    assert ndcg_at_k(lists, scores, k) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(4))
def test_average_precision_matches_sklearn_without_ties(seed):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(40, 9))
    labels = rng.random((40, 9)) < 0.3
    labels[labels.sum(axis=1) == 0, 0] = True
    expected = np.mean([average_precision_score(y, s) for y, s in zip(labels, scores)])
    for ties in TIES:  # no ties: every rule agrees
        assert mean_average_precision(labels, scores, ties=ties) == pytest.approx(expected)


def test_recall_at_k_with_expected_ties_is_rn_at_k_with_the_response_first():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=(60, 10)).astype(float)
    gold = np.zeros(60, int)
    for n, k in ((2, 1), (10, 1), (10, 2), (10, 5)):
        got = get_ranking_metric(f"r{n}@{k}")(gold, scores)
        assert recall_at_k(scores, k, n, ties="expected") == pytest.approx(got)


def test_metric_values_of_blocks_average_to_the_whole(monkeypatch):
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=(37, 6)).astype(float)
    gold = [list(rng.choice(6, size=rng.integers(0, 3), replace=False)) for _ in range(37)]
    for name in NAMES:
        metric = get_ranking_metric(name)
        whole = metric(gold, scores)
        parts = [metric.per_example(gold[i : i + 5], scores[i : i + 5]) for i in range(0, 37, 5)]
        assert metric.average(np.concatenate(parts)) == pytest.approx(whole)
        monkeypatch.setattr(metrics_module, "_BLOCK_ELEMENTS", 12)  # 2 rows a block
        assert metric(gold, scores) == pytest.approx(whole)
        monkeypatch.undo()


@pytest.mark.parametrize(
    ("name", "canonical", "k", "n"),
    [("HITS@10", "hits@10", 10, None), (" P@1 ", "p@1", 1, None), ("MRR@10", "mrr@10", 10, None),
     ("map", "map", None, None), ("nDCG@10", "ndcg@10", 10, None), ("ndcg", "ndcg", None, None),
     ("Recall@100", "recall@100", 100, None), ("R10@1", "r10@1", 1, 10),
     ("r100@1", "r100@1", 1, 100)],
)  # fmt: skip
def test_metric_names(name, canonical, k, n):
    metric = get_ranking_metric(name)
    assert (metric.name, metric.k, metric.n) == (canonical, k, n)
    assert repr(metric) == f"get_ranking_metric({canonical!r}, ties='expected', no_answer='skip')"
    again = pickle.loads(pickle.dumps(metric))
    scores = np.random.default_rng(0).integers(0, 5, size=(4, 100))
    gold = [[0], [1, 2], [50], [99, 3]]
    assert again(gold, scores) == metric(gold, scores)


@pytest.mark.parametrize(
    ("name", "error", "match"),
    [
        ("r@1/10", ValueError, r"unknown ranking metric 'r@1/10'.*write 'rN@K'"),
        ("precision@5", ValueError, r"valid names are 'hits@K', 'p@1', 'mrr', 'mrr@K', 'map'"),
        ("p@5", ValueError, "unknown ranking metric 'p@5'"),
        ("ndcg@0", ValueError, "'ndcg@0': k must be at least 1"),
        ("mrr@0", ValueError, "'mrr@0': k must be at least 1"),
        ("r0@1", ValueError, "'r0@1': N must be at least 1"),
        ("r2@5", ValueError, "'r2@5': K must be at most N"),
        ("r@1-of-10", ValueError, r"a scorer \(make_ranking_scorer\).*'r10@1'"),
        (10, TypeError, "name must be a str"),
    ],
)
def test_bad_metric_names_are_named(name, error, match):
    with pytest.raises(error, match=match):
        get_ranking_metric(name)


def test_bad_options_and_gold_are_named():
    s = [[0.1, 0.2, 0.3]]
    with pytest.raises(ValueError, match="no_answer must be one of"):
        get_ranking_metric("map", no_answer="zero")
    with pytest.raises(ValueError, match="ties must be one of"):
        mean_average_precision([[0]], s, ties="random")
    with pytest.raises(ValueError, match="a tie has none"):
        gold_ranks([0], s, ties="expected")
    with pytest.raises(ValueError, match=r"gains must be finite and non-negative; gold\[0\]\[1\]"):
        ndcg_at_k(np.array([[0.0, -1.0, 0.0]]), s)
    with pytest.raises(ValueError, match="gains must be finite"):
        ndcg_at_k(np.array([[0.0, np.nan, 1.0]]), s)
    with pytest.raises(ValueError, match=r"gold gain matrix must have the shape of scores"):
        ndcg_at_k(np.ones((1, 2)), s)
    with pytest.raises(TypeError, match=r"gold\[0\] must be a candidate index.*gold_indices"):
        mean_average_precision([["a"], "b"], [[0.1], [0.2]])
    with pytest.raises(TypeError, match=r"gold\[1\] is a str"):
        mean_average_precision([[0], "b"], [[0.1], [0.2]])
    with pytest.raises(TypeError, match=r"gold\[1\] must be a candidate index"):
        mean_average_precision([[0], [[0, 1]]], [[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match=r"gold\[0\]\[1\] = 3 is not a valid index"):
        mean_average_precision([[0, 3]], s)
    with pytest.raises(ValueError, match="'r5@1' needs the first 5 candidates"):
        get_ranking_metric("r5@1")([0], s)
    with pytest.raises(ValueError, match="map: no example has a right answer"):
        mean_average_precision([[], []], [[0.1], [0.2]])
    with pytest.raises(ValueError, match=r"'r10@1' takes the first 10 candidates .* 'r@1-of-10'"):
        make_ranking_scorer("r10@1")


def test_scorer_with_the_new_metrics_and_several_answers():
    est = fitted()
    X = [1, 3]
    # row 1 ranks where, api_call rome, ok, hello; row 3 ranks ok, where, api_call rome, hello
    y = [["hello", "api_call rome"], ("bye", "where")]
    assert make_ranking_scorer("map")(est, X, y) == pytest.approx(((1 / 2 + 2 / 4) / 2 + 1 / 4) / 2)
    assert make_ranking_scorer("recall@2")(est, X, y) == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert make_ranking_scorer("p@1")(est, X, [[], ["where"]]) == 0.0  # the empty one skipped
    no = make_ranking_scorer("mrr", no_answer="miss")
    assert no(est, X, [[], ["where"]]) == pytest.approx(1 / 4)


def test_graded_gold_as_mappings_with_right_answers_outside_the_candidates():
    # candidate 0 (gain 2) ranks first; a right answer of gain 3 was not retrieved (key -1)
    gold, scores = [{0: 2.0, 1: 0.0, -1: 3.0}], [[0.9, 0.1]]
    ideal = 3.0 + 2.0 / np.log2(3)  # gains 3 then 2
    assert ndcg_at_k(gold, scores, 2) == pytest.approx(2.0 / ideal)
    assert answer_recall_at_k(gold, scores, 1) == 0.5  # 1 of 2 right answers
    assert mean_average_precision(gold, scores) == 0.5  # (1/1 + 0) / 2
    assert hits_at_k(gold, scores) == 1.0
    assert hits_at_k([{1: 0.0}], scores, no_answer="miss") == 0.0  # judged, not right
    with pytest.raises(ValueError, match="no example has a right answer"):
        hits_at_k([{1: 0.0}], scores)
    with pytest.raises(ValueError, match=r"gold\[0\] maps 5, not a valid index into 2"):
        hits_at_k([{5: 1.0}], scores)
    with pytest.raises(ValueError, match=r"non-negative; gold\[0\]\[1\] = -1.0"):
        hits_at_k([{1: -1.0}], scores)
    with pytest.raises(TypeError, match=r"gold\[0\] must map candidate indices to gains"):
        hits_at_k([{"a": 1.0}], scores)
