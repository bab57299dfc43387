"""Nearest neighbour: answer with the response of the most similar training input."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.utils.validation import check_is_fitted

from .._compat import StrOptions, _fit_context
from ..base import RankerMixin, check_contexts, check_responses, resolve_candidates
from ..text import TOKENIZERS, Analyzer, encode_labels, identity_analyzer

# Largest number of (context, training pair) similarities held at once by decision_function.
_BLOCK_ELEMENTS = 1 << 22


class NearestNeighborRanker(RankerMixin, BaseEstimator):
    """Nearest neighbour by word overlap over the training (input, response) pairs.

    A candidate scores the similarity of the input with the most similar training input
    it answered, plus a tie-breaker in [0, 1) that grows with how often it answered that
    input. So the top candidate is the response of the nearest training input, and several
    responses of one input are ordered by decreasing co-occurrence count, as in the paper.
    Candidates never seen as a training response score -1, below every seen one.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set. None: the distinct responses seen in ``fit``.
    use_history : bool, default=False
        Compare whole conversations rather than the last utterance only (the paper uses the
        last utterance).
    similarity : {"overlap", "jaccard"}, default="overlap"
        ``"overlap"`` counts the distinct words two inputs share; ``"jaccard"`` divides that
        count by the size of their union.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The n-grams of tokens that make the words (never across two utterances).

    Attributes
    ----------
    candidates_ : ndarray of str
    vectorizer_ : sklearn.feature_extraction.text.CountVectorizer
        Binary bag of words over the training inputs' vocabulary.
    train_bags_ : sparse matrix of shape (n_distinct_inputs, n_words)
        The distinct training inputs.
    pair_input_, pair_candidate_ : ndarray of int
        Each distinct (training input, candidate) pair, sorted by candidate.
    pair_weight_ : ndarray of float
        count / (largest count + 1): the co-occurrence tie-breaker of each pair.

    See Also
    --------
    TfidfRanker : the other classical IR baseline of the paper.

    References
    ----------
    Bordes, Boureau & Weston (2017). Learning End-to-End Goal-Oriented Dialog. ICLR.
    Section 4.2 (Nearest Neighbor).

    Examples
    --------
    >>> from irdialog import NearestNeighborRanker
    >>> X = ["hello", "i want italian food", "hello there"]
    >>> y = ["hi how can i help", "api_call italian", "hi how can i help"]
    >>> NearestNeighborRanker().fit(X, y).predict(["italian food"])[0]
    'api_call italian'
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "use_history": ["boolean"],
        "similarity": [StrOptions({"overlap", "jaccard"})],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "ngram_range": [tuple],
    }

    def __init__(
        self, *, candidates=None, use_history=False, similarity="overlap", tokenizer="word",
        ngram_range=(1, 1),
    ):  # fmt: skip
        self.candidates = candidates
        self.use_history = use_history
        self.similarity = similarity
        self.tokenizer = tokenizer
        self.ngram_range = ngram_range

    def _words(self, X) -> list[list[str]]:
        """The words of each context, through one analyzer per call."""
        analyzer = Analyzer(tokenizer=self.tokenizer, ngram_range=self.ngram_range)
        return [analyzer.context_words(c, self.use_history) for c in X]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X = check_contexts(X)
        y = check_responses(y, len(X))
        self.candidates_ = resolve_candidates(self.candidates, y)
        tokens = self._words(X)
        self.vectorizer_ = CountVectorizer(analyzer=identity_analyzer, binary=True).fit(tokens)
        bags = self.vectorizer_.transform(tokens).tocsr()
        # Distinct inputs: identical binary bags are one neighbour.
        keys = [bags.indices[bags.indptr[i] : bags.indptr[i + 1]].tobytes() for i in range(len(X))]
        key_index: dict[bytes, int] = {}
        input_id = np.fromiter((key_index.setdefault(k, len(key_index)) for k in keys), np.int64)
        first = np.unique(input_id, return_index=True)[1]
        self.train_bags_ = bags[first]
        cand_id = encode_labels(y, self.candidates_)
        keep = cand_id >= 0  # responses outside a fixed candidate set cannot be returned
        pairs, counts = np.unique(
            np.stack([cand_id[keep], input_id[keep]], axis=1), axis=0, return_counts=True
        )
        self.pair_candidate_, self.pair_input_ = pairs[:, 0], pairs[:, 1]
        self.pair_weight_ = counts / (counts.max() + 1.0) if len(counts) else counts * 1.0
        return self

    def _similarity(self, overlap, x_sizes, u_sizes):
        if self.similarity == "overlap":
            return overlap
        union = x_sizes + u_sizes - overlap
        return np.divide(overlap, union, out=np.zeros_like(overlap), where=union > 0)

    def _bags(self, X):
        X = check_contexts(X)
        return self.vectorizer_.transform(self._words(X)).tocsr()

    def decision_function(self, X) -> np.ndarray:
        """Nearest-neighbour score of each candidate for each context.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
            Integer part: the similarity of the nearest training input the candidate
            answered (for ``"overlap"``); fractional part: its co-occurrence tie-breaker.
        """
        check_is_fitted(self)
        B = self._bags(X)
        U = self.train_bags_
        out = np.full((B.shape[0], len(self.candidates_)), -1.0)
        if len(self.pair_input_) == 0:
            return out
        known, starts = np.unique(self.pair_candidate_, return_index=True)
        x_sizes = np.asarray(B.sum(axis=1), dtype=np.float64)
        u_sizes = np.asarray(U.sum(axis=1), dtype=np.float64).ravel()[self.pair_input_]
        step = max(1, _BLOCK_ELEMENTS // len(self.pair_input_))
        for lo in range(0, B.shape[0], step):
            overlap = (B[lo : lo + step] @ U.T).toarray().astype(np.float64)[:, self.pair_input_]
            sim = self._similarity(overlap, x_sizes[lo : lo + step], u_sizes)
            out[lo : lo + step, known] = np.maximum.reduceat(
                sim + self.pair_weight_, starts, axis=1
            )
        return out

    def _score_pairs(self, X, responses) -> np.ndarray:
        B = self._bags(X)
        U = self.train_bags_
        cand = encode_labels(responses, self.candidates_)
        # (candidate x training pair) incidence, then the pairs each response answers.
        incidence = sp.csr_matrix(
            (
                np.ones(len(self.pair_input_)),
                (self.pair_candidate_, np.arange(len(self.pair_input_))),
            ),
            shape=(len(self.candidates_), len(self.pair_input_)),
        )
        rows = incidence[np.maximum(cand, 0)]
        rows = sp.diags((cand >= 0).astype(float)) @ rows
        rows.eliminate_zeros()
        rows = rows.tocoo()
        owner, pair = rows.row, rows.col
        order = np.lexsort((pair, owner))
        owner, pair = owner[order], pair[order]
        out = np.full(len(responses), -1.0)
        if len(pair) == 0:
            return out
        u = self.pair_input_[pair]
        overlap = np.asarray(B[owner].multiply(U[u]).sum(axis=1), dtype=np.float64).ravel()
        x_sizes = np.asarray(B.sum(axis=1), dtype=np.float64).ravel()[owner]
        u_sizes = np.asarray(U.sum(axis=1), dtype=np.float64).ravel()[u]
        values = self._similarity(overlap, x_sizes, u_sizes) + self.pair_weight_[pair]
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        out[owner[starts]] = np.maximum.reduceat(values, starts)
        return out
