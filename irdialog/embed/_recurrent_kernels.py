"""Numba kernels of the recurrent encoders (:mod:`irdialog.embed._recurrent`).

One encoder, an LSTM or a plain (tanh) RNN cell, reads a batch of token sequences. The
sequences of a batch are sorted by length, longest first, and packed time-major: at step
t only the ``nact[t]`` sequences still running are computed, as the leading rows of the
step's block, so padding costs nothing (the packed layout of cuDNN and PyTorch's
``pack_padded_sequence``). A row that has ended keeps its last state, which is its final
state.

The input projection of every token of the batch is one matrix product (packed tokens x
``Wx``) before the recurrence; each step then adds ``h @ Wh`` over its active rows; the
backward pass mirrors it, with the weight gradients as two products over all steps at
the end. All products are ``np.dot`` on contiguous 2-D blocks, i.e. BLAS.

LSTM gates are stored in the order i, f, g, o (input, forget, cell, output), as PyTorch::

    z = x Wx + h Wh + b;  i, f, o = sigma(z_i, z_f, z_o);  g = tanh(z_g)
    c' = f c + i g;       h' = o tanh(c')

and the RNN cell is ``h' = tanh(x Wx + h Wh + b)``. Every kernel is generic in the float
type (float32 for training, float64 for the gradient checks). The numpy references are
in :mod:`irdialog.embed._reference`.

Every kernel releases the GIL (``nogil``); a fit with ``n_jobs`` threads runs them on the
parts of each mini-batch in one numba parallel region
(:mod:`irdialog.embed._recurrent_parallel_kernels`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.linalg  # noqa: F401  the BLAS of numba's np.dot, loaded now so that
from numba import njit  # threadpool_limits (training_session) sees and limits it

from ._fastmath import exp_parts, sigmoid_inplace, tanh_inplace
from ._optim import AdamSettings, adam, adam_rows, clip_scale, rows_squared_norm, squared_norm

# The arrays that travel together, as records (numba takes namedtuples of arrays; see
# irdialog.svm._kernels).
Packed = namedtuple("Packed", "nact off ptok")
Packed.__doc__ = """A packed batch (:func:`pack_batch`): the rows active at each step, the
packed positions of each step's rows and the token of each packed position."""

EncoderCache = namedtuple("EncoderCache", "X Hp Cp A Cn")
EncoderCache.__doc__ = """What :func:`encoder_forward` keeps for the backward pass: the
embedded inputs, the states and cells before each step, the gate activations and the tanh
of each new cell (see :func:`encoder_forward`)."""

EncoderGrads = namedtuple("EncoderGrads", "dWx dWh db dEmb mark touched")
EncoderGrads.__doc__ = """The gradients :func:`encoder_backward` adds to, and the embedding
rows it touched: ``mark[v]`` is 1 once row v is listed in ``touched``."""


@njit(cache=True, nogil=True)
def pack_batch(ptr, tok, rows, max_len, reverse=False):
    """Sort the sequences ``rows`` of a ragged token array by length and pack them.

    Sequence r is ``tok[ptr[r]:ptr[r + 1]]``; with ``max_len > 0`` only its last
    ``max_len`` tokens are read; ``reverse`` reads them right to left (the same tokens).

    Returns
    -------
    order : int64 (B,)
        Batch positions sorted by decreasing length (stable): sorted row j is
        ``rows[order[j]]``.
    nact : int64 (T,)
        Rows active at step t (those longer than t), a prefix of the sorted rows.
    off : int64 (T + 1,)
        Step t's rows are packed positions ``off[t] : off[t + 1]``.
    ptok : int32 (N,)
        The token of each packed position.
    """
    B = len(rows)
    lengths = np.empty(B, np.int64)
    for j in range(B):
        r = rows[j]
        n = ptr[r + 1] - ptr[r]
        if max_len > 0 and n > max_len:
            n = max_len
        lengths[j] = n
    order = np.argsort(-lengths, kind="mergesort")
    T = lengths.max() if B > 0 else 0
    nact = np.zeros(T, np.int64)
    for j in range(B):
        for t in range(lengths[j]):
            nact[t] += 1
    off = np.zeros(T + 1, np.int64)
    for t in range(T):
        off[t + 1] = off[t] + nact[t]
    ptok = np.empty(off[T], np.int32)
    for t in range(T):
        base = off[t]
        for j in range(nact[t]):
            r = rows[order[j]]
            if reverse:
                ptok[base + j] = tok[ptr[r + 1] - 1 - t]
            else:
                ptok[base + j] = tok[ptr[r + 1] - lengths[order[j]] + t]
    return order, nact, off, ptok


@njit(cache=True, nogil=True)
def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# error_model="numpy": no zero check on the division, which would keep the loop scalar
@njit(cache=True, nogil=True, error_model="numpy")
def _gates_fast(row, b, pre, post, bits):
    """The float32 gate activations of one row in two vectorised passes (the divisor,
    ``exp(.) + 1``, is never zero):
    ``t = tanh(pre * (row + b))``, then ``(1 + t) / 2`` where ``post`` is 1 (sigmoid
    gates, ``pre`` = 1/2) and ``t`` where it is 0. tanh as
    :func:`~irdialog.embed._fastmath.tanh_inplace`, fused with the bias and the scaling."""
    m = row.shape[0]
    one, two, half = np.float32(1.0), np.float32(2.0), np.float32(0.5)
    for u in range(m):
        row[u], bits[u] = exp_parts(two * pre[u] * (row[u] + b[u]))
    scale = bits[:m].view(np.float32)
    for u in range(m):
        t = one - two / (row[u] * scale[u] + one)  # tanh(v / 2)
        g = post[u]
        row[u] = g * (half + half * t) + (one - g) * t


@njit(cache=True, nogil=True)
def encoder_forward(Emb, Wx, Wh, b, lstm, packed, B):
    """Run the encoder over the :class:`Packed` batch (:func:`pack_batch`) of ``B``
    sequences.

    float32 arrays use the vectorised exponential of :mod:`irdialog.embed._fastmath` for
    the gates, float64 ones ``np.exp`` and ``np.tanh``.

    Returns
    -------
    h : (B, H)
        Final states, in sorted order (zeros for an empty sequence).
    X : (N, E)
        The embedded input of each packed position.
    Hp : (N, H)
        The state before each packed step (h of step t - 1).
    Cp : (N, H)
        LSTM: the cell before each step; RNN: empty.
    A : (N, G H)
        The gate activations (LSTM: i, f, g, o; RNN: the new state).
    Cn : (N, H)
        LSTM: tanh of the new cell; RNN: empty.
    """
    nact, off, ptok = packed
    T = len(nact)
    N = off[T]
    Hd = Wh.shape[0]
    G = Wh.shape[1] // Hd
    dt = Emb.dtype
    fast = Emb.itemsize == 4  # float32
    bits = np.empty(G * Hd, np.int32)
    # sigma(x) = (1 + tanh(x / 2)) / 2: every gate is one tanh, scaled before and after
    pre = np.ones(G * Hd, dt)
    post = np.zeros(G * Hd, dt)  # 0: tanh; 1: sigmoid
    if lstm:
        pre[: 2 * Hd] = 0.5
        pre[3 * Hd :] = 0.5
        post[: 2 * Hd] = 1.0
        post[3 * Hd :] = 1.0
    X = np.empty((N, Emb.shape[1]), dt)
    for k in range(N):
        X[k] = Emb[ptok[k]]
    A = np.dot(X, Wx)  # every step's input projection at once, then the activations
    h = np.zeros((B, Hd), dt)
    c = np.zeros((B, Hd), dt)
    Hp = np.empty((N, Hd), dt)
    if lstm:
        Cp = np.empty((N, Hd), dt)
        Cn = np.empty((N, Hd), dt)
    else:
        Cp = np.empty((0, Hd), dt)
        Cn = np.empty((0, Hd), dt)
    for t in range(T):
        n = nact[t]
        o0 = off[t]
        hn = h[:n]
        Hp[o0 : o0 + n] = hn
        At = A[o0 : o0 + n]
        At += np.dot(hn, Wh)
        for j in range(n):
            k = o0 + j
            row = A[k]
            if fast:
                _gates_fast(row, b, pre, post, bits)
            else:
                for u in range(G * Hd):
                    row[u] += b[u]
                if lstm:
                    sigmoid_inplace(row[: 2 * Hd], bits)
                    tanh_inplace(row[2 * Hd : 3 * Hd], bits)
                    sigmoid_inplace(row[3 * Hd :], bits)
                else:
                    tanh_inplace(row, bits)
            if lstm:
                Cp[k] = c[j]
                cn = Cn[k]
                for u in range(Hd):
                    cu = row[Hd + u] * c[j, u] + row[u] * row[2 * Hd + u]
                    c[j, u] = cu
                    cn[u] = cu
                tanh_inplace(cn, bits)
                for u in range(Hd):
                    h[j, u] = row[3 * Hd + u] * cn[u]
            else:
                h[j] = row
    return h, X, Hp, Cp, A, Cn


@njit(cache=True, nogil=True)
def _touch(v, mark, touched, n_touched):
    """Mark embedding row ``v`` and append it to ``touched`` (holding ``n_touched`` rows)
    the first time it comes; returns the new number of touched rows."""
    if mark[v] == 0:
        mark[v] = 1
        touched[n_touched] = v
        n_touched += 1
    return n_touched


@njit(cache=True, nogil=True)
def encoder_backward(Wx, Wh, lstm, packed, cache, dh_final, grads, n_touched):
    """Backpropagation through time of :func:`encoder_forward`, from the gradient
    ``dh_final`` (B, H, sorted order) of the loss on the final states; ``cache`` is the
    :class:`EncoderCache` of the forward pass.

    Adds to the :class:`EncoderGrads` ``grads``: to ``dWx``, ``dWh``, ``db`` and to the
    rows of ``dEmb`` of the batch's tokens; a token row seen for the first time
    (``mark[v] == 0``) is marked and appended to ``touched``, which held ``n_touched``
    rows. Returns the new number of touched rows.
    """
    nact, off, ptok = packed
    X, Hp, Cp, A, Cn = cache
    dWx, dWh, db, dEmb, mark, touched = grads
    T = len(nact)
    N = off[T]
    Hd = Wh.shape[0]
    G = Wh.shape[1] // Hd
    dt = Wh.dtype
    B = dh_final.shape[0]
    one = np.float32(1.0)  # exact in float64 too, and keeps float32 loops in float32
    dh = dh_final.copy()
    dc = np.zeros((B, Hd), dt)
    dZ = np.empty((N, G * Hd), dt)
    for t in range(T - 1, -1, -1):
        n = nact[t]
        o0 = off[t]
        for j in range(n):
            k = o0 + j
            if lstm:
                for u in range(Hd):
                    ig = A[k, u]
                    fg = A[k, Hd + u]
                    gg = A[k, 2 * Hd + u]
                    og = A[k, 3 * Hd + u]
                    tc = Cn[k, u]
                    dhu = dh[j, u]
                    dcu = dc[j, u] + dhu * og * (one - tc * tc)
                    dZ[k, u] = dcu * gg * ig * (one - ig)
                    dZ[k, Hd + u] = dcu * Cp[k, u] * fg * (one - fg)
                    dZ[k, 2 * Hd + u] = dcu * ig * (one - gg * gg)
                    dZ[k, 3 * Hd + u] = dhu * tc * og * (one - og)
                    dc[j, u] = dcu * fg
            else:
                for u in range(Hd):
                    v = A[k, u]
                    dZ[k, u] = dh[j, u] * (one - v * v)
        dh[:n] = np.dot(dZ[o0 : o0 + n], Wh.T)
    if N == 0:
        return n_touched
    dWx += np.dot(X.T, dZ)
    dWh += np.dot(Hp.T, dZ)
    for k in range(N):
        for u in range(G * Hd):
            db[u] += dZ[k, u]
    dX = np.dot(dZ, Wx.T)
    for k in range(N):
        v = ptok[k]
        n_touched = _touch(v, mark, touched, n_touched)
        dEmb[v] += dX[k]
    return n_touched


@njit(cache=True, nogil=True)
def candidate_matrix(Wout, cptr, ctok, cw):
    """The embedding of each candidate: the weighted sum of its words' rows of ``Wout``."""
    C = np.zeros((len(cptr) - 1, Wout.shape[1]), Wout.dtype)
    for c in range(len(cptr) - 1):
        for p in range(cptr[c], cptr[c + 1]):
            C[c] += cw[p] * Wout[ctok[p]]
    return C


@njit(cache=True, nogil=True)
def reader_loss_grad(h, Wout, cptr, ctok, cw, y, dWout):
    """Softmax cross-entropy of the candidates scored ``h . C[c]`` against the gold ``y``.

    ``h`` and ``y`` are in the same (sorted) order. Adds the gradient of the summed loss
    to ``dWout`` and returns (summed loss, correct answers, dh).
    """
    C = candidate_matrix(Wout, cptr, ctok, cw)
    S = np.dot(h, C.T)
    B, n_c = S.shape
    loss = 0.0
    correct = 0
    for i in range(B):
        m = S[i, 0]
        best = 0
        for c in range(1, n_c):
            if S[i, c] > m:
                m = S[i, c]
                best = c
        correct += best == y[i]
        gold = S[i, y[i]] - m
        z = 0.0
        for c in range(n_c):
            e = np.exp(S[i, c] - m)
            S[i, c] = e
            z += e
        loss += np.log(z) - gold
        for c in range(n_c):
            S[i, c] /= z
        S[i, y[i]] -= 1.0
    dh = np.dot(S, C)
    dC = np.dot(S.T, h)
    for c in range(n_c):
        for p in range(cptr[c], cptr[c + 1]):
            dWout[ctok[p]] += cw[p] * dC[c]
    return loss, correct, dh


@njit(cache=True, nogil=True)
def dual_loss_grad(hc, hr, M, bias, flags):
    """Binary cross-entropy of ``sigma(c^T M r + bias)`` against ``flags`` (1: the true
    response), summed over the pairs. Returns (loss, correct, dhc, dhr, dM, dbias)."""
    MR = np.dot(hr, M.T)  # row i: M r_i
    B = hc.shape[0]
    g = np.empty(B, hc.dtype)
    loss = 0.0
    correct = 0
    for i in range(B):
        s = bias[0]
        for u in range(hc.shape[1]):
            s += hc[i, u] * MR[i, u]
        # log(1 + exp(-s)) for flag 1, log(1 + exp(s)) for flag 0, computed stably
        z = s if flags[i] == 0 else -s
        if z > 0:
            loss += z + np.log1p(np.exp(-z))
        else:
            loss += np.log1p(np.exp(z))
        p = _sigmoid(s)
        g[i] = p - flags[i]
        correct += (s > 0) == (flags[i] == 1)
    G = np.empty_like(hc)
    for i in range(B):
        G[i] = g[i] * hc[i]
    dhc = np.empty_like(hc)
    for i in range(B):
        dhc[i] = g[i] * MR[i]
    dhr = np.dot(G, M)  # row i: g_i M^T c_i
    dM = np.dot(G.T, hr)
    dbias = np.zeros(1, hc.dtype)
    dbias[0] = g.sum()
    return loss, correct, dhc, dhr, dM, dbias


# --------------------------------------------------------------------------- one batch


class Grads:
    """Gradient buffers of one model: dense arrays of the shapes of its parameters, and the
    embedding rows a batch touched (``mark``, ``touched[:n_touched]``) for sparse updates."""

    def __init__(self, params):
        self.dense = {k: np.zeros_like(v) for k, v in params.items()}
        self.mark = np.zeros(params["Emb"].shape[0], np.uint8)
        self.touched = np.zeros(params["Emb"].shape[0], np.int64)
        self.n_touched = 0


# A reading of the sequences by one encoder: the keys of its weights (the word embeddings
# ``Emb`` are shared), the copy of the sequences it reads (a token array may hold every
# sequence more than once, copy k as rows ``k n`` to ``(k + 1) n``), and whether it reads
# right to left. A reader scores from the final states of its readings side by side.
Reading = namedtuple("Reading", "keys copy reverse")
FORWARD = Reading(("Wx", "Wh", "b"), 0, False)
SECOND_KEYS = ("Wx_rev", "Wh_rev", "b_rev")  # the second encoder's weights
RIGHT_TO_LEFT = Reading(SECOND_KEYS, 0, True)  # bidirectional: the same tokens backwards
QUERY_REVERSED = Reading(SECOND_KEYS, 1, False)  # the copy whose queries are reversed


def readings(params, query_reversed=False):
    """The readings of the encoders of ``params``: (FORWARD,), or with the second
    encoder's weights, FORWARD and either RIGHT_TO_LEFT or (``query_reversed``)
    QUERY_REVERSED."""
    if SECOND_KEYS[0] not in params:
        return (FORWARD,)
    return (FORWARD, QUERY_REVERSED if query_reversed else RIGHT_TO_LEFT)


def n_copies(readings):
    """How many copies of the sequences the token array of ``readings`` holds."""
    return 1 + max(r.copy for r in readings)


def encode_batch(params, lstm, ptr, tok, rows, max_len, reading=FORWARD):
    """Pack the sequences ``rows`` and run the encoder of ``reading`` over them (reversed
    with ``reading.reverse``; ``rows`` already name the copy): (final states in the order
    of ``rows``, the cache for :func:`backward_batch`)."""
    order, *packed = pack_batch(ptr, tok, np.asarray(rows, np.int64), max_len, reading.reverse)
    packed = Packed(*packed)
    wx, wh, b = reading.keys
    h, *acts = encoder_forward(
        params["Emb"], params[wx], params[wh], params[b], lstm, packed, len(rows)
    )
    out = np.empty_like(h)
    out[order] = h
    return out, (order, packed, EncoderCache(*acts), reading.keys)


def backward_batch(params, grads, lstm, cache, dh):
    """Add the gradient of the loss whose gradient on the final states (in the order of
    the rows given to :func:`encode_batch`) is ``dh``."""
    order, packed, acts, (wx, wh, b) = cache
    d = grads.dense
    grads.n_touched = encoder_backward(
        params[wx],
        params[wh],
        lstm,
        packed,
        acts,
        np.ascontiguousarray(dh[order]),
        EncoderGrads(d[wx], d[wh], d[b], d["Emb"], grads.mark, grads.touched),
        grads.n_touched,
    )


def encode_states(params, lstm, ptr, tok, rows, max_len, reads=None):
    """The final states of the sequences ``rows`` (numbered within one copy) in every
    reading ``reads`` (default: :func:`readings` of ``params``), side by side. Returns
    (states, the caches for :func:`backward_states`)."""
    reads = readings(params) if reads is None else reads
    n = (len(ptr) - 1) // n_copies(reads)
    rows = np.asarray(rows, np.int64)
    runs = [encode_batch(params, lstm, ptr, tok, rows + r.copy * n, max_len, r) for r in reads]
    if len(runs) == 1:
        return runs[0][0], [runs[0][1]]
    return np.hstack([h for h, _ in runs]), [cache for _, cache in runs]


def backward_states(params, grads, lstm, caches, dh):
    """:func:`backward_batch` of each reading, from ``dh`` on the states of
    :func:`encode_states`."""
    Hd = dh.shape[1] // len(caches)
    for i, cache in enumerate(caches):
        backward_batch(params, grads, lstm, cache, dh[:, i * Hd : (i + 1) * Hd])


def reader_batch(params, grads, lstm, ptr, tok, rows, max_len, cands, y, reads=None):
    """Loss (summed), correct answers and gradients of the reader on the sequences
    ``rows`` with gold candidates ``y``; ``cands`` = (cptr, ctok, cw) bags over words. A
    reader of two readings (``reads``, default :func:`readings` of ``params``) scores
    from both final states."""
    h, caches = encode_states(params, lstm, ptr, tok, rows, max_len, reads)
    loss, correct, dh = reader_loss_grad(h, params["O"], *cands, y, grads.dense["O"])
    backward_states(params, grads, lstm, caches, dh)
    return loss, correct


def dual_batch(params, grads, lstm, ptr, tok, ctx_rows, resp_rows, flags, max_len):
    """Loss (summed), correct decisions and gradients of the dual encoder on the pairs
    (``ctx_rows[i]``, ``resp_rows[i]``) of one ragged token array, encoded as one batch."""
    B = len(ctx_rows)
    rows = np.concatenate((np.asarray(ctx_rows, np.int64), np.asarray(resp_rows, np.int64)))
    h, cache = encode_batch(params, lstm, ptr, tok, rows, max_len)
    loss, correct, dhc, dhr, dM, dbias = dual_loss_grad(
        np.ascontiguousarray(h[:B]), np.ascontiguousarray(h[B:]), params["M"], params["bias"],
        np.asarray(flags, np.int64),
    )  # fmt: skip
    grads.dense["M"] += dM
    grads.dense["bias"] += dbias
    backward_batch(params, grads, lstm, cache, np.concatenate((dhc, dhr)))
    return loss, correct


def apply_adam(params, grads, moments, lr, max_norm, step, b1=0.9, b2=0.999, eps=1e-8):
    """Global-norm clipping of every gradient to ``max_norm`` (None or <= 0: none), then
    one Adam step: dense on every parameter but the embeddings, lazy on the embedding rows
    the batch touched. Zeroes the gradients. Returns the gradient norm before clipping."""
    d = grads.dense
    touched = grads.touched[: grads.n_touched]
    sq = rows_squared_norm(d["Emb"], touched)
    for k, g in d.items():
        if k != "Emb":
            sq += squared_norm(g)
    scale = clip_scale(sq, -1.0 if max_norm is None else float(max_norm))
    opt = AdamSettings(float(lr), b1, b2, eps)
    for k, x in params.items():
        m, v = moments[k]
        if k == "Emb":
            adam_rows(x, d[k], m, v, touched, scale, opt, step)
        else:
            adam(x.reshape(-1), d[k].reshape(-1), m.reshape(-1), v.reshape(-1), scale, opt, step)
            d[k][...] = 0.0
    grads.mark[touched] = 0
    grads.n_touched = 0
    return float(np.sqrt(sq))
