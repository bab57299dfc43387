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

Every kernel is generic in the float type: float32 in training, float64 in the gradient
check of the tests. No ``fastmath``: these are gradient loops (see CONTRIBUTING.md). The
plain numpy reference the tests compare against is :mod:`irdialog.embed._qrn_reference`.
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
    candidate_embeddings,
    softmax_xent,
)
from ._optim import AdamSettings, adam, clip_scale, squared_norm

Activations = namedtuple("Activations", "x q c z rf rb hf hb")
Activations.__doc__ = """The forward pass of a batch, kept for the backward pass: per
example, the sentence vectors ``x`` (B, M, d), each layer's queries ``q`` (B, L, M, d),
candidates ``c`` (B, L, M, d), update gates ``z`` (B, L, M), reset gates ``rf`` and ``rb``
(B, L, M; 1 where there is none) and states ``hf``, ``hb`` (B, L, M, d; forward and
backward in time)."""

BackScratch = namedtuple("BackScratch", "dx dq dhf dhb dz drf drb dc carry g pe_ab")
BackScratch.__doc__ = """Scratch of :func:`_backward_one`: the gradients of the sentence
vectors ``dx`` and of a layer's queries ``dq`` (M, d), of its states from above (``dhf``,
``dhb``, (M, d)), of its gates (``dz``, ``drf``, ``drb``, (M,)) and candidates (``dc``,
(M, d)), two vectors (d,) and the position-encoding coefficients ``pe_ab`` (2,)."""

Moments = namedtuple("Moments", "mE vE mT vT")
Moments.__doc__ = """Adam's moments of E and theta."""

# Layout of the int64 configuration vector ``cfg``.
N_LAYERS, TIED, RESET, BIDIR, PE_LEN = range(5)


def make_cfg(layers, tied, reset, bidirectional, pe_len):
    """The int64 configuration vector ``[layers, tied, reset, bidirectional, pe_len]``:
    ``pe_len`` is J of the position encoding (0: plain bags of words)."""
    return np.asarray([layers, int(tied), int(reset), int(bidirectional), pe_len], np.int64)


@njit(cache=True)
def unit_layout(dim):
    """The offsets of ``W_h`` (d x 2d, row-major), ``b_h``, ``w_z``, ``w_rf``, ``w_rb``
    (d each) and of the biases ``b_z``, ``b_rf``, ``b_rb`` (one each) in a row of theta,
    and the row's length."""
    bh = 2 * dim * dim
    wz = bh + dim
    wrf = wz + dim
    wrb = wrf + dim
    bz = wrb + dim
    return bh, wz, wrf, wrb, bz, bz + 3


@njit(cache=True)
def _sigmoid(s):
    return 1.0 / (1.0 + np.exp(-s))


@njit(cache=True)
def _embed_sentences(E, data, e, pe_len, kfrac, pe_ab, x, q0):
    """x[t] = the memories of example e (position-encoded, plus the speaker word), q0 =
    its query."""
    sptr, stok, sspk, qsent, mptr, msent = data[:6]
    m0 = mptr[e]
    dim = E.shape[2]
    for t in range(mptr[e + 1] - m0):
        row = x[t]
        row[:] = 0.0
        s = msent[m0 + t]
        _add_sentence(row, E, 0, sptr, stok, s, pe_len, kfrac, pe_ab)
        spk = sspk[s]
        if spk != 0:
            for k in range(dim):
                row[k] += E[0, spk, k]
    q0[:] = 0.0
    _add_sentence(q0, E, 0, sptr, stok, qsent[e], pe_len, kfrac, pe_ab)


@njit(cache=True)
def _forward_one(E, theta, cfg, data, e, acts, bi, kfrac, pe_ab, bits):
    """Forward pass of example e of the :class:`Contexts` ``data`` into row bi of the
    :class:`Activations` ``acts``; returns the number of steps (memories)."""
    mptr = data.mptr
    n = mptr[e + 1] - mptr[e]
    layers = cfg[N_LAYERS]
    dim = E.shape[2]
    bh_o, wz_o, wrf_o, wrb_o, bz_o, _ = unit_layout(dim)
    x, q, c, z, rf, rb, hf, hb = (
        acts.x[bi], acts.q[bi], acts.c[bi], acts.z[bi], acts.rf[bi], acts.rb[bi],
        acts.hf[bi], acts.hb[bi],
    )  # fmt: skip
    _embed_sentences(E, data, e, cfg[PE_LEN], kfrac, pe_ab, x, q[0, 0])
    for t in range(1, n):
        q[0, t] = q[0, 0]
    for layer in range(layers):
        last = layer == layers - 1
        bidir = cfg[BIDIR] != 0 and not last
        reset = cfg[RESET] != 0 and not last
        row = theta[0] if cfg[TIED] != 0 else theta[layer]
        Wh = row[:bh_o].reshape((dim, 2 * dim))
        if layer > 0:
            for t in range(n):
                for k in range(dim):
                    q[layer, t, k] = hf[layer - 1, t, k] + hb[layer - 1, t, k]
        for t in range(n):
            xt = x[t]
            qt = q[layer, t]
            sz = row[bz_o]
            sf = row[bz_o + 1]
            sb = row[bz_o + 2]
            for k in range(dim):
                a = xt[k] * qt[k]
                sz += row[wz_o + k] * a
                sf += row[wrf_o + k] * a
                sb += row[wrb_o + k] * a
            z[layer, t] = _sigmoid(sz)
            rf[layer, t] = _sigmoid(sf) if reset else 1.0
            rb[layer, t] = _sigmoid(sb) if reset and bidir else 1.0
            ct = c[layer, t]
            for i in range(dim):
                wi = Wh[i]
                acc = row[bh_o + i]
                for k in range(dim):
                    acc += wi[k] * xt[k] + wi[dim + k] * qt[k]
                ct[i] = acc
            tanh_inplace(ct, bits)
        for t in range(n):
            g = z[layer, t] * rf[layer, t]
            keep = 1.0 - z[layer, t]
            for k in range(dim):
                prev = hf[layer, t - 1, k] if t > 0 else 0.0
                hf[layer, t, k] = g * c[layer, t, k] + keep * prev
        for t in range(n - 1, -1, -1):
            if not bidir:
                hb[layer, t, :] = 0.0
                continue
            g = z[layer, t] * rb[layer, t]
            keep = 1.0 - z[layer, t]
            for k in range(dim):
                prev = hb[layer, t + 1, k] if t < n - 1 else 0.0
                hb[layer, t, k] = g * c[layer, t, k] + keep * prev
    return n


@njit(cache=True)
def forward_batch(E, theta, cfg, data, batch, acts, U, bits):
    """Forward pass of the examples ``batch`` up to their reduced queries U (len(batch),
    d), the last layer's final state (zero without memories); the intermediate values go
    to the :class:`Activations` ``acts`` for the backward pass."""
    layers = cfg[N_LAYERS]
    dim = E.shape[2]
    kfrac = _kfrac(dim, E)
    pe_ab = np.empty(2, E.dtype)
    for bi in range(batch.shape[0]):
        n = _forward_one(E, theta, cfg, data, batch[bi], acts, bi, kfrac, pe_ab, bits)
        if n > 0:
            U[bi, :] = acts.hf[bi, layers - 1, n - 1]
        else:
            U[bi, :] = 0.0


@njit(cache=True)
def _backward_steps(g_out, h, c, z, r, dc, dz, dr, carry, g, n, forward):
    """The recurrence ``h_t = z_t r_t c_t + (1 - z_t) h_prev`` of one direction, backwards:
    from ``g_out`` (the gradient reaching each h_t from above) adds into dc, dz and dr."""
    dim = c.shape[1]
    carry[:] = 0.0
    for step in range(n):
        t = n - 1 - step if forward else step
        p = t - 1 if forward else t + 1
        has_prev = p >= 0 if forward else p < n
        zt = z[t]
        rt = r[t]
        acc_z = 0.0
        acc_r = 0.0
        for k in range(dim):
            gk = g_out[t, k] + carry[k]
            g[k] = gk
            prev = h[p, k] if has_prev else 0.0
            acc_z += gk * (rt * c[t, k] - prev)
            acc_r += gk * zt * c[t, k]
            dc[t, k] += gk * zt * rt
            carry[k] = gk * (1.0 - zt)
        dz[t] += acc_z
        dr[t] += acc_r


@njit(cache=True)
def _backward_one(E, theta, cfg, data, e, acts, bi, g_top, dE, dtheta, work, kfrac):
    """Backward pass of example e from g_top = dloss/du, accumulating into dE and dtheta;
    ``acts`` row bi holds its forward pass, ``work`` is a :class:`BackScratch`."""
    sptr, stok, sspk, qsent, mptr, msent = data[:6]
    m0 = mptr[e]
    n = mptr[e + 1] - m0
    if n == 0:
        return  # u = 0 whatever the weights
    layers = cfg[N_LAYERS]
    pe_len = cfg[PE_LEN]
    dim = E.shape[2]
    bh_o, wz_o, wrf_o, wrb_o, bz_o, _ = unit_layout(dim)
    x, q, c, z, rf, rb, hf, hb = (
        acts.x[bi], acts.q[bi], acts.c[bi], acts.z[bi], acts.rf[bi], acts.rb[bi],
        acts.hf[bi], acts.hb[bi],
    )  # fmt: skip
    dx, dq, dhf, dhb, dz, drf, drb, dc, carry, g, pe_ab = work
    dx[:n] = 0.0
    dhf[:n] = 0.0
    dhb[:n] = 0.0
    dhf[n - 1] = g_top
    for layer in range(layers - 1, -1, -1):
        last = layer == layers - 1
        bidir = cfg[BIDIR] != 0 and not last
        reset = cfg[RESET] != 0 and not last
        unit = 0 if cfg[TIED] != 0 else layer
        row = theta[unit]
        drow = dtheta[unit]
        Wh = row[:bh_o].reshape((dim, 2 * dim))
        dWh = drow[:bh_o].reshape((dim, 2 * dim))
        dz[:n] = 0.0
        drf[:n] = 0.0
        drb[:n] = 0.0
        dc[:n] = 0.0
        _backward_steps(dhf, hf[layer], c[layer], z[layer], rf[layer], dc, dz, drf, carry, g,
                        n, True)  # fmt: skip
        if bidir:
            _backward_steps(dhb, hb[layer], c[layer], z[layer], rb[layer], dc, dz, drb, carry,
                            g, n, False)  # fmt: skip
        dq[:n] = 0.0
        for t in range(n):
            xt = x[t]
            qt = q[layer, t]
            ct = c[layer, t]
            dxt = dx[t]
            dqt = dq[t]
            for i in range(dim):
                gi = dc[t, i] * (1.0 - ct[i] * ct[i])  # through the tanh
                if gi == 0.0:
                    continue
                drow[bh_o + i] += gi
                wi = Wh[i]
                dwi = dWh[i]
                for k in range(dim):
                    dwi[k] += gi * xt[k]
                    dwi[dim + k] += gi * qt[k]
                    dxt[k] += wi[k] * gi
                    dqt[k] += wi[dim + k] * gi
            zt = z[layer, t]
            gz = dz[t] * zt * (1.0 - zt)
            gf = drf[t] * rf[layer, t] * (1.0 - rf[layer, t]) if reset else 0.0
            gb = drb[t] * rb[layer, t] * (1.0 - rb[layer, t]) if reset and bidir else 0.0
            drow[bz_o] += gz
            drow[bz_o + 1] += gf
            drow[bz_o + 2] += gb
            for k in range(dim):
                a = xt[k] * qt[k]
                drow[wz_o + k] += gz * a
                drow[wrf_o + k] += gf * a
                drow[wrb_o + k] += gb * a
                da = gz * row[wz_o + k] + gf * row[wrf_o + k] + gb * row[wrb_o + k]
                dxt[k] += da * qt[k]
                dqt[k] += da * xt[k]
        if layer > 0:  # q_t = hf_t + hb_t of the layer below
            dhf[:n] = dq[:n]
            if cfg[BIDIR] != 0:
                dhb[:n] = dq[:n]
        else:  # the question, the query of every step
            for t in range(1, n):
                for k in range(dim):
                    dq[0, k] += dq[t, k]
            _scatter_sentence(dE, dq[0], 0, sptr, stok, qsent[e], pe_len, kfrac, pe_ab)
    for t in range(n):
        s = msent[m0 + t]
        _scatter_sentence(dE, dx[t], 0, sptr, stok, s, pe_len, kfrac, pe_ab)
        spk = sspk[s]
        if spk != 0:
            for k in range(dim):
                dE[0, spk, k] += dx[t, k]


@njit(cache=True)
def backward_batch(E, theta, cfg, data, cands, batch, acts, upstream, dE, dtheta):
    """Gradient of the batch loss added into dE and dtheta (zero on entry), from the
    :class:`~irdialog.embed._memn2n_kernels.Upstream` gradients (dU gets the type words'
    share added in place) and the :class:`Activations` of :func:`forward_batch`."""
    cptr, ctok, cw, type_tok = cands.cptr, cands.ctok, cands.cw, cands.type_tok
    U, dU, dWc, gt = upstream
    dim = E.shape[2]
    for j in range(cptr.shape[0] - 1):
        for p in range(cptr[j], cptr[j + 1]):
            v = ctok[p]
            wt = cw[p]
            for k in range(dim):
                dE[1, v, k] += wt * dWc[j, k]
    n_b = batch.shape[0]
    for t in range(type_tok.shape[0]):
        tt = type_tok[t]
        for bi in range(n_b):
            gv = gt[bi, t]
            for k in range(dim):
                dE[1, tt, k] += gv * U[bi, k]
                dU[bi, k] += gv * E[1, tt, k]
    m = acts.x.shape[1]
    dt = E.dtype
    work = BackScratch(
        np.empty((m, dim), dt), np.empty((m, dim), dt), np.empty((m, dim), dt),
        np.empty((m, dim), dt), np.empty(m, dt), np.empty(m, dt), np.empty(m, dt),
        np.empty((m, dim), dt), np.empty(dim, dt), np.empty(dim, dt), np.empty(2, dt),
    )  # fmt: skip
    kfrac = _kfrac(dim, E)
    for bi in range(n_b):
        _backward_one(E, theta, cfg, data, batch[bi], acts, bi, dU[bi], dE, dtheta, work, kfrac)


class Workspace:
    """Scratch arrays of one training run, for batches of up to ``batch_size`` examples
    of at most ``max_mem`` memories (a plain holder on the Python side)."""

    def __init__(self, E, theta, layers, batch_size, max_mem, n_cand, n_types):
        dim, dt = E.shape[2], E.dtype
        m = max(max_mem, 1)
        b = batch_size
        self.acts = Activations(
            np.empty((b, m, dim), dt), np.empty((b, layers, m, dim), dt),
            np.empty((b, layers, m, dim), dt), np.empty((b, layers, m), dt),
            np.empty((b, layers, m), dt), np.empty((b, layers, m), dt),
            np.empty((b, layers, m, dim), dt), np.empty((b, layers, m, dim), dt),
        )  # fmt: skip
        self.U = np.empty((b, dim), dt)
        self.Wc = np.empty((n_cand, dim), dt)
        self.LT = np.empty((n_cand, b), dt)
        self.bits = np.empty(max(n_cand * b, dim), np.int32)
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


@njit(cache=True)
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


@njit(cache=True)
def forward_states(E, theta, cfg, data, rows, gates):
    """The reduced queries (len(rows), d) of the examples ``rows``; when ``gates`` has
    shape (len(rows), layers, max_mem), the update gates z go there."""
    dim = E.shape[2]
    layers = cfg[N_LAYERS]
    m = 1
    for e in rows:
        m = max(m, data.mptr[e + 1] - data.mptr[e])
    ws_acts = Activations(
        np.empty((1, m, dim), E.dtype), np.empty((1, layers, m, dim), E.dtype),
        np.empty((1, layers, m, dim), E.dtype), np.empty((1, layers, m), E.dtype),
        np.empty((1, layers, m), E.dtype), np.empty((1, layers, m), E.dtype),
        np.empty((1, layers, m, dim), E.dtype), np.empty((1, layers, m, dim), E.dtype),
    )  # fmt: skip
    out = np.zeros((rows.shape[0], dim), E.dtype)
    bits = np.empty(dim, np.int32)
    one = np.empty(1, np.int64)
    for i in range(rows.shape[0]):
        one[0] = rows[i]
        forward_batch(E, theta, cfg, data, one, ws_acts, out[i : i + 1], bits)
        if gates.shape[0] == rows.shape[0]:
            n = data.mptr[rows[i] + 1] - data.mptr[rows[i]]
            n = min(n, gates.shape[2])
            gates[i, :, :n] = ws_acts.z[0, :, :n]
    return out


def new_moments(E, theta):
    """Zero Adam moments for E and theta."""
    return Moments(np.zeros_like(E), np.zeros_like(E), np.zeros_like(theta),
                   np.zeros_like(theta))  # fmt: skip


def adam_settings(lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """:class:`~irdialog.embed._optim.AdamSettings` of a step size (Kingma & Ba's
    defaults otherwise)."""
    return AdamSettings(lr, beta1, beta2, eps)
