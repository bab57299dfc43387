"""Plain numpy references of the embedding models' kernels, for the tests to compare against.

The kernels of :mod:`irdialog.embed._kernels` (supervised embeddings) and
:mod:`irdialog.embed._hogwild_kernels` (their epoch on several threads),
:mod:`irdialog.embed._memn2n_kernels` (MemN2N), :mod:`irdialog.embed._memnn_kernels`,
:mod:`irdialog.embed._recurrent_kernels` (and the sums of the parts of a batch of
:mod:`irdialog.embed._recurrent_parallel_kernels`), the optimizer steps of
:mod:`irdialog.embed._optim` and the float32 math of :mod:`irdialog.embed._fastmath` are
fast for reasons that make them easy to
get wrong: CSR walks with unsigned counters, negatives drawn from an inline splitmix64,
match-type bits, ragged memories with a hand-written backward pass. Each function here
computes the same quantity the slow and obvious way (Python integers, dense matrices,
float64, one example and one contribution at a time), so that a test can run both and
compare (the ``use_native`` pattern of implicit). The estimators never call them.

Examples
--------
>>> import numpy as np
>>> from irdialog.embed import _kernels as K, _reference as R
>>> state = np.array([7], dtype=np.uint64)
>>> int(K.se_rand_below(state, 10)) == R.rand_below(7, 10)[1]
True
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

MASK64 = (1 << 64) - 1


# --------------------------------------------------------------------------- supervised embeddings


def splitmix64(state: int) -> tuple[int, int]:
    """(new state, output) of splitmix64, on Python ints."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def rand_below(state: int, n: int) -> tuple[int, int]:
    """(new state, a draw in [0, n)) of :func:`~irdialog.embed._kernels.se_rand_below`:
    Lemire's multiply-shift on the high 32 bits of a splitmix64 output."""
    state, z = splitmix64(state)
    return state, ((z >> 32) * n) >> 32


def dense(indptr, indices, data, n_cols):
    """The float64 dense matrix of CSR arrays with ``n_cols`` columns."""
    return sp.csr_matrix(
        (data.astype(np.float64), indices.astype(np.int64), indptr), shape=(len(indptr) - 1, n_cols)
    ).toarray()


def se_sgd_epoch(P, order, n_negatives, lr, margin, adagrad):
    """:func:`~irdialog.embed._kernels.se_sgd_epoch` in plain numpy, float64, one
    contribution at a time, with dense bags and the match-type words added to each bag.

    ``P`` is a mapping of the kernel's arrays: ``U``, ``V``, ``GU``, ``GV`` (not modified),
    ``shared`` (U is V), ``x`` and ``r`` (CSR triples of the input bags and the response
    table), ``gold``, ``n_candidates``, ``e`` (entity indptr, words, types), ``m`` (match
    bags indptr, indices), ``n_match`` (columns of the match bags), ``type_rows``,
    ``state`` (the splitmix64 state, an array of one integer) and optionally ``pools``
    ((indptr, indices): the rows of the response table each example draws its negatives
    from, the candidates when empty).

    Returns (U, V, GU, GV, loss, draws) where draws[i] lists the negatives of example i.
    """
    U = P["U"].astype(np.float64)
    V = U if P["shared"] else P["V"].astype(np.float64)
    GU = P["GU"].astype(np.float64)
    GV = GU if P["shared"] else P["GV"].astype(np.float64)
    n_words, dim = U.shape
    xb = dense(*P["x"], n_words)
    rb = dense(*P["r"], n_words)
    mb = dense(P["m"][0], P["m"][1], np.ones(len(P["m"][1])), P["n_match"]) > 0
    type_rows = P["type_rows"]
    e_indptr, e_words, e_types = P["e"]
    n_cand = P["n_candidates"]
    state = int(P["state"][0])
    loss, draws = 0.0, {}
    K_ = max(n_negatives, 1)
    pools = P.get("pools")

    for i in order:
        ents = list(
            zip(e_words[e_indptr[i] : e_indptr[i + 1]], e_types[e_indptr[i] : e_indptr[i + 1]])
        )

        def bag(r, ents=ents):
            b = rb[r].copy()
            for t, row in enumerate(type_rows):
                if any(mb[r, w] for w, tt in ents if tt == t):
                    b[row] += 1.0
            return b

        ex = xb[i] @ U
        g = P["gold"][i]
        by = bag(g)
        pos = ex @ (by @ V)
        n_excl = n_cand - 1 if g < n_cand else n_cand
        pool = [] if pools is None else list(pools[1][pools[0][i] : pools[0][i + 1]])
        negs = []
        for _ in range(n_negatives if n_excl > 0 or pool else 0):
            if pool:
                state, j = rand_below(state, len(pool))
                negs.append(pool[j])
                continue
            state, c = rand_below(state, n_excl)
            if g < n_cand and c >= g:
                c += 1
            negs.append(c)
        draws[i] = negs
        viol = [c for c in negs if margin - pos + ex @ (bag(c) @ V) > 0]
        loss += sum(margin - pos + ex @ (bag(c) @ V) for c in viol) / K_
        if not viol:
            continue
        n = len(viol)
        gx = sum(bag(c) @ V for c in viol) - n * (by @ V)
        # contributions in the kernel's order: input words, gold words, violators
        contribs = [(U, GU, w, xb[i][w] / K_, gx) for w in np.flatnonzero(xb[i])]
        contribs += [(V, GV, w, -n * by[w] / K_, ex) for w in np.flatnonzero(by)]
        for c in viol:
            bc = bag(c)
            contribs += [(V, GV, w, bc[w] / K_, ex) for w in np.flatnonzero(bc)]
        for W, G, w, coef, vec in contribs:
            if adagrad:
                G[w] += coef**2 * (vec @ vec) / dim
                W[w] -= lr * coef / np.sqrt(G[w] + 1e-6) * vec
            elif G[w] != np.inf:  # an infinite accumulator freezes the row
                W[w] -= lr * coef * vec
    return U, V, GU, GV, loss, draws


def se_hogwild_epoch(P, order, n_shards, n_negatives, lr, margin, adagrad):
    """:func:`~irdialog.embed._hogwild_kernels.se_hogwild_epoch` run on one thread: the
    shards of ``order`` (contiguous, the first ``len(order) % n_shards`` one longer), one
    after the other, each the serial epoch :func:`se_sgd_epoch` from the weights the
    previous left, with the generator seeded by the next splitmix64 output of
    ``P["state"]``.

    Returns (U, V, GU, GV, loss, draws), as :func:`se_sgd_epoch`.
    """
    state = int(P["state"][0])
    seeds = []
    for _ in range(n_shards):
        state, z = splitmix64(state)
        seeds.append(z)
    sizes = [len(order) // n_shards + (s < len(order) % n_shards) for s in range(n_shards)]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    P = dict(P)
    loss, draws = 0.0, {}
    for s in range(n_shards):
        P["state"] = np.array([seeds[s]], dtype=np.uint64)
        shard = order[bounds[s] : bounds[s + 1]]
        U, V, GU, GV, shard_loss, shard_draws = se_sgd_epoch(
            P, shard, n_negatives, lr, margin, adagrad
        )
        P.update(U=U, V=V, GU=GU, GV=GV)
        loss += shard_loss
        draws.update(shard_draws)
    return P["U"], P["V"], P["GU"], P["GV"], loss, draws


# --------------------------------------------------------------------------- MemN2N


def position_encoding(n, dim, J):
    """The (n, dim) position-encoding weights of a sentence of n words, the authors' form
    ``1 + 4 (k - (d+1)/2)(j - (J+1)/2) / (d J)``; ones when ``J`` is 0 (no encoding)."""
    if J == 0:
        return np.ones((n, dim))
    j = np.arange(1, n + 1)[:, None]
    k = np.arange(1, dim + 1)[None, :]
    return 1 + 4 * (k - (dim + 1) / 2) * (j - (J + 1) / 2) / (dim * J)


def batch_loss_grad(pb, E, H, G=None):
    """:func:`~irdialog.embed._memn2n_kernels.batch_loss_grad` in plain numpy, float64: the
    forward pass and the hand-derived backward pass of the loss summed over a batch.

    ``pb`` describes the batch with plain Python structures rather than the kernels'
    ragged arrays: ``cfg`` (from :func:`~irdialog.embed._memn2n_kernels.make_cfg`),
    ``sents`` (the word ids of each sentence, 0 for an unknown word), ``sspk`` (speaker
    word of each sentence), ``qsent`` (query sentence of each example), ``mems`` (the
    memory sentences of each example, oldest first), ``mptr`` and ``mtime`` (the time word
    of each memory), ``bags`` (dense (n_candidates, n_words) candidate bags), ``n_cand``,
    ``cand_words`` (the match-word ids of each candidate), ``ents`` ((match word, type)
    pairs of each example), ``type_tok`` (type word of each type), ``y`` (gold candidate
    of each example) and ``batch`` (the examples). ``G`` holds the gates ``[W_T | b_T]``
    (Liu & Perez 2017) when ``cfg`` has them. With ``pools`` (optional: the rows of
    ``bags`` each example's negatives come from, past the ``n_cand`` candidates for the
    responses outside them), an example's softmax runs over its gold response and its
    pool (:func:`~irdialog.embed._memn2n_kernels.pool_softmax_xent`), over the
    candidates when the pool is empty.

    Returns (loss, correct, dE, dH, dG, states) where states[i] is (final controller
    state, attention of each hop) of the i-th example of the batch.
    """
    hops, b, w, use_pe, use_soft, use_h, use_relu, n_slots, gate = pb.cfg[:9]
    amat, cmat = pb.cfg[9 : 9 + hops], pb.cfg[9 + hops :]
    E = E.astype(np.float64)
    H = H.astype(np.float64)
    G = np.zeros((0, H.shape[0], H.shape[0] + 1)) if G is None else G.astype(np.float64)
    dE, dH, dG = np.zeros_like(E), np.zeros_like(H), np.zeros_like(G)
    gate_of = [0 if gate == 1 else k for k in range(hops)]  # 1: one gate for all hops
    dim = E.shape[2]
    Wc = pb.bags @ E[w]
    loss, correct, states = 0.0, 0, []

    def embed_sentence(p, s):
        toks = pb.sents[s]
        return (position_encoding(len(toks), dim, use_pe) * E[p, toks]).sum(axis=0)

    def scatter_sentence(p, s, g):
        toks = pb.sents[s]
        np.add.at(dE[p], toks, position_encoding(len(toks), dim, use_pe) * g)

    def memory(p, e):
        rows = []
        for i, s in enumerate(pb.mems[e]):
            m = embed_sentence(p, s) + E[p, pb.sspk[s]]
            t = pb.mtime[pb.mptr[e] + i]
            rows.append(m + E[p, t])
        return np.asarray(rows).reshape(len(pb.mems[e]), dim)

    for e in pb.batch:
        u = embed_sentence(b, pb.qsent[e])
        us, hs, ps, Ma, Mc, Ts = [u], [], [], [], [], []
        for k in range(hops):
            ma, mc = memory(amat[k], e), memory(cmat[k], e)
            z = ma @ u
            if use_soft and len(z):
                n_pad = max(n_slots - len(z), 0)  # empty slots: zero vectors, score 0
                top = max(z.max(), 0) if n_pad else z.max()
                p = np.exp(z - top) / (np.exp(z - top).sum() + n_pad * np.exp(-top))
            else:
                p = z
            if gate:
                gw = G[gate_of[k]]
                t = 1 / (1 + np.exp(-(gw[:, :-1] @ u + gw[:, -1])))
                h = (p @ mc) * t + u * (1 - t)
            else:
                t = None
                h = (H @ u if use_h else u) + p @ mc
            u = np.maximum(h, 0) if use_relu else h
            us.append(u), hs.append(h), ps.append(p), Ma.append(ma), Mc.append(mc), Ts.append(t)
        match = np.zeros((len(pb.bags), 2))
        for v, t in pb.ents[e]:
            for c in range(len(pb.bags)):
                if v in pb.cand_words[c]:
                    match[c, t] = 1
        type_emb = E[w, pb.type_tok]  # (2, d)
        logits = Wc @ u + match @ (type_emb @ u)
        pool = [] if getattr(pb, "pools", None) is None else list(pb.pools[e])
        members = list(dict.fromkeys([pb.y[e], *pool])) if pool else list(range(pb.n_cand))
        z = logits[members]
        soft = np.exp(z - z.max())
        loss += np.log(soft.sum()) + z.max() - logits[pb.y[e]]
        soft /= soft.sum()
        correct += int(members[np.argmax(z)] == pb.y[e])
        g = np.zeros(len(logits))
        g[members] = soft
        g[pb.y[e]] -= 1
        # logits = Wc u + match (T u)
        dE[w] += pb.bags.T @ np.outer(g, u)
        gt = match.T @ g
        dE[w, pb.type_tok] += np.outer(gt, u)
        du = Wc.T @ g + type_emb.T @ gt
        for k in reversed(range(hops)):
            if use_relu:
                du = du * (hs[k] > 0)
            uk = us[k]
            p = ps[k]
            if gate:
                t, o = Ts[k], p @ Mc[k]
                dz = du * (o - uk) * t * (1 - t)
                gw = G[gate_of[k]]
                dG[gate_of[k], :, :-1] += np.outer(dz, uk)
                dG[gate_of[k], :, -1] += dz
                dnext = du * (1 - t) + gw[:, :-1].T @ dz
                do = du * t
            elif use_h:
                dH += np.outer(du, uk)
                dnext, do = H.T @ du, du
            else:
                dnext, do = du.copy(), du
            dmc = np.outer(p, do)
            dp = Mc[k] @ do
            dz = p * (dp - p @ dp) if use_soft else dp
            dnext += Ma[k].T @ dz
            dma = np.outer(dz, uk)
            for p_mat, dm in ((amat[k], dma), (cmat[k], dmc)):
                for i, s in enumerate(pb.mems[e]):
                    scatter_sentence(p_mat, s, dm[i])
                    dE[p_mat, pb.sspk[s]] += dm[i]
                    dE[p_mat, pb.mtime[pb.mptr[e] + i]] += dm[i]
            du = dnext
        scatter_sentence(b, pb.qsent[e], du)
        states.append((u, ps))
    dE[:, 0] = 0  # nil: no gradient (its embedding is held at zero)
    return loss, correct, dE, dH, dG, states


def pool_rows(batch, y, pools, n_cand, n_rows):
    """(rows, pos) of :func:`~irdialog.embed._memn2n_kernels.pool_rows`: the table rows
    the softmaxes of ``batch`` read (gold responses ``y``, the rows of each example's pool
    in the list ``pools``, all ``n_cand`` candidates for an empty pool), sorted, and each
    row's index among them (-1 for the others)."""
    needed = set()
    for e in batch:
        needed |= {int(y[e]), *map(int, pools[e])} if len(pools[e]) else set(range(n_cand))
    rows = np.asarray(sorted(needed), dtype=np.int64)
    pos = np.full(n_rows, -1, dtype=np.int64)
    pos[rows] = np.arange(len(rows))
    return rows, pos


def gather_rows(cptr, ctok, cw, rows):
    """:func:`~irdialog.embed._memn2n_kernels.gather_rows`: the CSR table's ``rows``."""
    pieces = [(ctok[cptr[r] : cptr[r + 1]], cw[cptr[r] : cptr[r + 1]]) for r in rows]
    ptr = np.cumsum([0] + [len(t) for t, _ in pieces]).astype(np.int64)
    tok = np.concatenate([t for t, _ in pieces] + [ctok[:0]])
    return ptr, tok, np.concatenate([w for _, w in pieces] + [cw[:0]])


# --- the strongly supervised Memory Network (MemNNQA) -------------------------------------


def memnn_embed(U, W, nonlinear, rows, weights):
    """E(bag) = sum_r w_r U[r], or tanh(W tanh(.)) of it."""
    h = (np.asarray(weights)[:, None] * U[np.asarray(rows, dtype=np.int64)]).sum(axis=0)
    return np.tanh(W @ np.tanh(h)) if nonlinear else h


def memnn_rank_loss(U, W, nonlinear, in_bag, cand_bags, gold, margin, n_viol=None):
    """The margin ranking loss of one problem, averaged over the violating candidates
    (``n_viol`` fixes their number, for finite differences). Bags are (rows, weights)."""
    e_in = memnn_embed(U, W, nonlinear, *in_bag)
    s = np.array([e_in @ memnn_embed(U, W, nonlinear, *bag) for bag in cand_bags])
    v = margin - s[gold] + s
    v[gold] = 0.0
    hinge = np.maximum(v, 0.0)
    n = int((v > 0).sum()) if n_viol is None else n_viol
    return hinge.sum() / n if n else 0.0


def memnn_rank_step(U, W, nonlinear, in_bag, cand_bags, gold, margin, lr):
    """:func:`irdialog.embed._memnn_kernels.rank_step` in numpy: the gradient of
    :func:`memnn_rank_loss` written out, one SGD step on copies of U and W."""
    U, W = U.copy(), W.copy()

    def forward(rows, weights):
        h = (np.asarray(weights)[:, None] * U[np.asarray(rows, dtype=np.int64)]).sum(axis=0)
        if not nonlinear:
            return h, None, h
        a = np.tanh(h)
        return h, a, np.tanh(W @ a)

    def backward(a, e, g):
        """dLoss/dh and dLoss/dW of a bag, given dLoss/dE = g."""
        if not nonlinear:
            return g, 0.0
        dz = g * (1.0 - e**2)
        return (W.T @ dz) * (1.0 - a**2), np.outer(dz, a)

    _, a_in, e_in = forward(*in_bag)
    cands = [forward(*bag) for bag in cand_bags]
    s = np.array([e_in @ e for _, _, e in cands])
    v = margin - s[gold] + s
    v[gold] = 0.0
    viol = v > 0
    if not viol.any():
        return U, W, 0.0
    n = int(viol.sum())
    loss = v[viol].sum() / n
    e_c = np.array([e for _, _, e in cands])
    g_in = (e_c[viol] - e_c[gold]).sum(axis=0) / n
    dU = np.zeros_like(U)
    dW = np.zeros_like(W)
    coefs = viol / n
    coefs[gold] = -1.0
    for (rows, weights), (_, a, e), coef in zip(cand_bags, cands, coefs):
        if coef == 0:
            continue
        dh, dw = backward(a, e, coef * e_in)
        np.add.at(dU, np.asarray(rows, dtype=np.int64), np.asarray(weights)[:, None] * dh)
        dW += dw
    dh, dw = backward(a_in, e_in, g_in)
    rows, weights = in_bag
    np.add.at(dU, np.asarray(rows, dtype=np.int64), np.asarray(weights)[:, None] * dh)
    dW += dw
    U -= lr * dU
    if nonlinear:
        W -= lr * dW
    return U, W, loss


# --------------------------------------------------------------------------- recurrent encoders


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def rnn_sequence(Emb, Wx, Wh, b, lstm, tokens):
    """The final state of one sequence, and what its backward pass needs, one step at a
    time in float64 (:func:`~irdialog.embed._recurrent_kernels.encoder_forward`)."""
    Emb, Wx, Wh, b = (np.asarray(a, np.float64) for a in (Emb, Wx, Wh, b))
    H = Wh.shape[0]
    h, c = np.zeros(H), np.zeros(H)
    steps = []
    for v in tokens:
        x = Emb[v]
        z = x @ Wx + h @ Wh + b
        if lstm:
            i, f, g, o = (
                _sig(z[:H]),
                _sig(z[H : 2 * H]),
                np.tanh(z[2 * H : 3 * H]),
                _sig(z[3 * H :]),
            )
            c_new = f * c + i * g
            h_new = o * np.tanh(c_new)
            steps.append((v, x, h, c, (i, f, g, o), c_new))
            h, c = h_new, c_new
        else:
            h_new = np.tanh(z)
            steps.append((v, x, h, None, h_new, None))
            h = h_new
    return h, steps


def rnn_sequence_backward(Wx, Wh, lstm, steps, dh, grads):
    """Backpropagation through time of :func:`rnn_sequence` from ``dh``, the gradient on
    the final state; adds to ``grads`` = {"Emb", "Wx", "Wh", "b"} (float64)."""
    Wx, Wh = np.asarray(Wx, np.float64), np.asarray(Wh, np.float64)
    H = Wh.shape[0]
    dh = np.asarray(dh, np.float64).copy()
    dc = np.zeros(H)
    for v, x, h_prev, c_prev, act, c_new in reversed(steps):
        if lstm:
            i, f, g, o = act
            tc = np.tanh(c_new)
            dc = dc + dh * o * (1 - tc**2)
            dz = np.concatenate(
                [dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g**2),
                 dh * tc * o * (1 - o)]
            )  # fmt: skip
            dc = dc * f
        else:
            dz = dh * (1 - act**2)
        grads["Wx"] += np.outer(x, dz)
        grads["Wh"] += np.outer(h_prev, dz)
        grads["b"] += dz
        grads["Emb"][v] += Wx @ dz
        dh = Wh @ dz
    return grads


def _zero_grads(P):
    return {k: np.zeros(np.shape(P[k])) for k in P}


def _sequences(ptr, tok, rows, max_len):
    out = []
    for r in rows:
        s = tok[ptr[r] : ptr[r + 1]]
        out.append(s[-max_len:] if max_len > 0 else s)
    return out


def reader_loss_grad(P, lstm, ptr, tok, rows, max_len, cbags, y):
    """The summed softmax cross-entropy of the recurrent reader over the sequences
    ``rows`` and its gradient, in float64, one sequence at a time.

    ``P`` holds ``Emb``, ``Wx``, ``Wh``, ``b`` and ``O`` (output word embeddings);
    ``cbags`` is the dense (n_candidates, n_words) candidate bag matrix; ``y`` the gold
    candidate of each row. Returns (loss, correct, grads, final states)."""
    grads = _zero_grads(P)
    C = cbags @ np.asarray(P["O"], np.float64)
    loss, correct, finals = 0.0, 0, []
    for seq, gold in zip(_sequences(ptr, tok, rows, max_len), y):
        h, steps = rnn_sequence(P["Emb"], P["Wx"], P["Wh"], P["b"], lstm, seq)
        finals.append(h)
        s = C @ h
        m = s.max()
        p = np.exp(s - m) / np.exp(s - m).sum()
        loss += np.log(np.exp(s - m).sum()) - (s[gold] - m)
        correct += int(np.argmax(s) == gold)
        ds = p.copy()
        ds[gold] -= 1
        grads["O"] += cbags.T @ np.outer(ds, h)
        rnn_sequence_backward(P["Wx"], P["Wh"], lstm, steps, C.T @ ds, grads)
    return loss, correct, grads, np.array(finals)


def dual_loss_grad(P, lstm, ptr, tok, ctx_rows, resp_rows, flags, max_len):
    """The summed binary cross-entropy of the dual encoder, ``sigma(c^T M r + bias)``
    against ``flags``, over the pairs (``ctx_rows[i]``, ``resp_rows[i]``) of one ragged
    token array, and its gradient, in float64. ``P`` holds ``Emb``, ``Wx``, ``Wh``,
    ``b``, ``M`` and ``bias``. Returns (loss, correct, grads)."""
    grads = _zero_grads(P)
    M = np.asarray(P["M"], np.float64)
    bias = float(np.asarray(P["bias"]).ravel()[0])
    loss, correct = 0.0, 0
    ctx = _sequences(ptr, tok, ctx_rows, max_len)
    resp = _sequences(ptr, tok, resp_rows, max_len)
    for cs, rs, flag in zip(ctx, resp, flags):
        c, c_steps = rnn_sequence(P["Emb"], P["Wx"], P["Wh"], P["b"], lstm, cs)
        r, r_steps = rnn_sequence(P["Emb"], P["Wx"], P["Wh"], P["b"], lstm, rs)
        s = c @ M @ r + bias
        p = _sig(s)
        loss += -np.log(p) if flag else -np.log(1 - p)
        correct += int((s > 0) == bool(flag))
        g = p - flag
        grads["M"] += g * np.outer(c, r)
        grads["bias"] += g
        rnn_sequence_backward(P["Wx"], P["Wh"], lstm, c_steps, g * (M @ r), grads)
        rnn_sequence_backward(P["Wx"], P["Wh"], lstm, r_steps, g * (M.T @ c), grads)
    return loss, correct, grads


# --------------------------------------------------------------------------- optimizer steps


def clip_scale(grads, max_norm):
    """The factor of :func:`~irdialog.embed._optim.clip_scale` that clips the arrays
    ``grads``, taken together, to a norm of at most ``max_norm`` (<= 0: none)."""
    norm = np.sqrt(sum(float((np.asarray(g, np.float64) ** 2).sum()) for g in grads))
    return max_norm / norm if 0 < max_norm < norm else 1.0


def sgd_step(W, g, lr, scale=1.0):
    """The new ``W`` of :func:`~irdialog.embed._optim.sgd` (and of ``sgd_rows`` on its
    rows, ``sgd_row`` with ``g = coef * vec``)."""
    return W - lr * (scale * g)


def adagrad_row(w, acc, coef, vec, lr):
    """The new (row, accumulator) of :func:`~irdialog.embed._optim.adagrad_row` on the row
    ``w`` with gradient ``coef * vec``."""
    acc = acc + np.mean((coef * np.asarray(vec, np.float64)) ** 2)
    return w - lr * coef * vec / np.sqrt(acc + 1e-6), acc


def adam_step(W, g, m, v, step, lr, beta1, beta2, eps, scale=1.0):
    """One Adam step of :func:`~irdialog.embed._optim.adam` on a weight array ``W`` with
    gradient ``scale * g``: returns the new (W, m, v). The bias corrections are those of
    Kingma & Ba (2015, section 2), with epsilon scaled as in their efficient form,
    ``eps / sqrt(1 - beta2**step)``."""
    g = scale * g
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    mhat = m / (1 - beta1**step)
    vhat = v / (1 - beta2**step)
    return W - lr * mhat / (np.sqrt(vhat) + eps / np.sqrt(1 - beta2**step)), m, v


# --------------------------------------------------------------------------- fast float32 math

# The exponential's clamp (irdialog.embed._fastmath).
_EXP_LO, _EXP_HI = -87.0, 88.0


def fast_exp(x):
    """What :func:`~irdialog.embed._fastmath.exp_inplace` approximates: the float64
    exponential of the input clamped to [-87, 88]."""
    return np.exp(np.clip(np.asarray(x, np.float64), _EXP_LO, _EXP_HI))


def fast_sigmoid(x):
    """What :func:`~irdialog.embed._fastmath.sigmoid_inplace` approximates:
    ``1 / (1 + exp(-x))`` in float64 with the exponential's clamp."""
    return 1.0 / (1.0 + fast_exp(-np.asarray(x, np.float64)))


def fast_tanh(x):
    """What :func:`~irdialog.embed._fastmath.tanh_inplace` approximates: float64
    ``np.tanh``."""
    return np.tanh(np.asarray(x, np.float64))
