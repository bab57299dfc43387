"""The gated end-to-end memory network (Liu & Perez 2017): ``MemN2NRanker(gate=...)``.

The gated hop's kernels are checked against the numpy reference and by central
differences in tests/test_memn2n.py (the ``GATED`` configurations); here the estimator:
its contract, what the gate changes in the fitted state, and that it learns."""

import numpy as np
import pytest
from conformance import RankerConformance, persist_round_trip
from conftest import make_tiny_dialogs
from test_memn2n import _story_data

from irdialog import MemN2NRanker
from irdialog.base import Context, Turn
from irdialog.embed import _memn2n_kernels as K


def _gated(**kw):
    params = dict(gate="global", hops=2, embedding_dim=16, epochs=30, batch_size=4,
                  random_state=0)  # fmt: skip
    params.update(kw)
    return MemN2NRanker(**params)


class TestGatedMemN2NConformance(RankerConformance):
    fit_runs_on_threads = True  # one run's epochs train Hogwild
    fit_is_hogwild = True
    param_grid = {"gate": [None, "global", "hop"]}

    def make_estimator(self):
        return _gated(epochs=20)


@pytest.mark.parametrize(
    ("gate", "tying", "n_gates"),
    [("global", "adjacent", 1), ("hop", "adjacent", 3), ("global", "layerwise", 1)],
)
def test_gate_weights_one_gate_or_one_per_hop_and_no_hop_map(gate, tying, n_gates):
    X, y, _ = make_tiny_dialogs()
    model = _gated(gate=gate, hops=3, weight_tying=tying, epochs=3).fit(X, y)
    assert model.gate_weights_.shape == (n_gates, 16, 17)
    assert model.gate_weights_.dtype == np.float32
    assert not model.hop_map_.any()  # the gate replaces H of layer-wise tying
    assert model._cfg()[K.GATE] == {"global": K.GLOBAL_GATE, "hop": K.HOP_GATES}[gate]
    ungated = _gated(gate=None, weight_tying=tying, epochs=3).fit(X, y)
    assert ungated.gate_weights_.shape == (0, 16, 17)


def test_gated_hops_learn_where_is_questions():
    X, y = _story_data()
    model = MemN2NRanker(gate="global", hops=2, embedding_dim=20, linear_start=10, epochs=60,
                         random_state=0).fit(X, y)  # fmt: skip
    assert model.score(X, y) > 0.9
    att = model.attention(X[:5])
    np.testing.assert_allclose(att.sum(axis=2), 1, rtol=1e-5)


def test_gate_changes_the_model_and_same_seed_same_model():
    X, y, _ = make_tiny_dialogs()
    a, b = _gated(epochs=5).fit(X, y), _gated(epochs=5).fit(X, y)
    np.testing.assert_array_equal(a.embeddings_, b.embeddings_)
    np.testing.assert_array_equal(a.gate_weights_, b.gate_weights_)
    plain = _gated(gate=None, epochs=5).fit(X, y)
    assert not np.array_equal(a.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "lazy_adam"])
def test_every_optimizer_trains_the_gate(optimizer):
    X, y, _ = make_tiny_dialogs()
    model = _gated(optimizer=optimizer, learning_rate=0.01, epochs=2)
    before = model.set_params(epochs=0).fit(X, y).gate_weights_.copy()
    after = model.set_params(epochs=2).fit(X, y).gate_weights_
    assert not np.array_equal(before, after)
    np.testing.assert_array_equal(before[:, :, -1], 0)  # biases start at zero


def test_warm_start_continues_the_gate_and_keeps_it_fixed():
    X, y, _ = make_tiny_dialogs()
    model = _gated(epochs=2, warm_start=True).fit(X, y)
    first = model.gate_weights_.copy()
    model.fit(X, y)
    assert model.n_iter_ == 4 and not np.array_equal(first, model.gate_weights_)
    with pytest.raises(ValueError, match="gate"):
        model.set_params(gate="hop").fit(X, y)


def test_persist_round_trip_keeps_the_gates(tmp_path, monkeypatch):
    X, y, _ = make_tiny_dialogs()
    model = _gated(gate="hop", epochs=3).fit(X, y)
    again = persist_round_trip(model, tmp_path / "gated", monkeypatch)
    np.testing.assert_array_equal(again.gate_weights_, model.gate_weights_)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))


def test_models_without_gate_weights_still_score():
    """A model saved before the gates existed has no ``gate_weights_``: it scores as the
    ungated model it is."""
    X, y, _ = make_tiny_dialogs()
    model = _gated(gate=None, epochs=3).fit(X, y)
    want = model.decision_function(X)
    del model.gate_weights_
    np.testing.assert_array_equal(model.decision_function(X), want)


def test_bad_gate_is_a_clear_error():
    X = [Context((Turn("kb", "mary went home"),), "where is mary")]
    with pytest.raises(ValueError, match="'gate' parameter"):
        MemN2NRanker(gate="layer").fit(X, ["home"])


@pytest.mark.slow
def test_babi_qa_task1(data_home):
    from irdialog.datasets import load_babi_qa

    train = load_babi_qa(1, "train", data_home=data_home)
    test = load_babi_qa(1, "test", data_home=data_home)
    model = MemN2NRanker(gate="global", hops=3, embedding_dim=20, linear_start=20,
                         random_noise=0.1, random_state=0).fit(train.X, train.y)  # fmt: skip
    assert model.score(test.X, test.y) >= 0.99
