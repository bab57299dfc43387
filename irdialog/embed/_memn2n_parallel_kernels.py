"""The gradient of one MemN2N mini-batch on several threads, in one numba parallel region.

:func:`batch_loss_grad_parts` computes what
:func:`~irdialog.embed._memn2n_kernels.batch_loss_grad` computes, with the batch cut into
interleaved parts (part p: examples p, p + k, p + 2k, ... of the batch), one per thread,
each with its own gradient buffers, summed in part order inside the kernel: no thread
hand-off from Python per batch. The candidates' side (their embeddings, and their
words' share of the gradient) is cut by candidates instead, so that no part repeats it.

The result is the serial kernel's up to the order of the float sums, which
:func:`~irdialog.embed._reference.batch_loss_grad` (the plain numpy reference of the whole
batch) checks in the tests.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._hogwild_kernels import se_shard_bounds
from ._memn2n_kernels import (
    W_MAT,
    Activations,
    Upstream,
    backward_examples,
    candidate_embeddings,
    forward_batch,
    scatter_candidates,
    softmax_xent,
)

Parts = namedtuple("Parts", "u h mem prob o gate U LT bits gt mark stamp dE dH dG Wc dWc")
Parts.__doc__ = """The scratch of :func:`batch_loss_grad_parts`: the arrays of one
:class:`~irdialog.embed._memn2n_kernels.Workspace` per part, stacked on a first axis
(``u`` ... ``mark``, the gradients ``dE``, ``dH``, ``dG`` and the candidates' gradients
``dWc``), ``stamp``, each part's int64 stamp of its ``mark``, and ``Wc``, the candidate
embeddings the parts share. Made by :func:`make_parts`."""


def make_parts(n_parts, n_mat, n_words, dim, hops, batch_size, max_mem, n_cand, n_types, dtype,
               n_gates=0):  # fmt: skip
    """The :class:`Parts` of ``n_parts`` parts of a batch of up to ``batch_size`` examples
    (the sizes of :class:`~irdialog.embed._memn2n_kernels.Workspace`); the gradient
    buffers start at zero, as :func:`batch_loss_grad_parts` leaves them but for part 0."""
    k, b, m = n_parts, -(-batch_size // n_parts), max(max_mem, 1)
    n_gated = b if n_gates else 0
    return Parts(
        u=np.empty((k, b, hops + 1, dim), dtype),
        h=np.empty((k, b, hops, dim), dtype),
        mem=np.empty((k, b, n_mat, m, dim), dtype),
        prob=np.empty((k, b, hops, m), dtype),
        o=np.empty((k, n_gated, hops, dim), dtype),
        gate=np.empty((k, n_gated, hops, dim), dtype),
        U=np.empty((k, b, dim), dtype),
        LT=np.empty((k, n_cand, b), dtype),
        bits=np.empty((k, n_cand * b), np.int32),
        gt=np.zeros((k, b, max(n_types, 1)), dtype),
        mark=np.full((k, n_cand * max(n_types, 1)), -1, dtype=np.int64),
        stamp=np.zeros(k, np.int64),
        dE=np.zeros((k, n_mat, n_words, dim), dtype),
        dH=np.zeros((k, dim, dim), dtype),
        dG=np.zeros((k, n_gates, dim, dim + 1), dtype),
        Wc=np.empty((n_cand, dim), dtype),
        dWc=np.empty((k, n_cand, dim), dtype),
    )


@njit(cache=True, nogil=True)
def _sum_rows(dE, n_parts, w, rows, w_rows, n_shards, s):
    """Shard ``s`` of ``n_shards`` of the rows (``w_rows`` for the answer matrix ``w``, else
    ``rows``) of every matrix: ``dE[0]`` there set to the sum of ``dE[:n_parts]`` in part
    order (zero when ``n_parts`` is 0), the other parts zeroed."""
    for m in range(dE.shape[1]):
        rs = w_rows if m == w else rows
        r0, r1 = se_shard_bounds(rs.shape[0], n_shards, s)
        for i in range(r0, r1):
            r = rs[i]
            if n_parts == 0:
                dE[0, m, r, :] = 0.0
            for q in range(1, n_parts):
                for d in range(dE.shape[3]):
                    dE[0, m, r, d] += dE[q, m, r, d]
                    dE[q, m, r, d] = 0.0


@njit(cache=True, nogil=True)
def _candidates_shard(E, w, cands, Wc, n_shards, s):
    """The embeddings ``Wc`` of shard ``s`` of ``n_shards`` of the candidates."""
    lo, hi = se_shard_bounds(Wc.shape[0], n_shards, s)
    candidate_embeddings(E, w, cands.cptr[lo : hi + 1], cands.ctok, cands.cw, Wc[lo:hi])


@njit(cache=True, nogil=True)
def _scatter_shard(cands, dWc, dW, n_parts, s):
    """Shard ``s`` of ``n_parts`` of the candidates: their gradient summed over the parts
    into ``dWc[0]`` (in part order), then scattered into their words' rows of ``dW``."""
    lo, hi = se_shard_bounds(dWc.shape[1], n_parts, s)
    for q in range(1, n_parts):
        for j in range(lo, hi):
            for d in range(dWc.shape[2]):
                dWc[0, j, d] += dWc[q, j, d]
    scatter_candidates(dW, cands.cptr[lo : hi + 1], cands.ctok, cands.cw, dWc[0, lo:hi])


@njit(cache=True, nogil=True)
def part_softmax_xent(E, w, data, cands, y, part, parts, p, bits):
    """The candidates' softmax cross-entropy of part ``p`` of a batch (its examples
    ``part``, their final states ``parts.U[p]``), as
    :func:`~irdialog.embed._memn2n_kernels.softmax_xent`, over the logits
    ``LT = Wc U^T`` of the candidate embeddings ``parts.Wc``: ``LT`` is the part's scratch
    when the part is full, else a new array; ``gt`` the part's rows of ``parts.gt``;
    ``parts.stamp[p]`` advanced. Any ``parts`` with those fields (MemN2N's, QRN's).
    Returns (LT, gt, loss, n_correct)."""
    nb = part.shape[0]
    U = parts.U[p, :nb]
    if nb == parts.LT.shape[2]:
        LT = parts.LT[p]
    else:
        LT = np.empty((parts.Wc.shape[0], nb), E.dtype)
    np.dot(parts.Wc, U.T, LT)
    gt = parts.gt[p, :nb]
    loss, correct, stamp = softmax_xent(
        LT, U, E, w, data, cands, part, y, parts.mark[p], parts.stamp[p], gt, bits
    )
    parts.stamp[p] = stamp
    return LT, gt, loss, correct


@njit(cache=True, nogil=True)
def _part_loss_grad(E, H, G, cfg, data, cands, y, batch, parts, n_parts, p):
    """Part ``p`` of ``n_parts`` of the batch (examples p, p + n_parts, ...): forward,
    softmax cross-entropy and backward into its buffers, but for the candidates' words
    (their gradient left in ``parts.dWc[p]``). Returns (loss, n_correct)."""
    w = cfg[W_MAT]
    part = batch[p::n_parts].copy()
    nb = part.shape[0]
    U = parts.U[p, :nb]
    acts = Activations(
        parts.u[p], parts.h[p], parts.mem[p], parts.prob[p], parts.o[p], parts.gate[p]
    )
    forward_batch(E, H, G, cfg, data, part, acts, U)
    LT, gt, loss, correct = part_softmax_xent(E, w, data, cands, y, part, parts, p, parts.bits[p])
    Wc = parts.Wc
    dU = np.dot(LT.T, Wc)
    dWc = parts.dWc[p]
    np.dot(LT, U, dWc)
    dE, dH, dG = parts.dE[p], parts.dH[p], parts.dG[p]
    dH[:] = 0.0
    dG[:] = 0.0
    backward_examples(E, H, G, cfg, data, cands, part, acts, Upstream(U, dU, dWc, gt), dE, dH, dG)
    return loss, correct


@njit(cache=True, parallel=True, nogil=True)
def batch_loss_grad_parts(E, H, G, cfg, data, cands, y, batch, parts, n_parts, rows, w_rows):
    """Summed softmax cross-entropy of the examples ``batch`` and its gradient, on
    ``n_parts`` threads (at most the parts of ``parts`` and the examples of ``batch``).

    ``rows`` and ``w_rows`` are the embedding rows the gradient can touch (those of
    :func:`~irdialog.embed._memn2n_kernels.batch_rows`, for every matrix but the answer
    matrix and for it; every row for a dense gradient): the gradient is left in
    ``parts.dE[0]``, ``parts.dH[0]`` and ``parts.dG[0]``, zero outside those rows of dE,
    and the other parts' dE is zero again. Returns (loss, n_correct).

    The body of each parallel loop is a function of its own, so that numba shares no
    variable of one iteration with another.
    """
    k = n_parts
    w = cfg[W_MAT]
    # the candidates' embeddings, and part 0's gradient zeroed at the rows it will sum
    for p in prange(k):
        _candidates_shard(E, w, cands, parts.Wc, k, p)
        _sum_rows(parts.dE, 0, w, rows, w_rows, k, p)
    losses = np.zeros(k)
    corrects = np.zeros(k, np.int64)
    # the examples, a part per thread
    for p in prange(k):
        loss, correct = _part_loss_grad(E, H, G, cfg, data, cands, y, batch, parts, k, p)
        losses[p] = loss
        corrects[p] = correct
    # the candidates' words, a range of candidates per thread, into that thread's part
    for p in prange(k):
        _scatter_shard(cands, parts.dWc, parts.dE[p, w], k, p)
    # the parts' gradients summed into part 0 in part order, a range of rows per thread
    for p in prange(k):
        _sum_rows(parts.dE, k, w, rows, w_rows, k, p)
    for q in range(1, k):
        parts.dH[0] += parts.dH[q]
        parts.dG[0] += parts.dG[q]
    return losses.sum(), corrects.sum()
