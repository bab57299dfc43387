"""Numba kernels of the inverted index: the exact top k by MaxScore dynamic pruning, by a
dense accumulator for long queries, and by exhaustive scoring (the baseline); and the
products of the terms that (query, document) pairs share, by which ``rank_candidates``
scores per-example candidate lists (:func:`pair_products`).

Everything here is a pure ``@njit(cache=True, nogil=True)`` function of contiguous arrays and
scalars; ``nogil`` lets threads rank disjoint ranges of queries at once.

A query's score for a document is ``sum_t w_t * impact[t, d]``: the impacts (a term's weight
in a document, already normalised by the document: a BM25 term score, a TF-IDF weight over
the document's norm) are precomputed per posting at indexing, as bm25s does, so a query only
adds them up. :func:`maxscore_top_k` adds them up document at a time over the postings of
the query's terms (Turtle & Flood's MaxScore, as PISA and Lucene use it): each term's largest
impact bounds what it can add, and once the running top k is full, the terms whose bounds
together cannot lift a document past the k-th best score become *non-essential*: documents
holding only such terms are skipped without being read, and the non-essential postings are
only looked up (galloping search) for documents that the essential ones make promising. The
top k stays exact:

- the bounds are compared with a relative slack far above float64 rounding, so no document
  that could enter is pruned;
- a document that is scored completely gets the score of the exhaustive product
  ``queries @ postings`` bit for bit: its contributions are added in the query's term order,
  from 0, as scipy's sparse product adds them;
- documents arrive in index order, and a later document needs a strictly higher score to
  displace an earlier one, so ties go to the lower index, as everywhere in irdialog.

Documents that share no term with the query (score 0) fill a short list in index order.

A query may be restricted to a set of documents (:data:`Allowed`, a filter): MaxScore then
leapfrogs between the filter's sorted ids and the essential postings (each jumps to the
other's next document by galloping), so a small filter reads less than the query alone;
the dense and exhaustive kernels add up only the allowed postings. (A batch of queries under
one filter may be given postings already restricted to it: ``InvertedIndex._restricted``.)
The top k is the exact top k of the allowed documents, and a row holds at most the allowed
set, padded with -1.

A query may also be kept from a set of documents (``deleted``, a mask: the tombstones of a
shard of :class:`~irdialog.retrieval.ShardedIndex`): every kernel skips them, scored or of
score 0, as if their postings were not there, so the top k is that of the other documents.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .._topk import _sift_down, _sift_up, _worse

# The arrays that travel together, as records (numba takes namedtuples of arrays; see
# irdialog.svm._kernels).
Queries = namedtuple("Queries", "indptr terms weights")
Queries.__doc__ = """The queries as CSR arrays (int64, int32/int64, float64): each row's
terms in the order the exhaustive product adds them (sorted), weights > 0."""

Postings = namedtuple("Postings", "indptr docs impacts")
Postings.__doc__ = """The postings: term t's documents ``docs[indptr[t]:indptr[t + 1]]``
(int64 ``indptr``, int32 ``docs``), increasing, with their float32 impacts (>= 0)."""

TopK = namedtuple("TopK", "doc n scored postings")
TopK.__doc__ = """What the top-k kernels write for each query they rank: ``doc`` (int64,
(n_queries, k)), the top k; ``n``, how many have a positive score; ``scored``, how many
postings were scored; ``postings``, the total length of the query's postings (what
exhaustive term-at-a-time scoring reads); the last three int64 (n_queries,)."""

Allowed = namedtuple("Allowed", "indptr ids row")
Allowed.__doc__ = """Filters of the queries as CSR arrays (int64): filter ``r``'s documents are
``ids[indptr[r]:indptr[r + 1]]``, sorted and distinct, and query ``i`` is restricted to
filter ``row[i]``. An empty ``row`` (length 0): no query is filtered."""

# A bound is trusted to prune only when it stays below the threshold after this relative
# margin: float64 sums of a few dozen terms are off by ~1e-15 relatively.
_SLACK = 1e-9


@njit(cache=True, nogil=True)
def _seek(docs, pos, end, target):
    """The first position in ``docs[pos:end]`` (sorted) holding a document >= target:
    galloping, then binary search, so a skip costs the log of its length."""
    if pos >= end or docs[pos] >= target:
        return pos
    lo = pos  # docs[lo] < target
    step = 1
    hi = pos + 1
    while hi < end and docs[hi] < target:
        lo = hi
        step *= 2
        hi = lo + step
    if hi > end:
        hi = end
    lo += 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if docs[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _push(heap_score, heap_doc, size, score, doc):
    """Offer (score, doc) to a bounded heap holding ``size`` entries; returns the new size."""
    k = heap_score.shape[0]
    if size < k:
        heap_score[size] = score
        heap_doc[size] = doc
        _sift_up(heap_score, heap_doc, size)
        return size + 1
    if _worse(heap_score[0], heap_doc[0], score, doc):
        heap_score[0] = score
        heap_doc[0] = doc
        _sift_down(heap_score, heap_doc, size, 0)
    return size


@njit(cache=True, nogil=True)
def _drain(heap_score, heap_doc, size, row, mark):
    """Write the heap into ``row`` best first and mark its documents; returns how many."""
    n_kept = size
    while size > 0:  # worst first into the tail
        size -= 1
        row[size] = heap_doc[0]
        mark[heap_doc[0]] = True
        heap_score[0] = heap_score[size]
        heap_doc[0] = heap_doc[size]
        _sift_down(heap_score, heap_doc, size, 0)
    return n_kept


@njit(cache=True, nogil=True)
def _emit(heap_score, heap_doc, size, row, mark, deleted):
    """Write the heap into ``row`` best first, then the lowest-index documents not in it
    and not ``deleted`` (score 0) until the row is full. ``mark`` (all False) is scratch,
    left all False."""
    n_kept = _drain(heap_score, heap_doc, size, row, mark)
    fill = n_kept
    doc = 0
    skip = deleted.shape[0] > 0
    while fill < row.shape[0]:
        if not mark[doc] and not (skip and deleted[doc]):
            row[fill] = doc
            fill += 1
        doc += 1
    for t in range(n_kept):
        mark[row[t]] = False


@njit(cache=True, nogil=True)
def _emit_allowed(heap_score, heap_doc, size, row, mark, deleted, ids, lo, hi):
    """:func:`_emit` under a filter: after the heap, the allowed documents ``ids[lo:hi]``
    not in it and not ``deleted`` (score 0), in index order, then -1 once the allowed set
    is exhausted."""
    n_kept = _drain(heap_score, heap_doc, size, row, mark)
    fill = n_kept
    j = lo
    skip = deleted.shape[0] > 0
    while fill < row.shape[0] and j < hi:
        if not mark[ids[j]] and not (skip and deleted[ids[j]]):
            row[fill] = ids[j]
            fill += 1
        j += 1
    while fill < row.shape[0]:
        row[fill] = -1
        fill += 1
    for t in range(n_kept):
        mark[row[t]] = False


@njit(cache=True, nogil=True)
def _emit_row(heap_score, heap_doc, size, row, mark, deleted, allowed, i):
    """The heap of query ``i`` into ``row``: :func:`_emit_allowed` under its filter of
    ``allowed``, or :func:`_emit` when the queries have no filters."""
    indptr, ids, filters = allowed
    if filters.shape[0] > 0:
        lo, hi = indptr[filters[i]], indptr[filters[i] + 1]
        _emit_allowed(heap_score, heap_doc, size, row, mark, deleted, ids, lo, hi)
    else:
        _emit(heap_score, heap_doc, size, row, mark, deleted)


@njit(cache=True, nogil=True)
def _mark_allowed(mask, allowed, current, r):
    """Make ``mask`` (bool, n_docs) hold filter ``r`` of ``allowed``, where it holds filter
    ``current`` (-1: none); returns ``r``. A run of queries sharing a filter marks it once."""
    indptr, ids, _ = allowed
    if r == current:
        return r
    if current >= 0:
        for j in range(indptr[current], indptr[current + 1]):
            mask[ids[j]] = False
    for j in range(indptr[r], indptr[r + 1]):
        mask[ids[j]] = True
    return r


@njit(cache=True, nogil=True)
def maxscore_top_k(queries, postings, term_max, n_docs, k, rows, allowed, deleted, out):
    """The k best documents of the queries ``rows``, best first, by MaxScore.

    Parameters
    ----------
    queries : Queries
    postings : Postings
    term_max : float32 (n_terms,), the largest impact of each term
    n_docs, k : int (k <= n_docs, less the deleted documents)
    rows : int64 (n,), the queries to rank
    allowed : Allowed
        The queries' filters (an empty ``row``: none). The next document is the first
        allowed one at or after the essential postings' next: the filter's ids and the
        postings leapfrog by galloping.
    deleted : bool (n_docs,) or (0,)
        Documents never returned (length 0: none): scored like the others, and kept out of
        the top k as they would enter it.
    out : TopK
        Written for ``rows``.
    """
    q_indptr, q_terms, q_weights = queries
    indptr, docs, impacts = postings
    a_indptr, a_ids, a_row = allowed
    filtered = a_row.shape[0] > 0
    skip = deleted.shape[0] > 0
    out_doc, out_n, out_scored, out_postings = out
    max_terms = 1
    for i in rows:
        max_terms = max(max_terms, q_indptr[i + 1] - q_indptr[i])
    order = np.empty(max_terms, dtype=np.int64)  # list slot -> position in the query row
    bound = np.empty(max_terms)  # w * term_max, ascending over the slots
    prefix = np.empty(max_terms)  # prefix[s]: sum of bound[0 .. s], with the slack
    pos = np.empty(max_terms, dtype=np.int64)
    end = np.empty(max_terms, dtype=np.int64)
    cur = np.empty(max_terms, dtype=np.int64)  # docs[pos[s]], or n_docs past the end
    weight = np.empty(max_terms)
    contrib = np.zeros(max_terms)  # by position in the query row, for the exact sum
    touched = np.empty(max_terms, dtype=np.int64)
    heap_score = np.empty(k)
    heap_doc = np.empty(k, dtype=np.int64)
    in_top = np.zeros(n_docs, dtype=np.bool_)
    for i in rows:
        q0 = q_indptr[i]
        n_terms = q_indptr[i + 1] - q0
        # The slots: the query's terms with postings, by increasing bound (insertion sort:
        # queries are short).
        m = 0
        total = 0
        for jj in range(n_terms):
            t = q_terms[q0 + jj]
            length = indptr[t + 1] - indptr[t]
            if length == 0 or q_weights[q0 + jj] <= 0.0:
                continue
            total += length
            b = q_weights[q0 + jj] * term_max[t]
            s = m
            while s > 0 and bound[s - 1] > b:
                bound[s] = bound[s - 1]
                order[s] = order[s - 1]
                s -= 1
            bound[s] = b
            order[s] = jj
            m += 1
        acc = 0.0
        for s in range(m):
            jj = order[s]
            t = q_terms[q0 + jj]
            pos[s] = indptr[t]
            end[s] = indptr[t + 1]
            cur[s] = docs[pos[s]]
            weight[s] = q_weights[q0 + jj]
            acc += bound[s]
            prefix[s] = acc * (1.0 + _SLACK)
        size = 0
        theta = 0.0  # a document must score above this to enter
        first_essential = 0  # slots below it cannot lift a document past theta alone
        scored = 0
        a_pos = a_end = 0
        if filtered:
            a_pos = a_indptr[a_row[i]]
            a_end = a_indptr[a_row[i] + 1]
        while True:
            doc = n_docs
            for s in range(first_essential, m):
                if cur[s] < doc:
                    doc = cur[s]
            if doc == n_docs:
                break
            if filtered:
                a_pos = _seek(a_ids, a_pos, a_end, doc)
                if a_pos == a_end:
                    break  # no allowed document left
                if a_ids[a_pos] != doc:  # the essential postings jump to the next allowed
                    target = a_ids[a_pos]
                    for s in range(first_essential, m):
                        if cur[s] < target:
                            p = _seek(docs, pos[s], end[s], target)
                            pos[s] = p
                            cur[s] = docs[p] if p < end[s] else n_docs
                    continue
            partial = 0.0
            n_touched = 0
            for s in range(first_essential, m):
                if cur[s] == doc:
                    p = pos[s]
                    c = weight[s] * np.float64(impacts[p])
                    contrib[order[s]] = c
                    touched[n_touched] = order[s]
                    n_touched += 1
                    partial += c
                    p += 1
                    pos[s] = p
                    cur[s] = docs[p] if p < end[s] else n_docs
            scored += n_touched
            for s in range(first_essential - 1, -1, -1):
                if partial * (1.0 + _SLACK) + prefix[s] <= theta:
                    break  # pruned: the partial sum below keeps it out
                p = _seek(docs, pos[s], end[s], doc)
                pos[s] = p
                if p < end[s] and docs[p] == doc:
                    c = weight[s] * np.float64(impacts[p])
                    contrib[order[s]] = c
                    touched[n_touched] = order[s]
                    n_touched += 1
                    partial += c
                    scored += 1
            if partial * (1.0 + _SLACK) > theta:
                score = 0.0  # the exact sum, in the query's term order
                for jj in range(n_terms):
                    score += contrib[jj]
                # Deleted documents are looked up only here, as one would enter: a shard's
                # score 0 (their impacts are 0) and never get here, and the lookup, a cache
                # miss a document, stays out of the loop.
                if score > theta and not (skip and deleted[doc]):
                    size = _push(heap_score, heap_doc, size, score, doc)
                    if size == k:
                        theta = heap_score[0]
                        while first_essential < m and prefix[first_essential] <= theta:
                            first_essential += 1
            for r in range(n_touched):
                contrib[touched[r]] = 0.0
        out_scored[i] = scored
        out_postings[i] = total
        out_n[i] = size
        _emit_row(heap_score, heap_doc, size, out_doc[i], in_top, deleted, allowed, i)


@njit(cache=True, nogil=True)
def exhaustive_top_k(queries, postings, n_docs, k, rows, allowed, deleted, out_doc, out_n):
    """The same top k as :func:`maxscore_top_k` (into ``out_doc`` and ``out_n``) by
    scoring every posting of the query's terms (term at a time, into an accumulator): the
    baseline the pruning is measured against, and its reference in the tests."""
    q_indptr, q_terms, q_weights = queries
    indptr, docs, impacts = postings
    a_row = allowed.row
    filtered = a_row.shape[0] > 0
    skip = deleted.shape[0] > 0
    acc = np.zeros(n_docs)
    seen = np.zeros(n_docs, dtype=np.bool_)
    touched = np.empty(n_docs, dtype=np.int64)
    heap_score = np.empty(k)
    heap_doc = np.empty(k, dtype=np.int64)
    mask = np.zeros(n_docs if filtered else 0, dtype=np.bool_)
    current = -1
    for i in rows:
        if filtered:
            current = _mark_allowed(mask, allowed, current, a_row[i])
        n_touched = 0
        for jj in range(q_indptr[i], q_indptr[i + 1]):
            t = q_terms[jj]
            w = q_weights[jj]
            for p in range(indptr[t], indptr[t + 1]):
                doc = docs[p]
                if (filtered and not mask[doc]) or (skip and deleted[doc]):
                    continue
                if not seen[doc]:
                    seen[doc] = True
                    touched[n_touched] = doc
                    n_touched += 1
                acc[doc] += w * np.float64(impacts[p])
        size = 0
        for r in range(n_touched):
            doc = touched[r]
            score = acc[doc]
            acc[doc] = 0.0
            seen[doc] = False
            if score > 0.0:
                size = _push(heap_score, heap_doc, size, score, doc)
        out_n[i] = size
        _emit_row(heap_score, heap_doc, size, out_doc[i], seen, deleted, allowed, i)


@njit(cache=True, nogil=True)
def _exact_score(q_terms, q_weights, q0, n_terms, indptr, docs, impacts, doc):
    """The document's score added in the query's term order: the exhaustive product's."""
    score = 0.0
    for jj in range(n_terms):
        w = q_weights[q0 + jj]
        if w <= 0.0:
            continue
        t = q_terms[q0 + jj]
        lo = indptr[t]
        hi = indptr[t + 1]
        while lo < hi:  # binary search for doc
            mid = (lo + hi) >> 1
            if docs[mid] < doc:
                lo = mid + 1
            else:
                hi = mid
        if lo < indptr[t + 1] and docs[lo] == doc:
            score += w * np.float64(impacts[lo])
    return score


@njit(cache=True, nogil=True)
def dense_top_k(queries, postings, n_docs, k, rows, allowed, deleted, out):
    """The k best documents of the queries ``rows``, best first, for long queries:
    the same arguments and result as :func:`maxscore_top_k`.

    Every posting of the query's terms is added into a dense float32 accumulator, as
    bm25s does; a long query's postings cover much of the collection, where pruning
    document at a time costs more than it saves. Two sequential passes then find the k-th
    best of those sums and the documents within float32 rounding of it; only these get
    their exact float64 score, added in the query's term order, from which the top k is
    taken, so the result is exactly that of the exhaustive product. Under a filter
    (``allowed``), only the allowed postings are added and only the allowed documents
    read; the ``deleted`` documents' sums are added and never read.
    """
    q_indptr, q_terms, q_weights = queries
    indptr, docs, impacts = postings
    a_indptr, a_ids, a_row = allowed
    filtered = a_row.shape[0] > 0
    skip = deleted.shape[0] > 0
    out_doc, out_n, out_scored, out_postings = out
    acc = np.zeros(n_docs, dtype=np.float32)
    heap_score = np.empty(k)
    heap_doc = np.empty(k, dtype=np.int64)
    mark = np.zeros(n_docs, dtype=np.bool_)
    mask = np.zeros(n_docs if filtered else 0, dtype=np.bool_)
    current = -1
    for i in rows:
        q0 = q_indptr[i]
        n_terms = q_indptr[i + 1] - q0
        lo, n_read = 0, n_docs  # the documents read: d = a_ids[lo + j], or j
        if filtered:
            current = _mark_allowed(mask, allowed, current, a_row[i])
            lo, n_read = a_indptr[current], a_indptr[current + 1] - a_indptr[current]
        total = 0
        for jj in range(n_terms):
            w = q_weights[q0 + jj]
            if w <= 0.0:
                continue
            t = q_terms[q0 + jj]
            w32 = np.float32(w)
            total += indptr[t + 1] - indptr[t]
            if filtered:
                for p in range(indptr[t], indptr[t + 1]):
                    if mask[docs[p]]:
                        acc[docs[p]] += w32 * impacts[p]
            else:
                for p in range(indptr[t], indptr[t + 1]):
                    acc[docs[p]] += w32 * impacts[p]
        # The k-th best float32 sum, then every document within its rounding of it.
        size = 0
        for j in range(n_read):
            d = a_ids[lo + j] if filtered else j
            if skip and deleted[d]:
                continue
            if acc[d] > 0.0 and (size < k or acc[d] > heap_score[0]):
                size = _push(heap_score, heap_doc, size, np.float64(acc[d]), d)
        cutoff = heap_score[0] * (1.0 - (n_terms + 2) * 2.0**-22) if size == k else 0.0
        size = 0
        for j in range(n_read):
            d = a_ids[lo + j] if filtered else j
            if acc[d] > 0.0 and acc[d] >= cutoff and not (skip and deleted[d]):
                score = _exact_score(q_terms, q_weights, q0, n_terms, indptr, docs, impacts, d)
                if score > 0.0:
                    size = _push(heap_score, heap_doc, size, score, d)
            acc[d] = 0.0
        out_scored[i] = total
        out_postings[i] = total
        out_n[i] = size
        _emit_row(heap_score, heap_doc, size, out_doc[i], mark, deleted, allowed, i)


@njit(cache=True, nogil=True)
def scores_at(queries, postings, top, out):
    """Each query's score of the documents ``top[i]`` (int64, (n_queries, m)) into ``out``
    (float64, same shape): the exhaustive product's values, bit for bit (each added in the
    query's term order, found by binary search in the term's postings), so that the top k
    of several indexes over parts of one collection merge as one index ranks."""
    q_indptr, q_terms, q_weights = queries
    indptr, docs, impacts = postings
    for i in range(top.shape[0]):
        q0 = q_indptr[i]
        n_terms = q_indptr[i + 1] - q0
        for j in range(top.shape[1]):
            out[i, j] = _exact_score(
                q_terms, q_weights, q0, n_terms, indptr, docs, impacts, top[i, j]
            )


@njit(cache=True, nogil=True)
def pair_products(queries, documents, rows, cols, dense, counts, out):
    """The products of the weights that each (query, document) pair shares: for pair ``p``,
    query ``rows[p]`` and document ``cols[p]``, the nonzero ``w_q[t] * w_d[t]`` of their
    common terms, in increasing term order, written pair after pair into ``out``, and
    their number into ``counts[p]``: the data of scipy's elementwise product of the two
    sparse rows (which keeps only the nonzero products), so that summing each pair's
    products as scipy does gives ``Q[rows].multiply(D[cols]).sum(axis=1)`` bit for bit.

    Each query's weights are scattered into ``dense`` once per run of pairs that share it
    (pairs come grouped by query), then each document's terms are looked up there.

    Parameters
    ----------
    queries, documents : Queries
        CSR rows with sorted terms and float64 weights.
    rows, cols : int64 (n_pairs,)
    dense : float64 (n_terms,), all 0; scratch, left all 0
    counts : int64 (n_pairs,), written
    out : float64, at least the total number of products, written

    Returns
    -------
    n : int, the number of products written
    """
    q_indptr, q_terms, q_weights = queries
    d_indptr, d_terms, d_weights = documents
    n = 0
    current = -1
    for p in range(rows.shape[0]):
        r = rows[p]
        if r != current:
            if current >= 0:
                for jj in range(q_indptr[current], q_indptr[current + 1]):
                    dense[q_terms[jj]] = 0.0
            for jj in range(q_indptr[r], q_indptr[r + 1]):
                dense[q_terms[jj]] = q_weights[jj]
            current = r
        c = cols[p]
        first = n
        for jj in range(d_indptr[c], d_indptr[c + 1]):
            w = dense[d_terms[jj]]
            if w != 0.0:
                x = w * d_weights[jj]
                if x != 0.0:
                    out[n] = x
                    n += 1
        counts[p] = n - first
    if current >= 0:
        for jj in range(q_indptr[current], q_indptr[current + 1]):
            dense[q_terms[jj]] = 0.0
    return n
