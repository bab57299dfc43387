"""Ranking metrics and scorers over one or several right answers, ties at their expected value.

A model ranks; this module judges. The ranking metrics take a score matrix ``scores`` of shape
(n_samples, n_candidates), as returned by ``decision_function`` (against ``candidates_``) or
``rank_candidates`` (per-example lists), and the right answers among the candidates, ``gold``.
:func:`get_ranking_metric` reads a metric's name (``"hits@10"``, ``"ndcg@10"``, ``"r10@1"``),
:func:`gold_indices` maps right response strings to candidate indices and
:func:`make_ranking_scorer` turns a metric into a ``scorer(estimator, X, y)`` for
``GridSearchCV``. Nothing here imports a model.

``gold`` takes one of these forms:

- an int array of shape (n_samples,): the index of the one right candidate, ``-1`` when the
  right response is not among the candidates (always a miss);
- a bool array of shape (n_samples, n_candidates): a mask of right answers;
- a float array of shape (n_samples, n_candidates): graded relevance, the gain of each
  candidate (0: not relevant). nDCG uses the gains; every other metric counts a candidate
  with a positive gain as a right answer. A 0/1 label matrix must be bool or float: a 2-D
  int array is read as rows of indices;
- a sequence of index sequences: the right answers of each example. A ``-1`` entry (as
  :func:`gold_indices` gives for a response that is not a candidate) is a right answer that
  is not among the candidates: it counts in the number of right answers (recall, MAP, the
  ideal DCG) and is never retrieved. An index listed twice counts once;
- a sequence of mappings ``{candidate index: gain}``: graded right answers of each example,
  as qrels give them (TREC, BEIR); a negative key is a right answer that is not among the
  candidates (``{3: 2.0, -1: 1.0, -2: 1.0}``: candidate 3 and two others, unretrieved), and a
  gain of 0 a judged wrong answer. Sequences and mappings may be mixed;
- a 2-D int ndarray: rows of right answers padded with ``-1`` (the padding is ignored).

The metrics, by the names :func:`get_ranking_metric` reads (case-insensitive; ``R`` is the
number of right answers of an example, ranks are 1-based):

- ``hits@K``: whether a right answer is among the K best (Dodge et al. 2016; with several
  right answers, the success@K of trec_eval);
- ``p@1``: whether the best candidate is right, the P@1 of Douban and E-commerce (= hits@1);
- ``mrr``, ``mrr@K``: ``1 / rank`` of the first right answer; 0 when it ranks past K (the
  MRR@10 of MS MARCO);
- ``map``: the mean of the average precision ``(1 / R) * sum of precision@rank(a)`` over
  the right answers ``a`` (a right answer never ranked adds 0), as the Douban evaluation and
  trec_eval compute it;
- ``recall@K``: the fraction of the R right answers among the K best, as BEIR and Anserini
  report it (trec_eval's ``recall_K``);
- ``rN@K`` (``r10@1``, ``r2@1``, ``r100@1``): ``recall@K`` among the first N candidates of
  each list, the right answers beyond them set aside. With the one right response first, as
  the Ubuntu Dialogue Corpus lists it, this is Lowe et al.'s "1 in N R@K" (the response and
  its first N - 1 distractors); with several right answers among 10 candidates it is the
  R10@K of the Douban and E-commerce evaluation script (right answers in the top K over the
  right answers of the 10);
- ``ndcg@K`` (``ndcg``: the whole list): DCG@K / ideal DCG@K with linear gains and the
  discount ``1 / log2(1 + rank)``, as trec_eval's ``ndcg_cut`` (BEIR) and
  ``sklearn.metrics.ndcg_score``.

``ties`` says how candidates with the same score are ordered:

- ``"expected"`` (the default of every metric but :func:`recall_at_k`): a tie earns its
  expected value under a uniform random order of the tied candidates, computed exactly
  (McSherry and Najork 2008), so that no result depends on the order of a file. For a tied
  group of ``t`` candidates holding ``m`` right answers, ``a`` candidates ranked above it, the
  first right answer sits at place ``j`` of the group with probability
  ``C(t - j, m - 1) / C(t, m)``: a 3-way tie at the top holding one right answer gives hits@1
  1/3. Recall and nDCG spread the group's right answers and gains evenly over its places (as
  ``ndcg_score(ignore_ties=False)``); MAP gives each right answer of the group its expected
  precision.
- ``"index"``: lower candidate index first, as ``RankerMixin.rank`` does, so that hits@1
  equals the accuracy of ``predict``.
- ``"pessimistic"``: the right answers after every other candidate with their score (graded
  gains: lower gains first).

``no_answer`` says what an example with no right answer at all (an empty answer list, an
all-false mask, a zero gain row; for ``rN@K``, none among its first N) counts for:

- ``"skip"`` (default): it is left out of the average. The evaluation scripts of Douban and
  E-commerce (Wu et al. 2017; Zhang et al. 2018) average over the test contexts that have a
  right response among their candidates (the DAM script's MRR asserts one; later scripts drop
  the contexts without). A metric with every example skipped is an error.
- ``"miss"``: it counts 0. DSTC7 track 1 subtask 4 (Gunasekara et al. 2019) instead gives
  some pools no right response and expects the model to say so: add a "none of the above"
  candidate to every pool and make it the right answer of those pools, then every example has
  one.

A right answer that is not among the candidates (``-1``) or scored ``-inf`` is not "no
answer": the example counts, as a miss for that answer.

A score of ``-inf`` marks an absent candidate (the padding of ``rank_candidates``): it is
never ranked, so a right answer scored ``-inf`` is never found. NaN scores are an error.

References
----------
F. McSherry and M. Najork, "Computing information retrieval performance measures efficiently
in the presence of tied scores", ECIR 2008.

R. Lowe, N. Pow, I. Serban and J. Pineau, "The Ubuntu Dialogue Corpus", SIGDIAL 2015,
section 3.5.

Y. Wu, W. Wu, C. Xing, M. Zhou and Z. Li, "Sequential Matching Network", ACL 2017, section 5.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln
from sklearn.exceptions import NotFittedError

from .base import check_positive_int
from .text import LabelIndex

__all__ = [
    "Accuracy",
    "RankingMetric",
    "answer_recall_at_k",
    "get_ranking_metric",
    "gold_indices",
    "gold_ranks",
    "hits_at_k",
    "make_ranking_scorer",
    "mean_average_precision",
    "mean_reciprocal_rank",
    "ndcg_at_k",
    "per_dialog_accuracy",
    "per_response_accuracy",
    "recall_at_k",
    "response_accuracy",
]

TIES = ("expected", "index", "pessimistic")
NO_ANSWER = ("skip", "miss")

# Scores compared at a time when ranking: the temporaries stay below this many elements.
_BLOCK_ELEMENTS = 1 << 22
# Contexts per decision_function call in a scorer: block x n_candidates scores at a time.
_SCORER_BLOCK_SIZE = 1024

_METRIC_NAME = re.compile(
    r"^(?:hits@(?P<hits>\d+)|(?P<p1>p@1)|mrr(?:@(?P<mrr>\d+))?|(?P<map>map)"
    r"|ndcg(?:@(?P<ndcg>\d+))?|recall@(?P<recall>\d+)|r(?P<rn>\d+)@(?P<rk>\d+)"
    r"|r@(?P<sk>\d+)-of-(?P<sn>\d+))$"
)
_METRIC_NAMES_HELP = (
    "'hits@K', 'p@1', 'mrr', 'mrr@K', 'map', 'ndcg', 'ndcg@K', 'recall@K' and 'rN@K' (recall@K "
    "among the first N candidates: 'r10@1', 'r2@1'), with positive integers K and N"
)
_SCORER_NAMES_HELP = (
    f"{_METRIC_NAMES_HELP[: -len(', with positive integers K and N')]}, and 'r@K-of-N' (the "
    "right response among itself and N - 1 candidates drawn at random), with positive "
    "integers K and N"
)


# -- validation ---------------------------------------------------------------------------------


def _check_ties(ties, allowed=TIES) -> str:
    if ties not in allowed:
        raise ValueError(f"ties must be one of {allowed}, got {ties!r}.")
    return ties


def _check_no_answer(no_answer) -> str:
    if no_answer not in NO_ANSWER:
        raise ValueError(f"no_answer must be one of {NO_ANSWER}, got {no_answer!r}.")
    return no_answer


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
    "gold must hold candidate indices, a boolean mask or a float gain matrix; map gold "
    "response strings to indices with gold_indices(y, candidates)."
)


class _Gold(NamedTuple):
    """The right answers of every example: (row, column, gain) triplets of the candidates,
    sorted by row and column; (row, gain) pairs of the right answers that are not among the
    candidates, sorted by row; and whether a row has any right answer."""

    rows: np.ndarray
    cols: np.ndarray
    gains: np.ndarray
    out_rows: np.ndarray
    out_gains: np.ndarray
    has_answer: np.ndarray


def _make_gold(rows, cols, gains, has_answer, n_candidates) -> _Gold:
    """Triplets with negative columns (answers outside the candidates) set apart, and a
    candidate listed twice counted once."""
    rows, cols, gains = (np.asarray(x) for x in (rows, cols, gains))
    out = cols < 0
    inside = ~out & (gains > 0)
    flat, first = np.unique(rows[inside] * n_candidates + cols[inside], return_index=True)
    keep_rows, keep_cols = np.divmod(flat, n_candidates)
    order = np.argsort(rows[out & (gains > 0)], kind="stable")
    out_rows = rows[out & (gains > 0)][order].astype(np.int64)
    out_gains = gains[out & (gains > 0)][order].astype(np.float64)
    in_gains = gains[inside][first].astype(np.float64)
    return _Gold(keep_rows, keep_cols, in_gains, out_rows, out_gains, has_answer)


def _gold_row(i: int, answers, n_candidates: int):
    """(columns, gains) of one example's right answers: a sequence of indices (``-1``: a
    right answer outside the candidates) or a mapping of indices to gains (a negative key:
    one outside the candidates)."""
    if isinstance(answers, Mapping):
        cols = np.array(list(answers.keys()))
        gains = np.array(list(answers.values()), dtype=object)
        if cols.size and cols.dtype.kind not in "iu":
            raise TypeError(f"gold[{i}] must map candidate indices to gains. {_GOLD_HINT}")
        try:
            gains = gains.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"gold[{i}] must map candidate indices to gains.") from None
        bad = ~np.isfinite(gains) | (gains < 0)
        if bad.any():
            j = int(np.argmax(bad))
            raise ValueError(
                f"gold gains must be finite and non-negative; gold[{i}][{cols[j]}] = {gains[j]}."
            )
        too_big = cols >= n_candidates
        if too_big.any():
            raise ValueError(
                f"gold[{i}] maps {cols[too_big][0]}, not a valid index into {n_candidates} "
                f"candidates (use a negative key for a right answer outside them)."
            )
        return cols.astype(np.int64), gains
    if isinstance(answers, (set, frozenset)):
        answers = sorted(answers)
    if isinstance(answers, str):
        raise TypeError(f"gold[{i}] is a str ({answers!r:.60}). {_GOLD_HINT}")
    a = np.atleast_1d(np.asarray(answers))
    if a.size and (a.ndim != 1 or a.dtype.kind not in "iu"):
        raise TypeError(
            f"gold[{i}] must be a candidate index or a sequence of them, got "
            f"{answers!r:.60}. {_GOLD_HINT}"
        )
    a = a.astype(np.int64, copy=False).ravel()
    _check_range(a, n_candidates, f"gold[{i}]")
    return a, np.ones(a.size)


def _parse_gold(gold, n_samples: int, n_candidates: int) -> _Gold:
    if isinstance(gold, str):
        raise TypeError(f"gold must be a sequence, got a single str. {_GOLD_HINT}")
    arr = gold
    if not isinstance(gold, np.ndarray):
        try:
            arr = np.asarray(gold)
        except (ValueError, TypeError):  # ragged: lists of different lengths
            arr = None
        if arr is not None and arr.ndim == 2 and arr.dtype.kind in "iu":
            arr = None  # a list of index lists, where -1 is an answer, not padding
    if arr is not None and arr.dtype != object:
        if arr.ndim == 0:
            raise TypeError(f"gold must be a sequence, got {type(gold).__name__}. {_GOLD_HINT}")
        if len(arr) != n_samples:
            raise ValueError(f"scores has {n_samples} rows but gold has {len(arr)} entries.")
        if arr.size == 0 and arr.ndim == 2:  # [[], [], ...]: no example has an answer
            arr = arr.astype(np.int64)
        if arr.dtype == bool or (arr.dtype.kind == "f" and arr.ndim == 2):
            kind = "boolean gold mask" if arr.dtype == bool else "gold gain matrix"
            if arr.shape != (n_samples, n_candidates):
                raise ValueError(
                    f"a {kind} must have the shape of scores {(n_samples, n_candidates)}, "
                    f"got {arr.shape}."
                )
            bad = ~np.isfinite(arr) | (arr < 0)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise ValueError(
                    f"gold gains must be finite and non-negative; gold[{i}][{j}] = {arr[i, j]}."
                )
            rows, cols = np.nonzero(arr)
            gains = arr[rows, cols].astype(np.float64)
            return _make_gold(rows, cols, gains, (arr > 0).any(axis=1), n_candidates)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"gold has dtype {arr.dtype}. {_GOLD_HINT}")
        arr = arr.astype(np.int64, copy=False)
        _check_range(arr, n_candidates, "gold")
        if arr.ndim == 1:
            ones = np.ones(n_samples)
            return _make_gold(np.arange(n_samples), arr, ones, ones > 0, n_candidates)
        if arr.ndim == 2:  # rows of indices padded with -1
            rows = np.repeat(np.arange(n_samples), arr.shape[1])
            gains = (arr.ravel() >= 0).astype(np.float64)  # the padding has no gain
            return _make_gold(rows, arr.ravel(), gains, (arr >= 0).any(axis=1), n_candidates)
        raise ValueError(f"gold must be 1-D or 2-D, got shape {arr.shape}.")

    seqs = list(gold)
    if len(seqs) != n_samples:
        raise ValueError(f"scores has {n_samples} rows but gold has {len(seqs)} entries.")
    rows, cols, gains = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0)]
    has = np.zeros(n_samples, bool)
    for i, answers in enumerate(seqs):
        c, g = _gold_row(i, answers, n_candidates)
        has[i] = bool((g > 0).any())
        rows.append(np.full(c.size, i))
        cols.append(c)
        gains.append(g)
    return _make_gold(*map(np.concatenate, (rows, cols, gains)), has, n_candidates)


def _row_blocks(n: int, c: int):
    step = max(1, _BLOCK_ELEMENTS // c)
    for start in range(0, n, step):
        yield start, min(n, start + step)


def _outside_block(gold: _Gold, start: int, stop: int) -> np.ndarray:
    """The gains of the right answers outside the candidates of rows ``start:stop``, as a
    (rows, most such answers of a row) matrix padded with 0."""
    lo, hi = np.searchsorted(gold.out_rows, [start, stop])
    rows = gold.out_rows[lo:hi] - start
    counts = np.bincount(rows, minlength=stop - start)
    out = np.zeros((stop - start, int(counts.max(initial=0))))
    out[rows, np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)] = (
        gold.out_gains[lo:hi]
    )
    return out


def _dense_block(gold: _Gold, start: int, stop: int, c: int) -> np.ndarray:
    """The gains of rows ``start:stop`` as a dense (rows, c) matrix."""
    lo, hi = np.searchsorted(gold.rows, [start, stop])
    gains = np.zeros((stop - start, c))
    gains[gold.rows[lo:hi] - start, gold.cols[lo:hi]] = gold.gains[lo:hi]
    return gains


# -- the place of the first right answer --------------------------------------------------------


class _First(NamedTuple):
    """Per example, the tied group holding the best ranked right answer: how many present
    candidates rank above it (``above``), its size ``t`` and its right answers ``m``; ``found``
    is False when no right answer is present. Under ``"index"`` and ``"pessimistic"`` the
    group is the right answer alone (``t == m == 1``)."""

    above: np.ndarray
    t: np.ndarray
    m: np.ndarray
    found: np.ndarray


def _first_right(scores: np.ndarray, right: np.ndarray, ties: str) -> _First:
    """``right``: bool (rows, c), the right answers; candidates scored -inf are absent."""
    right = right & (scores > -np.inf)
    found = right.any(axis=1)
    rows = np.flatnonzero(found)
    n = scores.shape[0]
    above, t, m = np.zeros(n, np.int64), np.ones(n, np.int64), np.ones(n, np.int64)
    if rows.size:
        block, ok = scores[rows], right[rows]
        top = np.where(ok, block, -np.inf).max(axis=1)[:, None]
        higher = np.count_nonzero(block > top, axis=1)
        equal = block == top
        tied = np.count_nonzero(equal, axis=1)
        tied_right = np.count_nonzero(equal & ok, axis=1)
        if ties == "expected":
            above[rows], t[rows], m[rows] = higher, tied, tied_right
        elif ties == "index":
            g = np.argmax(equal & ok, axis=1)  # the lowest index among the best right answers
            ahead = np.count_nonzero(equal & (np.arange(block.shape[1]) < g[:, None]), axis=1)
            above[rows] = higher + ahead
        else:
            above[rows] = higher + tied - tied_right
    return _First(above, t, m, found)


def _none_in_first(t, q, m) -> np.ndarray:
    """``C(t - q, m) / C(t, m)``: the chance that none of m right answers of a group of t
    lands in its first q places under a uniform random order."""
    out = np.zeros(t.shape)
    ok = t - q >= m
    one = ok & (m == 1)
    out[one] = (t[one] - q[one]) / t[one]  # exact in the common case of one right answer
    many = ok & (m > 1)
    tm, qm, mm = t[many], q[many], m[many]
    out[many] = np.exp(
        gammaln(tm - qm + 1) - gammaln(tm - qm - mm + 1) - gammaln(tm + 1) + gammaln(tm - mm + 1)
    )
    return out


def _hits(first: _First, k: int) -> np.ndarray:
    q = np.clip(k - first.above, 0, first.t)
    hit = np.where(first.m == 1, q / first.t, 1.0 - _none_in_first(first.t, q, first.m))
    return np.where(first.found, hit, 0.0)


def _reciprocal_rank(first: _First, k: int | None) -> np.ndarray:
    """Expected ``1 / rank`` of the first right answer (0 past ``k``)."""
    n = first.found.size
    out = np.zeros(n)
    single = first.found & (first.t == first.m)  # the group's first place holds a right answer
    if k is not None:
        single &= first.above < k
    out[single] = 1.0 / (first.above[single] + 1.0)
    rows = np.flatnonzero(first.found & (first.t > first.m))
    if rows.size:
        a, t, m = first.above[rows], first.t[rows], first.m[rows]
        last = t - m + 1  # the first right answer is at most this far into the group
        if k is not None:
            last = np.clip(k - a, 0, last)
        owner = np.repeat(np.arange(rows.size), last)
        j = np.arange(owner.size) - np.repeat(np.cumsum(last) - last, last) + 1
        a, t, m = a[owner], t[owner], m[owner]
        # P(j) = C(t - j, m - 1) / C(t, m)
        log_p = (
            gammaln(t - j + 1) - gammaln(m) - gammaln(t - j - m + 2)
            - gammaln(t + 1) + gammaln(m + 1) + gammaln(t - m + 1)
        )  # fmt: skip
        p = np.where(m == 1, 1.0 / t, np.exp(log_p))
        out[rows] = np.bincount(owner, weights=p / (a + j), minlength=rows.size)
    return out


# -- every right answer: the tied groups of a ranking -------------------------------------------


class _Groups(NamedTuple):
    """The tied groups of the present candidates of each row, best first: the row, the
    number of candidates above (``above``), the size ``t``, the right answers ``m``, the sum
    of gains ``gain`` and the right answers above (``right_above``)."""

    row: np.ndarray
    above: np.ndarray
    t: np.ndarray
    m: np.ndarray
    gain: np.ndarray
    right_above: np.ndarray


def _groups(scores: np.ndarray, gains: np.ndarray, ties: str) -> _Groups:
    n, c = scores.shape
    if scores.dtype.kind != "f":
        scores = scores.astype(np.float64)
    if ties == "pessimistic":  # lower gains first among equal scores, then lower index
        order = np.lexsort((gains, -scores), axis=1)
    else:
        order = np.argsort(-scores, axis=1, kind="stable")
    s = np.take_along_axis(scores, order, axis=1)
    g = np.take_along_axis(gains, order, axis=1)
    start = np.ones((n, c), dtype=bool)
    if ties == "expected":
        start[:, 1:] = s[:, 1:] != s[:, :-1]
    present = s > -np.inf  # absent candidates sort last: a prefix of each row is present
    pos = np.broadcast_to(np.arange(c), (n, c))[present]
    row = np.broadcast_to(np.arange(n)[:, None], (n, c))[present]
    g, start = g[present], start[present]
    first = np.flatnonzero(start)
    t = np.diff(np.append(first, pos.size))
    right = (g > 0).astype(np.int64)
    m = np.add.reduceat(right, first) if first.size else np.zeros(0, np.int64)
    gain = np.add.reduceat(g, first) if first.size else np.zeros(0)
    row = row[first]
    before = np.cumsum(m) - m  # right answers in earlier groups, over every row
    row_start = np.ones(row.size, dtype=bool)
    row_start[1:] = row[1:] != row[:-1]
    base = before[np.flatnonzero(row_start)][np.cumsum(row_start) - 1]
    return _Groups(row, pos[first], t, m, gain, before - base)


def _spread(groups: _Groups, k: int) -> np.ndarray:
    """The share of each group's places that lies within the first k."""
    return np.clip(k - groups.above, 0, groups.t) / groups.t


def _discounts(c: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, c + 2))


def _per_row(groups: _Groups, values: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(groups.row, weights=values, minlength=n)


def _recall(groups: _Groups, n_right: np.ndarray, k: int) -> np.ndarray:
    found = _per_row(groups, groups.m * _spread(groups, k), n_right.size)
    return found / np.maximum(n_right, 1)


def _average_precision(groups: _Groups, n_right: np.ndarray) -> np.ndarray:
    """Expected AP: a right answer at place p of a group of t (a above, m right, r right
    above) has precision ``(r + 1 + (m - 1)(p - 1) / (t - 1)) / (a + p)`` on average over
    the places of the other right answers; each place is its with probability 1 / t."""
    keep = groups.m > 0
    row, a, t, m = groups.row[keep], groups.above[keep], groups.t[keep], groups.m[keep]
    r = groups.right_above[keep]
    owner = np.repeat(np.arange(row.size), t)
    p = np.arange(owner.size) - np.repeat(np.cumsum(t) - t, t) + 1
    a, t, m, r = a[owner], t[owner], m[owner], r[owner]
    others = np.where(t > 1, (m - 1) * (p - 1) / np.maximum(t - 1, 1), 0.0)
    precision = m / t * (r + 1 + others) / (a + p)
    total = np.bincount(row[owner], weights=precision, minlength=n_right.size)
    return total / np.maximum(n_right, 1)


def _dcg(groups: _Groups, k: int, n: int, c: int) -> np.ndarray:
    """Expected DCG@k: each group's mean gain at each of its places within the first k."""
    disc = _discounts(c)
    cum = np.concatenate([[0.0], np.cumsum(disc)])
    a, t = groups.above, groups.t
    k = min(k, c)
    within = np.where(
        t == 1,
        np.where(a < k, disc[np.minimum(a, c - 1)], 0.0),
        cum[np.minimum(a + t, k)] - cum[np.minimum(a, k)],
    )
    return _per_row(groups, groups.gain / t * within, n)


def _ideal_dcg(gains: np.ndarray, outside: np.ndarray, k: int) -> np.ndarray:
    """DCG@k of the best ranking of every right answer, those outside the candidates too."""
    best = -np.sort(-np.hstack([gains, outside]), axis=1)[:, :k]
    return best @ _discounts(best.shape[1])


# -- the metrics, one value per example ---------------------------------------------------------


class _Spec(NamedTuple):
    kind: str  # "hits", "mrr", "map", "ndcg", "recall", "sampled"
    k: int | None
    n: int | None
    name: str


def _parse_name(name, names_help: str = _METRIC_NAMES_HELP) -> _Spec:
    """The one reader of metric names, for :func:`get_ranking_metric` and the scorers."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}.")
    key = name.strip().lower()
    match = _METRIC_NAME.match(key)
    if match is None:
        hint = ""
        if re.match(r"^r@\d+/\d+$", key):
            hint = " For recall@K among the first N candidates of each list write 'rN@K'."
        raise ValueError(f"unknown ranking metric {name!r}; valid names are {names_help}.{hint}")
    if match["p1"]:
        return _Spec("hits", 1, None, key)
    if match["map"]:
        return _Spec("map", None, None, key)
    for kind in ("hits", "mrr", "ndcg", "recall"):
        if match[kind] is not None or (kind in ("mrr", "ndcg") and key == kind):
            k = None if match[kind] is None else int(match[kind])
            break
    else:
        kind = "recall" if match["rk"] is not None else "sampled"
        k = int(match["rk"] or match["sk"])
        n = int(match["rn"] or match["sn"])
        if k < 1:
            raise ValueError(f"ranking metric {name!r}: k must be at least 1.")
        least = 2 if kind == "sampled" else 1  # r@K-of-N: the gold and a distractor
        if n < least:
            raise ValueError(f"ranking metric {name!r}: N must be at least {least}.")
        if k > n:
            raise ValueError(f"ranking metric {name!r}: K must be at most N.")
        return _Spec(kind, k, n, key)
    if k is not None and k < 1:
        raise ValueError(f"ranking metric {name!r}: k must be at least 1.")
    return _Spec(kind, k, None, key)


def _block_values(spec: _Spec, scores, gains, outside, ties: str) -> np.ndarray:
    """The metric of each row of a block: ``gains`` (rows, c) of the candidates,
    ``outside`` (rows, w) of the right answers that are not candidates (0: padding)."""
    if spec.kind == "hits":
        return _hits(_first_right(scores, gains > 0, ties), spec.k)
    if spec.kind == "mrr":
        return _reciprocal_rank(_first_right(scores, gains > 0, ties), spec.k)
    n, c = scores.shape
    groups = _groups(scores, gains, ties)
    if spec.kind == "ndcg":
        k = c + outside.shape[1] if spec.k is None else spec.k
        ideal = _ideal_dcg(gains, outside, k)
        return _dcg(groups, k, n, c) / np.where(ideal > 0, ideal, 1.0)
    n_right = np.count_nonzero(gains > 0, axis=1) + np.count_nonzero(outside > 0, axis=1)
    if spec.kind == "map":
        return _average_precision(groups, n_right)
    return _recall(groups, n_right, spec.k)


def _values(spec: _Spec, gold, scores, ties: str, no_answer: str) -> np.ndarray:
    """The metric of each example; NaN for an example left out (``no_answer="skip"``)."""
    scores = _check_scores(scores)
    n, c = scores.shape
    parsed = _parse_gold(gold, n, c)
    if spec.n is not None:  # rN@K: the first N candidates and the right answers among them
        if spec.n > c:
            raise ValueError(
                f"{spec.name!r} needs the first {spec.n} candidates of each list, but scores "
                f"has {c} columns."
            )
        keep = parsed.cols < spec.n
        rows = parsed.rows[keep]
        parsed = _Gold(
            rows, parsed.cols[keep], parsed.gains[keep], np.empty(0, np.int64), np.empty(0),
            np.bincount(rows, minlength=n) > 0,
        )  # fmt: skip
        scores, c = scores[:, : spec.n], spec.n
    out = np.empty(n)
    for start, stop in _row_blocks(n, c):
        gains = _dense_block(parsed, start, stop, c)
        outside = _outside_block(parsed, start, stop)
        out[start:stop] = _block_values(spec, scores[start:stop], gains, outside, ties)
    out[~parsed.has_answer] = np.nan if no_answer == "skip" else 0.0
    return out


def _average(values: np.ndarray, name: str) -> float:
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        raise ValueError(
            f"{name}: no example has a right answer, so every one is skipped "
            f"(no_answer='skip'); no_answer='miss' counts such an example as 0."
        )
    return float(np.mean(kept))


class RankingMetric:
    """A ranking metric read from its name: ``metric(gold, scores) -> float``.

    Made by :func:`get_ranking_metric`; see the module docstring for the names, the forms
    of ``gold`` and the rules for ties and examples with no right answer.

    Attributes
    ----------
    name : str
        The metric's name, lower case (``"ndcg@10"``).
    k : int or None
        The cut-off K of the name; None for ``"mrr"``, ``"map"`` and ``"ndcg"``.
    n : int or None
        N of ``"rN@K"``: the candidates of each list it looks at; None otherwise.
    ties : {"expected", "index", "pessimistic"}
    no_answer : {"skip", "miss"}

    Examples
    --------
    >>> from irdialog.metrics import get_ranking_metric
    >>> metric = get_ranking_metric("R10@2")
    >>> metric
    get_ranking_metric('r10@2', ties='expected', no_answer='skip')
    >>> scores = [[0.9, 0.5, 0.1] + [0.0] * 7, [0.9, 0.8, 0.7] + [0.0] * 7]
    >>> metric.per_example([[0, 2], [9]], scores).tolist()  # 1 of 2 right answers; 0 of 1
    [0.5, 0.0]
    """

    def __init__(self, spec: _Spec, ties: str, no_answer: str):
        self._spec = spec
        self.name = spec.name
        self.k = spec.k
        self.n = spec.n
        self.ties = ties
        self.no_answer = no_answer

    def __repr__(self):
        return (
            f"get_ranking_metric({self.name!r}, ties={self.ties!r}, no_answer={self.no_answer!r})"
        )

    def per_example(self, gold, scores) -> np.ndarray:
        """The metric of each example, NaN where it is left out (no right answer and
        ``no_answer="skip"``).

        Parameters
        ----------
        gold : array-like or sequence of sequences of int
            The right answers (see the module docstring).
        scores : array-like of shape (n_samples, n_candidates)
            Candidate scores, greater is better; ``-inf`` marks an absent candidate.

        Returns
        -------
        values : ndarray of float64 of shape (n_samples,)
        """
        return _values(self._spec, gold, scores, self.ties, self.no_answer)

    def average(self, values) -> float:
        """The mean of :meth:`per_example` values (of one or several blocks of examples),
        leaving out the NaN of skipped examples; an error when every example is skipped."""
        return _average(np.asarray(values, dtype=np.float64), self.name)

    def __call__(self, gold, scores) -> float:
        """The metric, averaged over the examples (see :meth:`per_example`)."""
        return self.average(self.per_example(gold, scores))


def get_ranking_metric(name: str, *, ties: str = "expected", no_answer: str = "skip"):
    """The ranking metric of a name, as a callable ``metric(gold, scores) -> float``.

    Parameters
    ----------
    name : str
        Case-insensitive: ``"hits@K"``, ``"p@1"``, ``"mrr"``, ``"mrr@K"``, ``"map"``,
        ``"ndcg"``, ``"ndcg@K"``, ``"recall@K"`` or ``"rN@K"`` (recall@K among the first N
        candidates of each list, ``"r10@1"``, ``"r2@1"``); their definitions are in the module
        docstring.
    ties : {"expected", "index", "pessimistic"}, default="expected"
        How equal scores are ordered: each tie at its expected value under a random order,
        lower candidate index first, or the right answers last.
    no_answer : {"skip", "miss"}, default="skip"
        What an example with no right answer counts for: left out of the average, or 0.

    Returns
    -------
    metric : RankingMetric
        ``metric(gold, scores)`` is the mean over the examples,
        ``metric.per_example(gold, scores)`` the value of each.

    Raises
    ------
    ValueError
        An unknown name (the message lists the valid ones), K or N below 1, K above N.

    See Also
    --------
    make_ranking_scorer : A metric as a ``GridSearchCV`` scorer.

    Examples
    --------
    >>> from irdialog.metrics import get_ranking_metric
    >>> scores = [[0.7, 0.7, 0.7, 0.1], [0.2, 0.9, 0.5, 0.4]]
    >>> gold = [[0], [2, 3]]  # the right answers of each example
    >>> get_ranking_metric("p@1")(gold, scores)  # (1/3 for a 3-way tie + 0) / 2
    0.16666666666666666
    >>> get_ranking_metric("map")(gold, scores)  # (1/3 (1/1 + 1/2 + 1/3) + (1/2 + 2/3) / 2) / 2
    0.5972222222222222
    >>> get_ranking_metric("r@1/10")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown ranking metric 'r@1/10'; valid names are ...
    """
    spec = _parse_name(name)
    if spec.kind == "sampled":
        raise ValueError(
            f"{name!r} draws distractors from a model's candidate set: it is a scorer "
            f"(make_ranking_scorer); among the first N candidates of each list write "
            f"'r{spec.n}@{spec.k}'."
        )
    return RankingMetric(spec, _check_ties(ties), _check_no_answer(no_answer))


# -- the metrics as functions -------------------------------------------------------------------

_GOLD_PARAM = """gold : array-like of int of shape (n_samples,), bool or float array of shape \
(n_samples, n_candidates), or sequence of sequences of int or of mappings of int to float
        The right answers: the one right candidate of each example (``-1``: not among the
        candidates, a miss), a mask, a matrix of gains, the right answers of each example, or
        their gains (see the module docstring)."""


def _metric(kind: str, k, n, name: str, ties: str, no_answer: str) -> RankingMetric:
    return RankingMetric(_Spec(kind, k, n, name), _check_ties(ties), _check_no_answer(no_answer))


def hits_at_k(gold, scores, k: int = 1, *, ties: str = "expected", no_answer: str = "skip"):
    """Hits@k: the fraction of examples with a right answer among the k best candidates.

    With one right answer per example and no tied scores this is
    ``sklearn.metrics.top_k_accuracy_score(gold, scores, k=k)``; hits@1 is P@1. With
    ``ties="index"`` hits@1 is the accuracy of the model's ``predict``.

    Parameters
    ----------
    {gold}
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    k : int, default=1
        How many of the best candidates are looked at.
    ties : {{"expected", "index", "pessimistic"}}, default="expected"
        How equal scores are ordered (see the module docstring): each tie at its expected
        value, lower candidate index first, or the right answers last.
    no_answer : {{"skip", "miss"}}, default="skip"
        What an example with no right answer counts for: left out, or 0.

    Returns
    -------
    hits : float
        In [0, 1].

    See Also
    --------
    get_ranking_metric : Every metric by name (``"hits@10"``, ``"p@1"``).
    recall_at_k : The Ubuntu "R@k of n" with the right response in column 0.

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
    >>> hits_at_k([1, -1, 2], scores, k=3)  # -1: the right response is not a candidate
    0.6666666666666666
    >>> hits_at_k([0, 1], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])  # 3-way ties: 1/3 each
    0.3333333333333333
    """
    k = check_positive_int(k, "k")
    return _metric("hits", k, None, f"hits@{k}", ties, no_answer)(gold, scores)


def mean_reciprocal_rank(
    gold, scores, *, k: int | None = None, ties: str = "expected", no_answer: str = "skip"
) -> float:
    """Mean reciprocal rank: the mean over examples of ``1 / rank`` of the first right answer.

    A miss (no right answer among the candidates, or all scored ``-inf``) counts 0, and so
    does a first right answer ranked past ``k``.

    Parameters
    ----------
    {gold}
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    k : int, default=None
        MRR@k (MS MARCO's MRR@10): only the k best candidates count. None: all.
    ties : {{"expected", "index", "pessimistic"}}, default="expected"
        How equal scores are ordered (see the module docstring).
    no_answer : {{"skip", "miss"}}, default="skip"
        What an example with no right answer counts for: left out, or 0.

    Returns
    -------
    mrr : float
        In [0, 1].

    See Also
    --------
    get_ranking_metric, hits_at_k

    Examples
    --------
    >>> from irdialog.metrics import mean_reciprocal_rank
    >>> scores = [[0.1, 0.9, 0.5], [0.8, 0.3, 0.1]]
    >>> mean_reciprocal_rank([1, 2], scores)  # (1/1 + 1/3) / 2
    0.6666666666666666
    >>> mean_reciprocal_rank([1, 2], scores, k=2)  # (1/1 + 0) / 2
    0.5
    >>> mean_reciprocal_rank([0], [[0.5, 0.5]])  # a tie: (1/1 + 1/2) / 2
    0.75
    """
    if k is not None:
        k = check_positive_int(k, "k")
    name = "mrr" if k is None else f"mrr@{k}"
    return _metric("mrr", k, None, name, ties, no_answer)(gold, scores)


def mean_average_precision(gold, scores, *, ties: str = "expected", no_answer: str = "skip"):
    """Mean average precision over several right answers per example (Douban, answer
    selection, trec_eval's ``map``).

    The average precision of an example is ``(1 / R) * sum of precision@rank(a)`` over its R
    right answers ``a``; a right answer never ranked (``-1``, scored ``-inf``) adds 0.

    Parameters
    ----------
    {gold}
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    ties : {{"expected", "index", "pessimistic"}}, default="expected"
        How equal scores are ordered (see the module docstring).
    no_answer : {{"skip", "miss"}}, default="skip"
        What an example with no right answer counts for: left out, or 0.

    Returns
    -------
    map : float
        In [0, 1].

    See Also
    --------
    get_ranking_metric

    References
    ----------
    Wu et al., "Sequential Matching Network", ACL 2017, section 5 (MAP, MRR, P@1 on Douban).

    Examples
    --------
    >>> from irdialog.metrics import mean_average_precision
    >>> scores = [[0.9, 0.8, 0.7, 0.1]]
    >>> mean_average_precision([[0, 2]], scores)  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    return _metric("map", None, None, "map", ties, no_answer)(gold, scores)


def ndcg_at_k(gold, scores, k: int | None = None, *, ties="expected", no_answer="skip"):
    """Normalised discounted cumulative gain at k, with graded or binary relevance.

    ``DCG@k = sum over the k best candidates of gain / log2(1 + rank)``, divided by the DCG@k
    of the best ranking of the right answers (those outside the candidates too): linear
    gains, as trec_eval's ``ndcg_cut`` (BEIR reports ``ndcg_cut_10``) and
    ``sklearn.metrics.ndcg_score``, whose ``ignore_ties=False`` averages the gains of tied
    candidates as ``ties="expected"`` does.

    Parameters
    ----------
    {gold}
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    k : int, default=None
        How many of the best candidates count; None: all.
    ties : {{"expected", "index", "pessimistic"}}, default="expected"
        How equal scores are ordered (see the module docstring).
    no_answer : {{"skip", "miss"}}, default="skip"
        What an example with no right answer (no positive gain) counts for: left out, or 0.

    Returns
    -------
    ndcg : float
        In [0, 1].

    See Also
    --------
    get_ranking_metric

    References
    ----------
    K. Järvelin and J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM
    TOIS 20(4), 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from irdialog.metrics import ndcg_at_k
    >>> gains = np.array([[0.0, 2.0, 1.0]])  # graded relevance
    >>> round(ndcg_at_k(gains, [[0.9, 0.5, 0.1]], k=2), 4)  # (0 + 2/log2(3)) / (2 + 1/log2(3))
    0.4796
    """
    if k is not None:
        k = check_positive_int(k, "k")
    name = "ndcg" if k is None else f"ndcg@{k}"
    return _metric("ndcg", k, None, name, ties, no_answer)(gold, scores)


def answer_recall_at_k(
    gold, scores, k: int, *, n: int | None = None, ties="expected", no_answer="skip"
) -> float:
    """The fraction of the right answers among the k best candidates (BEIR's recall@k), or
    among the k best of the first n candidates of each list (Ubuntu's and Douban's Rn@k).

    Parameters
    ----------
    {gold}
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    k : int
        How many of the best candidates are looked at.
    n : int, default=None
        Keep only the first n candidates of each list, and the right answers among them
        (an example with none has no answer). None keeps them all, and a right answer not
        among the candidates counts in the denominator.
    ties : {{"expected", "index", "pessimistic"}}, default="expected"
        How equal scores are ordered (see the module docstring).
    no_answer : {{"skip", "miss"}}, default="skip"
        What an example with no right answer counts for: left out, or 0.

    Returns
    -------
    recall : float
        In [0, 1].

    See Also
    --------
    get_ranking_metric : ``"recall@K"``, ``"rN@K"``.
    recall_at_k : One right response in column 0, ties against it by default.

    References
    ----------
    Lowe et al., "The Ubuntu Dialogue Corpus", SIGDIAL 2015, section 3.5 (1 in n R@k);
    Thakur et al., "BEIR", NeurIPS 2021 Datasets and Benchmarks (recall@100).

    Examples
    --------
    >>> from irdialog.metrics import answer_recall_at_k
    >>> scores = [[0.9, 0.8, 0.7, 0.1]]
    >>> answer_recall_at_k([[0, 3]], scores, k=2)  # 1 of the 2 right answers in the top 2
    0.5
    >>> answer_recall_at_k([[0, 3]], scores, k=1, n=2)  # R2@1: answer 3 is past the first 2
    1.0
    """
    k = check_positive_int(k, "k")
    if n is not None:
        n = check_positive_int(n, "n")
    name = f"recall@{k}" if n is None else f"r{n}@{k}"
    return _metric("recall", k, n, name, ties, no_answer)(gold, scores)


for _f in (hits_at_k, mean_reciprocal_rank, mean_average_precision, ndcg_at_k, answer_recall_at_k):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.format(gold=_GOLD_PARAM)
del _f


def gold_ranks(gold, scores, *, ties: str = "index") -> np.ndarray:
    """The 1-based rank of the first right answer of each example; ``inf`` for a miss.

    A rank needs an order of the tied candidates, so ``ties`` is ``"index"`` or
    ``"pessimistic"`` here; the metrics also take ``"expected"``.

    Parameters
    ----------
    {gold}
    scores : array-like of shape (n_samples, n_candidates)
        Candidate scores, greater is better; ``-inf`` marks an absent candidate.
    ties : {{"index", "pessimistic"}}, default="index"
        How equal scores are ordered: lower candidate index first (as ``rank`` does), or the
        right answers after every other candidate with their score.

    Returns
    -------
    ranks : ndarray of float64 of shape (n_samples,)
        The position of the first right answer in the ranking, ``inf`` when there is none
        among the candidates or it is scored ``-inf``. ``1 / ranks`` is the reciprocal rank.

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
    >>> gold_ranks([[0, 2], [], [1]], scores)  # several right answers
    array([ 2., inf,  2.])
    """
    scores = _check_scores(scores)
    if ties == "expected":
        raise ValueError(
            "gold_ranks gives one rank per example, and under ties='expected' a tie has none; "
            "the metrics (hits_at_k, get_ranking_metric(...)) take ties='expected'."
        )
    ties = _check_ties(ties, ("index", "pessimistic"))
    n, c = scores.shape
    parsed = _parse_gold(gold, n, c)
    ranks = np.empty(n)
    for start, stop in _row_blocks(n, c):
        first = _first_right(scores[start:stop], _dense_block(parsed, start, stop, c) > 0, ties)
        ranks[start:stop] = np.where(first.found, first.above + 1.0, np.inf)
    return ranks


if gold_ranks.__doc__:
    gold_ranks.__doc__ = gold_ranks.__doc__.format(gold=_GOLD_PARAM)


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
    ties : {"pessimistic", "expected", "index"}, default="pessimistic"
        How equal scores are ordered. The default puts the true response after every
        distractor with its score; ``"expected"`` counts each tie at its expected value (as
        ``get_ranking_metric("r10@1")`` does); ``"index"`` would win every tie for the true
        response, which is always in column 0, so that a model that scores everything alike
        would get a perfect recall.

    Returns
    -------
    recall : float
        In [0, 1].

    See Also
    --------
    answer_recall_at_k : The same with the right answers anywhere, one or several.

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
    >>> recall_at_k(scores, 1, n=2, ties="expected")  # row 2: half a hit
    0.5
    """
    scores = _check_scores(scores)
    k = check_positive_int(k, "k")
    ties = _check_ties(ties)
    if n is not None:
        n = check_positive_int(n, "n")
        if n > scores.shape[1]:
            raise ValueError(f"n={n} exceeds the {scores.shape[1]} candidates (columns) of scores.")
        scores = scores[:, :n]
    right = np.zeros(scores.shape, dtype=bool)
    right[:, 0] = True
    return float(np.mean(_hits(_first_right(scores, right, ties), k)))


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
    wrong = np.bincount(_dialogs(groups, len(y_true)), weights=y_true != y_pred)
    return float(np.mean(wrong == 0))


def _dialogs(groups, n_samples: int) -> np.ndarray:
    """The dialog of each response, numbered from 0, from its id in ``groups``."""
    groups = _as_labels(groups, "groups", n_samples)
    try:
        _, dialog = np.unique(groups, return_inverse=True)
    except TypeError:
        raise TypeError("groups must hold dialog ids of one comparable type.") from None
    return dialog.ravel()


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


def _gold_responses(X, y) -> list:
    """``y`` as a list of gold responses, one for each context of ``X``."""
    if isinstance(y, str):
        raise TypeError("y must be a sequence of gold responses, got a single str.")
    y = list(y)
    if len(X) != len(y):
        raise ValueError(f"X has {len(X)} contexts but y has {len(y)} responses.")
    return y


def _block_scores(estimator, X, n_samples: int, n_candidates: int) -> np.ndarray:
    """``estimator.decision_function(X)``, checked to be ``(n_samples, n_candidates)``."""
    scores = _check_scores(estimator.decision_function(X), name="decision_function(X)")
    if scores.shape != (n_samples, n_candidates):
        raise ValueError(
            f"decision_function(X) returned shape {scores.shape}, expected "
            f"{(n_samples, n_candidates)}: (n_samples, len(candidates_))."
        )
    return scores


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


class Accuracy(NamedTuple):
    """What :func:`response_accuracy` returns: per-response and per-dialog accuracy, in
    [0, 1] (``per_dialog`` None without dialog ids)."""

    per_response: float
    per_dialog: float | None


def response_accuracy(estimator, X, y, groups=None, *, ties: str = "expected") -> Accuracy:
    """Per-response and per-dialog accuracy of a fitted ranker's best candidate.

    The accuracy of a row of a benchmark table: each context is scored against the
    ranker's ``candidates_``, and its response is right when the best candidate is its
    gold response. Under ``ties="expected"`` a tie at the top earns its expected value under
    a uniform random order of the tied candidates (hits@1): a gold response tied with two
    other candidates counts 1/3, whatever the order of the candidate file. A dialog is
    right when all its responses are, and counts the product of their values (the tie of
    each response broken independently).

    Parameters
    ----------
    estimator : fitted ranker
        A ranker with ``candidates_`` and ``decision_function``, or a Pipeline ending in one.
    X : sequence of Context or str
        The contexts.
    y : sequence of str of length n_samples
        The gold response of each context; one that is not a candidate is a miss.
    groups : array-like of length n_samples, default=None
        The dialog id of each context, for the per-dialog accuracy (None: not computed).
    ties : {"expected", "index", "pessimistic"}, default="expected"
        How equal scores at the top are ordered: each tie at its expected value; the
        estimator's ``predict`` (lower candidate index first); or the gold response after
        every other candidate with its score.

    Returns
    -------
    accuracy : Accuracy
        ``(per_response, per_dialog)``, each in [0, 1]; ``per_dialog`` None when
        ``groups`` is None.

    See Also
    --------
    per_response_accuracy, per_dialog_accuracy : The same from predicted responses.
    hits_at_k : Hits@1 from a score matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from irdialog.metrics import response_accuracy
    >>> class Lookup:  # a stand-in for a fitted ranker: words in common
    ...     candidates_ = np.array(["hello", "where to", "api_call rome"], dtype=object)
    ...     def decision_function(self, X):
    ...         return np.array([[len(set(x.split()) & set(c.split())) for c in self.candidates_]
    ...                          for x in X])
    ...     def predict(self, X):
    ...         return self.candidates_[np.argmax(self.decision_function(X), axis=1)]
    >>> X, y = ["hello there", "where in rome", "hi"], ["hello", "api_call rome", "hello"]
    >>> response_accuracy(Lookup(), X, y, groups=[0, 0, 1])  # row 2: 1/2, row 3: 1/3
    Accuracy(per_response=0.611111111111111, per_dialog=0.41666666666666663)
    >>> response_accuracy(Lookup(), X, y, ties="index")  # "where to" and "hello" win the ties
    Accuracy(per_response=0.6666666666666666, per_dialog=None)
    """
    ties = _check_ties(ties)
    y = _gold_responses(X, y)
    if ties == "index":  # the ranker's own choice among the tied candidates
        pred = estimator.predict(X)
        per_dialog = None if groups is None else per_dialog_accuracy(y, pred, groups)
        return Accuracy(per_response_accuracy(y, pred), per_dialog)
    candidates = _fitted_candidates(estimator)
    gold = _indices(_as_labels(y, "y"), _lookup(candidates))
    hits = get_ranking_metric("hits@1", ties=ties, no_answer="miss")
    values = np.empty(len(y))
    for start in range(0, len(y), _SCORER_BLOCK_SIZE):
        stop = min(start + _SCORER_BLOCK_SIZE, len(y))
        scores = _block_scores(estimator, X[start:stop], stop - start, len(candidates))
        values[start:stop] = hits.per_example(gold[start:stop], scores)
    if groups is None:
        return Accuracy(float(np.mean(values)), None)
    dialog = _dialogs(groups, len(y))
    right = np.ones(int(dialog.max()) + 1)
    np.multiply.at(right, dialog, values)
    return Accuracy(float(np.mean(values)), float(np.mean(right)))


def _sampled_hits(scores, gold, spec: _Spec, rng, ties: str) -> np.ndarray:
    """Hits@k of the gold among itself and ``n - 1`` candidates drawn at random from the
    others; the gold goes in column 0, the distractors after it."""
    b, c = scores.shape
    draws = np.argpartition(rng.random((b, c - 1)), spec.n - 2, axis=1)[:, : spec.n - 1]
    g = np.where(gold >= 0, gold, 0)
    draws += draws >= g[:, None]  # skip the gold's own column
    sub = np.take_along_axis(scores, np.column_stack([g, draws]), axis=1)
    right = np.zeros(sub.shape, dtype=bool)
    right[:, 0] = gold >= 0
    return _hits(_first_right(sub, right, ties), spec.k)


class _RankingScorer:
    """``scorer(estimator, X, y)`` -> a ranking metric, greater is better.

    Scores ``X`` against ``estimator.candidates_`` in blocks of contexts, so that at most
    ``_SCORER_BLOCK_SIZE x n_candidates`` scores exist at once.
    """

    def __init__(self, spec: _Spec, ties, no_answer, random_state):
        self.spec = spec
        self.name = spec.name
        self.ties = ties
        self.no_answer = no_answer
        self.random_state = random_state

    def __repr__(self):
        args = [repr(self.name), f"ties={self.ties!r}", f"no_answer={self.no_answer!r}"]
        if self.spec.kind == "sampled":
            args.append(f"random_state={self.random_state!r}")
        return f"make_ranking_scorer({', '.join(args)})"

    def __call__(self, estimator, X, y) -> float:
        candidates = _fitted_candidates(estimator)
        y = _gold_responses(X, y)
        if not y:
            raise ValueError("y is empty: at least one response is needed.")
        lookup = _lookup(candidates)
        sampled = self.spec.kind == "sampled"
        if any(isinstance(r, (list, tuple, set, frozenset, np.ndarray)) for r in y):
            if sampled:
                raise ValueError(f"{self.name!r} needs one gold response per example.")
            gold = [_indices([r] if isinstance(r, str) else list(r), lookup, "y") for r in y]
        else:
            gold = _indices(y, lookup)
        c = len(candidates)
        if sampled and c < self.spec.n:
            raise ValueError(f"{self.name!r} needs at least {self.spec.n} candidates, got {c}.")
        if len(X) > _SCORER_BLOCK_SIZE and not isinstance(X, (list, tuple, np.ndarray)):
            X = list(X)
        rng = np.random.default_rng(self.random_state)

        values = []
        for start in range(0, len(y), _SCORER_BLOCK_SIZE):
            stop = start + _SCORER_BLOCK_SIZE
            X_block = X if len(y) <= _SCORER_BLOCK_SIZE else X[start:stop]
            scores = _block_scores(estimator, X_block, min(stop, len(y)) - start, c)
            if sampled:
                values.append(_sampled_hits(scores, gold[start:stop], self.spec, rng, self.ties))
            else:
                values.append(
                    _values(self.spec, gold[start:stop], scores, self.ties, self.no_answer)
                )
        return _average(np.concatenate(values), self.name)


def make_ranking_scorer(name: str, *, ties: str = "expected", no_answer="skip", random_state=0):
    """A ``GridSearchCV`` scorer for a ranking metric, by name.

    The scorer is a callable ``scorer(estimator, X, y) -> float`` (greater is better) that
    scores ``X`` with ``estimator.decision_function`` against ``estimator.candidates_`` (of
    the last step for a Pipeline), in blocks of contexts, and maps the gold responses ``y``
    to candidate indices with :func:`gold_indices`. A gold response that is not a candidate
    is a miss. An element of ``y`` that is a list of strings holds several right answers.

    Parameters
    ----------
    name : str
        Case-insensitive: every name of :func:`get_ranking_metric` (``"hits@1"``, ``"mrr"``,
        ``"map"``, ``"ndcg@10"``, ``"recall@10"``, ...), and ``"r@K-of-N"``: hits@K of the
        gold among itself and N - 1 distractors drawn at random from the other candidates,
        e.g. ``"r@1-of-10"``.
    ties : {"expected", "index", "pessimistic"}, default="expected"
        How equal scores are ordered (see the module docstring). ``"index"`` makes
        ``"hits@1"`` the estimator's ``score``.
    no_answer : {"skip", "miss"}, default="skip"
        What an example with no right answer (an empty list in ``y``) counts for.
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
    get_ranking_metric, hits_at_k, mean_reciprocal_rank

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
    >>> make_ranking_scorer("hits@1")(Lookup(), X, y)  # row 2: half of a 2-way tie
    0.75
    >>> make_ranking_scorer("hits@1", ties="index")(Lookup(), X, y)  # "where to" wins the tie
    0.5
    >>> make_ranking_scorer("hits@0")
    Traceback (most recent call last):
    ...
    ValueError: ranking metric 'hits@0': k must be at least 1.
    """
    spec = _parse_name(name, _SCORER_NAMES_HELP)
    if spec.kind == "recall" and spec.n is not None:
        raise ValueError(
            f"{name!r} takes the first {spec.n} candidates of per-example lists; a scorer "
            f"ranks a model's candidate set: use 'r@{spec.k}-of-{spec.n}' (distractors drawn "
            f"at random) or 'recall@{spec.k}'."
        )
    return _RankingScorer(spec, _check_ties(ties), _check_no_answer(no_answer), random_state)
