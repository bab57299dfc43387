"""The fast float32 exponential, sigmoid and tanh against their numpy references: the
error bounds the module states, the clamps and NaN."""

import numpy as np
import pytest

from irdialog.embed import _fastmath as F
from irdialog.embed import _recurrent_kernels as RK
from irdialog.embed import _reference as R

FUNCTIONS = {
    "exp": (F.exp_inplace, R.fast_exp),
    "sigmoid": (F.sigmoid_inplace, R.fast_sigmoid),
    "tanh": (F.tanh_inplace, R.fast_tanh),
}


def _floats(lo, hi, stride):
    """Every ``stride``-th float32 in [lo, hi] by bit pattern, both signs, with the ends."""
    parts = [np.float32([lo, hi, 0.0, -0.0])]
    if lo < 0:
        top = int(np.float32(-lo).view(np.uint32))
        parts.append(np.arange(0x80000000, 0x80000000 + top + 1, stride, np.uint32))
    if hi > 0:
        parts.append(np.arange(0, int(np.float32(hi).view(np.uint32)) + 1, stride, np.uint32))
    return np.concatenate([p.view(np.float32) for p in parts])


def _run(f, x):
    out = np.array(x, np.float32)
    f(out, np.empty(len(out), np.int32))
    return out


def _rel_error(got, want):
    return np.abs(got.astype(np.float64) - want) / np.abs(want)


def test_exp_relative_error_below_1e7_over_its_range():
    x = _floats(-87.0, 88.0, 997)  # about 2.3 million inputs spread over every exponent
    assert _rel_error(_run(F.exp_inplace, x), R.fast_exp(x)).max() < 1e-7


def test_exp_rounds_k_to_nearest_at_the_reduction_boundaries():
    # x = (k + 1/2) ln 2, where k = round(x / ln 2) switches: |r| stays near ln(2) / 2
    k = np.arange(-125, 127) + 0.5
    x = np.concatenate(
        [np.nextafter(np.float32(k * np.log(2)), np.float32(s)) for s in (-1e9, 1e9)]
    )
    x = x[(x >= -87) & (x <= 88)]
    assert _rel_error(_run(F.exp_inplace, x), R.fast_exp(x)).max() < 1e-7


def test_sigmoid_relative_error_below_2e7():
    x = _floats(-87.0, 88.0, 997)
    assert _rel_error(_run(F.sigmoid_inplace, x), R.fast_sigmoid(x)).max() < 2e-7


def test_tanh_absolute_error_below_2e7_and_relative_away_from_zero():
    x = _floats(-50.0, 50.0, 997)
    got, want = _run(F.tanh_inplace, x), R.fast_tanh(x)
    assert np.abs(got - want).max() < 2e-7
    far = np.abs(x) >= 0.5
    assert _rel_error(got[far], want[far]).max() < 5e-7


def test_clamps_saturate_without_overflow():
    x = np.float32([-np.inf, -1e30, -88.0, -87.0, 88.0, 89.0, 1e30, np.inf])
    e = _run(F.exp_inplace, x)
    lo, hi = _run(F.exp_inplace, [-87.0])[0], _run(F.exp_inplace, [88.0])[0]
    np.testing.assert_array_equal(e, [lo, lo, lo, lo, hi, hi, hi, hi])
    assert np.isfinite(hi) and hi == pytest.approx(np.exp(88.0), rel=1e-7)
    assert lo == pytest.approx(np.exp(-87.0), rel=1e-7)
    t = _run(F.tanh_inplace, np.float32([-np.inf, -44.0, 44.0, np.inf]))
    np.testing.assert_array_equal(t, [-1.0, -1.0, 1.0, 1.0])
    s = _run(F.sigmoid_inplace, np.float32([-np.inf, -1e30, -88.0, np.inf, 0.0]))
    tiny = np.float32(1.0) / (np.float32(1.0) + hi)  # sigmoid(-88), subnormal
    np.testing.assert_array_equal(s, [tiny, tiny, tiny, 1.0, 0.5])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_nan_in_nan_out(name):
    f, _ = FUNCTIONS[name]
    got = _run(f, np.float32([1.0, np.nan, -2.0, np.nan]))
    assert np.isnan(got[[1, 3]]).all() and np.isfinite(got[[0, 2]]).all()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float64_arrays_take_numpy_exactly(name):
    f, _ = FUNCTIONS[name]
    x = np.linspace(-30.0, 30.0, 101)
    got = x.copy()
    f(got, np.empty(len(x), np.int32))
    want = {"exp": np.exp(x), "sigmoid": 1.0 / (1.0 + np.exp(-x)), "tanh": np.tanh(x)}[name]
    np.testing.assert_allclose(got, want, rtol=1e-15)  # numba's libm, not numpy's loops


def test_lstm_gates_are_the_shared_tanh_and_sigmoid():
    rng = np.random.default_rng(0)
    hd = 8
    row = rng.normal(0.0, 4.0, 4 * hd).astype(np.float32)
    b = rng.normal(0.0, 1.0, 4 * hd).astype(np.float32)
    pre = np.ones(4 * hd, np.float32)
    post = np.zeros(4 * hd, np.float32)
    sig = np.r_[0 : 2 * hd, 3 * hd : 4 * hd]
    pre[sig], post[sig] = 0.5, 1.0
    got = row.copy()
    RK._gates_fast(got, b, pre, post, np.empty(4 * hd, np.int32))
    z = row.astype(np.float64) + b
    want = np.tanh(z)
    want[sig] = R.fast_sigmoid(z[sig])
    np.testing.assert_allclose(got, want, rtol=5e-7, atol=2e-7)
