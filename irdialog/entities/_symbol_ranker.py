"""Entity-symbol ranking: a ranker whose candidates are the entities of a dictionary.

The setting of the Movie Dialog models (Dodge et al. 2016, appendix A): an
:class:`~irdialog.entities.EntityParser` rewrites every text so that each known entity is
one dictionary symbol, and a wrapped ranker (supervised embeddings, a memory network) ranks
those symbols. With a knowledge base, a :class:`~irdialog.retrieval.KBMemoryRetriever`
adds the KB sentences hashed by each context's words to its history (the long-term memory,
section 3.1).
"""

from __future__ import annotations

import inspect
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import RankerMixin, check_contexts, check_responses
from ..retrieval import KBMemoryRetriever
from ..text import TOKENIZERS
from ._parser import EntityParser


def _check_ranker(ranker) -> None:
    """Raise a clear error unless ``ranker`` is an estimator with a ``candidates`` parameter."""
    if not all(hasattr(ranker, m) for m in ("fit", "decision_function", "get_params")):
        raise TypeError(
            "ranker must be a ranker estimator (fit, decision_function, get_params), such as "
            f"SupervisedEmbeddingRanker or MemN2NRanker; got {ranker!r:.80}."
        )
    if "candidates" not in ranker.get_params(deep=False):
        raise ValueError(
            f"ranker must have a candidates parameter (the entity symbols are set as its "
            f"fixed candidates), and {type(ranker).__name__} has none."
        )


class EntitySymbolRanker(RankerMixin, BaseEstimator):
    """A ranker whose candidates are the entities, as single dictionary symbols.

    Contexts are rewritten by an :class:`~irdialog.entities.EntityParser` (entities become
    one token, words seen fewer than ``min_count`` times are dropped); the candidates of
    ``ranker`` are the entity tokens, in the order of ``entities``, so the columns of
    ``decision_function`` are the entities and :meth:`predict` returns entity names. A gold
    response naming several entities (a QA answer list) gives one training example per
    entity; a gold response naming none is not trained on. With ``kb``, a
    :class:`~irdialog.retrieval.KBMemoryRetriever` over the rewritten knowledge-base
    sentences adds the sentences hashed by each context's words to its history (the
    long-term memory of the memory network).

    Parameters
    ----------
    ranker : estimator
        An unfitted ranker with a ``candidates`` parameter (``SupervisedEmbeddingRanker``,
        ``MemN2NRanker``); a clone is fitted. Its parameters can be set and searched as
        ``ranker__<name>``.
    entities : sequence of str
        The entity names (e.g. :func:`irdialog.datasets.load_movie_entities`). Names equal
        up to case and punctuation are one entity, spelled as the first of them.
    min_count : int, default=5
        The parser's frequency cut (over the training texts and the KB sentences).
    kb : sequence of str or None, default=None
        Knowledge-base sentences for the long-term memory. None or empty: no memory.
    max_memories : int, default=30
        At most this many KB sentences per context (with ``kb``).
    max_frequency : int, default=100
        Tokens found in more KB sentences than this are not looked up (with ``kb``).
    lookback : int, default=1
        The KB is looked up by the query and the ``lookback - 1`` previous turns (with
        ``kb``).
    tokenizer : {"word", "char"} or callable, default="word"
        How the parser splits names and texts into tokens (see
        :class:`~irdialog.entities.EntityParser`): ``"word"``, the words and punctuation of
        a script that separates words by spaces; ``"char"``, characters (white space
        dropped), for scripts that do not (Chinese, Japanese, Thai); or a callable from str
        to a list of str. The rewritten texts are tokens joined by spaces, which the
        memory and ``ranker`` read with their default ``"word"`` tokenizer.

    Attributes
    ----------
    candidates_ : ndarray of str
        The entities, by column of ``decision_function``: the first spelling of each
        distinct entity of ``entities``, in order (``parser_.entity_names_``).
    parser_ : EntityParser
        The fitted parser; ``parser_.entity_tokens_`` are the candidates of ``ranker_``.
    retriever_ : KBMemoryRetriever or None
        The long-term memory over the rewritten ``kb``; None without ``kb``.
    ranker_ : estimator
        The fitted clone of ``ranker``.
    n_unanswerable_ : int
        Training examples whose gold response names no entity (not trained on).

    See Also
    --------
    irdialog.entities.EntityParser : the entity dictionary and longest-match parser.
    irdialog.retrieval.KBMemoryRetriever : the long-term memory lookup.
    irdialog.SVDRecommender : the collaborative-filtering baseline over the same entities.

    References
    ----------
    Dodge, Gane, Zhang, Bordes, Chopra, Miller, Szlam & Weston (2016). Evaluating
    Prerequisite Qualities for Learning End-to-End Dialog Systems. ICLR. Sections 3.1-3.2
    and appendix A ("Dictionary").

    Examples
    --------
    >>> from irdialog import EntitySymbolRanker, SupervisedEmbeddingRanker
    >>> entities = ["Heat", "Alien", "Michael Mann", "Ridley Scott"]
    >>> X = ["who directed heat", "who directed alien"] * 10
    >>> y = ["Michael Mann", "Ridley Scott"] * 10
    >>> model = EntitySymbolRanker(
    ...     SupervisedEmbeddingRanker(epochs=30, learning_rate=0.1, margin=0.5, random_state=0),
    ...     entities, min_count=1).fit(X, y)
    >>> model.predict(X[:2]).tolist()
    ['Michael Mann', 'Ridley Scott']
    >>> model.decision_function(X[:2]).shape
    (2, 4)
    """

    _parameter_constraints = {
        "ranker": "no_validation",  # checked in fit (_check_ranker)
        "entities": ["array-like"],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "kb": ["array-like", None],
        "max_memories": [Interval(Integral, 1, None, closed="left")],
        "max_frequency": [Interval(Integral, 1, None, closed="left")],
        "lookback": [Interval(Integral, 1, None, closed="left")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    }

    def __init__(
        self, ranker, entities, *, min_count=5, kb=None, max_memories=30, max_frequency=100,
        lookback=1, tokenizer="word",
    ):  # fmt: skip
        self.ranker = ranker
        self.entities = entities
        self.min_count = min_count
        self.kb = kb
        self.max_memories = max_memories
        self.max_frequency = max_frequency
        self.lookback = lookback
        self.tokenizer = tokenizer

    def _rewrite(self, X):
        X = self.parser_.transform(X)
        return X if self.retriever_ is None else self.retriever_.transform(X)

    # The wrapped ranker's parameters are validated by its own fit, so nested validation
    # stays on.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, groups=None):
        """Fit the parser (and the memory) and the wrapped ranker over the entity symbols.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            Gold responses; each entity they name is one training example.
        groups : array-like of shape (n_samples,), default=None
            Dialog ids, passed on (one per training example) to the wrapped ranker's
            ``fit``, which must take ``groups`` (MemN2N, supervised embeddings).

        Returns
        -------
        self : EntitySymbolRanker
        """
        _check_ranker(self.ranker)
        if len(self.entities) == 0:
            raise ValueError("entities is empty: at least one entity name is needed.")
        X = check_contexts(X)
        y = check_responses(y, len(X))
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (len(X),):
                raise ValueError(
                    f"groups must have one entry per sample ({len(X)}), got {groups.shape}."
                )
            if "groups" not in inspect.signature(self.ranker.fit).parameters:
                raise TypeError(
                    f"groups was given but {type(self.ranker).__name__}.fit takes no groups."
                )
        kb = [] if self.kb is None else list(self.kb)
        self.parser_ = EntityParser(
            self.entities, min_count=self.min_count, tokenizer=self.tokenizer
        ).fit(X + kb, list(y) + [""] * len(kb))
        if len(self.parser_.entity_names_) == 0:
            raise ValueError("entities holds no name with a word in it: no entity to rank.")
        self.retriever_ = None
        if kb:
            self.retriever_ = KBMemoryRetriever(
                self.parser_.transform_text(kb),
                max_memories=self.max_memories,
                max_frequency=self.max_frequency,
                lookback=self.lookback,
            ).fit()
        Xr = self._rewrite(X)
        tokens = self.parser_.entity_tokens_
        X_fit, y_fit, rows = [], [], []
        self.n_unanswerable_ = 0
        for i, (ctx, answer) in enumerate(zip(Xr, y)):
            gold = dict.fromkeys(self.parser_.entity_ids(answer))
            self.n_unanswerable_ += not gold
            for e in gold:
                X_fit.append(ctx)
                y_fit.append(tokens[e])
                rows.append(i)
        if not X_fit:
            raise ValueError("no gold response of y names an entity: nothing to train on.")
        fit_params = {} if groups is None else {"groups": groups[rows]}
        self.ranker_ = clone(self.ranker).set_params(candidates=list(tokens))
        self.ranker_.fit(X_fit, y_fit, **fit_params)
        self.candidates_ = self.parser_.entity_names_
        return self

    def decision_function(self, X):
        """The wrapped ranker's score of every entity for each (rewritten) context.

        Parameters
        ----------
        X : sequence of Context or str

        Returns
        -------
        scores : ndarray of shape (n_samples, n_entities)
            Columns follow ``candidates_``.
        """
        check_is_fitted(self)
        return self.ranker_.decision_function(self._rewrite(check_contexts(X)))

    def _score_pairs(self, X, responses):
        # Responses are rewritten like the contexts: an entity name becomes its symbol and
        # scores as its column of decision_function; other text scores as the wrapped
        # ranker scores its rewritten words.
        check_is_fitted(self)
        return self.ranker_._score_pairs(
            self._rewrite(check_contexts(X)), self.parser_.transform_text(responses)
        )
