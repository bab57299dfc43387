"""CONTRIBUTING.md's walkthrough "Adding a model", run: the toy model below is the one it
shows, to the letter (the first test compares them), fitted, ranked and held to its numpy
reference and to the training core's contract."""

# --- walkthrough
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from irdialog._compat import Interval, StrOptions
from irdialog.base import RankerMixin, check_contexts, resolve_candidates
from irdialog.embed._training import TRAINING_CONSTRAINTS, GoldFitMixin, Run, TrainingMixin
from irdialog.text import TOKENIZERS, Analyzer, LabelIndex, Vocabulary


@njit(cache=True, nogil=True)
def perceptron_epoch(W, indptr, ids, gold, order, lr):
    """One pass over the examples ``order``: where the best candidate c of example i (the
    highest sum of W[c, w] over its words w, ties to the lower c) is not gold[i], add lr
    to the gold row and take it from c's. Returns the number of mistakes."""
    mistakes = 0.0
    for i in order:
        best, best_score = 0, -np.inf
        for c in range(W.shape[0]):
            s = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                s += W[c, ids[j]]
            if s > best_score:
                best, best_score = c, s
        if best != gold[i]:
            mistakes += 1.0
            for j in range(indptr[i], indptr[i + 1]):
                W[gold[i], ids[j]] += lr
                W[best, ids[j]] -= lr
    return mistakes


def perceptron_epoch_reference(W, indptr, ids, gold, order, lr):
    """:func:`perceptron_epoch` in plain numpy."""
    mistakes = 0.0
    for i in order:
        words = ids[indptr[i] : indptr[i + 1]]
        best = int(np.argmax(W[:, words].sum(axis=1)))
        if best != gold[i]:
            mistakes += 1.0
            np.add.at(W[gold[i]], words, lr)
            np.subtract.at(W[best], words, lr)
    return mistakes


class PerceptronRanker(GoldFitMixin, TrainingMixin, RankerMixin, BaseEstimator):
    """Ranks the candidates c of a query by the sum of W[c, w] over its words w.

    Examples
    --------
    >>> model = PerceptronRanker(random_state=0).fit(["hi there", "bye now"], ["hello", "bye"])
    >>> model.predict(["hi"]).tolist()
    ['hello']
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        **TRAINING_CONSTRAINTS,
    }
    _warm_start_fixed = ("tokenizer",)  # the vocabulary's words stay those of the first fit

    def __init__(
        self, *, candidates=None, tokenizer="word", learning_rate=1.0, epochs=5,
        early_stopping=False, validation_fraction=0.1, n_iter_no_change=5, warm_start=False,
        random_state=None, verbose=False,
    ):  # fmt: skip
        self.candidates = candidates
        self.tokenizer = tokenizer
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    def _words(self, X):
        """(indptr, ids) of the known words of each query."""
        analyzer = Analyzer(tokenizer=self.tokenizer)
        ids = [self.vocabulary_.encode(analyzer.words(ctx.query)) for ctx in X]
        indptr = np.zeros(len(ids) + 1, np.int64)
        np.cumsum([len(i) for i in ids], out=indptr[1:])
        return indptr, np.concatenate([np.zeros(0, np.int64), *ids])

    def _scores(self, W, indptr, ids):
        bags = sp.csr_matrix((np.ones(len(ids)), ids, indptr), shape=(len(indptr) - 1, W.shape[1]))
        return np.asarray(bags @ W.T)

    def _fit(self, fit):
        if not fit.continuing:  # a new model: its candidates, words and weights
            self.candidates_ = resolve_candidates(self.candidates, fit.y)
            analyzer = Analyzer(tokenizer=self.tokenizer)
            self.vocabulary_ = Vocabulary().fit(analyzer.words(ctx.query) for ctx in fit.X)
            self.weights_ = np.zeros((len(self.candidates_), len(self.vocabulary_)))
        W = self.weights_.copy()
        gold = LabelIndex(self.candidates_).encode(fit.y, unknown="error")
        indptr, ids = self._words(fit.X)
        rows, val_rows = self._split_rows(len(fit.X), fit)
        rng = fit.random_state

        def step(epoch):
            order = rng.permutation(rows)
            mistakes = perceptron_epoch(W, indptr, ids, gold, order, self.learning_rate)
            return mistakes / len(rows), {}

        def validate():
            scores = self._scores(W, indptr, ids)[val_rows]
            return float(np.mean(scores.argmax(axis=1) == gold[val_rows])), 0.0

        run = Run(
            step, weights=lambda: W, snapshot=W.copy, validate=validate if len(val_rows) else None
        )
        self.weights_ = self._train_epochs(
            lambda k: run, 1 if fit.incremental else self.epochs, continuing=fit.continuing,
            desc="perceptron", advice=f"learning_rate (now {self.learning_rate})",
        )  # fmt: skip
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        return self._scores(self.weights_, *self._words(check_contexts(X)))

    def _score_pairs(self, X, responses):
        columns = LabelIndex(self.candidates_).encode(responses)  # -1: not a candidate
        scores = self.decision_function(X)[np.arange(len(columns)), columns]
        return np.where(columns >= 0, scores, 0.0)


# --- end of the walkthrough

import pathlib  # noqa: E402  (the test's own imports, after the walkthrough's)
import re  # noqa: E402

import pytest  # noqa: E402

X = ["i want a table", "a table for two", "what is the weather", "will it rain", "rain today"]
y = ["booking", "booking", "forecast", "forecast", "forecast"]


def test_the_walkthrough_shows_this_code():
    text = pathlib.Path(__file__).read_text()
    code = text.split("# --- walkthrough\n")[1].split("# --- end of the walkthrough")[0]
    doc = (pathlib.Path(__file__).parents[1] / "CONTRIBUTING.md").read_text()
    shown = re.search(r"```python\n# irdialog/embed/_perceptron\.py\n(.*?)```", doc, re.S)
    assert shown is not None, "CONTRIBUTING.md has no walkthrough block"
    assert shown.group(1).strip() == code.strip()


def test_the_kernel_matches_its_numpy_reference():
    rng = np.random.default_rng(0)
    n, n_words, n_cand = 12, 9, 4
    lengths = rng.integers(0, 5, n)
    indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    ids = rng.integers(0, n_words, indptr[-1]).astype(np.int64)
    gold = rng.integers(0, n_cand, n).astype(np.int64)
    W = rng.integers(-2, 3, (n_cand, n_words)).astype(np.float64)  # sums exact in any order
    order = rng.permutation(n).astype(np.int64)
    W_ref = W.copy()
    got = perceptron_epoch(W, indptr, ids, gold, order, 1.0)
    want = perceptron_epoch_reference(W_ref, indptr, ids, gold, order, 1.0)
    assert got == want > 0
    np.testing.assert_array_equal(W, W_ref)


def test_the_toy_model_fits_and_ranks():
    model = PerceptronRanker(random_state=0).fit(X, y)
    assert model.predict(["a table please", "rain again"]).tolist() == ["booking", "forecast"]
    assert model.rank(["table for two"], k=2).tolist() == [[0, 1]]
    pools = model.rank_candidates(["rain"], [["booking", "forecast", "unknown"]])
    assert np.argmax(pools[0]) == 1 and pools[0][2] == 0.0  # an unknown response scores 0
    assert model.n_iter_ == 5 and len(model.loss_curve_) == 5
    assert model.loss_curve_[-1] == 0.0  # separable: no mistake in the last epoch


def test_the_toy_model_gets_the_training_core():
    first = PerceptronRanker(random_state=0).fit(X, y)
    again = PerceptronRanker(random_state=0).fit(X, y)
    np.testing.assert_array_equal(first.weights_, again.weights_)
    model = PerceptronRanker(random_state=0).partial_fit(X, y).partial_fit(X, y)
    assert model.n_iter_ == 2
    warm = PerceptronRanker(epochs=2, warm_start=True, random_state=0).fit(X, y).fit(X, y)
    assert warm.n_iter_ == 4
    with pytest.raises(ValueError, match="tokenizer"):
        warm.set_params(tokenizer="char").fit(X, y)
    stopped = PerceptronRanker(
        epochs=50, early_stopping=True, n_iter_no_change=2, validation_fraction=0.4, random_state=0
    ).fit(X, y)
    assert stopped.n_iter_ < 50 and len(stopped.validation_scores_) == stopped.n_iter_
