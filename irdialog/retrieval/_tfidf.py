"""TF-IDF match: rank candidates by TF-IDF weighted cosine similarity with the input."""

from __future__ import annotations

from collections import Counter
from itertools import chain
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import (
    RankerMixin,
    check_contexts,
    check_has_candidates,
    check_responses,
    resolve_candidates,
)
from ..features import match_type_matrices, match_type_pairs, type_token
from ..text import TOKENIZERS, Analyzer, identity_analyzer
from ._index import IndexRankMixin, InvertedIndex, count_tokens
from ._pairs import SparsePairs, text_rows
from ._streaming import StreamingFitMixin


def _input_tokens(ctx, analyzer, use_history, types):
    # The input's words plus one type word per entity type it mentions (match-type features).
    tokens = analyzer.context_words(ctx, use_history)
    tokens.extend(type_token(t) for t in dict.fromkeys(t for _, t in ctx.entities) if t in types)
    return tokens


def _row_norms(m: sp.csr_matrix) -> np.ndarray:
    return np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())


def _unit_rows(m) -> sp.csr_matrix:
    # Each row over its Euclidean norm (rows of norm 0 stay 0): cosine scores as products.
    norms = _row_norms(m)
    return (sp.diags(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)) @ m).tocsr()


# rank_candidates takes the fitted rows of the texts among the candidates when there are at
# most this many candidates per text.
_LOOKUP_CANDIDATES_PER_TEXT = 16


def _safe_divide(num, den):
    return np.divide(num, den, out=np.zeros_like(num, dtype=np.float64), where=den > 0)


class TfidfRanker(StreamingFitMixin, IndexRankMixin, RankerMixin, BaseEstimator):
    """TF-IDF Match: the TF-IDF weighted cosine between the input and each candidate.

    No learning beyond the IDF statistics, which are taken from the training inputs and
    the candidates. With contexts annotated by :class:`~irdialog.features.MatchTypeFeaturizer`
    (in a ``Pipeline``), the input gets one type word per entity type it mentions and each
    candidate gets the type word of every entity it shares with the input, so shared
    entities add to the similarity even when they were never seen in training.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set (e.g. the dialog bAbI candidate file). None: the distinct
        responses seen in ``fit``.
    use_history : bool, default=True
        Match the whole conversation (history and last utterance), or the last utterance
        only.
    sublinear_tf : bool, default=False
        Use 1 + log(tf) instead of raw term counts.
    type_weight : float, default=1.0
        Multiplier of the match-type words' TF-IDF weights, on both sides. Type words
        occur in most inputs, so their IDF is low; a larger weight lets a shared entity
        type outweigh shared function words. Only used with match-type annotations.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The n-grams of tokens that make the words (never across two utterances).

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate responses, the columns of ``decision_function``.
    vectorizer_ : sklearn.feature_extraction.text.TfidfVectorizer
        Vocabulary and IDF weights (over token lists, including type words).
    types_ : list of str
        Entity types seen in the training contexts' match-type annotations (may be empty).
    candidate_tfidf_ : scipy.sparse.csr_matrix of shape (n_candidates, n_words)
        The candidates' TF-IDF rows.
    index_ : irdialog.retrieval.InvertedIndex
        The inverted index of the candidates, with each word's TF-IDF weight over the
        candidate's norm as its impact. ``rank`` reads only the postings of the query's
        words, and skips the candidates that cannot enter the top k.

    See Also
    --------
    NearestNeighborRanker : the other classical IR baseline of the paper.

    References
    ----------
    Bordes, Boureau & Weston (2017). Learning End-to-End Goal-Oriented Dialog. ICLR.
    Sections 4.2 (TF-IDF Match) and 4.5 (match type features).

    Examples
    --------
    >>> from irdialog import TfidfRanker
    >>> X = ["i want italian food", "where is it", "in paris please"]
    >>> y = ["api_call italian", "it is in paris", "ok paris"]
    >>> model = TfidfRanker().fit(X, y)
    >>> model.predict(["italian food please"])[0]
    'api_call italian'

    For a language written without spaces, characters and their bigrams:

    >>> X = ["我想吃意大利菜", "在北京", "两个人"]
    >>> y = ["请问在哪个城市？", "请问几位用餐？", "api_call 意大利菜 北京 两人"]
    >>> model = TfidfRanker(tokenizer="char", ngram_range=(1, 2)).fit(X, y)
    >>> model.predict(["北京的意大利菜，两个人"])[0]
    'api_call 意大利菜 北京 两人'
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "use_history": ["boolean"],
        "sublinear_tf": ["boolean"],
        "type_weight": [Interval(Real, 0, None, closed="neither")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "ngram_range": [tuple],
    }

    def __init__(
        self,
        *,
        candidates=None,
        use_history=True,
        sublinear_tf=False,
        type_weight=1.0,
        tokenizer="word",
        ngram_range=(1, 1),
    ):
        self.candidates = candidates
        self.use_history = use_history
        self.sublinear_tf = sublinear_tf
        self.type_weight = type_weight
        self.tokenizer = tokenizer
        self.ngram_range = ngram_range

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or scoring call, so each text is tokenised once."""
        return Analyzer(tokenizer=self.tokenizer, ngram_range=self.ngram_range)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X = check_contexts(X)
        y = check_responses(y, len(X))
        self.candidates_ = resolve_candidates(self.candidates, y)
        self.types_ = sorted({t for ctx in X for _, t in ctx.entities})
        analyzer = self._analyzer()
        inputs = [_input_tokens(ctx, analyzer, self.use_history, self.types_) for ctx in X]
        # The candidates in one pass that keeps no token lists (millions of documents).
        first_seen: dict[str, int] = {}
        counts, _ = count_tokens(map(analyzer, self.candidates_), first_seen, grow=True)
        # The IDF statistics: inputs and candidates are documents; type words enter them
        # through the inputs that mention them and the candidates that hold an entity of
        # that type (a candidate counts once per type).
        df = Counter(chain.from_iterable(map(set, inputs)))
        for word, n in zip(first_seen, np.bincount(counts.indices, minlength=len(first_seen))):
            df[word] += int(n)
        entity_types = {w: t for ctx in X for w, t in ctx.entities}
        if entity_types:
            word_type = np.array([type_token(entity_types.get(w, "")) for w in first_seen])
            entity = np.array([w in entity_types for w in first_seen], dtype=bool)
            rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
            held = entity[counts.indices]
            pairs = set(zip(rows[held].tolist(), word_type[counts.indices[held]].tolist()))
            df.update(t for _, t in pairs)
        vocabulary = {w: i for i, w in enumerate(sorted(df))}  # TfidfVectorizer's order
        counts_df = np.fromiter((df[w] for w in vocabulary), dtype=np.float64, count=len(df))
        n_documents = len(inputs) + len(self.candidates_)
        vectorizer = TfidfVectorizer(
            analyzer=identity_analyzer, norm=None, sublinear_tf=self.sublinear_tf
        )
        vectorizer.vocabulary_ = vocabulary
        # TfidfTransformer's smooth idf: ln((1 + n) / (1 + df)) + 1.
        vectorizer.idf_ = np.log((1.0 + n_documents) / (1.0 + counts_df)) + 1.0
        self.vectorizer_ = vectorizer
        column = np.fromiter((vocabulary[w] for w in first_seen), np.int64, len(first_seen))
        self._index(self._weighted(counts, column))
        return self

    def _weighted(self, counts: sp.csr_matrix, column: np.ndarray) -> sp.csr_matrix:
        """TF-IDF rows of term counts whose column j is the vocabulary's word column[j]:
        what ``vectorizer_.transform`` gives for the same texts."""
        tf = counts.data.astype(np.float64)
        if self.sublinear_tf:
            np.log(tf, out=tf)
            tf += 1.0
        m = sp.csr_matrix(
            (tf, column[counts.indices], counts.indptr),
            shape=(counts.shape[0], len(self.vectorizer_.vocabulary_)),
        )
        m.sort_indices()
        m.data *= self.vectorizer_.idf_[m.indices]
        return m

    def _index(self, candidate_tfidf: sp.csr_matrix) -> None:
        self.candidate_tfidf_ = candidate_tfidf
        self.index_ = InvertedIndex.from_matrix(_unit_rows(candidate_tfidf))

    def _type_weights(self) -> np.ndarray:
        vocab = self.vectorizer_.vocabulary_
        idf = self.vectorizer_.idf_
        return np.array([idf[vocab[type_token(t)]] for t in self.types_]) * self.type_weight

    def _inputs(self, X):
        X = check_contexts(X)
        analyzer = self._analyzer()
        Xt = self.vectorizer_.transform(
            [_input_tokens(c, analyzer, self.use_history, self.types_) for c in X]
        )
        if self.types_ and self.type_weight != 1.0:
            scale = np.ones(Xt.shape[1])
            scale[[self.vectorizer_.vocabulary_[type_token(t)] for t in self.types_]] = (
                self.type_weight
            )
            Xt = Xt @ sp.diags(scale)
        return X, Xt.tocsr()

    def _type_columns(self, Xt) -> np.ndarray:
        # (n_contexts, n_types) tf-idf weight of each type word in the input.
        vocab = self.vectorizer_.vocabulary_
        cols = [vocab[type_token(t)] for t in self.types_]
        return Xt[:, cols].toarray()

    def decision_function(self, X) -> np.ndarray:
        """TF-IDF cosine similarity of each context with each candidate.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        check_has_candidates(self)
        X, Xt = self._inputs(X)
        if not self.types_:
            # The index's exact scores: the ones rank orders by.
            return self.index_.scores(_unit_rows(Xt))
        C = self.candidate_tfidf_
        num = (Xt @ C.T).toarray()
        weights = self._type_weights()
        x_types = self._type_columns(Xt)
        matches = match_type_matrices(X, C, self.vectorizer_.vocabulary_, self.types_)
        # A matched type word adds (input weight x candidate weight) to the dot product
        # and its squared weight to the candidate's squared norm.
        num += sum(
            m.multiply(x_types[:, [k]] * weights[k]) for k, m in enumerate(matches)
        ).toarray()
        cand_sq = (
            _row_norms(C) ** 2 + sum(m * weights[k] ** 2 for k, m in enumerate(matches)).toarray()
        )
        return _safe_divide(num, _row_norms(Xt)[:, None] * np.sqrt(cand_sq))

    def _pool_impacts(self, pool) -> sp.csr_matrix:
        # A pool's TF-IDF rows over their norms, with the fitted IDF weights.
        vocabulary = self.vectorizer_.vocabulary_
        counts, _ = count_tokens(map(self._analyzer(), pool), vocabulary, grow=False)
        return _unit_rows(self._weighted(counts, np.arange(len(vocabulary))))

    def _index_queries(self, X) -> sp.csr_matrix:
        return _unit_rows(self._inputs(X)[1])

    def _score_pairs(self, X, responses) -> np.ndarray:
        X, Xt = self._inputs(X)
        analyzer = self._analyzer()
        R = self.vectorizer_.transform([analyzer.words(r) for r in responses]).tocsr()
        num = np.asarray(Xt.multiply(R).sum(axis=1)).ravel()
        resp_sq = _row_norms(R) ** 2
        if self.types_:
            weights = self._type_weights()
            matches = match_type_pairs(X, R, self.vectorizer_.vocabulary_, self.types_)
            num += (matches * self._type_columns(Xt) * weights).sum(axis=1)
            resp_sq += (matches * weights**2).sum(axis=1)
        return _safe_divide(num, _row_norms(Xt) * np.sqrt(resp_sq))

    def _pair_scorer(self, X, texts):
        if self.types_:
            return None  # the match-type words depend on the pair
        _, Xt = self._inputs(X)
        R, row = self._text_rows(texts)
        pairs = SparsePairs(Xt, R)
        # The norms as _score_pairs computes them, each once.
        x_norm, r_norm = _row_norms(Xt), np.sqrt(_row_norms(R) ** 2)

        def score(rows, cols):
            cols = row[cols]
            return _safe_divide(pairs.dots(rows, cols), x_norm[rows] * r_norm[cols])

        return score

    def _text_rows(self, texts) -> tuple[sp.csr_matrix, np.ndarray]:
        """TF-IDF rows of texts (``vectorizer_.transform``'s), and the row of each text: a
        text among the candidates takes its fitted row (``candidate_tfidf_``), the others
        are encoded. A candidate set far larger than the texts is not looked up (the
        lookup would cost more than encoding them)."""
        n = len(self.candidates_)
        lookup = {}
        if 0 < n <= _LOOKUP_CANDIDATES_PER_TEXT * len(texts):
            lookup = dict(zip(self.candidates_.tolist(), range(n)))
        vocabulary = self.vectorizer_.vocabulary_

        def encode(new):
            counts, _ = count_tokens(map(self._analyzer(), new), vocabulary, grow=False)
            return self._weighted(counts, np.arange(len(vocabulary)))

        return text_rows(texts, lookup, self.candidate_tfidf_, encode)

    # -- streaming fit ------------------------------------------------------------------------
    # Added for corpora that do not fit in memory (Ubuntu: 1M training rows, ~100M words).
    # Only the document frequencies are kept between chunks; fit above is unchanged.

    _y_required = False  # partial_fit(X) counts the contexts alone

    def _reset_stream(self):
        from collections import Counter

        self.n_documents_ = 0
        self.document_frequency_ = Counter()  # token -> number of documents holding it
        self.types_ = []

    def _count_chunk(self, X, y) -> None:
        from itertools import chain

        types = sorted(set(self.types_) | {t for ctx in X for _, t in ctx.entities})
        analyzer = self._analyzer()
        docs = [_input_tokens(ctx, analyzer, self.use_history, types) for ctx in X]
        if y is not None:
            # As in fit: a response gets the type word of each entity type it holds.
            entity_types = {w: t for ctx in X for w, t in ctx.entities}
            for r in y:
                toks = list(analyzer.words(r))
                toks.extend(
                    type_token(t)
                    for t in dict.fromkeys(entity_types[w] for w in toks if w in entity_types)
                )
                docs.append(toks)
        # chain/map keep the count loop in C (Counter.update runs _count_elements).
        self.document_frequency_.update(chain.from_iterable(map(set, docs)))
        self.n_documents_ += len(docs)
        self.types_ = types

    def _build_from_counts(self) -> None:
        df = self.document_frequency_
        if not df:
            raise ValueError("No token seen: every context and response is empty.")
        vocabulary = {t: i for i, t in enumerate(df)}
        counts = np.fromiter(df.values(), dtype=np.float64, count=len(df))
        # TfidfTransformer's smooth idf: ln((1 + n) / (1 + df)) + 1.
        idf = np.log((1.0 + self.n_documents_) / (1.0 + counts)) + 1.0
        vectorizer = TfidfVectorizer(
            analyzer=identity_analyzer,
            norm=None,
            sublinear_tf=self.sublinear_tf,
            vocabulary=vocabulary,
        )
        vectorizer.idf_ = idf
        self.vectorizer_ = vectorizer
        self.candidates_ = (
            np.asarray([], dtype=object)
            if self.candidates is None
            else resolve_candidates(self.candidates, [])
        )
        tokens = list(map(self._analyzer(), self.candidates_))
        self._index(
            vectorizer.transform(tokens).tocsr()
            if tokens
            else sp.csr_matrix((0, len(vocabulary)), dtype=np.float64)
        )

    def _streaming(self) -> bool:
        # True once partial_fit has run, and no fit since (fit learns its own vocabulary).
        vectorizer = getattr(self, "vectorizer_", None)
        return vectorizer is not None and vectorizer.vocabulary is not None

    def partial_fit(self, X, y=None):
        """Update the IDF statistics with one chunk of contexts (and responses).

        Only document frequencies are kept between calls, so a corpus of any size can be
        fitted chunk by chunk (e.g. from :func:`irdialog.datasets.iter_ubuntu`) in memory
        bounded by one chunk and the vocabulary. Every context is one document and so is
        every response of ``y`` (``fit`` counts each distinct response once). No candidate
        set is collected: ``candidates_`` is the ``candidates`` parameter, or empty, in
        which case score with ``rank_candidates`` (per-example lists, as for Ubuntu).

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str, default=None
            The chunk's responses (their words enter the IDF statistics).

        Returns
        -------
        self : TfidfRanker

        Examples
        --------
        >>> from irdialog import TfidfRanker
        >>> model = TfidfRanker()
        >>> for X, y in [(["how do i mount a usb disk"], ["use the mount command"]),
        ...              (["my wifi is down"], ["restart network manager"])]:
        ...     model = model.partial_fit(X, y)
        >>> model.n_documents_
        4
        >>> int(model.rank_candidates(["usb disk won't mount"],
        ...                           [["try the mount command", "restart it"]]).argmax())
        0
        """
        return self._stream_chunk(X, y)
