"""The inverted-index top k (retrieval/_kernels.py) against the dense numpy path."""

import numpy as np
import pytest
import scipy.sparse as sp

from irdialog import KBMemoryRetriever, TfidfRanker
from irdialog.base import _top_k, check_contexts
from irdialog.retrieval._kernels import postings_top_k


def _dense_reference(Q, D):
    """Cosine scores of every query with every document, 0 where a norm is 0, and the top k
    of base._top_k (ties to the lower index): what the kernel must reproduce."""
    num = (Q @ D.T).toarray()
    den = np.sqrt(Q.multiply(Q).sum(axis=1)).A * np.sqrt(D.multiply(D).sum(axis=1)).A.T
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _run_kernel(Q, D, k):
    P = D.T.tocsr()
    q_norms = np.sqrt(np.asarray(Q.multiply(Q).sum(axis=1)).ravel())
    d_norms = np.sqrt(np.asarray(D.multiply(D).sum(axis=1)).ravel())
    out = np.empty((Q.shape[0], k), dtype=np.int64)
    n = np.empty(Q.shape[0], dtype=np.int64)
    postings_top_k(Q.indptr, Q.indices, Q.data, q_norms, P.indptr, P.indices, P.data, d_norms,
                   k, out, n)  # fmt: skip
    return out, n


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 2, 7, 40])
def test_kernel_matches_dense_top_k_with_ties_and_empty_rows(seed, k):
    rng = np.random.default_rng(seed)
    # Small integer weights make many exact ties; some documents and queries are empty.
    D = sp.random(40, 15, density=0.15, random_state=seed, format="csr",
                  data_rvs=lambda n: rng.integers(1, 3, n).astype(float))  # fmt: skip
    D = sp.vstack([D, D[:5], sp.csr_matrix((2, 15))]).tocsr()  # duplicates tie exactly
    Q = sp.random(30, 15, density=0.2, random_state=seed + 100, format="csr",
                  data_rvs=lambda n: rng.integers(1, 3, n).astype(float))  # fmt: skip
    k = min(k, D.shape[0])
    scores = _dense_reference(Q, D)
    out, n = _run_kernel(Q, D, k)
    np.testing.assert_array_equal(out, _top_k(scores, k))
    np.testing.assert_array_equal(n, np.minimum((scores > 0).sum(axis=1), k))


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
