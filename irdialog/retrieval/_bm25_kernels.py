"""Numba kernels of BM25 impacts: each posting's score from its term count, its document's
length and its term's idf, in one pass over an index's postings; and each term's postings
of some documents (what deleting them takes from the document frequencies).

What a shard of :class:`~irdialog.retrieval.ShardedIndex` runs when the collection's
statistics change (documents added or deleted): the values of
:meth:`BM25Ranker._term_scores <irdialog.retrieval.BM25Ranker>` bit for bit (the same float64
operations in the same order, cast to float32 once), without its temporaries.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

# The variants, by their position in irdialog.retrieval._bm25.METHODS.
ROBERTSON, LUCENE, ATIRE, BM25L, BM25PLUS = range(5)

TermCounts = namedtuple("TermCounts", "indptr docs tfs")
TermCounts.__doc__ = """An index's term counts, term-major: term t's documents
``docs[indptr[t]:indptr[t + 1]]`` (int64 ``indptr``, int32 ``docs``), increasing, with its
count in each (float32 ``tfs``)."""


@njit(cache=True, nogil=True, error_model="numpy")
def _tf_part(method, tf, norm, k1, delta):
    # _bm25._tf_component, operation for operation, given its _bm25.length_norm.
    if method == ROBERTSON or method == LUCENE:
        return tf / (k1 * norm + tf)
    if method == ATIRE:
        return tf * (k1 + 1.0) / (tf + k1 * norm)
    if method == BM25L:
        c = tf / norm
        return (k1 + 1.0) * (c + delta) / (k1 + c + delta)
    return (k1 + 1.0) * tf / (k1 * norm + tf) + delta


@njit(cache=True, nogil=True, error_model="numpy")
def bm25_impacts(counts, codes, norms, idf, method, k1, delta, impacts, term_max):
    """Each posting's BM25 impact (float32) into ``impacts``, each term's largest into
    ``term_max``.

    ``counts`` are the postings (:class:`TermCounts`); ``codes`` (uint8, uint16 or uint32)
    each document's entry in ``norms`` (float64), the length normalisation
    ``1 - b + b |d| / avgdl`` of each distinct length, a negative entry marking deleted
    documents, whose postings score 0; ``idf`` (float64) the terms'; ``method`` a position
    in ``METHODS``. BM25L and BM25+ impacts are less the tf = 0 score, as in the index.

    The codes are as narrow as the lengths allow: the gather of each posting's document is
    what this pass waits on, and a byte a document keeps it in cache.
    """
    indptr, docs, tfs = counts.indptr, counts.docs, counts.tfs
    for t in range(indptr.shape[0] - 1):
        best = np.float32(0.0)
        for p in range(indptr[t], indptr[t + 1]):
            norm = norms[codes[docs[p]]]
            if norm < 0:
                impacts[p] = np.float32(0.0)
                continue
            part = _tf_part(method, np.float64(tfs[p]), norm, k1, delta)
            if method == BM25L or method == BM25PLUS:
                part = part - _tf_part(method, 0.0, norm, k1, delta)
            value = np.float32(idf[t] * part)
            impacts[p] = value
            if value > best:
                best = value
        term_max[t] = best


@njit(cache=True, nogil=True)
def marked_postings(indptr, docs, marked, out):
    """Each term's postings of the marked documents into ``out`` (int64): term t's documents
    are ``docs[indptr[t]:indptr[t + 1]]``, and document d is marked when bit ``d % 8`` of
    ``marked[d // 8]`` is set (``np.packbits(mask, bitorder="little")``): a bit a document
    keeps the marks in cache."""
    for t in range(indptr.shape[0] - 1):
        n = 0
        for p in range(indptr[t], indptr[t + 1]):
            d = docs[p]
            n += (marked[d >> 3] >> (d & 7)) & 1
        out[t] = n
