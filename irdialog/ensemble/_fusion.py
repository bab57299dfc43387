"""Fusion: one ranking from the rankings or the scores of several rankers, no training
beyond theirs."""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, clone

from .._compat import Interval, StrOptions, _fit_context
from ..base import RankerMixin
from ._pools import (
    ListScoringMixin,
    Pools,
    RankersComposition,
    check_fit_input,
    fit_ranker,
    ranker_scores,
)


class FusionRanker(ListScoringMixin, RankersComposition, RankerMixin, BaseEstimator):
    """Combine rankers by reciprocal rank fusion or by a weighted sum of their scores.

    Each ranker is fitted on one (context, right response) row per right response, on
    the fusion's candidate set; then, for each list of candidates:

    - ``method="rrf"``: a candidate scores ``sum_r w_r / (k + rank_r)``, its rank in each
      ranker's ordering of the list (1 for the best; tied candidates share their mean
      rank), as Cormack et al. (2009);
    - ``method="linear"``: ``sum_r w_r z_r``, each ranker's scores standardised over the
      list (less the list's mean, over its standard deviation, 0 when all are equal).

    A fused score depends on the other candidates of the list, so the model scores whole
    lists: ``decision_function`` fuses over ``candidates_``, ``rank_candidates`` over
    each list given.

    Parameters
    ----------
    rankers : list of (str, estimator)
        The rankers to combine; their parameters are tunable as ``<name>__<param>``.
    method : {"rrf", "linear"}, default="rrf"
    weights : sequence of float or None, default=None
        One weight per ranker; None: all 1.
    k : float, default=60
        The constant of reciprocal rank fusion.
    candidates : sequence of str or None, default=None
        The fixed candidate set, also given to every ranker that takes one; None: the
        distinct right responses seen in ``fit``.

    Attributes
    ----------
    candidates_ : ndarray of str
    rankers_ : list of (str, estimator)
        The fitted rankers.

    References
    ----------
    Cormack, Clarke & Buettcher (2009). Reciprocal Rank Fusion outperforms Condorcet and
    individual Rank Learning Methods. SIGIR.

    Examples
    --------
    >>> from irdialog import BM25Ranker, TfidfRanker
    >>> from irdialog.ensemble import FusionRanker
    >>> X = ["how do i renew my policy", "what does life insurance pay"]
    >>> y = ["you renew your policy online", "life insurance pays a death benefit"]
    >>> model = FusionRanker([("bm25", BM25Ranker()), ("tfidf", TfidfRanker())]).fit(X, y)
    >>> model.predict(["renew my policy"])[0]
    'you renew your policy online'
    """

    _parameter_constraints = {
        "rankers": [list, tuple],
        "method": [StrOptions({"rrf", "linear"})],
        "weights": ["array-like", None],
        "k": [Interval(Real, 0, None, closed="left")],
        "candidates": ["array-like", None],
    }

    def __init__(self, rankers, *, method="rrf", weights=None, k=60, candidates=None):
        self.rankers = rankers
        self.method = method
        self.weights = weights
        self.k = k
        self.candidates = candidates

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, candidate_lists=None):
        """Fit every ranker on the (context, right response) rows.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str, or of sequences of str
            The right responses of each context.
        candidate_lists : sequence of sequences of str, default=None
            Each context's pool (right and wrong answers): a ranker whose ``fit`` takes
            ``negative_lists`` (:class:`~irdialog.SupervisedEmbeddingRanker`) draws its
            negatives from the wrong ones.

        Returns
        -------
        self : FusionRanker
        """
        X, gold, _, self.candidates_ = check_fit_input(
            X, y, candidate_lists, self.rankers, self.candidates
        )
        if not self.rankers:
            raise ValueError("rankers is empty: at least one (name, ranker) is needed.")
        if self.weights is not None and len(self.weights) != len(self.rankers):
            raise ValueError(
                f"weights has {len(self.weights)} entries for {len(self.rankers)} rankers."
            )
        self.rankers_ = []
        for name, ranker in self.rankers:
            if "candidates" in ranker.get_params(deep=False):
                ranker = clone(ranker).set_params(candidates=list(self.candidates_))
            self.rankers_.append((name, fit_ranker(ranker, X, gold, candidate_lists)))
        return self

    def _list_scores(self, pools: Pools) -> np.ndarray:
        scores = (ranker_scores(ranker, pools) for _, ranker in self.rankers_)
        return fuse(scores, pools, method=self.method, weights=self.weights, k=self.k)


def fuse(scores, pools: Pools, *, method: str, weights=None, k: float = 60) -> np.ndarray:
    """One fused score per pair of ``pools`` from each ranker's pair scores (an iterable
    of float arrays, one per ranker): ``"rrf"`` sums ``w / (k + rank)``, each rank within
    its list (tied candidates share their mean rank); ``"linear"`` sums ``w * z``, each
    ranker's scores standardised over the list (0 when they are all equal)."""
    total = np.zeros(len(pools.owner))
    for i, s in enumerate(scores):
        w = 1.0 if weights is None else float(weights[i])
        if method == "rrf":
            # rank within each list, best first; ties share their mean rank
            ranks = np.empty_like(s)
            for start, n in zip(pools.starts, pools.lengths):
                ranks[start : start + n] = rankdata(-s[start : start + n])
            total += w / (k + ranks)
        else:
            centred = s - pools.group_mean(s)
            std = pools.group_std(s)
            total += w * np.divide(centred, std, out=np.zeros_like(s), where=std > 0)
    return total
