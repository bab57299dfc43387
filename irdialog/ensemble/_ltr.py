"""Learning to rank: LightGBM's LambdaMART over features of (question, answer) pairs.

The model re-ranks each question's candidates with gradient-boosted trees trained by the
lambdarank objective (Burges 2010), one group per question, on the lexical features of
:mod:`irdialog.ensemble._features`, the scores of the rankers given, and, for the
strongest of these, each score less the best and less the mean of its list (what sets a
candidate apart from the other candidates of the same question).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, _fit_context
from .._threads import n_threads
from ..base import N_JOBS_CONSTRAINT, RankerMixin, _check_list
from ..retrieval import BM25Ranker
from ..text import TOKENIZERS
from ._features import FEATURE_NAMES, LexicalFeatures
from ._pools import (
    ListScoringMixin,
    Pools,
    RankersComposition,
    check_fit_input,
    fit_ranker,
    ranker_scores,
)

# The lexical features that also enter less their list's best and mean.
RELATIVE_FEATURES = ("bm25", "tfidf_cosine", "idf_overlap", "idf_coverage")


def _lightgbm():
    try:
        import lightgbm
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "LearningToRankRanker needs LightGBM: pip install 'irdialog[ltr]' (or "
            "pip install 'lightgbm>=4')."
        ) from err
    return lightgbm


class LearningToRankRanker(ListScoringMixin, RankersComposition, RankerMixin, BaseEstimator):
    """Re-rank candidates with LambdaMART (LightGBM ``lambdarank``) over pair features.

    Each (context, candidate) pair gets the lexical features of
    :class:`~irdialog.ensemble._features.LexicalFeatures` (BM25, TF-IDF cosine, word
    and bigram overlap, idf-weighted overlap and coverage, lengths), the score of each
    ranker of ``rankers`` (fitted on the training pairs), and, for BM25, the TF-IDF
    cosine, the idf overlap and coverage and every ranker's score, that value less the
    best and less the mean of its list. Gradient-boosted trees learn from them with the
    lambdarank objective, one group per context.

    Training pools: the ``candidate_lists`` given to :meth:`fit` (an answer-selection
    corpus's pools, whose right answers are those of ``y``), or else each context's
    ``depth`` best candidates by BM25 (the first stage) with its right responses.
    A candidate's score depends on the other candidates of its list (through the
    features taken relative to the list), so the model scores whole lists:
    ``decision_function`` ranks ``candidates_`` as one list per context and
    ``rank_candidates`` each list as given.

    Parameters
    ----------
    rankers : list of (str, estimator), default=()
        Rankers whose scores are features, fitted on one (context, right response)
        row per right response (a ranker whose ``fit`` takes ``negative_lists``, as
        :class:`~irdialog.SupervisedEmbeddingRanker`, also gets the wrong candidates of
        its row's list as its negatives); their parameters are tunable as
        ``<name>__<param>``.
    cv : int or None, default=None
        Cross-fit the rankers' scores of the training lists: with ``cv`` folds of the
        training contexts, each fold's lists are scored by rankers fitted on the other
        folds, so that the trees learn how far to trust a ranker on questions it has
        not seen (the final rankers are fitted on every context). None: the rankers
        fitted on every context score their own training lists.
    candidates : sequence of str or None, default=None
        The fixed candidate set; None: the distinct right responses seen in ``fit``.
    depth : int, default=100
        Without ``candidate_lists``, the candidates per training context: its right
        responses and the best others by BM25.
    max_negatives : int or None, default=None
        Train the trees on at most this many wrong candidates per list, drawn at random
        (with ``random_state``) after the features of the whole list are computed: a
        shorter fit on long pools. None: all of them.
    n_estimators : int, default=300
    learning_rate : float, default=0.05
    num_leaves : int, default=31
    min_child_samples : int, default=50
    subsample : float, default=0.8
        Share of the rows each tree sees (bagging).
    colsample_bytree : float, default=0.8
    tokenizer : {"word", "char"} or callable, default="word"
        The tokens of the lexical features (:class:`irdialog.text.Analyzer`).
    use_history : bool, default=True
        The question of the lexical features is the whole conversation or the last
        utterance.
    random_state : int, RandomState instance or None, default=None
        Seeds LightGBM's bagging.
    n_jobs : int or None, default=None
        LightGBM's threads in fit and scoring (None: one; -1: every core).

    Attributes
    ----------
    candidates_ : ndarray of str
    rankers_ : list of (str, estimator)
        The fitted rankers.
    features_ : LexicalFeatures
        The fitted lexical features (idf and average length of the training candidates).
    feature_names_ : list of str
    model_ : str
        The LightGBM model, in LightGBM's text format.

    See Also
    --------
    FusionRanker : combine rankers' ranks or scores with no training.

    References
    ----------
    Burges (2010). From RankNet to LambdaRank to LambdaMART: An Overview. Microsoft
    Research Technical Report MSR-TR-2010-82.
    Ke et al. (2017). LightGBM: A Highly Efficient Gradient Boosting Decision Tree. NIPS.

    Examples
    --------
    >>> from irdialog.ensemble import LearningToRankRanker
    >>> X = ["how do i renew my policy", "what does life insurance pay",
    ...      "can i renew online", "who gets the life insurance benefit"] * 5
    >>> y = ["you renew your policy online", "life insurance pays a death benefit",
    ...      "you renew your policy online", "the beneficiary gets the benefit"] * 5
    >>> model = LearningToRankRanker(n_estimators=20, min_child_samples=2,
    ...                              random_state=0).fit(X, y)
    >>> model.predict(["renew my policy online"])[0]
    'you renew your policy online'
    """

    _parameter_constraints = {
        "rankers": [list, tuple],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
        "candidates": ["array-like", None],
        "depth": [Interval(Integral, 1, None, closed="left")],
        "max_negatives": [Interval(Integral, 1, None, closed="left"), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "min_child_samples": [Interval(Integral, 1, None, closed="left")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "use_history": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINT,
    }

    def __init__(
        self,
        rankers=(),
        *,
        cv=None,
        candidates=None,
        depth=100,
        max_negatives=None,
        n_estimators=300,
        learning_rate=0.05,
        num_leaves=31,
        min_child_samples=50,
        subsample=0.8,
        colsample_bytree=0.8,
        tokenizer="word",
        use_history=True,
        random_state=None,
        n_jobs=None,
    ):
        self.rankers = rankers
        self.cv = cv
        self.candidates = candidates
        self.depth = depth
        self.max_negatives = max_negatives
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.tokenizer = tokenizer
        self.use_history = use_history
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- features ----------------------------------------------------------------------------

    def _features(self, pools: Pools, scores=None) -> np.ndarray:
        """The features of every pair; ``scores``: the rankers' scores, if computed."""
        F = self.features_.transform(pools)
        columns = [F]
        relative = [F[:, FEATURE_NAMES.index(n)] for n in RELATIVE_FEATURES]
        if scores is None:
            scores = [ranker_scores(ranker, pools) for _, ranker in self.rankers_]
        for s in scores:
            columns.append(s[:, None])
            relative.append(s)
        for f in relative:
            columns.append(np.column_stack([f - pools.group_max(f), f - pools.group_mean(f)]))
        return np.hstack(columns)

    def _training_pools(self, X, gold, candidate_lists):
        """The training lists (right responses first) and their 0/1 relevance."""
        if candidate_lists is None:  # the first stage: BM25's top of the candidates
            first = BM25Ranker(
                candidates=list(self.candidates_),
                use_history=self.use_history,
                tokenizer=self.tokenizer,
            ).fit(X, [answers[0] for answers in gold])
            top = first.rank(X, k=min(self.depth, len(self.candidates_)))
            candidate_lists = [list(self.candidates_[row]) for row in top]
        lists, relevance = [], []
        for i, (answers, cands) in enumerate(zip(gold, candidate_lists, strict=True)):
            _check_list(cands, "candidate_lists", i)
            right = set(answers)
            wrong = list(dict.fromkeys(c for c in cands if c not in right))
            lists.append(list(answers) + wrong)
            relevance.append([1] * len(answers) + [0] * len(wrong))
        pools = Pools.from_lists(X, lists)
        return pools, np.concatenate([np.asarray(r, dtype=np.float64) for r in relevance])

    def _sample_rows(self, pools: Pools, relevance: np.ndarray, rng) -> np.ndarray:
        """The training rows kept with ``max_negatives``: every right pair, and that
        many wrong pairs per list drawn at random (the features are those of the whole
        list, so the kept rows look like the rows the model ranks)."""
        keep = relevance > 0
        for start, n in zip(pools.starts, pools.lengths):
            wrong = start + np.flatnonzero(relevance[start : start + n] == 0)
            if len(wrong) > self.max_negatives:
                wrong = rng.choice(wrong, self.max_negatives, replace=False)
            keep[wrong] = True
        return np.flatnonzero(keep)

    # -- fit ---------------------------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, candidate_lists=None):
        """Fit the rankers on the right pairs, then the trees on the training lists.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str, or of sequences of str
            The right responses of each context (several for answer selection).
        candidate_lists : sequence of sequences of str, default=None
            Each context's pool (right and wrong answers); the training lists. None:
            its ``depth`` best candidates by BM25 and its right responses.

        Returns
        -------
        self : LearningToRankRanker
        """
        lgb = _lightgbm()
        X, gold, names, self.candidates_ = check_fit_input(
            X, y, candidate_lists, self.rankers, self.candidates
        )
        documents = list(self.candidates_)
        if candidate_lists is not None:
            documents = list(
                dict.fromkeys(documents + [c for cands in candidate_lists for c in cands])
            )
        self.features_ = LexicalFeatures(tokenizer=self.tokenizer, use_history=self.use_history)
        self.features_.fit(documents)
        self.rankers_ = [
            (name, fit_ranker(r, X, gold, candidate_lists)) for name, r in self.rankers
        ]
        pools, relevance = self._training_pools(X, gold, candidate_lists)
        F = self._features(pools, self._cross_fitted_scores(pools, gold, candidate_lists))
        self.feature_names_ = (
            list(FEATURE_NAMES)
            + names
            + [f"{n} - list {s}" for n in list(RELATIVE_FEATURES) + names for s in ("best", "mean")]
        )
        rng = check_random_state(self.random_state)
        seed = rng.randint(np.iinfo(np.int32).max)
        lengths = pools.lengths
        if self.max_negatives is not None:
            rows = self._sample_rows(pools, relevance, rng)
            F, relevance = F[rows], relevance[rows]
            lengths = np.bincount(pools.owner[rows], minlength=len(pools.X))
        model = lgb.LGBMRanker(
            objective="lambdarank",
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            num_leaves=self.num_leaves,
            min_child_samples=self.min_child_samples,
            subsample=self.subsample,
            subsample_freq=1 if self.subsample < 1 else 0,
            colsample_bytree=self.colsample_bytree,
            random_state=int(seed),
            n_jobs=n_threads(self.n_jobs),
            deterministic=True,
            force_row_wise=True,
            verbose=-1,
        )
        model.fit(F, relevance, group=lengths)
        self.model_ = model.booster_.model_to_string()
        return self

    def _cross_fitted_scores(self, pools: Pools, gold, candidate_lists):
        """The rankers' scores of the training lists, cross-fitted with ``cv``; None
        without ``cv`` (the fitted rankers score them)."""
        if self.cv is None or not self.rankers:
            return None
        X = pools.X
        lists = np.split(pools.texts[pools.doc], np.cumsum(pools.lengths)[:-1])
        scores = [np.empty(len(pools.owner)) for _ in self.rankers]
        folds = KFold(
            self.cv,
            shuffle=True,
            random_state=check_random_state(self.random_state).randint(2**31 - 1),
        )
        for train_rows, test_rows in folds.split(np.arange(len(X))):
            held = Pools.from_lists([X[i] for i in test_rows], [list(lists[i]) for i in test_rows])
            at = np.concatenate(
                [np.arange(pools.starts[i], pools.starts[i] + pools.lengths[i]) for i in test_rows]
            )
            for k, (_, ranker) in enumerate(self.rankers):
                fitted = fit_ranker(ranker, X, gold, candidate_lists, train_rows)
                scores[k][at] = ranker_scores(fitted, held)
        return scores

    # -- scoring -----------------------------------------------------------------------------

    def _list_scores(self, pools: Pools) -> np.ndarray:
        booster = _lightgbm().Booster(model_str=self.model_)
        return booster.predict(self._features(pools), num_threads=n_threads(self.n_jobs))
