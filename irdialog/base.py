"""The ranking contract shared by every irdialog model.

A model ranks candidate responses for contexts. ``X`` is a sequence of contexts (see
:class:`Context`; a plain string is a context with no history), ``y`` the gold responses.
Candidates are either a fixed set given as the ``candidates`` parameter or the distinct
responses seen in ``fit``; they are stored as ``candidates_``, like ``classes_`` in a
classifier. :class:`RankerMixin` turns two model hooks into the full interface:

- ``decision_function(X)``: scores against ``candidates_``, shape (n_samples, n_candidates);
- ``_score_pairs(X, responses)``: the score of each (context, response) pair.

Everything else (``rank``, ``predict``, ``score``, ``rank_candidates``) is derived here, in
bounded-memory blocks of contexts.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from itertools import chain
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._compat import Interval, pretty_print_like_estimators
from ._topk import blocked_top_k, inner_product_top_k

SPEAKERS = ("user", "bot", "kb")

# rank/predict/score score contexts in blocks of at most this many (context, candidate)
# scores (128 MB of float64), and at most MAX_BLOCK_ROWS contexts.
BLOCK_ELEMENTS = 1 << 24
MAX_BLOCK_ROWS = 1024
# rank_candidates encodes the distinct contexts and texts of at most this many (context,
# candidate) pairs at a time (at worst as many texts: 128 MB of 32-dimensional float64
# embeddings), and scores them in blocks of PAIR_BLOCK pairs.
LIST_GROUP_PAIRS = 1 << 19
PAIR_BLOCK = MAX_BLOCK_ROWS * 16
# The constraint of the ``n_jobs`` of the estimators that take one, joblib's convention: None,
# -1 (every core), -2 (all but one)... or a positive count.
N_JOBS_CONSTRAINT = [
    Interval(Integral, None, -1, closed="right"),
    Interval(Integral, 1, None, closed="left"),
    None,
]


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance of a conversation: its speaker (user, bot or kb) and its text.

    Examples
    --------
    >>> Turn("kb", "resto_1 R_phone resto_1_phone").speaker
    'kb'
    >>> Turn("narrator", "hi")
    Traceback (most recent call last):
    ...
    ValueError: Turn speaker must be one of ('user', 'bot', 'kb'), got 'narrator'.
    """

    speaker: str
    text: str

    def __post_init__(self):
        if self.speaker not in SPEAKERS:
            raise ValueError(f"Turn speaker must be one of {SPEAKERS}, got {self.speaker!r}.")
        if not isinstance(self.text, str):
            raise TypeError(f"Turn text must be a str, got {type(self.text).__name__}.")


@dataclass(frozen=True, slots=True)
class Context:
    """The input of a ranker: the previous turns (oldest first) and the last user utterance.

    Parameters
    ----------
    history : tuple of Turn
        Previous turns, oldest first. API results and story facts have speaker ``"kb"``.
    query : str
        The last user utterance (or the question, for bAbI QA).
    entities : tuple of (str, str)
        ``(word, type)`` pairs of knowledge-base entities found in the query or history,
        filled in by :class:`irdialog.features.MatchTypeFeaturizer`; empty otherwise.

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> c = Context(history=(Turn("user", "hi"), Turn("bot", "hello")), query="book a table")
    >>> c.text()
    'hi hello book a table'
    """

    history: tuple[Turn, ...] = ()
    query: str = ""
    entities: tuple[tuple[str, str], ...] = field(default=())

    def text(self, use_history: bool = True) -> str:
        """The whole conversation joined with spaces, or the query alone."""
        if not use_history:
            return self.query
        return " ".join([t.text for t in self.history] + [self.query])


def check_contexts(X, *, name: str = "X") -> list[Context]:
    """Validate a sequence of contexts, accepting plain strings as history-less contexts.

    Raises a ValueError or TypeError naming the offending position; never returns a
    partially converted list.
    """
    if isinstance(X, (str, Context)):
        raise TypeError(
            f"{name} must be a sequence of contexts, got a single {type(X).__name__}; "
            f"wrap it in a list."
        )
    if hasattr(X, "columns"):  # a pandas (or polars) DataFrame iterates over column names
        raise TypeError(
            f"{name} must be a sequence of contexts, got a {type(X).__name__}; pass one "
            f"column of texts (for example df['utterance']) or a list of Context."
        )
    if getattr(X, "ndim", 1) != 1:
        raise ValueError(
            f"{name} must be a 1-D sequence of contexts, got an array of shape {X.shape}."
        )
    try:
        n = len(X)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of contexts, got {type(X).__name__}.") from None
    if n == 0:
        raise ValueError(f"{name} is empty: at least one context is needed.")
    out = []
    for i, x in enumerate(X):
        if isinstance(x, Context):
            out.append(x)
        elif isinstance(x, str):
            out.append(Context(query=x))
        else:
            raise TypeError(
                f"{name}[{i}] must be a Context or a str, got {type(x).__name__} ({x!r:.60})."
            )
    return out


def _check_response_sequence(y, name: str) -> None:
    """A sequence of responses: not a str, not a DataFrame or a 2-D array."""
    if isinstance(y, str):
        raise TypeError(f"{name} must be a sequence of responses, got a single str.")
    if hasattr(y, "columns") or getattr(y, "ndim", 1) != 1:
        raise TypeError(
            f"{name} must be a 1-D sequence of responses, got a {type(y).__name__}"
            f"{f' of shape {y.shape}' if hasattr(y, 'shape') else ''}."
        )


def _check_list(items, name: str, i: int) -> None:
    """Refuse a single str as ``name[i]``, a list of str (it would be split into characters)."""
    if isinstance(items, str):
        raise TypeError(
            f"{name}[{i}] must be a sequence of str, got a single str ({items!r:.60}); "
            "wrap it in a list."
        )


def check_responses(y, n_samples: int | None = None, *, name: str = "y") -> np.ndarray:
    """Validate gold responses: a sequence of strings, as long as X."""
    _check_response_sequence(y, name)
    y = list(y)
    for i, r in enumerate(y):
        if isinstance(r, (list, tuple)) and name == "y":
            raise TypeError(
                f"{name}[{i}] holds several right responses ({r!r:.60}); fit learns from one "
                f"response per context: give one (context, response) pair per right response, "
                f"e.g. X2, y2 = zip(*[(x, r) for x, rs in zip(X, y) for r in rs]). score "
                f"and the metrics of irdialog.metrics take several right responses."
            )
        if not isinstance(r, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(r).__name__} ({r!r:.60}).")
    if n_samples is not None and len(y) != n_samples:
        raise ValueError(f"X has {n_samples} contexts but {name} has {len(y)} responses.")
    if not y:
        raise ValueError(f"{name} is empty: at least one response is needed.")
    return np.asarray(y, dtype=object)


def check_gold_responses(y, n_samples: int | None = None, *, name: str = "y") -> list:
    """Validate the right responses of each context, for scoring: each item of ``y`` a str
    (one right response) or a list or tuple of str (several). Returns a list of tuples.

    Examples
    --------
    >>> check_gold_responses(["hello", ("hi", "hey")])
    [('hello',), ('hi', 'hey')]
    >>> check_gold_responses([[]])
    Traceback (most recent call last):
    ...
    ValueError: y[0] is an empty list: every context needs at least one right response.
    """
    _check_response_sequence(y, name)
    out = []
    for i, r in enumerate(y):
        if isinstance(r, str):
            out.append((r,))
            continue
        if not isinstance(r, (list, tuple, np.ndarray)):
            raise TypeError(
                f"{name}[{i}] must be a str or a list of str, got {type(r).__name__} ({r!r:.60})."
            )
        r = tuple(r)
        if not r:
            raise ValueError(
                f"{name}[{i}] is an empty list: every context needs at least one right response."
            )
        for j, one in enumerate(r):
            if not isinstance(one, str):
                raise TypeError(
                    f"{name}[{i}][{j}] must be a str, got {type(one).__name__} ({one!r:.60})."
                )
        out.append(r)
    if n_samples is not None and len(out) != n_samples:
        raise ValueError(f"X has {n_samples} contexts but {name} has {len(out)} responses.")
    if not out:
        raise ValueError(f"{name} is empty: at least one response is needed.")
    return out


def iter_chunks(chunks, *, y_required: bool = True):
    """The chunks of a streaming fit (``fit_chunks``, ``partial_fit``), each as a checked
    ``(X, y)`` pair: the one chunk protocol of every streaming estimator.

    Parameters
    ----------
    chunks : iterable
        Each chunk an object with attributes ``X`` and ``y`` (the Bunches of
        :func:`irdialog.datasets.iter_ubuntu`) or an ``(X, y)`` pair.
    y_required : bool, default=True
        Whether a chunk must have responses; when not, ``y`` may be None.

    Yields
    ------
    X : list of Context
    y : ndarray of str, or None

    Examples
    --------
    >>> [(len(X), y.tolist()) for X, y in iter_chunks([(["hi", "yo"], ["hello", "hey"])])]
    [(2, ['hello', 'hey'])]
    >>> next(iter_chunks([["hi"]]))
    Traceback (most recent call last):
    ...
    TypeError: chunk 0 must have attributes X and y or be an (X, y) pair, got list.
    """
    for k, chunk in enumerate(chunks):
        if hasattr(chunk, "X"):
            X, y = chunk.X, chunk.y
        elif isinstance(chunk, tuple | list) and len(chunk) == 2:
            X, y = chunk
        else:
            raise TypeError(
                f"chunk {k} must have attributes X and y or be an (X, y) pair, got "
                f"{type(chunk).__name__}."
            )
        X = check_contexts(X)
        if y is not None or y_required:
            y = check_responses(y, len(X))
        yield X, y


def resolve_candidates(candidates, y) -> np.ndarray:
    """The candidate set of a fit: the given candidates, or the distinct responses of y in
    order of first appearance."""
    if candidates is None:
        return np.asarray(list(dict.fromkeys(y)), dtype=object)
    cands = check_responses(candidates, name="candidates")
    if len(set(cands)) != len(cands):
        # Duplicates would make hits@1 depend on which copy wins a tie.
        cands = np.asarray(list(dict.fromkeys(cands)), dtype=object)
    return cands


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores of each row, best first; ties go to the lower index,
    whatever k, so that ``rank(X, 1)`` is always the first column of ``rank(X, 10)``."""
    if k == 1:
        return np.argmax(scores, axis=1)[:, None]  # argmax returns the first maximum
    k = min(k, scores.shape[1])
    kth = -np.partition(-scores, k - 1, axis=1)[:, [k - 1]]
    contenders = scores >= kth  # every score that can make the top k, ties included
    width = int(contenders.sum(axis=1).max())
    # A stable sort of booleans (a radix sort in numpy) lists the contenders in index order.
    idx = np.argsort(~contenders, axis=1, kind="stable")[:, :width]
    top = np.take_along_axis(scores, idx, axis=1)
    top[~np.take_along_axis(contenders, idx, axis=1)] = -np.inf
    order = np.argsort(-top, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(idx, order, axis=1)


def nested_params(estimator, name: str) -> list[str]:
    """The parameters of ``estimator`` named ``name``, its own and its nested estimators'
    (``step__name``), as ``get_params`` spells them.

    Examples
    --------
    >>> from irdialog import SeedEnsembleRanker, SupervisedEmbeddingRanker
    >>> nested_params(SeedEnsembleRanker(SupervisedEmbeddingRanker()), "random_state")
    ['random_state', 'ranker__random_state']
    """
    return [n for n in estimator.get_params() if n.split("__")[-1] == name]


def check_positive_int(value, name: str) -> int:
    """``value`` (the parameter ``name``, such as ``k`` of ``rank``): a positive integer."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def check_has_candidates(estimator) -> None:
    """Raise a clear error when a fitted ranker has no fixed candidate set to rank."""
    if len(estimator.candidates_) == 0:
        raise ValueError(
            f"{type(estimator).__name__} has no fixed candidates (it was fitted without a "
            "candidates parameter, e.g. by streaming): score per-example lists with "
            "rank_candidates(X, candidate_lists), or refit with candidates=..."
        )


# A parameter holding more items than this is summarised in reprs (a candidate set, a KB).
_REPR_MAX_ITEMS = 8


class _Summary:
    """Stands for a long parameter value in a repr: ``<list of 4212 str>``."""

    def __init__(self, value):
        kinds = sorted({type(v).__name__ for v in list(value)[:1000]})
        self.text = f"<{type(value).__name__} of {len(value)} {'/'.join(kinds)}>"

    def __repr__(self):
        return self.text


def _short(value):
    if isinstance(value, BaseEstimator):
        return _short_copy(value)
    if isinstance(value, (list, tuple)) and len(value) <= _REPR_MAX_ITEMS:
        return type(value)(_short(v) for v in value)  # e.g. the steps of a pipeline
    if isinstance(value, (list, tuple, dict, set, np.ndarray)) and len(value) > _REPR_MAX_ITEMS:
        return _Summary(value)
    return value


def _short_copy(estimator):
    short = copy.copy(estimator)
    for name, value in estimator.get_params(deep=False).items():
        setattr(short, name, _short(value))
    return short


class ShortReprMixin:
    """Reprs that summarise long parameter values (``candidates=<list of 4212 str>``)
    where scikit-learn would print thirty of their items.

    Examples
    --------
    >>> from irdialog import TfidfRanker
    >>> TfidfRanker(candidates=[f"answer {i}" for i in range(100)])
    TfidfRanker(candidates=<list of 100 str>)
    """

    def __repr__(self, N_CHAR_MAX=700):
        return BaseEstimator.__repr__(_short_copy(self), N_CHAR_MAX)


pretty_print_like_estimators(ShortReprMixin.__repr__)


def _text_input_tags(tags, *, target_required: bool):
    # Contexts (strings or Context objects), not numeric arrays: scikit-learn's checks
    # that feed 2-D float arrays skip these estimators, saying why.
    tags.input_tags.two_d_array = False
    tags.input_tags.string = True
    tags.target_tags.required = target_required
    return tags


class ContextTransformerMixin(ShortReprMixin, TransformerMixin):
    """Mixin of the Pipeline steps that rewrite contexts (match types, entities, KB memories).

    Their output is contexts, not a table, so ``set_output`` leaves it as it is: a
    ``Pipeline.set_output(transform="pandas")`` passes through them.
    """

    def __sklearn_tags__(self):
        return _text_input_tags(super().__sklearn_tags__(), target_required=False)

    def set_output(self, *, transform=None):
        """Accepted for Pipeline compatibility; the output stays a list of Context."""
        return self


class RankerMixin(ShortReprMixin):
    """Mixin giving ``rank``, ``predict``, ``score`` and ``rank_candidates`` to a ranker.

    Subclasses implement ``fit`` (setting ``candidates_``), ``decision_function`` and
    ``_score_pairs``. ``score`` is hits@1 (per-response accuracy), so ``GridSearchCV``
    works with no scorer argument; other scorers are in :mod:`irdialog.metrics`.

    Rankers take text (contexts), not numeric arrays, and need targets; their scikit-learn
    tags say so (``input_tags.string``, no ``two_d_array``, ``target_tags.required``).
    """

    def __sklearn_tags__(self):
        return _text_input_tags(super().__sklearn_tags__(), target_required=True)

    # Contexts a model's own decision_function may encode at a time.
    _block_size = MAX_BLOCK_ROWS

    def _blocks(self, X):
        check_has_candidates(self)
        X = check_contexts(X)
        rows = max(1, min(MAX_BLOCK_ROWS, BLOCK_ELEMENTS // len(self.candidates_)))
        for start in range(0, len(X), rows):
            yield X[start : start + rows]

    def rank(self, X, k: int = 10, candidates=None) -> np.ndarray:
        """The indices of the k best candidates per context, best first.

        Ties are broken by candidate index, so ranks are deterministic.

        Parameters
        ----------
        X : sequence of Context or str
        k : int, default=10
        candidates : sequence of str, default=None
            A candidate pool to rank instead of ``candidates_``, with no refit: indices
            are into this pool. It is encoded once per call and scored block by block
            with a running top k, so memory stays bounded whatever its size (embedding
            models score it with float32 matrix products).

        Returns
        -------
        top : int64 ndarray of shape (n_samples, min(k, n_candidates))
        """
        check_is_fitted(self)
        k = check_positive_int(k, "k")
        if candidates is not None:
            return self._rank_pool(
                check_contexts(X), check_responses(candidates, name="candidates"), k
            )
        return np.vstack([_top_k(self.decision_function(b), k) for b in self._blocks(X)])

    def _pool_embeddings(self, X: list[Context], pool: np.ndarray):
        """(context embeddings, pool embeddings) whose inner products are the scores, for
        models that embed both sides; None (the default) scores (context, candidate) pairs."""
        return None

    def _rank_pool(self, X: list[Context], pool: np.ndarray, k: int) -> np.ndarray:
        embedded = self._pool_embeddings(X, pool)
        if embedded is not None:  # one float32 product per block
            return inner_product_top_k(*embedded, k)

        # Any other model: its (context, candidate) pair scores, one block at a time.
        def score_block(rows, cols):
            contexts, cands = X[rows], pool[cols]
            pairs = [c for c in contexts for _ in range(len(cands))]
            scores = self._score_pairs(pairs, np.tile(cands, len(contexts)))
            return scores.reshape(len(contexts), len(cands))

        return blocked_top_k(len(X), len(pool), k, score_block)

    def predict(self, X) -> np.ndarray:
        """The best candidate response for each context."""
        top = self.rank(X, k=1)[:, 0]
        return self.candidates_[top]

    def score(self, X, y, sample_weight=None) -> float:
        """Hits@1 (P@1): the fraction of contexts whose best candidate is a right response.

        An item of ``y`` is the right response of its context (a str) or its right
        responses (a list or tuple of str). The best candidate is the one ``predict``
        gives, ties to the lower candidate index. A right response that is not among
        ``candidates_`` counts as a miss. With ``sample_weight``, the weighted fraction.
        """
        X = check_contexts(X)
        y = check_gold_responses(y, len(X))
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (len(X),):
                raise ValueError(
                    f"sample_weight must have one entry per context ({len(X)}), got shape "
                    f"{sample_weight.shape}."
                )
        hit = [best in right for best, right in zip(self.predict(X), y)]
        return float(np.average(hit, weights=sample_weight))

    def rank_candidates(self, X, candidate_lists) -> np.ndarray:
        """Score per-example candidate lists (Ubuntu 1-in-10, Reddit 1-in-10001).

        Parameters
        ----------
        X : sequence of Context or str
        candidate_lists : sequence of sequences of str
            The candidates of each context; lists may differ in length.

        Returns
        -------
        scores : ndarray of shape (n_samples, max_list_length)
            ``scores[i, j]`` scores ``candidate_lists[i][j]``; positions past the end of a
            shorter list are ``-inf``.

        Notes
        -----
        A model whose pair score is a function of one encoding of the context and one of
        the candidate (``_pair_scorer``) encodes each distinct context and candidate text
        once, however many lists hold it, and scores the pairs by gathering their rows, in
        blocks; the others score each pair (``_score_pairs``). Both give the same scores.

        Examples
        --------
        >>> from irdialog import TfidfRanker
        >>> model = TfidfRanker().fit(["hi there", "book a table"], ["hello", "for when?"])
        >>> lists = [["hello", "for when?", "a table"], ["hello there"]]
        >>> model.rank_candidates(["book a table", "hi"], lists).round(2)
        array([[0.  , 0.  , 0.82],
               [0.  , -inf, -inf]])
        """
        check_is_fitted(self)
        X = check_contexts(X)
        if len(candidate_lists) != len(X):
            raise ValueError(
                f"X has {len(X)} contexts but candidate_lists has {len(candidate_lists)} lists."
            )
        for i, cands in enumerate(candidate_lists):
            _check_list(cands, "candidate_lists", i)
        lengths = np.array([len(c) for c in candidate_lists])
        if (lengths == 0).any():
            raise ValueError(f"candidate_lists[{int(np.argmin(lengths))}] is empty.")
        flat = list(chain.from_iterable(candidate_lists))
        if set(map(type, flat)) == {str}:  # the common case, checked in C
            flat = np.asarray(flat, dtype=object)
        else:
            flat = check_responses(flat, name="candidate_lists")
        owner = np.repeat(np.arange(len(X)), lengths)
        ends = np.cumsum(lengths)
        pair_scores = self._gathered_pair_scores(X, owner, flat, ends)
        if pair_scores is None:  # the score depends on the pair
            pair_scores = self._scores_by_pairs(X, owner, flat)
        out = np.full((len(X), lengths.max()), -np.inf)
        col = np.arange(len(flat)) - np.repeat(ends - lengths, lengths)
        out[owner, col] = pair_scores
        return out

    def _pair_scorer(self, X: list[Context], texts: np.ndarray):
        """A scorer of (context, text) pairs given by position, for ``rank_candidates``.

        Models whose pair score is a function of one encoding of the context and one of
        the text override this: they encode each context of ``X`` and each text of
        ``texts`` (all distinct) once, here, and return ``score(rows, cols)``, the float64
        scores of the pairs ``(X[rows[p]], texts[cols[p]])`` (int64 arrays), equal to
        ``_score_pairs`` of the same pairs. None (the default): the score depends on the
        pair (match-type or knowledge-base features), and each pair goes to
        ``_score_pairs``.
        """
        return None

    def _scores_by_pairs(self, X, owner, flat) -> np.ndarray:
        """The scores of the pairs (``X[owner[p]]``, ``flat[p]``) by ``_score_pairs``,
        ``PAIR_BLOCK`` pairs at a time: every context and text encoded once per pair."""
        pair_scores = np.empty(len(flat))
        for start in range(0, len(flat), PAIR_BLOCK):
            sl = slice(start, start + PAIR_BLOCK)
            pair_scores[sl] = self._score_pairs([X[i] for i in owner[sl]], flat[sl])
        return pair_scores

    def _gathered_pair_scores(self, X, owner, flat, ends):
        """The scores of the pairs (``X[owner[p]]``, ``flat[p]``) by ``_pair_scorer``, or
        None when the model has none. The lists are taken in groups of about
        ``LIST_GROUP_PAIRS`` pairs: the distinct contexts and texts of a group are encoded
        once, then its pairs are scored ``PAIR_BLOCK`` at a time by gathering their rows."""
        pair_scores = np.empty(len(flat))
        start = 0
        while start < len(ends):
            first = int(ends[start - 1]) if start else 0
            stop = max(start + 1, int(np.searchsorted(ends, first + LIST_GROUP_PAIRS, "right")))
            last = int(ends[stop - 1])
            contexts: dict[Context, int] = {}
            of_list = np.array(
                [contexts.setdefault(X[i], len(contexts)) for i in range(start, stop)]
            )
            rows = of_list[owner[first:last] - start]
            texts = dict.fromkeys(flat[first:last].tolist())
            for j, t in enumerate(texts):
                texts[t] = j
            cols = np.fromiter(map(texts.__getitem__, flat[first:last]), np.int64, last - first)
            scorer = self._pair_scorer(list(contexts), np.asarray(list(texts), dtype=object))
            if scorer is None:
                return None
            for s in range(0, last - first, PAIR_BLOCK):
                sl = slice(s, s + PAIR_BLOCK)
                pair_scores[first + s : first + s + len(rows[sl])] = scorer(rows[sl], cols[sl])
            start = stop
        return pair_scores


def inner_product_pairs(U: np.ndarray, V: np.ndarray, bias: float | None = None):
    """The pair scorer of :meth:`RankerMixin._pair_scorer` for embeddings: pair ``p`` scores
    ``U[rows[p]] . V[cols[p]]`` (plus ``bias``), in float64, summed as ``np.einsum`` sums
    the rows of two matrices, so that it equals a model's ``_score_pairs`` bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> score = inner_product_pairs(np.array([[1.0, 2.0]]), np.array([[3.0, 0.0], [1.0, 1.0]]))
    >>> score(np.array([0, 0]), np.array([1, 0]))
    array([3., 3.])
    """
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)

    def score(rows, cols):
        scores = np.einsum("ij,ij->i", U[rows], V[cols])
        return scores if bias is None else scores + bias

    return score
