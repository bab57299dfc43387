"""Scores of (query, document) pairs given as rows of two sparse matrices, each row built
once: how TF-IDF and BM25 score per-example candidate lists (``rank_candidates``).

An answer-selection workload ranks thousands of pools of hundreds of candidates drawn from
far fewer distinct texts. Each distinct query and candidate text is encoded once into a
sparse row; a pair's score is then the sum of the products of the weights its two rows
share (:func:`~irdialog.retrieval._kernels.pair_products`), added in the order of scipy's
``Q[rows].multiply(D[cols]).sum(axis=1)``, so that the result equals the models'
``_score_pairs`` bit for bit. A text among the fitted candidates takes the candidate's row,
kept since the fit (:func:`text_rows`), instead of being encoded again.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np
import scipy.sparse as sp

from ._kernels import Queries, pair_products


def text_rows(texts, lookup: dict, fitted, encode) -> tuple[sp.csr_matrix, np.ndarray]:
    """The rows of texts, and the row of each text: a text of ``lookup`` (text -> row of
    ``fitted``) takes that row, the others are encoded by ``encode`` (an array of texts ->
    CSR matrix with ``fitted``'s columns), each once.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> fitted = sp.csr_matrix([[1.0, 0.0], [0.0, 2.0]])
    >>> encode = lambda t: sp.csr_matrix(np.full((len(t), 2), 9.0))
    >>> texts = np.array(["b", "new", "a"], dtype=object)
    >>> R, row = text_rows(texts, {"a": 0, "b": 1}, fitted, encode)
    >>> R[row].toarray()
    array([[0., 2.],
           [9., 9.],
           [1., 0.]])
    """
    texts = np.asarray(texts, dtype=object)
    found = (
        np.fromiter(map(lookup.get, texts, repeat(-1)), np.int64, len(texts))
        if lookup
        else np.full(len(texts), -1, dtype=np.int64)
    )
    new = np.flatnonzero(found < 0)
    if not len(new) and 2 * len(texts) >= fitted.shape[0]:
        return fitted, found  # most of the fitted rows: them as they are, no copy
    known = found[found >= 0]
    blocks = [fitted[known]] if len(known) else []
    R = sp.vstack(blocks + [encode(texts[new])], format="csr")
    row = np.empty(len(texts), dtype=np.int64)
    row[found >= 0] = np.arange(len(known))
    row[new] = len(known) + np.arange(len(new))
    return R, row


def _rows(m) -> Queries:
    m = sp.csr_matrix(m, dtype=np.float64)
    if not m.has_sorted_indices:
        m = m.sorted_indices()
    return Queries(m.indptr.astype(np.int64), m.indices, m.data)


class SparsePairs:
    """The shared-term products of pairs of rows of ``Q`` (queries) and ``D`` (documents).

    Parameters
    ----------
    Q : sparse matrix of shape (n_queries, n_terms)
    D : sparse matrix of shape (n_documents, n_terms)
        Rows without duplicate terms (scipy's canonical format but for the order).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> Q = sp.csr_matrix([[1.0, 0.0, 2.0]])
    >>> D = sp.csr_matrix([[3.0, 1.0, 0.0], [0.0, 5.0, 0.5]])
    >>> SparsePairs(Q, D).dots(np.array([0, 0, 0]), np.array([1, 0, 1]))
    array([1., 3., 1.])
    """

    def __init__(self, Q, D):
        if Q.shape[1] != D.shape[1]:
            raise ValueError(f"Q has {Q.shape[1]} columns but D has {D.shape[1]}.")
        self.queries = _rows(Q)
        self.documents = _rows(D)
        self._dense = np.zeros(Q.shape[1])

    def dots(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``Q[rows[p]] . D[cols[p]]`` for each pair ``p``, summed as scipy's
        ``Q[rows].multiply(D[cols]).sum(axis=1)`` sums them; rows should come grouped
        (each query's weights are scattered once per run of equal rows)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        q_len = np.diff(self.queries.indptr)[rows]
        d_len = np.diff(self.documents.indptr)[cols]
        out = np.empty(int(np.minimum(q_len, d_len).sum()))
        counts = np.empty(len(rows), dtype=np.int64)
        n = pair_products(self.queries, self.documents, rows, cols, self._dense, counts, out)
        scores = np.zeros(len(rows))
        nonempty = np.flatnonzero(counts)
        if len(nonempty):
            # scipy's sum over the minor axis: np.add.reduceat over the non-empty rows.
            starts = np.cumsum(counts) - counts
            scores[nonempty] = np.add.reduceat(out[:n], starts[nonempty])
        return scores
