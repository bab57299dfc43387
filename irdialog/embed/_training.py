"""The training core shared by the gradient-trained models.

As scikit-learn's ``BaseSGD`` and ``BaseMultilayerPerceptron`` sit over their compiled
loops, the seven models of :mod:`irdialog.embed` trained by gradient steps
(:class:`~irdialog.embed.SupervisedEmbeddingRanker`, :class:`~irdialog.embed.MemN2NRanker`
and its gated variant, :class:`~irdialog.embed.QRNRanker`, :class:`~irdialog.embed.MemNNQA`,
:class:`~irdialog.embed.SubgraphEmbeddingRanker`, :class:`~irdialog.embed.RecurrentReader`,
:class:`~irdialog.embed.DualEncoderRanker`) share everything around their kernels:

- :data:`TRAINING_CONSTRAINTS`: the parameters of training they all take, with one meaning
  and one validation (``early_stopping``, ``validation_fraction``, ``n_iter_no_change``,
  ``warm_start``, ``random_state``, ``verbose``);
- :func:`validation_split`: the held-out examples for early stopping, one rule for all:
  whole groups when groups are given, else rows drawn at random with a seed;
- :func:`~irdialog._epochs.training_session` and :func:`~irdialog._epochs.run_epochs`
  (``irdialog/_epochs.py``, shared with the structured SVM): the BLAS thread limit and the
  progress bar around a fit, the epochs, the divergence checks (a non-finite loss raises a
  ``FloatingPointError`` naming the model and what to lower, a loss growing tenfold warns),
  the validation score after each epoch, early stopping that keeps the weights of the best
  epoch, and a Ctrl-C (``KeyboardInterrupt``) that ends the epochs instead of the fit;
- :class:`TrainingMixin`: the one fit path (``_fit_path``: the checks of the inputs, the
  continuation of a fitted model by ``warm_start`` or ``partial_fit``, ``random_state``
  drawn once into the :class:`Fit` the model's ``_fit`` receives, the validation split),
  the restarts, the interrupt's warning, and the fitted curves (``loss_curve_``,
  ``validation_scores_``, ``best_validation_score_``, ``n_iter_``, ``best_epoch_``), set
  alike on every model;
- :class:`GoldFitMixin` and :class:`ChunkFitMixin`: ``fit`` and ``partial_fit`` of the
  models trained on contexts and their gold responses, and ``fit_chunks``;
- :func:`train_tables`: the epochs of the models on the margin kernel of the supervised
  embeddings, whose weights are two embedding tables.

A model supplies its arrays and its kernels: a ``_fit(fit)`` that encodes the data of the
:class:`Fit` and hands the core a :class:`Run` (its per-epoch step, its validation score
and its weights).
"""

from __future__ import annotations

import copy
import math
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._compat import Interval, _fit_context
from .._epochs import run_epochs, training_session
from ..base import check_contexts, check_responses, iter_chunks
from . import _kernels

# The parameters of training every gradient-trained model takes, validated alike.
TRAINING_CONSTRAINTS = {
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "warm_start": ["boolean"],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}
# Seeds drawn from a model's random state (a validation split, a restart) are below this.
SEED_BOUND = np.iinfo(np.int32).max


def validation_split(n, fraction, *, groups=None, random_state, model="The model"):
    """The (train rows, validation rows) of ``n`` examples for early stopping.

    One rule for every model: with ``groups``, ``max(1, floor(fraction * n_groups))`` whole
    groups drawn at random are held out (the turns of a dialog, the questions of a story
    stay on one side); without, ``max(1, floor(fraction * n))`` rows drawn at random.

    Parameters
    ----------
    n : int
        Number of examples.
    fraction : float in (0, 1)
        Share of the examples (of the groups, when given) held out.
    groups : array-like of shape (n,), default=None
        Dialog or story ids.
    random_state : int
        Seeds the draw: a given seed holds out the same rows.
    model : str
        The estimator's name, for the error message.

    Returns
    -------
    train_rows, val_rows : int64 arrays, in increasing order

    Raises
    ------
    ValueError
        When one side would be empty, or ``groups`` has not one entry per example.
    """
    rows = np.arange(n)
    rng = np.random.default_rng(random_state)
    if groups is None:
        n_val = max(1, int(math.floor(fraction * n)))
        mask = np.zeros(n, dtype=bool)
        mask[rng.permutation(n)[:n_val]] = True
        unit, n_units = "examples", n
    else:
        groups = np.asarray(groups)
        if groups.shape != (n,):
            raise ValueError(f"groups must have one entry per sample ({n}), got {groups.shape}.")
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


@dataclass
class Fit:
    """One call of ``fit`` or ``partial_fit``, as the core hands it to a model's ``_fit``:
    the checked contexts ``X`` and responses ``y`` (less the held-out ones of a model that
    splits texts), the ``groups`` and validation data ``X_val, y_val`` (given, held out by
    the core, or None), whether the fit ``continuing`` starts from the fitted weights, and
    whether it is ``incremental`` (``partial_fit``: one epoch, no validation, no restarts).

    ``random_state`` is the model's ``random_state`` made a RandomState once: the training
    draws from it. ``apart`` draws what stays apart from the training (a held-out split of
    texts, MemN2N's unseen words): with an int seed, the seed's stream from its start, so
    that the training draws are those of a fit without these; else ``random_state``.
    """

    X: list
    y: np.ndarray
    groups: object
    X_val: list | None
    y_val: np.ndarray | None
    random_state: np.random.RandomState
    apart: np.random.RandomState
    continuing: bool
    incremental: bool

    def seeds(self, n):
        """``n`` seeds drawn from the fit's random state (restarts, generators)."""
        return self.random_state.randint(SEED_BOUND, size=n)

    def runs(self, n_init):
        """The training runs: ``n_init`` restarts of a new fit, else one."""
        return 1 if self.continuing or self.incremental else n_init


@dataclass
class Run:
    """One training run (a restart) of a model, as it hands it to
    :meth:`TrainingMixin._train_epochs`.

    Attributes
    ----------
    step : callable ``step(epoch) -> (mean_loss, postfix)``
        One epoch, see :func:`run_epochs`.
    weights : callable ``weights() -> weights``
        The current weights (not copied).
    snapshot : callable ``snapshot() -> weights``
        A copy of the current weights.
    validate : callable ``validate() -> (score, tie_break)`` or None
        See :func:`run_epochs`; None: no validation data.
    curves : dict of str to list
        Further per-epoch curves the step appends to, by the name of their fitted
        attribute (``"train_accuracy_curve_"``).
    train_key : callable ``train_key(weights) -> tuple`` or None
        How restarts without validation compare (higher is better); needed with several
        runs only.
    """

    step: Callable
    weights: Callable
    snapshot: Callable
    validate: Callable | None = None
    curves: dict = field(default_factory=dict)
    train_key: Callable | None = None


def _same(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict) or a is None or b is None:
        return a == b
    return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))


class _LockedBar:
    """A tqdm bar that restarts on several threads can advance (its counter is not
    atomic)."""

    def __init__(self, bar):
        self._bar = bar
        self._lock = threading.Lock()

    def update(self, n=1):
        with self._lock:
            self._bar.update(n)

    def set_postfix(self, postfix, refresh=True):
        with self._lock:
            self._bar.set_postfix(postfix, refresh=refresh)


def _run_all(train, n_runs, n_threads, stop):
    """``[train(k) for k in range(n_runs)]`` less the runs that did not start (None), on
    ``n_threads`` threads. ``train`` sets ``stop`` when its run was interrupted, after which
    no run starts; a ``KeyboardInterrupt`` here sets it too, and waits for the runs to end
    their epoch."""
    if n_threads <= 1:
        done = []
        for k in range(n_runs):
            done.append(train(k))
            if stop.is_set():
                break
    else:
        with ThreadPoolExecutor(n_threads, thread_name_prefix="irdialog-restart") as pool:
            futures = [pool.submit(train, k) for k in range(n_runs)]
            try:
                done = [f.result() for f in futures]
            except KeyboardInterrupt:
                stop.set()
                done = [f.result() for f in futures]
    return [d for d in done if d is not None]


class TrainingMixin:
    """What the gradient-trained models share around their epochs (see the module
    docstring): the validation split, the restarts, the continuation of a fitted model, the
    interrupt and the fitted curves.

    A model lists in ``_warm_start_fixed`` the parameters that shape its weights or its
    encoding: a continued fit refuses a change of them.
    """

    _warm_start_fixed: tuple = ()
    # Early stopping holds out rows the model's ``_fit`` draws with ``_split_rows`` (False),
    # or texts the core holds out before the model encodes them, vocabulary included (True).
    _split_texts: bool = False

    @property
    def _training_name(self) -> str:
        """The irdialog class of the model (past the subclasses of tests), for messages."""
        return next(c for c in type(self).__mro__ if c.__module__.startswith("irdialog")).__name__

    def _continues(self, incremental=False) -> bool:
        """Whether this fit starts from the fitted weights: ``partial_fit``
        (``incremental``) or ``warm_start`` on a fitted model. Raises ValueError when a
        parameter of ``_warm_start_fixed`` has changed since the weights were fitted."""
        if not (incremental or self.warm_start) or not hasattr(self, "n_iter_"):
            return False
        fitted = getattr(self, "_structure_", {})
        params = self.get_params(deep=False)
        for name, value in fitted.items():
            if not _same(params[name], value):
                how = "partial_fit" if incremental else "warm_start"
                anew = "a new model" if incremental else "warm_start=False"
                raise ValueError(
                    f"{self._training_name}: {how} continues the fitted weights, which were "
                    f"fitted with {name}={value!r}, not {params[name]!r}: restore it, or "
                    f"fit from scratch ({anew})."
                )
        return True

    def _split_rows(self, n, fit: Fit, *, apart=False):
        """(train rows, validation rows) of ``n`` examples of a fit: all rows and none
        without ``early_stopping`` or in ``partial_fit``, else :func:`validation_split`
        seeded by a draw from the fit's random state (its ``apart`` one with ``apart``),
        the only draw made."""
        if fit.incremental or not self.early_stopping:
            return np.arange(n), np.arange(0)
        rs = fit.apart if apart else fit.random_state
        return validation_split(
            n,
            self.validation_fraction,
            groups=fit.groups,
            random_state=rs.randint(SEED_BOUND),
            model=self._training_name,
        )

    def _random_states(self):
        """The (``random_state``, ``apart``) of a :class:`Fit`: ``random_state`` made a
        RandomState, once per fit."""
        rs = check_random_state(self.random_state)
        return rs, (copy.deepcopy(rs) if isinstance(self.random_state, Integral) else rs)

    def _fit_path(self, X, y, *, groups=None, X_val=None, y_val=None, incremental=False, **extra):
        """The one path of ``fit`` and ``partial_fit`` (``incremental``) to the model's
        ``_fit(fit, **extra)``: the checks of the data, the continuation of the fitted
        weights, ``random_state`` drawn once, and the split of texts (``_split_texts``)."""
        continuing = self._continues(incremental)
        X = check_contexts(X)
        y = check_responses(y, len(X))
        if (X_val is None) != (y_val is None):
            raise ValueError("Pass both X_val and y_val, or neither.")
        if X_val is not None:
            X_val = check_contexts(X_val, name="X_val")
            y_val = check_responses(y_val, len(X_val), name="y_val")
        fit = Fit(X, y, groups, X_val, y_val, *self._random_states(), continuing, incremental)
        if self._split_texts and self.early_stopping and X_val is None and not incremental:
            train_rows, val_rows = self._split_rows(len(X), fit, apart=True)
            fit.X, fit.X_val = [X[i] for i in train_rows], [X[i] for i in val_rows]
            fit.y, fit.y_val = y[train_rows], y[val_rows]
        return self._fit(fit, **extra)

    def _train_epochs(
        self,
        start_run: Callable,
        n_epochs: int,
        *,
        continuing: bool,
        desc: str,
        advice: str,
        n_runs: int = 1,
        validate_from: int = 0,
        blas_threads=None,
        n_jobs: int = 1,
    ):
        """Train ``n_runs`` runs (restarts) of ``n_epochs`` epochs and return the weights
        to keep: those of the best validation epoch with ``early_stopping``, else the last;
        of several runs, the one with the highest key (the best validation key, else the
        run's ``train_key``; the first of equals).

        ``start_run(k)`` gives the :class:`Run` of restart k. Epochs are counted on from the
        fitted ``n_iter_`` when ``continuing``. A ``KeyboardInterrupt`` ends the training
        (no further restart), warns, and keeps what the runs so far give. Sets the fitted
        curves (extended when ``continuing``) and the record of ``_warm_start_fixed``.

        With ``n_jobs`` > 1, up to ``n_jobs`` restarts train side by side on threads (the
        models' kernels release the GIL). A restart owns its weights, seed and scratch, so
        it computes the same as alone: the kept model does not depend on ``n_jobs``. An
        interrupt then ends every running restart after its current epoch.
        """
        first = self.n_iter_ if continuing else 0
        name = self._training_name
        stop = threading.Event()
        with training_session(
            n_runs * n_epochs, desc=desc, verbose=self.verbose, blas_threads=blas_threads
        ) as bar:
            shared_bar = _LockedBar(bar)

            def train(k):
                if stop.is_set():
                    return None
                run = start_run(k)
                log = run_epochs(
                    run.step,
                    n_epochs,
                    bar=shared_bar,
                    model=name,
                    advice=advice,
                    validate=run.validate,
                    validate_from=validate_from,
                    snapshot=run.snapshot,
                    early_stopping=self.early_stopping,
                    n_iter_no_change=self.n_iter_no_change,
                    first_epoch=first,
                    stop=stop,
                )
                if log.interrupted:
                    stop.set()
                return run, log

            runs = _run_all(train, n_runs, min(n_jobs, n_runs), stop)
        best = None
        for run, log in runs:
            kept = log.best_weights if log.best_weights is not None else run.weights()
            key = None
            if n_runs > 1:  # restarts are compared by validation, else on training data
                key = log.best_key if log.best_weights is not None else run.train_key(kept)
            if best is None or key > best[0]:
                best = (key, kept, log, run)
        _, kept, log, run = best
        self._keep_history(log, run, continuing)
        if stop.is_set():
            kept_how = (
                f"the weights of its best validated epoch, {self.best_epoch_}"
                if log.best_weights is not None
                else "its last weights (those of the interrupted epoch included)"
            )
            warnings.warn(
                f"{name}: training interrupted (KeyboardInterrupt) after {self.n_iter_} "
                f"complete epochs; the model keeps {kept_how}.",
                UserWarning,
                stacklevel=2,
            )
        return kept

    def _keep_history(self, log, run, continuing):
        def extend(attr, values):
            before = getattr(self, attr, None) if continuing else None
            return [*(before or ()), *values]

        before = self.n_iter_ if continuing else 0
        self.loss_curve_ = extend("loss_curve_", log.loss_curve)
        for attr, values in run.curves.items():
            setattr(self, attr, extend(attr, values))
        if run.validate is not None:
            self.validation_scores_ = extend("validation_scores_", log.validation_scores)
        elif not continuing:
            self.validation_scores_ = None
        self.best_validation_score_ = log.best_score
        self.n_iter_ = before + log.n_iter
        self.best_epoch_ = log.best_epoch if log.best_weights is not None else self.n_iter_
        if not continuing:
            params = self.get_params(deep=False)
            self._structure_ = {name: params[name] for name in self._warm_start_fixed}


class GoldFitMixin:
    """``fit`` and ``partial_fit`` of a :class:`TrainingMixin` model trained to pick each
    context's gold response among its candidates, on the contexts and those responses
    alone: both take the core's one path (:meth:`TrainingMixin._fit_path`) to the model's
    ``_fit(fit)``. A model whose ``fit`` takes more (validation data, supporting facts)
    writes its own ``fit`` on the same path."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None):
        """Train on contexts X and their gold responses y.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            Each must be one of ``candidates`` when a fixed candidate set is given.
        groups : array-like of shape (n_samples,), default=None
            Dialog or story ids: with early stopping, the validation split takes whole
            groups.

        Returns
        -------
        self
        """
        return self._fit_path(X, y, groups=groups)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y):
        """One epoch over contexts X and their gold responses y, from the fitted weights
        (or from a new model, whose vocabulary and candidates, and memory where the model
        has one, are then those of this first call: pass ``candidates`` for a fixed set).
        The epochs are counted on, so that a learning-rate schedule (and MemN2N's linear
        start) goes on from ``n_iter_``. No validation, no early stopping, no restarts.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            Each one of the candidates.

        Returns
        -------
        self
        """
        return self._fit_path(X, y, incremental=True)


class ChunkFitMixin:
    """``fit_chunks`` of a :class:`TrainingMixin` model. Its ``_chunk_encoder()`` gives
    ``encode(X, y) -> (indptr, ids, codes)``, a chunk's contexts as token ids (provisional)
    and its responses' rows of a response table, and ``finish(indptr, ids, codes, fit)``,
    which fits the model on all chunks' arrays, concatenated, drawing from the :class:`Fit`."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_chunks(self, chunks, *, client=None):
        """Fit on an iterable of chunks read once, keeping only integer arrays in memory.

        For corpora whose contexts do not fit in memory as Python objects (the 1M-row
        Ubuntu training file): each chunk's contexts are encoded to word ids as the chunk
        arrives (each distinct text of a chunk tokenised once) and the chunk is then
        dropped; only the word ids and the distinct responses are kept. Training runs on
        the compact arrays. The model is the one :meth:`fit` gives on the concatenated
        chunks (same vocabulary, same random draws). Validation data (early stopping),
        ``warm_start`` and what else needs the contexts themselves are not supported.

        :class:`~irdialog.SupervisedEmbeddingRanker` and :class:`~irdialog.DualEncoderRanker`
        also train on the workers of a Dask cluster from a ``dask.bag`` of chunks, by
        iterative parameter mixing (McDonald, Hall & Mann 2010): the vocabulary and
        candidates are those of the concatenated chunks, each partition keeps its encoded
        examples on its worker, and after each epoch, which every partition runs from the
        same weights, the weights become the partitions' mean, weighted by their numbers of
        examples (the dual encoder's Adam moments too; each of its partitions counts its own
        Adam steps, and draws its negatives from the whole response table). One partition
        gives the in-process model bit for bit; more give an averaged model, not that one,
        which depends on the partitions and ``random_state`` only (not on the workers). An
        averaged epoch moves the weights less than a serial one: with more partitions,
        choose the epochs (more) on dev data; use about one partition per worker (the user
        guide's performance page).

        Parameters
        ----------
        chunks : iterable or dask.bag.Bag
            Each chunk an object with attributes ``X`` and ``y`` or an ``(X, y)`` pair.
        client : distributed.Client, default=None
            The client whose workers train on a bag (None: the default client).

        Returns
        -------
        self

        Examples
        --------
        >>> from irdialog import SupervisedEmbeddingRanker
        >>> chunks = [(["hi there", "bye now"], ["hello", "goodbye"]), (["hi"], ["hello"])]
        >>> model = SupervisedEmbeddingRanker(epochs=20, random_state=0).fit_chunks(chunks)
        >>> model.candidates_.tolist()
        ['hello', 'goodbye']
        """
        if self.early_stopping:
            raise ValueError("fit_chunks does not support early_stopping; use fit.")
        if self._continues():
            raise ValueError("fit_chunks does not support warm_start; use fit.")
        if type(chunks).__module__.startswith("dask.bag"):  # on the cluster
            from ._cluster_fit import fit_bag

            return fit_bag(self, chunks, client)
        if client is not None:
            raise ValueError("client= trains on a dask bag of chunks; got no bag.")
        encode, finish = self._chunk_encoder()
        indptr, ids, codes = chunk_arrays(chunks, encode)
        if len(indptr) == 1:
            raise ValueError("chunks held no example: at least one is needed.")
        fit = Fit(None, None, None, None, None, *self._random_states(), False, False)
        return finish(indptr, ids, codes, fit)


def chunk_arrays(chunks, encode, id_dtype=np.int64):
    """``(indptr, ids, codes)`` of the examples of every chunk, in order, each chunk
    encoded by ``encode(X, y)`` into its own ``(indptr, ids, codes)`` (``ids`` of
    ``id_dtype``)."""
    parts, lengths, codes = [], [], []
    for X, y in iter_chunks(chunks):
        indptr, ids, chunk_codes = encode(X, y)
        lengths.append(np.diff(indptr))
        if len(ids):  # one array per chunk: millions of small arrays would not fit
            parts.append(ids)
        codes.append(chunk_codes)
    lengths = np.concatenate([np.zeros(0, np.int64), *lengths])
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    ids = np.concatenate(parts) if parts else np.zeros(0, id_dtype)
    return indptr, ids, np.concatenate([np.zeros(0, np.int64), *codes])


# ------------------------------------------------------------------------ the tables' models
# What the models trained by the margin-ranking kernel of the supervised embeddings
# (:func:`~irdialog.embed._kernels.se_sgd_epoch`) share: their embedding tables U, V.

# Byte alignment of the training embedding tables: a 32-float row then spans exactly two
# cache lines instead of three, which the gather-bound SGD kernel feels.
_ALIGN = 64
# Contexts a tables' model scores at once when validating during fit (block x
# n_candidates float32 scores).
VALIDATION_BLOCK = 1024


def aligned_copy(a: np.ndarray) -> np.ndarray:
    """A C-contiguous float32 copy of ``a`` whose data start on a _ALIGN-byte boundary."""
    a = np.asarray(a, dtype=np.float32)
    buf = np.empty(a.nbytes + _ALIGN, dtype=np.uint8)
    start = (-buf.ctypes.data) % _ALIGN
    out = buf[start : start + a.nbytes].view(np.float32).reshape(a.shape)
    out[...] = a
    return out


def csr_arrays(m) -> _kernels.CSR:
    """The CSR record (indptr int64, indices uint32, data float32) the kernels read."""
    return _kernels.CSR(
        np.ascontiguousarray(m.indptr, dtype=np.int64),
        np.ascontiguousarray(m.indices, dtype=np.uint32),
        np.ascontiguousarray(m.data, dtype=np.float32),
    )


def table_problem(rng, x_bags, gold, r_bags, n_candidates, entities, m_bags, type_rows, n_marks):
    """The arrays of :func:`~irdialog.embed._kernels.se_sgd_epoch` shared by the models
    trained over two embedding tables: the input bags, the gold rows, the candidates' bags,
    the entities (indptr, word, type) of the inputs, the candidates' match bags, the rows
    of the match types, the size of the kernel's mark table, and the kernel's random state,
    drawn last from ``rng``."""
    e_indptr, e_words, e_types = entities
    m_indptr, m_indices, _ = csr_arrays(m_bags)
    return dict(
        x=csr_arrays(x_bags),
        gold=gold,
        r=csr_arrays(r_bags),
        n_candidates=n_candidates,
        matches=_kernels.SEMatches(
            e_indptr,
            e_words.astype(np.int64),
            e_types,
            m_indptr,
            m_indices.astype(np.int64),
            type_rows,
            np.zeros(max(n_marks, 1), np.int64),
        ),
        state=np.array([rng.randint(0, 2**63, dtype=np.int64)], dtype=np.uint64),
    )


def train_tables(model, params, step, validate, *, n_epochs, continuing, desc, advice):
    """The epochs of a model trained by :func:`~irdialog.embed._kernels.se_sgd_epoch`: the
    training core (``model._train_epochs``) over a :class:`Run` whose weights are the
    tables ``U, V`` of ``params`` (:class:`~irdialog.embed._kernels.SEParams`); returns
    the tables to keep."""
    run = Run(
        step,
        weights=lambda: (params.U, params.V),
        snapshot=lambda: (params.U.copy(), params.V.copy()),
        validate=validate,
    )
    return model._train_epochs(
        lambda k: run, n_epochs, continuing=continuing, desc=desc, advice=advice
    )
