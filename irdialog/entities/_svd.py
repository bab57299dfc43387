"""SVD recommender: the collaborative-filtering baseline of the Movie Dialog paper (section 3.5).

Each training context is a user: the entities it mentions (the movies the user liked) and the
entities of its gold response (the movie recommended to them) are the items the user likes,
and all other text is thrown away. The user x item matrix gets a truncated SVD; a new user's
liked list is folded into the latent item space and every item is scored by its projection,
``q V V^T`` ("PureSVD", Cremonesi et al. 2010), the liked items excluded.

Columns can be reweighted before the SVD by ``(n_j + shrinkage) ** -popularity_exponent``,
``n_j`` the number of users holding item j: 0 keeps the plain binary matrix (the paper's
baseline), 0.5 gives every column unit norm (the item-item Gram matrix becomes the cosine
similarity), with ``shrinkage`` keeping items seen by one or two users from dominating.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds
from sklearn.base import BaseEstimator
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import RankerMixin, check_contexts, check_responses, resolve_candidates
from ..text import TOKENIZERS, Analyzer, _ragged
from ._parser import EntityParser, entity_key

# Fold-in vectors have unit norm and V has orthonormal columns, so every item score lies in
# [-1, 1]: this score puts liked items (and responses naming no known item) below them all.
EXCLUDED_SCORE = -2.0
# Below this many matrix entries (or when n_components reaches the smaller side) the SVD is
# computed densely with LAPACK: exact, and free of ARPACK's k < min(shape) limit.
_DENSE_SVD_MAX_SIZE = 4_000_000


def _truncated_svd(M: sp.csr_matrix, k: int, random_state) -> tuple[np.ndarray, np.ndarray]:
    """The k largest singular values (descending) and right singular vectors (k x n)."""
    n_min = min(M.shape)
    if k >= n_min - 1 or M.shape[0] * M.shape[1] <= _DENSE_SVD_MAX_SIZE:
        _, s, vt = np.linalg.svd(M.toarray(), full_matrices=False)
        return s[:k], vt[:k]
    v0 = check_random_state(random_state).uniform(-1.0, 1.0, n_min)
    _, s, vt = svds(M, k=k, v0=v0, solver="arpack")
    order = np.argsort(-s, kind="stable")
    return s[order], vt[order]


def _binary_rows(rows: list[list[int]], n_columns: int) -> sp.csr_matrix:
    """A 0/1 CSR matrix with a one at each (row, column) listed; repeats count once."""
    indptr, indices = _ragged(rows, np.int64)
    m = sp.csr_matrix(
        (np.ones(len(indices)), indices, indptr), shape=(len(rows), n_columns), dtype=np.float64
    )
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


class SVDRecommender(RankerMixin, BaseEstimator):
    """Truncated-SVD recommender over the entities of dialog text (or explicit ratings).

    ``fit`` turns each context and its gold response into a user who likes every entity
    found in them (movies, by the longest-match parser of
    :class:`~irdialog.entities.EntityParser`), factorises the user x item matrix and keeps
    the top ``n_components`` right singular vectors V. A new context is folded in: its
    entities give a row q (weighted like the training columns, scaled to unit norm) and
    every candidate item j scores ``(q V) . V_j``; entities of the context score
    :data:`EXCLUDED_SCORE` (liked items are not recommended). ``fit_ratings`` builds the
    matrix from explicit (user, item, rating) triples instead, e.g. MovieLens.

    Parameters
    ----------
    n_components : int, default=50
        Latent dimension (the paper's d = 50); capped at the smaller side of the matrix.
    entities : sequence of str or None, default=None
        The entity dictionary (e.g. :func:`irdialog.datasets.load_movie_entities`).
        None: the items are the distinct gold responses of ``fit`` (and ``candidates``),
        found in context text by the same longest-match rule.
    candidates : sequence of str or None, default=None
        The items to rank (e.g. every entity). None: every entity met in ``fit``, in order
        of first appearance. Candidates are matched case-insensitively; a candidate that
        repeats an earlier one up to case is dropped.
    popularity_exponent : float, default=0.5
        Column weight exponent b in ``(n_j + shrinkage) ** -b`` (0: plain binary SVD).
    shrinkage : float, default=5.0
        Added to the item counts ``n_j`` in the column weights.
    max_item_frequency : float, default=1.0
        Items held by more than this fraction of the training users are left out of the
        factorisation (template words that are also entities, such as "film" or "movies",
        occur in most Movie Dialog requests); they then score 0, like unseen items.
    exclude_liked : bool, default=True
        Score the items of the context itself :data:`EXCLUDED_SCORE`.
    random_state : int, RandomState instance or None, default=None
        Seeds the ARPACK start vector (large matrices only; small ones use a dense SVD).
    tokenizer : {"word", "char"} or callable, default="word"
        How names and texts are split into tokens (the parser's, see
        :class:`~irdialog.entities.EntityParser`): ``"word"``, the words and punctuation of
        a script that separates words by spaces; ``"char"``, characters (white space
        dropped), for scripts that do not (Chinese, Japanese, Thai); or a callable from str
        to a list of str.

    Attributes
    ----------
    candidates_ : ndarray of str
        The items, the columns of ``decision_function``.
    parser_ : EntityParser
        Finds the items in text (its entity ids map to columns through ``item_index_``).
    item_index_ : ndarray of int64 of shape (n_entities,)
        Column of each entity of ``parser_`` (-1: not a candidate).
    item_ids_ : ndarray or None
        The raw item ids of the columns after ``fit_ratings``; None after ``fit``.
    item_counts_ : ndarray of int64 of shape (n_items,)
        Number of training users holding each item.
    item_weights_ : ndarray of float64 of shape (n_items,)
        Column weights (0 for items left out).
    components_ : ndarray of float64 of shape (``n_components_``, n_items)
        Right singular vectors of the weighted matrix (rows of V^T).
    singular_values_ : ndarray of float64 of shape (``n_components_``,)
        The singular values, largest first.
    n_components_ : int
        The latent dimension used.

    See Also
    --------
    irdialog.entities.EntityParser : the entity dictionary and longest-match parser.
    irdialog.datasets.load_movielens_ratings : explicit ratings for :meth:`fit_ratings`.

    References
    ----------
    Dodge et al. (2016). Evaluating Prerequisite Qualities for Learning End-to-End Dialog
    Systems. ICLR. Section 3.5 and appendix B (d = 50).
    Cremonesi, Koren & Turrin (2010). Performance of recommender algorithms on top-N
    recommendation tasks. RecSys (PureSVD).

    Examples
    --------
    >>> from irdialog import SVDRecommender
    >>> X = ["I liked Heat and Ronin.", "Ronin, Heat", "I liked Up and Cars.", "Cars, Up"]
    >>> y = ["Collateral", "Collateral", "Toy Story", "Toy Story"]
    >>> movies = ["Heat", "Ronin", "Collateral", "Up", "Cars", "Toy Story"]
    >>> model = SVDRecommender(n_components=2, entities=movies).fit(X, y)
    >>> model.predict(["A film like Heat and Ronin?", "I loved Cars and Up"]).tolist()
    ['Collateral', 'Toy Story']
    >>> model.decision_function(["I liked Heat"]).round(2)
    array([[-2.  ,  0.33,  0.33,  0.  ,  0.  ,  0.  ]])
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "entities": ["array-like", None],
        "candidates": ["array-like", None],
        "popularity_exponent": [Interval(Real, 0, None, closed="left")],
        "shrinkage": [Interval(Real, 0, None, closed="left")],
        "max_item_frequency": [Interval(Real, 0, 1, closed="right")],
        "exclude_liked": ["boolean"],
        "random_state": ["random_state"],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    }

    def __init__(
        self,
        *,
        n_components=50,
        entities=None,
        candidates=None,
        popularity_exponent=0.5,
        shrinkage=5.0,
        max_item_frequency=1.0,
        exclude_liked=True,
        random_state=None,
        tokenizer="word",
    ):
        self.n_components = n_components
        self.entities = entities
        self.candidates = candidates
        self.popularity_exponent = popularity_exponent
        self.shrinkage = shrinkage
        self.max_item_frequency = max_item_frequency
        self.exclude_liked = exclude_liked
        self.random_state = random_state
        self.tokenizer = tokenizer

    # -- items ------------------------------------------------------------------------------

    def _set_items(self, names, candidate_names) -> None:
        """Build ``parser_`` over ``names`` and the columns: ``candidate_names`` if given,
        else every entity (filled in by the caller)."""
        self.parser_ = EntityParser(names, min_count=1, tokenizer=self.tokenizer).fit([""])
        self.item_index_ = np.full(len(self.parser_.entity_names_), -1, dtype=np.int64)
        if candidate_names is None:
            return
        index = self.parser_.entity_index_
        analyzer = Analyzer(tokenizer=self.tokenizer)
        keep = []
        for name in candidate_names:
            e = index.get(entity_key(name, analyzer))
            if e is not None and self.item_index_[e] < 0:
                self.item_index_[e] = len(keep)
                keep.append(name)
        self.candidates_ = np.asarray(keep, dtype=object)

    def _entity_ids(self, text: str, cache: dict) -> list[int]:
        ids = cache.get(text)
        if ids is None:
            ids = cache[text] = self.parser_.entity_ids(text)
        return ids

    def _context_columns(self, ctx, cache) -> list[int]:
        item = self.item_index_
        cols = []
        for text in [t.text for t in ctx.history] + [ctx.query]:
            cols.extend(int(item[e]) for e in self._entity_ids(text, cache) if item[e] >= 0)
        return cols

    def item_matrix(self, X) -> sp.csr_matrix:
        """The items each context mentions, as a 0/1 matrix over ``candidates_``.

        Parameters
        ----------
        X : sequence of Context or str

        Returns
        -------
        items : sparse matrix of shape (n_samples, n_items)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        cache: dict = {}
        return _binary_rows([self._context_columns(c, cache) for c in X], len(self.candidates_))

    # -- fitting ----------------------------------------------------------------------------

    def _factorise(self, M: sp.csr_matrix) -> None:
        """Column weights, item counts and the truncated SVD of the user x item matrix M."""
        counts = M.getnnz(axis=0).astype(np.int64)
        used = (counts > 0) & (counts <= self.max_item_frequency * M.shape[0])
        weights = np.zeros(M.shape[1])
        weights[used] = (counts[used] + self.shrinkage) ** -float(self.popularity_exponent)
        cols = np.flatnonzero(used)
        Mw = (M[:, cols] @ sp.diags(weights[cols])).tocsr()
        k = min(int(self.n_components), *Mw.shape) if cols.size else 0
        components = np.zeros((k, M.shape[1]))
        singular = np.zeros(k)
        if k:
            singular, vt = _truncated_svd(Mw, k, self.random_state)
            components[:, cols] = vt
        self.item_counts_ = counts
        self.item_weights_ = weights
        self.components_ = components
        self.singular_values_ = singular
        self.n_components_ = k

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on dialog text: each (context, gold response) pair is one user.

        Parameters
        ----------
        X : sequence of Context or str
            The contexts (the user's liked items are the entities they mention).
        y : sequence of str
            The gold responses (their entities are liked too).

        Returns
        -------
        self : SVDRecommender
        """
        X = check_contexts(X)
        y = check_responses(y, len(X))
        cands = None if self.candidates is None else list(resolve_candidates(self.candidates, y))
        if self.entities is None:
            names = [*(cands or []), *dict.fromkeys(y)]
        else:
            names = [*self.entities, *(cands or [])]
        self._set_items(names, cands)
        self.item_ids_ = None
        cache: dict = {}
        parsed = [
            [
                e
                for t in [*(t.text for t in c.history), c.query, r]
                for e in self._entity_ids(t, cache)
            ]
            for c, r in zip(X, y)
        ]
        if cands is None:  # every entity met, in order of first appearance
            seen = dict.fromkeys(e for row in parsed for e in row)
            self.item_index_[list(seen)] = np.arange(len(seen))
            self.candidates_ = self.parser_.entity_names_[list(seen)].astype(object)
            if not len(self.candidates_):
                raise ValueError(
                    "No item found: no entity occurs in X or y (pass entities, or candidates)."
                )
        item = self.item_index_
        rows = [[int(item[e]) for e in row if item[e] >= 0] for row in parsed]
        self._factorise(_binary_rows(rows, len(self.candidates_)))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_ratings(self, user_ids, item_ids, ratings=None, *, item_names=None):
        """Fit on explicit ratings (or implicit likes): one matrix row per distinct user.

        Parameters
        ----------
        user_ids, item_ids : array-like of shape (n_ratings,)
            Who rated what (any hashable ids, e.g. MovieLens ``userId`` and ``movieId``).
        ratings : array-like of float of shape (n_ratings,), default=None
            The matrix values (missing ratings are 0, as in PureSVD); None: 1 for every
            pair. A repeated (user, item) pair keeps its last rating.
        item_names : dict or None, default=None
            Item id -> name (e.g. the ``titles`` of
            :func:`~irdialog.datasets.load_movielens_ratings`): the candidate strings, and
            the entity dictionary for text contexts. Default: ``str(item_id)``. A name
            that repeats an earlier one (up to case and punctuation) gets `` [item_id]``
            appended.

        Returns
        -------
        self : SVDRecommender

        Examples
        --------
        >>> from irdialog import SVDRecommender
        >>> users, items = [1, 1, 2, 2, 3, 3], [10, 20, 10, 20, 30, 40]
        >>> model = SVDRecommender(n_components=2).fit_ratings(users, items, [5, 4, 4, 5, 5, 5])
        >>> model.candidates_.tolist()
        ['10', '20', '30', '40']
        >>> liked = model.item_matrix(["10"])           # a new user who liked item 10
        >>> model.candidates_[model.score_items(liked).argmax()]
        '20'
        """
        if item_names is not None and not isinstance(item_names, Mapping):
            raise TypeError(
                f"item_names must be a dict item id -> name, or None; got "
                f"{type(item_names).__name__}."
            )
        users = np.asarray(user_ids)
        items = np.asarray(item_ids)
        values = np.ones(len(users)) if ratings is None else np.asarray(ratings, dtype=np.float64)
        if users.ndim != 1 or items.shape != users.shape or values.shape != users.shape:
            raise ValueError(
                f"user_ids, item_ids and ratings must be 1-D and of one length, got shapes "
                f"{users.shape}, {items.shape} and {values.shape}."
            )
        if not len(users):
            raise ValueError("No rating given: user_ids is empty.")
        if not np.isfinite(values).all():
            raise ValueError("ratings must be finite.")
        item_ids_, cols = np.unique(items, return_inverse=True)
        _, rows = np.unique(users, return_inverse=True)
        names, keys = [], set()
        analyzer = Analyzer(tokenizer=self.tokenizer)
        for i in item_ids_.tolist():
            name = str(i) if item_names is None else str(item_names.get(i, i))
            key = entity_key(name, analyzer)
            if not key or key in keys:  # an empty or repeated name: tell the items apart
                name = f"{name} [{i}]"
                key = entity_key(name, analyzer)
            keys.add(key)
            names.append(name)
        self._set_items(names, names)
        self.item_ids_ = item_ids_
        # coo -> csr would sum repeats: keep only the last rating of each (user, item) pair,
        # the first occurrence of its key in the reversed list.
        key = rows.astype(np.int64) * len(item_ids_) + cols
        _, first = np.unique(key[::-1], return_index=True)
        last = len(key) - 1 - first
        M = sp.csr_matrix(
            (values[last], (rows[last], cols[last])), shape=(int(rows.max()) + 1, len(item_ids_))
        )
        M.eliminate_zeros()
        self._factorise(M)
        return self

    # -- scoring ----------------------------------------------------------------------------

    def _latent(self, R: sp.csr_matrix) -> np.ndarray:
        """Unit-norm weighted fold-in of user rows R, in the latent space: (n, k)."""
        Rw = R @ sp.diags(self.item_weights_)
        norms = np.sqrt(np.asarray(Rw.multiply(Rw).sum(axis=1)).ravel())
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return np.asarray(sp.diags(scale) @ Rw @ self.components_.T)

    def score_items(self, R) -> np.ndarray:
        """Fold users in and score every item: the ranking behind ``decision_function``.

        Parameters
        ----------
        R : array-like or sparse matrix of shape (n_users, n_items)
            The users' ratings (or 0/1 likes, finite) over ``candidates_``; for
            ``fit_ratings`` models, column j is item ``item_ids_[j]``.

        Returns
        -------
        scores : ndarray of shape (n_users, n_items)
            In [-1, 1]; items the user rated score :data:`EXCLUDED_SCORE` when
            ``exclude_liked``.
        """
        check_is_fitted(self)
        if np.ndim(R) != 2:
            raise ValueError(
                f"R must be 2-D, one row of item ratings per user (n_users, n_items); got a "
                f"{np.ndim(R)}-D input. Pass [ratings] for a single user."
            )
        R = sp.csr_matrix(
            check_array(
                R, accept_sparse="csr", dtype=np.float64, input_name="R", ensure_min_samples=0
            )
        )
        if R.shape[1] != len(self.candidates_):
            raise ValueError(
                f"R has {R.shape[1]} columns but the model has {len(self.candidates_)} items."
            )
        scores = self._latent(R) @ self.components_
        if self.exclude_liked:
            r, c = R.nonzero()
            scores[r, c] = EXCLUDED_SCORE
        return scores

    def decision_function(self, X) -> np.ndarray:
        """Scores of every item for each context: fold-in projection, liked items excluded.

        Parameters
        ----------
        X : sequence of Context or str

        Returns
        -------
        scores : ndarray of shape (n_samples, n_items)
        """
        return self.score_items(self.item_matrix(X))

    def _score_pairs(self, X, responses) -> np.ndarray:
        # A response scores the mean of its items' scores (an item it names twice counts
        # twice); one naming no item is excluded. One entry per (response, item mention),
        # in text order, so that each mean sums its scores in the order they are named.
        R = self.item_matrix(X)
        latent = self._latent(R)
        cache: dict = {}
        item = self.item_index_
        named = [
            [int(item[e]) for e in self._entity_ids(t, cache) if item[e] >= 0] for t in responses
        ]
        counts = np.array([len(c) for c in named], dtype=np.int64)
        rows = np.repeat(np.arange(len(responses)), counts)
        cols = np.fromiter((j for c in named for j in c), dtype=np.int64, count=len(rows))
        # A (1 x k) @ (k x 1) matmul per entry, summed the way BLAS sums decision_function's
        # products; einsum rounds otherwise (a score that cancels to ~0 can change sign).
        scores = (latent[rows][:, None, :] @ self.components_.T[cols][:, :, None]).ravel()
        if self.exclude_liked:
            scores[np.asarray(R[rows, cols]).ravel() != 0] = EXCLUDED_SCORE
        sums = np.bincount(rows, weights=scores, minlength=len(responses))
        out = np.full(len(responses), EXCLUDED_SCORE)
        return np.divide(sums, counts, out=out, where=counts > 0)
