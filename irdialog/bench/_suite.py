"""What every suite declares: its models (:class:`ModelSpec`), how each chooses its
hyper-parameters (:class:`Selection`), and the :class:`Suite` itself; and the one row format
every result is read in (:class:`Row`, :func:`result_rows`).

A suite module (``_<suite>.py``) ends with ``SUITE = Suite(...)``; the registry
(``_registry``) finds it there. The command line (its options, its printed table), the
report (the Markdown tables of BENCHMARKS.md) and the plots read only the declaration and
the long rows of a result, never a suite's name.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from sklearn.model_selection import ParameterGrid

from ._harness import _is_metric
from ._presets import load_presets
from ._runner import run_declared, train_declared

# How a joint run chooses among its points (``Suite.joint_choice``).
JOINT_CHOICES = ("joined", "normalised_mean")


@dataclass(frozen=True)
class Selection:
    """How a model's hyper-parameters are chosen; build one with a constructor.

    - :meth:`dev_grid`: every point of ``grid`` fitted on the training split, the best on
      the dev split kept (each run);
    - :meth:`preset`: chosen beforehand, read from ``irdialog/data/presets/<suite>-<name>
      .json``; ``grid`` (when given) is the search that writes that file (``irdialog bench
      SUITE --model M --search``), on the held-out share ``fraction`` where the suite
      carves one from the training data;
    - :meth:`heldout`: each run fits every point of ``grid[task]`` on part of the data and
      keeps the best on the held-out ``fraction`` (split with seed ``seed``), and records
      every point's held-out score; ``grid[None]``, where given, is the grid of a joint run;
    - :meth:`fixed`: ``params``, with ``note`` saying how they were chosen.

    Examples
    --------
    >>> from irdialog.bench import Selection
    >>> Selection.dev_grid({"use_history": [True, False]}).points("dialog-babi", 1)
    [{'use_history': True}, {'use_history': False}]
    >>> Selection.preset("struct-svm").points("babi-qa", 2)
    [{'C': 10.0}]
    >>> Selection.fixed({"k1": 2.0}).points("ubuntu")
    [{'k1': 2.0}]
    """

    kind: str
    grid: object = None
    preset_name: str | None = None
    fraction: float | None = None
    seed: int = 0
    params: dict = field(default_factory=dict)
    note: str | None = None

    @classmethod
    def dev_grid(cls, grid=None) -> Selection:
        """Every point of ``grid`` (a ``ParameterGrid`` spec; None: the defaults alone)."""
        return cls("dev-grid", grid=grid or {})

    @classmethod
    def preset(cls, name: str, *, search=None, fraction=None) -> Selection:
        """The preset file ``<suite>-<name>.json``; ``search``: the grid its search covers
        (a ``ParameterGrid`` spec, or a callable ``(task, presets) -> list of points``)."""
        return cls("preset", grid=search, preset_name=name, fraction=fraction)

    @classmethod
    def heldout(cls, grids: dict, *, fraction: float = 0.2, seed: int = 0) -> Selection:
        """``grids[task]`` searched on a held-out ``fraction`` at every run."""
        return cls("heldout", grid=grids, fraction=fraction, seed=seed)

    @classmethod
    def fixed(cls, params: dict, note: str | None = None) -> Selection:
        """``params`` as they are; ``note``: how they were chosen (None: not searched)."""
        return cls("fixed", params=dict(params), note=note)

    @property
    def searchable(self) -> bool:
        """Whether ``--search`` can write this model's presets."""
        return self.kind == "preset" and self.grid is not None

    def tasks(self):
        """The tasks a held-out selection has a grid for (None: any)."""
        return sorted(t for t in self.grid if t is not None) if self.kind == "heldout" else None

    def has_joint(self, suite: str) -> bool:
        """Whether a joint run (task None: one model for every task) has points."""
        if self.kind == "heldout":
            return None in self.grid
        return self.kind != "preset" or None in self.presets(suite)

    def presets(self, suite: str) -> dict:
        """``{task: Preset}`` of a preset selection (empty otherwise)."""
        return load_presets(suite, self.preset_name) if self.kind == "preset" else {}

    def points(self, suite: str, task=None, presets=None) -> list[dict]:
        """The points a run of ``task`` tries (a preset: its one point; ``presets`` saves
        reading the file again)."""
        if self.kind == "preset":
            return [dict((presets or self.presets(suite))[task].params)]
        if self.kind == "fixed":
            return [dict(self.params)]
        grid = self.grid[task] if self.kind == "heldout" else self.grid
        return list(ParameterGrid(grid))

    def record(self, suite: str, task=None, presets=None) -> dict:
        """What a result's ``chosen[...]["selection"]`` says of the choice beyond its
        scores: the preset's search and scores, or the note of fixed parameters."""
        if self.kind == "preset":
            return {"preset": (presets or self.presets(suite))[task].record}
        if self.kind == "fixed":
            return {"search": self.note}
        return {}


@dataclass(frozen=True)
class ModelSpec:
    """A model of a suite: its paper column, how it is built, how it is tuned.

    ``paper`` names the model's figures in the suite's reference table
    (``irdialog/data/reference``): a column, or (Ubuntu) the rows of the papers; None for a
    model beyond the papers. ``build(*inputs, **params)`` gives the estimator at seed 0
    from what the suite passes (the split it is fitted on, as ``load`` read it, or what
    the suite's ``build_inputs`` makes of it: nothing for bAbI QA). ``fit_params(data)``
    gives extra ``fit`` arguments and ``extras(model, data)`` extra row metrics (bAbI QA's
    supporting facts); ``joint_paper`` is the paper's column of the model fitted on all
    tasks at once (a joint run), None where it has none; ``note`` goes into the protocol;
    ``extra`` holds what only one suite reads (bAbI QA: the paper's summary; Ubuntu: which
    training rows).

    Examples
    --------
    >>> from irdialog.bench import DIALOG_BABI_MODELS
    >>> spec = DIALOG_BABI_MODELS["tfidf-type"]
    >>> spec.paper, spec.selection.kind, len(spec.selection.points("dialog-babi", 1))
    ('tfidf_type', 'dev-grid', 4)
    """

    paper: object
    build: Callable[..., object]
    selection: Selection
    fit_params: Callable[[object], dict] | None = None
    extras: Callable[[object, object], dict] | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)
    joint_paper: object = None


@dataclass(frozen=True)
class Row:
    """One figure of a result, in the long format every suite shares.

    ``task`` (an int, ``"all"`` for a figure over the tasks, or a name), ``split`` (the
    data scored, with a sub-population after a comma: ``"test, response 1"``), ``metric``,
    ``value`` (mean over the seeds), ``paper`` (the paper's figure, ``{source: figure}``
    where several papers give one, None where none does), ``by_seed`` (each seed's value,
    None for one seed), ``std`` (their standard deviation) and ``n`` (examples scored).

    Examples
    --------
    >>> from irdialog.bench import Row
    >>> Row(3, "test, response 1", "hits@10", 48.2, n=1000).split
    'test, response 1'
    """

    task: object
    split: str
    metric: str
    value: object
    paper: object = None
    by_seed: list | None = None
    std: float | None = None
    n: int | None = None


def _is_figure(key, value) -> bool:
    return _is_metric(key, value) and not key.endswith("_std")


def _rows_of(record: dict, task, split: str, main: str | None) -> list[Row]:
    if "metric" in record and "value" in record:  # already one figure per row
        metrics = [(record["metric"], "value", record.get("paper"))]
    else:
        metrics = [
            (key, key, record.get(f"paper_{key}", record.get("paper") if key == main else None))
            for key, value in record.items()
            if _is_figure(key, value)
        ]
    return [
        Row(
            task=task,
            split=split,
            metric=metric,
            value=record[key],
            paper=paper,
            by_seed=record.get(f"{key}_by_seed"),
            std=record.get(f"{key}_std"),
            n=record.get("n"),
        )
        for metric, key, paper in metrics
    ]


def long_rows(result: dict, metric: str | None = None) -> list[Row]:
    """The rows of any result record (run, merged result or committed JSON file) in the
    long format: one :class:`Row` per figure, its ``summary`` last (task ``"all"``).

    ``metric`` is the result's main metric, the one a bare ``paper`` value of a row
    belongs to (bAbI QA's ``accuracy``); rows of the ``{"metric", "value"}`` layout need
    none. A row without a split was scored on test, or on the held-out data of a
    ``heldout`` run.

    Examples
    --------
    >>> from irdialog.bench._suite import long_rows
    >>> result = {"options": {}, "rows": [{"task": 1, "n": 1000, "accuracy": 60.0,
    ...           "paper": 36.0}], "summary": {"mean_accuracy": 60.0, "failed": 1}}
    >>> for row in long_rows(result, "accuracy"):
    ...     print(row.task, row.split, row.metric, row.value, row.paper)
    1 test accuracy 60.0 36.0
    all test mean_accuracy 60.0 None
    all test failed 1 None
    """
    default = "valid" if (result.get("options") or {}).get("heldout") else "test"
    rows = []
    for record in result["rows"]:
        split = record.get("split", default)
        if "response" in record:
            split += f", response {record['response']}"
        rows += _rows_of(record, record.get("task"), split, metric)
    if result.get("summary"):
        rows += _rows_of(result["summary"], "all", default, None)
    return rows


def positive_int(text: str) -> int:
    """An ``argparse`` type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def number(value, digits: int = 1) -> str:
    """A figure as text: an int as it is, a float with ``digits`` decimals, None as ``""``."""
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def spread(row: Row, digits: int = 1, sep: str = " ± ") -> str:
    """A row's value and, over several seeds, its standard deviation after ``sep``.

    Examples
    --------
    >>> from irdialog.bench._suite import Row, spread
    >>> spread(Row(1, "test", "accuracy", 65.0, std=7.07))
    '65.0 ± 7.1'
    """
    return number(row.value, digits) + ("" if row.std is None else f"{sep}{row.std:.{digits}f}")


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _paper_text(paper, digits: int) -> str:
    if isinstance(paper, dict):
        return "; ".join(f"{source} {number(v, digits)}" for source, v in paper.items())
    return number(paper, digits)


def format_rows(rows: list[Row], model: str) -> str:
    """The plain-text table ``irdialog bench`` prints: one line per figure, ours (± the
    standard deviation over seeds) next to the paper's and the difference.

    Examples
    --------
    >>> from irdialog.bench._suite import Row, format_rows
    >>> print(format_rows([Row(1, "tst", "per_response", 5.8, 5.6, n=5936)], "tfidf"))
    task  split      metric               n    tfidf (ours)     paper   diff
    1     tst        per_response      5936             5.8       5.6   +0.2
    """
    width = max([6] + [len(str(r.task)) + 1 for r in rows])  # a data set's name as task
    lines = [
        f"{'task':<{width}}{'split':<11}{'metric':<14}{'n':>8}  {model + ' (ours)':>14}"
        f"  {'paper':>8}   diff"
    ]
    for r in rows:
        paper = _paper_text(r.paper, 1)
        diff = ""
        if isinstance(r.paper, (int, float)) and isinstance(r.value, (int, float)):
            diff = f"{r.value - r.paper:+.1f}"
        lines.append(
            f"{r.task!s:<{width}}{r.split:<11}{r.metric:<14}{number(r.n):>8}  "
            f"{spread(r, sep='±'):>14}  {paper:>8}  {diff:>5}".rstrip()
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class Suite:
    """A paper table, declared once; the runner, the command line, the report and the plots
    read it.

    A suite is data: its tasks, its models (:class:`ModelSpec`: paper column, build, the
    :class:`Selection` of their hyper-parameters), how a split of a task is read
    (``load``) and scored (``score``), which (task, split) cells its table has, the
    paper's figures and its Markdown table. One runner (:mod:`irdialog.bench._runner`)
    fits every point of a model's selection on ``train_split``, keeps the best on
    ``dev_split`` by ``metric`` (refitted on ``refit`` where declared), and scores the
    ``scored`` splits, for every suite that declares ``load`` and ``score``; a joint run
    fits one model for every task (``join``). A suite whose protocol is its own gives
    its ``run`` instead.

    Parameters
    ----------
    name : str
        The subcommand (``irdialog bench NAME``) and the results' ``"suite"``.
    help : str
        The subcommand's one-line help.
    models : dict of str to ModelSpec
        ``build(train, **params)`` of a declared suite's model gets the training split as
        ``load`` read it (or what ``build_inputs`` makes of it).
    table : callable
        ``table([(file name, result), ...])``: the lines of the Markdown table of a
        results block of this suite.
    load : callable, default=None
        ``load(task, split, data_home)``: one split of one task (``task_name`` where the
        suite has no tasks), with ``X`` and ``y`` for a fit; read through the
        :mod:`irdialog.datasets` loaders, so that the provenance records the files. The
        suite's own options reach it through ``bind``.
    score : callable, default=None
        ``score(model, data)``: ``{metric: value in %, ..., "n": examples}`` of a fitted
        model on a loaded split, the metrics of ``metrics`` in order (a metric the split
        cannot give, such as R@5 of 10 over pools of 2, left out: it has no row); in the
        long layout, ``"parts"`` may add the rows of sub-populations, ``[(keys, scores),
        ...]``, each row with its ``keys`` (``{"response": 1}``) and no paper figure.
    ties : bool, default=False
        Whether ``score`` takes a tie rule (``score(model, data, ties=...)``, the ``ties``
        of :func:`irdialog.metrics.response_accuracy`): a run then scores under
        ``"expected"`` unless told otherwise, and records the rule in its options.
    metrics : tuple of str, default=()
        The row metrics ``score`` gives.
    layout : {"wide", "long", "task"}, default="wide"
        Rows with a column per metric (and ``paper_<metric>``), a row per metric
        (``{"task", "split", "metric", "n", "paper", "value"}``), or a row per task of a
        suite that scores one split (``{"task", "n", <metric>, "paper", <other
        metrics>}``, ``paper`` the paper's figure of the main ``metric``; no split).
    train_split, dev_split : str, default="train", "dev"
        The split every point is fitted on and the split that chooses among them (None:
        no choice; the selection must have one point).
    scored : tuple of str or callable, default=("test",)
        The splits of the rows, or ``scored(data_home)`` giving them.
    cells : tuple of (task, split), default=None
        The rows of the paper's table, in order, where not every task has every scored
        split.
    paper : callable, default=None
        ``paper(task, split, column)``: ``{metric: the paper's figure}`` of a model's
        ``paper`` column (empty: none).
    refit : str, default=None
        The split the chosen point is fitted on again before the scored splits are scored
        (Movie Dialog: all of dev, after the choice on a held-out part of it); None: the
        model fitted on ``train_split`` is scored.
    task_metric : callable, default=None
        ``task_metric(task)``: the metric that chooses among a task's points where the
        tasks differ in it (Movie Dialog: hits@1, hits@100, hits@10); None: ``metric``.
    fit : callable, default=None
        ``fit(model, train, spec)``, where ``model.fit(train.X, train.y, **fit_params)``
        (the model's ``ModelSpec.fit_params``) does not do.
    build_inputs : callable, default=None
        ``build_inputs(train)``: the positional arguments of every model's ``build``
        (None: the training split alone; bAbI QA's models take none).
    join : callable, default=None
        ``join([split, ...])``: one split from the same split of several tasks, for a
        joint run (``joint=True``: one model fitted on the training splits of all the
        tasks, with the selection's point of task None, scored on each task, its rows'
        paper figures those of the model's ``ModelSpec.joint_paper``; the run records
        ``joint``); None: the suite has no joint runs.
    joint_choice : {"joined", "normalised_mean"}, default="joined"
        How a joint run chooses among its points: ``"joined"``, by the score on the joined
        dev splits (bAbI QA has one point and no dev split); ``"normalised_mean"``, by
        the mean over the tasks of each task's dev score (its ``task_metric``) divided by
        the grid's best on that task, the chosen point then fitted on the joined ``refit``
        (else training) splits (Movie Dialog).
    holdout : callable, default=None
        ``holdout(train, fraction)``: ``(fit part, held-out part)`` of a training split,
        ``fraction`` the model's ``Selection`` fraction. A ``heldout`` run then fits on the
        first and scores the second, and loads no other split; None: it scores
        ``dev_split``.
    run_summary : callable, default=None
        ``run_summary(rows, spec, options)``: the run's ``summary`` over its rows
        (``options``: the run's recorded options), merged over seeds as a row is.
    protocol : callable, default=None
        ``protocol(spec, fitted, data)``: the run's protocol sentence (``data``: the last
        task's splits by name; in a joint run, ``{task: splits}`` and ``joint=True``; with
        ``ties``, the run's rule as ``ties=``).
    resources : callable, default=None
        ``resources(spec, fitted, data)``: the run's ``resources`` (what its fit and
        scoring used, noted on the splits by ``fit`` and ``score``); None: none recorded.
    bind : callable, default=None
        ``bind(**options)``: the fields a run with the suite's own options (those of
        ``options(args)`` that the runner does not take) replaces in this declaration,
        the one way those options act: a ``load`` that takes them (bAbI QA's ``lang``,
        Ubuntu's ``chunksize``), the ``scored`` splits (Ubuntu's ``split``). A run and
        ``irdialog train`` bind them alike; the run records them after its tasks. None:
        the suite has no options of its own.
    task_name : object, default=None
        The rows' ``task`` of a suite without tasks.
    title : str, default=None
        The suite's name in messages (default: ``name``).
    run : callable, default=None
        ``run(model=..., seed=..., data_home=..., progress=..., **options)``: one seed's
        run (see :func:`irdialog.bench.run_suite`); a declared suite's is the runner's.
    summary : callable, default=None
        ``summary(results_dir, best_published)``: the lines of the summary table of this
        suite's paper table that opens BENCHMARKS.md (``<!-- summary: NAME -->``; see
        :mod:`irdialog.bench._summary`); None: the suite has none.
    metric : str, default=None
        The main metric of the rows (the one a bare ``paper`` value belongs to and the
        default of the plots); None: rows carry their own ``metric``.
    tasks : sequence of int, default=None
        ``--tasks`` (one or more of these); None: no task option.
    one_task : bool, default=False
        ``--task`` (exactly one) instead of ``--tasks``; required unless the suite has
        ``arguments`` of its own (which may stand for it: Movie Dialog's ``--joint``).
    heldout : str, default=None
        ``--heldout``, with this help (what is scored instead of test).
    overrides : str, default=None
        ``--set NAME=VALUE``, with this help.
    arguments : callable, default=None
        ``arguments(parser)`` adds the suite's own options; ``options(args)`` turns them
        into ``run`` keywords.
    options : callable, default=None
    search : callable, default=None
        ``search(model, tasks, data_home=..., progress=..., points=..., seeds=...,
        **options)``: the ``chosen`` entries of a preset search (``--search``; ``seeds``:
        how many seeds each choice averages, ``--seeds``); ``search_notes(model)`` the
        notes of the preset file it writes.
    search_notes : callable, default=None
    search_arguments : callable, default=None
        ``search_arguments(parser)`` adds options that only ``--search`` takes;
        ``search_options(args)`` turns them into keywords of ``search``.
    search_options : callable, default=None
    train : callable, default=None
        ``train(model, task, data_home=..., seed=..., overrides=...)`` gives ``(fitted
        model, chosen)``: the model behind one task's row (``irdialog train``); a declared
        suite with ``tasks`` run together (not ``one_task``) has the runner's.
    label : callable, default=None
        ``label(result)``: the name of a result's model in tables and plots (default: the
        model).
    plot_label : callable, default=None
        ``plot_label(row)``: a row's place on a plot's x axis (default: its task).
    metric_names : dict, default={}
        Axis labels of metrics (default ``"%"``).
    full_scale : bool, default=False
        Plots run from 0 to 100 (accuracies) rather than to the highest bar.

    Examples
    --------
    >>> from irdialog.bench import SUITES
    >>> suite = SUITES["babi-qa"]
    >>> suite.metric, suite.tasks[-1], suite.search is not None
    ('accuracy', 20, True)
    """

    name: str
    help: str
    models: dict
    table: Callable[[list], list[str]]
    load: Callable | None = None
    score: Callable | None = None
    ties: bool = False
    metrics: tuple = ()
    layout: str = "wide"
    train_split: str = "train"
    dev_split: str | None = "dev"
    scored: tuple | Callable = ("test",)
    cells: tuple | None = None
    paper: Callable | None = None
    refit: str | None = None
    task_metric: Callable | None = None
    fit: Callable | None = None
    build_inputs: Callable | None = None
    join: Callable | None = None
    joint_choice: str = "joined"
    holdout: Callable | None = None
    run_summary: Callable | None = None
    protocol: Callable | None = None
    resources: Callable | None = None
    bind: Callable | None = None
    task_name: object = None
    title: str | None = None
    run: Callable[..., dict] | None = None
    summary: Callable[..., list[str]] | None = None
    metric: str | None = None
    tasks: tuple | None = None
    one_task: bool = False
    heldout: str | None = None
    overrides: str | None = None
    arguments: Callable | None = None
    options: Callable | None = None
    search: Callable | None = None
    search_notes: Callable | None = None
    search_arguments: Callable | None = None
    search_options: Callable | None = None
    train: Callable[..., tuple] | None = None
    label: Callable[[dict], str] | None = None
    plot_label: Callable[[Row], str] | None = None
    metric_names: dict = field(default_factory=dict)
    full_scale: bool = False

    def __post_init__(self):
        if self.title is None:
            object.__setattr__(self, "title", self.name)
        if self.joint_choice not in JOINT_CHOICES:
            raise ValueError(
                f"suite {self.name!r}: joint_choice is one of {JOINT_CHOICES}, got "
                f"{self.joint_choice!r}"
            )
        if self.run is None and self.load is None:
            raise ValueError(f"suite {self.name!r} declares neither load and score nor run")
        if self.run is None:
            object.__setattr__(self, "run", partial(run_declared, self))
            if self.train is None and self.tasks is not None and not self.one_task:
                object.__setattr__(self, "train", partial(train_declared, self))

    def scored_splits(self, data_home) -> list[str]:
        """The splits a run scores on ``data_home``."""
        return list(self.scored(data_home) if callable(self.scored) else self.scored)

    def rows(self, result: dict) -> list[Row]:
        """The long rows of one of this suite's results (:func:`long_rows`)."""
        return long_rows(result, self.metric)

    def model_label(self, result: dict) -> str:
        return self.label(result) if self.label else result["model"]

    def row_label(self, row: Row) -> str:
        return self.plot_label(row) if self.plot_label else str(row.task)

    def format(self, result: dict) -> str:
        """The table ``irdialog bench`` prints (:func:`format_rows`)."""
        return format_rows(self.rows(result), self.model_label(result))
