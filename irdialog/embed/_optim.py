"""The optimizer steps of the gradient-trained models of :mod:`irdialog.embed`, as numba
kernels: SGD, row-wise Adagrad, Adam (dense) and lazy Adam (row-wise), and gradient
clipping by norm.

Every model's update goes through these; they differ in what they visit:

- dense steps (:func:`sgd`, :func:`adam`) on a flat (1-D) parameter and its gradient;
- row steps (:func:`sgd_rows`, :func:`adam_rows`) on the given rows of a matrix only, the
  lazy updates of embedding matrices whose batch gradient is zero outside a few rows; they
  zero the gradient rows they read, so that the gradient buffer is zero again for the next
  batch without a dense pass (which would cost what the row update saves); the dense steps
  leave the gradient as it is;
- rank-one row steps (:func:`sgd_row`, :func:`adagrad_row`) of a row whose gradient is
  ``coef * vec``, for the example-by-example SGD of the supervised embeddings and MemNN.

Clipping by norm is two calls: the squared norm (:func:`squared_norm`,
:func:`rows_squared_norm`, summed over as many arrays as clip together), then the factor
:func:`clip_scale`, which the steps take as ``scale`` and multiply into the gradient as
they read it (no pass that rescales the gradient first).

Sums of squares and products with the scale are float64; parameters keep their float
type (float32 in training, float64 in the gradient checks). No ``fastmath``: these are the
update loops (see CONTRIBUTING.md). The plain numpy references the tests compare against
are in :mod:`irdialog.embed._reference`.
"""

from collections import namedtuple

import numpy as np
from numba import njit

AdamSettings = namedtuple("AdamSettings", "lr beta1 beta2 eps")
AdamSettings.__doc__ = """The step size and Adam's decay rates and epsilon (Kingma & Ba 2015,
algorithm 1); :func:`sgd` and :func:`sgd_rows` read ``lr`` only."""


@njit(cache=True, nogil=True)
def squared_norm(g):
    """The squared Frobenius norm of ``g``, summed in float64."""
    s = 0.0
    for v in g.ravel():
        s += float(v) * float(v)
    return s


@njit(cache=True, nogil=True)
def rows_squared_norm(G, rows):
    """The squared norm of the rows ``rows`` of the matrix ``G``, summed in float64 in
    the order of ``rows``."""
    s = 0.0
    for r in rows:
        for k in range(G.shape[1]):
            v = float(G[r, k])
            s += v * v
    return s


@njit(cache=True, nogil=True)
def clip_scale(norm_sq, max_norm):
    """The factor that brings a gradient of squared norm ``norm_sq`` to a norm of at most
    ``max_norm`` (1 when ``max_norm <= 0``, no clipping)."""
    if max_norm <= 0:
        return 1.0
    norm = np.sqrt(norm_sq)
    return max_norm / norm if norm > max_norm else 1.0


@njit(cache=True, nogil=True)
def sgd(x, g, lr, scale):
    """``x -= lr * scale * g`` on flat arrays."""
    for i in range(x.shape[0]):
        x[i] -= lr * (scale * g[i])


@njit(cache=True, nogil=True)
def sgd_rows(x, g, rows, lr, scale):
    """:func:`sgd` on the rows ``rows`` of the matrices ``x`` and ``g``, zeroing those
    rows of ``g``."""
    # Indexed in place (no row views: making one costs more than a row's update).
    for r in rows:
        for k in range(x.shape[1]):
            x[r, k] -= lr * (scale * g[r, k])
            g[r, k] = 0.0


@njit(cache=True, nogil=True)
def sgd_row(x, r, coef, vec, lr):
    """``x[r] -= lr * coef * vec``: the SGD step of a row whose gradient is
    ``coef * vec``."""
    a = lr * coef
    for k in range(vec.shape[0]):
        x[r, k] -= a * vec[k]


@njit(cache=True, nogil=True)
def adagrad_row(x, acc, r, coef, vec, vec_sq, lr):
    """The row-wise Adagrad step of a row whose gradient is ``coef * vec`` (``vec_sq`` =
    ``vec . vec``), as in StarSpace: one accumulator per row, ``acc[r]``, fed the mean
    squared coordinate of the row's gradient; the step is ``lr / sqrt(acc[r] + 1e-6)``."""
    dim = vec.shape[0]
    acc[r] += coef * coef * vec_sq / dim
    a = lr * coef / np.sqrt(acc[r] + np.float32(1e-6))
    for k in range(dim):
        x[r, k] -= a * vec[k]


@njit(cache=True, nogil=True)
def _adam_rate(opt, step):
    # Kingma & Ba's bias corrections folded into the step size (end of their section 2);
    # ``step`` counts from 1.
    b1, b2 = opt.beta1, opt.beta2
    return opt.lr * np.sqrt(1.0 - b2**step) / (1.0 - b1**step)


# error_model="numpy": no zero check on the division (sqrt(v) + eps > 0), which would
# keep the loop scalar
@njit(cache=True, nogil=True, error_model="numpy")
def adam(x, g, m, v, scale, opt, step):
    """One Adam step on the flat arrays ``x`` (parameters), ``m``, ``v`` (moments) with
    the gradient ``scale * g``; ``opt`` is an :class:`AdamSettings`."""
    a = _adam_rate(opt, step)
    b1, b2, eps = opt.beta1, opt.beta2, opt.eps
    for i in range(x.shape[0]):
        gi = scale * g[i]
        m[i] = b1 * m[i] + (1.0 - b1) * gi
        v[i] = b2 * v[i] + (1.0 - b2) * gi * gi
        x[i] -= a * m[i] / (np.sqrt(v[i]) + eps)


# error_model="numpy": no zero check on the division (sqrt(v) + eps > 0), which would
# keep the loop scalar
@njit(cache=True, nogil=True, error_model="numpy")
def adam_rows(x, g, m, v, rows, scale, opt, step):
    """Lazy Adam: :func:`adam` on the rows ``rows`` of the matrices only (the other rows
    and their moments are left alone), zeroing those rows of ``g``."""
    a = _adam_rate(opt, step)
    b1, b2, eps = opt.beta1, opt.beta2, opt.eps
    for r in rows:
        # row views: the inner loop runs over contiguous 1-D arrays, which LLVM vectorises
        xr, gr, mr, vr = x[r], g[r], m[r], v[r]
        for k in range(xr.shape[0]):
            gk = scale * gr[k]
            mr[k] = b1 * mr[k] + (1.0 - b1) * gk
            vr[k] = b2 * vr[k] + (1.0 - b2) * gk * gk
            xr[k] -= a * mr[k] / (np.sqrt(vr[k]) + eps)
            gr[k] = 0.0
