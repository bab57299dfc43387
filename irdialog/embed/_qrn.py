"""Query-reduction network ranker (QRN) with hand-written numba forward/backward passes.

The model of Seo, Min, Farhadi & Hajishirzi (2017, section 2; the 2-layer model with reset
gates, "2r", of their bAbI results), on the encoding of MemN2N: the story sentences (or the
turns of a dialog, with their speaker word) are position-encoded bags of words read in
order, and each layer reduces the query as it reads them; the last layer's final state
scores the candidates through their own bag-of-words embeddings, as MemN2N's controller
does. The kernels are in :mod:`irdialog.embed._qrn_kernels`.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval
from .._threads import MIN_WORK_PER_THREAD, numba_threads, threads_for_work
from ..base import check_contexts
from . import _qrn_kernels as Q
from ._memn2n import (
    _MEMORY_CONSTRAINTS,
    _drop_frozen_gradient,
    _MemoryRanker,
    _restore_frozen,
    serial_epoch,
)
from ._qrn_parallel_kernels import batch_loss_grad_parts, make_parts

START_TOKEN = "<start>"


def with_start_memory(enc, start_word: int):
    """The encoded contexts ``enc`` in which every context without history reads one
    memory: a sentence of the start word alone, without speaker.

    The reduced query is a state of the memories read, so a context without any (the
    first turn of a dialog) would have none to score the candidates from; the authors'
    dialog code likewise opens every dialog with a start sentence. Contexts with a
    history are unchanged.
    """
    counts = np.diff(enc.mptr)
    empty = counts == 0
    if not empty.any():
        return enc
    start = len(enc.sspk)  # the new sentence's index
    mptr = np.zeros_like(enc.mptr)
    np.cumsum(counts + empty, out=mptr[1:])
    msent = np.empty(mptr[-1], dtype=enc.msent.dtype)
    # each old memory moves by the start memories inserted before its context
    msent[np.arange(len(enc.msent)) + np.repeat(mptr[:-1] - enc.mptr[:-1], counts)] = enc.msent
    msent[mptr[:-1][empty]] = start
    return dataclasses.replace(
        enc,
        sptr=np.append(enc.sptr, enc.sptr[-1] + 1),
        stok=np.append(enc.stok, np.asarray(start_word, enc.stok.dtype)),
        sspk=np.append(enc.sspk, np.asarray(0, enc.sspk.dtype)),
        mptr=mptr,
        msent=msent,
        mtime=np.zeros(mptr[-1], dtype=enc.mtime.dtype),
    )


class QRNRanker(_MemoryRanker):
    """Query-reduction network ranking candidate responses (QRN).

    The memories (story sentences, or the previous turns of a conversation with their
    speaker word) are position-encoded bags of words ``x_1..x_T``, read oldest first; a
    context without history (the first turn of a dialog) reads one start memory, the
    start word alone. The query (question, or last user utterance) is embedded the same
    way. Each layer reads the memories with its query ``q_t`` (the question at every step
    in the first layer):

    - update gate ``z_t = sigmoid(w_z . (x_t o q_t) + b_z)`` (a scalar),
    - candidate reduced query ``c_t = tanh(W_h [x_t; q_t] + b_h)``,
    - reduced query ``h_t = z_t r_t c_t + (1 - z_t) h_{t-1}``, with the reset gate
      ``r_t = sigmoid(w_r . (x_t o q_t) + b_r)`` (``reset_gate``; the last layer has none).

    Every layer but the last also reads the memories backwards in time (same ``z_t`` and
    ``c_t``, its own reset gate; ``bidirectional``), and the next layer's query is the sum
    of both directions' states. The last layer's final state ``u`` scores candidate j as
    ``u . (sum of its word embeddings)``; training minimises the softmax cross-entropy over
    all candidates with Adam, L2 weight decay and gradient-norm clipping. Forward and
    backward passes are hand-written numba kernels. The text, candidates and match-type
    features are encoded exactly as :class:`~irdialog.MemN2NRanker` encodes them (without
    its time words: QRN reads the memories in order).

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set. None: the distinct responses seen in ``fit``.
    layers : int, default=2
        Reduction layers.
    embedding_dim : int, default=50
        Dimension of the word embeddings and of the reduced queries.
    memory_size : int, default=50
        The most recent turns (story sentences) read.
    reset_gate : bool, default=True
        Reset gates in every layer but the last (the paper's "r" models).
    bidirectional : bool, default=True
        Read backwards in time too, in every layer but the last.
    tie_layers : bool, default=True
        One set of unit weights for all layers (as the authors' code); False: one per layer.
    position_encoding : bool, default=True
        Weight the words of a sentence by their position (MemN2N's position encoding).
    drop_punctuation : bool, default=True
        Drop tokens made only of punctuation (see :class:`~irdialog.MemN2NRanker`).
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The words of memories, query and candidates: their n-grams in sentence order.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`).
    match_type : bool, default=True
        Use the entities of annotated contexts as match-type features (Bordes et al. 2017,
        section 4.5): a candidate also gets one type word per entity type it shares with
        the conversation.
    update_bias : float, default=-2.5
        Initial bias of the update gate (the authors' code subtracts 2.5: the gates start
        nearly closed).
    learning_rate : float, default=0.01
        Adam's step size.
    anneal_every : int, default=25
        Multiply the learning rate by ``anneal_rate`` every this many epochs.
    anneal_rate : float, default=0.5
    epochs : int, default=100
    batch_size : int, default=32
    weight_decay : float, default=0.001
        L2 penalty ``weight_decay / 2 * |w|^2`` on every weight, added to the mean loss of
        a batch (0.001 in the paper).
    max_grad_norm : float or None, default=40.0
        The gradient of a batch (all weights together) is rescaled to at most this norm.
    init_std : float, default=0.1
        Standard deviation of the normal initialisation of the embeddings (the unit's
        weights are Glorot-uniform).
    initial_embeddings : str, path-like or dict of str to array-like, default=None
        Pretrained word vectors (:func:`~irdialog.embed.load_word_vectors`: word2vec text
        or binary, GloVe, fastText ``.vec``, or a dict ``{word: vector}``, read in
        ``fit``): the words of ``vocabulary_`` they hold start at their vectors, as they
        are, in both matrices of ``embeddings_`` (sentences and candidates); the other
        words start from their normal draws. Of dimension ``embedding_dim``.
    freeze_embeddings : bool, default=False
        The pretrained rows stay as they are (no gradient step, no weight decay); the
        unit and the other words learn.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the training data (whole groups when ``groups``
        is passed to ``fit``), keep the weights of the epoch with the best validation
        accuracy and stop after ``n_iter_no_change`` epochs without improvement.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
    warm_start : bool, default=False
        Let ``fit`` continue from the fitted weights for ``epochs`` more epochs.
    n_init : int, default=1
        Random restarts; the kept model has the best validation accuracy with early
        stopping, else the lowest training error (the paper keeps the best of 10 restarts
        on its development data).
    n_jobs : int or None, default=None
        Threads of the fit (None: one; -1: every core). With ``n_init`` > 1, up to
        ``n_jobs`` restarts train side by side, each the same computation as alone: the
        fitted model is bit-for-bit that of ``n_jobs=1``. With ``n_init=1``, each
        mini-batch is cut into interleaved parts whose gradients are computed on their own
        threads, in one numba parallel region, and summed in a fixed order before the
        update: the model need not repeat that of ``n_jobs=1`` bit for bit (it differs in
        the last bits of the float32 sums, within the spread of the seeds), and a seed
        gives bit-for-bit the same model for a given number of parts. A batch takes only
        the threads its work pays for: one per 2**20 multiply-adds, estimated as
        ``batch_size`` x ``embedding_dim`` x (3 x the candidates + 6 x ``layers`` x
        ``embedding_dim`` x the memories of an example + 4 x its words), at most
        ``n_jobs`` and numba's thread count (``NUMBA_NUM_THREADS``); a batch with less
        than twice that work runs on one thread, exactly as with ``n_jobs=1``.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation and shuffling.
    verbose : bool, default=False
        Show a progress bar with the training loss and accuracy.

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate responses, the columns of ``decision_function``.
    vocabulary_ : irdialog.text.Vocabulary
        Words of the training contexts and responses, after the nil, speaker and type words.
    types_ : list of str
        Entity types used as match-type features.
    case_folding_ : dict of str to str
        Capitals lower-cased otherwise than by ``str.lower`` (see MemN2N).
    sentence_length_ : int
        J of the position encoding.
    embeddings_ : ndarray of shape (2, n_words, embedding_dim), float32
        The sentence embedding (0) and the candidate embedding (1); row 0, nil, is zero.
    unit_weights_ : ndarray of shape (1 or layers, 2 d^2 + 4 d + 3), float32
        The reduction unit: ``W_h``, ``b_h``, ``w_z``, the forward and backward reset
        gates' weights and the three biases (:func:`~irdialog.embed._qrn_kernels.\
unit_layout`).
    loss_curve_ : list of float
        Mean training loss per epoch of the kept run.
    train_accuracy_curve_ : list of float
        Training accuracy per epoch (during the epoch's updates).
    validation_scores_ : list of float or None
        Validation accuracy per epoch (early stopping only).
    best_validation_score_ : float or None
    n_iter_ : int
        Epochs run by the kept run.
    best_epoch_ : int
        The epoch (from 1) whose weights the model holds.

    See Also
    --------
    irdialog.MemN2NRanker : the same encoding read by attention instead of in order.

    Notes
    -----
    Not implemented from the paper: its parallel form over time (the same values, computed
    otherwise), time-step dropout, and the answer as a softmax over the vocabulary (here,
    as in MemN2N, one embedding per candidate). Training runs the core shared by the
    gradient-trained models (:mod:`irdialog.embed._training`).

    References
    ----------
    Seo, Min, Farhadi & Hajishirzi (2017). Query-Reduction Networks for Question Answering.
    ICLR. Section 2 (the model), 5 (bAbI QA and dialog bAbI).

    Examples
    --------
    >>> from irdialog import Context, QRNRanker, Turn
    >>> X = [Context((Turn("kb", "mary went to the kitchen"),
    ...               Turn("kb", "john went to the garden")), "where is mary"),
    ...      Context((Turn("kb", "john went to the kitchen"),
    ...               Turn("kb", "mary went to the garden")), "where is mary")] * 10
    >>> y = ["kitchen", "garden"] * 10
    >>> model = QRNRanker(embedding_dim=16, epochs=30, random_state=0).fit(X, y)
    >>> model.predict(X[:2]).tolist()
    ['kitchen', 'garden']
    >>> model.update_gates(X[:1]).shape  # (samples, layers, memory_size), oldest first
    (1, 2, 50)
    """

    _parameter_constraints = {
        **_MEMORY_CONSTRAINTS,
        "layers": [Interval(numbers.Integral, 1, None, closed="left")],
        "reset_gate": ["boolean"],
        "bidirectional": ["boolean"],
        "tie_layers": ["boolean"],
        "update_bias": [Interval(numbers.Real, None, None, closed="neither")],
        "weight_decay": [Interval(numbers.Real, 0, None, closed="left")],
    }
    _warm_start_fixed = (
        "layers", "embedding_dim", "memory_size", "reset_gate", "bidirectional", "tie_layers",
        "position_encoding", "drop_punctuation", "ngram_range", "match_type",
    )  # fmt: skip

    def __init__(
        self,
        *,
        candidates=None,
        layers=2,
        embedding_dim=50,
        memory_size=50,
        reset_gate=True,
        bidirectional=True,
        tie_layers=True,
        position_encoding=True,
        drop_punctuation=True,
        ngram_range=(1, 1),
        tokenizer="word",
        match_type=True,
        update_bias=-2.5,
        learning_rate=0.01,
        anneal_every=25,
        anneal_rate=0.5,
        epochs=100,
        batch_size=32,
        weight_decay=0.001,
        max_grad_norm=40.0,
        init_std=0.1,
        initial_embeddings=None,
        freeze_embeddings=False,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        warm_start=False,
        n_init=1,
        n_jobs=None,
        random_state=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.layers = layers
        self.embedding_dim = embedding_dim
        self.memory_size = memory_size
        self.reset_gate = reset_gate
        self.bidirectional = bidirectional
        self.tie_layers = tie_layers
        self.position_encoding = position_encoding
        self.drop_punctuation = drop_punctuation
        self.ngram_range = ngram_range
        self.tokenizer = tokenizer
        self.match_type = match_type
        self.update_bias = update_bias
        self.learning_rate = learning_rate
        self.anneal_every = anneal_every
        self.anneal_rate = anneal_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.max_grad_norm = max_grad_norm
        self.init_std = init_std
        self.initial_embeddings = initial_embeddings
        self.freeze_embeddings = freeze_embeddings
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.n_init = n_init
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ encoding
    # The text, the vocabulary, the candidates and the match types are MemN2N's, encoded
    # by the methods of their shared base (one encoding path for both memory models): QRN
    # has no time words (it reads the memories in order), embeds only the training words,
    # has no linear start, and its candidate matrix is embeddings_[1].
    temporal_encoding = False
    candidate_words = False
    linear_start = 0
    _extra_tokens = (START_TOKEN,)
    _w_mat = 1
    _weight_attrs = ("embeddings_", "unit_weights_")
    _desc = "QRN"
    _batch_parts = True  # a single run shares out its mini-batches among the fit's threads

    def _encode(self, X, analyzer=None):
        enc = super()._encode(X, analyzer)
        start = self.vocabulary_.index_.get(START_TOKEN)
        # a model saved before the start memory existed has no start word: it scores as it did
        return enc if start is None else with_start_memory(enc, start)

    @property
    def _weights(self):
        """The fitted (E, theta) the kernels read."""
        return self.embeddings_, self.unit_weights_

    def _cfg(self):
        pe_len = self.sentence_length_ if self.position_encoding else 0
        return Q.make_cfg(self.layers, self.tie_layers, self.reset_gate, self.bidirectional, pe_len)

    def _states(self, weights, data, rows, gates=None):
        """The final states of the examples ``rows`` under the weights ``(E, theta)``
        (MemN2NRanker's convention, whose scoring this model shares)."""
        E, theta = weights
        if gates is None:
            gates = np.zeros((0, 0, 0), dtype=np.float32)
        return Q.forward_states(
            E, theta, self._cfg(), data.kernel_args(), np.asarray(rows, np.int64), gates
        )

    # ------------------------------------------------------------------ training

    def _init_weights(self, rng):
        dim = self.embedding_dim
        E = (rng.standard_normal((2, len(self.vocabulary_), dim)) * self.init_std).astype(
            np.float32
        )
        E[:, 0, :] = 0.0
        n_units = 1 if self.tie_layers else self.layers
        bh, wz, _, _, bz, size = Q.unit_layout(dim)
        theta = np.zeros((n_units, size), dtype=np.float32)
        limit_h = np.sqrt(6.0 / (3 * dim))  # Glorot: fan-in 2d, fan-out d
        limit_g = np.sqrt(6.0 / (dim + 1))  # a gate: fan-in d, fan-out 1
        theta[:, :bh] = rng.uniform(-limit_h, limit_h, (n_units, bh))
        theta[:, wz:bz] = rng.uniform(-limit_g, limit_g, (n_units, bz - wz))
        theta[:, bz] = self.update_bias
        return E, theta

    def _epoch_steps(self, weights, data, y, rng, batch_threads=1, frozen=None):
        """The training steps of a run on the weights (E, theta), updated in place (but the
        ``frozen`` rows of E, see :class:`~irdialog.embed._memn2n._MemoryRanker`):
        ``epoch_steps(epoch)`` gives ``train_epoch(order, n_steps) -> (loss, correct)``
        (:func:`~irdialog.embed._memn2n.serial_epoch`) over the gradient and Adam update
        (with weight decay) of each mini-batch at the epoch's learning rate.

        With ``batch_threads`` above 1, a batch whose work pays for them
        (:func:`~irdialog._threads.threads_for_work` of :meth:`_batch_work`) is cut into
        one interleaved part per thread, whose gradients
        :func:`~irdialog.embed._qrn_parallel_kernels.batch_loss_grad_parts` computes in one
        numba parallel region and sums in part order before the one update."""
        E, theta = weights
        moments = Q.new_moments(E, theta)
        cfg = self._cfg()
        max_norm = -1.0 if self.max_grad_norm is None else float(self.max_grad_norm)
        sizes = (
            self.layers, self.batch_size, int(np.diff(data.mptr).max(initial=0)),
            len(self.candidates_), len(self.types_),
        )  # fmt: skip
        ws = Q.Workspace(E, theta, *sizes)
        n_parts = 1
        if batch_threads > 1:  # one part per thread that the batch's work pays for
            n_parts = threads_for_work(batch_threads, self._batch_work(data))
        if n_parts > 1:  # the batch's gradient on threads, in one numba parallel region
            parts = make_parts(n_parts, E, theta, *sizes)
        cands = self._cand_arrays()
        arrays = data.kernel_args()

        def epoch_steps(epoch):
            opt = Q.adam_settings(self._schedule(epoch)[0])

            def batch_step(batch, n_steps):
                k = min(n_parts, len(batch))
                if k == 1:
                    b_loss, b_correct = Q.batch_loss_grad(
                        E, theta, cfg, arrays, cands, y, batch, ws
                    )
                    dE, dtheta = ws.dE, ws.dtheta
                else:
                    with numba_threads(k):
                        b_loss, b_correct = batch_loss_grad_parts(
                            E, theta, cfg, arrays, cands, y, batch, parts, k, MIN_WORK_PER_THREAD
                        )
                    dE, dtheta = parts.dE[0], parts.dtheta[0]
                _drop_frozen_gradient(dE, frozen)
                Q.apply_update(
                    E, theta, dE, dtheta, moments, opt, n_steps, max_norm,
                    self.weight_decay * len(batch),
                )  # fmt: skip
                _restore_frozen(E, frozen)
                return b_loss, b_correct

            return serial_epoch(batch_step, self.batch_size)

        return epoch_steps

    def _batch_work(self, data) -> float:
        """The multiply-adds of a mini-batch, as :meth:`_epoch_steps` estimates them to
        choose its threads: per example, ``embedding_dim`` times three products with each
        candidate (scores, and the gradients of the state and of the candidates), six
        with the unit's ``embedding_dim`` rows at each memory and layer (the candidate
        reduced query, its weights' gradient and its inputs' gradient), and four with each
        word (embedding and its gradient, both ways), at their mean counts."""
        n = max(len(data.qsent), 1)
        memories = len(data.msent) / n
        words = (data.sptr[-1] / max(len(data.sptr) - 1, 1)) * (memories + 1)
        dim = self.embedding_dim
        per_example = 3 * len(self.candidates_) + 6 * self.layers * dim * memories + 4 * words
        return self.batch_size * dim * per_example

    # ------------------------------------------------------------------ scoring

    def update_gates(self, X) -> np.ndarray:
        """The update gate ``z_t`` of each layer at each memory.

        Returns
        -------
        gates : ndarray of shape (n_samples, layers, memory_size)
            ``gates[i, l, t]`` is layer l's gate at the t-th memory of ``X[i]`` read
            (oldest first: the turn ``X[i].history[-n + t]`` of its last ``n`` turns;
            the start memory at t = 0 when the history is empty); zero past the history.
        """
        check_is_fitted(self)
        X = check_contexts(X)
        out = np.zeros((len(X), self.layers, self.memory_size), dtype=np.float32)
        self._states(self._weights, self._encode(X), np.arange(len(X)), out)
        return out
