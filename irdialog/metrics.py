"""Ranking metrics and scorers: hits@k, recall@k-of-n, MRR, per-response and per-dialog accuracy.

A model ranks; this module judges. The ranking metrics work on a score matrix ``scores`` of
shape (n_samples, n_candidates), as returned by ``decision_function`` (against ``candidates_``)
or ``rank_candidates`` (per-example lists), and on the position of the gold answer among the
candidates, ``gold``. :func:`gold_indices` maps gold response strings to those positions and
:func:`make_ranking_scorer` turns a metric into a ``scorer(estimator, X, y)`` for
``GridSearchCV``. Nothing here imports a model.

``gold`` takes one of three forms:

- an int array of shape (n_samples,): the index of the one gold candidate, ``-1`` when the gold
  response is not among the candidates (always a miss);
- a bool array of shape (n_samples, n_candidates): a mask of acceptable answers;
- a sequence of index sequences: the acceptable answers of each example (``-1`` entries are
  ignored, an empty sequence is a miss). A 2-D int array is read the same way, row by row.

With several acceptable answers (Movie Dialog QA lists every entity that answers the question)
an example counts as a hit when the first acceptable answer in the ranking is within the top k.

The rank of the gold is its 1-based position in the ranking, and ``ties`` says how candidates
with the same score are ordered. Write ``s`` for the scores of one example and ``g`` for the
gold (with several answers: the highest scored one, the lowest index among equals):

- ``"index"``: lower candidate index first, as ``RankerMixin.rank`` does, so that hits@1 equals
  the accuracy of ``predict`` and ``score``.
  ``rank = 1 + #{j: s[j] > s[g]} + #{j: s[j] == s[g] and j < g}``.
- ``"pessimistic"``: the gold after every other candidate with the same score.
  ``rank = 1 + #{j: s[j] > s[g]} + #{j not gold: s[j] == s[g]}``.

A score of ``-inf`` marks an absent candidate (the padding of ``rank_candidates``): it is never
an answer, so a gold scored ``-inf`` is a miss, and it ranks below every present candidate.
NaN scores are an error.
"""

from __future__ import annotations

import re
from numbers import Integral

import numpy as np
from sklearn.exceptions import NotFittedError

from .text import LabelIndex

__all__ = [
    "gold_indices",
    "gold_ranks",
    "hits_at_k",
    "make_ranking_scorer",
    "mean_reciprocal_rank",
    "per_dialog_accuracy",
    "per_response_accuracy",
    "recall_at_k",
]

TIES = ("index", "pessimistic")

# Scores compared at a time when ranking: the boolean temporaries stay below this many elements.
_BLOCK_ELEMENTS = 1 << 22
# Contexts per decision_function call in a scorer: block x n_candidates scores at a time.
_SCORER_BLOCK_SIZE = 1024

_SCORER_NAME = re.compile(r"^(?:hits@(?P<hits>\d+)|(?P<mrr>mrr)|r@(?P<rk>\d+)-of-(?P<rn>\d+))$")
_SCORER_NAMES_HELP = (
    "'hits@K' (e.g. 'hits@1', 'hits@10'), 'mrr' and 'r@K-of-N' (e.g. 'r@1-of-2', 'r@5-of-10'),"
    " with positive integers K and N"
)


# -- validation ---------------------------------------------------------------------------------


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def _check_ties(ties) -> str:
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}.")
    return ties


def _check_scores(scores, name: str = "scores") -> np.ndarray:
    """A 2-D real score matrix with at least one row and column and no NaN."""
    if hasattr(scores, "toarray"):
        raise TypeError(f"{name} must be a dense array, got a sparse matrix; call .toarray().")
    scores = np.asarray(scores)
    if scores.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers, got dtype {scores.dtype}.")
    if scores.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D, of shape (n_samples, n_candidates); got shape {scores.shape}."
        )
    if scores.size == 0:
        raise ValueError(f"{name} is empty (shape {scores.shape}).")
    if scores.dtype.kind == "f":
        nan = np.isnan(scores)
        if nan.any():
            i, j = np.argwhere(nan)[0]
            raise ValueError(
                f"{name} contains NaN (first at row {i}, column {j}); a model that cannot "
                f"score a candidate should give it -inf."
            )
    return scores


def _check_range(idx: np.ndarray, n_candidates: int, where: str) -> None:
    bad = (idx < -1) | (idx >= n_candidates)
    if bad.any():
        pos = np.argwhere(bad)[0]
        at = "][".join(str(p) for p in pos)
        raise ValueError(
            f"{where}[{at}] = {idx[tuple(pos)]} is not a valid index into {n_candidates} "
            f"candidates (use -1 for a gold response that is not among the candidates)."
        )


_GOLD_HINT = (
    "gold must hold candidate indices or a boolean mask; map gold response strings to "
    "indices with gold_indices(y, candidates)."
)


def _parse_gold(gold, n_samples: int, n_candidates: int):
    """Normalise gold to ``(index, None, None)`` (one answer) or ``(None, rows, cols)``."""
    if isinstance(gold, str):
        raise TypeError(f"gold must be a sequence, got a single str. {_GOLD_HINT}")
    arr = gold
    if not isinstance(gold, np.ndarray):
        try:
            arr = np.asarray(gold)
        except ValueError:  # ragged: lists of different lengths
            arr = None
    if arr is not None and arr.dtype != object:
        if arr.ndim == 0:
            raise TypeError(f"gold must be a sequence, got {type(gold).__name__}. {_GOLD_HINT}")
        if len(arr) != n_samples:
            raise ValueError(f"scores has {n_samples} rows but gold has {len(arr)} entries.")
        if arr.dtype == bool:
            if arr.shape != (n_samples, n_candidates):
                raise ValueError(
                    f"a boolean gold mask must have the shape of scores "
                    f"{(n_samples, n_candidates)}, got {arr.shape}."
                )
            rows, cols = np.nonzero(arr)
            return None, rows, cols
        if arr.size == 0 and arr.ndim == 2:  # [[], [], ...]: no example has an answer
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"gold has dtype {arr.dtype}. {_GOLD_HINT}")
        arr = arr.astype(np.int64, copy=False)
        _check_range(arr, n_candidates, "gold")
        if arr.ndim == 1:
            return arr, None, None
        if arr.ndim == 2:
            rows = np.repeat(np.arange(n_samples), arr.shape[1])
            return None, rows, arr.ravel()
        raise ValueError(f"gold must be 1-D or 2-D, got shape {arr.shape}.")

    seqs = list(gold)
    if len(seqs) != n_samples:
        raise ValueError(f"scores has {n_samples} rows but gold has {len(seqs)} entries.")
    rows, cols = [], []
    for i, answers in enumerate(seqs):
        if isinstance(answers, (set, frozenset)):
            answers = sorted(answers)
        a = np.atleast_1d(np.asarray(answers))
        if a.size == 0:
            continue
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise TypeError(
                f"gold[{i}] must be a candidate index or a sequence of them, got "
                f"{answers!r:.60}. {_GOLD_HINT}"
            )
        a = a.astype(np.int64, copy=False)
        _check_range(a, n_candidates, f"gold[{i}]")
        rows.append(np.full(a.size, i))
        cols.append(a)
    if not rows:
        return None, np.empty(0, np.int64), np.empty(0, np.int64)
    return None, np.concatenate(rows), np.concatenate(cols)


# -- ranks --------------------------------------------------------------------------------------


def _best_gold(gold, scores: np.ndarray):
    """Per example: the gold that ranks first (``-1`` for a miss) and how many golds share
    its score (used by the pessimistic tie rule)."""
    n, c = scores.shape
    index, rows, cols = _parse_gold(gold, n, c)
    if index is not None:
        best = index.copy()
        has = np.flatnonzero(best >= 0)
        best[has[scores[has, best[has]] == -np.inf]] = -1
        return best, np.ones(n, dtype=np.int64)

    keep = cols >= 0
    flat = np.unique(rows[keep] * c + cols[keep])  # deduplicated, sorted by (row, column)
    rows, cols = np.divmod(flat, c)
    s = scores[rows, cols]
    present = s > -np.inf
    rows, cols, s = rows[present], cols[present], s[present]
    top = np.full(n, -np.inf)
    np.maximum.at(top, rows, s)
    at_top = s == top[rows]
    rows, cols = rows[at_top], cols[at_top]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = rows[1:] != rows[:-1]  # sorted by column within a row: lowest index first
    best = np.full(n, -1, dtype=np.int64)
    best[rows[first]] = cols[first]
    return best, np.bincount(rows, minlength=n)


def _ranks(scores: np.ndarray, best: np.ndarray, n_tied: np.ndarray, ties: str) -> np.ndarray:
    """1-based rank of candidate ``best[i]`` in row i (``inf`` where ``best[i] == -1``),
    comparing at most ``_BLOCK_ELEMENTS`` scores at a time."""
    n, c = scores.shape
    ranks = np.full(n, np.inf)
    hit = np.flatnonzero(best >= 0)
    columns = np.arange(c)
    step = max(1, _BLOCK_ELEMENTS // c)
    for start in range(0, hit.size, step):
        rows = hit[start : start + step]
        block = scores[rows]
        g = best[rows]
        s = block[np.arange(rows.size), g][:, None]
        higher = np.count_nonzero(block > s, axis=1)
        equal = block == s
        if ties == "index":
            ahead = np.count_nonzero(equal & (columns < g[:, None]), axis=1)
        else:
            ahead = np.count_nonzero(equal, axis=1) - n_tied[rows]
        ranks[rows] = 1 + higher + ahead
    return ranks


def gold_ranks(gold, scores, *, ties: str = "index") -> np.ndarray:
    """The 1-based rank of the gold answer of each example; ``inf`` for a miss.

    Parameters
    ----------
    gold : array-like of int of shape (n_samples,), bool mask of shape (n_samples, n_candidates), \
or sequence of sequences of int
        The gold candidate of each example (``-1``: not among the candidates), or the
        acceptable answers of each example (see the module docstring).
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    ties : {"index", "pessimistic"}, default="index"
        How equal scores are ordered: lower candidate index first (as ``rank`` does), or the
        gold after every other candidate with its score.

    Returns
    -------
    ranks : ndarray of float64 of shape (n_samples,)
        The position of the first acceptable answer in the ranking, ``inf`` when the gold is
        not among the candidates or is scored ``-inf``. ``1 / ranks`` is the reciprocal rank.

    See Also
    --------
    hits_at_k, mean_reciprocal_rank

    Examples
    --------
    >>> from irdialog.metrics import gold_ranks
    >>> scores = [[0.1, 0.9, 0.5], [0.3, 0.3, 0.3], [0.2, 0.1, -float("inf")]]
    >>> gold_ranks([2, 1, 2], scores)
    array([ 2.,  2., inf])
    >>> gold_ranks([2, 1, 2], scores, ties="pessimistic")
    array([ 2.,  3., inf])
    >>> gold_ranks([[0, 2], [], [1]], scores)  # several acceptable answers
    array([ 2., inf,  2.])
    """
    scores = _check_scores(scores)
    ties = _check_ties(ties)
    best, n_tied = _best_gold(gold, scores)
    return _ranks(scores, best, n_tied, ties)


# -- metrics ------------------------------------------------------------------------------------


def hits_at_k(gold, scores, k: int = 1, *, ties: str = "index") -> float:
    """Hits@k: the fraction of examples whose gold answer is among the k best candidates.

    With ``ties="index"`` and one answer per example this is
    ``sklearn.metrics.top_k_accuracy_score(gold, scores, k=k)`` when no scores are tied and no
    gold is ``-1``, and hits@1 is the accuracy of the model's ``predict``.

    Parameters
    ----------
    gold : array-like of int of shape (n_samples,), bool mask of shape (n_samples, n_candidates), \
or sequence of sequences of int
        The gold candidate of each example (``-1``: not among the candidates, a miss), or the
        acceptable answers of each example (a hit when the first of them ranks within k).
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    k : int, default=1
        How many of the best candidates are looked at.
    ties : {"index", "pessimistic"}, default="index"
        How equal scores are ordered (see :func:`gold_ranks`).

    Returns
    -------
    hits : float
        In [0, 1].

    See Also
    --------
    recall_at_k : The Ubuntu "R@k of n" convention (gold in column 0).
    make_ranking_scorer : hits@k as a ``GridSearchCV`` scorer.

    References
    ----------
    Dodge et al., "Evaluating prerequisite qualities for learning end-to-end dialog systems",
    ICLR 2016, section 2 (hits@1 for QA, hits@100 for recommendation, hits@10 for Reddit).

    Examples
    --------
    >>> from irdialog.metrics import hits_at_k
    >>> scores = [[0.1, 0.9, 0.5], [0.8, 0.3, 0.1], [0.2, 0.1, 0.7]]
    >>> hits_at_k([1, 1, 2], scores)
    0.6666666666666666
    >>> hits_at_k([1, 1, 2], scores, k=2)
    1.0
    >>> hits_at_k([1, -1, 2], scores, k=3)  # -1: the gold is not a candidate
    0.6666666666666666
    """
    k = _check_positive_int(k, "k")
    return float(np.mean(gold_ranks(gold, scores, ties=ties) <= k))


def mean_reciprocal_rank(gold, scores, *, ties: str = "index") -> float:
    """Mean reciprocal rank: the mean over examples of ``1 / rank`` of the gold answer.

    A miss (gold not among the candidates, or scored ``-inf``) contributes 0.

    Parameters
    ----------
    gold : array-like of int of shape (n_samples,), bool mask of shape (n_samples, n_candidates), \
or sequence of sequences of int
        The gold candidate of each example (``-1``: not among the candidates), or the
        acceptable answers of each example (the first of them in the ranking counts).
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    ties : {"index", "pessimistic"}, default="index"
        How equal scores are ordered (see :func:`gold_ranks`).

    Returns
    -------
    mrr : float
        In [0, 1].

    See Also
    --------
    gold_ranks, hits_at_k

    Examples
    --------
    >>> from irdialog.metrics import mean_reciprocal_rank
    >>> scores = [[0.1, 0.9, 0.5], [0.8, 0.3, 0.1]]
    >>> mean_reciprocal_rank([1, 2], scores)  # (1/1 + 1/3) / 2
    0.6666666666666666
    """
    return float(np.mean(1.0 / gold_ranks(gold, scores, ties=ties)))


def recall_at_k(scores, k: int = 1, n: int | None = None, *, ties: str = "pessimistic") -> float:
    """Recall@k of n, the Ubuntu Dialogue Corpus convention: the true response is in column 0.

    An example is a hit when its column 0 is among the k best of its first ``n`` candidates.
    ``recall_at_k(scores, 1, n=2)`` is "1 in 2 R@1", ``recall_at_k(scores, 2, n=10)`` is
    "1 in 10 R@2" (the true response and 9 distractors).

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better, the true response first (the layout of
        ``rank_candidates`` on Ubuntu candidate lists). ``-inf`` marks an absent candidate
        (padding of a shorter list); a true response scored ``-inf`` is a miss.
    k : int, default=1
        How many of the best candidates are looked at.
    n : int, default=None
        Keep only the first ``n`` candidates of each example (1 in 2: columns 0 and 1).
        None keeps all of them.
    ties : {"pessimistic", "index"}, default="pessimistic"
        How equal scores are ordered. The default puts the true response after every
        distractor with its score: the true response is always in column 0, so the
        ``"index"`` rule of :func:`hits_at_k` would win every tie for it, and a model that
        scores everything alike would get a perfect recall.

    Returns
    -------
    recall : float
        In [0, 1].

    See Also
    --------
    hits_at_k : The same count with the gold anywhere.

    References
    ----------
    Lowe et al., "The Ubuntu Dialogue Corpus: A Large Dataset for Research in Unstructured
    Multi-Turn Dialogue Systems", SIGDIAL 2015, section 3.5 and Table 4.

    Examples
    --------
    >>> from irdialog.metrics import recall_at_k
    >>> scores = [[0.9, 0.1, 0.95, 0.3], [0.2, 0.6, 0.1, 0.4], [0.5, 0.5, 0.1, 0.2]]
    >>> recall_at_k(scores, 1, n=2)  # row 2: a tie, counted against the model
    0.3333333333333333
    >>> recall_at_k(scores, 2)
    0.6666666666666666
    >>> recall_at_k(scores, 1, n=2, ties="index")
    0.6666666666666666
    """
    scores = _check_scores(scores)
    k = _check_positive_int(k, "k")
    ties = _check_ties(ties)
    if n is not None:
        n = _check_positive_int(n, "n")
        if n > scores.shape[1]:
            raise ValueError(f"n={n} exceeds the {scores.shape[1]} candidates (columns) of scores.")
        scores = scores[:, :n]
    best, n_tied = _best_gold(np.zeros(scores.shape[0], dtype=np.int64), scores)
    return float(np.mean(_ranks(scores, best, n_tied, ties) <= k))


def _as_labels(y, name: str, n_samples: int | None = None) -> np.ndarray:
    """A 1-D object array of responses (or ids), so that ``==`` compares element by element."""
    if isinstance(y, str):
        raise TypeError(f"{name} must be a sequence of responses, got a single str.")
    try:
        items = list(y)
    except TypeError:
        raise TypeError(f"{name} must be a sequence, got {type(y).__name__}.") from None
    if not items:
        raise ValueError(f"{name} is empty.")
    if n_samples is not None and len(items) != n_samples:
        raise ValueError(f"y_true has {n_samples} entries but {name} has {len(items)}.")
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def per_response_accuracy(y_true, y_pred) -> float:
    """Per-response accuracy: the fraction of responses equal to the gold response.

    Parameters
    ----------
    y_true : sequence of str of length n_samples
        The gold responses.
    y_pred : sequence of str of length n_samples
        The predicted responses (e.g. ``model.predict(X)``).

    Returns
    -------
    accuracy : float
        In [0, 1].

    See Also
    --------
    per_dialog_accuracy

    References
    ----------
    Bordes, Boureau and Weston, "Learning End-to-End Goal-Oriented Dialog", ICLR 2017,
    section 5 (per-response and per-dialog accuracy, Table 2).

    Examples
    --------
    >>> from irdialog.metrics import per_response_accuracy
    >>> per_response_accuracy(["hello", "api_call rome", "ok"], ["hello", "api_call paris", "ok"])
    0.6666666666666666
    """
    y_true = _as_labels(y_true, "y_true")
    y_pred = _as_labels(y_pred, "y_pred", len(y_true))
    return float(np.mean(y_true == y_pred))


def per_dialog_accuracy(y_true, y_pred, groups) -> float:
    """Per-dialog accuracy: the fraction of dialogs in which every response is correct.

    Parameters
    ----------
    y_true : sequence of str of length n_samples
        The gold responses.
    y_pred : sequence of str of length n_samples
        The predicted responses.
    groups : array-like of length n_samples
        The dialog id of each response (the ``groups`` the loaders return). Responses of a
        dialog need not be contiguous.

    Returns
    -------
    accuracy : float
        In [0, 1].

    See Also
    --------
    per_response_accuracy

    References
    ----------
    Bordes, Boureau and Weston, "Learning End-to-End Goal-Oriented Dialog", ICLR 2017,
    section 5: "Per-dialog accuracy counts the percentage of dialogs where every response
    is correct."

    Examples
    --------
    >>> from irdialog.metrics import per_dialog_accuracy
    >>> y_true = ["hi", "where", "api_call rome", "hi", "api_call paris"]
    >>> y_pred = ["hi", "where", "api_call rome", "hi", "api_call rome"]
    >>> per_dialog_accuracy(y_true, y_pred, groups=[0, 0, 0, 1, 1])
    0.5
    """
    y_true = _as_labels(y_true, "y_true")
    y_pred = _as_labels(y_pred, "y_pred", len(y_true))
    groups = _as_labels(groups, "groups", len(y_true))
    try:
        _, dialog = np.unique(groups, return_inverse=True)
    except TypeError:
        raise TypeError("groups must hold dialog ids of one comparable type.") from None
    wrong = np.bincount(dialog.ravel(), weights=y_true != y_pred)
    return float(np.mean(wrong == 0))


def _lookup(candidates) -> LabelIndex:
    if isinstance(candidates, str):
        raise TypeError("candidates must be a sequence of responses, got a single str.")
    return LabelIndex(candidates)  # a duplicate keeps its first index, the one `rank` prefers


def _indices(y, lookup: LabelIndex, name: str = "y") -> np.ndarray:
    return lookup.encode(
        y,
        name=name,
        hint=f"For several answers per example map each list: "
        f"[gold_indices(answers, candidates) for answers in {name}].",
    )


def gold_indices(y, candidates) -> np.ndarray:
    """Map gold responses to their indices into ``candidates``; ``-1`` for an absent one.

    The label encoding of the models (:func:`irdialog.text.encode_labels`), for metrics.

    Parameters
    ----------
    y : sequence of str
        The gold responses.
    candidates : sequence of str
        The candidate responses, e.g. a fitted model's ``candidates_``. A response listed
        twice maps to its first index.

    Returns
    -------
    gold : ndarray of int64 of shape (len(y),)
        ``candidates[gold[i]] == y[i]``, or ``gold[i] == -1`` when ``y[i]`` is not a candidate.

    Examples
    --------
    >>> from irdialog.metrics import gold_indices
    >>> candidates = ["hello", "api_call rome", "ok"]
    >>> gold_indices(["ok", "bye", "hello"], candidates)
    array([ 2, -1,  0])

    Several acceptable answers per example, for :func:`hits_at_k`:

    >>> [gold_indices(answers, candidates).tolist() for answers in [["ok", "hello"], ["bye"]]]
    [[2, 0], [-1]]
    """
    return _indices(y, _lookup(candidates))


# -- scorers ------------------------------------------------------------------------------------


def _fitted_candidates(estimator) -> np.ndarray:
    """The ``candidates_`` of a fitted ranker, or of the last step of a Pipeline."""
    candidates = getattr(estimator, "candidates_", None)
    if candidates is None and hasattr(estimator, "steps"):
        candidates = getattr(estimator.steps[-1][1], "candidates_", None)
    if candidates is None:
        raise NotFittedError(
            f"a ranking scorer needs a fitted ranker with a candidates_ attribute (or a "
            f"Pipeline ending in one); {type(estimator).__name__} has none."
        )
    return np.asarray(candidates, dtype=object)


def _sampled_ranks(scores, gold, n_of: int, rng, ties: str) -> np.ndarray:
    """Rank of the gold among itself and ``n_of - 1`` candidates drawn at random from the
    others; the gold goes in column 0, the distractors after it."""
    b, c = scores.shape
    draws = np.argpartition(rng.random((b, c - 1)), n_of - 2, axis=1)[:, : n_of - 1]
    g = np.where(gold >= 0, gold, 0)
    draws += draws >= g[:, None]  # skip the gold's own column
    sub = np.take_along_axis(scores, np.column_stack([g, draws]), axis=1)
    return gold_ranks(np.where(gold >= 0, 0, -1), sub, ties=ties)


class _RankingScorer:
    """``scorer(estimator, X, y)`` -> a ranking metric, greater is better.

    Scores ``X`` against ``estimator.candidates_`` in blocks of contexts, so that at most
    ``_SCORER_BLOCK_SIZE x n_candidates`` scores exist at once.
    """

    def __init__(self, name, metric, k, n_of, ties, random_state):
        self.name = name
        self.metric = metric
        self.k = k
        self.n_of = n_of
        self.ties = ties
        self.random_state = random_state

    def __repr__(self):
        args = [repr(self.name)]
        if self.ties is not None:
            args.append(f"ties={self.ties!r}")
        if self.metric == "recall":
            args.append(f"random_state={self.random_state!r}")
        return f"make_ranking_scorer({', '.join(args)})"

    def __call__(self, estimator, X, y) -> float:
        candidates = _fitted_candidates(estimator)
        if isinstance(y, str):
            raise TypeError("y must be a sequence of gold responses, got a single str.")
        y = list(y)
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} contexts but y has {len(y)} responses.")
        if not y:
            raise ValueError("y is empty: at least one response is needed.")
        lookup = _lookup(candidates)
        if any(isinstance(r, (list, tuple, set, frozenset, np.ndarray)) for r in y):
            if self.metric == "recall":
                raise ValueError(f"{self.name!r} needs one gold response per example.")
            gold = [_indices([r] if isinstance(r, str) else r, lookup, "y") for r in y]
        else:
            gold = _indices(y, lookup)
        c = len(candidates)
        if self.metric == "recall" and c < self.n_of:
            raise ValueError(f"{self.name!r} needs at least {self.n_of} candidates, got {c}.")
        if len(X) > _SCORER_BLOCK_SIZE and not isinstance(X, (list, tuple, np.ndarray)):
            X = list(X)
        rng = np.random.default_rng(self.random_state)
        ties = self.ties or ("pessimistic" if self.metric == "recall" else "index")

        ranks = []
        for start in range(0, len(y), _SCORER_BLOCK_SIZE):
            stop = start + _SCORER_BLOCK_SIZE
            X_block = X if len(y) <= _SCORER_BLOCK_SIZE else X[start:stop]
            scores = _check_scores(
                estimator.decision_function(X_block), name="decision_function(X)"
            )
            expected = (min(stop, len(y)) - start, c)
            if scores.shape != expected:
                raise ValueError(
                    f"decision_function(X) returned shape {scores.shape}, expected {expected}: "
                    f"(n_samples, len(candidates_))."
                )
            if self.metric == "recall":
                ranks.append(_sampled_ranks(scores, gold[start:stop], self.n_of, rng, ties))
            else:
                ranks.append(gold_ranks(gold[start:stop], scores, ties=ties))
        ranks = np.concatenate(ranks)
        if self.metric == "mrr":
            return float(np.mean(1.0 / ranks))
        return float(np.mean(ranks <= self.k))


def make_ranking_scorer(name: str, *, ties: str | None = None, random_state=0):
    """A ``GridSearchCV`` scorer for a ranking metric, by name.

    The scorer is a callable ``scorer(estimator, X, y) -> float`` (greater is better) that
    scores ``X`` with ``estimator.decision_function`` against ``estimator.candidates_`` (of
    the last step for a Pipeline), in blocks of contexts, and maps the gold responses ``y``
    to candidate indices with :func:`gold_indices`. A gold response that is not a candidate
    is a miss. An element of ``y`` that is a list of strings holds several acceptable answers
    (hits@K and mrr only).

    Parameters
    ----------
    name : str
        Case-insensitive:

        - ``"hits@K"``: :func:`hits_at_k` with k=K, e.g. ``"hits@1"`` (the same as the
          estimator's ``score`` when ``ties`` is ``"index"``) or ``"hits@10"``;
        - ``"mrr"``: :func:`mean_reciprocal_rank`;
        - ``"r@K-of-N"``: :func:`recall_at_k` with the gold among itself and N - 1
          distractors drawn at random from the other candidates, e.g. ``"r@1-of-10"``.
    ties : {"index", "pessimistic"}, default=None
        How equal scores are ordered (see :func:`gold_ranks`). None: ``"index"`` for hits@K
        and mrr, ``"pessimistic"`` for r@K-of-N, as in the functions.
    random_state : int or None, default=0
        Seed of the distractors of r@K-of-N, drawn afresh at each call from this seed so
        that every parameter setting of a search is judged on the same distractors.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``, for ``GridSearchCV(scoring=...)`` or
        ``cross_validate(scoring={...})``.

    See Also
    --------
    hits_at_k, mean_reciprocal_rank, recall_at_k

    Examples
    --------
    >>> import numpy as np
    >>> from irdialog.metrics import make_ranking_scorer
    >>> class Lookup:  # a stand-in for a fitted ranker
    ...     candidates_ = np.array(["hello", "where to", "api_call rome"], dtype=object)
    ...     def decision_function(self, X):  # words in common
    ...         return np.array([[len(set(x.split()) & set(c.split())) for c in self.candidates_]
    ...                          for x in X])
    >>> X, y = ["hello there", "where in rome"], ["hello", "api_call rome"]
    >>> make_ranking_scorer("hits@1")(Lookup(), X, y)  # "where to" wins the tie of row 2
    0.5
    >>> make_ranking_scorer("MRR")(Lookup(), X, y)
    0.75
    >>> make_ranking_scorer("hits@0")
    Traceback (most recent call last):
    ...
    ValueError: ranking scorer 'hits@0': k must be at least 1.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}.")
    if ties is not None:
        _check_ties(ties)
    match = _SCORER_NAME.match(name.strip().lower())
    if match is None:
        raise ValueError(f"unknown ranking scorer {name!r}; valid names are {_SCORER_NAMES_HELP}.")
    key = match.group(0)
    if match["mrr"]:
        return _RankingScorer(key, "mrr", None, None, ties, random_state)
    k = int(match["hits"] or match["rk"])
    if k < 1:
        raise ValueError(f"ranking scorer {name!r}: k must be at least 1.")
    if match["hits"]:
        return _RankingScorer(key, "hits", k, None, ties, random_state)
    n_of = int(match["rn"])
    if n_of < 2:
        raise ValueError(
            f"ranking scorer {name!r}: N must be at least 2 (the gold and a distractor)."
        )
    return _RankingScorer(key, "recall", k, n_of, ties, random_state)
