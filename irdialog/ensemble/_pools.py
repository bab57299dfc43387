"""Candidate lists as flat (context, candidate) pairs, each distinct text once: what the
rankers over rankers score and learn from.

A fused or re-ranked score depends on the other candidates of a list (a rank, a score
less the list's best), so these models score whole lists. :class:`Pools` holds them as
flat pairs: the owner (context) of each pair, the index of its candidate among the
distinct candidate texts, and its position in its list.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from .._compat import _BaseComposition
from ..base import (
    _check_list,
    check_contexts,
    check_gold_responses,
    check_responses,
    resolve_candidates,
)


@dataclass
class Pools:
    """Per-context candidate lists as flat pairs.

    Attributes
    ----------
    X : list of Context
    owner : int64 ndarray (n_pairs,)
        The context of each pair; pairs of a context are contiguous, in list order.
    doc : int64 ndarray (n_pairs,)
        The index of each pair's candidate in ``texts``.
    texts : ndarray of str
        The distinct candidate texts, in order of first appearance.
    lengths : int64 ndarray (n_contexts,)
        The length of each list.
    """

    X: list
    owner: np.ndarray
    doc: np.ndarray
    texts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def from_lists(cls, X, candidate_lists, *, name: str = "candidate_lists") -> Pools:
        X = check_contexts(X)
        if isinstance(candidate_lists, str) or len(candidate_lists) != len(X):
            got = "a str" if isinstance(candidate_lists, str) else f"{len(candidate_lists)}"
            raise ValueError(f"X has {len(X)} contexts but {name} has {got} lists.")
        index: dict[str, int] = {}
        doc, lengths = [], []
        for i, cands in enumerate(candidate_lists):
            _check_list(cands, name, i)
            if len(cands) == 0:
                raise ValueError(f"{name}[{i}] is empty.")
            for c in check_responses(cands, name=f"{name}[{i}]"):
                doc.append(index.setdefault(c, len(index)))
            lengths.append(len(cands))
        lengths = np.asarray(lengths, dtype=np.int64)
        return cls(
            X,
            np.repeat(np.arange(len(X), dtype=np.int64), lengths),
            np.asarray(doc, dtype=np.int64),
            np.asarray(list(index), dtype=object),
            lengths,
        )

    @classmethod
    def from_candidates(cls, X, candidates) -> Pools:
        """Every context against the same candidates (``decision_function``)."""
        X = check_contexts(X)
        n = len(candidates)
        return cls(
            X,
            np.repeat(np.arange(len(X), dtype=np.int64), n),
            np.tile(np.arange(n, dtype=np.int64), len(X)),
            np.asarray(candidates, dtype=object),
            np.full(len(X), n, dtype=np.int64),
        )

    @property
    def starts(self) -> np.ndarray:
        """The first pair of each list."""
        return np.cumsum(self.lengths) - self.lengths

    def as_matrix(self, pair_scores: np.ndarray) -> np.ndarray:
        """Scores of shape (n_contexts, longest list), ``-inf`` past a list's end (the
        layout of ``rank_candidates``)."""
        out = np.full((len(self.X), int(self.lengths.max())), -np.inf)
        col = np.arange(len(self.owner)) - np.repeat(self.starts, self.lengths)
        out[self.owner, col] = pair_scores
        return out

    def group_max(self, values: np.ndarray) -> np.ndarray:
        """The largest value of each pair's list, per pair."""
        return np.maximum.reduceat(values, self.starts)[self.owner]

    def group_mean(self, values: np.ndarray) -> np.ndarray:
        """The mean value of each pair's list, per pair."""
        return (np.add.reduceat(values, self.starts) / self.lengths)[self.owner]

    def group_std(self, values: np.ndarray) -> np.ndarray:
        """The standard deviation of each pair's list, per pair."""
        mean = self.group_mean(values)
        return np.sqrt(self.group_mean((values - mean) ** 2))


class RankersComposition(_BaseComposition):
    """``get_params``/``set_params`` reaching the named rankers of ``rankers`` (their
    parameters as ``name__param``), as scikit-learn's ``Pipeline`` reaches its steps."""

    def get_params(self, deep=True):
        return self._get_params("rankers", deep=deep)

    def set_params(self, **params):
        self._set_params("rankers", **params)
        return self


class ListScoringMixin:
    """``decision_function``, ``rank_candidates`` and the pair and pool scoring of
    :class:`~irdialog.base.RankerMixin` for a model whose scores depend on the whole list: it
    supplies ``_list_scores(pools) -> one score per pair``."""

    def decision_function(self, X) -> np.ndarray:
        """The score of every candidate, ``candidates_`` being one list per context.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        pools = Pools.from_candidates(check_contexts(X), self.candidates_)
        return pools.as_matrix(self._list_scores(pools))

    def rank_candidates(self, X, candidate_lists) -> np.ndarray:
        """Score per-example candidate lists, each list as one group.

        Returns
        -------
        scores : ndarray of shape (n_samples, max_list_length)
            ``-inf`` past the end of a shorter list.
        """
        check_is_fitted(self)
        pools = Pools.from_lists(X, candidate_lists)
        return pools.as_matrix(self._list_scores(pools))

    def _rank_pool(self, X, pool, k):
        scores = self.rank_candidates(X, [list(pool)] * len(X))
        return np.argsort(-scores, axis=1, kind="stable")[:, : min(k, len(pool))]

    def _score_pairs(self, X, responses) -> np.ndarray:
        # each pair a list of its own
        return self.rank_candidates(X, [[r] for r in check_responses(responses)])[:, 0]


def ranker_scores(ranker, pools: Pools) -> np.ndarray:
    """A fitted ranker's score of every pair of ``pools``, float64 (n_pairs,).

    An embedding model (one whose ``_pool_embeddings`` gives both sides' embeddings)
    embeds each distinct text once; a ranker over rankers scores ``pools`` as they are;
    any other (a pipeline among them) scores the lists with ``rank_candidates``.
    """
    if isinstance(ranker, ListScoringMixin):
        return ranker._list_scores(pools)
    embed = getattr(ranker, "_pool_embeddings", None)
    embedded = None if embed is None else embed(pools.X, pools.texts)
    if embedded is not None:
        E_x, E_c = (np.asarray(e, dtype=np.float64) for e in embedded)
        return np.einsum("ij,ij->i", E_x[pools.owner], E_c[pools.doc])
    lists = np.split(pools.texts[pools.doc], np.cumsum(pools.lengths)[:-1])
    scores = ranker.rank_candidates(pools.X, [list(c) for c in lists])
    col = np.arange(len(pools.owner)) - np.repeat(pools.starts, pools.lengths)
    return scores[pools.owner, col]


def flat_pairs(X, gold: list[tuple[str, ...]]):
    """One (context, response) row per right response: the training pairs of the
    rankers inside, which take one response per example."""
    rows = [i for i, answers in enumerate(gold) for _ in answers]
    return [X[i] for i in rows], [a for answers in gold for a in answers]


def check_fit_input(X, y, candidate_lists, rankers, candidates):
    """What an ensemble's ``fit`` checks of its input: the contexts, their right responses
    (a tuple each), the names of ``rankers`` (distinct) and the candidates (``candidates``,
    or the right responses in order of appearance); ``candidate_lists``, when given, holds
    one list per context."""
    X = check_contexts(X)
    gold = check_gold_responses(y, len(X))
    if candidate_lists is not None and (
        isinstance(candidate_lists, str) or len(candidate_lists) != len(X)
    ):
        raise ValueError(f"X has {len(X)} contexts but candidate_lists does not.")
    names = [name for name, _ in rankers]
    if len(set(names)) != len(names):
        raise ValueError(f"rankers must have distinct names, got {names}.")
    return X, gold, names, resolve_candidates(candidates, flat_pairs(X, gold)[1])


def fit_ranker(ranker, X, gold, candidate_lists=None, rows=None):
    """A clone of ``ranker`` fitted on the contexts ``rows`` (default: all).

    A ranker over rankers (its ``fit`` takes ``candidate_lists``) is fitted on the contexts
    themselves, with their right responses and lists; any other on one (context, right
    response) row per right response, and, with ``candidate_lists``, when its ``fit`` takes
    ``negative_lists`` (or it is a pipeline ending in one), the wrong candidates of each
    row's list as its negatives.
    """
    rows = range(len(X)) if rows is None else rows
    ranker = clone(ranker)
    if (
        candidate_lists is not None
        and "candidate_lists" in inspect.signature(ranker.fit).parameters
    ):
        return ranker.fit(
            [X[i] for i in rows],
            [gold[i] for i in rows],
            candidate_lists=[candidate_lists[i] for i in rows],
        )
    X_pairs, y_pairs = flat_pairs([X[i] for i in rows], [gold[i] for i in rows])
    key = negatives_parameter(ranker)
    if candidate_lists is None or key is None:
        return ranker.fit(X_pairs, y_pairs)
    negatives = [
        [c for c in candidate_lists[i] if c not in set(gold[i])] for i in rows for _ in gold[i]
    ]
    return ranker.fit(X_pairs, y_pairs, **{key: negatives})


def negatives_parameter(ranker) -> str | None:
    """The ``fit`` parameter that hands ``ranker`` its ``negative_lists``: its own, or its
    last step's (``"<step>__negative_lists"``) when it is a pipeline; None if neither
    takes them."""
    if "negative_lists" in inspect.signature(ranker.fit).parameters:
        return "negative_lists"
    if isinstance(ranker, Pipeline):
        name, last = ranker.steps[-1]
        inner = negatives_parameter(last)
        return None if inner is None else f"{name}__{inner}"
    return None
