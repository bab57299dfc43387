"""MemN2N's training on several threads, in one numba parallel region per epoch.

:func:`hogwild_epoch` runs an epoch's mini-batches on ``k`` threads, thread ``t`` taking
batches t, t + k, t + 2k, ... of the epoch's order. Each thread computes its batch's
gradient into its own buffers (the serial step's kernels, with numba's ``np.dot`` for the
three dense products) and updates the shared weights and optimizer moments at once,
without locks: Hogwild, as StarSpace and fastText train. No thread waits for another and
no batch is handed over from Python; a fit so trained does not repeat bit for bit. On one
thread it takes the serial fit's steps in the serial fit's order.

:func:`part_softmax_xent` and :func:`_candidates_shard` are the pieces QRN's batches on
threads (:mod:`irdialog.embed._qrn_parallel_kernels`) share with it.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._hogwild_kernels import se_shard_bounds
from ._memn2n_kernels import (
    W_MAT,
    Activations,
    Candidates,
    Upstream,
    apply_update,
    apply_update_rows,
    backward_examples,
    batch_rows,
    candidate_embeddings,
    forward_batch,
    scatter_candidates,
    softmax_xent,
)

HogwildEpoch = namedtuple(
    "HogwildEpoch", "order batch_size n_threads step lazy word_tok frozen_rows frozen_values"
)
HogwildEpoch.__doc__ = """What an epoch of :func:`hogwild_epoch` runs: mini-batches of
``batch_size`` over the examples ``order`` on ``n_threads`` threads; ``step``, the updates
before the epoch (batch b is update ``step + b + 1``, for Adam's bias correction);
``lazy``, the row-wise update of :func:`~irdialog.embed._memn2n_kernels.apply_update_rows`
(else the dense one); ``word_tok``, the candidates' words each once (for
:func:`~irdialog.embed._memn2n_kernels.batch_rows`); and the embedding rows
``frozen_rows`` held at ``frozen_values`` (n_matrices, len(frozen_rows), d). It holds
the words' tokens, not their :class:`~irdialog.embed._memn2n_kernels.Candidates`: numba
takes no record inside a record into a parallel loop, so each thread builds its own."""

Threads = namedtuple(
    "Threads", "u h mem prob o gate U Wc LT bits gt mark stamp dE dH dG dWc row_mark "
    "row_stamp rows w_rows"
)  # fmt: skip
Threads.__doc__ = """The scratch of :func:`hogwild_epoch`: the arrays of one
:class:`~irdialog.embed._memn2n_kernels.Workspace` per thread, stacked on a first axis,
with the int64 stamps ``stamp`` and ``row_stamp`` of its ``mark`` and ``row_mark``. Made by
:func:`make_threads`."""


def make_threads(n_threads, n_mat, n_words, dim, hops, batch_size, max_mem, n_cand, n_types,
                 dtype, n_gates=0):  # fmt: skip
    """The :class:`Threads` of ``n_threads`` threads for batches of up to ``batch_size``
    examples (the sizes of :class:`~irdialog.embed._memn2n_kernels.Workspace`)."""
    k, b, m = n_threads, batch_size, max(max_mem, 1)
    n_gated = b if n_gates else 0
    return Threads(
        u=np.empty((k, b, hops + 1, dim), dtype),
        h=np.empty((k, b, hops, dim), dtype),
        mem=np.empty((k, b, n_mat, m, dim), dtype),
        prob=np.empty((k, b, hops, m), dtype),
        o=np.empty((k, n_gated, hops, dim), dtype),
        gate=np.empty((k, n_gated, hops, dim), dtype),
        U=np.empty((k, b, dim), dtype),
        Wc=np.empty((k, n_cand, dim), dtype),
        LT=np.empty((k, n_cand, b), dtype),
        bits=np.empty((k, n_cand * b), np.int32),
        gt=np.zeros((k, b, max(n_types, 1)), dtype),
        mark=np.full((k, n_cand * max(n_types, 1)), -1, dtype=np.int64),
        stamp=np.zeros(k, np.int64),
        dE=np.zeros((k, n_mat, n_words, dim), dtype),
        dH=np.zeros((k, dim, dim), dtype),
        dG=np.zeros((k, n_gates, dim, dim + 1), dtype),
        dWc=np.empty((k, n_cand, dim), dtype),
        row_mark=np.zeros((k, n_words), np.int64),
        row_stamp=np.zeros(k, np.int64),
        rows=np.empty((k, n_words), np.int64),
        w_rows=np.empty((k, n_words), np.int64),
    )


@njit(cache=True, nogil=True)
def _candidates_shard(E, w, cands, Wc, n_shards, s):
    """The embeddings ``Wc`` of shard ``s`` of ``n_shards`` of the candidates."""
    lo, hi = se_shard_bounds(Wc.shape[0], n_shards, s)
    candidate_embeddings(E, w, cands.cptr[lo : hi + 1], cands.ctok, cands.cw, Wc[lo:hi])


@njit(cache=True, nogil=True)
def part_softmax_xent(E, w, data, cands, y, part, parts, p, Wc, bits):
    """The candidates' softmax cross-entropy of part ``p`` of a batch (its examples
    ``part``, their final states ``parts.U[p]``), as
    :func:`~irdialog.embed._memn2n_kernels.softmax_xent`, over the logits
    ``LT = Wc U^T`` of the candidate embeddings ``Wc``: ``LT`` is the part's scratch
    when the part is full, else a new array; ``gt`` the part's rows of ``parts.gt``;
    ``parts.stamp[p]`` advanced. Any ``parts`` with those fields (MemN2N's threads, QRN's
    parts).
    Returns (LT, gt, loss, n_correct)."""
    nb = part.shape[0]
    U = parts.U[p, :nb]
    if nb == parts.LT.shape[2]:
        LT = parts.LT[p]
    else:
        LT = np.empty((Wc.shape[0], nb), E.dtype)
    np.dot(Wc, U.T, LT)
    gt = parts.gt[p, :nb]
    loss, correct, stamp = softmax_xent(
        LT, U, E, w, data, cands, part, y, parts.mark[p], parts.stamp[p], gt, bits
    )
    parts.stamp[p] = stamp
    return LT, gt, loss, correct


@njit(cache=True, nogil=True)
def _batch_loss_grad(E, H, G, cfg, data, cands, y, batch, th, t, lazy):
    """:func:`~irdialog.embed._memn2n_kernels.batch_loss_grad` of ``batch`` in thread
    ``t``'s scratch of ``th``: the gradient left in ``th.dE[t]``, ``th.dH[t]``,
    ``th.dG[t]`` (``th.dE[t]`` zeroed first unless ``lazy``). Returns (loss, n_correct)."""
    w = cfg[W_MAT]
    nb = batch.shape[0]
    U = th.U[t, :nb]
    acts = Activations(th.u[t], th.h[t], th.mem[t], th.prob[t], th.o[t], th.gate[t])
    forward_batch(E, H, G, cfg, data, batch, acts, U)
    Wc = th.Wc[t]
    candidate_embeddings(E, w, cands.cptr, cands.ctok, cands.cw, Wc)
    LT, gt, loss, correct = part_softmax_xent(E, w, data, cands, y, batch, th, t, Wc, th.bits[t])
    dU = np.dot(LT.T, Wc)
    dWc = th.dWc[t]
    np.dot(LT, U, dWc)
    dE, dH, dG = th.dE[t], th.dH[t], th.dG[t]
    if not lazy:
        dE[:] = 0.0
    dH[:] = 0.0
    dG[:] = 0.0
    scatter_candidates(dE[w], cands.cptr, cands.ctok, cands.cw, dWc)
    backward_examples(E, H, G, cfg, data, cands, batch, acts, Upstream(U, dU, dWc, gt), dE, dH, dG)
    return loss, correct


@njit(cache=True, nogil=True)
def _thread_batches(E, H, G, cfg, data, cands, y, th, t, moments, update, epoch):
    """Thread ``t``'s batches of the :class:`HogwildEpoch` ``epoch`` (see
    :func:`hogwild_epoch`), each a step of the shared weights. Returns (loss, n_correct)."""
    order, batch_size = epoch.order, epoch.batch_size
    n = order.shape[0]
    n_batches = (n + batch_size - 1) // batch_size
    w = cfg[W_MAT]
    words = Candidates(
        cands.cptr, epoch.word_tok, cands.cw, cands.iptr, cands.icand, cands.type_tok
    )
    frozen_rows, frozen_values = epoch.frozen_rows, epoch.frozen_values
    dE, dH, dG = th.dE[t], th.dH[t], th.dG[t]
    loss = 0.0
    correct = 0
    for b in range(t, n_batches, epoch.n_threads):
        batch = order[b * batch_size : min(n, (b + 1) * batch_size)]
        n_rows = n_w_rows = 0
        if epoch.lazy:
            th.row_stamp[t] += 2
            n_rows, n_w_rows = batch_rows(
                data, batch, words, th.row_mark[t], th.row_stamp[t], th.rows[t], th.w_rows[t]
            )
        b_loss, b_correct = _batch_loss_grad(E, H, G, cfg, data, cands, y, batch, th, t, epoch.lazy)
        loss += b_loss
        correct += b_correct
        for r in frozen_rows:  # no step, and nothing added to the clipping norm
            dE[:, r, :] = 0.0
        step = epoch.step + b + 1
        if epoch.lazy:
            rows, w_rows = th.rows[t, :n_rows], th.w_rows[t, :n_w_rows]
            apply_update_rows(E, H, G, dE, dH, dG, rows, w_rows, w, moments, update, step)
        else:
            apply_update(E, H, G, dE, dH, dG, moments, update, step)
        for i in range(frozen_rows.shape[0]):  # Adam's moments move a row with no gradient
            E[:, frozen_rows[i], :] = frozen_values[:, i, :]
    return loss, correct


@njit(cache=True, parallel=True, nogil=True)
def hogwild_epoch(E, H, G, cfg, data, cands, y, th, moments, update, epoch):
    """One epoch (the :class:`HogwildEpoch` ``epoch``) of mini-batches on
    ``epoch.n_threads`` threads (at most the stacked scratch of ``th``), updating the
    weights (E, H, G) and the :class:`~irdialog.embed._memn2n_kernels.Moments` ``moments``
    in place by the :class:`~irdialog.embed._memn2n_kernels.Update` ``update``.

    ``cfg``, ``data``, ``cands`` and ``y`` are those of
    :func:`~irdialog.embed._memn2n_kernels.batch_loss_grad`. Returns (loss, n_correct),
    summed over the epoch.
    """
    k = epoch.n_threads
    losses = np.zeros(k)
    corrects = np.zeros(k, np.int64)
    for t in prange(k):
        loss, correct = _thread_batches(E, H, G, cfg, data, cands, y, th, t, moments, update, epoch)
        losses[t] = loss
        corrects[t] = correct
    return losses.sum(), corrects.sum()
