"""Supervised embeddings with negatives shared by a mini-batch: a negative result, kept to
back BENCHMARKS.md.

The per-example kernel (``irdialog.embed._kernels.se_sgd_epoch``) draws 100 negatives per
example and walks their bags one by one; at d=32 that walk bounds it below 25% of matmul
(``benchmarks/speed_se_floor.py``). Sharing one draw of negatives across a mini-batch turns
the scores into one matrix product and the walk into one per batch. This script trains
that variant on dialog bAbI task 5 with the ``se`` preset of ``irdialog.bench`` (the
learning rate times ``--lr-scale``) and prints dev accuracy next to the per-example
kernel's. The variant computes every gradient of a batch at the parameters before the
batch and applies their sum (each example keeps the per-example step size); a negative
that is an example's own gold response is skipped for that example.

    NUMBA_NUM_THREADS=1 python benchmarks/se_shared_negatives.py --batch-size 32 --lr-scale 0.1
"""

from __future__ import annotations

import argparse

import numpy as np
from numba import njit

from irdialog.bench._se_presets import SE_DIALOG_BABI_PRESETS
from irdialog.datasets import load_dialog_babi
from irdialog.embed import SupervisedEmbeddingRanker
from irdialog.embed import _kernels as K


@njit
def shared_negatives_epoch(U, V, x_indptr, x_indices, x_data, gold, r_indptr, r_indices,
                           r_data, n_candidates, order, batch_size, n_negatives, learning_rate,
                           margin, state):  # fmt: skip
    """One epoch of margin-ranking SGD with ``n_negatives`` negatives per batch; returns the
    summed loss (plain SGD, no match types)."""
    dim = U.shape[1]
    EX = np.zeros((batch_size, dim), np.float32)  # input embeddings
    GE = np.zeros((batch_size, dim), np.float32)  # gold response embeddings
    NE = np.zeros((n_negatives, dim), np.float32)  # negative embeddings
    M = np.zeros((batch_size, n_negatives), np.float32)  # violating (example, negative)
    negs = np.empty(n_negatives, np.int64)
    n_viol = np.zeros(batch_size, np.float32)
    unused = np.zeros(0, np.float32)  # Adagrad accumulators, not used
    one, zero = np.float32(1.0), np.float32(0.0)
    lr, inv_k, m = np.float32(learning_rate), np.float32(1.0 / n_negatives), np.float32(margin)
    loss = 0.0
    for b0 in range(0, order.shape[0], batch_size):
        nb = min(batch_size, order.shape[0] - b0)
        for r in range(nb):
            i, g = order[b0 + r], gold[order[b0 + r]]
            EX[r, :] = 0.0
            K._se_bag_add(U, x_indices, x_data, x_indptr[i], x_indptr[i + 1], one, EX[r])
            GE[r, :] = 0.0
            K._se_bag_add(V, r_indices, r_data, r_indptr[g], r_indptr[g + 1], one, GE[r])
        for j in range(n_negatives):
            c = K.se_rand_below(state, n_candidates)
            negs[j] = c
            NE[j, :] = 0.0
            K._se_bag_add(V, r_indices, r_data, r_indptr[c], r_indptr[c + 1], one, NE[j])
        S = np.dot(EX[:nb], NE.T)
        for r in range(nb):
            g = gold[order[b0 + r]]
            pos = K._se_dot(EX[r], GE[r])
            n_viol[r] = 0.0
            for j in range(n_negatives):
                hinge = m - pos + S[r, j]
                M[r, j] = 0.0
                if hinge > 0 and negs[j] != g:
                    loss += hinge * inv_k
                    M[r, j] = 1.0
                    n_viol[r] += 1.0
        GX = np.dot(M[:nb], NE)  # per example: the sum of its violating negatives
        GN = np.dot(M[:nb].T, EX[:nb])  # per negative: the sum of its violated inputs
        for r in range(nb):
            if n_viol[r] == 0:
                continue
            i, g = order[b0 + r], gold[order[b0 + r]]
            for k in range(dim):
                GX[r, k] -= n_viol[r] * GE[r, k]
            K._se_bag_step(U, unused, x_indices, x_data, x_indptr[i], x_indptr[i + 1], inv_k,
                           GX[r], zero, lr, False)  # fmt: skip
            K._se_bag_step(V, unused, r_indices, r_data, r_indptr[g], r_indptr[g + 1],
                           -n_viol[r] * inv_k, EX[r], zero, lr, False)  # fmt: skip
        for j in range(n_negatives):
            c = negs[j]
            K._se_bag_step(V, unused, r_indices, r_data, r_indptr[c], r_indptr[c + 1], inv_k,
                           GN[j], zero, lr, False)  # fmt: skip
    return loss


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr-scale", type=float, default=1.0)
    ap.add_argument("--data-home", default=None)
    args = ap.parse_args(argv)

    params = {k: v for k, v in SE_DIALOG_BABI_PRESETS[5]["se"].items() if k != "dev"}
    trn = load_dialog_babi(5, "trn", data_home=args.data_home)
    dev = load_dialog_babi(5, "dev", data_home=args.data_home)
    exact = SupervisedEmbeddingRanker(candidates=trn.candidates, random_state=0, **params)
    exact.fit(trn.X, trn.y)
    print(f"per-example kernel, {params}: dev {100 * exact.score(dev.X, dev.y):.2f}%")

    params["learning_rate"] *= args.lr_scale
    shared = SupervisedEmbeddingRanker(candidates=trn.candidates, random_state=0, **params)

    def run_epoch(p, order, stats):
        loss = shared_negatives_epoch(
            p["U"], p["V"], *p["x"], p["gold"], *p["r"], p["n_candidates"], order,
            args.batch_size, shared.n_negatives, shared.learning_rate, shared.margin, p["state"],
        )  # fmt: skip
        stats[0] += loss
        return loss

    shared._run_epoch = run_epoch  # the estimator's epoch loop, this kernel
    label = f"shared negatives, batches of {args.batch_size}, lr {params['learning_rate']:g}"
    try:
        print(f"{label}: dev {100 * shared.fit(trn.X, trn.y).score(dev.X, dev.y):.2f}%")
    except FloatingPointError as exc:
        print(f"{label}: {exc}")


if __name__ == "__main__":
    main()
