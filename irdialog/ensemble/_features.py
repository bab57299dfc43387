"""Lexical features of (question, answer) pairs for learning to rank.

Each feature is computed from sparse bags of each distinct text, once per call: BM25
(Lucene's idf, k1 = 1.5, b = 0.75) and the TF-IDF cosine, the counts of shared words and
of shared word bigrams, the idf-weighted overlap and the share of the question's words
(and of their idf) that the answer holds, and the lengths of both sides. The statistics
(idf, average length) are those of the documents of the fit.

References
----------
Surdeanu, Ciaramita & Zaragoza (2011). Learning to Rank Answers to Non-Factoid Questions
from Web Collections. Computational Linguistics 37(2), section 3 (similarity features).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..retrieval._pairs import SparsePairs
from ..text import Analyzer
from ._pools import Pools

FEATURE_NAMES = (
    "bm25",
    "tfidf_cosine",
    "word_overlap",
    "bigram_overlap",
    "idf_overlap",
    "idf_coverage",
    "word_coverage",
    "question_length",
    "answer_length",
)
# Okapi BM25 constants (Lucene's and bm25s's defaults).
_K1, _B = 1.5, 0.75


def _bags(texts, analyzer, vocabulary) -> sp.csr_matrix:
    """Counts of the known words of each text (float64 CSR over ``vocabulary``)."""
    indptr, indices = [0], []
    for t in texts:
        indices.extend(j for w in analyzer(t) if (j := vocabulary.get(w)) is not None)
        indptr.append(len(indices))
    m = sp.csr_matrix(
        (np.ones(len(indices)), np.asarray(indices, dtype=np.int64), indptr),
        shape=(len(texts), len(vocabulary)),
    )
    m.sum_duplicates()
    return m


def _row_dot(A: sp.csr_matrix, rows_a, B: sp.csr_matrix, rows_b) -> np.ndarray:
    """``A[rows_a[i]] . B[rows_b[i]]`` for every i, without gathering a row of A and of B
    for each pair (tens of GB on character n-grams over thousands of pools); the sums of
    scipy's ``A[rows_a].multiply(B[rows_b]).sum(axis=1)``, bit for bit."""
    return SparsePairs(A, B).dots(rows_a, rows_b)


def _unit_rows(m: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    return (sp.diags(1.0 / np.maximum(norms, 1e-12)) @ m).tocsr()


class LexicalFeatures:
    """The lexical features of (question, answer) pairs, with statistics from documents.

    Parameters
    ----------
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`, punctuation
        dropped); the bigrams are of these tokens.
    use_history : bool, default=True
        The question is the whole conversation, or the last utterance only.

    Examples
    --------
    >>> from irdialog.ensemble._features import LexicalFeatures
    >>> from irdialog.ensemble._pools import Pools
    >>> docs = ["you can renew it online", "life insurance pays a benefit"]
    >>> f = LexicalFeatures().fit(docs)
    >>> F = f.transform(Pools.from_lists(["how do i renew it"], [docs]))
    >>> F.shape, F[:, 2].tolist()
    ((2, 9), [2.0, 0.0])
    """

    def __init__(self, *, tokenizer="word", use_history=True):
        self.tokenizer = tokenizer
        self.use_history = use_history

    def _analyzers(self):
        return (
            Analyzer(tokenizer=self.tokenizer, drop_punctuation=True),
            Analyzer(tokenizer=self.tokenizer, drop_punctuation=True, ngram_range=(2, 2)),
        )

    def fit(self, documents):
        """Learn the words, bigrams, idf and average length of the documents."""
        words, bigrams = self._analyzers()
        self.vocabulary_ = {}
        self.bigrams_ = {}
        for d in documents:
            for w in words.words(d):
                self.vocabulary_.setdefault(w, len(self.vocabulary_))
            for w in bigrams.words(d):
                self.bigrams_.setdefault(w, len(self.bigrams_))
        C = _bags(documents, words, self.vocabulary_)
        n = C.shape[0]
        df = np.bincount(C.indices, minlength=C.shape[1]).astype(np.float64)
        self.idf_ = np.log1p((n - df + 0.5) / (df + 0.5))
        self.tfidf_idf_ = np.log((1.0 + n) / (1.0 + df)) + 1.0
        self.average_length_ = max(float(C.sum()) / max(n, 1), 1e-12)
        return self

    def transform(self, pools: Pools) -> np.ndarray:
        """The features of every pair of ``pools``, float64 (n_pairs, len(FEATURE_NAMES))."""
        words, bigrams = self._analyzers()
        questions = [x.text(self.use_history) for x in pools.X]
        Q = _bags(questions, words, self.vocabulary_)
        A = _bags(pools.texts, words, self.vocabulary_)
        Q2 = _bags(questions, bigrams, self.bigrams_)
        A2 = _bags(pools.texts, bigrams, self.bigrams_)
        q, a = pools.owner, pools.doc
        # lengths count every token, known or not
        q_len = np.array([len(words.words(t)) for t in questions], dtype=np.float64)
        a_len = np.array([len(words.words(t)) for t in pools.texts], dtype=np.float64)

        impact = A.copy()
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        norm = _K1 * (1.0 - _B + _B * a_len[rows] / self.average_length_)
        impact.data = self.idf_[A.indices] * A.data / (norm + A.data)
        Qt, At = Q.copy(), A.copy()
        Qt.data *= self.tfidf_idf_[Qt.indices]
        At.data *= self.tfidf_idf_[At.indices]
        Qb, Ab, Q2b, A2b = ((m > 0).astype(np.float64) for m in (Q, A, Q2, A2))
        Qi = Qb.multiply(self.idf_[None, :]).tocsr()

        overlap = _row_dot(Qb, q, Ab, a)
        idf_overlap = _row_dot(Qi, q, Ab, a)
        q_words = np.asarray(Qb.sum(axis=1)).ravel()
        q_idf = np.asarray(Qi.sum(axis=1)).ravel()
        return np.column_stack(
            [
                _row_dot(Q, q, impact, a),
                _row_dot(_unit_rows(Qt), q, _unit_rows(At), a),
                overlap,
                _row_dot(Q2b, q, A2b, a),
                idf_overlap,
                idf_overlap / np.maximum(q_idf[q], 1e-12),
                overlap / np.maximum(q_words[q], 1.0),
                q_len[q],
                a_len[a],
            ]
        )
