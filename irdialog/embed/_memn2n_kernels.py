"""Numba kernels of :class:`irdialog.embed.MemN2NRanker`: forward, backward and updates.

Pure functions on contiguous arrays and scalars (no estimator objects); the arrays that
travel together come as :func:`collections.namedtuple` records (:class:`Contexts`,
:class:`Candidates`, :class:`Activations`, :class:`Upstream`), and the plain numpy
references the tests compare against are in :mod:`irdialog.embed._reference`. The model is
an end-to-end memory network (Sukhbaatar et al. 2015) written out by hand:

- the embedding matrices are one array ``E`` of shape (n_matrices, n_words, dim); which
  matrix plays B (query), A_k and C_k (memory in/out of hop k) and W (candidates) is given
  by ``cfg`` (see :func:`make_cfg`), so weight tying is just several roles pointing at the
  same matrix, and the gradients of tied roles add up in the same ``dE[p]``;
- a sentence (memory or query) is a run of word ids in a CSR table ``(sptr, stok)``; a
  memory adds its speaker word (``sspk``) and its time word (``mtime``) with weight one,
  while its words are weighted by the position encoding when ``cfg[PE_LEN]`` > 0;
- hop k: ``p = softmax(u_k . a_i)`` (no softmax during linear start), where the empty
  slots of a memory of ``cfg[N_SLOTS]`` slots take part as zero vectors (score 0),
  ``o_k = sum_i p_i c_i``, ``h_k = u_k + o_k`` (``H u_k`` instead of ``u_k`` with the hop
  map), or with a gate (Liu & Perez 2017) ``T_k = sigmoid(W_T u_k + b_T)``,
  ``h_k = o_k * T_k + u_k * (1 - T_k)``, where ``G[g] = [W_T | b_T]`` of shape (d, d + 1)
  is one gate shared by the hops (``cfg[GATE]`` = 1) or the hop's own (2);
  ``u_{k+1} = relu(h_k)`` or ``h_k``;
- candidate j scores ``u_K . (W bag_j + sum_t match_jt W type_t)``, where ``match_jt`` is
  1 when the candidate holds an entity of type t that the context mentions (found through
  the inverted index ``(iptr, icand)`` of candidate words); loss: softmax cross-entropy
  over all candidates, summed over the batch (:func:`softmax_xent`), or over each
  example's gold response and its pool of hard negatives (:func:`pool_softmax_xent`).

Every kernel is generic in the float type: float32 in training, float64 in the gradient
check of the tests. No ``fastmath`` anywhere: these are SGD loops (see CONTRIBUTING.md).
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._fastmath import exp_inplace
from ._optim import (
    AdamSettings,
    adam,
    adam_rows,
    clip_scale,
    rows_squared_norm,
    sgd,
    sgd_rows,
    squared_norm,
)

# The arrays that travel together, as records (numba takes namedtuples of arrays as
# arguments; see irdialog.svm._kernels).
Contexts = namedtuple("Contexts", "sptr stok sspk qsent mptr msent mtime eptr eword etype")
Contexts.__doc__ = """Encoded contexts: the sentences as a CSR table ``(sptr, stok)`` with
the speaker word ``sspk`` of each, the query sentence ``qsent`` of each example, its
memories (CSR ``mptr`` over the sentences ``msent``, oldest first) with the time word
``mtime`` of each, and its typed entities (CSR ``eptr`` over ``eword``, ``etype``)."""

Candidates = namedtuple("Candidates", "cptr ctok cw iptr icand type_tok")
Candidates.__doc__ = """The candidates: their bags (CSR ``cptr`` over the words ``ctok``
with counts ``cw``), the inverted index of candidate words (CSR ``iptr`` over ``icand``)
and the type word of each entity type."""

Activations = namedtuple("Activations", "u h mem prob o gate")
Activations.__doc__ = """The forward pass of a batch, kept for the backward pass: per
example, the controller states ``u`` (B, K+1, d), the pre-activations ``h`` (B, K, d),
the memory embeddings ``mem`` (B, n_mat, M, d), the attention ``prob`` (B, K, M), and with
a gate the memory reads ``o`` and the gate values ``gate`` (B, K, d each)."""

Sentences = namedtuple("Sentences", "used kfrac pe_ab")
Sentences.__doc__ = """What embedding the sentences of an example needs besides the weights:
``used[p]``, whether matrix p embeds memories (:func:`_memory_matrices`), ``kfrac`` (k / d
for k = 1..d) and ``pe_ab``, scratch of two position-encoding coefficients."""

BackScratch = namedtuple("BackScratch", "dmem g gnext dp go dgate")
BackScratch.__doc__ = """Scratch of :func:`_backward_one`: the memory embeddings' gradient
``dmem`` (n_mat, M, d), the controller gradient ``g`` and ``gnext`` (d,), the attention
gradient ``dp`` (M,), and with a gate the gradients of the memory read ``go`` and of the
gate's pre-activation ``dgate`` (d,)."""

Grads = namedtuple("Grads", "dE dH dG")
Grads.__doc__ = """The gradients of the weights E, H and the gates G, as one record."""

Moments = namedtuple("Moments", "mE vE mH vH mG vG")
Moments.__doc__ = """Adam's moments of E, H and the gates G (empty arrays with SGD)."""

Update = namedtuple("Update", "adam use_h use_gate max_norm lr beta1 beta2 eps")
Update.__doc__ = """An optimizer step of :func:`apply_update`: Adam or SGD, whether H and
the gates G are trained, the gradient norm each matrix is clipped to (<= 0: none; all the
gates clip together, as one matrix), the step size and Adam's settings
(:class:`irdialog.embed._optim.AdamSettings`)."""

SoftmaxPools = namedtuple("SoftmaxPools", "indptr indices n_cand")
SoftmaxPools.__doc__ = """The pools of :func:`pool_softmax_xent`: row e of the CSR table
``(indptr, indices)`` holds the rows of the training response table (the ``n_cand``
candidates, then the pools' responses outside them) of example e's pool."""

Upstream = namedtuple("Upstream", "U dU dWc gt")
Upstream.__doc__ = """What the backward pass starts from: the final states ``U`` (B, d)
and the loss gradients with respect to them (``dU``), to the candidate embeddings
(``dWc``) and to the type words' logits (``gt``, (B, n_types))."""

# Layout of the int64 configuration vector ``cfg``.
N_HOPS, B_MAT, W_MAT, PE_LEN, USE_SOFTMAX, USE_H, USE_RELU, N_SLOTS, GATE = range(9)
HEADER = 9
# cfg[GATE]: no gate, one gate for all hops (global tying), one gate per hop.
NO_GATE, GLOBAL_GATE, HOP_GATES = range(3)


def make_cfg(hops, tying, pe_len, softmax, relu, n_slots, gate=NO_GATE):
    """The int64 configuration vector and the number of embedding matrices.

    ``cfg = [hops, b, w, pe_len, use_softmax, use_h, use_relu, n_slots, gate, a_0..a_{K-1},
    c_0..c_{K-1}]``: ``pe_len`` is J of the position encoding (0: plain bags of words),
    ``n_slots`` the memory slots (empty ones join the attention softmax as zero vectors;
    0: none), ``gate`` one of ``NO_GATE``, ``GLOBAL_GATE``, ``HOP_GATES``.

    - ``"adjacent"``: K + 1 matrices; B = A_1 = E[0], C_k = A_{k+1} = E[k], W = C_K = E[K].
    - ``"layerwise"``: 4 matrices; B = E[0], A_k = E[1], C_k = E[2], W = E[3], with the hop
      map H unless there is a gate (the gate replaces ``H u_k + o_k``).
    """
    if tying == "adjacent":
        n_mat, b, w, use_h = hops + 1, 0, hops, 0
        a = list(range(hops))
        c = list(range(1, hops + 1))
    elif tying == "layerwise":
        n_mat, b, w, use_h = 4, 0, 3, 1
        a = [1] * hops
        c = [2] * hops
    else:  # pragma: no cover - validated by the estimator
        raise ValueError(f"unknown weight tying {tying!r}")
    if gate != NO_GATE:
        use_h = 0
    head = [hops, b, w, pe_len, int(softmax), use_h, int(relu), n_slots, gate]
    return np.asarray(head + a + c, dtype=np.int64), n_mat


@njit(cache=True, nogil=True)
def _pe_coef(j, pe_len, dim, pe_ab):
    """Position-encoding weight of word j (from 0) as pe_ab[0] - (k+1)/d * pe_ab[1].

    l_kj = 1 + 4 (k - (d+1)/2)(j - (J+1)/2) / (d J), j and k counted from 1 and J =
    ``pe_len`` for every sentence: the form of the authors' MemN2N code, about twice the
    l_kj = (1 - j/J) - (k/d)(1 - 2j/J) of Sukhbaatar et al. (section 4.1) with one J.
    """
    c = 4.0 * (j + 1.0 - (pe_len + 1.0) / 2.0) / pe_len
    pe_ab[0] = 1.0 - c * (dim + 1.0) / (2.0 * dim)
    pe_ab[1] = -c


@njit(cache=True, nogil=True)
def _add_sentence(out, E, p, sptr, stok, s, pe_len, kfrac, pe_ab):
    """out += sum_j l_j * E[p, w_j] over the words of sentence s (l_j = 1 if pe_len = 0)."""
    start = sptr[s]
    n = sptr[s + 1] - start
    dim = out.shape[0]
    for j in range(n):
        w = stok[start + j]
        if w == 0:
            continue
        if pe_len > 0:
            _pe_coef(j, pe_len, dim, pe_ab)
            a = pe_ab[0]
            b = pe_ab[1]
            for k in range(dim):
                out[k] += (a - kfrac[k] * b) * E[p, w, k]
        else:
            for k in range(dim):
                out[k] += E[p, w, k]


@njit(cache=True, nogil=True)
def _scatter_sentence(dE, g, p, sptr, stok, s, pe_len, kfrac, pe_ab):
    """The adjoint of :func:`_add_sentence`: dE[p, w_j] += l_j * g."""
    start = sptr[s]
    n = sptr[s + 1] - start
    dim = g.shape[0]
    for j in range(n):
        w = stok[start + j]
        if w == 0:
            continue
        if pe_len > 0:
            _pe_coef(j, pe_len, dim, pe_ab)
            a = pe_ab[0]
            b = pe_ab[1]
            for k in range(dim):
                dE[p, w, k] += (a - kfrac[k] * b) * g[k]
        else:
            for k in range(dim):
                dE[p, w, k] += g[k]


@njit(cache=True, nogil=True)
def _kfrac(dim, dtype_like):
    out = np.empty(dim, dtype=dtype_like.dtype)
    for k in range(dim):
        out[k] = (k + 1.0) / dim
    return out


@njit(cache=True, nogil=True)
def _sentences(E, cfg):
    """The :class:`Sentences` record of the weights E under ``cfg``."""
    dim = E.shape[2]
    return Sentences(_memory_matrices(cfg, E.shape[0]), _kfrac(dim, E), np.empty(2, E.dtype))


@njit(cache=True, nogil=True)
def _memory_matrices(cfg, n_mat):
    """used[p]: whether matrix p embeds memories (as some A_k or C_k)."""
    hops = cfg[N_HOPS]
    used = np.zeros(n_mat, dtype=np.bool_)
    for k in range(hops):
        used[cfg[HEADER + k]] = True
        used[cfg[HEADER + hops + k]] = True
    return used


def n_gates(cfg):
    """The number of gates ``G`` holds under ``cfg``."""
    return (0, 1, int(cfg[N_HOPS]))[int(cfg[GATE])]


@njit(cache=True, nogil=True)
def _gate_index(cfg, hop):
    return 0 if cfg[GATE] == GLOBAL_GATE else hop


@njit(cache=True, nogil=True)
def _forward_one(E, H, G, cfg, sents, data, e, acts, bi):
    """Forward pass of example e of the :class:`Contexts` ``data``, keeping what the
    backward pass needs in row bi of the :class:`Activations` ``acts``:

    u: (K+1, d) controller states; hpre: (K, d) states before the nonlinearity;
    mem: (n_mat, M, d) memory embeddings per matrix; prob: (K, M) attention.
    """
    sptr, stok, sspk, qsent, mptr, msent, mtime = data[:7]
    used, kfrac, pe_ab = sents
    qs, m0, m1 = qsent[e], mptr[e], mptr[e + 1]
    u, hpre, mem, prob = acts.u[bi], acts.h[bi], acts.mem[bi], acts.prob[bi]
    hops = cfg[N_HOPS]
    pe_len = cfg[PE_LEN]
    dim = E.shape[2]
    n_mem = m1 - m0
    u[0, :] = 0.0
    _add_sentence(u[0], E, cfg[B_MAT], sptr, stok, qs, pe_len, kfrac, pe_ab)
    for p in range(E.shape[0]):
        if not used[p]:
            continue
        for i in range(n_mem):
            row = mem[p, i]
            row[:] = 0.0
            s = msent[m0 + i]
            _add_sentence(row, E, p, sptr, stok, s, pe_len, kfrac, pe_ab)
            spk = sspk[s]
            if spk != 0:
                for k in range(dim):
                    row[k] += E[p, spk, k]
            t = mtime[m0 + i]
            if t != 0:
                for k in range(dim):
                    row[k] += E[p, t, k]
    for hop in range(hops):
        a = cfg[HEADER + hop]
        c = cfg[HEADER + hops + hop]
        uk = u[hop]
        pk = prob[hop]
        zmax = -np.inf
        for i in range(n_mem):
            z = 0.0
            for k in range(dim):
                z += uk[k] * mem[a, i, k]
            pk[i] = z
            if z > zmax:
                zmax = z
        if cfg[USE_SOFTMAX] != 0 and n_mem > 0:
            # empty slots up to N_SLOTS are zero vectors: score 0, nothing read
            n_pad = max(cfg[N_SLOTS] - n_mem, 0)
            if n_pad > 0 and zmax < 0.0:
                zmax = 0.0
            total = n_pad * np.exp(-zmax)
            for i in range(n_mem):
                e = np.exp(pk[i] - zmax)
                pk[i] = e
                total += e
            for i in range(n_mem):
                pk[i] /= total
        h = hpre[hop]
        if cfg[GATE] != NO_GATE:
            _gated_update(G[_gate_index(cfg, hop)], uk, pk, mem[c], n_mem, acts.o[bi, hop],
                          acts.gate[bi, hop], h)  # fmt: skip
        else:
            if cfg[USE_H] != 0:
                for r in range(dim):
                    acc = 0.0
                    for k in range(dim):
                        acc += H[r, k] * uk[k]
                    h[r] = acc
            else:
                h[:] = uk
            for i in range(n_mem):
                pi = pk[i]
                for k in range(dim):
                    h[k] += pi * mem[c, i, k]
        nxt = u[hop + 1]
        if cfg[USE_RELU] != 0:
            for k in range(dim):
                nxt[k] = h[k] if h[k] > 0.0 else 0.0
        else:
            nxt[:] = h


@njit(cache=True, nogil=True)
def _gated_update(gw, u, p, mem_c, n_mem, o, t, h):
    """h = o * t + u * (1 - t): the memory read o = sum_i p_i mem_c[i] and the gate
    t = sigmoid(W u + b), ``gw = [W | b]``, all kept for the backward pass."""
    dim = u.shape[0]
    o[:] = 0.0
    for i in range(n_mem):
        pi = p[i]
        for k in range(dim):
            o[k] += pi * mem_c[i, k]
    for r in range(dim):
        z = gw[r, dim]
        for k in range(dim):
            z += gw[r, k] * u[k]
        t[r] = 1.0 / (1.0 + np.exp(-z))
        h[r] = o[r] * t[r] + u[r] * (1.0 - t[r])


@njit(cache=True, nogil=True)
def _gated_backward(gw, dgw, u, o, t, g, gnext, go, dz):
    """The adjoint of :func:`_gated_update` from g = dloss/dh: the memory read's gradient
    into go, the controller's into gnext (set), the gate's into dgw (added)."""
    dim = u.shape[0]
    for r in range(dim):
        go[r] = g[r] * t[r]
        dz[r] = g[r] * (o[r] - u[r]) * t[r] * (1.0 - t[r])
        gnext[r] = g[r] * (1.0 - t[r])
    for r in range(dim):
        dzr = dz[r]
        dgw[r, dim] += dzr
        for k in range(dim):
            dgw[r, k] += dzr * u[k]
    for k in range(dim):
        acc = 0.0
        for r in range(dim):
            acc += gw[r, k] * dz[r]
        gnext[k] += acc


@njit(cache=True, nogil=True)
def _backward_one(E, H, G, cfg, sents, data, e, acts, bi, g_top, grads, work):
    """Backward pass of example e from g_top = dloss/du_K, accumulating into the
    :class:`Grads` ``grads``; ``acts`` row bi holds its forward pass, ``work`` is a
    :class:`BackScratch`."""
    dE, dH, dG = grads
    sptr, stok, sspk, qsent, mptr, msent, mtime = data[:7]
    used, kfrac, pe_ab = sents
    qs, m0, m1 = qsent[e], mptr[e], mptr[e + 1]
    u, hpre, mem, prob = acts.u[bi], acts.h[bi], acts.mem[bi], acts.prob[bi]
    dmem, g, gnext, dp, go, dgate = work
    hops = cfg[N_HOPS]
    pe_len = cfg[PE_LEN]
    dim = E.shape[2]
    n_mem = m1 - m0
    for p in range(E.shape[0]):
        if used[p]:
            for i in range(n_mem):
                dmem[p, i, :] = 0.0
    g[:] = g_top
    for hop in range(hops - 1, -1, -1):
        a = cfg[HEADER + hop]
        c = cfg[HEADER + hops + hop]
        uk = u[hop]
        pk = prob[hop]
        if cfg[USE_RELU] != 0:
            h = hpre[hop]
            for k in range(dim):
                if h[k] <= 0.0:
                    g[k] = 0.0
        # h = (H u | u) + o, or o * T + u * (1 - T); o = sum_i p_i c_i gets g_read
        g_read = g
        if cfg[GATE] != NO_GATE:
            gi = _gate_index(cfg, hop)
            _gated_backward(G[gi], dG[gi], uk, acts.o[bi, hop], acts.gate[bi, hop], g, gnext,
                            go, dgate)  # fmt: skip
            g_read = go
        elif cfg[USE_H] != 0:
            for r in range(dim):
                gr = g[r]
                for k in range(dim):
                    dH[r, k] += gr * uk[k]
            for k in range(dim):
                acc = 0.0
                for r in range(dim):
                    acc += H[r, k] * g[r]
                gnext[k] = acc
        else:
            gnext[:] = g
        for i in range(n_mem):
            acc = 0.0
            pi = pk[i]
            for k in range(dim):
                acc += g_read[k] * mem[c, i, k]
                dmem[c, i, k] += pi * g_read[k]
            dp[i] = acc
        if cfg[USE_SOFTMAX] != 0:
            dot = 0.0
            for i in range(n_mem):
                dot += pk[i] * dp[i]
            for i in range(n_mem):
                dp[i] = pk[i] * (dp[i] - dot)
        # z_i = u . a_i
        for i in range(n_mem):
            dz = dp[i]
            for k in range(dim):
                gnext[k] += dz * mem[a, i, k]
                dmem[a, i, k] += dz * uk[k]
        g[:] = gnext
    _scatter_sentence(dE, g, cfg[B_MAT], sptr, stok, qs, pe_len, kfrac, pe_ab)
    for p in range(E.shape[0]):
        if not used[p]:
            continue
        for i in range(n_mem):
            row = dmem[p, i]
            s = msent[m0 + i]
            _scatter_sentence(dE, row, p, sptr, stok, s, pe_len, kfrac, pe_ab)
            spk = sspk[s]
            if spk != 0:
                for k in range(dim):
                    dE[p, spk, k] += row[k]
            t = mtime[m0 + i]
            if t != 0:
                for k in range(dim):
                    dE[p, t, k] += row[k]


@njit(cache=True, nogil=True)
def candidate_embeddings(E, w, cptr, ctok, cw, out):
    """out[j] = sum of E[w, word] * count over the words of candidate j."""
    dim = E.shape[2]
    for j in range(cptr.shape[0] - 1):
        row = out[j]
        row[:] = 0.0
        for q in range(cptr[j], cptr[j + 1]):
            v = ctok[q]
            wt = cw[q]
            for k in range(dim):
                row[k] += wt * E[w, v, k]


@njit(cache=True, nogil=True)
def candidate_backward(E, w, cands, upstream, n_b, dE):
    """The adjoint of the candidates' embeddings (:func:`candidate_embeddings` of the
    matrix w) and of the type words' logits of the batch's n_b examples: their gradients
    (``upstream.dWc``, ``upstream.gt``) added into dE[w], and the type words' share into
    ``upstream.dU``."""
    scatter_candidates(dE[w], cands.cptr, cands.ctok, cands.cw, upstream.dWc)
    type_words_backward(E, w, cands.type_tok, upstream, n_b, dE)


@njit(cache=True, nogil=True)
def scatter_candidates(dW, cptr, ctok, cw, dWc):
    """dW[word] += count * dWc[j] over the words of each candidate j of the CSR
    ``cptr, ctok, cw``: the candidate embeddings' gradient into their words' rows."""
    dim = dW.shape[1]
    for j in range(cptr.shape[0] - 1):
        for q in range(cptr[j], cptr[j + 1]):
            v = ctok[q]
            wt = cw[q]
            for k in range(dim):
                dW[v, k] += wt * dWc[j, k]


@njit(cache=True, nogil=True)
def type_words_backward(E, w, type_tok, upstream, n_b, dE):
    """The type words' logits' gradient ``upstream.gt`` of n_b examples added into dE[w],
    and their share into ``upstream.dU``."""
    U, dU, _, gt = upstream
    dim = E.shape[2]
    for t in range(type_tok.shape[0]):
        tt = type_tok[t]
        for bi in range(n_b):
            g = gt[bi, t]
            for k in range(dim):
                dE[w, tt, k] += g * U[bi, k]
                dU[bi, k] += g * E[w, tt, k]


@njit(cache=True, nogil=True)
def _match_pairs(e, eptr, eword, etype, iptr, icand, n_types, mark, stamp, pair_c, pair_t):
    """The distinct (candidate, type) matches of example e; returns how many.

    A candidate matches type t when it holds a word that example e mentions as an entity
    of type t. ``mark`` (n_candidates * n_types) must hold no ``stamp`` on entry.
    """
    n = 0
    for q in range(eptr[e], eptr[e + 1]):
        v = eword[q]
        t = etype[q]
        for r in range(iptr[v], iptr[v + 1]):
            c = icand[r]
            slot = c * n_types + t
            if mark[slot] != stamp:
                mark[slot] = stamp
                pair_c[n] = c
                pair_t[n] = t
                n += 1
    return n


@njit(cache=True, nogil=True)
def forward_batch(E, H, G, cfg, data, batch, acts, U):
    """Forward pass of the examples ``batch`` of the :class:`Contexts` ``data`` up to
    their final states U (len(batch), d).

    Per-example intermediate values go to the :class:`Activations` ``acts``, for the
    backward pass.
    """
    hops = cfg[N_HOPS]
    sents = _sentences(E, cfg)
    for bi in range(batch.shape[0]):
        _forward_one(E, H, G, cfg, sents, data, batch[bi], acts, bi)
        U[bi, :] = acts.u[bi, hops]


@njit(cache=True, nogil=True)
def softmax_xent(LT, U, E, w, data, cands, batch, y, mark, stamp, gt, bits):
    """Softmax cross-entropy over the transposed logits LT (n_candidates, B), in place.

    Adds the match-type scores to LT, then overwrites LT with dloss/dlogits (softmax minus
    one-hot) and gt (B, n_types) with each type word's summed logit gradient. ``bits`` is
    an int32 scratch at least LT's size for
    :func:`~irdialog.embed._fastmath.exp_inplace` (the polynomial for float32, ``np.exp``
    for float64). Returns (summed loss, n_correct, next stamp).
    """
    n_cand, n_b = LT.shape
    stamp = _add_match_logits(LT, U, E, w, data, cands, batch, mark, stamp)
    zmax = LT[0].copy()
    best = np.zeros(n_b, dtype=np.int64)
    for c in range(1, n_cand):
        row = LT[c]
        for bi in range(n_b):
            if row[bi] > zmax[bi]:
                zmax[bi] = row[bi]
                best[bi] = c
    loss = 0.0
    n_correct = 0
    for bi in range(n_b):
        target = y[batch[bi]]
        loss -= LT[target, bi] - zmax[bi]
        if best[bi] == target:
            n_correct += 1
    for c in range(n_cand):
        row = LT[c]
        for bi in range(n_b):
            row[bi] -= zmax[bi]
    exp_inplace(LT.reshape(LT.size), bits[: LT.size])
    total = np.zeros(n_b, dtype=np.float64)
    for c in range(n_cand):
        row = LT[c]
        for bi in range(n_b):
            total[bi] += row[bi]
    inv = np.empty(n_b, dtype=LT.dtype)
    for bi in range(n_b):
        loss += np.log(total[bi])
        inv[bi] = 1.0 / total[bi]
    for c in range(n_cand):
        row = LT[c]
        for bi in range(n_b):
            row[bi] *= inv[bi]
    for bi in range(n_b):
        LT[y[batch[bi]], bi] -= 1.0
    stamp = _match_logit_grads(LT, data, cands, batch, mark, stamp, gt)
    return loss, n_correct, stamp


@njit(cache=True, nogil=True)
def _add_match_logits(LT, U, E, w, data, cands, batch, mark, stamp):
    """Add to the transposed logits LT (n_candidates, B) the match-type scores of the
    examples ``batch`` (the logit of each type word, where a candidate matches it).
    Returns the next stamp of ``mark``."""
    type_tok = cands.type_tok
    n_cand, n_b = LT.shape
    n_types = type_tok.shape[0]
    if n_types == 0:
        return stamp
    dim = U.shape[1]
    pair_c = np.empty(n_cand * n_types, dtype=np.int64)
    pair_t = np.empty(n_cand * n_types, dtype=np.int64)
    st = np.empty(n_types, dtype=LT.dtype)
    for bi in range(n_b):
        for t in range(n_types):
            acc = 0.0
            for k in range(dim):
                acc += U[bi, k] * E[w, type_tok[t], k]
            st[t] = acc
        n_pairs = _match_pairs(
            batch[bi], data.eptr, data.eword, data.etype, cands.iptr, cands.icand, n_types,
            mark, stamp, pair_c, pair_t,
        )  # fmt: skip
        stamp += 1
        for q in range(n_pairs):
            LT[pair_c[q], bi] += st[pair_t[q]]
    return stamp


@njit(cache=True, nogil=True)
def _match_logit_grads(LT, data, cands, batch, mark, stamp, gt):
    """gt (B, n_types): each type word's summed logit gradient, from the logits' gradient
    LT (n_candidates, B) at the candidates that match it. Returns the next stamp."""
    n_cand, n_b = LT.shape
    n_types = cands.type_tok.shape[0]
    if n_types == 0:
        return stamp
    pair_c = np.empty(n_cand * n_types, dtype=np.int64)
    pair_t = np.empty(n_cand * n_types, dtype=np.int64)
    for bi in range(n_b):
        n_pairs = _match_pairs(
            batch[bi], data.eptr, data.eword, data.etype, cands.iptr, cands.icand, n_types,
            mark, stamp, pair_c, pair_t,
        )  # fmt: skip
        stamp += 1
        gt[bi, :] = 0.0
        for q in range(n_pairs):
            gt[bi, pair_t[q]] += LT[pair_c[q], bi]
    return stamp


@njit(cache=True, nogil=True)
def pool_rows(batch, y, pools, n_rows):
    """The rows of the training response table (n_rows of them) that the softmaxes of the
    examples ``batch`` read: each example's gold response ``y[e]`` and its pool's rows in
    the :class:`SoftmaxPools` ``pools``, or the candidates when its pool is empty.

    Returns (rows, pos): the rows in increasing order, and pos (n_rows) the index of each
    row among them (-1 for a row no softmax reads).
    """
    needed = -2
    pos = np.full(n_rows, -1, dtype=np.int64)
    for bi in range(batch.shape[0]):
        e = batch[bi]
        p0, p1 = pools.indptr[e], pools.indptr[e + 1]
        if p1 > p0:
            pos[y[e]] = needed
            for q in range(p0, p1):
                pos[pools.indices[q]] = needed
        else:
            pos[: pools.n_cand] = needed
    rows = np.empty(n_rows, dtype=np.int64)
    n = 0
    for r in range(n_rows):
        if pos[r] == needed:
            pos[r] = n
            rows[n] = r
            n += 1
    return rows[:n], pos


@njit(cache=True, nogil=True)
def gather_rows(cptr, ctok, cw, rows):
    """The CSR table ``(cptr, ctok, cw)`` cut down to its ``rows``, in their order."""
    ptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    for i in range(rows.shape[0]):
        ptr[i + 1] = ptr[i] + cptr[rows[i] + 1] - cptr[rows[i]]
    tok = np.empty(ptr[-1], dtype=ctok.dtype)
    wt = np.empty(ptr[-1], dtype=cw.dtype)
    for i in range(rows.shape[0]):
        a, b = cptr[rows[i]], cptr[rows[i] + 1]
        tok[ptr[i] : ptr[i + 1]] = ctok[a:b]
        wt[ptr[i] : ptr[i + 1]] = cw[a:b]
    return ptr, tok, wt


@njit(cache=True, nogil=True)
def _pool_match_pairs(e, data, cands, mark, stamp, pos, pair_c, pair_t):
    """:func:`_match_pairs` of example e with each candidate given as its index among the
    rows of a batch (``pos``), the candidates outside them left out. Returns how many."""
    n_types = cands.type_tok.shape[0]
    n_all = _match_pairs(
        e, data.eptr, data.eword, data.etype, cands.iptr, cands.icand, n_types, mark, stamp,
        pair_c, pair_t,
    )  # fmt: skip
    n = 0
    for q in range(n_all):
        r = pos[pair_c[q]]
        if r >= 0:
            pair_c[n] = r
            pair_t[n] = pair_t[q]
            n += 1
    return n


@njit(cache=True, nogil=True)
def pool_softmax_xent(LT, U, W, data, cands, batch, y, mark, stamp, gt, pools, pos):
    """:func:`softmax_xent` over each example's gold response and its pool of negatives:
    a sampled softmax over hard negatives. LT (n_rows, B) holds the logits of the rows of
    the training response table (the ``pools.n_cand`` candidates, then the pools'
    responses outside them) that the batch reads, row r of the table at LT's row
    ``pos[r]`` (:func:`pool_rows`); example e's softmax runs over ``y[e]`` and the rows of
    its pool in the :class:`SoftmaxPools` ``pools`` (each once), or over the candidates
    when that pool is empty; W is the answer matrix (the type words' embeddings). LT
    becomes the logits' gradient (zero outside the softmax), gt the type words'. Returns
    (summed loss, n_correct, next stamp): an example is correct when its gold response
    has the highest logit of its softmax."""
    n_rows, n_b = LT.shape
    n_types = cands.type_tok.shape[0]
    pair_c = np.empty(pos.shape[0] * n_types, dtype=np.int64)
    pair_t = np.empty(pos.shape[0] * n_types, dtype=np.int64)
    st = np.empty(n_types, dtype=LT.dtype)
    for bi in range(n_b if n_types > 0 else 0):  # the match types' logits
        for t in range(n_types):
            acc = 0.0
            for k in range(U.shape[1]):
                acc += U[bi, k] * W[cands.type_tok[t], k]
            st[t] = acc
        n_pairs = _pool_match_pairs(batch[bi], data, cands, mark, stamp, pos, pair_c, pair_t)
        stamp += 1
        for q in range(n_pairs):
            LT[pair_c[q], bi] += st[pair_t[q]]
    members = np.empty(n_rows, dtype=np.int64)
    prob = np.empty(n_rows, dtype=LT.dtype)
    seen = np.full(n_rows, -1, dtype=np.int64)
    loss = 0.0
    n_correct = 0
    for bi in range(n_b):
        e = batch[bi]
        target = pos[y[e]]
        p0, p1 = pools.indptr[e], pools.indptr[e + 1]
        n = 0
        if p1 > p0:  # the gold response, then the pool's responses, each once
            members[0] = target
            seen[target] = bi
            n = 1
            for q in range(p0, p1):
                c = pos[pools.indices[q]]
                if seen[c] != bi:
                    seen[c] = bi
                    members[n] = c
                    n += 1
        else:
            for c in range(pools.n_cand):
                members[n] = pos[c]
                n += 1
        zmax = LT[members[0], bi]
        best = members[0]
        for q in range(1, n):
            if LT[members[q], bi] > zmax:
                zmax = LT[members[q], bi]
                best = members[q]
        if best == target:
            n_correct += 1
        total = 0.0
        for q in range(n):
            prob[q] = np.exp(LT[members[q], bi] - zmax)
            total += prob[q]
        loss += np.log(total) - (LT[target, bi] - zmax)
        for c in range(n_rows):  # softmax minus one-hot over the members, zero elsewhere
            LT[c, bi] = 0.0
        for q in range(n):
            LT[members[q], bi] = prob[q] / total
        LT[target, bi] -= 1.0
    for bi in range(n_b if n_types > 0 else 0):  # the type words' logit gradients
        n_pairs = _pool_match_pairs(batch[bi], data, cands, mark, stamp, pos, pair_c, pair_t)
        stamp += 1
        gt[bi, :] = 0.0
        for q in range(n_pairs):
            gt[bi, pair_t[q]] += LT[pair_c[q], bi]
    return loss, n_correct, stamp


@njit(cache=True, nogil=True)
def backward_examples(E, H, G, cfg, data, cands, batch, acts, upstream, dE, dH, dG):
    """The type words' and the examples' share of the batch loss's gradient, added into
    dE, dH and dG, which must be zero on entry (:func:`batch_loss_grad` zeroes them, or
    :func:`apply_update_rows` leaves them so); the candidates' words get theirs from
    :func:`scatter_candidates`.

    From the :class:`Upstream` gradients: dU = dloss/dU and gt (the type words' logit
    gradients); dU gets the type words' share added in place. ``acts`` are the
    :class:`Activations` of :func:`forward_batch`."""
    dU = upstream.dU
    n_mat, _, dim = E.shape
    n_b = batch.shape[0]
    type_words_backward(E, cfg[W_MAT], cands.type_tok, upstream, n_b, dE)
    sents = _sentences(E, cfg)
    grads = Grads(dE, dH, dG)
    max_mem = acts.prob.shape[2]
    work = BackScratch(
        np.empty((n_mat, max_mem, dim), dtype=E.dtype),
        np.empty(dim, dtype=E.dtype),
        np.empty(dim, dtype=E.dtype),
        np.empty(max_mem, dtype=E.dtype),
        np.empty(dim, dtype=E.dtype),
        np.empty(dim, dtype=E.dtype),
    )
    for bi in range(n_b):
        _backward_one(E, H, G, cfg, sents, data, batch[bi], acts, bi, dU[bi], grads, work)


class Workspace:
    """Scratch arrays of one training run, for batches of up to ``batch_size`` examples.

    A plain holder on the Python side (kernels get its arrays); ``max_mem`` is the largest
    number of memories of any example, ``n_gates`` the gates of ``G``. With ``lazy``, the
    gradient is zeroed by :func:`apply_update_rows` at the rows it updates, instead of in
    full before each batch.
    """

    def __init__(
        self, n_mat, n_words, dim, hops, batch_size, max_mem, n_cand, n_types, dtype, lazy=False,
        n_gates=0,
    ):  # fmt: skip
        m = max(max_mem, 1)
        self.u = np.empty((batch_size, hops + 1, dim), dtype)
        self.h = np.empty((batch_size, hops, dim), dtype)
        n_gated = batch_size if n_gates else 0  # the gated hops' reads and gate values
        self.o = np.empty((n_gated, hops, dim), dtype)
        self.gate = np.empty((n_gated, hops, dim), dtype)
        self.mem = np.empty((batch_size, n_mat, m, dim), dtype)
        self.prob = np.empty((batch_size, hops, m), dtype)
        self.U = np.empty((batch_size, dim), dtype)
        self.Wc = np.empty((n_cand, dim), dtype)
        self.LT = np.empty((n_cand, batch_size), dtype)
        self.bits = np.empty(n_cand * batch_size, np.int32)
        self.gt = np.zeros((batch_size, max(n_types, 1)), dtype)
        self.mark = np.full(n_cand * max(n_types, 1), -1, dtype=np.int64)
        self.stamp = 0
        self.dE = np.zeros((n_mat, n_words, dim), dtype)
        self.dH = np.zeros((dim, dim), dtype)
        self.dG = np.zeros((n_gates, dim, dim + 1), dtype)
        self.lazy = lazy
        self.row_mark = np.zeros(n_words, np.int64)  # batch_rows' stamps
        self.row_stamp = 0
        self.rows = np.empty(n_words, np.int64)
        self.w_rows = np.empty(n_words, np.int64)


def batch_loss_grad(E, H, G, cfg, data, cands, y, batch, ws, pools=None):
    """Summed softmax cross-entropy of the examples ``batch`` and its gradient.

    The training step without the update: the kernels above around three dense products
    done by numpy's BLAS (several times faster here than numba's ``np.dot``, which calls
    scipy's BLAS). ``data`` are the :class:`Contexts`, ``cands`` the :class:`Candidates`.
    With ``pools`` (:class:`SoftmaxPools`), each example's softmax runs over its gold
    response and its pool (:func:`pool_softmax_xent`; ``cands`` then holds the
    candidates and the pools' responses outside them), and only the rows those softmaxes
    read are embedded and scored (:func:`pool_rows`).
    The gradient is left in ``ws.dE``, ``ws.dH`` and ``ws.dG``. Returns (loss, n_correct).
    """
    nb = batch.shape[0]
    w = int(cfg[W_MAT])
    U = ws.U[:nb]
    acts = Activations(ws.u, ws.h, ws.mem, ws.prob, ws.o, ws.gate)
    forward_batch(E, H, G, cfg, data, batch, acts, U)
    if pools is None:
        Wc, bags = ws.Wc, cands[:3]
    else:
        rows, pos = pool_rows(batch, y, pools, ws.Wc.shape[0])
        Wc, bags = ws.Wc[: rows.shape[0]], gather_rows(*cands[:3], rows)
    candidate_embeddings(E, w, *bags, Wc)
    LT = ws.LT[: Wc.shape[0]] if nb == ws.LT.shape[1] else np.empty((Wc.shape[0], nb), E.dtype)
    np.matmul(Wc, U.T, out=LT)
    gt = ws.gt[:nb]
    if pools is None:
        loss, n_correct, ws.stamp = softmax_xent(
            LT, U, E, w, data, cands, batch, y, ws.mark, ws.stamp, gt, ws.bits
        )
    else:
        loss, n_correct, ws.stamp = pool_softmax_xent(
            LT, U, E[w], data, cands, batch, y, ws.mark, ws.stamp, gt, pools, pos
        )
    dU = LT.T @ Wc
    dWc = LT @ U
    if not ws.lazy:
        ws.dE[:] = 0.0
    ws.dH[:] = 0.0
    ws.dG[:] = 0.0
    upstream = Upstream(U, dU, dWc, gt)
    scatter_candidates(ws.dE[w], *bags, dWc)
    backward_examples(E, H, G, cfg, data, cands, batch, acts, upstream, ws.dE, ws.dH, ws.dG)
    return loss, n_correct


@njit(cache=True, nogil=True)
def apply_update(E, H, G, dE, dH, dG, moments, update, step):
    """One optimizer step from the batch gradient (dE, dH, dG), clipped per matrix.

    ``update`` is an :class:`Update`: SGD, ``x -= lr * g``, or Adam with the
    :class:`Moments` ``moments`` and ``step`` counting from 1 (the steps of
    :mod:`irdialog.embed._optim`). The nil word (row 0 of every matrix) is held at zero.
    """
    opt = AdamSettings(update.lr, update.beta1, update.beta2, update.eps)
    mE, vE = moments.mE, moments.vE
    for p in range(E.shape[0]):
        scale = clip_scale(squared_norm(dE[p]), update.max_norm)
        if update.adam:
            adam(E[p].ravel(), dE[p].ravel(), mE[p].ravel(), vE[p].ravel(), scale, opt, step)
        else:
            sgd(E[p].ravel(), dE[p].ravel(), update.lr, scale)
    _update_dense(H, dH, moments.mH, moments.vH, update.use_h, update, opt, step)
    _update_dense(G, dG, moments.mG, moments.vG, update.use_gate, update, opt, step)
    E[:, 0, :] = 0.0


@njit(cache=True, nogil=True)
def _update_dense(X, dX, m, v, trained, update, opt, step):
    # The step of the hop map or the gates, dense in both updates, when they are trained.
    if not trained:
        return
    scale = clip_scale(squared_norm(dX), update.max_norm)
    if update.adam:
        adam(X.ravel(), dX.ravel(), m.ravel(), v.ravel(), scale, opt, step)
    else:
        sgd(X.ravel(), dX.ravel(), update.lr, scale)


@njit(cache=True, nogil=True)
def batch_rows(data, batch, cands, mark, stamp, rows, w_rows):
    """The embedding rows a batch's gradient can touch, in increasing order.

    ``rows`` receives the words of the batch's sentences (memories and questions) and the
    speaker and time words of its memories: the rows of every matrix but the answer
    matrix (row 0, the nil word, may be among them). ``w_rows`` receives those and the
    candidates' and type words: the rows of the answer matrix, whose gradient reaches
    every candidate through the softmax. ``mark`` (n_words) holds no ``stamp`` or
    ``stamp + 1`` on entry. Returns (n_rows, n_w_rows).
    """
    sptr, stok, sspk, qsent, mptr, msent, mtime = data[:7]
    for bi in range(batch.shape[0]):
        e = batch[bi]
        s = qsent[e]
        for q in range(sptr[s], sptr[s + 1]):
            mark[stok[q]] = stamp
        for m in range(mptr[e], mptr[e + 1]):
            s = msent[m]
            for q in range(sptr[s], sptr[s + 1]):
                mark[stok[q]] = stamp
            mark[sspk[s]] = stamp  # the speaker and time words of the memory
            mark[mtime[m]] = stamp
    n = 0
    for r in range(mark.shape[0]):
        if mark[r] == stamp:
            rows[n] = r
            n += 1
    for q in range(cands.ctok.shape[0]):
        if mark[cands.ctok[q]] != stamp:
            mark[cands.ctok[q]] = stamp + 1
    for t in range(cands.type_tok.shape[0]):
        if mark[cands.type_tok[t]] != stamp:
            mark[cands.type_tok[t]] = stamp + 1
    n_w = 0
    for r in range(mark.shape[0]):
        if mark[r] == stamp or mark[r] == stamp + 1:
            w_rows[n_w] = r
            n_w += 1
    return n, n_w


@njit(cache=True, nogil=True)
def apply_update_rows(E, H, G, dE, dH, dG, rows, w_rows, w, moments, update, step):
    """:func:`apply_update` on the rows of :func:`batch_rows` only, zeroing their gradient.

    SGD: the same step as the dense update (a row with no gradient does not move), so the
    same weights. Adam: lazy Adam, whose moments and weights move only at the rows of the
    batch (the dense Adam also decays the moments of every other row and moves it by them).
    The clipping norm is summed over those rows in increasing order: the norm of the
    dense update.
    """
    opt = AdamSettings(update.lr, update.beta1, update.beta2, update.eps)
    mE, vE = moments.mE, moments.vE
    for p in range(E.shape[0]):
        rs = w_rows if p == w else rows
        scale = clip_scale(rows_squared_norm(dE[p], rs), update.max_norm)
        if update.adam:
            adam_rows(E[p], dE[p], mE[p], vE[p], rs, scale, opt, step)
        else:
            sgd_rows(E[p], dE[p], rs, update.lr, scale)
    _update_dense(H, dH, moments.mH, moments.vH, update.use_h, update, opt, step)
    _update_dense(G, dG, moments.mG, moments.vG, update.use_gate, update, opt, step)
    E[:, 0, :] = 0.0


@njit(cache=True, nogil=True)
def forward_states(E, H, G, cfg, data, rows, attention):
    """Final controller states u_K of the examples ``rows`` of the :class:`Contexts`
    ``data``, shape (len(rows), d).

    ``attention`` (len(rows), K, M) receives the attention of each hop by memory age (0 =
    the most recent memory); pass an array with M = 0 to skip it.
    """
    mptr = data.mptr
    hops = cfg[N_HOPS]
    n_mat, _, dim = E.shape
    n = rows.shape[0]
    sents = _sentences(E, cfg)
    max_mem = 1
    for r in range(n):
        e = rows[r]
        max_mem = max(max_mem, mptr[e + 1] - mptr[e])
    acts = Activations(
        np.empty((1, hops + 1, dim), dtype=E.dtype),
        np.empty((1, hops, dim), dtype=E.dtype),
        np.empty((1, n_mat, max_mem, dim), dtype=E.dtype),
        np.empty((1, hops, max_mem), dtype=E.dtype),
        np.empty((1, hops, dim), dtype=E.dtype),
        np.empty((1, hops, dim), dtype=E.dtype),
    )
    prob = acts.prob[0]
    U = np.empty((n, dim), dtype=E.dtype)
    keep = attention.shape[2]
    for r in range(n):
        e = rows[r]
        _forward_one(E, H, G, cfg, sents, data, e, acts, 0)
        U[r, :] = acts.u[0, hops]
        if keep > 0:
            n_mem = mptr[e + 1] - mptr[e]
            for hop in range(hops):
                for i in range(n_mem):
                    age = n_mem - 1 - i
                    if age < keep:
                        attention[r, hop, age] = prob[hop, i]
    return U


@njit(cache=True, nogil=True)
def add_match_types(scores, U, E, w, type_tok, eptr, eword, etype, iptr, icand, rows, mark):
    """scores[i, j] += u_i . E[w, type_t] for each type t matching (example rows[i], j).

    ``mark`` is an int64 scratch of size n_candidates * n_types holding no value of ``rows``
    (e.g. all -1); ``rows`` must be distinct.
    """
    n_types = type_tok.shape[0]
    if n_types == 0:
        return
    dim = E.shape[2]
    n_cand = scores.shape[1]
    pair_c = np.empty(n_cand * n_types, dtype=np.int64)
    pair_t = np.empty(n_cand * n_types, dtype=np.int64)
    st = np.empty(n_types, dtype=scores.dtype)
    for i in range(scores.shape[0]):
        e = rows[i]
        for t in range(n_types):
            acc = 0.0
            for k in range(dim):
                acc += U[i, k] * E[w, type_tok[t], k]
            st[t] = acc
        n_pairs = _match_pairs(e, eptr, eword, etype, iptr, icand, n_types, mark, e, pair_c, pair_t)
        for q in range(n_pairs):
            scores[i, pair_c[q]] += st[pair_t[q]]


@njit(cache=True, nogil=True)
def random_ages(mptr, n_blank, uniforms, memory_size, time_base, mtime):
    """Time words with random empty memories inserted (random noise, Sukhbaatar 4.2).

    Example e with n memories gets ``n_blank[e]`` blanks: its memories take a random sorted
    subset of n of the n + n_blank ages (selection sampling on ``uniforms``, one per age),
    capped at memory_size - 1. The most recent memory gets the smallest age.
    """
    pos = 0
    for e in range(mptr.shape[0] - 1):
        n = mptr[e + 1] - mptr[e]
        total = n + n_blank[e]
        need = n
        i = mptr[e + 1] - 1  # fill from the most recent memory backwards
        for age in range(total):
            left = total - age
            if uniforms[pos + age] * left < need:
                mtime[i] = time_base + min(age, memory_size - 1)
                i -= 1
                need -= 1
                if need == 0:
                    break
        pos += total
