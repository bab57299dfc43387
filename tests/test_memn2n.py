"""MemN2NRanker: numba kernels against a plain numpy reference, a finite-difference check of
the whole forward/backward pass, the optimizer steps, and the estimator contract."""

import numba
import numpy as np
import pytest
from conformance import RankerConformance
from conftest import TINY_KB, make_tiny_dialogs, make_where_is_stories
from sklearn.pipeline import make_pipeline

from irdialog.base import Context, Turn
from irdialog.embed import _memn2n
from irdialog.embed import _memn2n_kernels as K
from irdialog.embed import _reference as R
from irdialog.embed._memn2n import MemN2NRanker
from irdialog.features import MatchTypeFeaturizer, match_type_matrices
from irdialog.text import Vocabulary, tokenize

# --------------------------------------------------------------------------- a tiny problem


class Problem:
    """A random tiny model and batch, built directly as the kernels' arrays.

    12 words (0 is nil, 1-2 speakers, 3-6 time words, 7-8 type words), 6 examples with 0-4
    memories of 0-5 words (some unknown, i.e. nil), 7 candidates, 2 entity types.
    """

    def __init__(self, seed, tying="adjacent", pe=True, softmax=True, relu=False, hops=3,
                 slots=6, dtype=np.float64, dim=5, gate=K.NO_GATE):  # fmt: skip
        rng = np.random.default_rng(seed)
        self.V, self.dim, self.hops = 14, dim, hops
        self.cfg, n_mat = K.make_cfg(hops, tying, 7 if pe else 0, softmax, relu, slots, gate)
        self.E = (rng.standard_normal((n_mat, self.V, dim)) * 0.5).astype(dtype)
        self.E[:, 0] = 0
        self.H = (rng.standard_normal((dim, dim)) * 0.5).astype(dtype)
        # drawn after the rest, so that the ungated problems stay those they were
        self.G = (rng.standard_normal((K.n_gates(self.cfg), dim, dim + 1)) * 0.5).astype(dtype)
        words = np.arange(9, self.V)
        n_sent = 9
        sents = []
        for _ in range(n_sent):
            n = rng.integers(0, 6)
            toks = rng.choice(words, n)
            toks[rng.random(n) < 0.15] = 0  # an unknown word keeps its position
            sents.append(toks)
        self.sents = sents
        self.sptr = np.concatenate([[0], np.cumsum([len(t) for t in sents])]).astype(np.int64)
        self.stok = np.concatenate(sents).astype(np.int32)
        self.sspk = rng.choice([0, 1, 2], n_sent).astype(np.int32)
        n_ex = 6
        self.qsent = rng.integers(0, n_sent, n_ex).astype(np.int64)
        mems = [rng.integers(0, n_sent, rng.integers(0, 5)) for _ in range(n_ex)]
        mems[0] = mems[0][:0]  # an example with no memory
        self.mems = mems
        self.mptr = np.concatenate([[0], np.cumsum([len(m) for m in mems])]).astype(np.int64)
        self.msent = np.concatenate(mems).astype(np.int64)
        self.mtime = np.concatenate([3 + np.arange(len(m))[::-1] for m in mems]).astype(np.int32)
        self.mtime[::3] = 0  # some memories without a time word
        # candidates over words 9..13, and their word lists for match types (ids 0..5)
        self.n_cand = 7
        self.bags = np.zeros((self.n_cand, self.V))
        cand_words = []
        for c in range(self.n_cand):
            toks = rng.choice(words, rng.integers(1, 4))
            for t in toks:
                self.bags[c, t] += 1
            cand_words.append(sorted({int(t) - 9 for t in toks} | ({5} if c % 3 == 0 else set())))
        self.cand_words = cand_words
        self._candidate_arrays()
        self.type_tok = np.asarray([7, 8], np.int32)
        ents = [
            [(int(v), int(t)) for v, t in zip(rng.integers(0, 6, 3), rng.integers(0, 2, 3))]
            for _ in range(n_ex)
        ]
        ents[1] = []
        self.ents = ents
        self.eptr = np.concatenate([[0], np.cumsum([len(e) for e in ents])]).astype(np.int64)
        self.eword = np.asarray([v for e in ents for v, _ in e], np.int32)
        self.etype = np.asarray([t for e in ents for _, t in e], np.int32)
        self.y = rng.integers(0, self.n_cand, n_ex).astype(np.int64)
        self.batch = np.asarray([3, 0, 5, 1, 2], np.int64)

    def _candidate_arrays(self):
        """The kernels' arrays of the rows of ``bags`` and ``cand_words``."""
        rows = range(len(self.bags))
        cp, ct, cw = [0], [], []
        for c in rows:
            nz = np.flatnonzero(self.bags[c])
            ct.extend(nz)
            cw.extend(self.bags[c, nz])
            cp.append(len(ct))
        self.cptr = np.asarray(cp, np.int64)
        self.ctok = np.asarray(ct, np.int32)
        self.cw = np.asarray(cw, self.E.dtype)
        postings = [[c for c in rows if v in self.cand_words[c]] for v in range(6)]
        self.iptr = np.concatenate([[0], np.cumsum([len(p) for p in postings])]).astype(np.int64)
        self.icand = np.concatenate(postings).astype(np.int32)

    def data(self):
        return K.Contexts(self.sptr, self.stok, self.sspk, self.qsent, self.mptr, self.msent,
                          self.mtime, self.eptr, self.eword, self.etype)  # fmt: skip

    def cands(self):
        return K.Candidates(self.cptr, self.ctok, self.cw, self.iptr, self.icand, self.type_tok)

    def workspace(self, batch_size=None):
        n_mat = self.E.shape[0]
        return K.Workspace(n_mat, self.V, self.dim, self.hops, batch_size or len(self.batch),
                           int(np.diff(self.mptr).max()), len(self.bags), 2, self.E.dtype,
                           n_gates=len(self.G))  # fmt: skip

    def kernel_loss_grad(self, E=None, H=None, G=None):
        ws = self.workspace()
        E = self.E if E is None else E
        H = self.H if H is None else H
        G = self.G if G is None else G
        loss, correct = K.batch_loss_grad(
            E, H, G, self.cfg, self.data(), self.cands(), self.y, self.batch, ws,
            *self.pool_args(),
        )  # fmt: skip
        return loss, correct, ws.dE.copy(), ws.dH.copy(), ws.dG.copy()

    def pool_args(self):
        """The pools of :func:`~irdialog.embed._memn2n_kernels.batch_loss_grad`: none."""
        return ()


class PooledProblem(Problem):
    """:class:`Problem` with two responses outside the 7 candidates (rows 7 and 8 of the
    response table) and a pool per example: empty (the softmax over the candidates),
    with repeats and the responses outside, with its gold response, and so on."""

    def __init__(self, seed, pools=None, **kw):
        super().__init__(seed, **kw)
        extra = np.zeros((2, self.V))
        extra[0, [9, 11]] = 1
        extra[1, 13] = 2
        self.bags = np.vstack([self.bags, extra])
        self.cand_words = self.cand_words + [[0, 2], [4, 5]]
        self._candidate_arrays()
        y = [int(g) for g in self.y]
        self.pools = pools or [[], [7, 2, 2, 8], [y[2], 0, 1], [8], [3, 4, 5, 6], [7, y[5]]]

    def pool_args(self):
        indptr = np.concatenate([[0], np.cumsum([len(p) for p in self.pools])]).astype(np.int64)
        indices = np.asarray([c for p in self.pools for c in p], np.int64)
        return (K.SoftmaxPools(indptr, indices, self.n_cand),)


# --------------------------------------------------------------------------- kernel tests

CONFIGS = [
    dict(tying="adjacent", pe=True, softmax=True, relu=False),
    dict(tying="adjacent", pe=False, softmax=False, relu=False),
    dict(tying="layerwise", pe=True, softmax=True, relu=True, slots=0),
    dict(tying="layerwise", pe=False, softmax=True, relu=False, hops=1),
    dict(tying="adjacent", pe=True, softmax=True, relu=False, slots=0),
]
# the gated hops of Liu & Perez (2017): one gate for all hops, or one per hop
GATED = [
    dict(tying="adjacent", pe=True, softmax=True, relu=False, gate=K.GLOBAL_GATE),
    dict(tying="layerwise", pe=True, softmax=True, relu=True, gate=K.HOP_GATES),
    dict(tying="adjacent", pe=False, softmax=True, relu=False, gate=K.HOP_GATES, slots=0),
]


@pytest.mark.parametrize("config", CONFIGS + GATED)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("pooled", [False, True])
def test_forward_and_gradient_match_numpy_reference(config, dtype, pooled):
    """The kernels against the reference: the softmax over every candidate, or over each
    example's gold response and its pool (:class:`PooledProblem`)."""
    pb = (PooledProblem if pooled else Problem)(0, dtype=dtype, **config)
    loss, correct, dE, dH, dG = pb.kernel_loss_grad()
    r_loss, r_correct, r_dE, r_dH, r_dG, states = R.batch_loss_grad(pb, pb.E, pb.H, pb.G)
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(loss, r_loss, **tol)
    assert correct == r_correct
    np.testing.assert_allclose(dE, r_dE, **tol)
    if config["tying"] == "layerwise":
        np.testing.assert_allclose(dH, r_dH, **tol)
    np.testing.assert_allclose(dG, r_dG, **tol)
    assert dG.shape == (K.n_gates(pb.cfg), pb.dim, pb.dim + 1)
    if "gate" in config:
        assert np.abs(dG).sum(axis=(1, 2)).min() > 0 and not dH.any()  # the gate replaces H
    # final states and attention from the inference kernel
    hops = pb.cfg[0]
    att = np.zeros((len(pb.batch), hops, 4), dtype)
    U = K.forward_states(pb.E, pb.H, pb.G, pb.cfg, pb.data(), pb.batch, att)
    for i, (u, ps) in enumerate(states):
        np.testing.assert_allclose(U[i], u, **tol)
        for k in range(hops):
            np.testing.assert_allclose(att[i, k, : len(ps[k])], ps[k][::-1], **tol)


def _assert_embedding_gradient(pb, dE, eps):
    """dE against central differences of the problem's loss, at every embedding but
    the nil word's."""
    E = pb.E.copy()
    for p in range(E.shape[0]):
        for v in range(1, pb.V):
            for k in range(pb.dim):
                old = E[p, v, k]
                E[p, v, k] = old + eps
                up = pb.kernel_loss_grad(E=E)[0]
                E[p, v, k] = old - eps
                down = pb.kernel_loss_grad(E=E)[0]
                E[p, v, k] = old
                fd = (up - down) / (2 * eps)
                assert fd == pytest.approx(dE[p, v, k], rel=1e-5, abs=1e-7), (p, v, k)


@pytest.mark.parametrize("config", CONFIGS[:3] + GATED)
def test_finite_difference_gradient(config):
    """Central differences of the whole forward pass (PE, TE, speakers, match types, hops,
    and every weight and bias of the gates)."""
    pb = Problem(1, dtype=np.float64, **config)
    _, _, dE, dH, dG = pb.kernel_loss_grad()
    eps = 1e-6
    rng = np.random.default_rng(0)
    used = np.flatnonzero(np.abs(dE).sum(axis=(0, 2)) > 0)
    assert len(used) > 8  # words, speakers, time words and type words all get gradient
    _assert_embedding_gradient(pb, dE, eps)
    if config["tying"] == "layerwise":
        H = pb.H.copy()
        for r, k in rng.integers(0, pb.dim, (10, 2)):
            old = H[r, k]
            H[r, k] = old + eps
            up = pb.kernel_loss_grad(H=H)[0]
            H[r, k] = old - eps
            down = pb.kernel_loss_grad(H=H)[0]
            H[r, k] = old
            assert (up - down) / (2 * eps) == pytest.approx(dH[r, k], rel=1e-5, abs=1e-7)
    G = pb.G.copy()
    for idx in np.ndindex(G.shape):
        old = G[idx]
        G[idx] = old + eps
        up = pb.kernel_loss_grad(G=G)[0]
        G[idx] = old - eps
        down = pb.kernel_loss_grad(G=G)[0]
        G[idx] = old
        assert (up - down) / (2 * eps) == pytest.approx(dG[idx], rel=1e-5, abs=1e-7), idx


def test_partial_batch_uses_its_own_logit_buffer():
    pb = Problem(2, dtype=np.float64)
    ws = pb.workspace(batch_size=8)  # batch of 5 < 8
    args = (pb.cfg, pb.data(), pb.cands(), pb.y, pb.batch, ws)
    loss, _ = K.batch_loss_grad(pb.E, pb.H, pb.G, *args)
    assert loss == pytest.approx(R.batch_loss_grad(pb, pb.E, pb.H)[0], rel=1e-10)


def test_pools_change_the_loss_and_reach_the_responses_outside():
    pb = PooledProblem(0, dtype=np.float64)
    loss, _, dE, _, _ = pb.kernel_loss_grad()
    # the responses outside the candidates get gradient through the pools that hold them
    assert np.abs(dE[pb.cfg[K.W_MAT], [9, 11, 13]]).sum() > 0
    # the full softmax over the candidates is another loss
    assert abs(Problem(0, dtype=np.float64).kernel_loss_grad()[0] - loss) > 1e-3


def test_pool_softmax_finite_difference_gradient():
    """Central differences of the loss of the pools' softmax, match types included."""
    pb = PooledProblem(1, dtype=np.float64, **CONFIGS[0])
    _, _, dE, _, _ = pb.kernel_loss_grad()
    w = pb.cfg[K.W_MAT]
    assert np.abs(dE[w, 7:9]).sum() > 0  # the type words' share
    _assert_embedding_gradient(pb, dE, 1e-6)


def test_empty_pools_run_the_full_softmax():
    full = Problem(2, dtype=np.float64)
    empty = PooledProblem(2, dtype=np.float64, pools=[[]] * 6)
    for a, b in zip(full.kernel_loss_grad(), empty.kernel_loss_grad(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("batch", [[3, 1, 5], [1, 2], [0], [4, 3, 0, 5, 1, 2]])
def test_pool_rows_and_their_bags_match_numpy_reference(batch):
    """The rows a batch's softmaxes read (gold responses and pools; all the candidates
    for example 0's empty pool) and their bags, against the numpy references."""
    pb = PooledProblem(0, dtype=np.float32, pools=[[], [7, 2, 2, 8], [8, 8], [1], [0, 7], [2]])
    (pools,) = pb.pool_args()
    batch = np.asarray(batch, np.int64)
    n_rows = len(pb.bags)
    rows, pos = K.pool_rows(batch, pb.y, pools, n_rows)
    ref_rows, ref_pos = R.pool_rows(batch, pb.y, pb.pools, pb.n_cand, n_rows)
    np.testing.assert_array_equal(rows, ref_rows)
    np.testing.assert_array_equal(pos, ref_pos)
    assert (0 in batch) == (len(rows) >= pb.n_cand)  # an empty pool reads every candidate
    for got, want in zip(
        K.gather_rows(pb.cptr, pb.ctok, pb.cw, rows),
        R.gather_rows(pb.cptr, pb.ctok, pb.cw, rows),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


def test_pool_softmax_scores_only_the_rows_it_reads(monkeypatch):
    """A batch whose pools leave candidates out embeds and scores its rows only, and its
    loss and gradient are those of the numpy reference over the whole table."""
    pb = PooledProblem(3, dtype=np.float64, **CONFIGS[0])
    pb.batch = np.asarray([1, 3, 5], np.int64)  # no empty pool among them
    embedded = []
    real = K.candidate_embeddings

    def spy(E, w, cptr, ctok, cw, out):
        embedded.append(len(cptr) - 1)
        real(E, w, cptr, ctok, cw, out)

    monkeypatch.setattr(K, "candidate_embeddings", spy)
    loss, correct, dE, dH, _ = pb.kernel_loss_grad()
    want = {int(c) for e in pb.batch for c in [pb.y[e], *pb.pools[e]]}
    assert embedded == [len(want)] and len(want) < len(pb.bags)
    ref_loss, ref_correct, ref_dE, ref_dH, _, _ = R.batch_loss_grad(pb, pb.E, pb.H, pb.G)
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    assert correct == ref_correct
    np.testing.assert_allclose(dE, ref_dE, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dH, ref_dH, rtol=1e-9, atol=1e-12)


def _no_moments():
    e3, e2 = np.zeros((0, 0, 0), np.float32), np.zeros((0, 0), np.float32)
    return K.Moments(e3, e3, e2, e2, e3, e3)


def _update(adam, lr, max_norm, use_h=True, use_gate=False):
    return K.Update(adam, use_h, use_gate, max_norm, lr, 0.9, 0.999, 1e-8)


def _no_gates(E):
    return np.zeros((0, E.shape[2], E.shape[2] + 1), E.dtype)


def test_sgd_update_clips_each_matrix_and_keeps_nil_at_zero():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((3, 6, 4)).astype(np.float32)
    E[:, 0] = 0
    H = rng.standard_normal((4, 4)).astype(np.float32)
    dE = rng.standard_normal(E.shape).astype(np.float32)
    dE[1] *= 100  # only this matrix is over the norm
    dH = rng.standard_normal(H.shape).astype(np.float32) * 100
    want_E = E - 0.1 * dE
    want_E[1] = E[1] - 0.1 * dE[1] * (40 / np.linalg.norm(dE[1]))
    want_E[:, 0] = 0
    want_H = H - 0.1 * dH * (40 / np.linalg.norm(dH))
    G = rng.standard_normal((2, 4, 5)).astype(np.float32)
    dG = rng.standard_normal(G.shape).astype(np.float32) * 100
    want_G = G - 0.1 * dG * (40 / np.linalg.norm(dG))  # the gates clip as one matrix
    update = _update(False, 0.1, 40.0, use_gate=True)
    K.apply_update(E, H, G, dE, dH, dG, _no_moments(), update, 1)
    np.testing.assert_allclose(E, want_E, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(H, want_H, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(G, want_G, rtol=1e-5, atol=1e-6)
    assert not E[:, 0].any()


def test_adam_update_matches_numpy():
    rng = np.random.default_rng(1)
    E = rng.standard_normal((2, 5, 3))
    H = rng.standard_normal((3, 3))
    G = rng.standard_normal((1, 3, 4))
    moments = K.Moments(*(np.zeros_like(x) for x in (E, E, H, H, G, G)))
    ref = [E.copy(), H.copy(), G.copy()]
    ref_m = [np.zeros_like(x) for x in ref]
    ref_v = [np.zeros_like(x) for x in ref]
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.01
    for step in range(1, 4):
        grads = [rng.standard_normal(x.shape) for x in (E, H, G)]
        for i, g in enumerate(grads):
            ref[i], ref_m[i], ref_v[i] = R.adam_step(
                ref[i], g, ref_m[i], ref_v[i], step, lr, b1, b2, eps
            )
        ref[0][:, 0] = 0
        update = _update(True, lr, -1.0, use_gate=True)
        K.apply_update(E, H, G, *grads, moments, update, step)
    for got, want in zip((E, H, G), ref):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def _batch_rows(pb, ws):
    n, n_w = K.batch_rows(pb.data(), pb.batch, pb.cands(), ws.row_mark, 2, ws.rows, ws.w_rows)
    return ws.rows[:n].copy(), ws.w_rows[:n_w].copy()


@pytest.mark.parametrize("config", CONFIGS)
def test_batch_rows_cover_every_row_with_a_gradient(config):
    pb = Problem(3, **config)
    _, _, dE, _, _ = pb.kernel_loss_grad()
    rows, w_rows = _batch_rows(pb, pb.workspace())
    assert (np.diff(rows) > 0).all() and (np.diff(w_rows) > 0).all()  # increasing
    w = pb.cfg[K.W_MAT]
    for p in range(dE.shape[0]):
        has_grad = np.flatnonzero(np.abs(dE[p]).sum(axis=1) > 0)
        assert set(has_grad) <= set(w_rows if p == w else rows), p
    assert set(rows) < set(w_rows)


@pytest.mark.parametrize("max_norm", [-1.0, 0.05])
def test_sgd_row_update_is_the_dense_update_bit_for_bit(max_norm):
    pb = Problem(4, dtype=np.float32, tying="layerwise", hops=2)
    _, _, dE, dH, _ = pb.kernel_loss_grad()
    ws = pb.workspace()
    rows, w_rows = _batch_rows(pb, ws)
    E1, H1, E2, H2 = pb.E.copy(), pb.H.copy(), pb.E.copy(), pb.H.copy()
    dE1, dH1, dE2, dH2 = dE.copy(), dH.copy(), dE.copy(), dH.copy()
    G1, G2, dG = (np.ones((1, pb.dim, pb.dim + 1), np.float32) for _ in range(3))
    update = _update(False, 0.1, max_norm, use_gate=True)
    K.apply_update(E1, H1, G1, dE1, dH1, dG.copy(), _no_moments(), update, 1)
    w = pb.cfg[K.W_MAT]
    K.apply_update_rows(E2, H2, G2, dE2, dH2, dG, rows, w_rows, w, _no_moments(), update, 1)
    np.testing.assert_array_equal(E1, E2)
    np.testing.assert_array_equal(H1, H2)
    np.testing.assert_array_equal(G1, G2)
    assert not dE2.any()  # the row update leaves the gradient zeroed for the next batch


def test_lazy_adam_moves_only_the_batch_rows_like_numpy_adam_on_them():
    pb = Problem(5, dtype=np.float64, hops=1)
    ws = pb.workspace()
    rows, w_rows = _batch_rows(pb, ws)
    w = pb.cfg[K.W_MAT]
    E, H = pb.E.copy(), pb.H.copy()
    mE, vE, mH, vH = (np.zeros_like(E), np.zeros_like(E), np.zeros_like(H), np.zeros_like(H))
    ref, ref_m, ref_v = E.copy(), np.zeros_like(E), np.zeros_like(E)
    for step in range(1, 4):
        _, _, dE, dH, _ = pb.kernel_loss_grad(E=E)
        for p in range(E.shape[0]):
            rs = w_rows if p == w else rows
            ref[p, rs], ref_m[p, rs], ref_v[p, rs] = R.adam_step(
                ref[p, rs], dE[p, rs], ref_m[p, rs], ref_v[p, rs], step, 0.01, 0.9, 0.999, 1e-8
            )
        ref[:, 0] = 0
        moments = K.Moments(mE, vE, mH, vH, *(np.zeros((0, 0, 0)),) * 2)
        update = _update(True, 0.01, -1.0, use_h=False)
        no_gates = _no_gates(E)
        K.apply_update_rows(E, H, no_gates, dE, dH, no_gates, rows, w_rows, w, moments, update,
                            step)  # fmt: skip
    np.testing.assert_allclose(E, ref, rtol=1e-10)
    untouched = np.setdiff1d(np.arange(pb.V), w_rows)
    np.testing.assert_array_equal(E[:, untouched], pb.E[:, untouched])


def test_lazy_adam_fits_and_is_seeded():
    X = ["i want food", "what time", "book a table", "thanks"] * 4
    y = ["ok food", "at noon", "table booked", "you are welcome"] * 4
    a = MemN2NRanker(optimizer="lazy_adam", epochs=5, random_state=0).fit(X, y)
    b = MemN2NRanker(optimizer="lazy_adam", epochs=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.embeddings_, b.embeddings_)
    assert a.score(X, y) == 1.0


def test_random_ages_insert_blank_ages_in_order():
    mptr = np.array([0, 3, 3, 8, 10], np.int64)
    n_blank = np.array([2, 0, 1, 0], np.int64)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(50):
        uniforms = rng.random(int((np.diff(mptr) + n_blank).sum()))
        mtime = np.full(10, -1, np.int32)
        K.random_ages(mptr, n_blank, uniforms, 5, 100, mtime)
        ages = mtime - 100
        first = ages[0:3]
        assert (np.diff(first) < 0).all() and first.min() >= 0 and first.max() <= 4
        seen.add(tuple(first))
        assert ages[3:8].max() == 4  # 5 memories + 1 blank: capped at memory_size - 1
        assert (np.diff(ages[3:8]) <= 0).all()
        np.testing.assert_array_equal(ages[8:10], [1, 0])  # no blank: the plain ages
    assert len(seen) > 3


def test_forward_states_without_memories_is_the_query_embedding():
    pb = Problem(3, tying="adjacent", pe=False)
    e = 0  # no memory
    U = K.forward_states(pb.E, pb.H, pb.G, pb.cfg, pb.data(), np.array([e]),
                         np.zeros((1, 0, 0)))  # fmt: skip
    toks = pb.sents[pb.qsent[e]]
    np.testing.assert_allclose(U[0], pb.E[0, toks].sum(axis=0))


# --------------------------------------------------------------------------- the estimator


def _fast(**kw):
    params = dict(hops=2, embedding_dim=16, epochs=30, batch_size=4, random_state=0)
    params.update(kw)
    return MemN2NRanker(**params)


class TestMemN2NConformance(RankerConformance):
    fit_runs_on_threads = True  # one run's epochs train Hogwild
    fit_is_hogwild = True
    param_grid = {"hops": [1, 2]}

    def make_estimator(self):
        return _fast(epochs=20)


def _story_data():
    """Where-is questions whose answer is in the most recent mention, plus one two-word
    answer that the tokenizer keeps as one token."""
    X, y = make_where_is_stories(120)
    X.append(Context((Turn("kb", "the garden is north of the office."),), "How do you go?"))
    y.append("north,west")
    return X, y


def test_learns_where_is_questions_and_multiword_answer_is_one_candidate():
    X, y = _story_data()
    model = MemN2NRanker(hops=2, embedding_dim=20, linear_start=10, epochs=60, random_state=0)
    model.fit(X, y)
    assert "north,west" in model.candidates_
    assert "north,west" in model.vocabulary_  # one token, one embedding row
    assert model.score(X, y) > 0.9
    att = model.attention(X[:5])
    assert att.shape == (5, 2, 50)
    np.testing.assert_allclose(att.sum(axis=2), 1, rtol=1e-5)
    assert not att[:, :, 4:].any()  # 4 memories: ages 0-3 only


def test_bigrams_give_multiword_places_and_word_order_their_own_rows():
    facts = ["the office is north of the living room.", "the living room is north of the office."]
    questions = ["What is north of the living room?", "What is north of the office?"]
    X = [Context((Turn("kb", f),), q) for f, q in zip(facts, questions)]
    y = ["office", "living room"]
    uni = _fast(epochs=1).fit(X, y)
    bi = _fast(epochs=1, ngram_range=(1, 2)).fit(X, y)
    assert "living room" not in uni.vocabulary_
    assert {"living room", "office is", "of the"} <= set(bi.vocabulary_.index_)
    # position encoding over the n-gram sequence: 8 words and 7 bigrams, plus one
    assert (uni.sentence_length_, bi.sentence_length_) == (9, 16)
    assert bi.decision_function(X).shape == (2, 2)
    with pytest.raises(ValueError, match="ngram_range must be"):
        _fast(ngram_range=(2, 1)).fit(X, y)


def test_same_seed_same_model_and_other_seed_differs():
    X, y, _ = make_tiny_dialogs()
    params = dict(random_noise=0.3, linear_start=3, optimizer="sgd")
    a = _fast(**params).fit(X, y)
    b = _fast(**params).fit(X, y)
    c = _fast(**params, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.embeddings_, b.embeddings_)
    assert a.loss_curve_ == b.loss_curve_
    assert not np.array_equal(a.embeddings_, c.embeddings_)


@pytest.mark.parametrize(
    "params",
    [
        dict(weight_tying="layerwise", nonlinearity="relu", learning_rate=0.05),
        dict(optimizer="adam", learning_rate=0.005),
        dict(position_encoding=False, temporal_encoding=False),
        dict(linear_start=5, random_noise=0.1),
        dict(early_stopping=True, validation_fraction=0.25, n_iter_no_change=3),
    ],
)
def test_options_train(params):
    X, y, groups = make_tiny_dialogs()
    model = _fast(**params)
    model.fit(X, y, groups=groups)
    assert model.score(X, y) > 0.6
    assert not model.embeddings_[:, 0].any()
    assert len(model.loss_curve_) == model.n_iter_
    if params.get("early_stopping"):
        assert len(model.validation_scores_) == model.n_iter_
    else:
        assert model.loss_curve_[-1] < model.loss_curve_[0]


def test_n_init_keeps_the_lowest_training_error():
    X, y, _ = make_tiny_dialogs()
    one = _fast(epochs=3, n_init=1, random_state=5).fit(X, y)
    three = _fast(epochs=3, n_init=3, random_state=5).fit(X, y)
    assert three.score(X, y) >= one.score(X, y)


def _arrays(model):
    return {k: v for k, v in vars(model).items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("early_stopping", [False, True])
def test_restarts_on_threads_give_the_model_of_one_thread(early_stopping):
    """With n_init > 1, n_jobs runs restarts side by side: each is the computation it is
    alone, so every n_jobs keeps the same run and the same weights, bit for bit."""
    X, y, groups = make_tiny_dialogs()
    params = dict(epochs=4, n_init=3, random_noise=0.2, early_stopping=early_stopping,
                  validation_fraction=0.34, random_state=3)  # fmt: skip
    one = _fast(**params).fit(X, y, groups=groups)
    for n_jobs in (2, 5):
        threaded = _fast(n_jobs=n_jobs, **params).fit(X, y, groups=groups)
        assert threaded.loss_curve_ == one.loss_curve_
        assert threaded.validation_scores_ == one.validation_scores_
        for k, v in _arrays(one).items():
            np.testing.assert_array_equal(_arrays(threaded)[k], v, err_msg=k)


def record_hogwild_threads(monkeypatch):
    """Wrap MemN2N's Hogwild epoch so that each call appends its threads to the list
    returned."""
    calls, kernel = [], _memn2n.hogwild_epoch

    def counted(*args):
        calls.append(args[-1].n_threads)  # its HogwildEpoch's threads
        return kernel(*args)

    monkeypatch.setattr(_memn2n, "hogwild_epoch", counted)
    return calls


@pytest.mark.parametrize(
    "params",
    [
        dict(optimizer="sgd"),  # lazy, row-wise
        dict(optimizer="adam", weight_tying="layerwise", learning_rate=0.005),  # dense, dH
        dict(gate="hop", weight_tying="adjacent", optimizer="lazy_adam"),  # the gates' dG
    ],
)
@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread")
def test_one_run_trains_hogwild_on_threads(params, monkeypatch):
    """With n_init=1, n_jobs=2 runs every epoch's batches on two threads (Hogwild): the
    weights one thread trains move (the hop map where it is trained, the gates where
    there are some), and the fit learns the tiny dialogs as one thread's does."""
    # epochs this small run on one thread (the rule of threads_for_work): make them two
    monkeypatch.setattr(_memn2n, "threads_for_work", lambda n_jobs, work: 2)
    calls = record_hogwild_threads(monkeypatch)
    X, y, _ = make_tiny_dialogs()
    start = _fast(epochs=0, **params).fit(X, y)
    alone = _fast(epochs=10, **params).fit(X, y)
    assert not calls
    shared = _fast(n_jobs=2, epochs=10, **params).fit(X, y)
    assert calls == [2] * 10
    for name, v in _arrays(start).items():
        if name.endswith("_") and v.dtype.kind == "f" and v.size:
            moved = not np.array_equal(getattr(alone, name), v)
            assert moved == (not np.array_equal(getattr(shared, name), v)), name
            assert np.isfinite(getattr(shared, name)).all(), name
    assert shared.score(X, y) >= alone.score(X, y) - 0.1


def test_interrupted_restarts_on_threads_end_together(monkeypatch):
    """A KeyboardInterrupt in one restart's epoch stops the others after their current
    epoch and starts no further one; the fit warns and keeps a usable model."""
    X, y, _ = make_tiny_dialogs()
    real = K.batch_loss_grad
    calls = []

    def interrupted(*args):
        calls.append(None)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(K, "batch_loss_grad", interrupted)
    with pytest.warns(UserWarning, match="interrupted"):
        model = _fast(epochs=50, n_init=6, n_jobs=2).fit(X, y)
    assert model.n_iter_ < 50 and len(calls) < 6 * 50 * 2
    assert model.predict(X[:2]).shape == (2,)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs_is_a_clear_error(n_jobs):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="n_jobs"):
        _fast(n_jobs=n_jobs).fit(X, y)


def test_validation_embeds_the_candidates_once_per_evaluation(monkeypatch):
    X, y, groups = make_tiny_dialogs()
    params = dict(epochs=4, early_stopping=True, validation_fraction=0.5, n_iter_no_change=9)
    whole = _fast(**params).fit(X, y, groups=groups)
    calls = []
    embed = MemN2NRanker._candidate_matrix
    monkeypatch.setattr(
        MemN2NRanker, "_candidate_matrix", lambda self, E: calls.append(1) or embed(self, E)
    )
    blocks = _fast(**params)
    blocks._block_size = 2  # several scoring blocks per evaluation
    blocks.fit(X, y, groups=groups)
    assert len(calls) == blocks.n_iter_ == 4
    assert blocks.validation_scores_ == whole.validation_scores_
    np.testing.assert_array_equal(blocks.embeddings_, whole.embeddings_)


def test_gold_response_outside_candidates_is_an_error():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="not among the candidates"):
        _fast(candidates=list(dict.fromkeys(y))[:-1]).fit(X, y)


def test_early_stopping_without_training_rows_is_an_error():
    X, y, groups = make_tiny_dialogs()
    with pytest.raises(ValueError, match="no training or no validation example"):
        _fast(early_stopping=True).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="at least two groups"):
        _fast(early_stopping=True).fit(X, y, groups=[0] * len(X))


def test_match_type_scores_follow_match_type_matrices():
    """decision_function with types = without them + sum_t M_t * (u . W type_t)."""
    X, y, _ = make_tiny_dialogs()
    Xa = MatchTypeFeaturizer(TINY_KB).fit(X).transform(X)
    model = _fast().fit(Xa, y)
    assert model.types_ == ["R_location"]
    with_types = model.decision_function(Xa)
    plain = model.decision_function(X)  # no entities: no type words
    vocab = Vocabulary().fit(tokenize(c) for c in model.candidates_)
    bags = vocab.bags([tokenize(c) for c in model.candidates_])
    (M,) = match_type_matrices(Xa, bags, vocab.index_, model.types_)
    assert M.nnz > 0
    U = model._states(model._weights, model._encode(Xa), np.arange(len(Xa)))
    w = model._w_mat
    type_score = U.astype(np.float64) @ model.embeddings_[w, model._type_tok_[0]]
    np.testing.assert_allclose(with_types - plain, M.toarray() * type_score[:, None], atol=1e-9)


def test_match_types_reach_unseen_entities_in_a_pipeline():
    """Train on ten cities, test on five others: only the type word can carry the city."""
    cities = [f"city{i}" for i in range(15)]
    kb = {c: "R_location" for c in cities}
    cands = [f"api_call {c}" for c in cities] + ["where should it be"]

    def data(names):
        X = [Context((Turn("user", f"a table in {c} please"),), "<SILENCE>") for c in names]
        X += [Context((), "can you book a table")] * 2
        return X, [f"api_call {c}" for c in names] + ["where should it be"] * 2

    train, test = data(cities[:10] * 3), data(cities[10:])
    plain = _fast(candidates=cands, hops=1, epochs=40).fit(*train)
    pipe = make_pipeline(MatchTypeFeaturizer(kb), _fast(candidates=cands, hops=1, epochs=40))
    pipe.fit(*train)
    assert pipe.score(*train) == 1.0
    assert pipe.score(*test) == 1.0
    assert plain.score(*test) < 0.5  # unseen city words are dropped without type words


def test_unknown_words_keep_positions_and_empty_history():
    X, y, _ = make_tiny_dialogs()
    model = _fast().fit(X, y)
    scores = model.decision_function([Context((), "zzz in paris please"), ""])
    assert np.isfinite(scores).all()
    assert model.attention([""]).sum() == 0


def test_empty_slots_take_attention_only_with_pad_memory():
    X, y = _story_data()
    short = [Context(X[0].history[:2], X[0].query)]
    for pad in (True, False):
        model = _fast(hops=1, epochs=2, pad_memory=pad).fit(X, y)
        assert model.memory_slots_ == 4  # the longest training history
        total = model.attention(short).sum()
        assert total < 1 - 1e-6 if pad else total == pytest.approx(1, rel=1e-6)


def test_punctuation_and_candidate_word_options():
    X, y = _story_data()
    cands = sorted(set(y)) + ["the cellar"]
    default = _fast(candidates=cands, epochs=1).fit(X, y)
    assert "." not in default.vocabulary_ and "?" not in default.vocabulary_
    assert "cellar" not in default.vocabulary_
    other = _fast(candidates=cands, epochs=1, drop_punctuation=False, candidate_words=True)
    other.fit(X, y)
    assert "." in other.vocabulary_ and "cellar" in other.vocabulary_
    assert other.sentence_length_ == default.sentence_length_ + 1  # the final "."


def test_unseen_std_draws_only_the_candidate_words_no_training_text_holds():
    X, y = _story_data()
    cands = sorted(set(y)) + ["the cellar", "the attic"]
    params = dict(candidates=cands, epochs=2, candidate_words=True, random_state=0)
    trained = _fast(**params).fit(X, y)
    drawn = _fast(**params, unseen_std=0.5).fit(X, y)
    index = trained.vocabulary_.index_
    unseen = sorted([index["cellar"], index["attic"]])  # drawn in row order
    rest = np.setdiff1d(np.arange(len(index)), unseen)
    # every trained word as without unseen_std, bit for bit
    np.testing.assert_array_equal(drawn.embeddings_[:, rest], trained.embeddings_[:, rest])
    # the unseen words drawn afresh: N(0, 0.5) from random_state, in every matrix
    fresh = np.random.RandomState(0).standard_normal(
        (trained.embeddings_.shape[0], 2, trained.embeddings_.shape[2])
    )
    np.testing.assert_array_equal(drawn.embeddings_[:, unseen], (fresh * 0.5).astype(np.float32))


def test_unseen_std_links_a_memory_and_a_candidate_holding_the_same_unseen_word():
    """Held in memory, an unseen word lifts the candidate that holds it over the other
    unseen candidates (the reason for unseen_std)."""
    X, y = _story_data()
    cands = sorted(set(y)) + [f"place{i}" for i in range(20)]
    model = _fast(candidates=cands, epochs=1, candidate_words=True, unseen_std=1.0,
                  random_state=0, embedding_dim=32).fit(X, y)  # fmt: skip
    unseen = [f"place{i}" for i in range(20)]
    wins = 0
    for word in unseen:
        ctx = Context((Turn("kb", f"mary went to {word}"),), "where is mary?")
        scores = dict(zip(model.candidates_, model.decision_function([ctx])[0]))
        wins += max(unseen, key=scores.get) == word
    assert wins >= 18


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(unseen_std=0.1), "needs candidate_words=True"),
        (dict(unseen_std=0.1, candidate_words=True, warm_start=True), "fit from scratch"),
    ],
)
def test_unseen_std_refuses_what_it_cannot_do(params, message):
    X, y = _story_data()
    model = _fast(epochs=1, **params)
    if params.get("warm_start"):
        model.set_params(unseen_std=None).fit(X, y).set_params(unseen_std=0.1)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    with pytest.raises(ValueError, match=message):
        _fast(epochs=1, **{**params, "warm_start": False}).partial_fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        dict(),
        dict(early_stopping=True, validation_fraction=0.25, n_init=2, linear_start=1),
        dict(weight_tying="layerwise", random_noise=0.2, optimizer="adam"),
    ],
)
def test_fit_sets_only_trailing_underscore_attributes(params):
    """Every attribute fit sets ends in "_", so that check_is_fitted sees the fitted state
    and get_params/clone see only the parameters."""
    X, y, groups = make_tiny_dialogs()
    Xa = MatchTypeFeaturizer(TINY_KB).fit(X).transform(X)  # match types: every fitted array
    model = _fast(epochs=3, **params)
    before = set(vars(model))
    model.fit(Xa, y, groups=groups)
    new = set(vars(model)) - before
    assert {"embeddings_", "_cand_word_index_", "_time_base_", "_type_tok_"} <= new
    assert [a for a in new if not a.endswith("_")] == []
    refit = set(vars(model.fit(Xa, y, groups=groups)))
    assert refit == before | new


def test_divergence_names_the_model_and_what_to_lower():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(FloatingPointError, match="MemN2NRanker diverged at epoch 1.*learning_rate"):
        _fast(learning_rate=1e30, max_grad_norm=None, epochs=2).fit(X, y)


def test_verbose_progress_bar(capsys):
    X, y, _ = make_tiny_dialogs()
    _fast(epochs=2, verbose=True).fit(X, y)
    err = capsys.readouterr().err
    assert "loss" in err and "acc" in err


# --------------------------------------------------------------------------- real data


@pytest.mark.slow
def test_babi_qa_task1(data_home):
    from irdialog.datasets import load_babi_qa

    train = load_babi_qa(1, "train", data_home=data_home)
    test = load_babi_qa(1, "test", data_home=data_home)
    model = MemN2NRanker(hops=3, embedding_dim=20, linear_start=20, random_noise=0.1,
                         random_state=0).fit(train.X, train.y)  # fmt: skip
    assert model.score(test.X, test.y) >= 0.99


@pytest.mark.slow
def test_dialog_babi_task1(data_home):
    from irdialog.datasets import load_dialog_babi

    train = load_dialog_babi(1, "trn", data_home=data_home)
    test = load_dialog_babi(1, "tst", data_home=data_home)
    model = MemN2NRanker(candidates=train.candidates, hops=1, position_encoding=False,
                         epochs=20, random_state=0).fit(train.X, train.y)  # fmt: skip
    assert model.score(test.X, test.y) >= 0.99


# --------------------------------------------------------------------------- hard negatives

POOL_FIT = dict(hops=1, embedding_dim=8, epochs=3, random_state=0)


def test_empty_negative_pools_fit_as_the_default():
    X, y, _ = make_tiny_dialogs()
    default = MemN2NRanker(**POOL_FIT).fit(X, y)
    empty = MemN2NRanker(**POOL_FIT).fit(X, y, negative_lists=[[]] * len(X))
    np.testing.assert_array_equal(empty.embeddings_, default.embeddings_)


def test_negative_lists_and_a_callable_give_the_same_model():
    X, y, _ = make_tiny_dialogs()
    pools = [[r for r in dict.fromkeys(y) if r != g][:2] + ["a pool reply never gold"] for g in y]
    given = MemN2NRanker(**POOL_FIT).fit(X, y, negative_lists=pools)
    called = MemN2NRanker(**POOL_FIT, negatives=lambda X_, y_: pools).fit(X, y)
    default = MemN2NRanker(**POOL_FIT).fit(X, y)
    np.testing.assert_array_equal(given.embeddings_, called.embeddings_)
    assert not np.allclose(given.embeddings_, default.embeddings_)
    # a pool's response outside the candidates takes part, never ranked
    assert "a pool reply never gold" not in set(given.candidates_)
    # partial_fit takes a callable's pools
    part = MemN2NRanker(**POOL_FIT, negatives=lambda X_, y_: pools).partial_fit(X, y)
    assert not np.allclose(part.embeddings_, MemN2NRanker(**POOL_FIT).partial_fit(X, y).embeddings_)


def test_pools_decide_which_candidates_are_pushed_down():
    """Two queries, each with its own gold response and a pool of one other candidate:
    each query's pool response ends last in its ranking, and swapping the pools swaps
    the last ones (the full softmax would push every other candidate down alike)."""
    X, y = ["a", "b"] * 10, ["r0", "r2"] * 10
    cands = ["r0", "r1", "r2", "r3"]
    params = dict(candidates=cands, candidate_words=True, hops=1, embedding_dim=8, epochs=30,
                  random_state=0)  # fmt: skip
    for pool_a, pool_b in [("r1", "r3"), ("r3", "r1")]:
        pools = [[pool_a] if g == "r0" else [pool_b] for g in y]
        model = MemN2NRanker(**params).fit(X, y, negative_lists=pools)
        ranks = model.rank(["a", "b"], k=4)
        assert [cands[r[0]] for r in ranks] == ["r0", "r2"]
        assert [cands[r[-1]] for r in ranks] == [pool_a, pool_b]


def test_bm25_pools_are_the_candidates_sharing_the_words_read(monkeypatch):
    monkeypatch.setattr(_memn2n, "MINED_NEGATIVES", 1)
    X = [
        Context((Turn("user", "i want a red car"),), "where is it"),
        Context((), "a blue bike please"),
    ]
    y = ["parked outside", "in the shed"]
    cands = [*y, "the red car is here", "blue bike too", "nothing alike"]
    model = MemN2NRanker(candidates=cands, candidate_words=True, **POOL_FIT).fit(X, y)
    pools = model._mined_pools(model._encode(X), np.array([0, 1]))
    # the memory's words count ("red car"), and the query's ("blue bike")
    assert pools.indptr.tolist() == [0, 1, 2]
    assert pools.indices.tolist() == [2, 3]
    bm25 = MemN2NRanker(candidates=cands, candidate_words=True, negatives="bm25", **POOL_FIT)
    bm25.fit(X, y)
    assert not np.allclose(bm25.embeddings_, model.embeddings_)


def test_negative_pool_errors_and_params():
    from sklearn.base import clone

    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="pass one or the other"):
        MemN2NRanker(negatives="bm25").fit(X, y, negative_lists=[[]] * len(X))
    with pytest.raises(ValueError, match="one list per example"):
        MemN2NRanker().fit(X, y, negative_lists=[[]])
    with pytest.raises(TypeError, match=r"negative_lists\[0\] must be a sequence of str"):
        MemN2NRanker().fit(X, y, negative_lists=["hello"] * len(X))
    with pytest.raises(ValueError, match="negatives"):
        MemN2NRanker(negatives="hard").fit(X, y)
    for negatives in ("bm25", len):
        assert clone(MemN2NRanker(negatives=negatives)).get_params()["negatives"] is negatives
