"""The epochs of a gradient-trained model: the loop every trained model of irdialog runs.

:func:`training_session` is the context of a fit (the BLAS thread limit and the progress
bar); :func:`run_epochs` runs the epochs, checks the loss, validates, stops early and turns
a Ctrl-C into the end of the training rather than of the fit. The models of
:mod:`irdialog.embed` reach it through their shared core (``embed/_training.py``), and the
structured SVM of :mod:`irdialog.svm` directly; it imports nothing of irdialog, so any model
package may use it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

# A training whose last loss is above its first and more than GROWTH times its smallest is
# diverging, though every loss is finite (a step a little too large for some rows: the loss
# grows by a factor an epoch, and may overflow only much later)
GROWTH = 10.0


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
    each epoch, the best score, the epoch (counted from 1) and the weights of the best epoch
    (early stopping only), and whether a ``KeyboardInterrupt`` ended the epochs."""

    loss_curve: list = field(default_factory=list)
    validation_scores: list = field(default_factory=list)
    best_score: float | None = None
    best_key: tuple | None = None
    best_epoch: int | None = None
    best_weights: object = None
    interrupted: bool = False

    @property
    def n_iter(self) -> int:
        """Epochs run to their end."""
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
    first_epoch: int = 0,
    stop=None,
    converged: Callable | None = None,
) -> EpochLog:
    """Run up to ``n_epochs`` epochs of a model's training.

    Parameters
    ----------
    step : callable ``step(epoch) -> (mean_loss, postfix)``
        Trains one epoch (counted from 0 over the model's whole training) in place;
        returns its mean training loss and a dict of further progress-bar entries.
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
    first_epoch : int, default=0
        The number of the first epoch (the epochs a continued model has run before).
    stop : threading.Event or None
        Set by another thread to end the epochs as a ``KeyboardInterrupt`` would, before
        the next one starts (restarts training side by side, see
        :meth:`~irdialog.embed._training.TrainingMixin._train_epochs`).
    converged : callable ``converged() -> bool`` or None
        Called after each epoch: True ends the epochs (a model's own stopping rule, such as
        the structured SVM's passes free of margin violations).

    Returns
    -------
    EpochLog
        A ``KeyboardInterrupt`` during an epoch (or ``stop``) ends the epochs: the log
        holds those run to their end, and ``interrupted`` is set.

    Raises
    ------
    FloatingPointError
        When an epoch's loss is not finite.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When the last of 3 or more epochs ends at a loss above the first epoch's and more
        than ``GROWTH`` (10) times the smallest: a divergence whose losses are still finite.
    """
    log = EpochLog()
    since_best = 0
    end = first_epoch + n_epochs
    try:
        for epoch in range(first_epoch, end):
            if stop is not None and stop.is_set():
                log.interrupted = True
                break
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
                    log.best_epoch = epoch + 1
                    since_best = 0
                    if early_stopping and snapshot is not None:
                        log.best_weights = snapshot()
                else:
                    since_best += 1
            bar.set_postfix(postfix, refresh=False)
            bar.update(1)
            if (early_stopping and since_best >= n_iter_no_change) or (
                converged is not None and converged()
            ):
                bar.update(end - epoch - 1)
                break
    except KeyboardInterrupt:
        # As scikit-learn's MLP: Ctrl-C ends the training, not the fit.
        log.interrupted = True
    _warn_if_growing(log.loss_curve, first_epoch, model, advice)
    return log


def _warn_if_growing(losses, first_epoch, model, advice) -> None:
    """Warn when the last of ``losses`` (of the epochs from ``first_epoch``, at least 3) is
    above the first and more than ``GROWTH`` times the smallest."""
    if len(losses) < 3:
        return
    low = int(np.argmin(losses))
    if losses[-1] > losses[0] and losses[-1] > GROWTH * losses[low]:
        lowest = f" and {losses[low]:.4g} at epoch {first_epoch + low + 1}" if low else ""
        warnings.warn(
            f"{model} is diverging: its training loss rose to {losses[-1]:.4g} at epoch "
            f"{first_epoch + len(losses)}, from {losses[0]:.4g} at epoch {first_epoch + 1}"
            f"{lowest}; lower {advice}.",
            ConvergenceWarning,
            stacklevel=3,
        )
