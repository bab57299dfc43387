import numpy as np
import pytest
from conformance import RankerConformance
from conftest import make_tiny_dialogs
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from irdialog import (
    BM25Ranker,
    FusionRanker,
    LearningToRankRanker,
    NearestNeighborRanker,
    SeedEnsembleRanker,
    SupervisedEmbeddingRanker,
    TfidfRanker,
)
from irdialog.bench import reseed
from irdialog.ensemble import _features as features
from irdialog.ensemble._features import FEATURE_NAMES, LexicalFeatures
from irdialog.ensemble._pools import Pools, ranker_scores
from irdialog.features import MatchTypeFeaturizer
from irdialog.pipeline import make_ranking_pipeline


class TestFusionConformance(RankerConformance):
    param_grid = {"method": ["rrf", "linear"]}

    def make_estimator(self):
        return FusionRanker([("tfidf", TfidfRanker()), ("nn", NearestNeighborRanker())])


class TestLearningToRankConformance(RankerConformance):
    param_grid = {"num_leaves": [3, 7]}
    fit_runs_on_threads = True

    def make_estimator(self):
        return LearningToRankRanker(
            [("tfidf", TfidfRanker())], n_estimators=8, min_child_samples=2, random_state=0
        )


class TestSeedEnsembleConformance(RankerConformance):
    param_grid = {"method": ["linear", "rrf"]}

    def make_estimator(self):
        member = SupervisedEmbeddingRanker(embedding_dim=8, epochs=2)
        return SeedEnsembleRanker(member, n_seeds=2, random_state=0)


# -- a tiny answer-selection corpus: each question's pool shares its words -------------------

TOPICS = ["renew policy", "life insurance", "car accident", "home flood", "health plan"]


def _answer_selection(n_questions=60, seed=0):
    """Questions whose right answer is a long text sharing one word with them, among wrong
    answers that repeat their words: BM25 prefers the wrong ones, the answers' lengths
    tell them apart."""
    rng = np.random.default_rng(seed)
    X, right, pools = [], [], []
    for i in range(n_questions):
        topic = TOPICS[i % len(TOPICS)]
        X.append(f"what about {topic}")
        filler = " ".join(f"w{j}" for j in rng.integers(0, 500, 12))
        answer = f"{topic.split()[1]} {filler} {i}"
        wrong = [f"what about {topic} x{rng.integers(1000)}" for _ in range(6)]
        right.append([answer])
        pools.append(wrong[:3] + [answer] + wrong[3:])
    return X, right, pools


def test_pools_flatten_lists_and_share_texts():
    pools = Pools.from_lists(["a", "b"], [["x", "y", "x"], ["y"]])
    assert pools.owner.tolist() == [0, 0, 0, 1]
    assert pools.doc.tolist() == [0, 1, 0, 1]
    assert pools.texts.tolist() == ["x", "y"]
    v = np.array([1.0, 3.0, 2.0, 5.0])
    assert pools.group_max(v).tolist() == [3.0, 3.0, 3.0, 5.0]
    assert pools.group_mean(v).tolist() == [2.0, 2.0, 2.0, 5.0]
    m = pools.as_matrix(v)
    assert m.shape == (2, 3) and np.isneginf(m[1, 1:]).all()
    with pytest.raises(ValueError, match=r"candidate_lists\[1\] is empty"):
        Pools.from_lists(["a", "b"], [["x"], []])
    with pytest.raises(TypeError, match="single str"):
        Pools.from_lists(["a"], ["xy"])


def test_lexical_features_match_hand_computed_values():
    docs = ["you renew it online", "life insurance pays", "renew renew now"]
    f = LexicalFeatures().fit(docs)
    F = f.transform(Pools.from_lists(["Renew it, online?"], [docs]))
    col = {n: F[:, j] for j, n in enumerate(FEATURE_NAMES)}
    assert col["word_overlap"].tolist() == [3.0, 0.0, 1.0]
    assert col["bigram_overlap"].tolist() == [2.0, 0.0, 0.0]  # "renew it", "it online"
    assert col["question_length"].tolist() == [3.0] * 3  # punctuation dropped
    assert col["answer_length"].tolist() == [4.0, 3.0, 3.0]
    n, df = 3, {"renew": 2, "it": 1, "online": 1}
    idf = {w: np.log1p((n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    np.testing.assert_allclose(col["idf_overlap"][0], sum(idf.values()))
    np.testing.assert_allclose(col["idf_coverage"][2], idf["renew"] / sum(idf.values()))
    # BM25 of the first document: each word once, length 4, average length 10 / 3
    norm = 1.5 * (0.25 + 0.75 * 4 / (10 / 3))
    np.testing.assert_allclose(col["bm25"][0], sum(v / (norm + 1) for v in idf.values()))
    assert col["bm25"][1] == 0.0 and col["tfidf_cosine"][1] == 0.0


def test_lexical_features_pair_dots_equal_gathered_rows_and_dense_rows():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    docs = [" ".join(rng.choice(words, size=rng.integers(1, 12))) for _ in range(40)]
    questions = [" ".join(rng.choice(words, size=4)) for _ in range(7)]
    pools = Pools.from_lists(questions, [list(rng.choice(docs, size=9)) for _ in questions])
    f = LexicalFeatures().fit(docs)
    Q = features._bags(questions, f._analyzers()[0], f.vocabulary_)
    A = features._bags(pools.texts, f._analyzers()[0], f.vocabulary_)
    A.data *= rng.random(A.nnz)  # weights whose sums depend on their order
    q, a = pools.owner, pools.doc
    dots = features._row_dot(Q, q, A, a)
    gathered = np.asarray(Q[q].multiply(A[a]).sum(axis=1)).ravel()
    np.testing.assert_array_equal(dots, gathered)
    np.testing.assert_allclose(dots, (Q.toarray()[q] * A.toarray()[a]).sum(axis=1))


def test_ranker_scores_of_an_embedding_model_equal_its_rank_candidates():
    X, y, _ = make_tiny_dialogs()
    se = SupervisedEmbeddingRanker(epochs=2, random_state=0).fit(X, y)
    lists = [list(se.candidates_[:4]), [y[0], "an unseen reply"]] * 3
    pools = Pools.from_lists(X[:6], lists)
    np.testing.assert_allclose(
        pools.as_matrix(ranker_scores(se, pools)), se.rank_candidates(X[:6], lists), rtol=1e-6
    )


def test_rrf_by_hand():
    X, y, _ = make_tiny_dialogs()
    fusion = FusionRanker([("tfidf", TfidfRanker()), ("bm25", BM25Ranker())], weights=[1, 2])
    fusion.fit(X, y)
    lists = [list(fusion.candidates_)] * 3
    a = fusion.rankers_[0][1].rank_candidates(X[:3], lists)
    b = fusion.rankers_[1][1].rank_candidates(X[:3], lists)
    from scipy.stats import rankdata

    expected = 1 / (60 + rankdata(-a, axis=1)) + 2 / (60 + rankdata(-b, axis=1))
    np.testing.assert_allclose(fusion.rank_candidates(X[:3], lists), expected)


def test_linear_fusion_of_one_ranker_keeps_its_order():
    X, y, _ = make_tiny_dialogs()
    tfidf = TfidfRanker().fit(X, y)
    fusion = FusionRanker([("tfidf", TfidfRanker())], method="linear").fit(X, y)
    np.testing.assert_array_equal(fusion.rank(X, k=3), tfidf.rank(X, k=3))


def test_fusion_tunes_inner_parameters_by_grid_search():
    X, y, groups = make_tiny_dialogs()
    fusion = FusionRanker([("bm25", BM25Ranker()), ("tfidf", TfidfRanker())])
    assert fusion.get_params()["bm25__k1"] == 1.5
    search = GridSearchCV(fusion, {"bm25__k1": [0.5, 1.5], "weights": [None, [1, 3]]}, cv=2)
    search.fit(X, y)
    assert set(search.best_params_) == {"bm25__k1", "weights"}
    with pytest.raises(ValueError, match="weights has 1 entries for 2 rankers"):
        FusionRanker([("bm25", BM25Ranker()), ("tfidf", TfidfRanker())], weights=[1]).fit(X, y)


def test_learning_to_rank_learns_what_bm25_misses():
    X, right, pools = _answer_selection()
    bm25 = BM25Ranker(candidates=[c for p in pools for c in p]).fit(X, [r[0] for r in right])
    test_X, test_pools = X[40:], pools[40:]
    bm25_hits = np.mean(bm25.rank_candidates(test_X, test_pools).argmax(axis=1) == 3)
    ltr = LearningToRankRanker(n_estimators=30, min_child_samples=5, random_state=0)
    ltr.fit(X[:40], right[:40], candidate_lists=pools[:40])
    hits = np.mean(ltr.rank_candidates(test_X, test_pools).argmax(axis=1) == 3)
    assert bm25_hits == 0.0 and hits == 1.0
    assert len(ltr.feature_names_) == len(FEATURE_NAMES) + 2 * 4


def test_learning_to_rank_takes_several_right_answers_and_caps_negatives():
    X, right, pools = _answer_selection(30)
    right = [r + [p[0]] for r, p in zip(right, pools)]  # a second right answer
    ltr = LearningToRankRanker(n_estimators=5, min_child_samples=2, max_negatives=2)
    ltr.fit(X, right, candidate_lists=pools)
    assert set(ltr.candidates_) == {a for r in right for a in r}
    with pytest.raises(ValueError, match=r"y\[0\] is an empty list"):
        LearningToRankRanker().fit(X[:2], [[], ["a"]])
    with pytest.raises(TypeError, match=r"y\[1\]\[0\] must be a str"):
        LearningToRankRanker().fit(X[:2], [["a"], [3]])


class _RecordingRanker(TfidfRanker):
    """TF-IDF whose fit records the negatives it is given."""

    calls: list = []

    def fit(self, X, y, negative_lists=None):
        _RecordingRanker.calls.append((len(X), negative_lists))
        return super().fit(X, y)


def test_rankers_get_their_pairs_negatives_and_cross_fitted_scores():
    X, right, pools = _answer_selection(12)
    _RecordingRanker.calls = []
    ltr = LearningToRankRanker(
        [("rec", _RecordingRanker())], cv=3, n_estimators=5, min_child_samples=2, random_state=0
    )
    ltr.fit(X, right, candidate_lists=pools)
    sizes = [n for n, _ in _RecordingRanker.calls]
    assert sizes == [12, 8, 8, 8]  # the final ranker, then one per fold
    negatives = _RecordingRanker.calls[0][1]
    assert negatives[0] == [c for c in pools[0] if c != right[0][0]]
    # the cross-fitted scores of the training lists are not the final ranker's
    pools_ = Pools.from_lists(X, pools)
    crossed = ltr._cross_fitted_scores(pools_, [tuple(r) for r in right], pools)[0]
    assert not np.allclose(crossed, ranker_scores(ltr.rankers_[0][1], pools_))


def test_a_pipeline_ending_in_a_ranker_that_takes_negatives_gets_them():
    X, right, pools = _answer_selection(12)
    _RecordingRanker.calls = []
    pipeline = make_ranking_pipeline(MatchTypeFeaturizer({"policy": "thing"}), _RecordingRanker())
    fusion = FusionRanker([("piped", pipeline)], method="linear")
    fusion.fit(X, right, candidate_lists=pools)
    [(n, negatives)] = _RecordingRanker.calls
    assert n == 12 and negatives[0] == [c for c in pools[0] if c != right[0][0]]
    # and its scores are its own, through its transforms
    piped = fusion.rankers_[0][1].rank_candidates(X[:3], pools[:3])
    fused = fusion.rank_candidates(X[:3], pools[:3])
    for p, f in zip(piped, fused):
        p, f = p[np.isfinite(p)], f[np.isfinite(f)]
        np.testing.assert_allclose(f, (p - p.mean()) / p.std())


def test_a_ranker_over_rankers_inside_another_gets_the_lists_and_hands_on_negatives():
    X, right, pools = _answer_selection(12)
    _RecordingRanker.calls = []
    inner = FusionRanker([("rec", _RecordingRanker())])
    ltr = LearningToRankRanker(
        [("inner", inner)], cv=3, n_estimators=5, min_child_samples=2, random_state=0
    )
    ltr.fit(X, right, candidate_lists=pools)
    assert [n for n, _ in _RecordingRanker.calls] == [12, 8, 8, 8]
    negatives = _RecordingRanker.calls[0][1]
    assert negatives[0] == [c for c in pools[0] if c != right[0][0]]


@pytest.mark.slow
def test_learning_to_rank_beats_bm25_on_insuranceqa(data_home):
    """On 500 validation pools, after training on 3,000 questions' pools (about a minute)."""
    if not (data_home / "insuranceqa-en").is_dir():
        pytest.skip("insuranceqa-en not found")
    from conftest import import_benchmark

    bench = import_benchmark("insuranceqa_rankers")
    corpus, train, valid = bench.read_insuranceqa(data_home)
    train = {k: v[:3000] for k, v in train.items()}
    valid = {k: v[:500] for k, v in valid.items()}
    n_right = [len(r) for r in valid["right"]]
    X_pairs = [x for x, r in zip(train["X"], train["right"]) for _ in r]
    bm25 = BM25Ranker(candidates=corpus)
    bm25.fit(X_pairs, [a for r in train["right"] for a in r])
    base = bench.pool_metrics(bm25.rank_candidates(valid["X"], valid["pools"]), n_right)
    ltr = LearningToRankRanker(max_negatives=50, random_state=0)
    ltr.fit(train["X"], train["right"], candidate_lists=train["pools"])
    learned = bench.pool_metrics(ltr.rank_candidates(valid["X"], valid["pools"]), n_right)
    assert learned["P@1"] > base["P@1"] + 5 and learned["MRR"] > base["MRR"] + 5


def test_without_lightgbm_the_error_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "lightgbm", None)  # import lightgbm raises
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ImportError, match=r"irdialog\[ltr\]"):
        LearningToRankRanker().fit(X, y)


def test_seed_ensemble_members_are_the_ranker_at_their_seeds_and_fused_linearly():
    X, right, pools = _answer_selection(12)
    member = make_ranking_pipeline(
        MatchTypeFeaturizer({"policy": "thing"}),
        SupervisedEmbeddingRanker(embedding_dim=8, epochs=3, match_type="match"),
    )
    model = SeedEnsembleRanker(member, n_seeds=3, random_state=5)
    model.fit(X, right, candidate_lists=pools)
    assert len(set(model.seeds_)) == 3
    lists = pools[:4]
    alone = []
    for seed, fitted in zip(model.seeds_, model.estimators_):
        negatives = [[c for c in p if c not in r] for r, p in zip(right, pools)]
        by_hand = reseed(member, seed).fit(
            X, [r[0] for r in right], supervisedembeddingranker__negative_lists=negatives
        )
        scores = by_hand.rank_candidates(X[:4], lists)
        np.testing.assert_array_equal(fitted.rank_candidates(X[:4], lists), scores)
        alone.append((scores - scores.mean(1, keepdims=True)) / scores.std(1, keepdims=True))
    np.testing.assert_allclose(model.rank_candidates(X[:4], lists), sum(alone))


def test_seed_ensemble_draws_new_members_for_each_seed_of_a_suite_run():
    X, y, _ = make_tiny_dialogs()
    model = SeedEnsembleRanker(SupervisedEmbeddingRanker(embedding_dim=8, epochs=2), n_seeds=2)
    # the harness sets every random_state, the members' among them, to the run's seed
    a, b = (reseed(clone(model), seed).fit(X, y) for seed in (0, 1))
    assert not set(a.seeds_) & set(b.seeds_)
    members = [m.get_params()["random_state"] for m in a.estimators_]
    assert members == list(a.seeds_)


def test_seed_ensemble_refuses_a_ranker_without_a_seed():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="TfidfRanker has no random_state parameter"):
        SeedEnsembleRanker(TfidfRanker()).fit(X, y)
    with pytest.raises(ValueError, match="'n_seeds' parameter"):
        SeedEnsembleRanker(SupervisedEmbeddingRanker(), n_seeds=0).fit(X, y)
