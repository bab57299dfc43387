"""Hard negatives: the pools of responses a trained ranker draws its negatives from, per
example, instead of from all its candidates.

A pool is given (``negative_lists=``, or a callable ``negatives=``: an answer-selection
corpus's wrong answers) or mined by BM25 (``negatives="bm25"``: the candidates that share the
most informative words with the example's input). :class:`SupervisedEmbeddingRanker`,
:class:`DualEncoderRanker` and :class:`MemN2NRanker` take them with the same parameters and
semantics; the pools are a CSR table (:class:`Pools`) of rows of the model's response table.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..base import _check_list, check_responses
from ..text import LabelIndex
from ._kernels import SENegatives as Pools

# Negatives mined per example by negatives="bm25": the candidates of highest BM25 score.
MINED_NEGATIVES = 100
# Okapi BM25's usual constants (Lucene's, bm25s's) for that mining.
_BM25_K1, _BM25_B = 1.5, 0.75


def top_k_lowest_index_first(scores: np.ndarray, k: int) -> np.ndarray:
    """Per row, the columns of the ``k`` highest scores, in increasing column order; among
    equal scores at the boundary the lowest columns. ``np.argpartition`` alone breaks such
    ties as its numpy version and the machine's SIMD sort do, and a pool's order decides
    which negative a seeded draw picks."""
    n_cols = scores.shape[1]
    kth = np.partition(scores, n_cols - k, axis=1)[:, n_cols - k, None]  # the k-th largest
    above = scores > kth
    at = scores == kth
    room = k - above.sum(axis=1, keepdims=True)
    take = above | (at & (np.cumsum(at, axis=1) <= room))
    return np.nonzero(take)[1].reshape(len(scores), k)


def bm25_pools(x_bags, r_bags, gold, n_candidates: int, k: int) -> Pools:
    """Per example, the ``k`` candidates (rows ``[0, n_candidates)`` of the response table
    ``r_bags``) of highest BM25 score for its input's words, its gold response left out:
    the negatives ``negatives="bm25"`` draws from. The idf (Lucene's) and the lengths are
    the candidates'."""
    C = r_bags[:n_candidates].tocsr()
    df = np.bincount(C.indices, minlength=C.shape[1]).astype(np.float64)
    idf = np.log1p((n_candidates - df + 0.5) / (df + 0.5))
    lengths = np.asarray(C.sum(axis=1), dtype=np.float64).ravel()
    ratio = lengths / max(lengths.mean(), 1e-12)
    rows = np.repeat(np.arange(n_candidates), np.diff(C.indptr))
    tf = C.data.astype(np.float64)
    impact = idf[C.indices] * tf / (_BM25_K1 * (1.0 - _BM25_B + _BM25_B * ratio[rows]) + tf)
    W = sp.csr_matrix((impact, C.indices, C.indptr), shape=C.shape).T.tocsr()
    Q = x_bags.tocsr(copy=True)
    Q.data[:] = 1.0  # each input word once, whatever normalize_input did to its count
    k = min(k, n_candidates - 1)
    n = Q.shape[0]
    pools = np.empty((n, max(k, 0)), dtype=np.int64)
    block = max(1, (1 << 22) // max(n_candidates, 1))
    for start in range(0, n if k > 0 else 0, block):
        stop = min(start + block, n)
        scores = np.asarray((Q[start:stop] @ W).todense())
        g = gold[start:stop]
        own = np.flatnonzero(g < n_candidates)
        scores[own, g[own]] = -np.inf
        pools[start:stop] = top_k_lowest_index_first(scores, k)
    indptr = np.arange(n + 1, dtype=np.int64) * pools.shape[1]
    return Pools(indptr, pools.ravel())


def encode_pools(negative_lists, labels: LabelIndex, gold: np.ndarray) -> Pools:
    """The negative pools of the examples as rows of the response table of ``labels``
    (extended by the responses it lacks), each example's gold response left out."""
    if isinstance(negative_lists, str) or len(negative_lists) != len(gold):
        n = "a str" if isinstance(negative_lists, str) else f"{len(negative_lists)} lists"
        raise ValueError(f"negative_lists must hold one list per example ({len(gold)}), got {n}.")
    rows = []
    for i, pool in enumerate(negative_lists):
        _check_list(pool, "negative_lists", i)
        codes = labels.encode(check_responses(pool, name=f"negative_lists[{i}]") if len(pool)
                              else [], unknown="extend")  # fmt: skip
        rows.append(codes[codes != gold[i]])
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    indices = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, np.int64)
    return Pools(indptr, indices)


def sequence_bags(ptr: np.ndarray, tok: np.ndarray, n_cols: int) -> sp.csr_matrix:
    """The bags of words (counts) of the ragged token sequences (``ptr``, ``tok``), as the
    CSR rows :func:`bm25_pools` reads for the models that read sequences."""
    data = np.ones(len(tok), dtype=np.float32)
    bags = sp.csr_matrix((data, tok, ptr), shape=(len(ptr) - 1, n_cols))
    bags.sum_duplicates()
    return bags


def check_negative_lists(model, negative_lists) -> None:
    """The error of ``fit(..., negative_lists=...)`` when ``model.negatives`` gives pools
    of its own."""
    if negative_lists is not None and model.negatives != "random":
        raise ValueError(
            f"negative_lists replaces the pools of negatives={model.negatives!r}: "
            "pass one or the other."
        )


def check_chunk_negatives(model) -> None:
    """The error of ``fit_chunks`` with a callable ``negatives``, which needs the
    contexts."""
    if callable(model.negatives):
        raise ValueError(
            "fit_chunks draws negatives from the candidates or mines them with "
            "negatives='bm25'; a callable's pools need fit."
        )
