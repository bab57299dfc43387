"""Structured SVM for bAbI QA: find the supporting facts, then rank the answers.

The strongly supervised classical baseline of the bAbI QA paper (Weston et al. 2016,
appendix B), without its external coreference and semantic-role tools: two linear models
over hashed indicator features, trained with a structured hinge loss by averaged SGD
(Pegasos-style L2 regularisation, loss-augmented inference).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._babi_qa_heuristics import pseudo_supporting
from .._compat import Interval, StrOptions, _fit_context
from .._epochs import run_epochs, training_session
from .._threads import MIN_WORK_PER_THREAD, n_threads, numba_threads, threads_for_work
from ..base import (
    N_JOBS_CONSTRAINT,
    RankerMixin,
    check_contexts,
    check_responses,
    resolve_candidates,
)
from ..text import TOKENIZERS, Analyzer, encode_labels
from . import _kernels
from ._features import PairwiseFeaturizer, gold_tuples
from ._parallel_kernels import (
    block_workspace,
    search_costs,
    stage1_epoch_speculative,
    stage1_predict_parts,
)

# Initial step size of the averaged SGD; the step decays as eta0 / (1 + lambda eta0 t).
ETA0 = 1.0
# A stage stops early after this many passes in a row without a margin violation.
QUIET_EPOCHS = 3
# (context, candidate) pairs whose stage-2 features decision_function holds at once.
PAIR_BLOCK = 1 << 16
# With n_jobs > 1, stage 1 searches up to this many questions per thread ahead of its
# steps, and as many as hold this many margin violations at the recent rate (below one
# question per thread, a step on one thread): the searches after a violation run again.
BLOCK_PER_THREAD = 8
BLOCK_VIOLATIONS = 0.6


def _converged(violations) -> bool:
    """Have the last QUIET_EPOCHS passes of a stage been free of margin violations?"""
    return len(violations) >= QUIET_EPOCHS and not violations[-QUIET_EPOCHS:].any()


def _most_threads(n_jobs) -> int:
    """The threads ``n_jobs`` may take: at most numba's (``NUMBA_NUM_THREADS``)."""
    return min(n_threads(n_jobs), numba.config.NUMBA_NUM_THREADS)


class StructuredSVMQA(RankerMixin, BaseEstimator):
    """Two-stage structured SVM: choose up to three supporting facts, then the answer.

    **Stage 1** scores an ordered tuple o of up to ``max_facts`` distinct story facts (empty
    slots last) for the question x with a linear function of pairwise indicator features,
    ``S_O(x, o) = w . (sum_k g_k(x, f_ok) + sum_{k<l} g_kl(f_ok, f_ol))`` (word pairs, pair
    distance and order, shared words and their recency; see :class:`PairwiseFeaturizer`),
    and takes the argmax by exhaustive search over the tuples whose facts and question form
    one graph under "shares a content word" (the paper's pruning, with stopwords learned by
    document frequency). **Stage 2** scores each candidate answer from the question and the
    chosen facts: question words, fact words, question x fact word pairs and alignment
    features, conjoined with the answer, plus answer-generic features saying where the
    answer's words occur (slot, position, next to which question word).

    Both stages minimise an L2-regularised structured hinge loss, ``lambda/2 |w|^2 +
    mean_i max_o [Delta(o_i, o) + w . Psi(x_i, o)] - w . Psi(x_i, o_i)`` with ``lambda = 1 /
    (C n)``, by averaged SGD with loss-augmented inference: Delta is the number of slots
    that differ from the gold tuple (stage 1) or 1 for a wrong answer (stage 2). Stage 2 is
    trained on the gold supporting facts.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate answers. None: the distinct answers seen in ``fit``.
    C : float, default=1.0
        Inverse regularisation strength (``lambda = 1 / (C n_samples)``), both stages.
    epochs : int, default=20
        The most passes over the training questions, per stage; a stage stops earlier
        after three passes in a row without a margin violation.
    max_facts : {1, 2, 3}, default=3
        The number of supporting-fact slots. Questions with more supporting facts are
        trained on their last ``max_facts``.
    n_features : int, default=2**20
        Hashed feature indices per stage (the memory of the model: two float64 vectors).
    max_df : float in (0, 1], default=0.5
        Stopwords: words in more than this fraction of the training sentences (see
        :class:`PairwiseFeaturizer`).
    link_df : "auto" or float in (0, 1], default="auto"
        The words that link no facts in the search's pruning; ``"auto"``: learned from the
        supporting facts (see :class:`PairwiseFeaturizer`).
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (for scripts without spaces), or a callable from str to a list of str.
    n_jobs : int or None, default=1
        Threads of stage 1's searches, in training and in prediction (None: one; -1:
        every core). In training, the loss-augmented searches of up to ``8 * n_jobs``
        next questions of a pass run ahead on the threads, in one numba parallel region
        per pass, each at the weights it will see if no step before it is a margin
        violation; the steps are then taken in order up to the first violation, and the
        searches after it run again. The fitted model is that of ``n_jobs=1``, bit for
        bit. Fewer questions run ahead while violations are frequent (about 0.6 violations
        a block at the rate of the last few dozen steps), and none, a step on one thread,
        below one question per thread. A fit takes only the threads its searches pay for:
        one per 2**20 multiply-adds of ``8`` searches, estimated from the fact pairs and
        tuples its pruning leaves to the mean story, at most ``n_jobs`` and numba's
        thread count (``NUMBA_NUM_THREADS``); with less than twice that work a pass runs
        on one thread, as with ``n_jobs=1``. The searches of ``predict``,
        ``decision_function`` and ``predict_supporting`` share out their questions
        between as many threads as their work pays for, with the tuples of one thread.
    random_state : int, RandomState instance or None, default=None
        Seeds the order of the SGD passes; a seeded fit is bit-for-bit repeatable.
    verbose : bool, default=False
        Show a progress bar with the margin violations of each epoch.

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate answers, the columns of ``decision_function``.
    featurizer_ : PairwiseFeaturizer
        Vocabulary and learned stopwords.
    coef_support_ : ndarray of shape (n_features,)
        The averaged weights of stage 1.
    coef_answer_ : ndarray of shape (n_features,)
        The averaged weights of stage 2.
    violations_ : ndarray of shape (2, epochs)
        Margin violations in each pass of each stage (0 after the last pass).
    n_iter_ : ndarray of shape (2,)
        The passes each stage ran.
    pseudo_supporting_ : bool
        True when ``fit`` had no supporting facts and used distant supervision: the latest
        history turn holding a word of the answer, else the latest sharing a content word
        with the question.

    See Also
    --------
    PairwiseFeaturizer : the stage-1 features.
    irdialog.NGramClassifier : the weakly supervised baseline of the same paper.

    References
    ----------
    Weston, Bordes, Chopra, Rush, van Merrienboer, Joulin & Mikolov (2016). Towards
    AI-Complete Question Answering: A Set of Prerequisite Toy Tasks. ICLR. Appendix B.
    Tsochantaridis et al. (2005), large margin methods for structured outputs;
    Shalev-Shwartz et al. (2011), Pegasos; Xu (2011), averaged SGD.

    Examples
    --------
    >>> from irdialog.datasets import load_babi_qa
    >>> from irdialog import StructuredSVMQA
    >>> train, test = load_babi_qa(1, "train"), load_babi_qa(1, "test")
    >>> model = StructuredSVMQA(epochs=3, random_state=0)
    >>> model = model.fit(train.X, train.y, supporting=train.supporting)
    >>> [turn.text for turn in test.X[0].history], test.X[0].query
    (['John travelled to the hallway.', 'Mary journeyed to the bathroom.'], 'Where is John?')
    >>> model.predict_supporting(test.X[:1]), model.predict(test.X[:1])[0]
    ([(0,)], 'hallway')
    >>> bool(model.score(test.X, test.y) > 0.95)
    True
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "max_facts": [Interval(Integral, 1, 3, closed="both")],
        "n_features": [Interval(Integral, 1, _kernels.MAX_FEATURES, closed="both")],
        "max_df": [Interval(Real, 0, 1, closed="right")],
        "link_df": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="right")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        candidates=None,
        C=1.0,
        epochs=20,
        max_facts=3,
        n_features=2**20,
        max_df=0.5,
        link_df="auto",
        tokenizer="word",
        n_jobs=1,
        random_state=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.C = C
        self.epochs = epochs
        self.max_facts = max_facts
        self.n_features = n_features
        self.max_df = max_df
        self.link_df = link_df
        self.tokenizer = tokenizer
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, supporting=None):
        """Train both stages.

        Parameters
        ----------
        X : sequence of Context or str
            Story facts in the history (any speaker), question as query.
        y : sequence of str
            The answers.
        supporting : sequence of sequences of int, default=None
            The supporting facts of each question, as positions into its history, in
            reasoning order (``load_babi_qa(...).supporting``). None: distant supervision
            (see ``pseudo_supporting_``).

        Returns
        -------
        self : StructuredSVMQA
        """
        X = check_contexts(X)
        y = check_responses(y, len(X))
        lengths = [len(c.history) for c in X]
        self.candidates_ = resolve_candidates(self.candidates, y)
        # Stage-2 classes; an answer that is no candidate only shrinks the weights.
        answer_gold = encode_labels(y, self.candidates_)
        if (answer_gold < 0).all():
            raise ValueError("none of the answers in y is among the candidates.")
        self.featurizer_ = PairwiseFeaturizer(
            n_features=self.n_features,
            max_df=self.max_df,
            link_df=self.link_df,
            max_facts=self.max_facts,
            tokenizer=self.tokenizer,
        )
        self.pseudo_supporting_ = supporting is None
        answers = list(self.candidates_)
        if supporting is None:
            self.featurizer_._fit(X, None, answers)
            analyzer = Analyzer(
                tokenizer=self.tokenizer, case_folding=self.featurizer_.case_folding_
            )
            supporting = pseudo_supporting(X, y, self.featurizer_.stopwords_, analyzer)
            gold = gold_tuples(supporting, len(X), self.max_facts, lengths)
        else:
            gold = gold_tuples(supporting, len(X), self.max_facts, lengths)  # validate first
            self.featurizer_._fit(X, gold, answers)
        rng = check_random_state(self.random_state)
        batch = self.featurizer_.encode(X, answers=self.candidates_)
        lam = 1.0 / (self.C * len(X))
        self.violations_ = np.zeros((2, self.epochs), dtype=np.int64)
        self.n_iter_ = np.zeros(2, dtype=np.int64)
        with training_session(2 * self.epochs, desc="StructuredSVMQA", verbose=self.verbose) as bar:
            # stage 1: supporting facts
            self.coef_support_ = self._averaged_sgd(
                0, *self._stage1_epoch(batch), (gold, batch), len(X), lam, rng, bar
            )

            # stage 2: the answer, from the gold supporting facts
            feats = self._stage2_features(batch, gold, all_candidates=True)
            n_cand = len(self.candidates_)
            self.coef_answer_ = self._averaged_sgd(
                1, _kernels.stage2_epoch, (), (feats, n_cand, answer_gold), len(X), lam, rng, bar
            )
        return self

    def _stage1_epoch(self, batch):
        """Stage 1's epoch kernel and the arguments it takes after the stage's: the serial
        epoch, or on threads (see ``n_jobs``) the blocks of
        :func:`~irdialog.svm._parallel_kernels.stage1_epoch_speculative` under
        :func:`~irdialog._threads.numba_threads`."""
        most = _most_threads(self.n_jobs)
        threads = 1
        if most > 1 and len(batch.qsent) > 1:  # one per 2**20 of 8 mean searches
            costs = search_costs(batch)
            threads = threads_for_work(self.n_jobs, most * BLOCK_PER_THREAD * costs.mean())
        if threads == 1:
            return _kernels.stage1_epoch, (_kernels.search_workspace(batch),)
        block = BLOCK_PER_THREAD * threads
        work = block_workspace(batch, threads, block)

        def epoch(order, run, gold, batch, work, threads, block):
            with numba_threads(threads):
                return stage1_epoch_speculative(
                    order, run, gold, batch, costs, work, threads, block, BLOCK_VIOLATIONS,
                    MIN_WORK_PER_THREAD,
                )  # fmt: skip

        return epoch, (work, threads, block)

    def _averaged_sgd(self, stage, epoch_kernel, kernel_args, args, n_examples, lam, rng, bar):
        """Averaged-SGD epochs of one stage over the training questions until the violations
        stop; the averaged weights. ``epoch_kernel(order, run, *args, *kernel_args)`` runs
        one epoch of the :class:`~irdialog.svm._kernels.ASGD` ``run`` and returns its
        violations. A Ctrl-C ends the stage's epochs (with a warning) and keeps the weights
        averaged so far."""
        run = _kernels.start_asgd(self.n_features, lam, ETA0)
        violations = self.violations_[stage]

        def step(epoch):
            order = rng.permutation(n_examples).astype(np.int64)
            violations[epoch] = epoch_kernel(order, run, *args, *kernel_args)
            self.n_iter_[stage] = epoch + 1
            return violations[epoch] / n_examples, {"stage": stage + 1}

        log = run_epochs(
            step,
            self.epochs,
            bar=bar,
            model="StructuredSVMQA",
            advice="C",
            converged=lambda: _converged(violations[: self.n_iter_[stage]]),
        )
        if log.interrupted:
            warnings.warn(
                f"StructuredSVMQA: training interrupted in stage {stage + 1} after "
                f"{log.n_iter} of {self.epochs} epochs; its weights are those averaged so far.",
                UserWarning,
                stacklevel=3,
            )
        return _kernels.averaged_weights(run)

    # ------------------------------------------------------------------ inference

    def _stage2_features(self, batch, tuples, all_candidates):
        """Phi per question and gamma per (question, answer) pair: every candidate of every
        question, or the i-th of ``batch``'s answers for question i (an
        :class:`~irdialog.svm._kernels.AnswerFeatures`)."""
        nq = len(batch.qsent) - 1
        if all_candidates:
            n_ans = len(batch.answer_ptr) - 1
            pairs_q = np.repeat(np.arange(nq, dtype=np.int64), n_ans)
            pairs_c = np.tile(np.arange(n_ans, dtype=np.int64), nq)
        else:
            pairs_q = np.arange(nq, dtype=np.int64)
            pairs_c = np.arange(nq, dtype=np.int64)
        return _kernels.stage2_features(batch, tuples, pairs_q, pairs_c)

    def _supporting_tuples(self, batch) -> np.ndarray:
        """The tuple stage 1 chooses for each question of ``batch``, its searches on the
        threads their work pays for (see ``n_jobs``), a part of the questions each."""
        nq = len(batch.qsent) - 1
        out = np.full((nq, 3), -1, dtype=np.int64)
        threads = 1
        if _most_threads(self.n_jobs) > 1 and nq > 1:
            threads = threads_for_work(self.n_jobs, search_costs(batch).sum())
        if threads == 1:
            work = _kernels.search_workspace(batch)
            _kernels.stage1_predict(self.coef_support_, batch, work, out)
        else:
            with numba_threads(threads):
                work = block_workspace(batch, threads, 1)
                stage1_predict_parts(self.coef_support_, batch, work, out, threads)
        return out

    def predict_supporting(self, X) -> list[tuple[int, ...]]:
        """The supporting facts stage 1 chooses: positions into each context's history, in
        slot order (empty slots left out).

        Returns
        -------
        supporting : list of tuple of int
        """
        check_is_fitted(self)
        batch = self.featurizer_.encode(check_contexts(X))
        return [tuple(int(f) for f in row if f >= 0) for row in self._supporting_tuples(batch)]

    def decision_function(self, X) -> np.ndarray:
        """The stage-2 score of each candidate answer, given the facts stage 1 chooses.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        step = max(1, PAIR_BLOCK // len(self.candidates_))
        return np.vstack([self._block_scores(X[i : i + step]) for i in range(0, len(X), step)])

    def _block_scores(self, X) -> np.ndarray:
        batch = self.featurizer_.encode(X, answers=self.candidates_)
        tuples = self._supporting_tuples(batch)
        feats = self._stage2_features(batch, tuples, all_candidates=True)
        n_cand = len(self.candidates_)
        pairs_q = np.repeat(np.arange(len(X), dtype=np.int64), n_cand)
        pair_cls = np.tile(np.arange(n_cand, dtype=np.int64), len(X))
        scores = _kernels.answer_scores(self.coef_answer_, feats, pairs_q, pair_cls)
        return scores.reshape(len(X), n_cand)

    def _score_pairs(self, X, responses) -> np.ndarray:
        X = check_contexts(X)
        batch = self.featurizer_.encode(X, answers=list(responses))
        tuples = self._supporting_tuples(batch)
        feats = self._stage2_features(batch, tuples, all_candidates=False)
        pair_cls = encode_labels(responses, self.candidates_)  # -1: no class features
        pairs_q = np.arange(len(X), dtype=np.int64)
        return _kernels.answer_scores(self.coef_answer_, feats, pairs_q, pair_cls)
