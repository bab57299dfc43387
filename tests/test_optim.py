"""The optimizer steps of irdialog.embed._optim against their numpy references."""

import numpy as np
import pytest

from irdialog.embed import _optim as O
from irdialog.embed import _reference as R

SETTINGS = O.AdamSettings(0.01, 0.9, 0.999, 1e-8)


def _arrays(seed, shape=(7, 5)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(shape)


@pytest.mark.parametrize("max_norm", [-1.0, 0.5, 1e6])
def test_clip_scale_of_several_arrays_and_of_rows(max_norm):
    a, b = _arrays(0)
    sq = O.squared_norm(a) + O.squared_norm(b)
    assert O.clip_scale(sq, max_norm) == pytest.approx(R.clip_scale([a, b], max_norm), rel=1e-14)
    rows = np.array([1, 4, 6])
    masked = np.zeros_like(a)
    masked[rows] = a[rows]
    assert O.rows_squared_norm(a, rows) == pytest.approx(O.squared_norm(masked), rel=1e-14)
    if 0 < max_norm < np.sqrt(sq):
        assert np.sqrt(sq) * O.clip_scale(sq, max_norm) == pytest.approx(max_norm)


def test_squared_norm_sums_float32_products_in_float64():
    g = np.full(4, 3e-23, np.float32)  # each square underflows in float32
    assert O.squared_norm(g) == pytest.approx(4 * float(g[0]) ** 2, rel=1e-12)


@pytest.mark.parametrize("scale", [1.0, 0.3])
def test_sgd_and_sgd_rows(scale):
    x, g = _arrays(1)
    want = R.sgd_step(x, g, 0.1, scale)
    got = x.copy()
    O.sgd(got.reshape(-1), g.reshape(-1), 0.1, scale)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    rows = np.array([0, 3])
    got, g_rows = x.copy(), g.copy()
    O.sgd_rows(got, g_rows, rows, 0.1, scale)
    np.testing.assert_allclose(got[rows], want[rows], rtol=1e-15)
    others = np.setdiff1d(np.arange(len(x)), rows)
    np.testing.assert_array_equal(got[others], x[others])
    assert not g_rows[rows].any() and (g_rows[others] == g[others]).all()


def test_sgd_row_and_adagrad_row():
    x, _ = _arrays(2)
    vec = np.random.default_rng(3).standard_normal(x.shape[1])
    got = x.copy()
    O.sgd_row(got, 2, 0.5, vec, 0.1)
    np.testing.assert_allclose(got[2], R.sgd_step(x[2], 0.5 * vec, 0.1), rtol=1e-15)
    acc = np.full(len(x), 0.3)
    got = x.copy()
    for _ in range(3):  # the accumulator grows, the steps shrink
        want_row, want_acc = R.adagrad_row(got[4], acc[4], 0.5, vec, 0.1)
        O.adagrad_row(got, acc, 4, 0.5, vec, vec @ vec, 0.1)
        np.testing.assert_allclose(got[4], want_row, rtol=1e-14)
        assert acc[4] == pytest.approx(want_acc, rel=1e-14)
    np.testing.assert_array_equal(np.delete(got, 4, axis=0), np.delete(x, 4, axis=0))


@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_adam_and_lazy_adam_match_numpy_adam(scale):
    x, _ = _arrays(4)
    rows = np.array([1, 2, 5])
    dense, m, v = x.copy(), np.zeros_like(x), np.zeros_like(x)
    lazy, lm, lv = x.copy(), np.zeros_like(x), np.zeros_like(x)
    ref, rm, rv = x.copy(), np.zeros_like(x), np.zeros_like(x)
    rng = np.random.default_rng(5)
    for step in range(1, 5):
        g = rng.standard_normal(x.shape)
        ref, rm, rv = R.adam_step(ref, g, rm, rv, step, *SETTINGS, scale=scale)
        flat = [a.reshape(-1) for a in (dense, g, m, v)]
        O.adam(*flat, scale, SETTINGS, step)
        g_lazy = g.copy()
        O.adam_rows(lazy, g_lazy, lm, lv, rows, scale, SETTINGS, step)
        assert not g_lazy[rows].any()
    np.testing.assert_allclose(dense, ref, rtol=1e-12)
    np.testing.assert_allclose(m, rm, rtol=1e-12)
    np.testing.assert_allclose(lazy[rows], ref[rows], rtol=1e-12)
    others = np.setdiff1d(np.arange(len(x)), rows)
    np.testing.assert_array_equal(lazy[others], x[others])
    assert not lm[others].any() and not lv[others].any()


def test_float32_parameters_stay_float32():
    x = np.ones(4, np.float32)
    g = np.full(4, 0.5, np.float32)
    m, v = np.zeros_like(x), np.zeros_like(x)
    O.adam(x, g, m, v, 1.0, SETTINGS, 1)
    assert x.dtype == np.float32
    np.testing.assert_allclose(x, R.adam_step(1.0, 0.5, 0.0, 0.0, 1, *SETTINGS)[0], rtol=1e-6)
