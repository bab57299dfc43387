"""BM25 match: rank candidates by Okapi BM25, in the variants of Kamphuis et al. (2020)."""

from __future__ import annotations

from collections import Counter
from itertools import chain
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import (
    RankerMixin,
    check_contexts,
    check_has_candidates,
    check_responses,
    resolve_candidates,
)
from ..features import match_type_matrices, match_type_pairs
from ..text import TOKENIZERS, Analyzer
from ._index import IndexRankMixin, InvertedIndex, count_tokens
from ._pairs import SparsePairs, text_rows
from ._streaming import StreamingFitMixin

# rank_candidates builds the candidates' rows once a call's distinct texts are at least
# 1/_BUILD_CANDIDATES_PER_TEXT of the candidates: answer-selection pools rarely use every
# answer of the collection, yet call after call they use most of them.
_BUILD_CANDIDATES_PER_TEXT = 2

METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")
# Postings scored at a time when indexing: bounds the float64 temporaries (~15 MB).
_SCORE_BLOCK = 1 << 18


def _idf(method: str, df: np.ndarray, n_docs: int) -> np.ndarray:
    """Inverse document frequency of each term (df >= 1), as Kamphuis et al. define it."""
    df = df.astype(np.float64)
    if method == "robertson":  # clipped at 0, as Lucene and bm25s do: never a negative weight
        return np.log(np.maximum((n_docs - df + 0.5) / (df + 0.5), 1.0))
    if method == "lucene":
        return np.log1p((n_docs - df + 0.5) / (df + 0.5))
    if method == "atire":
        return np.log(n_docs / df)
    if method == "bm25l":
        return np.log((n_docs + 1.0) / (df + 0.5))
    return np.log((n_docs + 1.0) / df)  # bm25+


def length_norm(length_ratio, b):
    """The length normalisation ``1 - b + b |d| / avgdl`` of the variants; ``length_ratio``
    is |d| / avgdl."""
    return 1.0 - b + b * length_ratio


def _tf_component(method, tf, length_ratio, k1, b, delta):
    """The term-frequency part of each variant; ``length_ratio`` is |d| / avgdl."""
    norm = length_norm(length_ratio, b)
    if method in ("robertson", "lucene"):
        return tf / (k1 * norm + tf)
    if method == "atire":
        return tf * (k1 + 1.0) / (tf + k1 * norm)
    if method == "bm25l":
        c = tf / norm
        return (k1 + 1.0) * (c + delta) / (k1 + c + delta)
    return (k1 + 1.0) * tf / (k1 * norm + tf) + delta  # bm25+


class BM25Ranker(StreamingFitMixin, IndexRankMixin, RankerMixin, BaseEstimator):
    """BM25 Match: Okapi BM25 between the input (the query) and each candidate.

    Each candidate is a document; the document frequencies and the average length are those
    of the candidates, and each (word, candidate) score is computed once at ``fit`` and kept
    in an inverted index (:class:`~irdialog.retrieval.InvertedIndex`), so that ``rank``
    only adds up the postings of the input's words and skips, by MaxScore, the candidates
    that cannot enter the top k. A word repeated in the input counts once per occurrence,
    as in bm25s and rank_bm25.

    The variants are those of Kamphuis, de Vries, Boytsov & Lin (2020) as bm25s implements
    them, with ``tf`` a word's count in the candidate and ``r = |d| / avgdl``:

    ============  ========================================  ===================================
    ``method``    idf                                       term frequency part
    ============  ========================================  ===================================
    robertson     ln(max(1, (N - df + .5) / (df + .5)))     tf / (k1 (1 - b + b r) + tf)
    lucene        ln(1 + (N - df + .5) / (df + .5))         tf / (k1 (1 - b + b r) + tf)
    atire         ln(N / df)                                tf (k1 + 1) / (tf + k1 (1 - b + b r))
    bm25l         ln((N + 1) / (df + .5))                   (k1 + 1)(c + δ) / (k1 + c + δ),
                                                            c = tf / (1 - b + b r)
    bm25+         ln((N + 1) / df)                          tf (k1 + 1) / (k1 (1 - b + b r) + tf)
                                                            + δ
    ============  ========================================  ===================================

    ``rank_candidates`` scores a pool's texts that are among the candidates from the
    candidates' term scores, computed by its first call whose distinct texts are as many as
    the candidates and kept on the model until it is fitted again; the other texts are
    encoded for the call. They are derived state, neither pickled nor saved by
    :func:`irdialog.persist.save`: for a collection of millions of documents they would
    weigh more than the index, and a loaded model computes them again when it first
    needs them.

    BM25L and BM25+ give a query word that a candidate lacks the score of ``tf = 0``; that
    part is the same for every candidate, so the index holds each word's score minus it and
    ``decision_function`` adds it back.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set (the documents). None: the distinct responses seen in ``fit``.
    use_history : bool, default=True
        The query is the whole conversation (history and last utterance), or the last
        utterance only.
    method : {"lucene", "robertson", "atire", "bm25l", "bm25+"}, default="lucene"
        The variant (bm25s's default is "lucene").
    k1 : float, default=1.5
        Term-frequency saturation.
    b : float, default=0.75
        Length normalisation, in [0, 1].
    delta : float, default=0.5
        The lower bound of BM25L and BM25+ (unused by the others).
    tokenizer : {"word", "char"} or callable, default="word"
        How the candidates and the inputs are split into tokens
        (:class:`irdialog.text.Analyzer`, which lower-cases the text first): ``"word"``,
        the words and punctuation of a script that separates words by spaces; ``"char"``,
        characters (white space dropped), for scripts that do not (Chinese, Japanese,
        Thai), with ``ngram_range`` for character n-grams; or a callable from str to a
        list of str (a model with a callable is saved by ``joblib``, not by
        :func:`irdialog.persist.save`, which stores only irdialog functions).
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The n-grams of tokens that make the terms (never across two utterances).
    drop_punctuation : bool, default=True
        Drop the tokens made only of punctuation (any Unicode ``P*`` character,
        :func:`irdialog.text.is_punctuation`), as IR tokenizers do (bm25s's ``\\w\\w+``,
        Lucene's standard analyzer): a question mark shared by a question and a few
        titles otherwise weighs like a rare word.
    stop_words : collection of str or None, default=None
        Tokens dropped from the candidates and the inputs (after ``tokenizer``, before
        the n-grams), as scikit-learn's vectorizers and bm25s drop them. No list is built
        in: none is right for every language, and BM25's idf already discounts the words
        common in the candidates; a list helps when the inputs hold words the candidates
        rarely do (question words against knowledge-base facts).
    type_weight : float, default=1.0
        With contexts annotated by :class:`~irdialog.features.MatchTypeFeaturizer`: the
        input gets one word per entity type it mentions, and a candidate holding an entity
        that the input mentions gets that type's word once (its length unchanged), scored
        like any word and multiplied by ``type_weight`` (as in :class:`TfidfRanker`).

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate responses, the columns of ``decision_function``.
    vocabulary_ : dict of str to int
        The candidates' words (the terms of the index).
    idf_ : float64 ndarray of shape (n_words,)
    n_documents_ : int
        The documents behind ``idf_`` and ``average_length_``.
    average_length_ : float
        The documents' mean length in tokens.
    index_ : irdialog.retrieval.InvertedIndex
        The candidates' postings, each with its precomputed BM25 term score.
    types_ : list of str
        Entity types seen in the training contexts' match-type annotations (may be empty).

    See Also
    --------
    TfidfRanker : the TF-IDF cosine of the dialog bAbI paper.

    References
    ----------
    Robertson & Zaragoza (2009). The Probabilistic Relevance Framework: BM25 and Beyond.
    Kamphuis, de Vries, Boytsov & Lin (2020). Which BM25 Do You Mean? A Large-Scale
    Reproducibility Study of Scoring Variants. ECIR.

    Examples
    --------
    >>> from irdialog import BM25Ranker
    >>> docs = ["the cat sat on the mat", "dogs chase cats", "a cat and a dog", "stocks fell"]
    >>> model = BM25Ranker(candidates=docs).fit(["hello"], ["stocks fell"])
    >>> model.rank(["cat on a mat"], k=2)
    array([[0, 2]])
    >>> model.set_params(method="bm25+").fit(["hello"], ["stocks fell"]).predict(["a dog"])[0]
    'a cat and a dog'
    """

    # Derived from the fitted state when first needed, never stored (``__getstate__``
    # drops them from a pickle, irdialog.persist.save skips them).
    _transient_attributes = ("_candidate_term_rows",)

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "use_history": ["boolean"],
        "method": [StrOptions(set(METHODS))],
        "k1": [Interval(Real, 0, None, closed="left")],
        "b": [Interval(Real, 0, 1, closed="both")],
        "delta": [Interval(Real, 0, None, closed="left")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "ngram_range": [tuple],
        "drop_punctuation": ["boolean"],
        "stop_words": ["array-like", set, frozenset, None],
        "type_weight": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        candidates=None,
        use_history=True,
        method="lucene",
        k1=1.5,
        b=0.75,
        delta=0.5,
        tokenizer="word",
        ngram_range=(1, 1),
        drop_punctuation=True,
        stop_words=None,
        type_weight=1.0,
    ):
        self.candidates = candidates
        self.use_history = use_history
        self.method = method
        self.k1 = k1
        self.b = b
        self.delta = delta
        self.tokenizer = tokenizer
        self.ngram_range = ngram_range
        self.drop_punctuation = drop_punctuation
        self.stop_words = stop_words
        self.type_weight = type_weight

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the model keeps its rows
        for name in self._transient_attributes:
            state.pop(name, None)
        return state

    # -- text ------------------------------------------------------------------------------

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or scoring call, so each text is tokenised once."""
        return Analyzer(
            tokenizer=self.tokenizer,
            drop_punctuation=self.drop_punctuation,
            stop_words=self.stop_words,
            ngram_range=self.ngram_range,
        )

    def _query_tokens(self, contexts) -> list[list[str]]:
        analyzer = self._analyzer()
        return [analyzer.context_words(c, self.use_history) for c in contexts]

    def _documents(self, texts, vocabulary=None) -> tuple[sp.csr_matrix, np.ndarray]:
        """Term counts and lengths of texts; with ``vocabulary`` None, their words make a
        new ``vocabulary_``."""
        grow = vocabulary is None
        vocabulary = {} if grow else vocabulary
        # Not memoised: the candidates are read once (millions of documents).
        counts, lengths = count_tokens(map(self._analyzer(), texts), vocabulary, grow=grow)
        if grow:
            self.vocabulary_ = vocabulary
        return counts, lengths

    # -- statistics and impacts ----------------------------------------------------------

    def _term_scores(self, counts: sp.csr_matrix, lengths: np.ndarray, dtype=np.float64):
        """Each (document, word) BM25 score, less the tf = 0 score for BM25L and BM25+, as
        ``dtype``; computed a block of documents at a time, so that the float64 temporaries
        stay small however large the collection (an index stores float32)."""
        counts = counts.tocsr()
        ratio = lengths / self.average_length_ if self.average_length_ > 0 else None
        data = np.empty(counts.nnz, dtype=dtype)
        n_rows = counts.shape[0]
        block = max(1, n_rows * _SCORE_BLOCK // max(1, counts.nnz))
        for start in range(0, n_rows, block):
            stop = min(start + block, n_rows)
            lo, hi = counts.indptr[start], counts.indptr[stop]
            rows = np.repeat(np.arange(start, stop), np.diff(counts.indptr[start : stop + 1]))
            r = ratio[rows] if ratio is not None else 1.0
            data[lo:hi] = self._posting_scores(counts.data[lo:hi], r, counts.indices[lo:hi])
        return sp.csr_matrix((data, counts.indices, counts.indptr), shape=counts.shape)

    def _posting_scores(self, tf, ratio, terms) -> np.ndarray:
        """The float64 BM25 score of postings: term counts ``tf``, their documents' length
        ratios ``ratio`` (|d| / avgdl, or 1.0) and their terms; less the tf = 0 score for
        BM25L and BM25+."""
        k1, b, delta = float(self.k1), float(self.b), float(self.delta)
        tf = tf.astype(np.float64)
        part = _tf_component(self.method, tf, ratio, k1, b, delta)
        if self.method in ("bm25l", "bm25+"):
            part = part - _tf_component(self.method, 0.0, ratio, k1, b, delta)
        return self.idf_[terms] * part

    def _absent_score(self) -> np.ndarray:
        """Per word, the score of a document without it (0 but for BM25L and BM25+)."""
        if self.method not in ("bm25l", "bm25+"):
            return np.zeros_like(self.idf_)
        # With tf = 0 the length drops out: BM25L gives (k1 + 1) δ / (k1 + δ), BM25+ δ.
        if self.method == "bm25l":
            d = float(self.delta)
            part = (self.k1 + 1.0) * d / (self.k1 + d)
        else:
            part = float(self.delta)
        return self.idf_ * part

    def _set_statistics(self, df: np.ndarray, n_documents: int, total_length: float) -> None:
        self.n_documents_ = int(n_documents)
        self.average_length_ = total_length / n_documents if n_documents else 0.0
        self.idf_ = np.zeros(len(df))
        seen = df > 0
        self.idf_[seen] = _idf(self.method, df[seen], n_documents)

    # -- fit -------------------------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Index the candidates (the given ones, or the distinct responses of ``y``).

        Parameters
        ----------
        X : sequence of Context or str
            Checked; only the entity types of their match-type annotations are learned.
        y : sequence of str

        Returns
        -------
        self : BM25Ranker
        """
        X = check_contexts(X)
        y = check_responses(y, len(X))
        self.__dict__.pop("_df", None)  # a later partial_fit starts a new stream
        self.candidates_ = resolve_candidates(self.candidates, y)
        self.types_ = sorted({t for ctx in X for _, t in ctx.entities})
        self._entity_types = {w: t for ctx in X for w, t in ctx.entities}
        counts, lengths = self._documents(self.candidates_)
        df = np.bincount(counts.indices, minlength=len(self.vocabulary_))
        self._set_statistics(df, len(lengths), float(lengths.sum()))
        self._index(counts, lengths)
        return self

    def _index(self, counts, lengths) -> None:
        self.__dict__.pop("_candidate_term_rows", None)  # rows of the previous fit: freed
        self.index_ = InvertedIndex.from_matrix(self._term_scores(counts, lengths, np.float32))
        self._absent = self._absent_score()
        if self.types_:
            # Match types: each type word's document frequency (candidates holding an
            # entity of that type) and each candidate's tf = 1 score of a type word.
            holds = self._candidate_types(counts)
            self.type_idf_ = _idf(
                self.method, np.maximum(1, holds.sum(axis=0)), max(1, self.n_documents_)
            )
            self._candidate_bags = counts
            self._candidate_lengths = lengths

    def _candidate_types(self, counts: sp.csr_matrix) -> np.ndarray:
        # (n_candidates, n_types): which candidates hold an entity of each type, from their
        # word counts (one sparse product, no second pass over the texts).
        types = {t: i for i, t in enumerate(self.types_)}
        pairs = [(j, types[self._entity_types[w]]) for w, j in self.vocabulary_.items()
                 if self._entity_types.get(w) in types]  # fmt: skip
        word_type = sp.csr_matrix(
            (np.ones(len(pairs)), ([j for j, _ in pairs], [t for _, t in pairs])),
            shape=(len(self.vocabulary_), len(types)),
        )
        return (counts @ word_type).toarray() > 0

    # -- scoring ---------------------------------------------------------------------------

    def _queries(self, X) -> tuple[list, sp.csr_matrix]:
        X = check_contexts(X)
        return X, count_tokens(self._query_tokens(X), self.vocabulary_, grow=False)[0]

    def _type_part(self, lengths: np.ndarray) -> np.ndarray:
        # (n_docs, n_types): the score of one occurrence of each type word in each document.
        k1, b, delta = float(self.k1), float(self.b), float(self.delta)
        ratio = (
            lengths / self.average_length_ if self.average_length_ > 0 else np.ones_like(lengths)
        )
        part = _tf_component(self.method, 1.0, ratio, k1, b, delta)
        if self.method in ("bm25l", "bm25+"):
            part = part - _tf_component(self.method, 0.0, ratio, k1, b, delta)
        return self.type_weight * part[:, None] * self.type_idf_[None, :]

    def decision_function(self, X) -> np.ndarray:
        """BM25 score of each context (the query) with each candidate (the document).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        check_has_candidates(self)
        X, Q = self._queries(X)
        scores = self.index_.scores(Q) + (Q @ self._absent)[:, None]
        if self.types_:
            part = self._type_part(self._candidate_lengths)  # (n_candidates, n_types)
            matches = match_type_matrices(X, self._candidate_bags, self.vocabulary_, self.types_)
            for k, m in enumerate(matches):
                scores += m.multiply(part[:, k][None, :]).toarray()
        return scores

    def _pool_impacts(self, pool) -> sp.csr_matrix:
        # A pool's BM25 term scores, with the fitted idf and average length.
        counts, lengths = self._documents(pool, self.vocabulary_)
        return self._term_scores(counts, lengths, np.float32)

    def _index_queries(self, X) -> sp.csr_matrix:
        return self._queries(X)[1]

    def _score_pairs(self, X, responses) -> np.ndarray:
        X, Q = self._queries(X)
        bags, lengths = self._documents(responses, self.vocabulary_)
        R = self._term_scores(bags, lengths)
        scores = np.asarray(Q.multiply(R).sum(axis=1)).ravel() + Q @ self._absent
        if self.types_:
            matches = match_type_pairs(X, bags, self.vocabulary_, self.types_)
            scores += (matches * self._type_part(lengths)).sum(axis=1)
        return scores

    def _pair_scorer(self, X, texts):
        if self.types_:
            return None  # the match-type words depend on the pair
        _, Q = self._queries(X)
        lookup, fitted = self._candidate_rows(len(texts))

        def encode(new):
            return self._term_scores(*self._documents(new, self.vocabulary_))

        R, row = text_rows(texts, lookup, fitted, encode)
        pairs = SparsePairs(Q, R)
        absent = Q @ self._absent
        return lambda rows, cols: pairs.dots(rows, row[cols]) + absent[rows]

    def _candidate_rows(self, n_texts: int) -> tuple[dict, sp.csr_matrix | None]:
        """The row of each candidate text and the candidates' float64 term scores (what
        ``_score_pairs`` computes for them), for ``rank_candidates``: built by the first
        call whose distinct texts are at least half as many as the candidates (encoding
        these costs it at most twice encoding its own texts), then kept in
        ``_candidate_term_rows`` until the next fit; ``({}, None)`` before."""
        # The index and the statistics the rows were scored with: statistics set again
        # (a sharded index's ranker) leave no stale rows.
        statistics = (self.index_, self.candidates_, self.idf_, self.average_length_)
        kept = getattr(self, "_candidate_term_rows", None)
        if kept is not None and all(a is b for a, b in zip(kept[0], statistics)):
            return kept[1], kept[2]
        n = len(self.candidates_)
        if n == 0 or n > _BUILD_CANDIDATES_PER_TEXT * n_texts:
            return {}, None
        lookup = dict(zip(self.candidates_.tolist(), range(n)))
        fitted = self._term_scores(*self._documents(self.candidates_, self.vocabulary_))
        self._candidate_term_rows = (statistics, lookup, fitted)
        return lookup, fitted

    # -- streaming fit -----------------------------------------------------------------------

    def _streaming(self) -> bool:
        return hasattr(self, "_df")  # fit drops it: a later partial_fit starts a new stream

    def _reset_stream(self) -> None:
        self._df = Counter()
        self._n_seen = 0
        self._total_length = 0
        self.types_ = []
        self._entity_types = {}

    def _count_chunk(self, X, y) -> None:
        self.types_ = sorted(set(self.types_) | {t for ctx in X for _, t in ctx.entities})
        self._entity_types.update((w, t) for ctx in X for w, t in ctx.entities)
        analyzer = self._analyzer()
        docs = [analyzer.words(r) for r in y]
        self._df.update(chain.from_iterable(map(set, docs)))
        self._n_seen += len(docs)
        self._total_length += sum(map(len, docs))

    def _build_from_counts(self) -> None:
        if not self._df:
            raise ValueError("No token seen: every response is empty.")
        self.vocabulary_ = {t: i for i, t in enumerate(self._df)}
        df = np.fromiter(self._df.values(), dtype=np.int64, count=len(self._df))
        self._set_statistics(df, self._n_seen, float(self._total_length))
        self.candidates_ = (
            np.asarray([], dtype=object)
            if self.candidates is None
            else resolve_candidates(self.candidates, [])
        )
        self._index(*self._documents(self.candidates_, self.vocabulary_))

    def partial_fit(self, X, y):
        """Update the document statistics with one chunk of (context, response) rows.

        The responses are the documents: their document frequencies, count and total
        length are kept between calls (memory: the vocabulary), so a corpus of any size
        is fitted chunk by chunk. No candidate set is collected: ``candidates_`` is the
        ``candidates`` parameter, or empty, in which case score with ``rank_candidates``
        (per-example lists, as for Ubuntu).

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str

        Returns
        -------
        self : BM25Ranker

        Examples
        --------
        >>> from irdialog import BM25Ranker
        >>> model = BM25Ranker()
        >>> for X, y in [(["how do i mount a usb disk"], ["use the mount command"]),
        ...              (["my wifi is down"], ["restart network manager"])]:
        ...     model = model.partial_fit(X, y)
        >>> model.n_documents_
        2
        >>> int(model.rank_candidates(["usb disk won't mount"],
        ...                           [["try the mount command", "restart it"]]).argmax())
        0
        """
        return self._stream_chunk(X, y)
