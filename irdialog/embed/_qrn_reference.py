"""Plain numpy reference of the QRN kernels (:mod:`irdialog.embed._qrn_kernels`), for the
tests to compare against.

The forward pass and the loss written the slow and obvious way (float64, one example, one
layer and one direction at a time, whole vectors), from the equations of Seo et al.
(2017, section 2): the tests compare the kernels' loss and final states with it, and their
hand-written gradient with central finite differences of its loss. The estimator never
calls it.
"""

from __future__ import annotations

import numpy as np

from ._reference import position_encoding


def _sigmoid(s):
    return 1.0 / (1.0 + np.exp(-s))


def unit_weights(row, dim):
    """(W_h, b_h, w_z, w_rf, w_rb, b_z, b_rf, b_rb) of a row of theta (the layout of
    :func:`~irdialog.embed._qrn_kernels.unit_layout`)."""
    n = 2 * dim * dim
    Wh = row[:n].reshape(dim, 2 * dim)
    bh, wz, wrf, wrb = (row[n + i * dim : n + (i + 1) * dim] for i in range(4))
    bz, brf, brb = row[n + 4 * dim : n + 4 * dim + 3]
    return Wh, bh, wz, wrf, wrb, bz, brf, brb


def reduce_query(E, theta, cfg, x, q):
    """The reduced query u of the sentence vectors x (T, d) and the question vector q."""
    layers, tied, use_reset, use_bidir = (int(v) for v in cfg[:4])
    dim = E.shape[2]
    T = len(x)
    if T == 0:
        return np.zeros(dim)
    queries = np.tile(q, (T, 1))
    for layer in range(layers):
        last = layer == layers - 1
        Wh, bh, wz, wrf, wrb, bz, brf, brb = unit_weights(theta[0 if tied else layer], dim)
        a = x * queries
        z = _sigmoid(a @ wz + bz)
        reset = use_reset and not last
        bidir = use_bidir and not last
        rf = _sigmoid(a @ wrf + brf) if reset else np.ones(T)
        rb = _sigmoid(a @ wrb + brb) if reset and bidir else np.ones(T)
        c = np.tanh(np.hstack([x, queries]) @ Wh.T + bh)
        hf, h = np.zeros((T, dim)), np.zeros(dim)
        for t in range(T):
            h = z[t] * rf[t] * c[t] + (1 - z[t]) * h
            hf[t] = h
        hb, h = np.zeros((T, dim)), np.zeros(dim)
        if bidir:
            for t in reversed(range(T)):
                h = z[t] * rb[t] * c[t] + (1 - z[t]) * h
                hb[t] = h
        queries = hf + hb
    return queries[-1]


def batch_loss(pb, E, theta, cfg):
    """:func:`~irdialog.embed._qrn_kernels.batch_loss_grad`'s loss in plain numpy: the
    softmax cross-entropy over the candidates summed over the batch, with the plain
    structures of ``pb`` described in :func:`irdialog.embed._reference.batch_loss_grad`
    (its ``mtime`` is not read: QRN has no time words). Returns (loss, correct, states)."""
    E = E.astype(np.float64)
    theta = theta.astype(np.float64)
    dim = E.shape[2]
    pe_len = int(cfg[4])

    def embed(s):
        toks = pb.sents[s]
        return (position_encoding(len(toks), dim, pe_len) * E[0, toks]).sum(axis=0)

    loss, correct, states = 0.0, 0, []
    Wc = pb.bags @ E[1]
    for e in pb.batch:
        x = np.asarray([embed(s) + E[0, pb.sspk[s]] for s in pb.mems[e]]).reshape(-1, dim)
        u = reduce_query(E, theta, cfg, x, embed(pb.qsent[e]))
        match = np.zeros((pb.n_cand, len(pb.type_tok)))
        for v, t in pb.ents[e]:
            for c in range(pb.n_cand):
                if v in pb.cand_words[c]:
                    match[c, t] = 1
        logits = Wc @ u + match @ (E[1, pb.type_tok] @ u)
        top = logits.max()
        loss += np.log(np.exp(logits - top).sum()) + top - logits[pb.y[e]]
        correct += int(np.argmax(logits) == pb.y[e])
        states.append(u)
    return loss, correct, states
