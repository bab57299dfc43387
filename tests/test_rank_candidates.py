"""rank_candidates by gathers (``RankerMixin._pair_scorer``): each distinct context and text
encoded once, every pair equal to the pair path (``_score_pairs``) bit for bit."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import TINY_KB, make_tiny_dialogs

import irdialog.base
from irdialog import (
    BM25Ranker,
    DualEncoderRanker,
    MatchTypeFeaturizer,
    MemN2NRanker,
    QRNRanker,
    RecurrentReader,
    SupervisedEmbeddingRanker,
    TfidfRanker,
)
from irdialog.base import Context, inner_product_pairs
from irdialog.pipeline import make_ranking_pipeline
from irdialog.retrieval._kernels import Queries, pair_products
from irdialog.retrieval._pairs import SparsePairs

EMBED = dict(epochs=3, random_state=0)
MODELS = {
    "tfidf": lambda: TfidfRanker(),
    "tfidf-query-sublinear": lambda: TfidfRanker(use_history=False, sublinear_tf=True),
    "tfidf-char-bigrams": lambda: TfidfRanker(tokenizer="char", ngram_range=(1, 2)),
    "bm25": lambda: BM25Ranker(),
    "bm25+": lambda: BM25Ranker(method="bm25+", ngram_range=(1, 2)),
    "bm25l-char": lambda: BM25Ranker(method="bm25l", tokenizer="char"),
    "se": lambda: SupervisedEmbeddingRanker(embedding_dim=8, n_negatives=5, **EMBED),
    "memn2n": lambda: MemN2NRanker(hops=2, embedding_dim=16, batch_size=4, **EMBED),
    "gmemn2n": lambda: MemN2NRanker(gate="global", hops=2, embedding_dim=16, batch_size=4, **EMBED),
}


def _random_lists(texts, n, rng, max_len=9):
    """n lists of unequal lengths drawn with repeats from texts."""
    return [list(rng.choice(np.asarray(texts, dtype=object), rng.integers(1, max_len + 1)))
            for _ in range(n)]  # fmt: skip


def _pair_path(model, X, lists):
    """rank_candidates as the pair path computes it: every pair through _score_pairs."""
    X = [Context(query=x) if isinstance(x, str) else x for x in X]
    contexts = [X[i] for i, cands in enumerate(lists) for _ in cands]
    flat = np.asarray([c for cands in lists for c in cands], dtype=object)
    scores = model._score_pairs(contexts, flat)
    out = np.full((len(lists), max(map(len, lists))), -np.inf)
    for i, cands in enumerate(lists):
        out[i, : len(cands)], scores = scores[: len(cands)], scores[len(cands) :]
    return out


def _workload(seed=0):
    X, y, _ = make_tiny_dialogs()
    rng = np.random.default_rng(seed)
    texts = list(dict.fromkeys(y)) + [
        "",  # empty
        "zzz qqq never seen",  # out of the vocabulary
        "paris paris rome where should it be",  # repeated words
        "API_CALL Paris!",  # case and punctuation
    ]
    contexts = X + [Context(query=""), Context(query="unknown words only"), X[3]]
    return X, y, contexts, _random_lists(texts, len(contexts), rng)


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = make_tiny_dialogs()
    return {name: make().fit(X, y) for name, make in MODELS.items()}


@pytest.mark.parametrize("name", list(MODELS))
def test_gathered_scores_equal_the_pair_path(fitted, name):
    model = fitted[name]
    X, _, contexts, lists = _workload()
    assert model._pair_scorer(contexts, np.asarray(["a b"], dtype=object)) is not None
    fast = model.rank_candidates(contexts, lists)
    np.testing.assert_array_equal(fast, _pair_path(model, contexts, lists))
    # the fixtures: every context against every candidate, as decision_function ranks them
    full = model.rank_candidates(X, [list(model.candidates_)] * len(X))
    np.testing.assert_array_equal(full, _pair_path(model, X, [list(model.candidates_)] * len(X)))
    np.testing.assert_array_equal(
        np.argsort(-full, axis=1, kind="stable"),
        np.argsort(-model.decision_function(X), axis=1, kind="stable"),
    )


@pytest.mark.parametrize("name", ["tfidf", "bm25+", "se", "memn2n"])
def test_groups_and_blocks_do_not_change_the_scores(fitted, name, monkeypatch):
    model = fitted[name]
    _, _, contexts, lists = _workload(seed=1)
    whole = model.rank_candidates(contexts, lists)
    # a group per list or two, blocks of three pairs: the same scores
    monkeypatch.setattr(irdialog.base, "LIST_GROUP_PAIRS", 4)
    monkeypatch.setattr(irdialog.base, "PAIR_BLOCK", 3)
    np.testing.assert_array_equal(model.rank_candidates(contexts, lists), whole)


@pytest.mark.parametrize(
    "ranker",
    [
        TfidfRanker(),
        BM25Ranker(),
        SupervisedEmbeddingRanker(embedding_dim=8, match_type="match", **EMBED),
        MemN2NRanker(embedding_dim=8, **EMBED),
    ],
)
def test_match_types_keep_the_pair_path(ranker, monkeypatch):
    X, y, _ = make_tiny_dialogs()
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), ranker).fit(X, y)
    model, feats = pipe[-1], pipe[0].transform(X)
    assert model._pair_scorer(feats, np.asarray(["a"], dtype=object)) is None
    lists = _random_lists(
        list(model.candidates_) + ["api_call tokyo"], len(X), np.random.default_rng(2)
    )
    scores = model.rank_candidates(feats, lists)
    np.testing.assert_array_equal(scores, _pair_path(model, feats, lists))


def test_bm25_builds_the_candidates_rows_once_a_call_uses_half_of_them():
    # answer-selection pools draw most, not all, of the collection's answers
    X, y, _ = make_tiny_dialogs()
    model = BM25Ranker().fit(X, y)
    half = [list(model.candidates_)[:5]] * len(X)  # 5 of the 9 candidates
    np.testing.assert_array_equal(model.rank_candidates(X, half), _pair_path(model, X, half))
    assert "_candidate_term_rows" in vars(model)


def test_bm25_keeps_the_candidates_rows_until_it_is_fitted_again():
    X, y, _ = make_tiny_dialogs()
    model = BM25Ranker().fit(X, y)
    cands = list(model.candidates_)
    few = [cands[:2] + ["a text not among them"]] * 2
    model.rank_candidates(X[:2], few)  # fewer texts than candidates: each encoded
    assert "_candidate_term_rows" not in vars(model)
    every = [cands + ["a text not among them"]] * len(X)
    np.testing.assert_array_equal(model.rank_candidates(X, every), _pair_path(model, X, every))
    assert "_candidate_term_rows" in vars(model)
    # now gathered, also for few texts
    np.testing.assert_array_equal(model.rank_candidates(X[:2], few), _pair_path(model, X[:2], few))
    # a pickle leaves them out; the copy builds its own and scores the same
    copy = pickle.loads(pickle.dumps(model))
    assert "_candidate_term_rows" in vars(model) and "_candidate_term_rows" not in vars(copy)
    np.testing.assert_array_equal(copy.rank_candidates(X, every), model.rank_candidates(X, every))
    # a new fit (other statistics, other term scores) drops the old rows
    model.set_params(k1=0.3, b=0.1).fit(X[:4], y[:4])
    assert "_candidate_term_rows" not in vars(model)
    model.rank_candidates(X, every)
    np.testing.assert_array_equal(model.rank_candidates(X, every), _pair_path(model, X, every))
    streamed = BM25Ranker(candidates=cands).partial_fit(X, y)
    streamed.rank_candidates(X, every)
    streamed.partial_fit(X[:3], y[:3])
    np.testing.assert_array_equal(
        streamed.rank_candidates(X, every), _pair_path(streamed, X, every)
    )


def test_input_errors_are_unchanged(fitted):
    model = fitted["tfidf"]
    with pytest.raises(ValueError, match="X has 2 contexts but candidate_lists has 1 lists"):
        model.rank_candidates(["a", "b"], [["x"]])
    with pytest.raises(TypeError, match=r"candidate_lists\[1\] must be a sequence of str"):
        model.rank_candidates(["a", "b"], [["x"], "x y"])
    with pytest.raises(ValueError, match=r"candidate_lists\[1\] is empty"):
        model.rank_candidates(["a", "b"], [["x"], []])
    with pytest.raises(TypeError, match=r"candidate_lists\[1\] must be a str"):
        model.rank_candidates(["a"], [["x", 3]])


def test_inner_product_pairs_equals_einsum_of_the_pairs():
    rng = np.random.default_rng(0)
    U, V = rng.normal(size=(4, 7)).astype(np.float32), rng.normal(size=(6, 7))
    rows, cols = rng.integers(0, 4, 20), rng.integers(0, 6, 20)
    want = np.einsum("ij,ij->i", U[rows].astype(np.float64), V[cols]) + 0.5
    np.testing.assert_array_equal(inner_product_pairs(U, V, 0.5)(rows, cols), want)


# -- the kernel against its numpy reference ---------------------------------------------------


def _random_csr(rng, n_rows, n_terms, density, dtype=np.float64):
    m = sp.random(n_rows, n_terms, density=density, format="csr", random_state=rng, dtype=dtype)
    m.data = np.round(m.data * 8, 1) + 0.1  # repeated values; no zero
    return m


def _reference_pair_products(Q, D, rows, cols):
    """The data and row lengths of scipy's ``Q[rows].multiply(D[cols])``."""
    prod = sp.csr_matrix(Q[rows]).multiply(sp.csr_matrix(D[cols])).tocsr()
    return prod.data, np.diff(prod.indptr)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("compiled", [True, False])
def test_pair_products_equal_the_numpy_reference(seed, compiled):
    rng = np.random.default_rng(seed)
    n_terms = int(rng.integers(5, 40))
    Q = _random_csr(rng, int(rng.integers(5, 20)), n_terms, 0.4)
    D = _random_csr(rng, int(rng.integers(5, 20)), n_terms, 0.5)
    D.data[D.indptr[1] : D.indptr[2]] = 0  # an empty document
    D.eliminate_zeros()
    rows = np.sort(rng.integers(0, Q.shape[0], 60))
    cols = rng.integers(0, D.shape[0], 60)
    q = Queries(Q.indptr.astype(np.int64), Q.indices, Q.data)
    d = Queries(D.indptr.astype(np.int64), D.indices, D.data)
    dense = np.zeros(n_terms)
    counts = np.empty(len(rows), dtype=np.int64)
    out = np.empty(len(rows) * n_terms)
    kernel = pair_products if compiled else pair_products.py_func
    n = kernel(q, d, rows, cols, dense, counts, out)
    data, lengths = _reference_pair_products(Q, D, rows, cols)
    np.testing.assert_array_equal(counts, lengths)
    np.testing.assert_array_equal(out[:n], data)
    assert not dense.any()  # the scratch is left clean


@pytest.mark.parametrize("seed", range(5))
def test_sparse_pair_dots_equal_scipy_sums(seed):
    rng = np.random.default_rng(seed)
    # long rows: sums of 8 products and more, where numpy's pairwise summation groups them
    Q = _random_csr(rng, 6, 60, 0.6)
    D = _random_csr(rng, 9, 60, 0.7, dtype=np.float32)
    rows = np.repeat(np.arange(6), 7)
    cols = rng.integers(0, 9, len(rows))
    want = np.asarray(Q[rows].multiply(D[cols]).sum(axis=1)).ravel()
    np.testing.assert_array_equal(SparsePairs(Q, D).dots(rows, cols), want)
    # rows not grouped by query: still right, at one scatter per change
    perm = rng.permutation(len(rows))
    np.testing.assert_array_equal(SparsePairs(Q, D).dots(rows[perm], cols[perm]), want[perm])


@pytest.mark.parametrize(
    "make",
    [
        lambda: QRNRanker(embedding_dim=8, batch_size=4, epochs=1, random_state=0),
        lambda: DualEncoderRanker(hidden_size=8, embedding_dim=4, epochs=1, random_state=0),
        lambda: RecurrentReader(hidden_size=8, embedding_dim=4, epochs=1, random_state=0),
    ],
)
def test_models_whose_encoding_depends_on_the_batch_keep_the_pair_path(make):
    # Their states of a context change in the last bits with the contexts encoded beside
    # it, so gathering states encoded once would not give the pair path's scores.
    X, y, _ = make_tiny_dialogs()
    model = make().fit(X, y)
    assert model._pair_scorer(X, np.asarray(["a"], dtype=object)) is None
