"""The strongly supervised Memory Network of the bAbI tasks (Weston et al. 2015, 2016)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._babi_qa_heuristics import answer_parts, pseudo_supporting
from .._compat import Interval, StrOptions, _fit_context
from .._threads import numba_threads, threads_for_work
from ..base import N_JOBS_CONSTRAINT, RankerMixin, check_contexts, resolve_candidates
from ..text import (
    TOKENIZERS,
    Analyzer,
    LabelIndex,
    Vocabulary,
    _ragged,
    check_ngram_range,
    context_texts,
    encode_contexts,
    learn_case_folding,
)
from . import _memnn_kernels as K
from ._attention import turn_attention
from ._hogwild_kernels import memnn_hogwild_epoch, stack_scratch
from ._training import TRAINING_CONSTRAINTS, Run, TrainingMixin


def check_supporting(supporting, X) -> list[tuple[int, ...]]:
    """Validate supporting facts: for each context, a sequence of indices into its history."""
    supporting = list(supporting)
    if len(supporting) != len(X):
        raise ValueError(f"X has {len(X)} contexts but supporting has {len(supporting)} entries.")
    out = []
    for i, (facts, ctx) in enumerate(zip(supporting, X)):
        facts = tuple(int(f) for f in np.atleast_1d(np.asarray(facts, dtype=object)))
        bad = [f for f in facts if not 0 <= f < len(ctx.history)]
        if bad:
            raise ValueError(
                f"supporting[{i}] = {facts} names fact {bad[0]}, but context {i} has "
                f"{len(ctx.history)} history sentences."
            )
        out.append(facts)
    return out


def _epoch_work(stories, rows, hops: int, dim: int) -> float:
    """The multiply-adds of an epoch over the questions ``rows``, as :meth:`MemNNQA._fit`
    estimates it to choose its threads: each of ``hops + 1`` ranking problems (the hops and
    the answer) embeds and scores the question's memories, forward and backward,
    ``embedding_dim`` multiply-adds per word, at the mean story and sentence sizes."""
    n_mem = np.diff(stories.mptr)[rows]
    sentence = np.diff(stories.sptr)[stories.msent].mean() if len(stories.msent) else 0.0
    return 2.0 * (hops + 1) * float(n_mem.sum()) * sentence * dim


class MemNNQA(TrainingMixin, RankerMixin, BaseEstimator):
    """Memory Network trained with the supporting facts (strong supervision).

    The output module finds the supporting facts one hop at a time: hop t scores every
    story sentence m against the question x and the facts found so far,
    ``s_O([x, m_o1, ..., m_o(t-1)], m)``, and takes the best. The response module then ranks
    the answers with ``s_R([x, m_o1, ...], answer)``. Both scores are embedding models
    ``s(a, b) = E(a) . E(b)`` over bags of words, with separate embeddings for question words,
    found facts' words and candidate words (Weston et al. 2015's three-part feature map),
    and write-time features on each candidate sentence: its age and, for each fact already
    found, whether it is older, the same or newer. Each hop, and the answer, is trained
    with the margin ranking loss against every other sentence (answer), given the gold
    facts; one SGD step per question and hop.

    The paper's extensions (Weston et al. 2016, appendix A) are parameters:

    - ``adaptive_memory`` (AM): find facts until a learned stop memory is chosen (at most
      ``hops``), and answer word by word until a stop word (lists and paths, tasks 8, 19;
      an answer's words are split at punctuation, ``"n,w"``);
    - ``ngram_range=(1, 3)`` (NG): bags of 1- to 3-grams of each sentence;
    - ``nonlinear`` (NL): ``E(b) = tanh(W tanh(sum of the bag's embeddings))``, eq. 6.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The candidate answers. None: the distinct answers seen in ``fit``.
    hops : int, default=2
        Supporting facts found per question (k = 2 in the paper's base model); with
        ``adaptive_memory``, the most found (the paper uses 10). Questions with more gold
        facts are trained on their first ``hops``.
    adaptive_memory : bool, default=False
    ngram_range : tuple (min_n, max_n), default=(1, 1)
    nonlinear : bool, default=False
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    embedding_dim : int, default=50
    margin : float, default=1.0
    learning_rate : float, default=0.01
        The SGD step size.
    epochs : int, default=30
    init_std : float, default=0.1
        Standard deviation of the normal initial embeddings.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the questions, drawn with ``random_state``
        (whole stories when ``groups`` is given), keep the weights of the epoch with the
        best held-out answer accuracy, and stop after ``n_iter_no_change`` epochs without
        improvement.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
    warm_start : bool, default=False
        Let ``fit`` continue from the fitted embeddings instead of starting anew, for
        ``epochs`` more epochs. The vocabulary, answers and layout of the first fit stay;
        ``hops``, ``adaptive_memory``, ``ngram_range`` and ``embedding_dim`` must not
        change in between.
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
        Threads of the training epochs (None: one; -1: all cores). With more than one, an
        epoch's questions are cut into one contiguous shard per thread, and the threads
        step the shared embeddings at once without locks (Hogwild, as StarSpace and
        fastText train): a seed then gives a model that lands inside the spread of the
        seeds of one thread but does not repeat bit for bit. An epoch takes only the
        threads its work pays for: one per 2**20 multiply-adds (questions x (``hops`` + 1)
        x memories x words of a memory x ``embedding_dim`` x 2, at the mean sizes), at most
        ``n_jobs`` and numba's thread count (``NUMBA_NUM_THREADS``); an epoch with less than
        twice that work runs on one thread, exactly as with ``n_jobs=1``.
    verbose : bool, default=False

    Attributes
    ----------
    candidates_ : ndarray of str
    vocabulary_ : irdialog.text.Vocabulary
        The words (n-grams) of the training stories, questions and answers.
    answer_words_ : list of str
        The answer words (the response steps' candidates with ``adaptive_memory``).
    case_folding_ : dict of str to str
        Capitals lower-cased otherwise than by ``str.lower``, learned from the training texts
        (:func:`irdialog.text.learn_case_folding`; empty for natural languages).
    params_ : Params
        ``UO``, ``WO`` (output module) and ``UR``, ``WR`` (response module), float64.
    layout_ : Layout
        The row blocks of the embeddings.
    loss_curve_ : list of float
        Mean training loss (output plus response) of each epoch.
    validation_scores_ : list of float or None
        Held-out answer accuracy of each epoch (``early_stopping``; None without).
    best_validation_score_ : float or None
        The best held-out accuracy of the last fit (``early_stopping``).
    n_iter_ : int
        Epochs run (over every ``fit`` continued with ``warm_start`` and every
        ``partial_fit``).
    best_epoch_ : int
        The epoch (counted from 1) whose weights the model holds: the best validated one
        with early stopping, else the last.
    pseudo_supporting_ : bool
        True when ``fit`` had no supporting facts and used distant supervision.

    See Also
    --------
    irdialog.StructuredSVMQA : the other strongly supervised model of the paper.
    irdialog.MemN2NRanker : the weakly supervised, end-to-end memory network.

    Notes
    -----
    Training runs the core shared by the gradient-trained models
    (:mod:`irdialog.embed._training`). A ``KeyboardInterrupt`` (Ctrl-C) during ``fit`` ends
    the training with a warning and leaves a fitted model: the weights of the best
    validated epoch, or the last ones.

    References
    ----------
    Weston, Chopra & Bordes (2015). Memory Networks. ICLR. Section 3.
    Weston, Bordes, Chopra, Rush, van Merrienboer, Joulin & Mikolov (2016). Towards
    AI-Complete Question Answering: A Set of Prerequisite Toy Tasks. ICLR. Appendix A.

    Examples
    --------
    >>> from irdialog import MemNNQA
    >>> from irdialog.datasets import load_babi_qa
    >>> train, test = load_babi_qa(1, "train"), load_babi_qa(1, "test")
    >>> model = MemNNQA(epochs=5, random_state=0).fit(train.X, train.y, train.supporting)
    >>> model.predict_supporting(test.X[:1]), model.predict(test.X[:1])[0]
    ([(0, 0)], 'hallway')
    >>> bool(model.score(test.X, test.y) > 0.95)
    True
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "hops": [Interval(Integral, 1, 10, closed="both")],
        "adaptive_memory": ["boolean"],
        "ngram_range": [tuple],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "nonlinear": ["boolean"],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "margin": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "init_std": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": N_JOBS_CONSTRAINT,
        **TRAINING_CONSTRAINTS,
    }
    _warm_start_fixed = ("hops", "adaptive_memory", "ngram_range", "embedding_dim")

    def __init__(
        self,
        *,
        candidates=None,
        hops=2,
        adaptive_memory=False,
        ngram_range=(1, 1),
        tokenizer="word",
        nonlinear=False,
        embedding_dim=50,
        margin=1.0,
        learning_rate=0.01,
        epochs=30,
        init_std=0.1,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        warm_start=False,
        random_state=None,
        n_jobs=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.hops = hops
        self.adaptive_memory = adaptive_memory
        self.ngram_range = ngram_range
        self.tokenizer = tokenizer
        self.nonlinear = nonlinear
        self.embedding_dim = embedding_dim
        self.margin = margin
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.init_std = init_std
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ encoding

    def _analyzer(self):
        return Analyzer(
            tokenizer=self.tokenizer,
            drop_punctuation=True,
            ngram_range=check_ngram_range(self.ngram_range),
            case_folding=self.case_folding_,
        )

    def _content_words(self, X, analyzer):
        """1 for the words in at most half of the training story sentences (language-
        independent stopwords: the rest), which link the sentences that share them."""
        sentences = {t.text for ctx in X for t in ctx.history}
        index = self.vocabulary_.index_
        df = np.zeros(len(self.vocabulary_))
        for text in sentences:
            df[[index[w] for w in set(analyzer.words(text)) if w in index]] += 1
        return (df <= 0.5 * max(len(sentences), 1)).astype(np.uint8)

    def _stories(self, X, analyzer):
        enc = encode_contexts(X, analyzer.words, self.vocabulary_.index_)
        return K.Stories(enc.sptr, enc.stok.astype(np.int64), enc.qsent, enc.mptr, enc.msent,
                         self.content_words_)  # fmt: skip

    def _answers(self, analyzer, y=()):
        """The candidates' words and, for training, the gold answers ``y`` (none to score)."""
        index = self.vocabulary_.index_

        def ids(answer):
            return [index[w] for w in answer_parts(answer, analyzer) if w in index]

        aptr, aword = _ragged([ids(a) for a in y], np.int64)
        cptr, cword = _ragged([ids(c) for c in self.candidates_], np.int64)
        gold = LabelIndex(self.candidates_).encode(y).astype(np.int64)
        words = np.asarray([index[w] for w in self.answer_words_], dtype=np.int64)
        return K.Answers(aptr, aword, cptr, cword, words, gold)

    def _work(self, stories, answers):
        """Scratch arrays big enough for every ranking problem of these questions."""
        H = self.layout_.H
        sent_len = np.diff(stories.sptr)
        n_mem = np.diff(stories.mptr)
        mem_rows = sent_len[stories.msent] + 2 + 4 * H  # words, age rows, per-fact rows
        ends = np.cumsum(np.r_[0, mem_rows])
        per_question = ends[stories.mptr[1:]] - ends[stories.mptr[:-1]]
        longest = int(sent_len.max(initial=0))
        answer_len = int(np.diff(answers.cptr).max(initial=0))
        n_in = longest * (H + 1) + answer_len + 1
        n_cand_rows = max(int(per_question.max(initial=0)), len(answers.cword))
        n_cand_rows += len(answers.words) + 2
        n_cand = max(int(n_mem.max(initial=0)), len(answers.cptr), len(answers.words)) + 2
        bags = K.Bags(
            np.zeros(n_in, dtype=np.int64), np.zeros(n_in),
            np.zeros(n_cand + 1, dtype=np.int64),
            np.zeros(n_cand_rows, dtype=np.int64), np.zeros(n_cand_rows),
            np.zeros((H + 1) * (int(n_mem.max(initial=0)) + 1), dtype=np.int64),
        )  # fmt: skip
        dim = self.embedding_dim
        facts = np.zeros(H + 1, dtype=np.int64)
        return bags, facts, K.make_buffers(dim, n_cand), K.make_buffers(dim, n_cand)

    def _settings(self, lr=None):
        return K.Settings(
            bool(self.nonlinear), bool(self.adaptive_memory), int(self.hops),
            float(self.margin), float(self.learning_rate if lr is None else lr),
        )  # fmt: skip

    # ------------------------------------------------------------------ fit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, supporting=None, groups=None):
        """Train the output module on the supporting facts and the response module on the
        answers.

        Parameters
        ----------
        X : sequence of Context or str
            Stories as histories (``kb`` turns), questions as queries.
        y : sequence of str
        supporting : sequence of sequences of int, default=None
            The supporting facts of each question, as indices into its history, in
            reasoning order (``load_babi_qa(...).supporting``). None: distant supervision
            (:func:`irdialog._babi_qa_heuristics.pseudo_supporting`: the latest sentence
            holding a word of the answer, else the latest sharing a word with the question),
            recorded in ``pseudo_supporting_``.
        groups : array-like of shape (n_samples,), default=None
            Story ids: with ``early_stopping``, whole stories are held out.

        Returns
        -------
        self : MemNNQA
        """
        return self._fit_path(X, y, groups=groups, supporting=supporting)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, supporting=None):
        """One epoch over the questions X, their answers y and supporting facts, from the
        fitted embeddings (or from a new model, whose vocabulary, answers and layout are
        then those of this first call). No validation, no early stopping.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
        supporting : sequence of sequences of int, default=None
            As in :meth:`fit`.

        Returns
        -------
        self : MemNNQA
        """
        return self._fit_path(X, y, incremental=True, supporting=supporting)

    def _fit(self, fit, supporting=None):
        X, y, rng, continuing = fit.X, fit.y, fit.random_state, fit.continuing
        if not continuing:  # the pseudo-supporting facts read through the learned folding
            self.case_folding_ = learn_case_folding(context_texts(X, y))
        analyzer = self._analyzer()
        self.pseudo_supporting_ = supporting is None
        if supporting is None:
            supporting = pseudo_supporting(X, y, analyzer=analyzer)
        supporting = check_supporting(supporting, X)
        if continuing:
            stories = self._stories(X, analyzer)
            params = K.Params(*(p.copy() for p in self.params_))
        else:
            stories, params = self._start(X, y, rng, analyzer)
        answers = self._answers(analyzer, y)
        gold_ptr, gold_facts = _ragged(supporting, np.int64)
        rows, val_rows = self._split_rows(len(X), fit)
        work = self._work(stories, answers)
        settings = self._settings()
        self.params_ = params  # trained in place; _decision validates with them
        threads = threads_for_work(
            self.n_jobs, _epoch_work(stories, rows, self.hops, self.embedding_dim)
        )
        # Hogwild: one shard of the questions per thread, each with its own scratch arrays
        if threads > 1:
            scratch = stack_scratch([self._work(stories, answers) for _ in range(threads)])

        def step(epoch):
            order = rng.permutation(rows).astype(np.int64)
            if threads > 1:
                with numba_threads(threads):
                    lo, lr = memnn_hogwild_epoch(params, stories, self.layout_, answers,
                                                 gold_ptr, gold_facts, order, settings,
                                                 *scratch)  # fmt: skip
            else:
                lo, lr = K.train_epoch(params, stories, self.layout_, answers, gold_ptr,
                                       gold_facts, order, settings, work)  # fmt: skip
            return (lo + lr) / len(order), {}

        def validate():
            scores = self._decision(stories, answers, val_rows, work)
            return float(np.mean(scores.argmax(axis=1) == answers.gold[val_rows])), 0.0

        run = Run(
            step,
            weights=lambda: params,
            snapshot=lambda: K.Params(*(p.copy() for p in params)),
            validate=validate if len(val_rows) else None,
        )
        self.params_ = self._train_epochs(
            lambda k: run,
            1 if fit.incremental else self.epochs,
            continuing=continuing,
            desc="MemNNQA",
            advice=f"learning_rate (now {self.learning_rate})",
        )
        return self

    def _start(self, X, y, rng, analyzer):
        """The vocabulary, answers, layout and initial parameters of a new model, from its
        training data: returns (encoded stories, parameters)."""
        self.candidates_ = resolve_candidates(self.candidates, y)
        texts = sorted({t.text for ctx in X for t in ctx.history} | {ctx.query for ctx in X})
        answer_words = {w for a in [*y, *self.candidates_] for w in answer_parts(a, analyzer)}
        self.answer_words_ = sorted(answer_words)
        self.vocabulary_ = Vocabulary().fit(
            [analyzer.words(t) for t in texts] + [[w] for w in self.answer_words_]
        )
        self.content_words_ = self._content_words(X, analyzer)
        stories = self._stories(X, analyzer)
        longest = int(np.diff(stories.mptr).max(initial=1))
        self.layout_ = K.Layout(len(self.vocabulary_), K.age_bucket_count(longest), int(self.hops))
        dim = self.embedding_dim
        UO = rng.normal(0.0, self.init_std, (K.output_rows(self.layout_), dim))
        UR = rng.normal(0.0, self.init_std, (K.response_rows(self.layout_), dim))
        WO = rng.normal(0.0, 1.0 / np.sqrt(dim), (dim, dim))
        WR = rng.normal(0.0, 1.0 / np.sqrt(dim), (dim, dim))
        return stories, K.Params(UO, WO, UR, WR)

    # ------------------------------------------------------------------ inference

    def _subset(self, stories, rows):
        # The questions ``rows`` as their own Stories (sentences shared, not copied).
        mptr, msent = _ragged(
            [stories.msent[stories.mptr[i] : stories.mptr[i + 1]] for i in rows], np.int64
        )
        return K.Stories(stories.sptr, stories.stok, stories.qsent[rows], mptr, msent,
                         stories.content)  # fmt: skip

    def _facts(self, stories, work):
        found = np.full((len(stories.qsent), self.hops), -1, dtype=np.int64)
        K.find_facts(self.params_, stories, self.layout_, self._settings(), work, found)
        return found

    def _decision(self, stories, answers, rows, work):
        sub = self._subset(stories, rows)
        found = self._facts(sub, work)
        out = np.zeros((len(rows), len(self.candidates_)))
        K.answer_scores(self.params_, sub, self.layout_, answers, self._settings(), found,
                        work, out)  # fmt: skip
        return out

    def _encode_for_inference(self, X):
        X = check_contexts(X)
        analyzer = self._analyzer()
        stories = self._stories(X, analyzer)
        answers = self._answers(analyzer)
        return stories, answers, self._work(stories, answers)

    def decision_function(self, X) -> np.ndarray:
        """Scores of every candidate answer, given the facts the model finds.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        stories, answers, work = self._encode_for_inference(X)
        return self._decision(stories, answers, np.arange(len(stories.qsent)), work)

    def predict_supporting(self, X) -> list[tuple[int, ...]]:
        """The supporting facts found for each question (indices into its history)."""
        check_is_fitted(self)
        stories, _, work = self._encode_for_inference(X)
        return [tuple(int(f) for f in row if f >= 0) for row in self._facts(stories, work)]

    def attention_turns(self, context) -> list:
        """The supporting facts found for one context, as hard attention on its turns.

        The rows of :meth:`MemN2NRanker.attention_turns
        <irdialog.embed.MemN2NRanker.attention_turns>` for this model: one per turn of the
        history, oldest first, whose weight for hop t is 1 when hop t chose it as a
        supporting fact (:meth:`predict_supporting`), else 0. A hop that chose the stop
        memory (``adaptive_memory``) has no weight on any turn.

        Parameters
        ----------
        context : Context or str

        Returns
        -------
        rows : list of TurnAttention
            Named tuples ``(time, speaker, text, weights)``, ``weights`` of shape (hops,).

        See Also
        --------
        irdialog.plot.plot_attention : these rows as a picture.
        """
        check_is_fitted(self)
        [context] = check_contexts([context], name="context")
        facts = self.predict_supporting([context])[0]
        n = len(context.history)
        by_age = np.zeros((self.hops, n))
        for hop, fact in enumerate(facts):
            by_age[hop, n - 1 - fact] = 1.0
        return turn_attention(context, by_age, n_memories=n)

    def _score_pairs(self, X, responses) -> np.ndarray:
        scores = self.decision_function(X)
        idx = LabelIndex(self.candidates_).encode(responses)
        out = np.full(len(idx), -np.inf)
        known = idx >= 0
        out[known] = scores[np.flatnonzero(known), idx[known]]
        return out
