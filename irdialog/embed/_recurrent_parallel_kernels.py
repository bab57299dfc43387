"""The gradient of one dual-encoder mini-batch on several threads, in one numba parallel
region.

:func:`dual_batch_parts` computes what :func:`~irdialog.embed._recurrent_kernels.dual_batch`
computes, with the pairs of the batch cut into interleaved parts (part p: pairs p, p + k,
p + 2k, ...), one per thread, each packed and encoded on its own and backpropagated into
its own gradient buffers (:class:`DualParts`); the parts are then summed in part order
into the fit's gradient, the dense arrays a range of entries per thread and the embedding
rows a range of the touched rows per thread: no thread hand-off from Python per batch.
The sums are those of :func:`~irdialog.embed._recurrent_kernels.reduce_grads` over the
same parts, bit for bit; the tests hold the result to the plain numpy reference
(:func:`irdialog.embed._reference.dual_loss_grad`).
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
)

DualWeights = namedtuple("DualWeights", "Emb Wx Wh b M bias")
DualWeights.__doc__ = """The dual encoder's weights: the word embeddings, the encoder's
``Wx``, ``Wh`` and ``b``, and the match matrix ``M`` and ``bias``."""

DualGrads = namedtuple("DualGrads", "dWx dWh db dM dbias dEmb mark touched")
DualGrads.__doc__ = """The gradient buffers of the dual encoder's weights (``Wx``, ``Wh``,
``b``, ``M``, ``bias``, ``Emb``), and the embedding rows touched (``mark[v]`` is 1 once row
v is listed in ``touched``): the arrays of one :class:`~irdialog.embed._recurrent_kernels.\
Grads`, or, stacked on a first axis, those of the parts of :func:`dual_batch_parts`."""


def weights_record(params):
    """The :class:`DualWeights` of the dual encoder's ``params`` (a dict)."""
    return DualWeights(*(params[key] for key in DualWeights._fields))


def grads_record(grads):
    """The :class:`DualGrads` of the arrays of a :class:`~irdialog.embed.\
_recurrent_kernels.Grads` of the dual encoder."""
    d = grads.dense
    return DualGrads(d["Wx"], d["Wh"], d["b"], d["M"], d["bias"], d["Emb"], grads.mark,
                     grads.touched)  # fmt: skip


def make_dual_parts(params, n_parts, dtype=np.float32):
    """Zero :class:`DualGrads` of ``n_parts`` parts for weights of the shapes of
    ``params`` and of the float type ``dtype``."""
    k = n_parts

    def zeros(key):
        return np.zeros((k, *np.shape(params[key])), dtype)

    n_words = np.shape(params["Emb"])[0]
    return DualGrads(
        zeros("Wx"), zeros("Wh"), zeros("b"), zeros("M"), zeros("bias"), zeros("Emb"),
        np.zeros((k, n_words), np.uint8), np.zeros((k, n_words), np.int64),
    )  # fmt: skip


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
    order, nact, off, ptok = pack_batch(ptr, tok, rows, max_len, False)
    packed = Packed(nact, off, ptok)
    h, X, Hp, Cp, A, Cn = encoder_forward(Emb, Wx, Wh, b, lstm, packed, 2 * B)
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
    n = encoder_backward(Wx, Wh, lstm, packed, EncoderCache(X, Hp, Cp, A, Cn), dh, grads, 0)
    return loss, correct, n


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
def _sum_shard(dst, parts, rows, n_parts, s):
    """Shard ``s`` of the sums of :func:`dual_batch_parts`: every dense array, and the
    embedding ``rows``."""
    k = n_parts
    for d, src in (
        (dst.dWx, parts.dWx), (dst.dWh, parts.dWh), (dst.dM, parts.dM),
    ):  # fmt: skip
        _add_dense(d.reshape(d.size), src.reshape((src.shape[0], d.size)), k, s)
    for d, src in ((dst.db, parts.db), (dst.dbias, parts.dbias)):
        _add_dense(d, src, k, s)
    _add_rows(dst.dEmb, parts.dEmb, rows, k, s)


@njit(cache=True, parallel=True, nogil=True)
def dual_batch_parts(weights, lstm, ptr, tok, pairs, max_len, parts, dst, n_parts):
    """Summed binary cross-entropy and correct decisions of the dual encoder of the
    :class:`DualWeights` ``weights`` on the pairs ``pairs = (ctx_rows, resp_rows, flags)``
    of the ragged token array (ptr, tok), on ``n_parts`` threads (at most the parts of
    ``parts`` and the pairs).

    The gradient is added into ``dst`` (:class:`DualGrads`, with no touched row on entry),
    as :func:`~irdialog.embed._recurrent_kernels.reduce_grads` sums the parts' buffers
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
    # the touched rows: each part's new ones in its order, the parts in order
    n_touched = 0
    for q in range(k):
        for i in range(counts[q]):
            v = parts.touched[q, i]
            n_touched = _touch(v, dst.mark, dst.touched, n_touched)
            parts.mark[q, v] = 0
    rows = dst.touched[:n_touched]
    # the sums, a range of entries (and of rows) per thread
    for p in prange(k):
        _sum_shard(dst, parts, rows, k, p)
    return losses.sum(), corrects.sum(), n_touched
