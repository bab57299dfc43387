"""QRNRanker: the numba kernels against a plain numpy reference, a finite-difference check
of the whole forward/backward pass over every parameter, and the estimator contract."""

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import TINY_KB, make_tiny_dialogs
from test_memn2n import Problem

from irdialog.base import Context, Turn
from irdialog.embed import _qrn_kernels as Q
from irdialog.embed import _qrn_reference as R
from irdialog.embed._memn2n_kernels import Contexts
from irdialog.embed._qrn import QRNRanker
from irdialog.features import MatchTypeFeaturizer
from irdialog.pipeline import make_ranking_pipeline

# --------------------------------------------------------------------------- a tiny problem


class QRNProblem:
    """MemN2N's tiny problem (:class:`test_memn2n.Problem`: 6 examples with 0-4 memories,
    speakers, unknown words, 7 candidates, 2 entity types) with random QRN weights."""

    def __init__(self, seed, layers=2, tied=True, reset=True, bidir=True, pe=True,
                 dtype=np.float64, dim=4):  # fmt: skip
        self.pb = Problem(seed, dtype=dtype, dim=dim)
        rng = np.random.default_rng(seed + 100)
        self.cfg = Q.make_cfg(layers, tied, reset, bidir, 7 if pe else 0)
        self.E = (rng.standard_normal((2, self.pb.V, dim)) * 0.5).astype(dtype)
        self.E[:, 0] = 0
        n_units = 1 if tied else layers
        self.theta = (rng.standard_normal((n_units, Q.unit_layout(dim)[-1])) * 0.5).astype(dtype)

    def kernel_loss_grad(self, E=None, theta=None):
        pb = self.pb
        E = self.E if E is None else E
        theta = self.theta if theta is None else theta
        ws = Q.Workspace(E, theta, int(self.cfg[0]), len(pb.batch),
                         int(np.diff(pb.mptr).max()), pb.n_cand, 2)  # fmt: skip
        loss, correct = Q.batch_loss_grad(
            E, theta, self.cfg, pb.data(), pb.cands(), pb.y, pb.batch, ws
        )
        return loss, correct, ws.dE.copy(), ws.dtheta.copy()

    def reference_loss(self, E=None, theta=None):
        E = self.E if E is None else E
        theta = self.theta if theta is None else theta
        return R.batch_loss(self.pb, E, theta, self.cfg)


CONFIGS = [
    dict(),
    dict(tied=False, layers=3),
    dict(reset=False),
    dict(bidir=False, pe=False),
    dict(layers=1),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_forward_matches_numpy_reference(config, dtype):
    qp = QRNProblem(0, dtype=dtype, **config)
    loss, correct, _, _ = qp.kernel_loss_grad()
    r_loss, r_correct, states = qp.reference_loss()
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(loss, r_loss, **tol)
    assert correct == r_correct
    gates = np.zeros((len(qp.pb.batch), int(qp.cfg[0]), 4), dtype)
    U = Q.forward_states(qp.E, qp.theta, qp.cfg, qp.pb.data(), qp.pb.batch, gates)
    np.testing.assert_allclose(U, np.asarray(states), **tol)
    assert np.all(gates[qp.pb.batch == 0] == 0)  # example 0 has no memory
    assert np.all((gates >= 0) & (gates <= 1)) and gates.any()


def _central_differences(f, W, eps=1e-6):
    out = np.zeros_like(W)
    flat, grad = W.reshape(-1), out.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        grad[i] = (up - down) / (2 * eps)
    return out


@pytest.mark.parametrize("config", CONFIGS)
def test_gradient_matches_finite_differences_of_the_reference(config):
    """Every parameter: both embedding matrices (sentences, query, speakers, candidates,
    type words) and every weight of the unit (candidate, update and both reset gates)."""
    qp = QRNProblem(1, **config)
    _, _, dE, dtheta = qp.kernel_loss_grad()
    E, theta = qp.E.copy(), qp.theta.copy()
    fd_E = _central_differences(lambda: qp.reference_loss(E=E)[0], E)
    fd_E[:, 0] = 0  # the nil word is held at zero
    dE[:, 0] = 0
    fd_theta = _central_differences(lambda: qp.reference_loss(theta=theta)[0], theta)
    np.testing.assert_allclose(dE, fd_E, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dtheta, fd_theta, rtol=1e-5, atol=1e-7)
    assert np.count_nonzero(dtheta) > 0.5 * dtheta.size


def test_float32_gradient_is_the_float64_one():
    q64, q32 = QRNProblem(2), QRNProblem(2, dtype=np.float32)
    q32.E, q32.theta = q64.E.astype(np.float32), q64.theta.astype(np.float32)
    _, _, dE64, dt64 = q64.kernel_loss_grad()
    _, _, dE32, dt32 = q32.kernel_loss_grad()
    np.testing.assert_allclose(dE32, dE64, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(dt32, dt64, rtol=2e-3, atol=2e-4)
