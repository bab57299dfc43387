"""N-gram classifier: a linear model over bags of n-grams of the question-related story.

The weakly supervised baseline of the bAbI QA paper (Weston et al. 2016, section 5): the
story sentences that share a word with the question are cut into n-grams, the question's
n-grams are added in a space of their own, and a linear classifier maps the bag to one of
the answers seen in training.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import RankerMixin, check_contexts, check_responses, resolve_candidates
from ..text import (
    TOKENIZERS,
    Analyzer,
    check_ngram_range,
    context_texts,
    document_frequencies,
    encode_labels,
    is_punctuation,
    learn_case_folding,
)

_QUESTION = "q"
_STORY = "s"


def _ngrams(tokens, lo: int, hi: int, prefix: str):
    for n in range(lo, hi + 1):
        for start in range(len(tokens) - n + 1):
            yield (prefix, *tokens[start : start + n])


class NGramClassifier(RankerMixin, BaseEstimator):
    """Bag of n-grams of the story sentences related to the question, and a linear model.

    A story sentence (a history turn, whatever its speaker) takes part when it shares at
    least one *matching word* with the question; matching words are the words that are
    neither punctuation nor more frequent than ``max_df`` across the training sentences
    (so the filter learns its stopwords from the data, in any language). The n-grams of
    those sentences (never across a sentence boundary) and, separately, those of the
    question make a binary bag, and ``classifier`` predicts the answer from it. Only the
    answers are used for training (weak supervision).

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set. None: the distinct answers seen in ``fit``. Candidates the
        classifier never saw as an answer score below every seen one.
    ngram_range : tuple (min_n, max_n), default=(1, 3)
        The lengths of the n-grams in the bag.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    max_df : float in (0, 1], default=1.0
        Words occurring in a larger fraction of the distinct training sentences (story
        sentences and questions) are not matching words. 1.0: every non-punctuation word
        matches, the paper's filter.
    classifier : scikit-learn linear classifier or None, default=None
        Fitted on the bags (a clone is). None: ``LogisticRegression(C=1.0,
        max_iter=1000)``. Its parameters are reachable as ``classifier__<name>`` (for
        ``GridSearchCV``) when an estimator is given.

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate answers, the columns of ``decision_function``.
    vocabulary_ : dict of tuple to int
        N-gram -> column of the bag; an n-gram is ``("q" or "s", word, ...)``, in order of
        first appearance.
    stopwords_ : frozenset of str
        The non-punctuation words that are too frequent to be matching words.
    classifier_ : estimator
        The fitted classifier; its classes are indices into ``candidates_``.
    case_folding_ : dict of str to str
        Capitals lower-cased otherwise than by ``str.lower``, learned from the training texts
        (:func:`irdialog.text.learn_case_folding`; empty for natural languages).

    See Also
    --------
    irdialog.StructuredSVMQA : the strongly supervised classical baseline of the paper.

    References
    ----------
    Weston, Bordes, Chopra, Rush, van Merrienboer, Joulin & Mikolov (2016). Towards
    AI-Complete Question Answering: A Set of Prerequisite Toy Tasks. ICLR. Section 5
    (N-gram classifier baseline, inspired by Richardson et al. 2013).

    Examples
    --------
    >>> from irdialog.datasets import load_babi_qa
    >>> from irdialog import NGramClassifier
    >>> train, test = load_babi_qa(1, "train"), load_babi_qa(1, "test")
    >>> model = NGramClassifier().fit(train.X, train.y)
    >>> model.predict(train.X[:1])[0]
    'bathroom'
    >>> bool(model.score(test.X, test.y) > 0.3)
    True

    Nested parameters of the classifier:

    >>> from sklearn.svm import LinearSVC
    >>> model = NGramClassifier(classifier=LinearSVC()).set_params(classifier__C=0.1)
    >>> model.get_params()["classifier__C"]
    0.1
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "ngram_range": [tuple],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "max_df": [Interval(Real, 0, 1, closed="right")],
        "classifier": "no_validation",  # checked in fit (any classifier)
    }

    def __init__(
        self, *, candidates=None, ngram_range=(1, 3), tokenizer="word", max_df=1.0,
        classifier=None,
    ):  # fmt: skip
        self.candidates = candidates
        self.ngram_range = ngram_range
        self.tokenizer = tokenizer
        self.max_df = max_df
        self.classifier = classifier

    # ------------------------------------------------------------------ features

    def _documents(self, X, tokens_of):
        """The n-grams of each context: its question's and those of its related sentences."""
        lo, hi = self.ngram_range
        stop = self.stopwords_
        docs = []
        for ctx in X:
            question = tokens_of(ctx.query)
            keys = {t for t in question if not is_punctuation(t) and t not in stop}
            grams = list(_ngrams(question, lo, hi, _QUESTION))
            for turn in ctx.history:
                tokens = tokens_of(turn.text)
                if keys.intersection(tokens):
                    grams.extend(_ngrams(tokens, lo, hi, _STORY))
            docs.append(grams)
        return docs

    def _bags(self, docs) -> sp.csr_matrix:
        vocab = self.vocabulary_
        indptr, indices = [0], []
        for grams in docs:
            cols = {vocab[g] for g in grams if g in vocab}
            indices.extend(sorted(cols))
            indptr.append(len(indices))
        data = np.ones(len(indices), dtype=np.float64)
        return sp.csr_matrix(
            (data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(docs), len(vocab)),
        )

    def _tokenizer(self):
        """A text's tokens, memoised: each distinct text is tokenised once per fit or call."""
        return Analyzer(tokenizer=self.tokenizer, case_folding=self.case_folding_).tokens

    # ------------------------------------------------------------------ estimator

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the n-gram vocabulary and the classifier.

        Parameters
        ----------
        X : sequence of Context or str
            Story sentences in the history (speaker ``kb`` for bAbI), question as query.
        y : sequence of str
            The answers.

        Returns
        -------
        self : NGramClassifier
        """
        check_ngram_range(self.ngram_range)
        X = check_contexts(X)
        y = check_responses(y, len(X))
        if self.classifier is not None and not (
            hasattr(self.classifier, "fit") and is_classifier(self.classifier)
        ):
            raise TypeError(
                f"classifier must be a scikit-learn classifier, got {self.classifier!r}."
            )
        if self.classifier is not None and not hasattr(self.classifier, "decision_function"):
            # Candidates are ranked by decision_function margins, predict alone is not enough.
            raise TypeError(
                f"classifier must have a decision_function (a linear classifier such as "
                f"LogisticRegression or LinearSVC), got {self.classifier!r}."
            )
        self.candidates_ = resolve_candidates(self.candidates, y)
        self.case_folding_ = learn_case_folding(context_texts(X, y))
        tokens_of = self._tokenizer()
        sentences = {t.text: None for ctx in X for t in ctx.history}
        sentences.update((ctx.query, None) for ctx in X)
        df = document_frequencies([tokens_of(s) for s in sentences])
        self.stopwords_ = frozenset(
            t for t, f in df.items() if f > self.max_df and not is_punctuation(t)
        )
        docs = self._documents(X, tokens_of)
        # First-appearance order: a relabelling of the words (another language) relabels
        # the columns and nothing else.
        self.vocabulary_ = {g: i for i, g in enumerate(dict.fromkeys(g for d in docs for g in d))}
        bags = self._bags(docs)
        # Classes are indices into candidates_ (first-appearance order again); answers that
        # are not candidates are left out of training.
        target = encode_labels(y, self.candidates_)
        keep = target >= 0
        if not keep.any():
            raise ValueError("none of the answers in y is among the candidates.")
        self.classes_seen_ = np.unique(target[keep])
        if len(self.classes_seen_) > 1:
            base = self.classifier
            if base is None:
                base = LogisticRegression(C=1.0, max_iter=1000)
            self.classifier_ = clone(base).fit(bags[keep], target[keep])
        else:
            self.classifier_ = None  # a single answer: nothing to learn
        return self

    def _class_scores(self, X) -> np.ndarray:
        """Scores of the classes seen in fit, shape (n_samples, n_seen)."""
        X = check_contexts(X)
        if self.classifier_ is None:
            return np.zeros((len(X), 1))
        bags = self._bags(self._documents(X, self._tokenizer()))
        scores = np.asarray(self.classifier_.decision_function(bags), dtype=np.float64)
        if scores.ndim == 1:  # binary: one margin, positive for classes_[1]
            scores = np.column_stack([-0.5 * scores, 0.5 * scores])
        return scores

    def decision_function(self, X) -> np.ndarray:
        """The classifier's score of each candidate answer.

        Candidates never seen as an answer in training score one below the row's lowest
        seen score.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        seen = self._class_scores(X)
        out = np.repeat(seen.min(axis=1, keepdims=True) - 1.0, len(self.candidates_), axis=1)
        out[:, self.classes_seen_] = seen
        return out

    def _score_pairs(self, X, responses) -> np.ndarray:
        full = self.decision_function(X)
        cols = encode_labels(responses, self.candidates_)
        rows = np.arange(len(cols))
        unseen = full.min(axis=1) - 1.0  # below every candidate, seen or not
        return np.where(cols >= 0, full[rows, np.maximum(cols, 0)], unseen)
