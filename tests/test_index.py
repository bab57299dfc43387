"""The inverted index (retrieval/_index.py, _kernels.py): MaxScore's top k against a plain
numpy reference, the exhaustive kernel, every n_jobs; and the models that rank with it."""

import numpy as np
import pytest
import scipy.sparse as sp
from joblib import parallel_config

from irdialog import KBMemoryRetriever, TfidfRanker
from irdialog.base import _top_k, check_contexts
from irdialog.retrieval import InvertedIndex
from irdialog.retrieval._index import _QUERY_CHUNK, ALGORITHMS


def _reference_top_k(Q, D, k):
    """Plain numpy: every score, then the top k with ties to the lower index; documents of
    score 0 fill the list in index order (base._top_k does all of that)."""
    return _top_k(Q.toarray() @ D.toarray().T, k)


def _random_problem(seed, n_docs=60, n_terms=25, n_queries=40, integer=True):
    rng = np.random.default_rng(seed)

    def weights(n):  # small integers: many exact ties, and float sums with no rounding
        return rng.integers(1, 4, n).astype(float) if integer else rng.random(n) + 0.01

    D = sp.random(n_docs, n_terms, density=rng.uniform(0.05, 0.4), random_state=seed,
                  format="csr", data_rvs=weights)  # fmt: skip
    D = sp.vstack([D, D[:5], sp.csr_matrix((2, n_terms))]).tocsr()  # duplicates, empty docs
    Q = sp.random(n_queries, n_terms, density=rng.uniform(0.05, 0.5), random_state=seed + 1,
                  format="csr", data_rvs=weights)  # fmt: skip
    return Q, D


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("k", [1, 3, 10, 500])
def test_top_k_is_the_reference_top_k_with_ties_and_empty_rows(algorithm, seed, k):
    Q, D = _random_problem(seed)
    index = InvertedIndex.from_matrix(D)
    top, stats = index.top_k(Q, k, algorithm=algorithm, return_stats=True)
    k = min(k, D.shape[0])
    np.testing.assert_array_equal(top, _reference_top_k(Q, D, k))
    scores = Q.toarray() @ D.toarray().T
    np.testing.assert_array_equal(stats["n_positive"], np.minimum((scores > 0).sum(axis=1), k))
    assert (stats["scored"] <= stats["postings"]).all()


@pytest.mark.parametrize("seed", range(6))
def test_pruned_exhaustive_and_threaded_rankings_are_identical(seed):
    # Real-valued weights: ranking by the index's own scores, bit for bit.
    Q, D = _random_problem(seed, n_docs=300, n_terms=40, n_queries=2 * _QUERY_CHUNK + 7,
                           integer=False)  # fmt: skip
    index = InvertedIndex.from_matrix(D)
    expected = _top_k(index.scores(Q), 10)
    for algorithm in ALGORITHMS:
        for n_jobs in (1, 2, -1):
            top = index.top_k(Q, 10, algorithm=algorithm, n_jobs=n_jobs)
            np.testing.assert_array_equal(top, expected)


def test_indexing_leaves_the_callers_matrix_as_it_was():
    weights = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32))
    weights.data[0] = 0.0  # an explicit zero, which the index drops
    index = InvertedIndex.from_matrix(weights)
    assert weights.nnz == 2 and index.n_postings == 1


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_threads_stay_in_this_process_under_any_joblib_backend(backend):
    # Under parallel_config(backend="dask") a joblib Parallel ships each call to another
    # process, whose writes into the result never come back: the kernels must run on
    # threads of this process whatever backend is active (loky stands in for Dask here).
    Q, D = _random_problem(0, n_docs=300, n_terms=40, n_queries=2 * _QUERY_CHUNK + 7,
                           integer=False)  # fmt: skip
    index = InvertedIndex.from_matrix(D)
    expected = _top_k(index.scores(Q), 10)
    with parallel_config(backend=backend, n_jobs=2):
        for n_jobs in (None, 2):
            np.testing.assert_array_equal(index.top_k(Q, 10, n_jobs=n_jobs), expected)


@pytest.mark.parametrize("algorithm", ["auto", "maxscore"])
def test_pruning_reads_fewer_postings_than_exhaustive_scoring(algorithm):
    rng = np.random.default_rng(0)
    # A long list of a common, low-weight term and short lists of rare, heavy ones.
    n_docs = 5000
    common = sp.csr_matrix(np.ones((n_docs, 1)) * 0.1)
    rare = sp.random(n_docs, 30, density=0.01, random_state=0, format="csr",
                     data_rvs=lambda n: 1 + rng.random(n))  # fmt: skip
    index = InvertedIndex.from_matrix(sp.hstack([common, rare]).tocsr())
    Q = sp.csr_matrix(np.hstack([np.ones((20, 1)), rng.random((20, 30)) < 0.2]).astype(float))
    top, pruned = index.top_k(Q, 5, algorithm=algorithm, return_stats=True)
    _, full = index.top_k(Q, 5, algorithm="exhaustive", return_stats=True)
    np.testing.assert_array_equal(full["scored"], full["postings"])
    np.testing.assert_array_equal(pruned["postings"], full["postings"])
    assert pruned["scored"].sum() < 0.2 * full["scored"].sum()
    np.testing.assert_array_equal(top, _top_k(index.scores(Q), 5))


def test_index_refuses_bad_input_with_clear_errors():
    with pytest.raises(ValueError, match="non-negative"):
        InvertedIndex.from_matrix(sp.csr_matrix([[1.0, -1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        InvertedIndex.from_matrix(sp.csr_matrix([[1.0, np.nan]]))
    index = InvertedIndex.from_matrix(sp.csr_matrix([[1.0, 0.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="one column per indexed term"):
        index.top_k(sp.csr_matrix([[1.0, 0.0, 1.0]]), 1)
    with pytest.raises(ValueError, match="NaN"):
        index.top_k(sp.csr_matrix([[np.nan, 1.0]]), 1)
    with pytest.raises(ValueError, match="non-negative"):
        index.top_k(sp.csr_matrix([[-1.0, 1.0]]), 1)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        index.top_k(sp.csr_matrix([[1.0, 1.0]]), 0)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        index.top_k(sp.csr_matrix([[1.0, 1.0]]), 1, algorithm="wand")
    assert index.top_k(sp.csr_matrix((0, 2)), 3).shape == (0, 2)


def test_tfidf_rank_is_the_dense_rank_bit_for_bit():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    cands = [" ".join(rng.choice(words, rng.integers(1, 6))) for _ in range(300)]
    X = [" ".join(rng.choice([*words, "unknown"], rng.integers(0, 5))) for _ in range(200)]
    for sublinear in (False, True):
        model = TfidfRanker(candidates=cands, sublinear_tf=sublinear).fit(X[:20], cands[:20])
        scores = model.decision_function(X)
        for k in (1, 5, 10, len(model.candidates_) + 3):
            np.testing.assert_array_equal(model.rank(X, k), _top_k(scores, k))
            np.testing.assert_array_equal(
                model.rank(X * 6, k, n_jobs=2), np.vstack([_top_k(scores, k)] * 6)
            )


def test_tfidf_scores_are_the_cosine_to_float32_rounding():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(20)]
    cands = [" ".join(rng.choice(words, rng.integers(1, 6))) for _ in range(50)]
    X = [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(30)]
    model = TfidfRanker(candidates=cands).fit(X, cands[:30])
    A = model.vectorizer_.transform([x.split() for x in X]).toarray()
    C = model.candidate_tfidf_.toarray()
    cosine = (A @ C.T) / np.linalg.norm(A, axis=1)[:, None] / np.linalg.norm(C, axis=1)[None]
    np.testing.assert_allclose(model.decision_function(X), cosine, rtol=1e-6)


def test_tfidf_rank_of_a_context_with_no_known_word_is_the_first_candidates():
    model = TfidfRanker(candidates=["a b", "c", "d e"]).fit(["a"], ["c"])
    np.testing.assert_array_equal(model.rank(["", "zzz"], k=2), [[0, 1], [0, 1]])


def test_kb_retrieval_is_most_shared_first_then_file_order_capped():
    rng = np.random.default_rng(1)
    vocab = [f"t{i}" for i in range(30)]
    kb = [" ".join(rng.choice(vocab, rng.integers(1, 5), replace=False)) for _ in range(80)]
    queries = [" ".join(rng.choice(vocab, rng.integers(0, 6))) for _ in range(40)]
    retriever = KBMemoryRetriever(kb, max_memories=6, max_frequency=20).fit()
    frequent = {w for w in vocab if sum(w in s.split() for s in kb) > 20}
    for q, ids in zip(queries, retriever._retrieve(check_contexts(queries))):
        words = set(q.split()) - frequent
        shared = np.array([len(words & set(s.split())) for s in kb])
        order = sorted(np.flatnonzero(shared), key=lambda s: (-shared[s], s))[:6]
        np.testing.assert_array_equal(ids, sorted(order))


def test_auto_mixes_long_and_short_queries_and_stays_exact():
    from irdialog.retrieval._index import LONG_QUERY_TERMS

    rng = np.random.default_rng(7)
    n_terms = 3 * LONG_QUERY_TERMS
    D = sp.random(2000, n_terms, density=0.05, random_state=7, format="csr",
                  data_rvs=lambda n: rng.integers(1, 3, n).astype(float))  # fmt: skip
    long = (rng.random((30, n_terms)) < 0.6) * rng.integers(1, 3, (30, n_terms))
    short = (rng.random((30, n_terms)) < 0.05) * rng.integers(1, 3, (30, n_terms))
    Q = sp.csr_matrix(np.vstack([long, short]).astype(float))
    assert (np.diff(Q.indptr)[:30] > LONG_QUERY_TERMS).all()
    assert (np.diff(Q.indptr)[30:] <= LONG_QUERY_TERMS).all()
    index = InvertedIndex.from_matrix(D)
    for k in (1, 10, 50):
        np.testing.assert_array_equal(index.top_k(Q, k), _reference_top_k(Q, D, k))


@pytest.mark.parametrize("seed", range(3))
def test_scores_at_are_the_exhaustive_scores_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    D = sp.random(15, 9, density=0.4, random_state=rng, dtype=np.float32)  # 15 documents
    Q = sp.random(8, 9, density=0.3, random_state=rng) * 3
    index = InvertedIndex.from_matrix(D)
    docs = rng.integers(0, 15, size=(8, 6))
    reference = np.take_along_axis(index.scores(Q), docs, axis=1)  # numpy's product
    np.testing.assert_array_equal(index.scores_at(Q, docs), reference)
    dense = Q.toarray() @ D.toarray().astype(np.float64).T  # plain numpy
    np.testing.assert_allclose(index.scores_at(Q, docs), np.take_along_axis(dense, docs, 1))
    top = index.top_k(Q, 4)
    np.testing.assert_array_equal(
        index.scores_at(Q, top), np.take_along_axis(index.scores(Q), top, axis=1)
    )
    with pytest.raises(ValueError, match="one row per query"):
        index.scores_at(Q, docs[:3])
    with pytest.raises(ValueError, match=r"in \[0, 15\)"):
        index.scores_at(Q, docs + 15)
