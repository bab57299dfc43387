"""Recurrent models' training on several threads, in one numba parallel region per epoch,
and the states of many sequences the same way.

:func:`dual_hogwild_epoch` and :func:`reader_hogwild_epoch` run an epoch's mini-batches on
``k`` threads, each thread taking its share of the batches (balanced by their estimated
work, :func:`~irdialog._threads.share_out`) in the epoch's order. Each thread
computes its batch's gradient (what :func:`~irdialog.embed._recurrent_kernels.dual_batch`
and :func:`~irdialog.embed._recurrent_kernels.reader_batch` compute) into its own buffers
(:class:`DualGrads`, :class:`ReaderGrads`, stacked on a first axis), then takes the Adam
step of :func:`~irdialog.embed._recurrent_kernels.apply_adam` on the shared weights and
moments at once, without locks: Hogwild, as StarSpace and fastText train. No batch is
handed over from Python, and no thread waits for another. On one thread the batches are
stepped one after another, as the serial fit steps them, which the tests hold to the
numpy references (:func:`irdialog.embed._reference.dual_loss_grad`, ``reader_loss_grad``
and ``adam_step``).

:func:`encode_parts` computes the final states of
:func:`~irdialog.embed._recurrent_kernels.encode_states`, a block of sequences per thread.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._optim import AdamSettings, adam, adam_rows, clip_scale, rows_squared_norm, squared_norm
from ._recurrent_kernels import (
    EncoderCache,
    EncoderGrads,
    Packed,
    dual_loss_grad,
    encoder_backward,
    encoder_forward,
    pack_batch,
    reader_loss_grad,
)

DualWeights = namedtuple("DualWeights", "Emb Wx Wh b M bias")
DualWeights.__doc__ = """The dual encoder's weights: the word embeddings, the encoder's
``Wx``, ``Wh`` and ``b``, and the match matrix ``M`` and ``bias``."""

DualGrads = namedtuple("DualGrads", "dWx dWh db dM dbias dEmb mark touched")
DualGrads.__doc__ = """The gradient buffers of the dual encoder's weights (``Wx``, ``Wh``,
``b``, ``M``, ``bias``, ``Emb``), and the embedding rows touched (``mark[v]`` is 1 once row
v is listed in ``touched``), stacked on a first axis: a thread's of
:func:`dual_hogwild_epoch` each."""

# The records hold arrays only: numba passes a record's arrays one by one into a parallel
# loop, and refuses a tuple among them. A reader of one reading repeats its encoder's
# weights as the second's, which it never reads, and has empty buffers for them.
Encoders = namedtuple("Encoders", "Emb Wx Wh b Wx2 Wh2 b2")
Encoders.__doc__ = """The word embeddings and ``Wx``, ``Wh`` and ``b`` of the encoder of
each of one or two readings (:data:`~irdialog.embed._recurrent_kernels.Reading`), the
second's those of the first with one reading: what :func:`encode_parts` reads."""

ReaderWeights = namedtuple("ReaderWeights", "Emb Wx Wh b Wx2 Wh2 b2 O")
ReaderWeights.__doc__ = """The reader's weights: the word embeddings, ``Wx``, ``Wh`` and
``b`` of the encoder of each reading (:data:`~irdialog.embed._recurrent_kernels.Reading`,
the second's those of the first with one reading) and the output embeddings ``O``."""

ReaderGrads = namedtuple("ReaderGrads", "dWx dWh db dWx2 dWh2 db2 dO dEmb mark touched")
ReaderGrads.__doc__ = """The gradient buffers of the reader's weights (the first encoder's,
the second's, empty with one reading, ``O`` and ``Emb``), and the embedding rows touched,
as :class:`DualGrads`'s, stacked on a first axis: a thread's of :func:`reader_hogwild_epoch`
each."""


DualEpoch = namedtuple("DualEpoch", "ptr tok bptr ctx resp flags tptr mine")
DualEpoch.__doc__ = """The batches of an epoch of :func:`dual_hogwild_epoch`: batch b is the
pairs ``bptr[b]:bptr[b + 1]`` of the contexts ``ctx``, responses ``resp`` (rows of the
ragged token array (ptr, tok)) and labels ``flags``; thread t takes the batches
``mine[tptr[t]:tptr[t + 1]]`` in turn (:func:`~irdialog._threads.share_out`)."""

ReaderEpoch = namedtuple("ReaderEpoch", "ptr tok bptr rows gold tptr mine")
ReaderEpoch.__doc__ = """The batches of an epoch of :func:`reader_hogwild_epoch`: batch b is
the sequences ``rows[bptr[b]:bptr[b + 1]]`` of the ragged token array (ptr, tok), whose
gold candidates are ``gold[rows]``; thread t takes the batches ``mine[tptr[t]:tptr[t +
1]]`` in turn."""

AdamSteps = namedtuple("AdamSteps", "frozen max_norm lr beta1 beta2 eps step")
AdamSteps.__doc__ = """The Adam steps of a Hogwild epoch, those of
:func:`~irdialog.embed._recurrent_kernels.apply_adam`: the gradient of the embedding rows
``frozen`` dropped, global-norm clipping at ``max_norm`` (<= 0: none), the rate and decays,
and ``step``, the steps before the epoch (batch b is step ``step + b + 1``). Flat, not
holding an :class:`~irdialog.embed._optim.AdamSettings`: numba takes no record inside a
record into a parallel loop, so each thread builds its ``AdamSettings``."""


def weights_record(params):
    """The :class:`DualWeights` of the dual encoder's ``params`` (a dict)."""
    return DualWeights(*(params[key] for key in DualWeights._fields))


def _zeros(params, keys, n_threads, dtype):
    """Zero buffers of ``n_threads`` threads (stacked on a first axis) of the shapes of
    ``params[key]`` for each of ``keys``."""
    return [np.zeros((n_threads, *np.shape(params[key])), dtype) for key in keys]


def _row_marks(params, n_threads):
    """Zero ``mark`` and ``touched`` of ``n_threads`` threads for the embedding rows of
    ``params``."""
    n_words = np.shape(params["Emb"])[0]
    return np.zeros((n_threads, n_words), np.uint8), np.zeros((n_threads, n_words), np.int64)


def make_dual_threads(params, n_threads, dtype=np.float32):
    """Zero :class:`DualGrads` of ``n_threads`` threads for weights of the shapes of
    ``params`` and of the float type ``dtype``."""
    keys = ("Wx", "Wh", "b", "M", "bias", "Emb")
    return DualGrads(*_zeros(params, keys, n_threads, dtype), *_row_marks(params, n_threads))


def encoders_record(params, readings):
    """The :class:`Encoders` of the ``readings``
    (:func:`~irdialog.embed._recurrent_kernels.readings`) of ``params`` (a dict)."""
    keys = (*readings[0].keys, *readings[-1].keys)
    return Encoders(params["Emb"], *(params[k] for k in keys))


def reader_weights_record(params, readings):
    """The :class:`ReaderWeights` of the reader's ``params`` (a dict) of ``readings``
    (:func:`~irdialog.embed._recurrent_kernels.readings`)."""
    return ReaderWeights(*encoders_record(params, readings), params["O"])


def make_reader_threads(params, readings, n_threads, dtype=np.float32):
    """Zero :class:`ReaderGrads` of ``n_threads`` threads for the reader of ``readings``
    with weights of the shapes of ``params`` and of the float type ``dtype``."""
    first = _zeros(params, readings[0].keys, n_threads, dtype)
    if len(readings) > 1:
        second = _zeros(params, readings[1].keys, n_threads, dtype)
    else:
        second = [np.zeros((n_threads,) + (0,) * (a.ndim - 1), dtype) for a in first]
    rest = _zeros(params, ("O", "Emb"), n_threads, dtype)
    return ReaderGrads(*first, *second, *rest, *_row_marks(params, n_threads))


def reading_array(readings):
    """The copy of the sequences and the direction (1: right to left) of each reading
    (:data:`~irdialog.embed._recurrent_kernels.Reading`), as the kernels take them: int64
    (n_readings, 2)."""
    return np.array([[r.copy, r.reverse] for r in readings], np.int64).reshape(-1, 2)


# --------------------------------------------------------------------------- shared


@njit(cache=True, nogil=True)
def _read(Emb, encoder, lstm, ptr, tok, rows, max_len, reverse):
    """The encoder ``encoder = (Wx, Wh, b)`` over the sequences ``rows``: (final states
    in sorted order, the sort order, the :class:`Packed` batch, the
    :class:`EncoderCache`), as :func:`~irdialog.embed._recurrent_kernels.encode_batch`."""
    Wx, Wh, b = encoder
    order, nact, off, ptok = pack_batch(ptr, tok, rows, max_len, reverse)
    packed = Packed(nact, off, ptok)
    h, X, Hp, Cp, A, Cn = encoder_forward(Emb, Wx, Wh, b, lstm, packed, rows.shape[0])
    return h, order, packed, EncoderCache(X, Hp, Cp, A, Cn)


@njit(cache=True, nogil=True)
def _encoder(weights, r):
    """``(Wx, Wh, b)`` of the encoder of reading ``r`` (0 or 1) of ``weights``
    (:class:`Encoders` or :class:`ReaderWeights`)."""
    if r == 0:
        return weights.Wx, weights.Wh, weights.b
    return weights.Wx2, weights.Wh2, weights.b2


@njit(cache=True, nogil=True, error_model="numpy")
def _adam_flat(x, g, m, v, scale, opt, step):
    """:func:`~irdialog.embed._optim.adam` on the array ``x`` with the gradient ``g``
    (of any shape; nothing when ``g`` is empty: a reader's unused second encoder), then
    ``g`` zeroed."""
    if g.size == 0:
        return
    gf = g.reshape(g.size)
    adam(x.reshape(x.size), gf, m.reshape(m.size), v.reshape(v.size), scale, opt, step)
    gf[:] = 0.0


@njit(cache=True, nogil=True)
def _thread_step(w, g, m, v, t, n_touched, mats, vecs, frozen, max_norm, opt, step):
    """Thread ``t``'s step of :func:`~irdialog.embed._recurrent_kernels.apply_adam`: the
    ``frozen`` embedding rows' gradient dropped, one clipping factor for the touched rows
    of ``g.dEmb[t]`` (``g.touched[t, :n_touched]``) and every dense gradient, lazy Adam on
    those rows of ``w.Emb`` (moments ``m.Emb``, ``v.Emb``; their gradient and marks
    zeroed), and Adam on each (weights, thread's gradient, m, v) of the matrices ``mats``
    and vectors ``vecs`` (their gradients zeroed)."""
    dense_sq = 0.0
    for item in mats:
        dense_sq += squared_norm(item[1])
    for item in vecs:
        dense_sq += squared_norm(item[1])
    dEmb, touched = g.dEmb[t], g.touched[t, :n_touched]
    for r in frozen:
        dEmb[r, :] = 0.0
    scale = clip_scale(rows_squared_norm(dEmb, touched) + dense_sq, max_norm)
    adam_rows(w.Emb, dEmb, m.Emb, v.Emb, touched, scale, opt, step)
    for r in touched:
        g.mark[t, r] = 0
    for x, d, mx, vx in mats:
        _adam_flat(x, d, mx, vx, scale, opt, step)
    for x, d, mx, vx in vecs:
        _adam_flat(x, d, mx, vx, scale, opt, step)


# --------------------------------------------------------------------------- dual encoder


@njit(cache=True, nogil=True)
def _dual_batch(weights, lstm, ptr, tok, ctx, resp, flags, max_len, grads, t):
    """The loss, correct decisions and gradient of
    :func:`~irdialog.embed._recurrent_kernels.dual_batch` on the pairs (``ctx[i]``,
    ``resp[i]``) with the labels ``flags``, into thread ``t``'s buffers of ``grads``.
    Returns (loss, correct, touched rows)."""
    Emb, Wx, Wh, b, M, bias = weights
    B = ctx.shape[0]
    rows = np.empty(2 * B, np.int64)
    rows[:B] = ctx
    rows[B:] = resp
    h, order, packed, cache = _read(Emb, (Wx, Wh, b), lstm, ptr, tok, rows, max_len, False)
    out = np.empty_like(h)
    for j in range(2 * B):
        out[order[j]] = h[j]
    loss, correct, dhc, dhr, dM, dbias = dual_loss_grad(
        out[:B].copy(), out[B:].copy(), M, bias, flags.copy()
    )
    grads.dM[t] += dM
    grads.dbias[t] += dbias
    dh = np.empty_like(h)  # in the sorted order of the packed batch
    for j in range(2 * B):
        i = order[j]
        dh[j] = dhc[i] if i < B else dhr[i - B]
    enc = EncoderGrads(
        grads.dWx[t], grads.dWh[t], grads.db[t], grads.dEmb[t], grads.mark[t], grads.touched[t]
    )
    n = encoder_backward(Wx, Wh, lstm, packed, cache, dh, enc, 0)
    return loss, correct, n


@njit(cache=True, nogil=True)
def _dual_step(w, g, m, v, t, n_touched, adam_steps, step):
    """Thread ``t``'s Adam step ``step`` (:func:`_thread_step`, the :class:`AdamSteps`
    ``adam_steps``) of the :class:`DualWeights` ``w`` (moments ``m``, ``v``, records of the
    same fields) from its buffers of the :class:`DualGrads` ``g``."""
    a = adam_steps
    opt = AdamSettings(a.lr, a.beta1, a.beta2, a.eps)
    mats = ((w.Wx, g.dWx[t], m.Wx, v.Wx), (w.Wh, g.dWh[t], m.Wh, v.Wh), (w.M, g.dM[t], m.M, v.M))
    vecs = ((w.b, g.db[t], m.b, v.b), (w.bias, g.dbias[t], m.bias, v.bias))
    _thread_step(w, g, m, v, t, n_touched, mats, vecs, a.frozen, a.max_norm, opt, step)


@njit(cache=True, nogil=True)
def _dual_thread(weights, lstm, epoch, max_len, grads, m, v, t, adam_steps):
    """Thread ``t``'s batches of :func:`dual_hogwild_epoch`. Returns (loss, correct)."""
    e = epoch
    loss = 0.0
    correct = 0
    for i in range(e.tptr[t], e.tptr[t + 1]):
        bi = e.mine[i]
        lo, hi = e.bptr[bi], e.bptr[bi + 1]
        b_loss, b_correct, n = _dual_batch(
            weights, lstm, e.ptr, e.tok, e.ctx[lo:hi], e.resp[lo:hi], e.flags[lo:hi], max_len,
            grads, t,
        )  # fmt: skip
        loss += b_loss
        correct += b_correct
        _dual_step(weights, grads, m, v, t, n, adam_steps, adam_steps.step + bi + 1)
    return loss, correct


@njit(cache=True, parallel=True, nogil=True)
def dual_hogwild_epoch(weights, lstm, epoch, max_len, grads, m, v, adam_steps):
    """One epoch (the :class:`DualEpoch` ``epoch``) of the dual encoder of the
    :class:`DualWeights` ``weights`` (and Adam moments ``m``, ``v``, records of the same
    fields), updated in place, on threads (at most the buffers of ``grads``,
    :class:`DualGrads`), Hogwild: each batch a step of
    :func:`~irdialog.embed._recurrent_kernels.apply_adam` by the :class:`AdamSteps`
    ``adam_steps``. Returns (loss, correct), summed over the epoch."""
    n_threads = epoch.tptr.shape[0] - 1
    losses = np.zeros(n_threads)
    corrects = np.zeros(n_threads, np.int64)
    for t in prange(n_threads):
        loss, correct = _dual_thread(weights, lstm, epoch, max_len, grads, m, v, t, adam_steps)
        losses[t] = loss
        corrects[t] = correct
    return losses.sum(), corrects.sum()


# --------------------------------------------------------------------------- reader


@njit(cache=True, nogil=True)
def _reader_batch(weights, reads, lstm, ptr, tok, rows, gold, max_len, cands, grads, t):
    """The loss, correct answers and gradient of
    :func:`~irdialog.embed._recurrent_kernels.reader_batch` on the sequences ``rows``
    with the gold candidates ``gold``, into thread ``t``'s buffers of ``grads``.
    Returns (loss, correct, touched rows)."""
    B = rows.shape[0]
    n_reads = reads.shape[0]
    n = (ptr.shape[0] - 1) // (1 + reads[:, 0].max())  # sequences per copy
    Hd = weights.Wh.shape[0]
    h = np.empty((B, n_reads * Hd), weights.Emb.dtype)
    runs = []
    for r in range(n_reads):
        rows_r = rows + reads[r, 0] * n
        hr, order, packed, cache = _read(weights.Emb, _encoder(weights, r), lstm, ptr, tok,
                                         rows_r, max_len, reads[r, 1] != 0)  # fmt: skip
        for j in range(B):
            h[order[j], r * Hd : (r + 1) * Hd] = hr[j]
        runs.append((order, packed, cache))
    cptr, ctok, cw = cands
    loss, correct, dh = reader_loss_grad(h, weights.O, cptr, ctok, cw, gold, grads.dO[t])
    n_touched = 0
    for r in range(n_reads):
        order, packed, cache = runs[r]
        dhr = np.empty((B, Hd), dh.dtype)  # in the sorted order of the packed batch
        for j in range(B):
            dhr[j] = dh[order[j], r * Hd : (r + 1) * Hd]
        Wx, Wh, _ = _encoder(weights, r)
        if r == 0:
            dWx, dWh, db = grads.dWx[t], grads.dWh[t], grads.db[t]
        else:
            dWx, dWh, db = grads.dWx2[t], grads.dWh2[t], grads.db2[t]
        enc = EncoderGrads(dWx, dWh, db, grads.dEmb[t], grads.mark[t], grads.touched[t])
        n_touched = encoder_backward(Wx, Wh, lstm, packed, cache, dhr, enc, n_touched)
    return loss, correct, n_touched


@njit(cache=True, nogil=True)
def _reader_step(w, g, m, v, t, n_touched, adam_steps, step):
    """Thread ``t``'s Adam step ``step`` (:func:`_thread_step`, the :class:`AdamSteps`
    ``adam_steps``) of the :class:`ReaderWeights` ``w`` (moments ``m``, ``v``, records of
    the same fields) from its buffers of the :class:`ReaderGrads` ``g`` (the second
    encoder's, empty with one reading, leave its weights alone)."""
    a = adam_steps
    opt = AdamSettings(a.lr, a.beta1, a.beta2, a.eps)
    mats = (
        (w.Wx, g.dWx[t], m.Wx, v.Wx), (w.Wh, g.dWh[t], m.Wh, v.Wh),
        (w.Wx2, g.dWx2[t], m.Wx2, v.Wx2), (w.Wh2, g.dWh2[t], m.Wh2, v.Wh2),
        (w.O, g.dO[t], m.O, v.O),
    )  # fmt: skip
    vecs = ((w.b, g.db[t], m.b, v.b), (w.b2, g.db2[t], m.b2, v.b2))
    _thread_step(w, g, m, v, t, n_touched, mats, vecs, a.frozen, a.max_norm, opt, step)


@njit(cache=True, nogil=True)
def _reader_thread(weights, reads, lstm, epoch, max_len, cands, grads, m, v, t, adam_steps):
    """Thread ``t``'s batches of :func:`reader_hogwild_epoch`. Returns (loss, correct)."""
    e = epoch
    loss = 0.0
    correct = 0
    for i in range(e.tptr[t], e.tptr[t + 1]):
        bi = e.mine[i]
        batch = e.rows[e.bptr[bi] : e.bptr[bi + 1]]
        b_loss, b_correct, n = _reader_batch(
            weights, reads, lstm, e.ptr, e.tok, batch, e.gold[batch], max_len, cands, grads, t
        )
        loss += b_loss
        correct += b_correct
        _reader_step(weights, grads, m, v, t, n, adam_steps, adam_steps.step + bi + 1)
    return loss, correct


@njit(cache=True, parallel=True, nogil=True)
def reader_hogwild_epoch(weights, reads, lstm, epoch, max_len, cands, grads, m, v, adam_steps):
    """One epoch (the :class:`ReaderEpoch` ``epoch``) of the reader of the
    :class:`ReaderWeights` ``weights`` and the readings ``reads`` (:func:`reading_array`),
    with the Adam moments ``m``, ``v`` (records of the same fields), updated in place, on
    threads (at most the buffers of ``grads``, :class:`ReaderGrads`), Hogwild
    (``cands`` = (cptr, ctok, cw), the candidates' bags of words). The steps are those of
    :func:`dual_hogwild_epoch`. Returns (loss, correct), summed over the epoch."""
    n_threads = epoch.tptr.shape[0] - 1
    losses = np.zeros(n_threads)
    corrects = np.zeros(n_threads, np.int64)
    for t in prange(n_threads):
        loss, correct = _reader_thread(
            weights, reads, lstm, epoch, max_len, cands, grads, m, v, t, adam_steps
        )
        losses[t] = loss
        corrects[t] = correct
    return losses.sum(), corrects.sum()


# --------------------------------------------------------------------------- encoding


@njit(cache=True, nogil=True)
def _encode_block(weights, reads, lstm, ptr, tok, rows, max_len, out, lo, hi):
    """The final states of the sequences ``rows[lo:hi]`` in every reading, side by side,
    into ``out[lo:hi]``."""
    block = rows[lo:hi].copy()
    n = (ptr.shape[0] - 1) // (1 + reads[:, 0].max())
    Hd = weights.Wh.shape[0]
    for r in range(reads.shape[0]):
        h, order, _, _ = _read(weights.Emb, _encoder(weights, r), lstm, ptr, tok,
                               block + reads[r, 0] * n, max_len, reads[r, 1] != 0)  # fmt: skip
        for j in range(hi - lo):
            out[lo + order[j], r * Hd : (r + 1) * Hd] = h[j]


@njit(cache=True, parallel=True, nogil=True)
def encode_parts(weights, reads, lstm, ptr, tok, rows, max_len, out, block):
    """The final states of the sequences ``rows`` (numbered within one copy) in every
    reading ``reads`` (:func:`reading_array`) of the encoders of ``weights``
    (:class:`Encoders`), side by side, into ``out`` (len(rows), readings x hidden
    size): what :func:`~irdialog.embed._recurrent_kernels.encode_states` gives, a block
    of ``block`` contiguous rows per loop iteration."""
    n_blocks = (rows.shape[0] + block - 1) // block
    for i in prange(n_blocks):
        lo = i * block
        _encode_block(weights, reads, lstm, ptr, tok, rows, max_len, out, lo,
                      min(lo + block, rows.shape[0]))  # fmt: skip
