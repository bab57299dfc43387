"""Fast float32 exponential, sigmoid and tanh for the numba kernels of :mod:`irdialog.embed`.

A scalar ``np.exp`` (one ``expf`` call per entry) keeps LLVM from vectorising a loop, and
in the softmax of MemN2N and the gates of the recurrent encoders it would cost more than
the matrix products around it. Here the exponential is the Cephes ``expf`` written out so
that loops over it vectorise: ``exp(x) = 2^k exp(r)`` with ``k = round(x / ln 2)`` and
``|r| <= ln(2)/2``, ``exp(r)`` by a degree-7 polynomial, and ``2^k`` built from exponent
bits in an int32 scratch array (then read back as float32 through a view).

Accuracy, measured against float64 ``np.exp``/``np.tanh`` (the references ``fast_exp``,
``fast_sigmoid`` and ``fast_tanh`` of :mod:`irdialog.embed._reference`; the measured
worst cases are over every float32 input, by ``python -m benchmarks.fastmath_error``, and
``tests/test_fastmath.py`` checks the bounds on samples):

- :func:`exp_inplace`: relative error below ``1e-7`` (measured: 8.3e-8 over every
  float32 in [-90, 88]) for ``-87 <= x <= 88``. Inputs are clamped to that range:
  ``x < -87`` gives ``exp(-87)`` (~1.6e-38, an absolute error below 1.7e-38, where float32
  would hold subnormals or zero), ``x > 88`` gives ``exp(88)`` (~1.65e38) rather than
  overflowing to infinity. NaN gives NaN.
- :func:`sigmoid_inplace`, ``1 / (1 + exp(-x))``: relative error below ``2e-7`` for
  ``-87 <= x`` (measured: 1.5e-7); below, the result is subnormal, and ``x < -88`` gives
  ``sigmoid(-88)`` (~6.1e-39), not less. NaN gives NaN.
- :func:`tanh_inplace`, ``1 - 2 / (exp(2x) + 1)``: absolute error below ``2e-7``
  everywhere (measured: 1.8e-7); the form loses relative accuracy as ``x`` nears 0, where
  ``tanh(x) ~ x`` (relative error below 5e-7 for ``|x| >= 0.5``, 2e-6 for ``|x| >= 0.1``;
  measured: 3.2e-7 and 1.1e-6).
  ``|x| >= 44`` gives exactly ``+-1``. NaN gives NaN.

Every function is generic in the float type: float32 arrays take the polynomial, float64
ones ``np.exp`` and ``np.tanh`` (the gradient checks of the tests run in float64). No
``fastmath`` flags: the clamps must see NaN as it is.
"""

import numpy as np
from numba import njit

_LOG2E = np.float32(1.4426950408889634)
# ln 2 split in two (Cody-Waite): the high part has few enough bits that k * ln2_hi is exact.
_LN2_HI = np.float32(0.693359375)
_LN2_LO = np.float32(-2.12194440e-4)
_LO = np.float32(-87.0)  # exp(-87) is still a normal float32 (2^k with k >= -126)
_HI = np.float32(88.0)  # exp(88) < FLT_MAX, and 2^k with k <= 127 fits the exponent bits


@njit(cache=True, inline="always")
def exp_parts(v):
    """``(p, bits)`` with ``exp(v) = p * 2^k`` and ``bits`` the int32 pattern of the
    float32 ``2^k``: the exponential without its final product, for loops that store
    ``bits`` into an int32 array and multiply by its float32 view in a second pass.

    ``v`` (float32) is clamped to [-87, 88]; ``k = floor(v log2(e) + 1/2)``, the nearest
    integer (a truncation of the shifted positive number instead, as the recurrent kernels
    once had, is off by one for 881 float32 inputs near the half-integers, with a larger
    error there).
    """
    v = _LO if v < _LO else v
    v = _HI if v > _HI else v
    kf = np.floor(v * _LOG2E + np.float32(0.5))
    ki = np.int32(kf)
    r = v - kf * _LN2_HI - kf * _LN2_LO
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    return p * r * r + r + np.float32(1.0), (ki + np.int32(127)) << 23


@njit(cache=True, nogil=True)
def exp_inplace(x, bits):
    """``x = exp(x)`` in place on a 1-D array; ``bits`` is int32 scratch at least as long.

    float32: the polynomial of :func:`exp_parts` (see the module docstring for its error
    and clamps); float64: ``np.exp``.
    """
    n = x.shape[0]
    if x.itemsize != 4:
        for i in range(n):
            x[i] = np.exp(x[i])
        return
    for i in range(n):
        x[i], bits[i] = exp_parts(x[i])
    scale = bits[:n].view(np.float32)
    for i in range(n):
        x[i] *= scale[i]


# error_model="numpy": no zero check on the division (1 + exp(.) >= 1), which would
# keep the loop scalar
@njit(cache=True, nogil=True, error_model="numpy")
def sigmoid_inplace(x, bits):
    """``x = 1 / (1 + exp(-x))`` in place on a 1-D array, the exponential by
    :func:`exp_inplace`."""
    for i in range(x.shape[0]):
        x[i] = -x[i]
    exp_inplace(x, bits)
    one = np.float32(1.0)  # exact: float64 arrays stay float64, float32 ones float32
    for i in range(x.shape[0]):
        x[i] = one / (one + x[i])


# error_model="numpy": no zero check on the division (1 + exp(.) >= 1), which would
# keep the loop scalar
@njit(cache=True, nogil=True, error_model="numpy")
def tanh_inplace(x, bits):
    """``x = tanh(x)`` in place on a 1-D array: float32 as ``1 - 2 / (exp(2x) + 1)`` with
    :func:`exp_inplace`, float64 by ``np.tanh``."""
    if x.itemsize != 4:
        for i in range(x.shape[0]):
            x[i] = np.tanh(x[i])
        return
    one, two = np.float32(1.0), np.float32(2.0)
    for i in range(x.shape[0]):
        x[i] = two * x[i]
    exp_inplace(x, bits)
    for i in range(x.shape[0]):
        x[i] = one - two / (x[i] + one)
