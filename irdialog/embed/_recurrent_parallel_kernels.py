"""The gradient of one recurrent mini-batch on several threads, in one numba parallel
region, and the states of many sequences the same way.

:func:`dual_batch_parts` computes what :func:`~irdialog.embed._recurrent_kernels.dual_batch`
computes, and :func:`reader_batch_parts` what
:func:`~irdialog.embed._recurrent_kernels.reader_batch` computes, with the examples of the
batch cut into interleaved parts (part p: examples p, p + k, p + 2k, ...), one per thread,
each packed and encoded on its own and backpropagated into its own gradient buffers
(:class:`DualGrads`, :class:`ReaderGrads`); the parts are then summed in part order into
the fit's gradient, the dense arrays a range of entries per thread and the embedding rows
a range of the touched rows per thread (by the helpers both share): no thread hand-off
from Python per batch. The sums are those of
:func:`irdialog.embed._reference.reduce_grads` over the same parts, bit for bit;
the tests hold the results to the plain numpy references
(:func:`irdialog.embed._reference.dual_loss_grad` and ``reader_loss_grad``).

:func:`encode_parts` computes the final states of
:func:`~irdialog.embed._recurrent_kernels.encode_states`, a block of sequences per thread.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._hogwild_kernels import se_shard_bounds
from ._recurrent_kernels import (
    EncoderCache,
    EncoderGrads,
    Packed,
    _touch,
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
v is listed in ``touched``): the arrays of one :class:`~irdialog.embed._recurrent_kernels.\
Grads`, or, stacked on a first axis, those of the parts of :func:`dual_batch_parts`."""

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
as :class:`DualGrads`'s: of one :class:`~irdialog.embed._recurrent_kernels.Grads`, or
stacked on a first axis, of the parts of :func:`reader_batch_parts`."""


def weights_record(params):
    """The :class:`DualWeights` of the dual encoder's ``params`` (a dict)."""
    return DualWeights(*(params[key] for key in DualWeights._fields))


def grads_record(grads):
    """The :class:`DualGrads` of the arrays of a :class:`~irdialog.embed.\
_recurrent_kernels.Grads` of the dual encoder."""
    d = grads.dense
    return DualGrads(d["Wx"], d["Wh"], d["b"], d["M"], d["bias"], d["Emb"], grads.mark,
                     grads.touched)  # fmt: skip


def _zeros(params, keys, n_parts, dtype):
    """Zero buffers of ``n_parts`` parts (stacked on a first axis) of the shapes of
    ``params[key]`` for each of ``keys``."""
    return [np.zeros((n_parts, *np.shape(params[key])), dtype) for key in keys]


def _row_marks(params, n_parts):
    """Zero ``mark`` and ``touched`` of ``n_parts`` parts for the embedding rows of
    ``params``."""
    n_words = np.shape(params["Emb"])[0]
    return np.zeros((n_parts, n_words), np.uint8), np.zeros((n_parts, n_words), np.int64)


def make_dual_parts(params, n_parts, dtype=np.float32):
    """Zero :class:`DualGrads` of ``n_parts`` parts for weights of the shapes of
    ``params`` and of the float type ``dtype``."""
    keys = ("Wx", "Wh", "b", "M", "bias", "Emb")
    return DualGrads(*_zeros(params, keys, n_parts, dtype), *_row_marks(params, n_parts))


def encoders_record(params, readings):
    """The :class:`Encoders` of the ``readings``
    (:func:`~irdialog.embed._recurrent_kernels.readings`) of ``params`` (a dict)."""
    keys = (*readings[0].keys, *readings[-1].keys)
    return Encoders(params["Emb"], *(params[k] for k in keys))


def reader_weights_record(params, readings):
    """The :class:`ReaderWeights` of the reader's ``params`` (a dict) of ``readings``
    (:func:`~irdialog.embed._recurrent_kernels.readings`)."""
    return ReaderWeights(*encoders_record(params, readings), params["O"])


def reader_grads_record(grads, readings):
    """The :class:`ReaderGrads` of the arrays of a :class:`~irdialog.embed.\
_recurrent_kernels.Grads` of the reader of ``readings``."""
    d = grads.dense
    first = [d[k] for k in readings[0].keys]
    if len(readings) > 1:
        second = [d[k] for k in readings[1].keys]
    else:
        second = [np.zeros((0,) * a.ndim, a.dtype) for a in first]
    return ReaderGrads(*first, *second, d["O"], d["Emb"], grads.mark, grads.touched)


def make_reader_parts(params, readings, n_parts, dtype=np.float32):
    """Zero :class:`ReaderGrads` of ``n_parts`` parts for the reader of ``readings`` with
    weights of the shapes of ``params`` and of the float type ``dtype``."""
    first = _zeros(params, readings[0].keys, n_parts, dtype)
    if len(readings) > 1:
        second = _zeros(params, readings[1].keys, n_parts, dtype)
    else:
        second = [np.zeros((n_parts,) + (0,) * (a.ndim - 1), dtype) for a in first]
    rest = _zeros(params, ("O", "Emb"), n_parts, dtype)
    return ReaderGrads(*first, *second, *rest, *_row_marks(params, n_parts))


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
def _merge_touched(parts, dst, counts, n_parts):
    """The embedding rows the parts touched (``counts[q]`` of part q), added to those of
    ``dst`` (none on entry): each part's new ones in its order, the parts in order, as
    :func:`irdialog.embed._reference.reduce_grads` lists them; the parts' marks
    are cleared. Returns the number of touched rows of ``dst``."""
    n_touched = 0
    for q in range(n_parts):
        for i in range(counts[q]):
            v = parts.touched[q, i]
            n_touched = _touch(v, dst.mark, dst.touched, n_touched)
            parts.mark[q, v] = 0
    return n_touched


@njit(cache=True, nogil=True)
def _in_order(losses):
    """The sum of ``losses`` in their order (as Python's ``sum``)."""
    total = 0.0
    for q in range(losses.shape[0]):
        total += losses[q]
    return total


@njit(cache=True, nogil=True)
def _add_dense(dst, src, n_parts, s):
    """Shard ``s`` of ``n_parts`` of the entries of the flat ``dst``: the parts' rows of
    ``src`` (n_parts, n) added in part order, then zeroed."""
    lo, hi = se_shard_bounds(dst.shape[0], n_parts, s)
    for q in range(n_parts):
        for i in range(lo, hi):
            dst[i] += src[q, i]
            src[q, i] = 0.0


@njit(cache=True, nogil=True)
def _add_rows(dst, src, rows, n_parts, s):
    """Shard ``s`` of ``n_parts`` of the embedding ``rows``: the parts' rows of ``src``
    added into ``dst`` in part order, then zeroed (a part's row is zero where the part
    did not touch it)."""
    lo, hi = se_shard_bounds(rows.shape[0], n_parts, s)
    for i in range(lo, hi):
        v = rows[i]
        for q in range(n_parts):
            for u in range(dst.shape[1]):
                dst[v, u] += src[q, v, u]
                src[q, v, u] = 0.0


@njit(cache=True, nogil=True)
def _add_flat(dst, src, n_parts, s):
    """:func:`_add_dense` of the array ``dst`` (of any shape) and its parts ``src``."""
    _add_dense(dst.reshape(dst.size), src.reshape((src.shape[0], dst.size)), n_parts, s)


@njit(cache=True, nogil=True)
def _encoder(weights, r):
    """``(Wx, Wh, b)`` of the encoder of reading ``r`` (0 or 1) of ``weights``
    (:class:`Encoders` or :class:`ReaderWeights`)."""
    if r == 0:
        return weights.Wx, weights.Wh, weights.b
    return weights.Wx2, weights.Wh2, weights.b2


# --------------------------------------------------------------------------- dual encoder


@njit(cache=True, nogil=True)
def _dual_part(weights, lstm, ptr, tok, pairs, max_len, parts, n_parts, p):
    """Part ``p`` of ``n_parts`` of the pairs ``(ctx, resp, flags)``: the loss, correct
    decisions and gradient of :func:`~irdialog.embed._recurrent_kernels.dual_batch` on
    its pairs, into the buffers of part p. Returns (loss, correct, touched rows)."""
    Emb, Wx, Wh, b, M, bias = weights
    ctx, resp, flags = pairs
    c = ctx[p::n_parts]
    B = c.shape[0]
    rows = np.empty(2 * B, np.int64)
    rows[:B] = c
    rows[B:] = resp[p::n_parts]
    h, order, packed, cache = _read(Emb, (Wx, Wh, b), lstm, ptr, tok, rows, max_len, False)
    out = np.empty_like(h)
    for j in range(2 * B):
        out[order[j]] = h[j]
    loss, correct, dhc, dhr, dM, dbias = dual_loss_grad(
        out[:B].copy(), out[B:].copy(), M, bias, flags[p::n_parts].copy()
    )
    parts.dM[p] += dM
    parts.dbias[p] += dbias
    dh = np.empty_like(h)  # in the sorted order of the packed batch
    for j in range(2 * B):
        i = order[j]
        dh[j] = dhc[i] if i < B else dhr[i - B]
    grads = EncoderGrads(
        parts.dWx[p], parts.dWh[p], parts.db[p], parts.dEmb[p], parts.mark[p], parts.touched[p]
    )
    n = encoder_backward(Wx, Wh, lstm, packed, cache, dh, grads, 0)
    return loss, correct, n


@njit(cache=True, nogil=True)
def _dual_sum_shard(dst, parts, rows, n_parts, s):
    """Shard ``s`` of the sums of :func:`dual_batch_parts`: every dense array, and the
    embedding ``rows``."""
    for d, src in ((dst.dWx, parts.dWx), (dst.dWh, parts.dWh), (dst.dM, parts.dM)):
        _add_flat(d, src, n_parts, s)
    for d, src in ((dst.db, parts.db), (dst.dbias, parts.dbias)):
        _add_flat(d, src, n_parts, s)
    _add_rows(dst.dEmb, parts.dEmb, rows, n_parts, s)


@njit(cache=True, parallel=True, nogil=True)
def dual_batch_parts(weights, lstm, ptr, tok, pairs, max_len, parts, dst, n_parts):
    """Summed binary cross-entropy and correct decisions of the dual encoder of the
    :class:`DualWeights` ``weights`` on the pairs ``pairs = (ctx_rows, resp_rows, flags)``
    of the ragged token array (ptr, tok), on ``n_parts`` threads (at most the parts of
    ``parts`` and the pairs).

    The gradient is added into ``dst`` (:class:`DualGrads`, with no touched row on entry),
    as :func:`irdialog.embed._reference.reduce_grads` sums the parts' buffers
    (which end at zero again). Returns (loss, correct, the touched rows of ``dst``).

    The body of each parallel loop is a function of its own, so that numba shares no
    variable of one iteration with another.
    """
    k = n_parts
    losses = np.zeros(k)
    corrects = np.zeros(k, np.int64)
    counts = np.zeros(k, np.int64)
    # the pairs, a part per thread
    for p in prange(k):
        loss, correct, n = _dual_part(weights, lstm, ptr, tok, pairs, max_len, parts, k, p)
        losses[p] = loss
        corrects[p] = correct
        counts[p] = n
    n_touched = _merge_touched(parts, dst, counts, k)
    rows = dst.touched[:n_touched]
    # the sums, a range of entries (and of rows) per thread
    for p in prange(k):
        _dual_sum_shard(dst, parts, rows, k, p)
    return _in_order(losses), corrects.sum(), n_touched


# --------------------------------------------------------------------------- reader


@njit(cache=True, nogil=True)
def _reader_part(weights, reads, lstm, ptr, tok, batch, gold, max_len, cands, parts, n_parts, p):
    """Part ``p`` of ``n_parts`` of the sequences ``batch`` with the gold candidates
    ``gold[batch]``: the loss, correct answers and gradient of
    :func:`~irdialog.embed._recurrent_kernels.reader_batch` on its sequences, into the
    buffers of part p. Returns (loss, correct, touched rows)."""
    rows = batch[p::n_parts].copy()
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
    loss, correct, dh = reader_loss_grad(h, weights.O, cptr, ctok, cw, gold[rows], parts.dO[p])
    n_touched = 0
    for r in range(n_reads):
        order, packed, cache = runs[r]
        dhr = np.empty((B, Hd), dh.dtype)  # in the sorted order of the packed batch
        for j in range(B):
            dhr[j] = dh[order[j], r * Hd : (r + 1) * Hd]
        Wx, Wh, _ = _encoder(weights, r)
        if r == 0:
            dWx, dWh, db = parts.dWx[p], parts.dWh[p], parts.db[p]
        else:
            dWx, dWh, db = parts.dWx2[p], parts.dWh2[p], parts.db2[p]
        grads = EncoderGrads(dWx, dWh, db, parts.dEmb[p], parts.mark[p], parts.touched[p])
        n_touched = encoder_backward(Wx, Wh, lstm, packed, cache, dhr, grads, n_touched)
    return loss, correct, n_touched


@njit(cache=True, nogil=True)
def _reader_sum_shard(dst, parts, rows, n_parts, s):
    """Shard ``s`` of the sums of :func:`reader_batch_parts`: every dense array (the
    second encoder's empty with one reading), and the embedding ``rows``."""
    for d, src in (
        (dst.dWx, parts.dWx), (dst.dWh, parts.dWh), (dst.dWx2, parts.dWx2),
        (dst.dWh2, parts.dWh2), (dst.dO, parts.dO),
    ):  # fmt: skip
        _add_flat(d, src, n_parts, s)
    for d, src in ((dst.db, parts.db), (dst.db2, parts.db2)):
        _add_flat(d, src, n_parts, s)
    _add_rows(dst.dEmb, parts.dEmb, rows, n_parts, s)


@njit(cache=True, parallel=True, nogil=True)
def reader_batch_parts(weights, reads, lstm, ptr, tok, batch, gold, max_len, cands, parts,
                       dst, n_parts):  # fmt: skip
    """Summed softmax cross-entropy and correct answers of the reader of the
    :class:`ReaderWeights` ``weights`` and the readings ``reads`` (:func:`reading_array`)
    on the sequences ``batch`` of the ragged token array (ptr, tok), whose gold
    candidates are ``gold[batch]`` (``cands`` = (cptr, ctok, cw), the candidates' bags of
    words), on ``n_parts`` threads (at most the parts of ``parts`` and the sequences).

    The gradient is added into ``dst`` (:class:`ReaderGrads`, with no touched row on
    entry), as :func:`irdialog.embed._reference.reduce_grads` sums the parts'
    buffers (which end at zero again). Returns (loss, correct, the touched rows of
    ``dst``).
    """
    k = n_parts
    losses = np.zeros(k)
    corrects = np.zeros(k, np.int64)
    counts = np.zeros(k, np.int64)
    # the sequences, a part per thread
    for p in prange(k):
        loss, correct, n = _reader_part(
            weights, reads, lstm, ptr, tok, batch, gold, max_len, cands, parts, k, p
        )
        losses[p] = loss
        corrects[p] = correct
        counts[p] = n
    n_touched = _merge_touched(parts, dst, counts, k)
    rows = dst.touched[:n_touched]
    # the sums, a range of entries (and of rows) per thread
    for p in prange(k):
        _reader_sum_shard(dst, parts, rows, k, p)
    return _in_order(losses), corrects.sum(), n_touched


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
