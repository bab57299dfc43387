"""Seed ensembles: one ranker fitted from several random starts, their scores fused."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state

from .._compat import HasMethods, Interval, StrOptions, _fit_context
from ..base import N_JOBS_CONSTRAINT, RankerMixin, nested_params
from ._fusion import fuse
from ._pools import ListScoringMixin, Pools, check_fit_input, fit_ranker, ranker_scores


def _seeded(ranker, seed: int):
    """A clone of ``ranker`` with every ``random_state`` (nested ones included) set to
    ``seed``; None when it has none."""
    names = nested_params(ranker, "random_state")
    if not names:
        return None
    return clone(ranker).set_params(**dict.fromkeys(names, int(seed)))


class SeedEnsembleRanker(ListScoringMixin, RankerMixin, BaseEstimator):
    """Fit one ranker from ``n_seeds`` random starts and fuse their scores.

    A model trained by stochastic gradient descent lands somewhere else from each random
    start, and two such models err on different candidates; fusing their scores (the
    "deep ensembles" of Lakshminarayanan et al. 2017) errs less than either. Each member
    is a clone of ``ranker`` whose every ``random_state``, nested ones included, is one
    seed drawn from ``random_state``; the members are fused as
    :class:`~irdialog.ensemble.FusionRanker` fuses its rankers, with equal weights.

    Parameters
    ----------
    ranker : estimator
        The ranker to fit from each start: any ranker (or ranking pipeline) with a
        ``random_state``; its parameters are tunable as ``ranker__<param>``.
    n_seeds : int, default=3
        The number of members.
    method : {"linear", "rrf"}, default="linear"
        ``"linear"``: each member's scores standardised over each list, summed;
        ``"rrf"``: reciprocal rank fusion with the constant ``k``.
    k : float, default=60
        The constant of reciprocal rank fusion.
    random_state : int, RandomState instance or None, default=None
        Draws the members' seeds. The members of two different ``random_state`` are
        different models, so two runs at two seeds are independent.
    candidates : sequence of str or None, default=None
        The fixed candidate set, also given to ``ranker`` when it takes one; None: the
        distinct right responses seen in ``fit``.
    n_jobs : int or None, default=None
        Members fitted side by side in ``n_jobs`` joblib workers (-1: every core). Each
        member is fitted as alone, so the model does not depend on ``n_jobs``.

    Attributes
    ----------
    candidates_ : ndarray of str
    seeds_ : ndarray of int
        The ``random_state`` of each member.
    estimators_ : list of estimator
        The fitted members.

    See Also
    --------
    FusionRanker : fuse different rankers.

    References
    ----------
    Lakshminarayanan, Pritzel & Blundell (2017). Simple and Scalable Predictive
    Uncertainty Estimation using Deep Ensembles. NeurIPS.

    Examples
    --------
    >>> from irdialog import SupervisedEmbeddingRanker
    >>> from irdialog.ensemble import SeedEnsembleRanker
    >>> X = ["how do i renew my policy", "what does life insurance pay"]
    >>> y = ["you renew your policy online", "life insurance pays a death benefit"]
    >>> member = SupervisedEmbeddingRanker(embedding_dim=8, epochs=5)
    >>> model = SeedEnsembleRanker(member, n_seeds=2, random_state=0).fit(X, y)
    >>> len(model.estimators_), len(set(model.seeds_))
    (2, 2)
    >>> model.predict(["renew my policy"])[0]
    'you renew your policy online'
    """

    _parameter_constraints = {
        "ranker": [HasMethods(["fit", "rank_candidates"])],
        "n_seeds": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"linear", "rrf"})],
        "k": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "candidates": ["array-like", None],
        "n_jobs": N_JOBS_CONSTRAINT,
    }

    def __init__(
        self, ranker, *, n_seeds=3, method="linear", k=60, random_state=None, candidates=None,
        n_jobs=None,
    ):  # fmt: skip
        self.ranker = ranker
        self.n_seeds = n_seeds
        self.method = method
        self.k = k
        self.random_state = random_state
        self.candidates = candidates
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, candidate_lists=None):
        """Fit ``n_seeds`` clones of ``ranker``, each from its own seed.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str, or of sequences of str
            The right responses of each context.
        candidate_lists : sequence of sequences of str, default=None
            Each context's pool (right and wrong answers): a ranker whose ``fit`` takes
            ``negative_lists`` (:class:`~irdialog.SupervisedEmbeddingRanker`, or a
            pipeline ending in one) draws its negatives from the wrong ones.

        Returns
        -------
        self : SeedEnsembleRanker
        """
        X, gold, _, self.candidates_ = check_fit_input(X, y, candidate_lists, [], self.candidates)
        ranker = self.ranker
        if "candidates" in ranker.get_params(deep=False):
            ranker = clone(ranker).set_params(candidates=list(self.candidates_))
        # as scikit-learn's bagging draws its members' seeds
        self.seeds_ = check_random_state(self.random_state).randint(
            np.iinfo(np.int32).max, size=self.n_seeds
        )
        members = [_seeded(ranker, seed) for seed in self.seeds_]
        if members[0] is None:
            raise ValueError(
                f"ranker {type(self.ranker).__name__} has no random_state parameter: "
                "all its members would be the same model."
            )
        self.estimators_ = Parallel(n_jobs=self.n_jobs)(
            delayed(fit_ranker)(member, X, gold, candidate_lists) for member in members
        )
        return self

    def _list_scores(self, pools: Pools) -> np.ndarray:
        scores = (ranker_scores(member, pools) for member in self.estimators_)
        return fuse(scores, pools, method=self.method, k=self.k)
