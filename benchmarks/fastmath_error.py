"""The worst errors of irdialog's fast float32 exp, sigmoid and tanh over every float32
input in [-90, 88] (2.24 billion values), against float64 numpy.

    python -m benchmarks.fastmath_error

The figures quoted in :mod:`irdialog.embed._fastmath` come from this (about 4 CPU minutes);
``tests/test_fastmath.py`` checks the same bounds on a sample, fast.
"""

from __future__ import annotations

import numpy as np

from irdialog.embed import _fastmath as F

CHUNK = 1 << 24


def float32_range(lo: float, hi: float) -> list[np.ndarray]:
    """Bit patterns of every float32 in [lo, 0] and [0, hi] (lo < 0 < hi), as two uint32
    ranges (negative floats count their bits from -0 upwards)."""
    neg_end = int(np.float32(lo).view(np.uint32))
    pos_end = int(np.float32(hi).view(np.uint32))
    return [(0x80000000, neg_end + 1), (0, pos_end + 1)]


def worst_errors(lo: float = -90.0, hi: float = 88.0) -> dict[str, float]:
    """Worst relative (exp, sigmoid; tanh for |x| >= 0.5 and >= 0.1) and absolute (tanh)
    errors, each over the inputs where the module states its bound."""
    worst = dict.fromkeys(["exp", "sigmoid", "tanh_abs", "tanh_rel_05", "tanh_rel_01"], 0.0)
    bits = np.empty(CHUNK, np.int32)
    n = 0
    for start, stop in float32_range(lo, hi):
        for s in range(start, stop, CHUNK):
            x = np.arange(s, min(s + CHUNK, stop), dtype=np.uint64).astype(np.uint32)
            x = x.view(np.float32)
            x64 = x.astype(np.float64)
            n += len(x)

            def update(key, got, want, keep, relative=True):
                err = np.abs(got[keep] - want[keep])
                if relative:
                    err /= np.abs(want[keep])
                worst[key] = max(worst[key], float(err.max(initial=0.0)))

            y = x.copy()
            F.exp_inplace(y, bits)
            update("exp", y, np.exp(x64), (x64 >= -87) & (x64 <= 88))
            y = x.copy()
            F.sigmoid_inplace(y, bits)
            update("sigmoid", y, 1.0 / (1.0 + np.exp(-x64)), x64 >= -87)
            y = x.copy()
            F.tanh_inplace(y, bits)
            want = np.tanh(x64)
            update("tanh_abs", y, want, slice(None), relative=False)
            update("tanh_rel_05", y, want, np.abs(x64) >= 0.5)
            update("tanh_rel_01", y, want, np.abs(x64) >= 0.1)
    worst["inputs"] = n
    return worst


def main(argv=None):
    worst = worst_errors()
    print(f"{worst.pop('inputs')} float32 inputs in [-90, 88]")
    for key, value in worst.items():
        print(f"{key}: {value:.3g}")


if __name__ == "__main__":
    main()
