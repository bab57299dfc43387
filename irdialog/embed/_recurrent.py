"""Recurrent rankers: an LSTM or plain RNN encoder as a reader-classifier and as a dual
encoder, with hand-written numba forward and backward passes.

The two recurrent baselines of the papers this package reproduces:

- :class:`RecurrentReader`, the weakly supervised LSTM of Weston et al. (2015, section 5)
  and Dodge et al. (2016, section 3): it reads the story (or the dialog) and then the
  question as one token sequence, and scores the candidate answers from its final state;
- :class:`DualEncoderRanker`, the RNN and LSTM dual encoders of Lowe et al. (2015,
  sections 4.2-4.3): one encoder embeds the context c and the response r, and a pair
  scores ``sigma(c^T M r + b)``.

Both share one encoding path (:mod:`irdialog.text`), the kernels of
:mod:`irdialog.embed._recurrent_kernels` (packed batches, so padding costs nothing;
backpropagation through time; global-norm clipping; Adam with lazy updates of the
embedding rows a batch uses) and the training core of :mod:`irdialog.embed._training`
(validation split, early stopping, ``warm_start``, ``partial_fit``; a ``KeyboardInterrupt``
during ``fit`` ends the training with a warning and keeps the best validated epoch, or the
last weights). With ``n_jobs``, an epoch's mini-batches train on threads of this process
at once inside one numba parallel region, Hogwild
(:mod:`irdialog.embed._recurrent_parallel_kernels`), and the validation split is encoded a
block of rows per thread.
"""

from __future__ import annotations

import numbers

import numba
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from .._threads import n_threads, numba_threads, share_out, threads_for_work
from ..base import N_JOBS_CONSTRAINT, RankerMixin, check_contexts, resolve_candidates
from ..text import TOKENIZERS, Analyzer, LabelIndex, Vocabulary, _ragged, encode_contexts
from . import _recurrent_kernels as K
from ._negatives import (
    MINED_NEGATIVES,
    bm25_pools,
    check_chunk_negatives,
    check_negative_lists,
    encode_pools,
    sequence_bags,
)
from ._recurrent_parallel_kernels import (
    AdamSteps,
    DualEpoch,
    ReaderEpoch,
    dual_hogwild_epoch,
    encode_parts,
    encoders_record,
    make_dual_threads,
    make_reader_threads,
    reader_hogwild_epoch,
    reader_weights_record,
    reading_array,
    weights_record,
)
from ._training import (
    TRAINING_CONSTRAINTS,
    ChunkFitMixin,
    GoldFitMixin,
    Run,
    TrainingMixin,
)
from ._word_vectors import WORD_VECTOR_CONSTRAINTS, embedding_start

# The token read between the history and the query, so that the reader knows where the
# question starts (it is also what a context with an empty query reads last).
QUERY_TOKEN = "<query>"
# Contexts encoded at a time when scoring (the packed activations of a block are kept).
_SCORE_BLOCK = 256
_ADAM = (0.9, 0.999, 1e-8)

_COMMON_CONSTRAINTS = {
    "candidates": ["array-like", None],
    "cell": [StrOptions({"lstm", "rnn"})],
    "hidden_size": [Interval(numbers.Integral, 1, None, closed="left")],
    "embedding_dim": [Interval(numbers.Integral, 1, None, closed="left")],
    "max_length": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "drop_punctuation": ["boolean"],
    "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
    "epochs": [Interval(numbers.Integral, 0, None, closed="left")],
    "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
    "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "init_std": [Interval(numbers.Real, 0, None, closed="neither")],
    "weight_init": [StrOptions({"uniform", "orthogonal"})],
    **WORD_VECTOR_CONSTRAINTS,
    **TRAINING_CONSTRAINTS,
    "n_jobs": N_JOBS_CONSTRAINT,
}


def _orthogonal(rng, n):
    """A random n x n orthogonal matrix, uniform over the orthogonal group (the QR
    decomposition of a Gaussian matrix, the signs of R's diagonal moved into Q). Not
    ``scipy.stats.ortho_group``: before SciPy 1.11 it refuses n = 1 (``hidden_size=1``)."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def _drop_words(ptr, tok, droppable, rate, rng):
    """Word dropout (Iyyer et al. 2015): the sequences (ptr, tok) with each token where
    ``droppable`` is true removed with probability ``rate``."""
    keep = ~(droppable & (rng.random(len(tok)) < rate))
    row = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    kept = np.bincount(row[keep], minlength=len(ptr) - 1)
    return np.concatenate(([0], np.cumsum(kept))), tok[keep]


def _droppable(ptr, tok, query_id):
    """Which tokens of the sequences (ptr, tok) word dropout may leave out: those before
    the last query word of their row (the history, and with ``reread_query`` the query's
    first reading, so that the reader learns to use its second)."""
    return np.arange(len(tok)) < np.repeat(_last_query_word(ptr, tok, query_id), np.diff(ptr))


def _last_query_word(ptr, tok, query_id):
    """The position in ``tok`` of each row's last query word (every row has one)."""
    return np.maximum.reduceat(np.where(tok == query_id, np.arange(len(tok)), -1), ptr[:-1])


def _reread_query(ptr, tok, query_id):
    """The sequences (ptr, tok), each followed by the query word and then its query (the
    tokens after its last query word) once more, right to left."""
    last = _last_query_word(ptr, tok, query_id)
    n_old = np.diff(ptr)
    n_new = 2 * n_old - (last - ptr[:-1])  # the old tokens, the query word, the query
    new_ptr = np.concatenate(([0], np.cumsum(n_new)))
    pos = np.arange(new_ptr[-1]) - np.repeat(new_ptr[:-1], n_new)  # place in its row
    start, n = np.repeat(ptr[:-1], n_new), np.repeat(n_old, n_new)
    src = np.where(pos < n, start + pos, start + 2 * n - pos)
    src[pos == n] = 0  # the query word's place, set below
    out = tok[src]
    out[pos == n] = query_id
    return new_ptr, out


def _query_reversed_copy(ptr, tok, query_id):
    """The sequences (ptr, tok), then a copy of them in which each query (the tokens after
    its row's last query word) is reversed: rows ``n`` to ``2 n`` of the result."""
    last = _last_query_word(ptr, tok, query_id)
    n = np.diff(ptr)
    pos = np.arange(len(tok)) - np.repeat(ptr[:-1], n)  # place in its row
    q = np.repeat(last - ptr[:-1], n)  # the query word's place in its row
    src = np.where(pos <= q, np.arange(len(tok)), np.repeat(ptr[1:], n) - pos + q)
    return np.concatenate((ptr, ptr[1:] + ptr[-1])), np.concatenate((tok, tok[src]))


def _buckets(rows, lengths, batch_size, rng):
    """Mini-batches of ``rows`` in a random order, each of rows of similar length: the rows
    are shuffled, sorted by length within windows of 20 batches, cut into batches, and the
    batches shuffled (so that a batch's short rows do not wait on its long ones)."""
    order = rng.permutation(rows)
    window = 20 * batch_size
    batches = []
    for start in range(0, len(order), window):
        part = order[start : start + window]
        part = part[np.argsort(-lengths[part], kind="stable")]
        batches += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def _pair_table(cptr, ctok, rptr, rtok, codes, labels, pools=None, n_true=None):
    """The dual encoder's training arrays: contexts (cptr, ctok) and the response table
    (rptr, rtok) as one ragged table (``ptr``, ``tok``, the contexts first), each
    context's response row ``codes`` of the table, the pairs' ``labels`` (or None), and
    the contexts' negative ``pools`` (:class:`~irdialog.embed._negatives.Pools` of rows
    of the response table, or None) whose responses past the ``n_true`` true ones (None:
    every row) are drawn from the pools only."""
    ptr = np.concatenate((cptr, cptr[-1] + rptr[1:]))
    n_resp = len(rptr) - 1
    return {
        "ptr": ptr,
        "tok": np.concatenate((ctok, rtok)).astype(np.int32),
        "lengths": np.diff(ptr),
        "codes": codes,
        "labels": labels,
        "pools": pools,
        "n_ctx": len(cptr) - 1,
        "n_resp": n_resp,
        "n_true": n_resp if n_true is None else n_true,
    }


def _mined_pools(pairs, max_len):
    """The pools of ``negatives="bm25"`` of the contexts of the :func:`_pair_table`
    ``pairs``: per context, the :data:`~irdialog.embed._negatives.MINED_NEGATIVES` true
    responses of highest BM25 score for the tokens it reads (the last ``max_len`` of its
    sequence; 0: all), its own response left out, over the tokens the responses read. A
    context's pool depends on it and the response table alone."""
    ptr, tok, n_ctx = pairs["ptr"], pairs["tok"], pairs["n_ctx"]
    lengths = np.diff(ptr)
    read = lengths if not max_len else np.minimum(lengths, max_len)
    kept = np.arange(len(tok)) >= np.repeat(ptr[1:] - read, lengths)  # each row's last tokens
    rptr = np.zeros(len(ptr), dtype=np.int64)
    np.cumsum(read, out=rptr[1:])
    bags = sequence_bags(rptr, tok[kept], int(tok.max()) + 1 if len(tok) else 1)
    return bm25_pools(bags[:n_ctx], bags[n_ctx:], pairs["codes"], pairs["n_true"], MINED_NEGATIVES)


class _RecurrentBase(TrainingMixin, RankerMixin, BaseEstimator):
    """What both recurrent rankers share: the token sequences of contexts and responses,
    the encoder's parameters, the Adam training loop and the encoding of blocks."""

    _warm_start_fixed = ("cell", "hidden_size", "embedding_dim", "drop_punctuation")
    # the fitted attribute of each parameter (the kernels' key) of the encoder, and of the
    # model's scoring head (per model)
    _ENCODER = {"embeddings_": "Emb", "input_weights_": "Wx", "recurrent_weights_": "Wh",
                "bias_": "b"}  # fmt: skip
    _HEAD: dict = {}

    # ------------------------------------------------------------------ encoding

    @property
    def _lstm(self) -> bool:
        return self.cell == "lstm"

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or scoring call, so each text is tokenised once."""
        return Analyzer(tokenizer=self.tokenizer, drop_punctuation=self.drop_punctuation)

    def _max_len(self) -> int:
        return 0 if self.max_length is None else int(self.max_length)

    def _context_sequences(self, X, analyzer, index, unknown="drop"):
        """(indptr, ids) of each context's token sequence: its history turns, oldest
        first, then the query token, then the query. Unknown words are dropped."""
        enc = encode_contexts(X, analyzer.tokens, index, unknown=unknown)
        indptr, ids = enc.context_words()
        qlen = np.diff(enc.sptr)[enc.qsent]
        ids = np.insert(ids, indptr[1:] - qlen, index[QUERY_TOKEN]).astype(np.int32)
        return indptr + np.arange(len(indptr)), ids

    def _text_sequences(self, texts, analyzer, index):
        """(indptr, ids) of plain texts (responses), unknown words dropped."""
        return _ragged([[index[t] for t in analyzer.tokens(r) if t in index] for r in texts])

    def _init_encoder(self, rng, n_words, pretrained=None):
        """The encoder's parameters drawn from ``rng``; the rows of the word embeddings
        ``Emb`` that ``pretrained`` (rows, vectors) gives then set to those vectors."""
        emb = rng.normal(0.0, self.init_std, (n_words, self.embedding_dim))
        if pretrained is not None:
            emb[pretrained[0]] = pretrained[1]
        return {"Emb": emb, **self._init_recurrent(rng)}

    def _frozen_rows(self, pretrained):
        """The rows of ``Emb`` training leaves as they are (``freeze_embeddings``), or None."""
        return pretrained[0] if self.freeze_embeddings else None

    def _init_recurrent(self, rng):
        """``Wx``, ``Wh`` and ``b`` of one encoder, drawn from ``rng``."""
        E, Hd = self.embedding_dim, self.hidden_size
        G = 4 if self._lstm else 1
        if self.weight_init == "orthogonal":
            # Lowe et al. (2015, section 4.2), "critical for training the RNNs"
            Wx = rng.uniform(-0.01, 0.01, (E, G * Hd))
            Wh = np.hstack([_orthogonal(rng, Hd) for _ in range(G)])
        else:
            bound = 1.0 / np.sqrt(Hd)  # PyTorch's initialisation of recurrent layers
            Wx = rng.uniform(-bound, bound, (E, G * Hd))
            Wh = rng.uniform(-bound, bound, (Hd, G * Hd))
        params = {"Wx": Wx, "Wh": Wh, "b": np.zeros(G * Hd)}
        if self._lstm:
            params["b"][Hd : 2 * Hd] = 1.0  # forget gate open at the start
        return params

    def _readings(self, params):
        """The readings (:data:`~irdialog.embed._recurrent_kernels.Reading`) the encoders
        of ``params`` make of the sequences."""
        return K.readings(params)

    def _encode_rows(self, params, ptr, tok, rows=None, n_jobs=None):
        """Final states (float64) of the sequences ``rows`` (default: all), in blocks;
        every reading's side by side (:meth:`_readings`). With ``n_jobs`` threads that the
        work pays for (:func:`~irdialog._threads.threads_for_work`), a contiguous block of
        the rows per thread, in one numba parallel region."""
        reads = self._readings(params)
        if rows is None:
            rows = np.arange((len(ptr) - 1) // K.n_copies(reads))
        rows = np.asarray(rows, np.int64)
        out = np.empty((len(rows), params["Wh"].shape[0] * len(reads)))
        k = 1
        if n_threads(n_jobs) > 1:
            tokens = self._tokens(np.diff(ptr)[rows]) * len(reads)
            k = min(threads_for_work(n_jobs, self._encoder_work(tokens) / 3), len(rows))
        if k > 1:
            block = min(-(-len(rows) // k), _SCORE_BLOCK)
            with numba_threads(k):
                encode_parts(encoders_record(params, reads), reading_array(reads), self._lstm,
                             ptr, tok, rows, self._max_len(), out, block)  # fmt: skip
            return out
        for start in range(0, len(rows), _SCORE_BLOCK):
            block = rows[start : start + _SCORE_BLOCK]
            h, _ = K.encode_states(params, self._lstm, ptr, tok, block, self._max_len(), reads)
            out[start : start + len(block)] = h
        return out

    def _tokens(self, lengths):
        """The tokens read of sequences of ``lengths`` (``max_length`` of each at most)."""
        if self.max_length is not None:
            lengths = np.minimum(lengths, self.max_length)
        return int(lengths.sum())

    def _encoder_work(self, tokens):
        """The multiply-adds of an encoder over ``tokens`` tokens, forward and backward:
        three products of each token's ``embedding_dim + hidden_size`` inputs with the
        gates' units (the forward pass one of them), the work of
        :func:`~irdialog._threads.threads_for_work`."""
        gates = 4 if self._lstm else 1
        return 3 * tokens * gates * self.hidden_size * (self.embedding_dim + self.hidden_size)

    def _fitted_params(self):
        """The fitted encoder's parameters, by key."""
        return {key: getattr(self, attr) for attr, key in self._ENCODER.items()}

    def _all_params(self):
        """Every fitted parameter, by key: the encoder's, then the head's."""
        head = {key: getattr(self, attr) for attr, key in self._HEAD.items()}
        return {**self._fitted_params(), **head}

    def _keep_params(self, params):
        """Set the fitted attributes of the encoder and the head from ``params``."""
        for attr, key in {**self._ENCODER, **self._HEAD}.items():
            setattr(self, attr, params[key])

    # ------------------------------------------------------------------ training

    def _rows_and_generator(self, n, fit):
        """The (train rows, validation rows) of ``n`` examples and the generator of every
        further draw of the fit (initialisation, batches, dropout), seeded from the fit's
        random state after the split."""
        train_rows, val_rows = self._split_rows(n, fit)
        return train_rows, val_rows, np.random.default_rng(fit.seeds(1)[0])

    def _start_params(self, continuing, init):
        """The parameters training starts from: copies of the fitted ones when
        ``continuing``, else ``init()``."""
        if continuing:
            return {k: v.copy() for k, v in self._all_params().items()}
        return init()

    def _train(self, params, step_batches, validate, desc, fit, hogwild, restarts=None,
               frozen=None):  # fmt: skip
        """Adam over the epochs of a fit (``epochs``, or one when ``incremental``) of the
        batches ``step_batches(epoch)`` gives, each a quadruple ``(n, work, batch,
        arrays)``: its number of examples, its multiply-adds, a callable
        ``batch(params, grads) -> (loss, correct)`` that adds the batch's gradient to
        ``grads``, and the batch's arrays ``hogwild`` reads; ``validate(params,
        n_jobs)`` scores the parameters, encoding on ``n_jobs`` threads. The training core
        does the rest (divergence, validation, early stopping, interrupt, curves,
        restarts). Sets the fitted parameters to the kept ones (:meth:`_keep_params`).

        ``restarts``: ``(n_runs, init, train_key)`` to train ``n_runs`` runs, the first
        from ``params``, each later one from ``init()`` (fresh Adam moments), and keep the
        best (:meth:`TrainingMixin._train_epochs`); ``train_key(params, n_jobs)`` compares
        runs without validation. None: one run. ``frozen``: the rows of the word
        embeddings whose gradient is dropped before each step (Adam's step of a row whose
        gradient has always been zero is zero), or None.

        With ``n_jobs`` threads, an epoch whose work pays for several
        (:func:`~irdialog._threads.threads_for_work` of its batches' work, at most one
        thread per batch) runs ``hogwild(params, moments, arrays, schedule, n_steps,
        frozen) -> (loss, correct)``: the batches of the ``arrays`` on threads at once,
        each thread its share of the ``schedule`` (:func:`~irdialog._threads.share_out`
        of their work), stepping the shared parameters and moments without locks. An
        epoch too small for two threads runs ``batch`` after ``batch``, as with one
        thread."""
        n_runs, init, train_key = restarts or (1, None, None)

        def start_run(k):
            run_params = params if k == 0 else init()
            return self._adam_run(run_params, step_batches, validate, train_key, hogwild, frozen)

        kept = self._train_epochs(
            start_run,
            1 if fit.incremental else self.epochs,
            continuing=fit.continuing,
            desc=desc,
            advice=f"learning_rate (now {self.learning_rate}) or clip_norm",
            n_runs=n_runs,
            blas_threads=1,
        )
        self._keep_params(kept)

    def _fit_threads(self):
        """The most threads an epoch of the fit runs on: ``n_jobs``'s, at most numba's."""
        return min(n_threads(self.n_jobs), numba.config.NUMBA_NUM_THREADS)

    def _adam_run(self, params, step_batches, validate, train_key, hogwild, frozen=None):
        """The :class:`~irdialog.embed._training.Run` of Adam from ``params`` (see
        :meth:`_train`), with its own gradient buffers and moments."""
        params = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()}
        n_jobs = self.n_jobs
        grads = K.Grads(params)
        moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
        n_steps = 0
        accs = []

        def step(epoch):
            nonlocal n_steps
            loss, correct, seen, n_steps = self._adam_epoch(
                params, grads, moments, n_steps, step_batches(epoch), hogwild, frozen
            )
            accs.append(correct / max(seen, 1))
            return loss / max(seen, 1), {"acc": f"{accs[-1]:.3f}"}

        return Run(
            step,
            weights=lambda: params,
            snapshot=lambda: {k: v.copy() for k, v in params.items()},
            validate=None if validate is None else (lambda: validate(params, n_jobs)),
            curves={"train_accuracy_curve_": accs},
            train_key=None if train_key is None else (lambda kept: train_key(kept, n_jobs)),
        )

    def _adam_epoch(self, params, grads, moments, n_steps, batches, hogwild, frozen=None):
        """One epoch of Adam over ``batches`` (quadruples, see :meth:`_train`): each batch's
        gradient into ``grads`` (less that of the ``frozen`` rows of the word
        embeddings), then one step of ``params`` and their ``moments`` (both in place),
        the ``n_steps``-th and on; or, with threads the epoch's work pays for, the epoch
        on them by ``hogwild``. Returns the epoch's summed loss, its correct predictions,
        its examples and the steps taken so far."""
        if self._fit_threads() > 1:
            batches = list(batches)
            works = [b[1] for b in batches]
            k = min(threads_for_work(self.n_jobs, sum(works)), len(batches))
            if k > 1:
                schedule = share_out(works, k)
                with numba_threads(k):
                    loss, correct = hogwild(
                        params, moments, [b[3] for b in batches], schedule, n_steps, frozen
                    )
                seen = sum(b[0] for b in batches)
                return float(loss), int(correct), seen, n_steps + len(batches)
        loss, correct, seen = 0.0, 0, 0
        for n, _, batch, _ in batches:
            b_loss, b_correct = batch(params, grads)
            loss += b_loss
            correct += b_correct
            seen += n
            n_steps += 1
            if frozen is not None:
                grads.dense["Emb"][frozen] = 0.0
            K.apply_adam(params, grads, moments, self.learning_rate, self.clip_norm,
                         n_steps, *_ADAM)  # fmt: skip
        return loss, correct, seen, n_steps

    def _hogwild_settings(self, moments, frozen, n_steps):
        """What both Hogwild epochs take besides the batches: the moments as two dicts
        (first, second) of the parameters' keys, and the
        :class:`~irdialog.embed._recurrent_parallel_kernels.AdamSteps` of the epoch after
        ``n_steps`` steps, with the ``frozen`` rows (None: none)."""
        m = {k: mv[0] for k, mv in moments.items()}
        v = {k: mv[1] for k, mv in moments.items()}
        frozen = np.zeros(0, np.int64) if frozen is None else np.asarray(frozen, np.int64)
        max_norm = -1.0 if self.clip_norm is None else float(self.clip_norm)
        return m, v, AdamSteps(frozen, max_norm, float(self.learning_rate), *_ADAM, n_steps)


class RecurrentReader(GoldFitMixin, _RecurrentBase):
    """Recurrent reader-classifier: an LSTM (or RNN) reads the conversation, then the
    question, and its final state scores the candidate answers.

    The history turns (story sentences), oldest first, and then the query are read as one
    token sequence, with the word ``<query>`` between them so that the reader knows where
    the question starts. A candidate scores ``h . (sum of its words' output embeddings)``
    for the final state h, and training minimises the softmax cross-entropy of the gold
    answer over all candidates: weak supervision, on answers only (no supporting facts).
    For bAbI QA every answer (``"north,west"`` included) is one word, so this is the
    softmax over answer words of Weston et al. With ``bidirectional``, a second encoder
    reads the same tokens right to left, and h is both final states side by side. With
    ``query_both_ways``, a second encoder reads the history and then the query right to
    left, and h is both final states side by side. With ``reread_query``, the reader
    reads the query once more, right to left, after it.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set; None: the distinct responses seen in ``fit``.
    cell : {"lstm", "rnn"}, default="lstm"
        An LSTM cell or a plain tanh RNN cell.
    bidirectional : bool, default=False
        Read each sequence twice, left to right and right to left, with two encoders
        (their own ``Wx``, ``Wh``, b; the word embeddings shared), and score the
        candidates from both final states: the right-to-left one ends on the first
        tokens, which a left-to-right state holds only through the whole sequence.
    query_both_ways : bool, default=False
        Read the query both ways, with two encoders side by side: the first reads the
        history and the query left to right, the second (its own ``Wx``, ``Wh``, b; the
        word embeddings shared) the same history and then the query right to left, and
        the candidates are scored from both final states. One final state ends on each
        end of the question, so that what a question asks is near a final state in
        either word order (see ``reread_query``). Not with ``bidirectional`` or
        ``reread_query``.
    reread_query : bool, default=False
        After the query, read the query word and the query again, right to left, so that
        the query's first words are as near the final state as its last. A language that
        puts the verb last ends a question on its verb, far from the words that say what
        is asked (Hindi "पाठशाला से पहले julie कहाँ थी", "school before Julie where was",
        against "Where was Julie before the school"); read twice, a question in either
        order ends on both its ends. ``query_both_ways`` reads the two orders side by side
        instead of one after the other.
    hidden_size : int, default=100
        The state size of each direction.
    embedding_dim : int, default=50
    max_length : int or None, default=None
        Read only the last ``max_length`` tokens of a context (None: all; both directions
        read the same tokens).
    drop_punctuation : bool, default=True
        Drop tokens made only of punctuation, as :class:`~irdialog.embed.MemN2NRanker`.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (for scripts without spaces), or a callable from str to a list of str.
    learning_rate : float, default=0.005
        Adam's step size (on the loss summed over a mini-batch).
    epochs : int, default=50
    batch_size : int, default=32
    clip_norm : float or None, default=5.0
        The gradient of all parameters together is rescaled to at most this norm.
    init_std : float, default=0.1
        Standard deviation of the word embeddings' initialisation (the LSTM forget bias
        starts at 1).
    initial_embeddings : str, path-like or dict of str to array-like, default=None
        Pretrained word vectors for the encoder's word embeddings (``embeddings_``; the
        candidates' output embeddings ``output_embeddings_`` start from their draws): a
        word2vec text or binary, GloVe or fastText ``.vec`` file, or a dict ``{word:
        vector}``, read in ``fit`` by :func:`~irdialog.embed.load_word_vectors`. The words
        they hold start at their vectors, unscaled; the others from the draws of
        ``init_std``. The vectors must have ``embedding_dim`` values.
    freeze_embeddings : bool, default=False
        Hold the pretrained rows of ``embeddings_`` fixed (their gradient is dropped, and
        Adam then never moves them); the recurrent weights, the output embeddings and
        the other words learn.
    weight_init : {"uniform", "orthogonal"}, default="uniform"
        How ``Wx`` and ``Wh`` start: "uniform", both uniform in ``±1/sqrt(hidden_size)``
        (PyTorch's recurrent layers); "orthogonal", Lowe et al.'s (section 4.2): each gate's
        block of ``Wh`` a random orthogonal matrix, ``Wx`` uniform in ``±0.01``.
    word_dropout : float in [0, 1), default=0.0
        Word dropout (Iyyer et al. 2015), a regulariser for small training sets such as
        bAbI 1k: each epoch reads every history token (not the query's; with
        ``reread_query``, the query's first reading too) with probability
        ``1 - word_dropout``; the validation split and scoring read every token. With
        ``query_both_ways``, each encoder's copy of the history is dropped out on its own.
        0: no dropout, and no random numbers drawn for it.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the examples, drawn with ``random_state``
        (whole groups when ``groups`` is passed to ``fit``, else single examples), keep the
        weights of the best validation accuracy, stop after ``n_iter_no_change`` epochs
        without improvement.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=5
    warm_start : bool, default=False
        Let ``fit`` continue from the fitted weights instead of starting anew, for
        ``epochs`` more epochs (Adam's moments start afresh). The vocabulary and candidates
        of the first fit stay; ``cell``, ``bidirectional``, ``hidden_size``,
        ``embedding_dim`` and ``drop_punctuation`` must not change in between.
    n_init : int, default=1
        Random restarts, each from new random weights: the kept model has the best
        validation accuracy with early stopping (ties: lower validation loss), else the
        best accuracy on a clean pass over the training set. A run that stays on the
        plateau at chance, which a small training set sometimes gives, is then outvoted.
        A continued fit (``warm_start``, ``partial_fit``) is one run.
    n_jobs : int or None, default=None
        Threads that train together (None: 1; -1: every core; -2: all but one). An
        epoch's mini-batches run on the threads at once, in one numba parallel region
        (each thread its share of them, balanced by their estimated work, in the epoch's
        order), each computing its batch's gradient into
        its own buffers and taking its Adam step on the shared weights and moments without
        locks: Hogwild, as StarSpace and fastText train. Such a fit does not repeat bit for
        bit and lands within the spread of the seeds of ``n_jobs=1`` (the default). The
        validation split is encoded a block of rows per thread. An epoch takes only the
        threads its work pays for: one per 2**20 multiply-adds, estimated as 3 x G
        ``hidden_size`` x (``embedding_dim`` + ``hidden_size``) per token each encoder
        reads (G = 4 gates for the LSTM, 1 for the RNN) and 3 x the candidates x the
        state's width per example, at most ``n_jobs``, the batches and numba's thread
        count (``NUMBA_NUM_THREADS``); an epoch with less than twice that work runs on one
        thread, exactly as with ``n_jobs=1``. Scoring is on one thread.
    random_state : int, RandomState instance or None, default=None
        A given seed gives bit-for-bit the same model with ``n_jobs=1`` (one BLAS thread
        in training).
    verbose : bool, default=False
        A progress bar with the loss and accuracy.

    Attributes
    ----------
    candidates_ : ndarray of str
    vocabulary_ : irdialog.text.Vocabulary
        Words of the training contexts and the candidates, after the nil and query words.
    embeddings_, input_weights_, recurrent_weights_, bias_ : ndarray, float32
        The encoder: word embeddings (n_words, embedding_dim), ``Wx`` (embedding_dim,
        G hidden_size), ``Wh`` (hidden_size, G hidden_size) and b, G = 4 gates for the
        LSTM (in the order i, f, g, o) or 1; with two encoders, the first one.
    reverse_input_weights_, reverse_recurrent_weights_, reverse_bias_ : ndarray, float32
        With ``bidirectional`` or ``query_both_ways`` only: ``Wx``, ``Wh`` and b of the
        second encoder (right to left, or with the query right to left).
    output_embeddings_ : ndarray of shape (n_words, hidden_size or 2 hidden_size), float32
        The words' embeddings on the answer side (2 hidden_size with two encoders: the
        first one's part first).
    loss_curve_, train_accuracy_curve_ : list of float
        The mean training loss and accuracy of each epoch.
    validation_scores_ : list of float or None
        The validation accuracy of each epoch (``early_stopping``; None without).
    best_validation_score_ : float or None
        The best of the last fit.
    n_iter_ : int
        Epochs run (over every ``fit`` continued with ``warm_start`` and every
        ``partial_fit``).
    best_epoch_ : int
        The epoch (counted from 1) whose weights the model holds: the best validated one
        with early stopping, else the last.

    See Also
    --------
    DualEncoderRanker, irdialog.embed.MemN2NRanker

    References
    ----------
    Weston, Bordes, Chopra, Rush, van Merrienboer, Joulin & Mikolov (2015). Towards
    AI-Complete Question Answering: A Set of Prerequisite Toy Tasks. Section 5 (LSTM).
    Dodge et al. (2016). Evaluating Prerequisite Qualities for Learning End-to-End Dialog
    Systems. Section 3 (LSTM).
    Hochreiter & Schmidhuber (1997). Long Short-Term Memory.
    Iyyer, Manjunatha, Boyd-Graber & Daumé III (2015). Deep Unordered Composition Rivals
    Syntactic Methods for Text Classification (word dropout).

    Examples
    --------
    >>> from irdialog import Context, RecurrentReader, Turn
    >>> X = [Context((Turn("kb", "mary went to the kitchen"),), "where is mary"),
    ...      Context((Turn("kb", "mary went to the garden"),), "where is mary")] * 8
    >>> y = ["kitchen", "garden"] * 8
    >>> model = RecurrentReader(hidden_size=16, embedding_dim=8, epochs=30,
    ...                         random_state=0).fit(X, y)
    >>> model.predict(X[:2]).tolist()
    ['kitchen', 'garden']
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "bidirectional": ["boolean"],
        "query_both_ways": ["boolean"],
        "reread_query": ["boolean"],
        "word_dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
    }
    _warm_start_fixed = (*_RecurrentBase._warm_start_fixed, "bidirectional", "query_both_ways")
    _HEAD = {"output_embeddings_": "O"}
    # the second encoder's fitted attributes and parameters (bidirectional or
    # query_both_ways only)
    _REVERSE = {"reverse_input_weights_": "Wx_rev", "reverse_recurrent_weights_": "Wh_rev",
                "reverse_bias_": "b_rev"}  # fmt: skip

    def __init__(
        self,
        *,
        candidates=None,
        cell="lstm",
        bidirectional=False,
        query_both_ways=False,
        reread_query=False,
        hidden_size=100,
        embedding_dim=50,
        max_length=None,
        drop_punctuation=True,
        tokenizer="word",
        learning_rate=0.005,
        epochs=50,
        batch_size=32,
        clip_norm=5.0,
        init_std=0.1,
        weight_init="uniform",
        initial_embeddings=None,
        freeze_embeddings=False,
        word_dropout=0.0,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=5,
        warm_start=False,
        n_init=1,
        n_jobs=None,
        random_state=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.cell = cell
        self.bidirectional = bidirectional
        self.query_both_ways = query_both_ways
        self.reread_query = reread_query
        self.hidden_size = hidden_size
        self.embedding_dim = embedding_dim
        self.max_length = max_length
        self.drop_punctuation = drop_punctuation
        self.tokenizer = tokenizer
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.clip_norm = clip_norm
        self.init_std = init_std
        self.weight_init = weight_init
        self.initial_embeddings = initial_embeddings
        self.freeze_embeddings = freeze_embeddings
        self.word_dropout = word_dropout
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.n_init = n_init
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _context_sequences(self, X, analyzer, index, unknown="drop"):
        ptr, tok = super()._context_sequences(X, analyzer, index, unknown)
        if self.reread_query:
            ptr, tok = _reread_query(ptr, tok, index[QUERY_TOKEN])
        if self.query_both_ways:
            ptr, tok = _query_reversed_copy(ptr, tok, index[QUERY_TOKEN])
        return ptr, tok

    def _readings(self, params):
        return K.readings(params, query_reversed=self.query_both_ways)

    def _bags(self, texts, analyzer):
        """(indptr, word ids, weights) of the bags of words of texts."""
        ptr, tok = self._text_sequences(texts, analyzer, self.vocabulary_.index_)
        return ptr, tok, np.ones(len(tok), np.float32)

    def _fitted_params(self):
        params = super()._fitted_params()
        for attr, key in self._REVERSE.items():
            if hasattr(self, attr):
                params[key] = getattr(self, attr)
        return params

    def _keep_params(self, params):
        super()._keep_params(params)
        for attr, key in self._REVERSE.items():
            if key in params:
                setattr(self, attr, params[key])
            elif hasattr(self, attr):  # from an earlier bidirectional fit
                delattr(self, attr)

    def _fit(self, fit):
        X, y, continuing = fit.X, fit.y, fit.continuing
        if self.query_both_ways and (self.bidirectional or self.reread_query):
            raise ValueError(
                "RecurrentReader: query_both_ways=True reads the query both ways by itself; "
                "it does not combine with bidirectional=True or reread_query=True."
            )
        analyzer = self._analyzer()
        if not continuing:
            self.candidates_ = resolve_candidates(self.candidates, y)
        gold = LabelIndex(self.candidates_).encode(
            y, unknown="error", hint="RecurrentReader is trained to pick the gold answer."
        )
        if not continuing:
            texts = {t.text for ctx in X for t in ctx.history} | {ctx.query for ctx in X}
            texts |= set(self.candidates_)
            self.vocabulary_ = Vocabulary(extra_tokens=[QUERY_TOKEN]).fit(
                analyzer.tokens(t) for t in sorted(texts)
            )
            self._cands_ = self._bags(self.candidates_, analyzer)
        ptr, tok = self._context_sequences(X, analyzer, self.vocabulary_.index_)
        train_rows, val_rows, rng = self._rows_and_generator(len(X), fit)

        two_encoders = self.bidirectional or self.query_both_ways
        pretrained = embedding_start(self, self.vocabulary_.index_)

        def init():
            params = self._init_encoder(rng, len(self.vocabulary_), pretrained)
            V, width = len(self.vocabulary_), self.hidden_size * (1 + two_encoders)
            params["O"] = rng.normal(0.0, self.init_std, (V, width))
            if two_encoders:
                second = self._init_recurrent(rng)
                params.update({f"{k}_rev": v for k, v in second.items()})
            return params

        params = self._start_params(continuing, init)
        lstm, max_len, cands = self._lstm, self._max_len(), self._cands_
        reads = self._readings(params)
        droppable = _droppable(ptr, tok, self.vocabulary_.index_[QUERY_TOKEN])
        k_max = self._fit_threads()
        # the threads' gradient buffers of an epoch on threads (one numba parallel region)
        buffers = make_reader_threads(params, reads, k_max) if k_max > 1 else None
        reading_rows = reading_array(reads)
        # the candidates' scores and their gradients (of the states and of O)
        head_work = 3 * len(self.candidates_) * self.hidden_size * len(reads)

        def batches(epoch):
            e_ptr, e_tok = ptr, tok
            if self.word_dropout > 0:
                e_ptr, e_tok = _drop_words(ptr, tok, droppable, self.word_dropout, rng)
            lengths = np.diff(e_ptr)
            for rows in _buckets(train_rows, lengths, self.batch_size, rng):

                def run(params, grads, rows=rows):
                    return K.reader_batch(params, grads, lstm, e_ptr, e_tok, rows, max_len,
                                          cands, gold[rows], reads)  # fmt: skip

                tokens = self._tokens(lengths[rows]) * len(reads)
                work = self._encoder_work(tokens) + len(rows) * head_work
                yield len(rows), work, run, (e_ptr, e_tok, rows)

        def hogwild(params, moments, arrays, schedule, n_steps, frozen):
            e_ptr, e_tok = arrays[0][:2]
            bptr, rows = _ragged([a[2] for a in arrays], np.int64)
            epoch = ReaderEpoch(e_ptr, e_tok, bptr, rows, gold, *schedule)
            m, v, adam_steps = self._hogwild_settings(moments, frozen, n_steps)
            return reader_hogwild_epoch(
                reader_weights_record(params, reads), reading_rows, lstm, epoch, max_len, cands,
                buffers, reader_weights_record(m, reads), reader_weights_record(v, reads),
                adam_steps,
            )  # fmt: skip

        def evaluate(params, n_jobs, rows):
            """(accuracy, minus the mean loss) on ``rows``, every token read."""
            scores = self._scores(params, ptr, tok, rows, n_jobs)
            target = gold[rows]
            m = scores.max(axis=1, keepdims=True)
            logz = m[:, 0] + np.log(np.exp(scores - m).sum(axis=1))
            loss = float(np.mean(logz - scores[np.arange(len(target)), target]))
            return float(np.mean(scores.argmax(axis=1) == target)), -loss

        def validate(params, n_jobs):
            return evaluate(params, n_jobs, val_rows)

        def train_key(params, n_jobs):  # restarts without validation: a clean pass
            return evaluate(params, n_jobs, train_rows)

        n_runs = fit.runs(self.n_init)
        self._train(
            params,
            batches,
            validate if len(val_rows) else None,
            "RecurrentReader",
            fit,
            hogwild,
            restarts=(n_runs, init, train_key) if n_runs > 1 else None,
            frozen=self._frozen_rows(pretrained),
        )
        return self

    def _scores(self, params, ptr, tok, rows, n_jobs=None):
        h = self._encode_rows(params, ptr, tok, rows, n_jobs)
        C = K.candidate_matrix(params["O"].astype(np.float64), *self._cands_[:2],
                               self._cands_[2].astype(np.float64))  # fmt: skip
        return h @ C.T

    def decision_function(self, X) -> np.ndarray:
        """Scores of every candidate for each context.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        ptr, tok = self._context_sequences(X, self._analyzer(), self.vocabulary_.index_)
        return self._scores(self._all_params(), ptr, tok, np.arange(len(X)))

    def _score_pairs(self, X, responses) -> np.ndarray:
        check_is_fitted(self)
        X = check_contexts(X)
        analyzer = self._analyzer()
        ptr, tok = self._context_sequences(X, analyzer, self.vocabulary_.index_)
        h = self._encode_rows(self._fitted_params(), ptr, tok)
        rptr, rtok, rw = self._bags(responses, analyzer)
        R = K.candidate_matrix(self.output_embeddings_.astype(np.float64), rptr, rtok,
                               rw.astype(np.float64))  # fmt: skip
        return np.einsum("ij,ij->i", h, R)


class DualEncoderRanker(ChunkFitMixin, _RecurrentBase):
    """Dual encoder: one LSTM (or RNN) embeds the context and the response, and a pair
    scores ``sigma(c^T M r + b)``.

    The context is read as :class:`RecurrentReader` reads it (history turns, the word
    ``<query>``, the query); a response is read alone. Training minimises the binary
    cross-entropy of the pairs: each (context, true response) pair of ``fit`` is a
    positive and, at each epoch, ``n_negatives`` responses drawn at random among the
    other training responses make negatives (1:1 by default, as Lowe et al.), or drawn
    from a pool per context (hard negatives: mined by BM25, or an answer-selection
    corpus's wrong answers); or, with ``labels``, the (context, response, label) rows are
    taken as they are.
    ``decision_function`` and ``rank_candidates`` give the logit ``c^T M r + b``, which
    ranks as the probability does.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set; None: the distinct true responses seen in ``fit``.
    cell : {"lstm", "rnn"}, default="lstm"
    hidden_size : int, default=200
        Lowe et al. use one layer of 200 units.
    embedding_dim : int, default=100
    max_length : int or None, default=160
        Read only the last ``max_length`` tokens of a context or response (Lowe et al.
        truncate contexts to 160 words).
    drop_punctuation : bool, default=True
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (for scripts without spaces), or a callable from str to a list of str.
    n_negatives : int, default=1
        Random negatives per positive pair and epoch (without ``labels``).
    negatives : {"random", "bm25"} or callable, default="random"
        Where the negatives are drawn from. ``"random"``: the other true responses of the
        fit, uniformly. ``"bm25"``: each context's pool of the ``MINED_NEGATIVES`` (100)
        true responses of highest BM25 score for the tokens it reads (hard negatives:
        they share its words), mined once per fit over the model's tokens. A callable
        ``negatives(X, y)``: for each context, the responses (str) its negatives are
        drawn from; the ``negative_lists`` argument of :meth:`fit` gives such pools
        directly. A context whose pool is empty draws from the true responses. Pools do
        not go with ``labels``.
    learning_rate : float, default=0.001
        Adam's step size.
    epochs : int, default=10
    batch_size : int, default=32
        Pairs per mini-batch.
    clip_norm : float or None, default=10.0
    init_std : float, default=0.1
    weight_init : {"uniform", "orthogonal"}, default="uniform"
        See :class:`RecurrentReader`; Lowe et al. train their RNN from "orthogonal".
    initial_embeddings : str, path-like or dict of str to array-like, default=None
        Pretrained word vectors of the encoder (which reads contexts and responses alike),
        as in :class:`RecurrentReader`; read in ``fit`` and ``fit_chunks``.
    freeze_embeddings : bool, default=False
        As in :class:`RecurrentReader` (not on a Dask cluster).
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the pairs, drawn with ``random_state`` (whole
        groups when ``groups`` is passed to ``fit``, else single pairs), and keep the
        weights of the best pair accuracy (on fixed negatives).
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=5
    warm_start : bool, default=False
        As in :class:`RecurrentReader`.
    n_jobs : int or None, default=None
        Threads that train together (None: one; -1: every core): an epoch's mini-batches
        of pairs run on the threads at once, Hogwild, as :class:`RecurrentReader`'s; the
        validation pairs are encoded a block per thread. Such a fit does not repeat bit
        for bit and lands within the spread of the seeds of ``n_jobs=1``. An epoch takes
        only the threads its work pays for, as :class:`RecurrentReader`'s (per pair, the
        tokens of both texts and 3 x ``hidden_size``**2 for the match); an epoch with less
        than twice that work runs on one thread, exactly as with ``n_jobs=1``.
    random_state : int, RandomState instance or None, default=None
    verbose : bool, default=False

    Attributes
    ----------
    candidates_ : ndarray of str
    vocabulary_ : irdialog.text.Vocabulary
    embeddings_, input_weights_, recurrent_weights_, bias_ : ndarray, float32
        The encoder (see :class:`RecurrentReader`).
    match_matrix_ : ndarray of shape (hidden_size, hidden_size), float32
        M.
    match_bias_ : ndarray of shape (1,), float32
        b.
    loss_curve_, train_accuracy_curve_, validation_scores_, best_validation_score_
        The fitted curves, as :class:`RecurrentReader`'s (accuracy: of the pairs' labels).
    n_iter_, best_epoch_ : int
        As :class:`RecurrentReader`'s.

    See Also
    --------
    RecurrentReader, irdialog.TfidfRanker

    References
    ----------
    Lowe, Pow, Serban & Pineau (2015). The Ubuntu Dialogue Corpus: A Large Dataset for
    Research in Unstructured Multi-Turn Dialogue Systems. SIGDIAL. Sections 4.2-4.3.

    Examples
    --------
    >>> from irdialog import DualEncoderRanker
    >>> X = ["my usb stick does not mount", "no sound after the update"] * 8
    >>> y = ["sudo mount the usb stick", "restart pulseaudio for sound"] * 8
    >>> model = DualEncoderRanker(hidden_size=16, embedding_dim=8, epochs=40,
    ...                           learning_rate=0.01, random_state=0).fit(X, y)
    >>> model.predict(X[:2]).tolist()
    ['sudo mount the usb stick', 'restart pulseaudio for sound']
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "n_negatives": [Interval(numbers.Integral, 1, None, closed="left")],
        "negatives": [StrOptions({"random", "bm25"}), callable],
    }
    _HEAD = {"match_matrix_": "M", "match_bias_": "bias"}

    def __init__(
        self,
        *,
        candidates=None,
        cell="lstm",
        hidden_size=200,
        embedding_dim=100,
        max_length=160,
        drop_punctuation=True,
        tokenizer="word",
        n_negatives=1,
        negatives="random",
        learning_rate=0.001,
        epochs=10,
        batch_size=32,
        clip_norm=10.0,
        init_std=0.1,
        weight_init="uniform",
        initial_embeddings=None,
        freeze_embeddings=False,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=5,
        warm_start=False,
        n_jobs=None,
        random_state=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.cell = cell
        self.hidden_size = hidden_size
        self.embedding_dim = embedding_dim
        self.max_length = max_length
        self.drop_punctuation = drop_punctuation
        self.tokenizer = tokenizer
        self.n_negatives = n_negatives
        self.negatives = negatives
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.clip_norm = clip_norm
        self.init_std = init_std
        self.weight_init = weight_init
        self.initial_embeddings = initial_embeddings
        self.freeze_embeddings = freeze_embeddings
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None, labels=None, *, negative_lists=None):
        """Train on (context, response) pairs.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            The response of each context.
        groups : array-like of shape (n_samples,), default=None
            Dialog ids: with early stopping, the validation split takes whole groups.
        labels : array-like of 0/1 of shape (n_samples,), default=None
            None: every pair is a true one, and negatives are sampled. Given: the flag of
            each (context, response) row, taken as it is (the Ubuntu training file).
        negative_lists : sequence of sequences of str, default=None
            The responses each context draws its negatives from (an answer-selection
            pool less its right answers; the true response is skipped if present), in
            place of the pools of ``negatives``. Responses outside the true ones are
            drawn too (their words join the vocabulary), never scored as candidates.
            With early stopping, the validation pairs draw from their pools too.

        Returns
        -------
        self
        """
        check_negative_lists(self, negative_lists)
        return self._fit_path(X, y, groups=groups, labels=labels, negative_lists=negative_lists)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, labels=None, *, negative_lists=None):
        """One epoch over (context, response) pairs, from the fitted weights (or from a new
        model, whose vocabulary and candidates are then those of this first call). The
        negatives are drawn among the responses of this call: pass several distinct ones
        (or ``labels``). No validation, no early stopping.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
        labels : array-like of 0/1 of shape (n_samples,), default=None
            As in :meth:`fit`.
        negative_lists : sequence of sequences of str, default=None
            As in :meth:`fit`.

        Returns
        -------
        self
        """
        check_negative_lists(self, negative_lists)
        return self._fit_path(X, y, incremental=True, labels=labels, negative_lists=negative_lists)

    def _fit(self, fit, labels=None, negative_lists=None):
        X, y, continuing = fit.X, fit.y, fit.continuing
        if callable(self.negatives):
            negative_lists = self.negatives(X, y)
        if labels is not None:
            if negative_lists is not None or self.negatives != "random":
                raise ValueError(
                    "labels gives the negatives of the fit as (context, response, 0) rows; "
                    "negative pools (negative_lists or negatives="
                    f"{self.negatives!r}) draw them: pass one or the other."
                )
            labels = np.asarray(labels)
            if labels.shape != (len(X),) or not np.isin(labels, (0, 1)).all():
                raise ValueError(
                    f"labels must hold one 0 or 1 per context ({len(X)}), got "
                    f"{labels.shape if labels.shape != (len(X),) else np.unique(labels)}."
                )
            labels = labels.astype(np.int64)
        # Response table: the true responses, then the pools' responses outside them
        # (drawn from their pools only).
        table = LabelIndex()
        codes = table.encode(y, unknown="extend")
        n_true = len(table.labels_)
        pools = None if negative_lists is None else encode_pools(negative_lists, table, codes)
        analyzer = self._analyzer()
        if not continuing:
            texts = {t.text for ctx in X for t in ctx.history} | {ctx.query for ctx in X}
            texts |= set(table.labels_)
            if self.candidates is not None:
                texts |= set(resolve_candidates(self.candidates, y))
            self.vocabulary_ = Vocabulary(extra_tokens=[QUERY_TOKEN]).fit(
                analyzer.tokens(t) for t in sorted(texts)
            )
        index = self.vocabulary_.index_
        cptr, ctok = self._context_sequences(X, analyzer, index)
        rptr, rtok = self._text_sequences(table.labels_, analyzer, index)
        if not continuing:
            true = y if labels is None else y[labels == 1]
            self.candidates_ = resolve_candidates(self.candidates, true)
        return self._fit_sequences(
            cptr, ctok, rptr, rtok, codes, labels, fit, pools=pools, n_true=n_true
        )

    def _chunk_encoder(self):
        """``fit_chunks``'s encoding (:class:`~irdialog.embed._training.ChunkFitMixin`):
        contexts and true responses as token ids in order of first sight, mapped at the
        end onto the vocabulary :meth:`fit` builds (and the pools of ``negatives="bm25"``
        mined as :meth:`fit` mines them). A callable ``negatives`` needs the contexts:
        fit only."""
        check_chunk_negatives(self)
        words: dict[str, int] = {QUERY_TOKEN: 0}  # provisional ids, in order of first sight
        table = LabelIndex()
        response_ids: dict[int, list[int]] = {}

        def encode(X, y):
            return self._encode_chunk(X, y, words, table, response_ids)

        def finish(cptr, ids, codes, fit):
            self._chunk_vocabulary(words, table.labels_)
            index = self.vocabulary_.index_
            remap = np.array([index[w] for w in words], dtype=np.int32)
            rptr, rtok = _ragged([remap[response_ids[g]] for g in range(len(table))])
            return self._fit_sequences(cptr, remap[ids], rptr, rtok, codes, None, fit)

        return encode, finish

    def _encode_chunk(self, X, y, words, table, response_ids):
        """A chunk's contexts as (indptr, ids) of provisional word ids (``words``, new
        words added in order of first sight) and its responses as codes of ``table``;
        the first time a response is seen, its provisional ids go to ``response_ids``."""
        analyzer = self._analyzer()
        indptr, ids = self._context_sequences(X, analyzer, words, unknown="add")
        codes = table.encode(y, unknown="extend")
        for g, response in zip(codes.tolist(), y):
            if g not in response_ids:
                response_ids[g] = [words.setdefault(t, len(words))
                                   for t in analyzer.tokens(response)]  # fmt: skip
        return indptr, ids, codes

    def _chunk_vocabulary(self, words, responses):
        """Set the vocabulary and candidates of ``fit_chunks`` from the chunks' ``words``
        in order of first sight and their distinct true ``responses``."""
        fixed = None if self.candidates is None else resolve_candidates(self.candidates, ())
        extra = [] if fixed is None else [self._analyzer().tokens(c) for c in fixed]
        self.vocabulary_ = Vocabulary(extra_tokens=[QUERY_TOKEN]).fit([list(words), *extra])
        self.candidates_ = np.asarray(responses, dtype=object) if fixed is None else fixed

    def _fit_sequences(self, cptr, ctok, rptr, rtok, codes, labels, fit, pools=None, n_true=None):
        """Train on contexts (cptr, ctok) whose responses are the rows ``codes`` of the
        response table (rptr, rtok), of which the first ``n_true`` (None: all) are true
        responses, drawing negatives from the contexts' ``pools`` (None: from the true
        responses, or mined with ``negatives="bm25"``)."""
        pairs = _pair_table(cptr, ctok, rptr, rtok, codes, labels, pools, n_true)
        if pools is None and self.negatives == "bm25":
            pairs["pools"] = _mined_pools(pairs, self._max_len())
        train_rows, val_rows, rng = self._rows_and_generator(pairs["n_ctx"], fit)
        pretrained = embedding_start(self, self.vocabulary_.index_)
        params = self._start_params(fit.continuing, lambda: self._init_dual(rng, pretrained))
        val_pairs = self._pairs(pairs, val_rows, np.random.default_rng(0))
        ptr, tok = pairs["ptr"], pairs["tok"]

        def batches(epoch):
            return self._epoch_batches(pairs, train_rows, rng)

        def validate(params, n_jobs):
            ctx, resp, flags = val_pairs
            s = self._pair_logits(params, ptr, tok, ctx, resp, n_jobs)
            p = 1.0 / (1.0 + np.exp(-s))
            loss = -np.mean(np.where(flags == 1, np.log(p + 1e-12), np.log(1 - p + 1e-12)))
            return float(np.mean((s > 0) == (flags == 1))), -float(loss)

        validate = validate if len(val_rows) else None
        frozen = self._frozen_rows(pretrained)
        hogwild = self._hogwild(pairs, params)
        self._train(params, batches, validate, "DualEncoder", fit, hogwild, frozen=frozen)
        return self

    def _init_dual(self, rng, pretrained):
        """The initial parameters, drawn from ``rng``: the encoder's (with the ``pretrained``
        (rows, vectors) of ``initial_embeddings``, or None), then M = I, b = 0."""
        params = self._init_encoder(rng, len(self.vocabulary_), pretrained)
        params["M"] = np.eye(self.hidden_size)
        params["bias"] = np.zeros(1)
        return params

    def _pairs(self, pairs, rows, rng):
        """The (context rows, response rows, flags) of an epoch over the contexts ``rows``
        of the :func:`_pair_table` ``pairs``: the given labels, else each true pair and
        ``n_negatives`` negatives drawn from ``rng`` among the true responses, or, for a
        context whose pool is not empty, among its pool."""
        ctx_resp = pairs["n_ctx"] + pairs["codes"]
        if pairs["labels"] is not None:
            return rows, ctx_resp[rows], pairs["labels"][rows]
        n_ctx, n_true, codes = pairs["n_ctx"], pairs["n_true"], pairs["codes"]
        pools = pairs["pools"]
        if pools is not None:
            start = pools.indptr[rows]
            size = pools.indptr[rows + 1] - start
            pooled = np.flatnonzero(size)

        def negatives():
            # a response other than the true one (when there is another)
            draw = rng.integers(0, max(n_true - 1, 1), len(rows))
            if n_true > 1:
                draw += draw >= codes[rows]
            if pools is not None and len(pooled):  # no draw more without a pool: as "random"
                pick = start[pooled] + rng.integers(0, size[pooled])
                draw[pooled] = pools.indices[pick]
            return n_ctx + draw

        ctx = np.concatenate([rows] * (1 + self.n_negatives))
        resp = np.concatenate([ctx_resp[rows]] + [negatives() for _ in range(self.n_negatives)])
        flags = np.concatenate(
            [np.ones(len(rows), np.int64)] + [np.zeros(len(rows), np.int64)] * self.n_negatives
        )
        return ctx, resp, flags

    def _hogwild(self, pairs, params):
        """The ``hogwild`` epoch of :meth:`_train` over the :func:`_pair_table` ``pairs``,
        with a thread's gradient buffers for weights of the shapes of ``params``; None
        when the fit has one thread."""
        k_max = self._fit_threads()
        if k_max < 2:
            return None
        buffers = make_dual_threads(params, k_max)
        ptr, tok = pairs["ptr"], pairs["tok"]
        lstm, max_len = self._lstm, self._max_len()

        def hogwild(params, moments, arrays, schedule, n_steps, frozen):
            bptr, ctx = _ragged([a[0] for a in arrays], np.int64)
            resp = np.concatenate([a[1] for a in arrays]).astype(np.int64, copy=False)
            flags = np.concatenate([a[2] for a in arrays]).astype(np.int64, copy=False)
            epoch = DualEpoch(ptr, tok, bptr, ctx, resp, flags, *schedule)
            m, v, adam_steps = self._hogwild_settings(moments, frozen, n_steps)
            return dual_hogwild_epoch(
                weights_record(params), lstm, epoch, max_len, buffers, weights_record(m),
                weights_record(v), adam_steps,
            )  # fmt: skip

        return hogwild

    def _epoch_batches(self, pairs, rows, rng):
        """The batches (quadruples of :meth:`_train`) of one epoch over the contexts
        ``rows`` of the :func:`_pair_table` ``pairs``, the pairs and their order drawn
        from ``rng`` when the first batch is asked for."""
        ptr, tok, lengths = pairs["ptr"], pairs["tok"], pairs["lengths"]
        lstm, max_len = self._lstm, self._max_len()
        # the pairs' scores and their gradients (of both states and of M)
        head_work = 3 * self.hidden_size**2
        ctx, resp, flags = self._pairs(pairs, rows, rng)
        for b in _buckets(np.arange(len(ctx)), lengths[ctx], self.batch_size, rng):

            def run(params, grads, b=b):
                return K.dual_batch(
                    params, grads, lstm, ptr, tok, ctx[b], resp[b], flags[b], max_len
                )

            tokens = self._tokens(lengths[ctx[b]]) + self._tokens(lengths[resp[b]])
            work = self._encoder_work(tokens) + len(b) * head_work
            yield len(b), work, run, (ctx[b], resp[b], flags[b])

    def _pair_logits(self, params, ptr, tok, ctx_rows, resp_rows, n_jobs=None):
        hc = self._encode_rows(params, ptr, tok, ctx_rows, n_jobs)
        hr = self._encode_rows(params, ptr, tok, resp_rows, n_jobs)
        M = params["M"].astype(np.float64)
        return np.einsum("ij,ij->i", hc @ M, hr) + float(params["bias"][0])

    def _contexts(self, X, analyzer):
        ptr, tok = self._context_sequences(X, analyzer, self.vocabulary_.index_)
        return self._encode_rows(self._fitted_params(), ptr, tok)

    def _responses(self, texts, analyzer):
        ptr, tok = self._text_sequences(texts, analyzer, self.vocabulary_.index_)
        return self._encode_rows(self._fitted_params(), ptr, tok.astype(np.int32))

    def decision_function(self, X) -> np.ndarray:
        """The logit ``c^T M r + b`` of every candidate for each context.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        analyzer = self._analyzer()
        hc = self._contexts(X, analyzer)
        hr = self._responses(self.candidates_, analyzer)
        return hc @ self.match_matrix_.astype(np.float64) @ hr.T + float(self.match_bias_[0])

    def _score_pairs(self, X, responses) -> np.ndarray:
        check_is_fitted(self)
        X = check_contexts(X)
        analyzer = self._analyzer()
        hc = self._contexts(X, analyzer)
        hr = self._responses(responses, analyzer)
        M = self.match_matrix_.astype(np.float64)
        return np.einsum("ij,ij->i", hc @ M, hr) + float(self.match_bias_[0])
