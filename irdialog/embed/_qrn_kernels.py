"""Numba kernels of :class:`irdialog.embed.QRNRanker`: forward, backward and updates.

Query-reduction networks (Seo, Min, Farhadi & Hajishirzi 2017, section 2 and the authors'
code) written out by hand, on the encoded contexts of MemN2N
(:class:`irdialog.embed._memn2n_kernels.Contexts`):

- the embedding matrices are one array ``E`` of shape (2, n_words, dim): ``E[0]`` embeds the
  story sentences (memories) and the query, each a position-encoded bag of words
  (:func:`irdialog.embed._memn2n_kernels._add_sentence`; a memory adds its speaker word),
  ``E[1]`` the candidates (and the match-type words);
- the reduction unit's weights are one row of ``theta`` (shared by every layer, or one row
  per layer), laid out by :func:`unit_layout`: ``W_h`` (d, 2d), ``b_h``, the update gate's
  ``w_z``, the reset gates' ``w_rf`` (forward) and ``w_rb`` (backward), and their biases;
- layer l reads the sentences ``x_t`` (oldest first) with the query ``q_t`` (the question
  at every step in layer 0): ``z_t = sigmoid(w_z . (x_t o q_t) + b_z)``, the candidate
  ``c_t = tanh(W_h [x_t; q_t] + b_h)``, and ``h_t = z_t r_t c_t + (1 - z_t) h_{t-1}``,
  ``r_t = sigmoid(w_rf . (x_t o q_t) + b_rf)`` (1 without the reset gate);
- every layer but the last also runs backwards in time with the same ``z_t`` and ``c_t``
  and its own reset gate ``r^b``, and the next layer's query is ``q_t = h^f_t + h^b_t``
  (``h^f_t`` when not bidirectional); the last layer runs forwards without reset gate, and
  its final state ``u = h_T`` is the reduced query;
- candidate j scores ``u . (E[1] bag_j + match-type words)`` and the loss is the softmax
  cross-entropy over all candidates (MemN2N's :func:`~irdialog.embed._memn2n_kernels.\
softmax_xent`).

The memories of a batch are stacked into one array per layer, so that the candidates and
gates of all of them are one matrix product each (numba's ``np.dot``, that is BLAS); only
the recurrences run memory by memory. Every kernel is generic in the float type: float32
in training, float64 in the gradient check of the tests. No ``fastmath``: these are
gradient loops (see CONTRIBUTING.md). The plain numpy reference the tests compare against
is :mod:`irdialog.embed._qrn_reference`.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._fastmath import tanh_inplace
from ._memn2n_kernels import (
    Upstream,
    _add_sentence,
    _kfrac,
    _scatter_sentence,
    candidate_backward,
    candidate_embeddings,
    softmax_xent,
)
from ._optim import AdamSettings, adam, clip_scale, squared_norm

Activations = namedtuple("Activations", "ptr qv xq a c z rf rb hf hb")
Activations.__doc__ = """The forward pass of a batch, kept for the backward pass. The
memories of the batch are stacked: example ``i``'s are the rows ``ptr[i]:ptr[i + 1]`` (oldest
first) of the per-layer arrays, so that each layer's products over every memory of the
batch are one matrix product. ``qv`` (B, d) holds the questions; per layer l, ``xq[l]``
(N, 2d) the inputs ``[x_t; q_t]``, ``a[l]`` (N, d) the gates' input ``x_t o q_t``, ``c[l]``
(N, d) the candidates, ``z[l]``, ``rf[l]``, ``rb[l]`` (N,) the update and reset gates (1
where there is no reset gate) and ``hf[l]``, ``hb[l]`` (N, d) the states forwards and
backwards in time. ``xq[0][:, :d]`` holds the sentence vectors ``x_t`` themselves."""

Moments = namedtuple("Moments", "mE vE mT vT")
Moments.__doc__ = """Adam's moments of E and theta."""

# Layout of the int64 configuration vector ``cfg``.
N_LAYERS, TIED, RESET, BIDIR, PE_LEN = range(5)


def make_cfg(layers, tied, reset, bidirectional, pe_len):
    """The int64 configuration vector ``[layers, tied, reset, bidirectional, pe_len]``:
    ``pe_len`` is J of the position encoding (0: plain bags of words)."""
    return np.asarray([layers, int(tied), int(reset), int(bidirectional), pe_len], np.int64)


@njit(cache=True, nogil=True)
def unit_layout(dim):
    """The offsets of ``W_h`` (d x 2d, row-major), ``b_h``, ``w_z``, ``w_rf``, ``w_rb``
    (d each, consecutive: the gates' (3, d) matrix) and of the biases ``b_z``, ``b_rf``,
    ``b_rb`` (one each) in a row of theta, and the row's length."""
    bh = 2 * dim * dim
    wz = bh + dim
    wrf = wz + dim
    wrb = wrf + dim
    bz = wrb + dim
    return bh, wz, wrf, wrb, bz, bz + 3


@njit(cache=True, nogil=True)
def new_activations(E, layers, batch_size, max_mem):
    """Empty :class:`Activations` for batches of up to ``batch_size`` examples of at most
    ``max_mem`` memories each."""
    dim, dt = E.shape[2], E.dtype
    n = batch_size * max(max_mem, 1)
    return Activations(
        np.zeros(batch_size + 1, np.int64), np.empty((batch_size, dim), dt),
        np.empty((layers, n, 2 * dim), dt), np.empty((layers, n, dim), dt),
        np.empty((layers, n, dim), dt), np.empty((layers, n), dt), np.empty((layers, n), dt),
        np.empty((layers, n), dt), np.empty((layers, n, dim), dt), np.empty((layers, n, dim), dt),
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _sigmoid(s):
    return 1.0 / (1.0 + np.exp(-s))


@njit(cache=True, nogil=True)
def _embed_batch(E, data, batch, pe_len, kfrac, pe_ab, acts):
    """The rows ``[x_t; .]`` of layer 0 (each memory position-encoded, plus its speaker
    word) and the questions ``qv`` of the examples ``batch``."""
    sptr, stok, sspk, qsent, mptr, msent = data[:6]
    dim = E.shape[2]
    x = acts.xq[0]
    for bi in range(batch.shape[0]):
        e = batch[bi]
        p0 = acts.ptr[bi]
        for t in range(mptr[e + 1] - mptr[e]):
            row = x[p0 + t, :dim]
            row[:] = 0.0
            s = msent[mptr[e] + t]
            _add_sentence(row, E, 0, sptr, stok, s, pe_len, kfrac, pe_ab)
            spk = sspk[s]
            if spk != 0:
                for k in range(dim):
                    row[k] += E[0, spk, k]
        q = acts.qv[bi]
        q[:] = 0.0
        _add_sentence(q, E, 0, sptr, stok, qsent[e], pe_len, kfrac, pe_ab)


@njit(cache=True, nogil=True)
def forward_batch(E, theta, cfg, data, batch, acts, U, bits):
    """Forward pass of the examples ``batch`` up to their reduced queries U (len(batch),
    d), the last layer's final state (zero without memories); the intermediate values go
    to the :class:`Activations` ``acts`` for the backward pass. Each layer's candidates
    and gates over all the batch's memories are one matrix product each, and their tanh
    one pass (``bits``: int32 scratch at least the batch's memories times d long); only
    the recurrences run per example."""
    layers = cfg[N_LAYERS]
    dim = E.shape[2]
    bh_o, wz_o, _, _, bz_o, _ = unit_layout(dim)
    n_b = batch.shape[0]
    ptr = acts.ptr
    for bi in range(n_b):
        e = batch[bi]
        ptr[bi + 1] = ptr[bi] + data.mptr[e + 1] - data.mptr[e]
    n_all = ptr[n_b]
    _embed_batch(E, data, batch, cfg[PE_LEN], _kfrac(dim, E), np.empty(2, E.dtype), acts)
    for layer in range(layers):
        last = layer == layers - 1
        bidir = cfg[BIDIR] != 0 and not last
        reset = cfg[RESET] != 0 and not last
        row = theta[0] if cfg[TIED] != 0 else theta[layer]
        Wh = row[:bh_o].reshape((dim, 2 * dim))
        Wg = row[wz_o:bz_o].reshape((3, dim))  # w_z, w_rf, w_rb
        xq = acts.xq[layer, :n_all]
        a = acts.a[layer, :n_all]
        for bi in range(n_b):
            for i in range(ptr[bi], ptr[bi + 1]):
                for k in range(dim):
                    if layer == 0:
                        xq[i, dim + k] = acts.qv[bi, k]
                    else:  # the next layer's query: the sum of both directions' states
                        xq[i, k] = acts.xq[0, i, k]
                        xq[i, dim + k] = acts.hf[layer - 1, i, k] + acts.hb[layer - 1, i, k]
                    a[i, k] = xq[i, k] * xq[i, dim + k]
        if n_all == 0:
            continue
        pre = np.dot(xq, Wh.T)
        gates = np.dot(a, Wg.T)
        c = acts.c[layer]
        for i in range(n_all):
            for k in range(dim):
                c[i, k] = pre[i, k] + row[bh_o + k]
        tanh_inplace(c[:n_all].reshape(n_all * dim), bits)  # one vectorised pass
        for i in range(n_all):
            acts.z[layer, i] = _sigmoid(gates[i, 0] + row[bz_o])
            acts.rf[layer, i] = _sigmoid(gates[i, 1] + row[bz_o + 1]) if reset else 1.0
            acts.rb[layer, i] = _sigmoid(gates[i, 2] + row[bz_o + 2]) if reset and bidir else 1.0
        z, hf, hb = acts.z[layer], acts.hf[layer], acts.hb[layer]
        for bi in range(n_b):
            p0, p1 = ptr[bi], ptr[bi + 1]
            for i in range(p0, p1):
                g = z[i] * acts.rf[layer, i]
                keep = 1.0 - z[i]
                for k in range(dim):
                    prev = hf[i - 1, k] if i > p0 else 0.0
                    hf[i, k] = g * c[i, k] + keep * prev
            for i in range(p1 - 1, p0 - 1, -1):
                if not bidir:
                    hb[i, :] = 0.0
                    continue
                g = z[i] * acts.rb[layer, i]
                keep = 1.0 - z[i]
                for k in range(dim):
                    prev = hb[i + 1, k] if i < p1 - 1 else 0.0
                    hb[i, k] = g * c[i, k] + keep * prev
    for bi in range(n_b):
        if ptr[bi + 1] > ptr[bi]:
            U[bi, :] = acts.hf[layers - 1, ptr[bi + 1] - 1]
        else:
            U[bi, :] = 0.0


@njit(cache=True, nogil=True)
def _backward_steps(g_out, h, c, z, r, dc, dz, dr, carry, g, n, forward):
    """The recurrence ``h_t = z_t r_t c_t + (1 - z_t) h_prev`` of one direction, backwards:
    from ``g_out`` (the gradient reaching each h_t from above) adds into dc, dz and dr.
    ``g`` (n, d) is scratch for the gradient of each h_t."""
    dim = c.shape[1]
    carry[:] = 0.0
    for step in range(n):  # the gradient of each state, carried back in time
        t = n - 1 - step if forward else step
        zt = z[t]
        rt = r[t]
        for k in range(dim):
            gk = g_out[t, k] + carry[k]
            g[t, k] = gk
            dc[t, k] += gk * zt * rt
            carry[k] = gk * (1.0 - zt)
    # The gates' sums over k, apart from the loop above: their add chains then do not
    # hold up the carry, and each step's sum keeps its order.
    for t in range(n):
        p = t - 1 if forward else t + 1
        has_prev = p >= 0 if forward else p < n
        zt = z[t]
        rt = r[t]
        acc_z = 0.0
        acc_r = 0.0
        for k in range(dim):
            gk = g[t, k]
            prev = h[p, k] if has_prev else 0.0
            acc_z += gk * (rt * c[t, k] - prev)
            acc_r += gk * zt * c[t, k]
        dz[t] += acc_z
        dr[t] += acc_r


@njit(cache=True, nogil=True)
def _backward_layers(theta, cfg, acts, n_b, dU, dtheta, dx, dq0):
    """Backward pass through the layers of a batch from dU, the gradient of the reduced
    queries: adds into dtheta, leaves the gradient of the sentence vectors in ``dx`` and of
    the layer-0 queries (the question at every step) in ``dq0`` (both (N, d))."""
    layers = cfg[N_LAYERS]
    dim = dx.shape[1]
    bh_o, wz_o, _, _, bz_o, _ = unit_layout(dim)
    ptr = acts.ptr
    n_all = ptr[n_b]
    dt = dx.dtype
    dhf = np.zeros((n_all, dim), dt)
    dhb = np.zeros((n_all, dim), dt)
    dc = np.empty((n_all, dim), dt)
    dz, drf, drb = np.empty(n_all, dt), np.empty(n_all, dt), np.empty(n_all, dt)
    G = np.empty((n_all, 3), dt)
    carry, g = np.empty(dim, dt), np.empty((n_all, dim), dt)
    dx[:] = 0.0
    for bi in range(n_b):
        if ptr[bi + 1] > ptr[bi]:
            dhf[ptr[bi + 1] - 1] = dU[bi]
    for layer in range(layers - 1, -1, -1):
        last = layer == layers - 1
        bidir = cfg[BIDIR] != 0 and not last
        reset = cfg[RESET] != 0 and not last
        unit = 0 if cfg[TIED] != 0 else layer
        row = theta[unit]
        drow = dtheta[unit]
        Wh = row[:bh_o].reshape((dim, 2 * dim))
        dWh = drow[:bh_o].reshape((dim, 2 * dim))
        Wg = row[wz_o:bz_o].reshape((3, dim))
        dWg = drow[wz_o:bz_o].reshape((3, dim))
        xq, a, c = acts.xq[layer, :n_all], acts.a[layer, :n_all], acts.c[layer, :n_all]
        z, rf, rb = acts.z[layer], acts.rf[layer], acts.rb[layer]
        hf, hb = acts.hf[layer], acts.hb[layer]
        dc[:] = 0.0
        dz[:] = 0.0
        drf[:] = 0.0
        drb[:] = 0.0
        for bi in range(n_b):
            p0, p1 = ptr[bi], ptr[bi + 1]
            if p1 == p0:
                continue
            n = p1 - p0
            cs, zs, dcs, dzs = c[p0:p1], z[p0:p1], dc[p0:p1], dz[p0:p1]
            _backward_steps(dhf[p0:p1], hf[p0:p1], cs, zs, rf[p0:p1], dcs, dzs, drf[p0:p1],
                            carry, g[p0:p1], n, True)  # fmt: skip
            if bidir:
                _backward_steps(dhb[p0:p1], hb[p0:p1], cs, zs, rb[p0:p1], dcs, dzs, drb[p0:p1],
                                carry, g[p0:p1], n, False)  # fmt: skip
        for i in range(n_all):
            for k in range(dim):
                dc[i, k] *= 1.0 - c[i, k] * c[i, k]  # through the tanh
                drow[bh_o + k] += dc[i, k]
            G[i, 0] = dz[i] * z[i] * (1.0 - z[i])
            G[i, 1] = drf[i] * rf[i] * (1.0 - rf[i]) if reset else 0.0
            G[i, 2] = drb[i] * rb[i] * (1.0 - rb[i]) if reset and bidir else 0.0
            for j in range(3):
                drow[bz_o + j] += G[i, j]
        dWh += np.dot(dc.T, xq)
        dWg += np.dot(G.T, a)
        dxq = np.dot(dc, Wh)
        da = np.dot(G, Wg)
        for i in range(n_all):
            for k in range(dim):
                dx[i, k] += dxq[i, k] + da[i, k] * xq[i, dim + k]
                dq = dxq[i, dim + k] + da[i, k] * xq[i, k]
                if layer > 0:  # q_t = hf_t + hb_t of the layer below
                    dhf[i, k] = dq
                    dhb[i, k] = dq
                else:
                    dq0[i, k] = dq


@njit(cache=True, nogil=True)
def backward_batch(E, theta, cfg, data, cands, batch, acts, upstream, dE, dtheta):
    """Gradient of the batch loss added into dE and dtheta (zero on entry), from the
    :class:`~irdialog.embed._memn2n_kernels.Upstream` gradients (dU gets the type words'
    share added in place) and the :class:`Activations` of :func:`forward_batch`."""
    sptr, stok, sspk, qsent, mptr, msent = data[:6]
    dU = upstream.dU
    dim = E.shape[2]
    n_b = batch.shape[0]
    candidate_backward(E, 1, cands, upstream, n_b, dE)
    ptr = acts.ptr
    n_all = ptr[n_b]
    if n_all == 0:
        return  # u = 0 whatever the weights
    dx = np.empty((n_all, dim), E.dtype)
    dq0 = np.empty((n_all, dim), E.dtype)
    _backward_layers(theta, cfg, acts, n_b, dU, dtheta, dx, dq0)
    pe_len = cfg[PE_LEN]
    kfrac = _kfrac(dim, E)
    pe_ab = np.empty(2, E.dtype)
    dq = np.empty(dim, E.dtype)
    for bi in range(n_b):
        e = batch[bi]
        p0, p1 = ptr[bi], ptr[bi + 1]
        if p1 == p0:
            continue
        dq[:] = 0.0  # the question is the query of every step of layer 0
        for i in range(p0, p1):
            for k in range(dim):
                dq[k] += dq0[i, k]
        _scatter_sentence(dE, dq, 0, sptr, stok, qsent[e], pe_len, kfrac, pe_ab)
        for i in range(p0, p1):
            s = msent[mptr[e] + i - p0]
            _scatter_sentence(dE, dx[i], 0, sptr, stok, s, pe_len, kfrac, pe_ab)
            spk = sspk[s]
            if spk != 0:
                for k in range(dim):
                    dE[0, spk, k] += dx[i, k]


class Workspace:
    """Scratch arrays of one training run, for batches of up to ``batch_size`` examples
    of at most ``max_mem`` memories (a plain holder on the Python side)."""

    def __init__(self, E, theta, layers, batch_size, max_mem, n_cand, n_types):
        dim, dt = E.shape[2], E.dtype
        b = batch_size
        self.acts = new_activations(E, layers, b, max_mem)
        self.U = np.empty((b, dim), dt)
        self.Wc = np.empty((n_cand, dim), dt)
        self.LT = np.empty((n_cand, b), dt)
        self.bits = np.empty(max(n_cand * b, b * max(max_mem, 1) * dim), np.int32)
        self.gt = np.zeros((b, max(n_types, 1)), dt)
        self.mark = np.full(n_cand * max(n_types, 1), -1, dtype=np.int64)
        self.stamp = 0
        self.dE = np.zeros_like(E)
        self.dtheta = np.zeros_like(theta)


def batch_loss_grad(E, theta, cfg, data, cands, y, batch, ws):
    """Summed softmax cross-entropy of the examples ``batch`` and its gradient, left in
    ``ws.dE`` and ``ws.dtheta``; returns (loss, n_correct). The dense products are numpy's
    (BLAS), as in MemN2N's :func:`~irdialog.embed._memn2n_kernels.batch_loss_grad`."""
    nb = batch.shape[0]
    U = ws.U[:nb]
    forward_batch(E, theta, cfg, data, batch, ws.acts, U, ws.bits)
    candidate_embeddings(E, 1, cands.cptr, cands.ctok, cands.cw, ws.Wc)
    LT = ws.LT if nb == ws.LT.shape[1] else np.empty((ws.Wc.shape[0], nb), E.dtype)
    np.matmul(ws.Wc, U.T, out=LT)
    gt = ws.gt[:nb]
    loss, n_correct, ws.stamp = softmax_xent(
        LT, U, E, 1, data, cands, batch, y, ws.mark, ws.stamp, gt, ws.bits
    )
    dU = LT.T @ ws.Wc
    dWc = LT @ U
    ws.dE[:] = 0.0
    ws.dtheta[:] = 0.0
    backward_batch(E, theta, cfg, data, cands, batch, ws.acts, Upstream(U, dU, dWc, gt),
                   ws.dE, ws.dtheta)  # fmt: skip
    return loss, n_correct


@njit(cache=True, nogil=True)
def apply_update(E, theta, dE, dtheta, moments, opt, step, max_norm, decay):
    """One Adam step (:func:`irdialog.embed._optim.adam`, settings ``opt``, ``step``
    counting from 1) on E and theta from the batch gradient plus ``decay`` times the
    weights (L2 weight decay), clipped to a global norm of ``max_norm`` (<= 0: none). The
    nil word (row 0 of E) is held at zero."""
    e_flat, t_flat = E.ravel(), theta.ravel()
    de_flat, dt_flat = dE.ravel(), dtheta.ravel()
    if decay > 0:
        for i in range(e_flat.shape[0]):
            de_flat[i] += decay * e_flat[i]
        for i in range(t_flat.shape[0]):
            dt_flat[i] += decay * t_flat[i]
    scale = clip_scale(squared_norm(dE) + squared_norm(dtheta), max_norm)
    adam(e_flat, de_flat, moments.mE.ravel(), moments.vE.ravel(), scale, opt, step)
    adam(t_flat, dt_flat, moments.mT.ravel(), moments.vT.ravel(), scale, opt, step)
    E[:, 0, :] = 0.0


@njit(cache=True, nogil=True)
def forward_states(E, theta, cfg, data, rows, gates):
    """The reduced queries (len(rows), d) of the examples ``rows``, in blocks; when
    ``gates`` has shape (len(rows), layers, max_mem), the update gates z go there."""
    dim = E.shape[2]
    block = 64
    m = 1
    for e in rows:
        m = max(m, data.mptr[e + 1] - data.mptr[e])
    acts = new_activations(E, cfg[N_LAYERS], block, m)
    out = np.zeros((rows.shape[0], dim), E.dtype)
    bits = np.empty(block * m * dim, np.int32)
    for start in range(0, rows.shape[0], block):
        stop = min(start + block, rows.shape[0])
        forward_batch(E, theta, cfg, data, rows[start:stop], acts, out[start:stop], bits)
        if gates.shape[0] == rows.shape[0]:
            for j in range(stop - start):
                p0 = acts.ptr[j]
                n = min(acts.ptr[j + 1] - p0, gates.shape[2])
                gates[start + j, :, :n] = acts.z[:, p0 : p0 + n]
    return out


def new_moments(E, theta):
    """Zero Adam moments for E and theta."""
    return Moments(np.zeros_like(E), np.zeros_like(E), np.zeros_like(theta),
                   np.zeros_like(theta))  # fmt: skip


def adam_settings(lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """:class:`~irdialog.embed._optim.AdamSettings` of a step size (Kingma & Ba's
    defaults otherwise)."""
    return AdamSettings(lr, beta1, beta2, eps)
