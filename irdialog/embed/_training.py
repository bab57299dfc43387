"""The training loop shared by the gradient-trained embedding models.

As scikit-learn's ``BaseSGD`` sits over one compiled ``_sgd_fast`` loop, the models of
:mod:`irdialog.embed` trained by gradient steps (:class:`~irdialog.embed.MemN2NRanker`,
:class:`~irdialog.embed.SupervisedEmbeddingRanker`) share everything around their kernels:

- :func:`validation_split`: the held-out examples for early stopping (whole groups when
  given);
- :func:`training_session`: the BLAS thread limit (threadpoolctl) and the tqdm progress bar
  (``disable=not verbose``) around a fit, possibly of several restarts;
- :func:`run_epochs`: the epochs, the divergence check (a non-finite loss raises a
  ``FloatingPointError`` naming the model and what to lower), the validation score after
  each epoch, and early stopping that keeps the weights of the best epoch.

A model supplies only its per-epoch step, its validation score and its weight snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm


def validation_split(n, fraction, *, groups=None, random_state=None, model="The model"):
    """The (train rows, validation rows) of ``n`` examples for early stopping.

    Parameters
    ----------
    n : int
        Number of examples.
    fraction : float in (0, 1)
        Share of the examples (of the groups, when given) held out.
    groups : array-like of shape (n,), default=None
        Dialog or story ids: the held-out examples are whole groups. Needs ``random_state``.
    random_state : int or None, default=None
        None: the last ``round(fraction * n)`` examples in their given order are held out (so
        the turns of a dialog stay on one side when the examples come in dialog order).
        An int seeds a random choice of ``max(1, floor(fraction * n))`` examples, or of
        that many groups with ``groups``.
    model : str
        The estimator's name, for the error message.

    Returns
    -------
    train_rows, val_rows : int64 arrays, in increasing order

    Raises
    ------
    ValueError
        When one side would be empty.
    """
    rows = np.arange(n)
    if random_state is None:
        if groups is not None:
            raise ValueError("A validation split by groups needs a random_state.")
        n_val = int(round(fraction * n))
        mask = rows >= n - n_val
        unit, n_units = "examples", n
    else:
        rng = np.random.default_rng(random_state)
        if groups is None:
            n_val = max(1, int(math.floor(fraction * n)))
            mask = np.zeros(n, dtype=bool)
            mask[rng.permutation(n)[:n_val]] = True
            unit, n_units = "examples", n
        else:
            groups = np.asarray(groups)
            if groups.shape != (n,):
                raise ValueError(
                    f"groups must have one entry per sample ({n}), got {groups.shape}."
                )
            uniq = np.unique(groups)
            n_val = max(1, int(math.floor(fraction * len(uniq))))
            mask = np.isin(groups, rng.permutation(uniq)[:n_val])
            unit, n_units = "groups", len(uniq)
    train_rows, val_rows = rows[~mask], rows[mask]
    if not len(train_rows) or not len(val_rows):
        raise ValueError(
            f"{model}: early_stopping with validation_fraction={fraction} of {n_units} {unit} "
            f"leaves no training or no validation example: it needs at least two {unit}."
        )
    return train_rows, val_rows


@contextmanager
def training_session(total, *, desc, verbose, blas_threads=None):
    """The context of a fit: at most ``blas_threads`` BLAS threads (None: leave the setting
    alone) and a progress bar of ``total`` epochs, shown when ``verbose``. Yields the bar,
    for :func:`run_epochs` (one bar may serve several restarts)."""
    limits = (
        nullcontext()
        if blas_threads is None
        else threadpool_limits(limits=blas_threads, user_api="blas")
    )
    with limits, tqdm(total=total, desc=desc, disable=not verbose) as bar:
        yield bar


@dataclass
class EpochLog:
    """What :func:`run_epochs` ran: the mean training loss and the validation score of
    each epoch, the best score, and the weights of the best epoch (early stopping only)."""

    loss_curve: list = field(default_factory=list)
    validation_scores: list = field(default_factory=list)
    best_score: float | None = None
    best_key: tuple | None = None
    best_weights: object = None

    @property
    def n_iter(self) -> int:
        """Epochs run."""
        return len(self.loss_curve)


def run_epochs(
    step: Callable,
    n_epochs: int,
    *,
    bar,
    model: str,
    advice: str,
    validate: Callable | None = None,
    validate_from: int = 0,
    snapshot: Callable | None = None,
    early_stopping: bool = False,
    n_iter_no_change: int = 10,
) -> EpochLog:
    """Run up to ``n_epochs`` epochs of a model's training.

    Parameters
    ----------
    step : callable ``step(epoch) -> (mean_loss, postfix)``
        Trains one epoch (counted from 0) in place; returns its mean training loss and a
        dict of further progress-bar entries.
    n_epochs : int
    bar : tqdm
        From :func:`training_session`; advanced by one per epoch, and to the end of the
        ``n_epochs`` when stopping early.
    model : str
        The estimator's name, for the divergence error.
    advice : str
        What to lower when the loss diverges (e.g. ``"learning_rate (now 0.1)"``).
    validate : callable ``validate() -> (score, tie_break)`` or None
        The validation score of the current weights (higher is better; ties are broken by
        the higher ``tie_break``). Called after each epoch from ``validate_from`` on.
    validate_from : int, default=0
        The first validated epoch (e.g. after MemN2N's linear-start epochs).
    snapshot : callable ``snapshot() -> weights`` or None
        Copies of the current weights, taken at each improving epoch with
        ``early_stopping``.
    early_stopping : bool, default=False
        Stop after ``n_iter_no_change`` validated epochs without improvement, and keep the
        weights of the best one in ``EpochLog.best_weights``.
    n_iter_no_change : int, default=10

    Returns
    -------
    EpochLog

    Raises
    ------
    FloatingPointError
        When an epoch's loss is not finite.
    """
    log = EpochLog()
    since_best = 0
    for epoch in range(n_epochs):
        loss, postfix = step(epoch)
        log.loss_curve.append(loss)
        if not np.isfinite(loss):
            raise FloatingPointError(
                f"{model} diverged at epoch {epoch + 1} (mean loss {loss}): lower {advice}."
            )
        postfix = {"loss": f"{loss:.4g}", **postfix}
        if validate is not None and epoch >= validate_from:
            score, tie_break = validate()
            log.validation_scores.append(score)
            postfix["val"] = f"{score:.4f}"
            if log.best_key is None or (score, tie_break) > log.best_key:
                log.best_key = (score, tie_break)
                log.best_score = score
                since_best = 0
                if early_stopping and snapshot is not None:
                    log.best_weights = snapshot()
            else:
                since_best += 1
        bar.set_postfix(postfix, refresh=False)
        bar.update(1)
        if early_stopping and since_best >= n_iter_no_change:
            bar.update(n_epochs - epoch - 1)
            break
    return log
