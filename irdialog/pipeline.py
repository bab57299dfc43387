"""A scikit-learn Pipeline that also exposes the ranking methods of its final ranker."""

from __future__ import annotations

from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .base import ShortReprMixin, _text_input_tags


def _final_has(method: str):
    def check(pipeline) -> bool:
        getattr(pipeline._final_estimator, method)  # raises AttributeError when missing
        return True

    return check


class RankingPipeline(ShortReprMixin, Pipeline):
    """A Pipeline of context transformers ending in a ranker.

    A plain ``Pipeline`` delegates ``decision_function``, ``predict`` and ``score`` to its
    last step, but not the ranking methods. This one also passes the contexts through the
    transforms to the ranker's ``rank``, ``rank_candidates``, ``attention`` and
    ``attention_turns`` (MemN2N), and exposes its ``candidates_``. Everything else
    (``clone``, ``GridSearchCV`` with ``<step>__<param>`` names, ``set_output``, metadata
    routing) is ``Pipeline``'s.

    See Also
    --------
    make_ranking_pipeline : build one from its steps, naming them automatically.

    Examples
    --------
    >>> from irdialog import MatchTypeFeaturizer, TfidfRanker, make_ranking_pipeline
    >>> kb = {"paris": "R_location", "rome": "R_location"}
    >>> pipe = make_ranking_pipeline(MatchTypeFeaturizer(kb), TfidfRanker(use_history=False))
    >>> pipe = pipe.fit(["a table in paris", "hello"], ["api_call paris", "hi there"])
    >>> pipe.candidates_[pipe.rank(["a table in rome please"], k=1)[0]]
    array(['api_call paris'], dtype=object)
    """

    def __sklearn_tags__(self):
        return _text_input_tags(super().__sklearn_tags__(), target_required=True)

    def _transform_contexts(self, X):
        check_is_fitted(self)
        for _, _, transformer in self._iter(with_final=False):
            X = transformer.transform(X)
        return X

    @property
    def candidates_(self):
        """The final ranker's candidates."""
        return self._final_estimator.candidates_

    @available_if(_final_has("rank"))
    def rank(self, X, k: int = 10, candidates=None):
        """The final ranker's ``rank`` on the transformed contexts."""
        return self._final_estimator.rank(self._transform_contexts(X), k, candidates=candidates)

    @available_if(_final_has("rank_candidates"))
    def rank_candidates(self, X, candidate_lists):
        """The final ranker's ``rank_candidates`` on the transformed contexts."""
        return self._final_estimator.rank_candidates(self._transform_contexts(X), candidate_lists)

    @available_if(_final_has("attention"))
    def attention(self, X):
        """The final ranker's ``attention`` (MemN2N) on the transformed contexts."""
        return self._final_estimator.attention(self._transform_contexts(X))

    @available_if(_final_has("attention_turns"))
    def attention_turns(self, context):
        """The final ranker's ``attention_turns`` on the transformed context (the turn
        texts of the rows are those the ranker saw)."""
        [context] = self._transform_contexts([context])
        return self._final_estimator.attention_turns(context)


def make_ranking_pipeline(*steps, memory=None, verbose=False) -> RankingPipeline:
    """A :class:`RankingPipeline` of the given steps, named like ``make_pipeline`` names them.

    Examples
    --------
    >>> from irdialog import MatchTypeFeaturizer, MemN2NRanker, make_ranking_pipeline
    >>> make_ranking_pipeline(MatchTypeFeaturizer({"paris": "R_location"}), MemN2NRanker())
    RankingPipeline(steps=[('matchtypefeaturizer',
                            MatchTypeFeaturizer(kb={'paris': 'R_location'})),
                           ('memn2nranker', MemN2NRanker())])
    """
    steps = make_pipeline(*steps).steps
    return RankingPipeline(steps, memory=memory, verbose=verbose)
