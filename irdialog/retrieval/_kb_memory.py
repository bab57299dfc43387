"""Long-term memory by hashing: knowledge-base sentences that share a word with the dialog.

Dodge et al. (2016, section 3.1 and table 5) give the memory network a long-term memory:
"for each word in the last n messages we perform a hash lookup to return all long-term
memories (sentences) from a database that also contain that word. Words above a certain
frequency cutoff can be ignored." :class:`KBMemoryRetriever` is that lookup as a Pipeline
transformer: it puts the retrieved sentences into each context's history as ``kb`` turns, where
:class:`~irdialog.embed.MemN2NRanker` (or any history-reading ranker) reads them.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import Context, ContextTransformerMixin, Turn, check_contexts
from ..text import TOKENIZERS, Analyzer, Vocabulary
from ._index import InvertedIndex


class KBMemoryRetriever(ContextTransformerMixin, BaseEstimator):
    """Prepend the knowledge-base sentences hashed by the dialog's words to each history.

    Every sentence of ``sentences`` is indexed by its words
    (:class:`irdialog.text.Analyzer`; feed texts rewritten by
    :class:`~irdialog.entities.EntityParser` to hash on whole entities). For a context,
    the tokens of its query and of the ``lookback - 1`` turns before it look up the
    sentences holding them; tokens found in more than ``max_frequency`` sentences (relation
    names, function words) are ignored. The retrieved sentences, the ones sharing the most
    distinct tokens with the context first (ties: file order), at most ``max_memories``,
    become ``Turn("kb", sentence)`` turns placed before the conversation's own turns, so
    the conversation stays the most recent memory.

    Parameters
    ----------
    sentences : sequence of str
        The knowledge base, one fact per sentence (e.g. the ``sentences`` of
        :func:`irdialog.datasets.load_movie_kb`, rewritten by an ``EntityParser``).
    max_memories : int, default=30
        The most sentences added to one context.
    max_frequency : int, default=100
        Tokens in more sentences than this are not looked up.
    lookback : int, default=1
        The query and the ``lookback - 1`` turns before it are hashed (the "last n
        messages" of the paper).
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The n-grams of tokens that are hashed.

    Attributes
    ----------
    vocabulary_ : irdialog.text.Vocabulary
        The words of the knowledge base.
    index_ : irdialog.retrieval.InvertedIndex
        The sentences holding each token (impact 1): a query's score for a sentence is
        the number of distinct looked-up tokens they share.
    n_retrieved_ : float
        Mean number of sentences added per context by the last ``transform``.

    Examples
    --------
    >>> from irdialog.retrieval import KBMemoryRetriever
    >>> kb = ["heat directed_by michael_mann", "heat release_year 1995",
    ...       "alien directed_by ridley_scott"]
    >>> retriever = KBMemoryRetriever(kb, max_frequency=2).fit()
    >>> [t.text for t in retriever.transform(["who directed heat"])[0].history]
    ['heat directed_by michael_mann', 'heat release_year 1995']
    """

    _parameter_constraints = {
        "sentences": ["array-like"],
        "max_memories": [Interval(Integral, 1, None, closed="left")],
        "max_frequency": [Interval(Integral, 1, None, closed="left")],
        "lookback": [Interval(Integral, 1, None, closed="left")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "ngram_range": [tuple],
    }

    def __init__(
        self, sentences, *, max_memories=30, max_frequency=100, lookback=1, tokenizer="word",
        ngram_range=(1, 1),
    ):  # fmt: skip
        self.sentences = sentences
        self.max_memories = max_memories
        self.max_frequency = max_frequency
        self.lookback = lookback
        self.tokenizer = tokenizer
        self.ngram_range = ngram_range

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or transform, so each text is tokenised once."""
        return Analyzer(tokenizer=self.tokenizer, ngram_range=self.ngram_range)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        """Index the knowledge base. X, when given, is checked (so that bad input fails
        here) but not learned from: the index is the model; y is ignored.

        Returns
        -------
        self : KBMemoryRetriever
        """
        if X is not None:
            check_contexts(X)
        sentences = list(self.sentences)
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise TypeError(f"sentences[{i}] must be a str, got {type(s).__name__}.")
        if not sentences:
            raise ValueError("sentences is empty: there is no knowledge base to retrieve from.")
        self._sentences = np.asarray(sentences, dtype=object)
        tokens = list(map(self._analyzer(), sentences))
        self.vocabulary_ = Vocabulary().fit(tokens)
        self.index_ = InvertedIndex.from_matrix(self.vocabulary_.bags(tokens, binary=True))
        self._frequent = np.diff(self.index_.indptr) > self.max_frequency
        return self

    def _looked_back(self, ctx: Context) -> list[str]:
        """The texts of the ``lookback - 1`` turns before the query."""
        if self.lookback == 1:
            return []
        return [t.text for t in ctx.history[-(self.lookback - 1) :]]

    def _retrieve(self, X) -> list[np.ndarray]:
        """The retrieved sentence ids of each context, in file order."""
        analyzer = self._analyzer()
        tokens = [
            [w for t in (ctx.query, *self._looked_back(ctx)) for w in analyzer.words(t)]
            for ctx in X
        ]
        queries = self.vocabulary_.bags(tokens, binary=True)
        queries.data[self._frequent[queries.indices]] = 0.0
        queries.eliminate_zeros()
        # Most shared distinct tokens first, ties in file order: the index's top k over 0/1
        # weights (the score is the count).
        top, stats = self.index_.top_k(queries, self.max_memories, return_stats=True)
        n_shared = stats["n_positive"]
        return [np.sort(row[:n]) for row, n in zip(top, n_shared)]

    def transform(self, X) -> list[Context]:
        """Contexts with the retrieved sentences as ``kb`` turns before their history.

        Parameters
        ----------
        X : sequence of Context or str

        Returns
        -------
        contexts : list of Context
        """
        check_is_fitted(self)
        X = check_contexts(X)
        out, total = [], 0
        for ctx, ids in zip(X, self._retrieve(X)):
            total += len(ids)
            memories = tuple(Turn("kb", s) for s in self._sentences[ids])
            out.append(Context(memories + ctx.history, ctx.query, ctx.entities))
        self.n_retrieved_ = total / len(X)  # check_contexts rejects an empty X
        return out
