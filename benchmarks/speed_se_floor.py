"""How fast can the supervised-embedding forward pass be at dialog bAbI task 5 settings?

``benchmarks/speed.py`` reports the training kernel at about 14% of numpy's float32 matmul
GFLOP/s at d=32 with 100 negatives. This script splits the time of the part that dominates
an example once violations are rare, scoring the sampled negatives, into the walk over the
negatives' bags and the arithmetic, to bound what any faster arithmetic (SIMD intrinsics, a
C extension) could reach with the same per-example algorithm. Each variant runs the same
loop over the training examples: the input embedding, 100 negatives drawn with the
kernel's generator, then one of

- ``kernel``: the scoring helper of the training kernel (``_se_score_bags``);
- ``walk``: the same CSR walk over the negatives' words with no arithmetic but one load
  per word (what is left if the d-vector dot products cost nothing);
- ``padded walk`` / ``padded kernel``: the same on a dense table of the bags padded with
  the nil word to the longest candidate (no row pointers, no data-dependent loop bounds,
  but padding rows to score).

The bound is the FLOPs the training kernel counts per example (``speed.py``'s count, in
its fifth epoch, updates included) over the time of a variant: an upper bound on the
kernel's GFLOP/s, since the variants leave out the updates. Next to it, the same-process
1-thread matmul.

    NUMBA_NUM_THREADS=1 python benchmarks/speed_se_floor.py [--data-home DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from irdialog.embed import _kernels as K

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import numpy_matmul_gflops, supervised_embedding_problem  # noqa: E402

_FM = K._SE_FASTMATH


@njit(fastmath=_FM)
def _walk(indptr, indices, data, W, rows, out):
    for j in range(rows.shape[0]):
        c = rows[j]
        s = np.float32(0.0)
        for p in range(indptr[c], indptr[c + 1]):
            s += data[p] * W[indices[p], 0]
        out[j] = s


@njit(fastmath=_FM)
def _padded_walk(P, PW, W, rows, out):
    for j in range(rows.shape[0]):
        c = rows[j]
        s = np.float32(0.0)
        for q in range(P.shape[1]):
            s += PW[c, q] * W[P[c, q], 0]
        out[j] = s


@njit(fastmath=_FM)
def _padded_kernel(P, PW, W, rows, x, out):
    for j in range(rows.shape[0]):
        c = rows[j]
        s = np.float32(0.0)
        for q in range(P.shape[1]):
            w = P[c, q]
            t = np.float32(0.0)
            for k in range(x.shape[0]):
                t += W[w, k] * x[k]
            s += PW[c, q] * t
        out[j] = s


@njit
def _forward(variant, U, V, x_indptr, x_indices, x_data, r_indptr, r_indices, r_data, P, PW,
             n_candidates, n_negatives, state):  # fmt: skip
    """Input embedding, negatives drawn, negatives scored by ``variant`` (0-3), per
    example; returns a checksum so that nothing is optimised away."""
    ex = np.zeros(U.shape[1], np.float32)
    rows = np.empty(n_negatives, np.int64)
    out = np.empty(n_negatives, np.float32)
    total = 0.0
    for i in range(x_indptr.shape[0] - 1):
        ex[:] = 0.0
        K._se_bag_add(U, x_indices, x_data, x_indptr[i], x_indptr[i + 1], np.float32(1.0), ex)
        for j in range(n_negatives):
            rows[j] = K.se_rand_below(state, n_candidates)
        if variant == 0:
            K._se_score_bags(V, r_indptr, r_indices, r_data, rows, ex, out)
        elif variant == 1:
            _walk(r_indptr, r_indices, r_data, V, rows, out)
        elif variant == 2:
            _padded_walk(P, PW, V, rows, out)
        else:
            _padded_kernel(P, PW, V, rows, ex, out)
        total += out[0]
    return total


VARIANTS = ("kernel", "walk", "padded walk", "padded kernel")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--repeat", type=int, default=5, help="best of this many timed passes")
    args = ap.parse_args(argv)

    model, problem, n_examples, rng = supervised_embedding_problem(5, args.data_home)
    stats = np.zeros(2)
    for _ in range(5):  # speed.py times 5 epochs; the count of the last
        stats[:] = 0.0
        model._run_epoch(problem, rng.permutation(n_examples).astype(np.int64), stats)
    flop_per_example = 2.0 * model.embedding_dim * stats[1] / n_examples

    r_indptr, r_indices, r_data = problem["r"]
    n_cand = problem["n_candidates"]
    lengths = np.diff(r_indptr)[:n_cand]
    P = np.zeros((n_cand, lengths.max()), np.uint32)  # word 0, the nil word, pads
    PW = np.zeros(P.shape, np.float32)
    for c in range(n_cand):
        P[c, : lengths[c]] = r_indices[r_indptr[c] : r_indptr[c + 1]]
        PW[c, : lengths[c]] = r_data[r_indptr[c] : r_indptr[c + 1]]
    arrays = (problem["U"], problem["V"], *problem["x"], r_indptr, r_indices, r_data, P, PW)
    state = np.zeros(1, np.uint64)
    best = dict.fromkeys(VARIANTS, np.inf)
    for v in range(len(VARIANTS)):  # compile
        _forward(v, *arrays, n_cand, model.n_negatives, state)
    for _ in range(args.repeat):  # interleaved, so that machine load hits all alike
        for v, name in enumerate(VARIANTS):
            t = time.perf_counter()
            _forward(v, *arrays, n_cand, model.n_negatives, state)
            best[name] = min(best[name], time.perf_counter() - t)
    matmul = numpy_matmul_gflops(threads=1)

    print(
        f"dialog bAbI task 5: {n_examples} examples, {model.n_negatives} negatives of "
        f"{lengths.mean():.1f} words on average (longest {lengths.max()}), d=32; the training "
        f"kernel counts {flop_per_example:,.0f} FLOP per example; matmul {matmul:.1f} GFLOP/s"
    )
    print(f"{'variant':<14} {'us/example':>10} {'bound GFLOP/s':>14} {'% of matmul':>12}")
    for name in VARIANTS:
        us = 1e6 * best[name] / n_examples
        gflops = flop_per_example / (us * 1e3)
        print(f"{name:<14} {us:>10.3f} {gflops:>14.2f} {100 * gflops / matmul:>11.1f}%")


if __name__ == "__main__":
    main()
