"""QRNRanker: the numba kernels against a plain numpy reference, a finite-difference check
of the whole forward/backward pass over every parameter, and the estimator contract."""

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import TINY_KB, make_tiny_dialogs, make_where_is_stories
from test_memn2n import Problem

from irdialog.base import Context, Turn
from irdialog.embed import _qrn_kernels as Q
from irdialog.embed import _qrn_reference as R
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


def test_forward_states_without_memories_are_zero():
    qp = QRNProblem(3, dtype=np.float32)
    gates = np.zeros((0, 0, 0), np.float32)
    U = Q.forward_states(qp.E, qp.theta, qp.cfg, qp.pb.data(), np.asarray([0, 1]), gates)
    assert not U[0].any() and U[1].any()


def test_stacked_batches_keep_each_example_apart():
    """forward_states scores in blocks of stacked memories; over many rows, crossing the
    block boundaries and mixing examples with and without memories, each row's state and
    gates are the ones it has alone."""
    qp = QRNProblem(4, dtype=np.float64)
    rows = np.tile(qp.pb.batch, 30)
    m = int(np.diff(qp.pb.mptr).max())
    gates = np.zeros((len(rows), int(qp.cfg[0]), m))
    U = Q.forward_states(qp.E, qp.theta, qp.cfg, qp.pb.data(), rows, gates)
    for i in (0, 63, 64, 65, 127, 128, len(rows) - 1):
        alone = np.zeros((1, int(qp.cfg[0]), m))
        one = Q.forward_states(qp.E, qp.theta, qp.cfg, qp.pb.data(), rows[i : i + 1], alone)
        np.testing.assert_allclose(U[i], one[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gates[i], alone[0], rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- the estimator


def _fast(**kw):
    params = dict(embedding_dim=8, epochs=10, learning_rate=0.02, random_state=0)
    return QRNRanker(**{**params, **kw})


class TestQRNConformance(RankerConformance):
    param_grid = {"layers": [1, 2]}

    def make_estimator(self):
        return _fast(epochs=20)


def test_a_context_without_history_reads_one_start_memory():
    X = [Context((), "hi there"), Context((Turn("user", "hi"), Turn("bot", "hello")), "bye")]
    model = _fast(epochs=1).fit(X, ["hello", "see you"])
    enc = QRNRanker._encode(model, X + [Context((), "bye")])
    start = model.vocabulary_.index_["<start>"]
    assert np.diff(enc.mptr).tolist() == [1, 2, 1]
    for i in (0, 2):
        s = enc.msent[enc.mptr[i]]
        assert enc.stok[enc.sptr[s] : enc.sptr[s + 1]].tolist() == [start]
        assert enc.sspk[s] == 0  # no speaker word
    # the contexts with a history read their turns, as MemN2N encodes them
    plain = super(QRNRanker, model)._encode(X)
    for i in (1,):
        for a, b in zip(enc.msent[enc.mptr[i] : enc.mptr[i + 1]],
                        plain.msent[plain.mptr[i] : plain.mptr[i + 1]]):  # fmt: skip
            assert (enc.stok[enc.sptr[a] : enc.sptr[a + 1]].tolist()
                    == plain.stok[plain.sptr[b] : plain.sptr[b + 1]].tolist())  # fmt: skip


def test_a_model_saved_without_the_start_word_scores_as_before(monkeypatch, tmp_path):
    """A model fitted before the start memory existed has no start word in its vocabulary:
    it loads and scores, a context without history from a zero state, as it did."""
    from irdialog.persist import load, save

    X = [Context((), "good morning"), Context((Turn("user", "hi"),), "goodbye now")] * 5
    y = ["hello", "you are welcome"] * 5
    monkeypatch.setattr(QRNRanker, "_extra_tokens", ())
    model = _fast(epochs=2).fit(X, y)
    monkeypatch.undo()
    assert "<start>" not in model.vocabulary_.index_
    save(model, tmp_path / "old.irdialog")
    scores = load(tmp_path / "old.irdialog").decision_function(X[:2])
    assert not scores[0].any() and scores[1].any()


def test_the_first_turn_of_a_dialog_is_answered_from_its_query():
    """Without memories the reduced query would be zero and every candidate tie; the start
    memory gives the first turn a state that depends on what the user said."""
    X = [Context((), "good morning"), Context((), "goodbye now")] * 10
    y = ["hello what can i help you with", "you are welcome"] * 10
    model = _fast(epochs=30).fit(X, y)
    scores = model.decision_function(X[:2])
    assert model.predict(X[:2]).tolist() == y[:2]
    assert np.ptp(scores, axis=1).min() > 0
    assert model.update_gates(X[:1])[0, :, 0].all()  # the start memory's gates


def test_learns_where_is_questions_on_unseen_stories():
    X, y = make_where_is_stories()
    model = QRNRanker(embedding_dim=20, epochs=40, random_state=0).fit(X[:120], y[:120])
    assert model.score(X[120:], y[120:]) > 0.9
    gates = model.update_gates(X[:3])
    assert gates.shape == (3, 2, 50)
    assert gates[:, :, :4].all() and not gates[:, :, 4:].any()


@pytest.mark.parametrize(
    "params",
    [
        dict(tie_layers=False, layers=3),
        dict(reset_gate=False, bidirectional=False),
        dict(position_encoding=False, weight_decay=0.0, max_grad_norm=None),
        dict(early_stopping=True, validation_fraction=0.25, n_iter_no_change=10),
    ],
)
def test_options_train(params):
    X, y, groups = make_tiny_dialogs()
    model = _fast(epochs=30, **params).fit(X, y, groups=groups)
    assert model.score(X, y) > 0.6
    assert not model.embeddings_[:, 0].any()
    n_units = params.get("layers", 2) if params.get("tie_layers") is False else 1
    assert model.unit_weights_.shape == (n_units, Q.unit_layout(8)[-1])
    if params.get("early_stopping"):
        assert len(model.validation_scores_) == model.n_iter_
    else:
        assert model.loss_curve_[-1] < model.loss_curve_[0]


def test_same_seed_same_model_and_other_seed_differs():
    X, y, _ = make_tiny_dialogs()
    a, b, c = _fast().fit(X, y), _fast().fit(X, y), _fast(random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.unit_weights_, b.unit_weights_)
    assert a.loss_curve_ == b.loss_curve_
    assert not np.array_equal(a.unit_weights_, c.unit_weights_)


def test_restarts_on_threads_give_the_model_of_one_thread():
    """n_jobs trains the restarts side by side, each as alone: the same weights bit for
    bit; with n_init=1 it changes nothing."""
    X, y, _ = make_tiny_dialogs()
    one = _fast(n_init=3, epochs=4).fit(X, y)
    two = _fast(n_init=3, epochs=4, n_jobs=2).fit(X, y)
    assert two.loss_curve_ == one.loss_curve_
    np.testing.assert_array_equal(two.unit_weights_, one.unit_weights_)
    np.testing.assert_array_equal(two.embeddings_, one.embeddings_)
    single = _fast(epochs=4, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(single.unit_weights_, _fast(epochs=4).fit(X, y).unit_weights_)


def test_update_bias_sets_the_initial_gates():
    X, y, _ = make_tiny_dialogs()
    model = _fast(epochs=0, update_bias=-2.5).fit(X, y)
    gates = model.update_gates(X)
    assert 0.03 < gates[gates > 0].mean() < 0.15  # sigmoid(-2.5) = 0.076


def test_match_types_score_pairs_agree_with_decision_function():
    X, y, _ = make_tiny_dialogs()
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), _fast(epochs=5)).fit(X, y)
    model = pipe.steps[-1][1]
    assert model.types_
    Xa = pipe.steps[0][1].transform(X[:3])
    scores = model.decision_function(Xa)
    pairs = model._score_pairs([c for c in Xa for _ in model.candidates_],
                               np.tile(model.candidates_, 3))  # fmt: skip
    np.testing.assert_allclose(pairs.reshape(3, -1), scores, rtol=1e-4, atol=1e-5)


def test_gold_response_outside_candidates_is_an_error():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="not among the candidates"):
        _fast(candidates=list(dict.fromkeys(y))[:-1]).fit(X, y)


@pytest.mark.parametrize(
    "bad", [dict(layers=0), dict(learning_rate=-1.0), dict(epochs=-1), dict(n_jobs=0)]
)
def test_bad_parameters_are_clear_errors(bad):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match=next(iter(bad))):
        _fast(**bad).fit(X, y)


@pytest.mark.slow
def test_babi_qa_task1(data_home):
    from irdialog.datasets import load_babi_qa

    train = load_babi_qa(1, "train", data_home=data_home)
    test = load_babi_qa(1, "test", data_home=data_home)
    model = QRNRanker(epochs=40, random_state=0).fit(train.X, train.y)
    assert model.score(test.X, test.y) > 0.95
