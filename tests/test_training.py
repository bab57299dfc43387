"""The training core shared by the gradient-trained models (irdialog.embed._training): the
loop itself on a toy model, then the same contract checked on each of the seven models."""

import re
import warnings

import numpy as np
import pytest
from conftest import CITIES, make_tiny_dialogs
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from irdialog import (
    DualEncoderRanker,
    MemN2NRanker,
    MemNNQA,
    QRNRanker,
    RecurrentReader,
    SubgraphEmbeddingRanker,
    SupervisedEmbeddingRanker,
)
from irdialog.embed import _kernels as se_kernels
from irdialog.embed import _memn2n_kernels as memn2n_kernels
from irdialog.embed import _memnn_kernels as memnn_kernels
from irdialog.embed import _qrn_kernels as qrn_kernels
from irdialog.embed import _recurrent_kernels as recurrent_kernels
from irdialog.embed import _training as training
from irdialog.embed._training import (
    TRAINING_CONSTRAINTS,
    run_epochs,
    training_session,
    validation_split,
)


def test_validation_split_without_groups_draws_seeded_rows():
    train, val = validation_split(20, 0.25, random_state=3)
    assert len(val) == 5 and len(train) == 15  # floor(0.25 * 20)
    np.testing.assert_array_equal(np.sort(np.concatenate([train, val])), np.arange(20))
    again = validation_split(20, 0.25, random_state=3)
    np.testing.assert_array_equal(again[1], val)
    # drawn, not the last rows
    draws = {tuple(validation_split(20, 0.25, random_state=s)[1]) for s in range(5)}
    assert len(draws) > 1 and (15, 16, 17, 18, 19) not in draws


def test_validation_split_by_groups_holds_out_whole_groups():
    groups = np.repeat([3, 1, 4, 5, 9], [2, 3, 1, 4, 2])
    train, val = validation_split(len(groups), 0.4, groups=groups, random_state=0)
    assert len(np.unique(groups[val])) == 2  # floor(0.4 * 5) groups
    assert not set(groups[train]) & set(groups[val])
    np.testing.assert_array_equal(np.sort(np.concatenate([train, val])), np.arange(len(groups)))
    again = validation_split(len(groups), 0.4, groups=groups, random_state=0)
    np.testing.assert_array_equal(again[1], val)
    rows = validation_split(12, 0.1, random_state=0)[1]
    assert len(rows) == 1  # at least one example


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=1, fraction=0.5), "no training or no validation example"),
        (dict(n=4, fraction=0.5, groups=[0, 0, 0, 0]), "at least two groups"),
        (dict(n=4, fraction=0.5, groups=[0, 1]), "one entry per sample"),
    ],
)
def test_validation_split_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        n, fraction = kwargs.pop("n"), kwargs.pop("fraction")
        validation_split(n, fraction, model="M", random_state=0, **kwargs)


class _Toy:
    """A weight w and a scripted validation score per epoch."""

    def __init__(self, scores, losses=None):
        self.w = np.zeros(1)
        self.scores = scores
        self.losses = losses or [1.0] * len(scores)
        self.validated = []

    def step(self, epoch):
        self.w += 1.0
        return self.losses[epoch], {}

    def validate(self):
        self.validated.append(int(self.w[0]))
        return self.scores[int(self.w[0]) - 1], 0.0


def _run(toy, n_epochs, **kw):
    with training_session(n_epochs, desc="toy", verbose=False) as bar:
        return run_epochs(
            toy.step, n_epochs, bar=bar, model="Toy", advice="learning_rate",
            validate=toy.validate, snapshot=lambda: toy.w.copy(), **kw,
        )  # fmt: skip


def test_early_stopping_keeps_the_best_weights_and_waits_n_iter_no_change():
    toy = _Toy([0.1, 0.5, 0.4, 0.5, 0.3, 0.9, 1.0])
    log = _run(toy, 7, early_stopping=True, n_iter_no_change=3)
    assert log.n_iter == 5  # best at epoch 2, then 3 epochs without a strict improvement
    assert log.validation_scores == [0.1, 0.5, 0.4, 0.5, 0.3]
    assert log.best_score == 0.5 and log.best_weights[0] == 2.0 and log.best_epoch == 2
    # without early stopping: every epoch, the best score still recorded, no snapshot
    log = _run(_Toy(toy.scores), 7, n_iter_no_change=3)
    assert log.n_iter == 7 and log.best_score == 1.0 and log.best_weights is None


def test_a_model_s_own_stopping_rule_ends_the_epochs_and_fills_the_bar():
    toy = _Toy([0.1, 0.2, 0.3, 0.4, 0.5])
    with training_session(5, desc="toy", verbose=True) as bar:  # a disabled bar counts nothing
        log = run_epochs(
            toy.step, 5, bar=bar, model="Toy", advice="x", converged=lambda: toy.w[0] >= 2
        )
        assert bar.n == 5
    assert log.n_iter == 2 and not log.interrupted


def test_validation_starts_at_validate_from_and_ties_break_on_the_second_key():
    toy = _Toy([0.0, 0.0, 0.5, 0.5])
    toy.validate = lambda: (toy.scores[int(toy.w[0]) - 1], toy.w[0])  # later is better
    log = _run(toy, 4, validate_from=2, early_stopping=True, n_iter_no_change=1)
    assert log.validation_scores == [0.5, 0.5]
    assert log.best_key == (0.5, 4.0) and log.best_weights[0] == 4.0


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_loss_names_the_model_and_what_to_lower(bad):
    toy = _Toy([0.1, 0.2, 0.3], losses=[1.0, bad, 1.0])
    with pytest.raises(FloatingPointError, match=r"Toy diverged at epoch 2 .*lower learning_rate"):
        _run(toy, 3)


@pytest.mark.parametrize(
    "losses",
    [
        [5.0, 1.0, 2.0, 4.0, 8.0, 16.0],  # grew each epoch
        [146.0, 1.5e6, 6.1e10, 0.0, 1.3e34],  # huge and erratic, never overflowing
    ],
)
def test_a_loss_ending_above_its_start_and_tenfold_its_low_warns(losses):
    last = re.escape(f"{losses[-1]:.4g}")
    with pytest.warns(ConvergenceWarning, match=rf"Toy is diverging: .* rose to {last} at "
                      rf"epoch {len(losses)}, .*; lower learning_rate"):  # fmt: skip
        log = _run(_Toy([0.1] * len(losses), losses=losses), len(losses))
    assert log.n_iter == len(losses)  # a warning, not an error: the weights are the user's


def test_the_divergence_warning_names_the_lowest_epoch_only_when_it_is_not_the_first():
    with pytest.warns(ConvergenceWarning) as caught:
        _run(_Toy([0.1] * 3, losses=[1.0, 5.0, 20.0]), 3)
    message = str(caught[0].message)
    assert "rose to 20 at epoch 3, from 1 at epoch 1; lower" in message


@pytest.mark.parametrize(
    "losses",
    [
        [1.0, 2.0, 4.0, 8.0, 9.0],  # grew 9x: under the factor
        [1.0, 20.0, 30.0, 5.0, 6.0],  # grew past it, then fell
        [2.0, 0.1, 0.05, 1.5, 1.2],  # a rise tenfold its low, still under its start
        [1.0, 40.0],  # too few epochs to tell
        [1.0, 0.5, 0.25, 0.125, 0.1],  # converging
    ],
)
def test_a_loss_that_ends_under_its_start_or_its_tenfold_low_does_not_warn(losses):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        _run(_Toy([0.1] * len(losses), losses=losses), len(losses))


def test_progress_bar_shows_loss_and_validation(capsys):
    toy = _Toy([0.1, 0.2])
    with training_session(2, desc="toy", verbose=True, blas_threads=1) as bar:
        run_epochs(toy.step, 2, bar=bar, model="Toy", advice="x", validate=toy.validate)
    err = capsys.readouterr().err
    assert "toy" in err and "2/2" in err


def test_epochs_are_numbered_on_from_first_epoch():
    seen = []
    toy = _Toy([0.1, 0.2, 0.3])
    step = toy.step
    toy.step = lambda epoch: (seen.append(epoch), step(epoch - 4))[1]
    log = _run(toy, 3, first_epoch=4, validate_from=5, early_stopping=True)
    assert seen == [4, 5, 6] and log.validation_scores == [0.2, 0.3] and log.best_epoch == 7


def test_a_keyboard_interrupt_ends_the_epochs_and_keeps_the_best_so_far():
    toy = _Toy([0.1, 0.5, 0.4, 0.9])
    step = toy.step

    def interrupted(epoch):
        if epoch == 3:
            raise KeyboardInterrupt
        return step(epoch)

    toy.step = interrupted
    log = _run(toy, 4, early_stopping=True)
    assert log.interrupted and log.n_iter == 3 and log.validation_scores == [0.1, 0.5, 0.4]
    assert log.best_epoch == 2 and log.best_weights[0] == 2.0


# --------------------------------------------------------------------------- the seven models


def _supporting(X):
    # The tiny dialogs' last history turn supports each answer.
    return [(len(x.history) - 1,) if x.history else () for x in X]


def _plain_fit(model, X, y, groups=None):
    return model.fit(X, y, groups=groups)


def _memnn_fit(model, X, y, groups=None):
    return model.fit(X, y, _supporting(X), groups=groups)


def _memnn_partial_fit(model, X, y):
    return model.partial_fit(X, y, _supporting(X))


# name -> (the model on tiny dialogs, fit, partial_fit, (kernel module, function) that the
# epoch step calls once per epoch or per mini-batch, never when validating)
MODELS = {
    "supervised-embeddings": (
        lambda **kw: SupervisedEmbeddingRanker(
            embedding_dim=8, n_negatives=5, learning_rate=0.1, margin=0.5, **kw
        ),
        _plain_fit,
        lambda m, X, y: m.partial_fit(X, y),
        (se_kernels, "se_sgd_epoch"),
    ),
    "subgraph-embeddings": (
        lambda **kw: SubgraphEmbeddingRanker(
            kb=[(f"api_call {c}", "books_in", c) for c in CITIES],
            embedding_dim=8,
            n_negatives=5,
            learning_rate=0.1,
            **kw,
        ),  # fmt: skip
        _plain_fit,
        lambda m, X, y: m.partial_fit(X, y),
        (se_kernels, "se_sgd_epoch"),
    ),
    "memn2n": (
        lambda **kw: MemN2NRanker(hops=1, embedding_dim=8, learning_rate=0.05, **kw),
        _plain_fit,
        lambda m, X, y: m.partial_fit(X, y),
        (memn2n_kernels, "batch_loss_grad"),
    ),
    "memnn": (
        lambda **kw: MemNNQA(embedding_dim=8, **kw),
        _memnn_fit,
        _memnn_partial_fit,
        (memnn_kernels, "train_epoch"),
    ),
    "recurrent-reader": (
        lambda **kw: RecurrentReader(hidden_size=8, embedding_dim=8, learning_rate=0.02, **kw),
        _plain_fit,
        lambda m, X, y: m.partial_fit(X, y),
        (recurrent_kernels, "reader_batch"),
    ),
    "dual-encoder": (
        lambda **kw: DualEncoderRanker(hidden_size=8, embedding_dim=8, learning_rate=0.02, **kw),
        _plain_fit,
        lambda m, X, y: m.partial_fit(X, y),
        (recurrent_kernels, "dual_batch"),
    ),
    "qrn": (
        lambda **kw: QRNRanker(embedding_dim=8, learning_rate=0.02, **kw),
        _plain_fit,
        lambda m, X, y: m.partial_fit(X, y),
        (qrn_kernels, "batch_loss_grad"),
    ),
}
EARLY = dict(early_stopping=True, validation_fraction=0.34, n_iter_no_change=10)
parametrize_models = pytest.mark.parametrize("name", list(MODELS))


def _fit(name, X=None, y=None, groups=None, **params):
    make, fit, _, _ = MODELS[name]
    if X is None:
        X, y, _ = make_tiny_dialogs()
    return fit(make(**{"epochs": 3, "random_state": 0, **params}), X, y, groups)


@parametrize_models
def test_the_training_parameters_are_shared_and_validated_alike(name):
    model = MODELS[name][0]()
    for param, constraint in TRAINING_CONSTRAINTS.items():
        assert model._parameter_constraints[param] is constraint
        assert param in model.get_params()


@parametrize_models
@pytest.mark.parametrize(
    "param, value, match",
    [
        ("early_stopping", "yes", "'early_stopping' parameter of .* must be"),
        ("validation_fraction", 0.0, r"'validation_fraction' parameter .* range \(0.0, 1.0\)"),
        ("validation_fraction", 1.0, r"'validation_fraction' parameter .* range \(0.0, 1.0\)"),
        ("n_iter_no_change", 0, "'n_iter_no_change' parameter of .* must be"),
        ("warm_start", 1.5, "'warm_start' parameter of .* must be"),
        ("random_state", "seed", "'random_state' parameter of .* must be"),
    ],
)
def test_bad_training_parameters_give_clear_errors(name, param, value, match):
    with pytest.raises(ValueError, match=match):
        _fit(name, **{param: value})


@parametrize_models
def test_fitted_curves_are_the_same_on_every_model(name):
    X, y, groups = make_tiny_dialogs()
    plain = _fit(name)
    assert plain.n_iter_ == 3 == len(plain.loss_curve_) == plain.best_epoch_
    assert all(isinstance(v, float) for v in plain.loss_curve_)
    assert plain.validation_scores_ is None and plain.best_validation_score_ is None
    early = _fit(name, X, y, groups, **EARLY)
    assert len(early.loss_curve_) == early.n_iter_ == len(early.validation_scores_) == 3
    assert early.best_validation_score_ == max(early.validation_scores_)
    # the kept epoch has the best score (ties broken by each model's second key)
    assert early.validation_scores_[early.best_epoch_ - 1] == early.best_validation_score_


@parametrize_models
def test_a_seeded_fit_repeats_exactly(name):
    X, y, groups = make_tiny_dialogs()
    a, b = (_fit(name, X, y, groups, **EARLY) for _ in range(2))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert a.loss_curve_ == b.loss_curve_ and a.validation_scores_ == b.validation_scores_


@parametrize_models
def test_one_validation_split_rule(name, monkeypatch):
    splits = []

    def recording(*args, **kwargs):
        splits.append((kwargs.get("groups") is not None, *validation_split(*args, **kwargs)))
        return splits[-1][1:]

    monkeypatch.setattr(training, "validation_split", recording)
    X, y, groups = make_tiny_dialogs()
    groups = np.asarray(groups)
    for seed in (0, 0, 1):
        _fit(name, X, y, groups, **{**EARLY, "random_state": seed})
        _fit(name, X, y, **{**EARLY, "random_state": seed})
    by_groups, by_rows = splits[0::2], splits[1::2]
    for has_groups, train, val in by_groups:
        assert has_groups and not set(groups[train]) & set(groups[val])  # whole groups
    for has_groups, _, val in by_rows:
        assert not has_groups and len(val) == int(0.34 * len(X))
    # seeded rows: the same seed holds out the same rows, another seed other rows
    np.testing.assert_array_equal(by_rows[0][2], by_rows[1][2])
    assert not np.array_equal(by_rows[0][2], by_rows[2][2])
    assert not np.array_equal(by_rows[0][2], np.arange(len(X) - len(by_rows[0][2]), len(X)))


@parametrize_models
@pytest.mark.parametrize("early_stopping", [False, True])
def test_random_state_is_drawn_once_per_fit(name, early_stopping, monkeypatch):
    calls = []

    def counting(seed):
        calls.append(seed)
        return check_random_state(seed)

    monkeypatch.setattr(training, "check_random_state", counting)
    X, y, groups = make_tiny_dialogs()
    model = _fit(name, X, y, groups, **{**EARLY, "early_stopping": early_stopping})
    assert calls == [0]
    MODELS[name][2](model, X, y)  # partial_fit
    assert calls == [0, 0]


@parametrize_models
def test_warm_start_continues_from_the_fitted_weights(name):
    X, y, _ = make_tiny_dialogs()
    model = _fit(name, X, y, warm_start=True, epochs=2)
    first = model.decision_function(X)
    curve = list(model.loss_curve_)
    MODELS[name][1](model, X, y)
    assert model.n_iter_ == 4 == len(model.loss_curve_) == model.best_epoch_
    assert model.loss_curve_[:2] == curve
    assert not np.array_equal(model.decision_function(X), first)
    # continued, not restarted: a fresh fit starts from the first epoch's loss
    fresh = _fit(name, X, y, epochs=2)
    assert fresh.loss_curve_ == curve and model.loss_curve_[2] < curve[0]
    shape = "hidden_size" if "hidden_size" in model.get_params() else "embedding_dim"
    with pytest.raises(ValueError, match=f"warm_start continues the fitted weights.*{shape}"):
        MODELS[name][1](model.set_params(**{shape: 4}), X, y)
    assert _fit(name, X, y, warm_start=False, epochs=2).n_iter_ == 2


@parametrize_models
def test_partial_fit_runs_one_epoch_on_from_the_fitted_weights(name):
    X, y, _ = make_tiny_dialogs()
    make, _, partial_fit, _ = MODELS[name]
    model = partial_fit(make(random_state=0), X, y)
    one = _fit(name, X, y, epochs=1)
    np.testing.assert_array_equal(model.decision_function(X), one.decision_function(X))
    for _ in range(2):
        model = partial_fit(model, X, y)
    assert model.n_iter_ == 3 == len(model.loss_curve_) and model.validation_scores_ is None
    assert model.predict(X[:2]).shape == (2,)


@parametrize_models
@pytest.mark.parametrize("early_stopping", [False, True])
def test_ctrl_c_keeps_a_usable_model(name, early_stopping, monkeypatch):
    """A KeyboardInterrupt from the third epoch's step ends the training with a warning:
    the model is the one two epochs give (with early stopping, their best)."""
    X, y, groups = make_tiny_dialogs()
    module, kernel = MODELS[name][3]
    real = getattr(module, kernel)
    calls = []

    def counted(*args):
        calls.append(None)
        return real(*args)

    monkeypatch.setattr(module, kernel, counted)
    params = EARLY if early_stopping else {}
    two = _fit(name, X, y, groups, epochs=2, **params)
    n_two = len(calls)

    def interrupted(*args):
        if len(calls) == 2 * n_two:
            raise KeyboardInterrupt
        return counted(*args)

    monkeypatch.setattr(module, kernel, interrupted)
    with pytest.warns(UserWarning, match="interrupted.*after 2 complete epochs"):
        model = _fit(name, X, y, groups, epochs=5, **params)
    assert model.n_iter_ == 2 == len(model.loss_curve_) and model.loss_curve_ == two.loss_curve_
    assert model.best_epoch_ == two.best_epoch_ <= 2
    np.testing.assert_array_equal(model.decision_function(X), two.decision_function(X))
    assert model.predict(X[:2]).shape == (2,)


@pytest.mark.parametrize("name", ["supervised-embeddings", "dual-encoder"])
def test_fit_chunks_starts_anew_and_refuses_to_continue(name):
    X, y, _ = make_tiny_dialogs()
    chunks = [(X[:12], y[:12]), (X[12:], y[12:])]
    model = MODELS[name][0](epochs=2, random_state=0).fit_chunks(chunks)
    assert model.n_iter_ == 2 == model.best_epoch_  # a fresh fit, then warm_start set
    with pytest.raises(ValueError, match="fit_chunks does not support warm_start"):
        model.set_params(warm_start=True).fit_chunks(chunks)
