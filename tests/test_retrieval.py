import numpy as np
import pytest
from conformance import RankerConformance
from conftest import TINY_KB, make_tiny_dialogs
from sklearn.pipeline import make_pipeline

from irdialog import MatchTypeFeaturizer, NearestNeighborRanker, TfidfRanker
from irdialog.base import Context, Turn


class TestTfidfConformance(RankerConformance):
    param_grid = {"use_history": [True, False]}

    def make_estimator(self):
        return TfidfRanker()


class TestNearestNeighborConformance(RankerConformance):
    param_grid = {"similarity": ["overlap", "jaccard"]}

    def make_estimator(self):
        return NearestNeighborRanker()


def test_tfidf_matches_dense_cosine():
    from sklearn.feature_extraction.text import TfidfVectorizer

    X, y, _ = make_tiny_dialogs()
    model = TfidfRanker(use_history=False).fit(X, y)
    vec = model.vectorizer_
    q = vec.transform([x.query.lower().split() for x in X]).toarray()
    c = vec.transform([r.split() for r in model.candidates_]).toarray()
    qn, cn = np.linalg.norm(q, axis=1), np.linalg.norm(c, axis=1)
    expected = np.divide(
        q @ c.T, np.outer(qn, cn), out=np.zeros((len(q), len(c))), where=np.outer(qn, cn) > 0
    )
    np.testing.assert_allclose(model.decision_function(X), expected, atol=1e-12)
    assert isinstance(vec, TfidfVectorizer)


def test_tfidf_match_type_prefers_candidate_with_the_mentioned_oov_entity():
    X, y, _ = make_tiny_dialogs()
    kb = dict(TINY_KB, tokyo="R_location")  # tokyo never occurs in training
    cands = sorted(set(y)) + ["api_call tokyo"]
    plain = TfidfRanker(candidates=cands).fit(X, y)
    typed = make_pipeline(MatchTypeFeaturizer(kb), TfidfRanker(candidates=cands)).fit(X, y)
    ctx = [Context(history=(Turn("user", "in tokyo please"),), query="<SILENCE>")]
    j = cands.index("api_call tokyo")
    base = plain.decision_function(ctx)[0]
    with_type = typed.decision_function(ctx)[0]
    assert with_type[j] > base[j]
    assert typed.predict(ctx)[0] == "api_call tokyo"


def test_tfidf_pairs_with_match_type_equal_full_scores():
    X, y, _ = make_tiny_dialogs()
    pipe = make_pipeline(MatchTypeFeaturizer(TINY_KB), TfidfRanker()).fit(X, y)
    feats, model = pipe[0].transform(X), pipe[-1]
    lists = [list(model.candidates_)] * len(X)
    np.testing.assert_allclose(model.rank_candidates(feats, lists), model.decision_function(feats))


def test_nearest_neighbor_orders_responses_of_one_input_by_count():
    X = ["hello", "hello", "hello", "book a table"]
    y = ["hi", "hi", "good day", "where"]
    model = NearestNeighborRanker().fit(X, y)
    ranked = model.candidates_[model.rank(["hello"], k=3)[0]]
    assert list(ranked) == ["hi", "good day", "where"]


def test_nearest_neighbor_unseen_candidate_scores_lowest():
    model = NearestNeighborRanker(candidates=["hi", "never said"]).fit(["hello"], ["hi"])
    scores = model.decision_function(["hello"])[0]
    assert scores[1] == -1.0 and scores[0] > scores[1]


def test_nearest_neighbor_matches_brute_force():
    rng = np.random.default_rng(0)
    words = list("abcdefgh")
    X = [" ".join(rng.choice(words, size=rng.integers(1, 5))) for _ in range(30)]
    y = [f"r{rng.integers(0, 6)}" for _ in range(30)]
    test = [" ".join(rng.choice(words, size=rng.integers(0, 4))) for _ in range(10)]
    for similarity in ["overlap", "jaccard"]:
        model = NearestNeighborRanker(similarity=similarity).fit(X, y)
        counts = {}
        for x, r in zip(X, y):
            counts[(frozenset(x.split()), r)] = counts.get((frozenset(x.split()), r), 0) + 1
        top = max(counts.values())
        for t in test:
            q = set(t.split())
            for j, c in enumerate(model.candidates_):
                best = -1.0
                for (u, r), n in counts.items():
                    if r == c:
                        inter = len(q & u)
                        union = len(q | u)
                        sim = (
                            inter if similarity == "overlap" else (inter / union if union else 0.0)
                        )
                        best = max(best, sim + n / (top + 1))
                assert model.decision_function([t])[0, j] == pytest.approx(best)


def test_streamed_tfidf_without_candidates_says_to_use_rank_candidates():
    X, y, _ = make_tiny_dialogs()
    model = TfidfRanker().partial_fit(X, y)
    for method in (model.decision_function, model.predict):
        with pytest.raises(ValueError, match="rank_candidates"):
            method(X)
    assert model.rank_candidates(X[:1], [["hello", "bye"]]).shape == (1, 2)


def test_rank_candidates_rejects_a_str_candidate_list():
    X, y, _ = make_tiny_dialogs()
    model = TfidfRanker().fit(X, y)
    # A str would be scored as its characters, one candidate each.
    with pytest.raises(TypeError, match=r"candidate_lists\[1\] must be a sequence of str"):
        model.rank_candidates(X[:2], [["hello"], "hello bye"])
    with pytest.raises(TypeError, match=r"candidate_lists\[0\].*single str"):
        model.rank_candidates(X[:1], ["b c"])
