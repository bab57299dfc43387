"""The training loop shared by the gradient-trained models (irdialog.embed._training)."""

import numpy as np
import pytest

from irdialog.embed._training import run_epochs, training_session, validation_split


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
