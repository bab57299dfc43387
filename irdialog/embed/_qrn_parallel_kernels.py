"""The gradient of one QRN mini-batch on several threads, in one numba parallel region.

:func:`batch_loss_grad_parts` computes what
:func:`~irdialog.embed._qrn_kernels.batch_loss_grad` computes, with the batch cut into
interleaved parts (part p: examples p, p + k, p + 2k, ... of the batch), one per thread,
each with its own activations and gradient buffers, summed in part order inside the
kernel: no thread hand-off from Python per batch. The candidates' embeddings, which every
part reads, are computed once, a range of candidates per thread.

The result is the serial kernel's up to the order of the float sums; the tests hold it to
the plain numpy reference (:mod:`irdialog.embed._qrn_reference`: its loss, and the
central differences of its loss for the gradient).
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._hogwild_kernels import se_shard_bounds
from ._memn2n_kernels import Upstream
from ._memn2n_parallel_kernels import _candidates_shard, part_softmax_xent
from ._qrn_kernels import Activations, backward_batch, forward_batch

Parts = namedtuple("Parts", "ptr qv xq a c z rf rb hf hb U LT bits gt mark stamp dE dtheta Wc")
Parts.__doc__ = """The scratch of :func:`batch_loss_grad_parts`: per part (a first axis),
the arrays of one :class:`~irdialog.embed._qrn_kernels.Activations` (``ptr`` ... ``hb``),
the final states ``U``, the logits ``LT``, the int32 scratch ``bits``, the type words'
gradient ``gt``, the match-type marks ``mark`` and their int64 stamp ``stamp``, and the
gradients ``dE`` and ``dtheta``; and ``Wc``, the candidate embeddings the parts share.
Made by :func:`make_parts`."""


def make_parts(n_parts, E, theta, layers, batch_size, max_mem, n_cand, n_types):
    """The :class:`Parts` of ``n_parts`` parts of a batch of up to ``batch_size`` examples
    of at most ``max_mem`` memories each, for the weights E and theta (the sizes of
    :class:`~irdialog.embed._qrn_kernels.Workspace`)."""
    k, b = n_parts, -(-batch_size // n_parts)
    dim, dt = E.shape[2], E.dtype
    n = b * max(max_mem, 1)
    n_t = max(n_types, 1)
    return Parts(
        ptr=np.zeros((k, b + 1), np.int64),
        qv=np.empty((k, b, dim), dt),
        xq=np.empty((k, layers, n, 2 * dim), dt),
        a=np.empty((k, layers, n, dim), dt),
        c=np.empty((k, layers, n, dim), dt),
        z=np.empty((k, layers, n), dt),
        rf=np.empty((k, layers, n), dt),
        rb=np.empty((k, layers, n), dt),
        hf=np.empty((k, layers, n, dim), dt),
        hb=np.empty((k, layers, n, dim), dt),
        U=np.empty((k, b, dim), dt),
        LT=np.empty((k, n_cand, b), dt),
        bits=np.empty((k, max(n_cand * b, n * dim)), np.int32),
        gt=np.zeros((k, b, n_t), dt),
        mark=np.full((k, n_cand * n_t), -1, dtype=np.int64),
        stamp=np.zeros(k, np.int64),
        dE=np.zeros((k, *E.shape), dt),
        dtheta=np.zeros((k, *theta.shape), dt),
        Wc=np.empty((n_cand, dim), dt),
    )


@njit(cache=True, nogil=True)
def _part_loss_grad(E, theta, cfg, data, cands, y, batch, parts, n_parts, p):
    """Part ``p`` of ``n_parts`` of the batch (examples p, p + n_parts, ...): forward,
    softmax cross-entropy and backward into its own ``parts.dE[p]`` and
    ``parts.dtheta[p]``. Returns (loss, n_correct)."""
    part = batch[p::n_parts].copy()
    nb = part.shape[0]
    acts = Activations(
        parts.ptr[p], parts.qv[p], parts.xq[p], parts.a[p], parts.c[p], parts.z[p],
        parts.rf[p], parts.rb[p], parts.hf[p], parts.hb[p],
    )  # fmt: skip
    U = parts.U[p, :nb]
    bits = parts.bits[p]
    forward_batch(E, theta, cfg, data, part, acts, U, bits)
    LT, gt, loss, correct = part_softmax_xent(E, 1, data, cands, y, part, parts, p, parts.Wc, bits)
    Wc = parts.Wc
    dU = np.dot(LT.T, Wc)
    dWc = np.dot(LT, U)
    dE, dtheta = parts.dE[p], parts.dtheta[p]
    dE[:] = 0.0
    dtheta[:] = 0.0
    backward_batch(E, theta, cfg, data, cands, part, acts, Upstream(U, dU, dWc, gt), dE, dtheta)
    return loss, correct


@njit(cache=True, nogil=True)
def _sum_shard(flat, n_parts, n_shards, s):
    """Shard ``s`` of ``n_shards`` of the columns of ``flat`` (at least n_parts, n): the
    first ``n_parts`` rows summed into row 0 in part order."""
    lo, hi = se_shard_bounds(flat.shape[1], n_shards, s)
    for q in range(1, n_parts):
        for i in range(lo, hi):
            flat[0, i] += flat[q, i]


@njit(cache=True, parallel=True, nogil=True)
def batch_loss_grad_parts(E, theta, cfg, data, cands, y, batch, parts, n_parts, min_work):
    """Summed softmax cross-entropy of the examples ``batch`` and its gradient, on
    ``n_parts`` threads (at most the parts of ``parts`` and the examples of ``batch``).

    The gradient is left in ``parts.dE[0]`` and ``parts.dtheta[0]`` (the other parts hold
    their own shares). Returns (loss, n_correct).

    The candidates' embeddings and the sum of the parts each run on the threads too when
    their work pays for it (``min_work`` per thread, as
    :func:`~irdialog._threads.threads_for_work`; the estimator passes
    :data:`~irdialog._threads.MIN_WORK_PER_THREAD`), else on this one: each parallel loop
    costs a start and a join of the threads. The body of each parallel loop is a function
    of its own, so that numba shares no variable of one iteration with another.
    """
    k = n_parts
    # the candidates' embeddings, a range of candidates per thread
    if cands.ctok.shape[0] * E.shape[2] < 2 * min_work:
        _candidates_shard(E, 1, cands, parts.Wc, 1, 0)
    else:
        for p in prange(k):
            _candidates_shard(E, 1, cands, parts.Wc, k, p)
    losses = np.zeros(k)
    corrects = np.zeros(k, np.int64)
    # the examples, a part per thread
    for p in prange(k):
        loss, correct = _part_loss_grad(E, theta, cfg, data, cands, y, batch, parts, k, p)
        losses[p] = loss
        corrects[p] = correct
    # the parts' gradients summed into part 0 in part order, a range of entries per thread
    dE = parts.dE.reshape((parts.dE.shape[0], parts.dE[0].size))
    dtheta = parts.dtheta.reshape((parts.dtheta.shape[0], parts.dtheta[0].size))
    if (k - 1) * (dE.shape[1] + dtheta.shape[1]) < 2 * min_work:
        _sum_shard(dE, k, 1, 0)
        _sum_shard(dtheta, k, 1, 0)
    else:
        for p in prange(k):
            _sum_shard(dE, k, k, p)
            _sum_shard(dtheta, k, k, p)
    return losses.sum(), corrects.sum()
