"""The inverted index under TF-IDF match, BM25 match and the knowledge-base memory.

An index is four arrays: for each term, the documents holding it (increasing) and its
*impact* in each, the term's score contribution precomputed at indexing (a BM25 term score,
a TF-IDF weight over the document's norm), plus each term's largest impact. A query is a
sparse row of term weights; its score for a document is ``sum_t w_t * impact[t, d]``.

:meth:`InvertedIndex.top_k` returns the exact top k with MaxScore dynamic pruning
(``retrieval/_kernels.py``), over every core with ``n_jobs``; :meth:`InvertedIndex.scores`
is the exhaustive product whose ranking it reproduces bit for bit. The arrays are plain
ndarrays, so :func:`irdialog.persist.save` stores them as they are and
``irdialog.persist.load(path, mmap_mode="r")`` maps them from the file.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .._threads import n_threads
from ..base import check_contexts, check_has_candidates, check_positive_int, check_responses
from ._kernels import (
    Allowed,
    Postings,
    Queries,
    TopK,
    dense_top_k,
    exhaustive_top_k,
    maxscore_top_k,
    scores_at,
)

ALGORITHMS = ("auto", "maxscore", "dense", "exhaustive")

# Queries handed to one call of the kernel: large enough to pay for the call, small enough
# that the threads of n_jobs share the work evenly.
_QUERY_CHUNK = 256
# Queries with more terms than this take the dense kernel under algorithm="auto": their
# postings cover much of the collection, and MaxScore pays for every list at every document.
LONG_QUERY_TERMS = 16
# A filter shared by a batch of queries is applied once, by copying the allowed postings of
# their terms, when that copy costs less than this times what leapfrogging would read.
_RESTRICT_FACTOR = 1.0
# Texts encoded at a time by rank_texts while the threads rank the chunks before: small,
# so that the last chunk's kernel, which nothing overlaps, is short.
_TEXT_CHUNK = 256


def count_tokens(
    token_lists: Iterable[Sequence[str]], vocabulary: dict[str, int], *, grow: bool
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Term counts (n_texts, n_words; float32, exact below 2**24) and lengths of texts given
    as token lists, in one pass that keeps no token list (millions of documents fit).

    Unknown tokens count in the length only; with ``grow`` they are added to ``vocabulary``
    (in place, in order of first appearance) instead. Each row's terms come out sorted.

    Examples
    --------
    >>> vocabulary = {}
    >>> counts, lengths = count_tokens([["a", "b", "a"], ["c"]], vocabulary, grow=True)
    >>> counts.toarray(), lengths, vocabulary
    (array([[2., 1., 0.],
           [0., 0., 1.]], dtype=float32), array([3., 1.]), {'a': 0, 'b': 1, 'c': 2})
    """
    lengths = array("d")
    ids = array("i")
    indptr = array("q", [0])
    for tokens in token_lists:
        lengths.append(len(tokens))
        if grow:
            ids.extend([vocabulary.setdefault(t, len(vocabulary)) for t in tokens])
        else:  # unknown tokens as -1, dropped below (a loop in C, not in Python)
            ids.extend(map(vocabulary.get, tokens, repeat(-1, len(tokens))))
        indptr.append(len(ids))
    terms = np.frombuffer(ids, dtype=np.int32) if ids else np.zeros(0, np.int32)
    offsets = np.frombuffer(indptr, dtype=np.int64)
    if not grow and (terms < 0).any():
        known = terms >= 0
        offsets = np.concatenate([[0], np.cumsum(known)])[offsets]
        terms = terms[known]
    counts = sp.csr_matrix(
        (np.ones(len(terms), dtype=np.float32), terms, offsets),
        shape=(len(indptr) - 1, len(vocabulary)),
    )
    counts.sum_duplicates()
    return counts, np.frombuffer(lengths, dtype=np.float64) if lengths else np.zeros(0)


_NO_FILTER = Allowed(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
_NONE_DELETED = np.zeros(0, dtype=np.bool_)


def _document_ids(a, n_docs: int, where: str) -> np.ndarray:
    """One filter as sorted distinct int64 ids: a boolean mask of the documents, or ids."""
    try:
        a = np.asarray(a)
    except ValueError:  # a ragged nesting
        raise ValueError(f"{where} must be a mask or ids of documents, not nested lists.") from None
    if a.size == 0 and a.dtype.kind not in "biu":
        a = a.astype(np.int64)  # [] reads as float64
    if a.ndim != 1:
        raise ValueError(f"{where} must be 1-D (a mask or ids of documents), got shape {a.shape}.")
    if a.dtype.kind == "b":
        if len(a) != n_docs:
            raise ValueError(
                f"{where} is a boolean mask of {len(a)} entries, but the index holds "
                f"{n_docs} documents."
            )
        return np.flatnonzero(a).astype(np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"{where} must be a boolean mask or integer document ids, got dtype {a.dtype}."
        )
    ids = np.unique(a).astype(np.int64)
    if len(ids) and (ids[0] < 0 or ids[-1] >= n_docs):
        bad = ids[0] if ids[0] < 0 else ids[-1]
        raise ValueError(f"{where} holds the document id {bad}, outside [0, {n_docs}).")
    return ids


def check_allowed(allowed, n_queries: int, n_docs: int) -> Allowed | None:
    """The filter argument of a search (``allowed=``) as :class:`Allowed` arrays, or None.

    ``allowed`` restricts every query to one set of documents, given as a boolean mask of
    the ``n_docs`` documents or an array of their ids, or each query to its own: a 2-D
    boolean array (one mask a row) or a sequence of ``n_queries`` masks or id arrays.
    A wrong length, shape or dtype, or an id outside ``[0, n_docs)``, is a ValueError or
    TypeError that names it.

    Examples
    --------
    >>> check_allowed([3, 1, 3], n_queries=2, n_docs=4)
    Allowed(indptr=array([0, 2]), ids=array([1, 3]), row=array([0, 0]))
    >>> check_allowed([[True, False], [False, False]], n_queries=2, n_docs=2).row
    array([0, 1])
    """
    if allowed is None:
        return None
    if isinstance(allowed, Allowed):
        return allowed
    if isinstance(allowed, np.ndarray) and allowed.ndim == 2:
        per_query = list(allowed)
    elif isinstance(allowed, (list, tuple)) and len(allowed) and np.ndim(allowed[0]) > 0:
        per_query = allowed  # (its first item decides: a list of a million ids stays fast)
    else:
        ids = _document_ids(allowed, n_docs, "allowed")
        return Allowed(np.array([0, len(ids)], np.int64), ids, np.zeros(n_queries, np.int64))
    if len(per_query) != n_queries:
        raise ValueError(
            f"allowed has {len(per_query)} filters (one per query), but there are "
            f"{n_queries} queries."
        )
    ids = [_document_ids(a, n_docs, f"allowed[{i}]") for i, a in enumerate(per_query)]
    indptr = np.concatenate([[0], np.cumsum([len(a) for a in ids])]).astype(np.int64)
    flat = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    return Allowed(indptr, flat, np.arange(n_queries, dtype=np.int64))


class InvertedIndex:
    """Postings with precomputed impacts, and the exact pruned top k over them.

    Build one with :meth:`from_matrix`; the models of :mod:`irdialog.retrieval` build and
    hold their own (``index_``).

    Attributes
    ----------
    indptr : int64 ndarray of shape (n_terms + 1,)
    docs : int32 ndarray of shape (n_postings,)
        Term ``t``'s documents are ``docs[indptr[t]:indptr[t + 1]]``, in increasing order.
    impacts : float32 ndarray of shape (n_postings,)
        The term's impact in each of those documents (non-negative).
    term_max : float32 ndarray of shape (n_terms,)
        Each term's largest impact (0 for a term in no document).
    n_docs : int

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from irdialog.retrieval import InvertedIndex
    >>> index = InvertedIndex.from_matrix(sp.csr_matrix([[1.0, 0, 2], [0, 1, 1], [3, 0, 0]]))
    >>> queries = sp.csr_matrix([[1.0, 0, 1], [0, 0, 0]])
    >>> index.top_k(queries, k=2)
    array([[0, 2],
           [0, 1]])
    >>> index.scores(queries)
    array([[3., 1., 3.],
           [0., 0., 0.]])
    """

    def __init__(self, indptr, docs, impacts, term_max, n_docs):
        self.indptr = indptr
        self.docs = docs
        self.impacts = impacts
        self.term_max = term_max
        self.n_docs = int(n_docs)

    @classmethod
    def from_matrix(cls, weights) -> InvertedIndex:
        """Index a (n_docs, n_terms) sparse matrix of impacts.

        Parameters
        ----------
        weights : sparse matrix of shape (n_docs, n_terms)
            Non-negative, finite; stored as float32.

        Returns
        -------
        index : InvertedIndex
        """
        W = sp.csr_matrix(weights, dtype=np.float32)
        if W.nnz and not np.isfinite(W.data).all():
            raise ValueError("The document weights hold NaN or infinite values.")
        if W.nnz and W.data.min() < 0:
            raise ValueError(
                "The document weights must be non-negative: a pruned top k needs each "
                "term's contribution bounded below by 0."
            )
        n_docs, n_terms = W.shape
        if n_docs >= np.iinfo(np.int32).max:
            raise ValueError(f"An index holds fewer than 2**31 documents, got {n_docs}.")
        P = W.T.tocsr()  # (n_terms, n_docs): each term's documents in increasing order
        P.sort_indices()
        P.eliminate_zeros()  # on the copy: ``weights`` may be the caller's own matrix
        term_max = np.zeros(n_terms, dtype=np.float32)
        lengths = np.diff(P.indptr)
        nonempty = lengths > 0
        if P.nnz:
            term_max[nonempty] = np.maximum.reduceat(P.data, P.indptr[:-1][nonempty])
        return cls(
            np.ascontiguousarray(P.indptr, dtype=np.int64),
            np.ascontiguousarray(P.indices, dtype=np.int32),
            np.ascontiguousarray(P.data, dtype=np.float32),
            term_max,
            n_docs,
        )

    @property
    def n_terms(self) -> int:
        return len(self.indptr) - 1

    @property
    def n_postings(self) -> int:
        return len(self.docs)

    def postings_matrix(self) -> sp.csr_matrix:
        """The postings as a (n_terms, n_docs) CSR matrix of impacts (no copy)."""
        return sp.csr_matrix(
            (self.impacts, self.docs, self.indptr), shape=(self.n_terms, self.n_docs), copy=False
        )

    def _queries(self, queries) -> sp.csr_matrix:
        Q = sp.csr_matrix(queries, dtype=np.float64)
        if Q.ndim != 2 or Q.shape[1] != self.n_terms:
            raise ValueError(
                f"The queries must have one column per indexed term ({self.n_terms}), "
                f"got shape {Q.shape}."
            )
        if Q.nnz and not np.isfinite(Q.data).all():
            raise ValueError("The query weights hold NaN or infinite values.")
        if Q.nnz and Q.data.min() < 0:
            raise ValueError("The query weights must be non-negative.")
        Q.sum_duplicates()  # sorted terms: the order in which scipy's product adds them
        return Q

    def scores(self, queries) -> np.ndarray:
        """Every document's score for every query: the exhaustive product.

        Parameters
        ----------
        queries : sparse matrix of shape (n_queries, n_terms)

        Returns
        -------
        scores : float64 ndarray of shape (n_queries, n_docs)
        """
        Q = self._queries(queries)
        return np.asarray((Q @ self.postings_matrix()).toarray(), dtype=np.float64)

    def scores_at(self, queries, docs) -> np.ndarray:
        """Each query's score of the given documents: the values of :meth:`scores` at
        ``docs``, bit for bit, without scoring the others.

        What an index over part of a collection returns beside its :meth:`top_k`, so that
        the top k of several such indexes merge into the ranking of one.

        Parameters
        ----------
        queries : sparse matrix of shape (n_queries, n_terms)
        docs : int array-like of shape (n_queries, m)
            Documents of this index, e.g. the ``top_k`` of the queries.

        Returns
        -------
        scores : float64 ndarray of shape (n_queries, m)

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> from irdialog.retrieval import InvertedIndex
        >>> index = InvertedIndex.from_matrix(sp.csr_matrix([[1.0, 0], [0.5, 2.0]]))
        >>> index.scores_at(sp.csr_matrix([[1.0, 1.0]]), [[1, 0]])
        array([[2.5, 1. ]])
        """
        Q = self._queries(queries)
        docs = np.ascontiguousarray(docs, dtype=np.int64)
        if docs.ndim != 2 or docs.shape[0] != Q.shape[0]:
            raise ValueError(
                f"docs must have one row per query ({Q.shape[0]}), got shape {docs.shape}."
            )
        if docs.size and (docs.min() < 0 or docs.max() >= self.n_docs):
            raise ValueError(f"docs must be in [0, {self.n_docs}).")
        out = np.empty(docs.shape, dtype=np.float64)
        q = Queries(Q.indptr.astype(np.int64), Q.indices, Q.data)
        scores_at(q, Postings(self.indptr, self.docs, self.impacts), docs, out)
        return out

    def top_k(
        self, queries, k: int, *, n_jobs=None, algorithm="auto", return_stats=False,
        allowed=None,
    ):  # fmt: skip
        """The k best documents of each query, best first; ties to the lower index.

        The same ranking as sorting :meth:`scores` (documents of score 0 come last, in
        index order), without scoring every document.

        Parameters
        ----------
        queries : sparse matrix of shape (n_queries, n_terms), non-negative weights
        k : int
            At most ``n_docs`` are returned.
        allowed : array-like or sequence of array-like, default=None
            A filter: the documents each query may return, as a boolean mask of the
            ``n_docs`` documents or an array of their ids, for every query, or one mask
            or id array per query (a 2-D boolean array, or a sequence of ``n_queries``).
            The result is the exact top k of the allowed documents, ranked as
            :meth:`scores` ranks them; a query allowed fewer than k documents gets them
            all, ranked, and its row is padded with -1. A small filter costs less than no
            filter: MaxScore reads only the postings near allowed documents, and a batch
            of queries under one filter ranks the allowed postings of its terms, copied
            once, when that costs less.
        n_jobs : int, default=None
            Threads ranking disjoint chunks of queries (None: 1; -1: every core). The
            result does not depend on it.
        algorithm : {"auto", "maxscore", "dense", "exhaustive"}, default="auto"
            How the top k is found, with the same result. "maxscore": document at a time
            with MaxScore pruning (:func:`~irdialog.retrieval._kernels.maxscore_top_k`);
            "dense": every posting into a dense float32 accumulator, exact scores for the
            few documents near the top (:func:`~irdialog.retrieval._kernels.dense_top_k`);
            "auto": MaxScore for queries of at most ``LONG_QUERY_TERMS`` terms, dense for
            the longer ones, whose postings cover much of the collection; "exhaustive":
            every posting scored into a sparse accumulator (the baseline of the pruning
            statistics).
        return_stats : bool, default=False
            Also return per-query counts (see Returns).

        Returns
        -------
        top : int64 ndarray of shape (n_queries, min(k, n_docs))
            With ``allowed``, of shape (n_queries, min(k, m)), ``m`` the size of the
            largest filter; -1 past the end of a smaller one.
        stats : dict of int64 ndarrays of shape (n_queries,), only with ``return_stats``
            ``"n_positive"``: documents in the top k with a positive score;
            ``"scored"``: postings scored (with "dense" and "exhaustive", all of them);
            ``"postings"``: the total length of the query's postings.

        Examples
        --------
        >>> import numpy as np
        >>> import scipy.sparse as sp
        >>> from irdialog.retrieval import InvertedIndex
        >>> index = InvertedIndex.from_matrix(sp.csr_matrix([[1.0, 0], [3.0, 0], [2.0, 1]]))
        >>> index.top_k(sp.csr_matrix([[1.0, 1.0]]), k=2, allowed=[0, 2])
        array([[2, 0]])
        >>> index.top_k(sp.csr_matrix([[1.0, 1.0]] * 2), k=2, allowed=[[1], [0, 1]])
        array([[ 1, -1],
               [ 1,  0]])
        """
        check_positive_int(k, "k")
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}.")
        Q = self._queries(queries)
        allowed = check_allowed(allowed, Q.shape[0], self.n_docs)
        return self._top_k(Q, k, n_jobs, algorithm, return_stats, allowed)

    def _top_k(
        self, Q, k, n_jobs=None, algorithm="auto", return_stats=False, allowed=None,
        deleted=None,
    ):  # fmt: skip
        # top_k on queries already checked by _queries, and a filter by check_allowed (its
        # largest filter sets the width, so that chunks of one filter's queries stack).
        # ``deleted``: a boolean mask of documents never returned (a shard's tombstones),
        # which the kernels skip; the width is then at most the documents left, and under
        # a filter that of the filter given, a row padded with -1 for its deleted ones.
        n = Q.shape[0]
        if deleted is None:
            deleted = _NONE_DELETED
            k = min(int(k), self.n_docs)
        else:
            deleted = np.ascontiguousarray(deleted, dtype=np.bool_)
            if deleted.shape != (self.n_docs,):
                raise ValueError(
                    f"deleted must be a boolean mask of the {self.n_docs} documents, got "
                    f"shape {deleted.shape}."
                )
            k = min(int(k), self.n_docs - int(np.count_nonzero(deleted)))
        if allowed is not None:
            k = min(k, int(np.diff(allowed.indptr).max(initial=0)))
        else:
            allowed = _NO_FILTER
        top = np.empty((n, k), dtype=np.int64)
        n_positive = np.zeros(n, dtype=np.int64)
        scored = np.zeros(n, dtype=np.int64)
        postings = np.zeros(n, dtype=np.int64)
        stats = {"n_positive": n_positive, "scored": scored, "postings": postings}
        if k == 0 or n == 0:
            return (top, stats) if return_stats else top
        q = Queries(Q.indptr.astype(np.int64), Q.indices, Q.data)
        if algorithm == "auto":
            long = np.diff(Q.indptr) > LONG_QUERY_TERMS
            plan = [("maxscore", np.flatnonzero(~long)), ("dense", np.flatnonzero(long))]
        else:
            plan = [(algorithm, np.arange(n))]
        arrays = Postings(self.indptr, self.docs, self.impacts)
        term_max = self.term_max
        if len(allowed.indptr) == 2 and algorithm != "exhaustive":  # one filter for all
            restricted = self._restricted(Q, allowed.ids)
            if restricted is not None:
                arrays, term_max = restricted
        out = TopK(top, n_positive, scored, postings)

        def run(kernel, rows):
            if kernel == "maxscore":
                maxscore_top_k(q, arrays, term_max, self.n_docs, k, rows, allowed, deleted, out)
            elif kernel == "dense":
                dense_top_k(q, arrays, self.n_docs, k, rows, allowed, deleted, out)
            else:
                exhaustive_top_k(q, arrays, self.n_docs, k, rows, allowed, deleted, top, n_positive)

        chunks = [
            (kernel, rows[s : s + _QUERY_CHUNK])
            for kernel, rows in plan
            for s in range(0, len(rows), _QUERY_CHUNK)
        ]
        workers = min(n_threads(n_jobs), len(chunks))
        if workers <= 1:
            for kernel, rows in plan:
                if len(rows):
                    run(kernel, rows)
        else:
            # The kernels release the GIL and write into ``top``: threads of this process,
            # never joblib's active backend (under Dask it would run them on copies).
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(lambda chunk: run(*chunk), chunks))
        if algorithm == "exhaustive" and return_stats:
            rows = np.repeat(np.arange(n), np.diff(Q.indptr))
            lengths = np.diff(self.indptr)[Q.indices]
            scored[:] = postings[:] = np.bincount(rows, weights=lengths, minlength=n)
        return (top, stats) if return_stats else top

    def _restricted(self, Q, ids):
        """The postings of the queries' terms restricted to the documents ``ids`` (the
        filter they share), with each term's largest impact among them: a batch of
        queries under one small filter then ranks a small index (the rest of the
        kernels' work unchanged, the scores the same). None when copying them would cost
        more than it saves the queries."""
        lengths = np.diff(self.indptr)
        terms = np.unique(Q.indices)
        sizes = lengths[terms]
        total = int(sizes.sum())
        # What the copy saves each query: leapfrogging a list reads up to the filter's size
        # of it, the copy only its allowed postings (expected: the filter's share of it).
        read = lengths[Q.indices]
        saved = (np.minimum(read, len(ids)) - read * (len(ids) / max(1, self.n_docs))).sum()
        if total + self.n_docs // 8 >= _RESTRICT_FACTOR * saved:
            return None
        first = np.cumsum(sizes) - sizes
        where = np.arange(total) + np.repeat(self.indptr[terms] - first, sizes)
        docs = self.docs[where]
        mask = np.zeros(self.n_docs, dtype=bool)
        mask[ids] = True
        keep = mask[docs]
        counts = np.zeros(self.n_terms, dtype=np.int64)
        counts[terms] = np.bincount(np.repeat(np.arange(len(terms)), sizes)[keep],
                                    minlength=len(terms))  # fmt: skip
        indptr = np.zeros(self.n_terms + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        impacts = self.impacts[where[keep]]
        term_max = np.zeros(self.n_terms, dtype=np.float32)
        nonempty = counts > 0
        if len(impacts):
            term_max[nonempty] = np.maximum.reduceat(impacts, indptr[:-1][nonempty])
        return Postings(indptr, np.ascontiguousarray(docs[keep]), impacts), term_max


def rank_texts(
    index: InvertedIndex, encode: Callable[[Sequence], sp.csr_matrix], X: Sequence, k: int,
    n_jobs=None, allowed=None,
) -> np.ndarray:  # fmt: skip
    """The top k of ``index`` for texts, encoded by ``encode`` (texts -> query matrix),
    each restricted to its filter of ``allowed`` (:func:`check_allowed`).

    With several jobs, the encoding (Python, holding the GIL) and the ranking (the kernel,
    without it) overlap: this thread encodes chunk after chunk while ``n_jobs`` threads rank
    the chunks already encoded. The result does not depend on ``n_jobs``.
    """
    n_jobs = n_threads(n_jobs)
    allowed = check_allowed(allowed, len(X), index.n_docs)
    if n_jobs <= 1 or len(X) <= _TEXT_CHUNK:
        return index.top_k(encode(X), k, n_jobs=n_jobs, allowed=allowed)

    def chunk_filter(s):
        return None if allowed is None else allowed._replace(row=allowed.row[s : s + _TEXT_CHUNK])

    with ThreadPoolExecutor(n_jobs) as pool:
        # Everything that holds the GIL (encoding, checking) stays in this thread: the
        # workers only run the kernels.
        ranked = [
            pool.submit(
                index._top_k,
                index._queries(encode(X[s : s + _TEXT_CHUNK])),
                k,
                allowed=chunk_filter(s),
            )  # fmt: skip
            for s in range(0, len(X), _TEXT_CHUNK)
        ]
        return np.vstack([r.result() for r in ranked])


class IndexRankMixin:
    """``rank`` from the inverted index, for the rankers that hold one (``index_``) of their
    candidates: TF-IDF and BM25 match.

    A ranker supplies ``_pool_impacts(pool)``, the impacts of a pool's texts (the
    documents of an index built for one call), and ``_index_queries(X)``, the query
    weights of contexts; contexts with match-type annotations (``types_``) take the dense
    path of :class:`irdialog.base.RankerMixin`.
    """

    def rank(self, X, k: int = 10, candidates=None, *, n_jobs=None, allowed=None) -> np.ndarray:
        """The indices of the k best candidates per context, best first.

        Scored from the inverted index (:class:`~irdialog.retrieval.InvertedIndex`): only
        the postings of the context's words are read, MaxScore skips the candidates that
        cannot enter the top k, and no row of scores is built, so a query costs far less
        than the number of candidates. The ranking, ties broken by candidate index, is
        exactly that of ``decision_function``. Contexts with match-type annotations take
        the dense path.

        Parameters
        ----------
        X : sequence of Context or str
        k : int, default=10
        candidates : sequence of str, default=None
            A pool to rank instead of ``candidates_``, indexed for this call with the
            fitted statistics (IDF weights; for BM25 also the average length); indices
            are into the pool.
        n_jobs : int, default=None
            Threads ranking chunks of contexts (-1: every core); the result is the same.
        allowed : array-like or sequence of array-like, default=None
            A filter: the candidates (of ``candidates_``, or of the pool) each context
            may return, as a boolean mask or an array of indices, for every context or
            one per context (:meth:`~irdialog.retrieval.InvertedIndex.top_k`). The
            result is the exact top k of the allowed candidates; a context allowed fewer
            than k gets them all, ranked, and its row is padded with -1. Not with
            match-type annotations.

        Returns
        -------
        top : int64 ndarray of shape (n_samples, min(k, n_candidates))
            With ``allowed``, of shape (n_samples, min(k, m)), ``m`` the size of the
            largest filter.

        Examples
        --------
        >>> from irdialog import TfidfRanker
        >>> model = TfidfRanker(candidates=["turn it off", "turn on the light", "hello"])
        >>> model.fit(["hi"], ["hello"]).rank(["turn the light on"], k=2)
        array([[1, 0]])
        >>> model.rank(["the light"], k=1, candidates=["a light", "hello", "the light"])
        array([[2]])
        >>> model.rank(["turn the light on"], k=2, allowed=[0, 2])
        array([[0, 2]])
        """
        check_is_fitted(self)
        k = check_positive_int(k, "k")
        if self.types_:
            if allowed is not None:
                raise ValueError(
                    "allowed= filters the inverted index, which contexts with match-type "
                    "annotations do not use; filter the columns of decision_function."
                )
            return super().rank(X, k, candidates)
        if candidates is None:
            check_has_candidates(self)
            index = self.index_
        else:
            pool = check_responses(candidates, name="candidates")
            index = InvertedIndex.from_matrix(self._pool_impacts(pool))
        return rank_texts(index, self._index_queries, check_contexts(X), k, n_jobs, allowed)
