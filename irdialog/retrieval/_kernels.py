"""Numba kernels of the retrieval models: top-k ranking from an inverted index.

Everything here is a pure ``@njit(cache=True)`` function of contiguous arrays and scalars.

Scoring every document for every query costs O(n_queries x n_documents) however few
documents share a word with the query. :func:`postings_top_k` scores term at a time from
the postings of the query's own terms (the documents holding each term), as Lucene does:
an accumulator over the documents, reset after each query at the entries it touched, and a
bounded heap for the running top k. No dense row of scores is ever built per query, and
the cost is the total length of the postings read.

The accumulation visits the query's terms in their stored order and each term's documents
in index order, the order of scipy's sparse product ``queries @ postings``, so the scores
are bit-for-bit those of the dense path (``TfidfRanker.decision_function``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._topk import _sift_down, _sift_up, _worse


@njit(cache=True)
def postings_top_k(
    q_indptr, q_indices, q_data, q_norms, p_indptr, p_indices, p_data, d_norms, k, out_doc, out_n
):
    """The k best documents of each query by ``(q . d) / (|q| |d|)``, best first.

    Parameters
    ----------
    q_indptr, q_indices, q_data : the queries, a CSR matrix (n_queries, n_terms)
    q_norms : float64 (n_queries,)
    p_indptr, p_indices, p_data : the postings, a CSR matrix (n_terms, n_documents) with
        each row's documents in increasing order (the CSC arrays of the document matrix)
    d_norms : float64 (n_documents,)
    k : int, at most n_documents
    out_doc : int64 (n_queries, k), written
    out_n : int64 (n_queries,), written: how many of each row's documents have a positive
        score (the rest are the score-0 fill)

    A score whose denominator is zero is 0, as in the dense path. Weights must be
    non-negative, so that a document sharing no term with the query (score 0) never
    outranks one that does; such documents fill a short list in index order.
    """
    n_docs = d_norms.shape[0]
    acc = np.zeros(n_docs)
    seen = np.zeros(n_docs, dtype=np.bool_)
    touched = np.empty(n_docs, dtype=np.int64)
    heap_score = np.empty(k)
    heap_doc = np.empty(k, dtype=np.int64)
    for i in range(q_indptr.shape[0] - 1):
        n_touched = 0
        for jj in range(q_indptr[i], q_indptr[i + 1]):
            term = q_indices[jj]
            v = q_data[jj]
            for kk in range(p_indptr[term], p_indptr[term + 1]):
                doc = p_indices[kk]
                if not seen[doc]:
                    seen[doc] = True
                    touched[n_touched] = doc
                    n_touched += 1
                acc[doc] += v * p_data[kk]
        size = 0
        for t in range(n_touched):
            doc = touched[t]
            den = q_norms[i] * d_norms[doc]
            score = acc[doc] / den if den > 0 else 0.0
            acc[doc] = 0.0
            seen[doc] = False
            if score <= 0.0:
                continue  # ranks with the untouched documents, by index
            if size < k:
                heap_score[size] = score
                heap_doc[size] = doc
                _sift_up(heap_score, heap_doc, size)
                size += 1
            elif _worse(heap_score[0], heap_doc[0], score, doc):
                heap_score[0] = score
                heap_doc[0] = doc
                _sift_down(heap_score, heap_doc, size, 0)
        # Pop worst first into the tail of the output row.
        n_kept = size
        out_n[i] = n_kept
        while size > 0:
            size -= 1
            out_doc[i, size] = heap_doc[0]
            seen[heap_doc[0]] = True
            heap_score[0] = heap_score[size]
            heap_doc[0] = heap_doc[size]
            _sift_down(heap_score, heap_doc, size, 0)
        # Fill the rest with the lowest-index documents of score 0.
        pos = n_kept
        doc = 0
        while pos < k:
            if not seen[doc]:
                out_doc[i, pos] = doc
                pos += 1
            doc += 1
        for t in range(n_kept):
            seen[out_doc[i, t]] = False
