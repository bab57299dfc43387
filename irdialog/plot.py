"""Pictures of models and results: attention over the turns, learning curves, bench results.

Needs matplotlib, the ``plot`` extra: ``pip install "irdialog[plot]"``. matplotlib is
imported inside the functions, so ``import irdialog.plot`` works without it and only
drawing raises the ImportError naming the extra.

Each function draws on the Axes ``ax`` when given and returns it. Without ``ax`` it makes a
new figure with ``matplotlib.pyplot.subplots`` (so that ``plt.show()`` and notebooks show
it; close it with ``plt.close(ax.figure)``) and changes no other pyplot state.
:func:`save_plot` draws on a figure made outside pyplot and writes it to a file, which is
what ``irdialog bench ... --plot FILE.png`` and the gallery (``python -m
benchmarks.gallery``) use.

- :func:`plot_attention`: the attention of each hop on each turn of one context, read like
  the tables of Bordes et al. (2017, appendix B);
- :func:`plot_learning_curve`: training loss, training accuracy and validation score per
  epoch;
- :func:`plot_bench`: a result of ``irdialog bench`` next to the paper's figures, per task.
"""

from __future__ import annotations

import argparse
import json
from contextvars import ContextVar
from pathlib import Path

import numpy as np

from .embed._attention import EMPTY_SLOTS

EXTRA = 'pip install "irdialog[plot]"'

# False inside save_plot: new figures are made without pyplot.
_USE_PYPLOT: ContextVar[bool] = ContextVar("irdialog_plot_use_pyplot", default=True)

_LOCUTOR = {"user": "User", "bot": "Bot", "kb": "KB", "": ""}
_MONOSPACE = "DejaVu Sans Mono"  # ships with matplotlib


def _require_matplotlib():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(f"irdialog.plot needs matplotlib: {EXTRA}") from exc
    return matplotlib


def _axes(ax, figsize):
    """``ax``, or the Axes of a new figure of size ``figsize`` (pyplot's unless in
    :func:`save_plot`)."""
    _require_matplotlib()
    if ax is not None:
        return ax
    if _USE_PYPLOT.get():
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize, layout="constrained")
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained").add_subplot()


def _final_estimator(model):
    return getattr(model, "_final_estimator", model)


# ---------------------------------------------------------------------------- attention


def _turn_label(row, width) -> str:
    text = row.text if len(row.text) <= width else row.text[: width - 1] + "…"
    if row.time is None:
        return f"{'':>3}  {'':<4}  {text:<{width}}"
    return f"{row.time:>3}  {_LOCUTOR.get(row.speaker, row.speaker):<4}  {text:<{width}}"


def _weight_text(w, hard) -> str:
    """A weight as the paper prints it (".054"), or hard attention's as 0 and 1."""
    if hard:
        return str(int(w))
    return f"{w:.3f}".lstrip("0")


def plot_attention(model, context, *, y=None, ax=None, max_chars=60, annotate=True):
    """The attention of each hop on each turn of one context, as a table.

    One row per memory, oldest first, labelled with its time (position in the dialog),
    speaker and text; one column per hop; each cell shaded by its weight and, with
    ``annotate``, printed as in the tables of Bordes et al. (2017, appendix B). Under the
    table: the user input, the model's answer and, when ``y`` is given, the correct one.

    Parameters
    ----------
    model : fitted MemN2NRanker, MemNNQA, or RankingPipeline ending in one
        Anything with ``attention_turns(context)`` and ``predict``. MemNNQA's attention is
        hard: 1 on the supporting fact each hop found.
    context : Context or str
    y : str, default=None
        The correct answer, shown with ``[Correct]`` or ``[Incorrect]``.
    ax : matplotlib Axes, default=None
        Where to draw; None: a new figure sized to the table.
    max_chars : int, default=60
        Longer turn texts are cut, ending in "…".
    annotate : bool, default=True
        Print the weight in each cell.

    Returns
    -------
    ax : matplotlib Axes
        The y tick labels are the rows (time, speaker, text, in columns of one width),
        then the user input, the correct answer (with ``y``) and the predicted one; the x
        tick labels are ``Hop #1`` ... ``Hop #K``.

    See Also
    --------
    irdialog.MemN2NRanker.attention_turns : the rows drawn here.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from irdialog import Context, MemN2NRanker, Turn
    >>> from irdialog.plot import plot_attention
    >>> X = [Context((Turn("kb", "mary went to the kitchen"),
    ...               Turn("kb", "john went to the garden")), "where is mary")] * 4
    >>> model = MemN2NRanker(hops=2, embedding_dim=8, epochs=2, random_state=0)
    >>> model = model.fit(X, ["kitchen"] * 4)
    >>> ax = plot_attention(model, X[0], y="kitchen", ax=Figure().add_subplot())
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['Hop #1', 'Hop #2']
    >>> [t.get_text().rstrip() for t in ax.get_yticklabels()]  # doctest: +NORMALIZE_WHITESPACE
    ['  1  KB    mary went to the kitchen',
     '  2  KB    john went to the garden',
     '     User input: where is mary',
     '     Correct answer: kitchen',
     '     Predicted answer: kitchen [Correct]']
    """
    _require_matplotlib()
    if not hasattr(model, "attention_turns"):
        raise TypeError(
            f"plot_attention needs a model with attention_turns (MemN2NRanker, MemNNQA or a "
            f"RankingPipeline ending in one), got {type(model).__name__}."
        )
    rows = model.attention_turns(context)
    query = context if isinstance(context, str) else context.query
    predicted = str(model.predict([context])[0])
    hops = len(rows[0].weights) if rows else int(getattr(_final_estimator(model), "hops", 1))
    weights = np.array([r.weights for r in rows]).reshape(len(rows), hops)
    # Under the turns, as in the paper's tables: the input, the answers.
    footer = [("User input", query)]
    if y is not None:
        footer.append(("Correct answer", y))
    verdict = "" if y is None else (" [Correct]" if predicted == y else " [Incorrect]")
    footer.append(("Predicted answer", predicted + verdict))
    width = min(max([len(r.text) for r in rows] + [10]), max_chars)
    labels = [_turn_label(r, width) for r in rows]
    labels += [f"     {name}: {value}" for name, value in footer]
    chars = max(len(lb) for lb in labels)
    labels = [f"{lb:<{chars}}" for lb in labels]
    n = len(rows)
    ax = _axes(ax, (0.075 * chars + 0.75 * hops + 0.6, 0.27 * (n + len(footer)) + 1.0))
    top = float(weights.max(initial=0.0)) or 1.0
    if n:  # no history: no memory, only the input and the answer
        ax.imshow(
            weights, cmap="Blues", vmin=0.0, vmax=top, aspect="auto", interpolation="nearest",
            extent=(-0.5, hops - 0.5, n - 0.5, -0.5),
        )  # fmt: skip
    if annotate:
        hard = bool(np.isin(weights, (0.0, 1.0)).all())
        for i, k in np.ndindex(weights.shape):
            w = weights[i, k]
            ax.text(
                k, i, _weight_text(w, hard), ha="center", va="center",
                fontsize=8, color="white" if w > 0.6 * top else "black",
            )  # fmt: skip
    ax.set_xticks(range(hops), [f"Hop #{k + 1}" for k in range(hops)])
    ax.xaxis.tick_top()
    ax.set_yticks(range(n + len(footer)), labels, family=_MONOSPACE, fontsize=9)
    ax.set_ylim(n + len(footer) - 0.5, -0.5)
    ax.set_xlim(-0.5, hops - 0.5)
    for label, row in zip(ax.get_yticklabels(), rows):
        if row.text == EMPTY_SLOTS:
            label.set_color("0.5")
    for label in ax.get_yticklabels()[n:]:
        label.set_fontweight("bold")
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.tick_params(length=0)
    return ax


# ---------------------------------------------------------------------------- learning curve


def plot_learning_curve(model, *, ax=None):
    """Training loss, training accuracy and validation score of each epoch of a fit.

    Draws ``loss_curve_`` on ``ax`` and, on a twin axis from 0 to 1, the training accuracy
    (``train_accuracy_curve_``, MemN2N) and the validation scores (``validation_scores_``,
    with early stopping or validation data; they belong to the last epochs, after
    MemN2N's linear start). Shades the linear-start epochs, marks the best validation
    epoch and says when training stopped early.

    Parameters
    ----------
    model : fitted MemN2NRanker, SupervisedEmbeddingRanker, MemNNQA, or a pipeline ending
        in one
        Anything with ``loss_curve_``.
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes
        The loss axis. The accuracy axis is its twin, the other Axes of ``ax.figure``
        made here; the legend of ``ax`` names the lines of both.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from irdialog import MemN2NRanker
    >>> from irdialog.plot import plot_learning_curve
    >>> model = MemN2NRanker(epochs=3, embedding_dim=8, random_state=0)
    >>> model = model.fit(["hi", "a table please", "bye"], ["hello", "where", "bye"])
    >>> ax = plot_learning_curve(model, ax=Figure().add_subplot())
    >>> ax.get_lines()[0].get_ydata().tolist() == model.loss_curve_
    True
    >>> ax.get_title()
    'MemN2NRanker: 3 epochs'
    """
    _require_matplotlib()
    from matplotlib.ticker import MaxNLocator

    est = _final_estimator(model)
    losses = getattr(est, "loss_curve_", None)
    if losses is None:
        raise ValueError(
            f"plot_learning_curve needs a fitted model with loss_curve_ (MemN2NRanker, "
            f"SupervisedEmbeddingRanker, MemNNQA); {type(est).__name__} has none."
        )
    n = len(losses)
    epochs = np.arange(1, n + 1)
    ax = _axes(ax, (6.4, 3.8))
    ax.plot(epochs, losses, color="C0", marker="." if n < 40 else None, label="training loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    linear = int(getattr(est, "linear_start", 0) or 0)
    if linear:
        ax.axvspan(0.5, linear + 0.5, color="0.9", zorder=0, label="linear start")
    acc = ax.twinx()
    acc.set_ylim(0.0, 1.05)
    acc.set_ylabel("accuracy")
    train_acc = getattr(est, "train_accuracy_curve_", None)
    if train_acc:
        acc.plot(epochs, train_acc, color="C1", ls="--", label="training accuracy (in epoch)")
    val = getattr(est, "validation_scores_", None)
    if val:
        v_epochs = epochs[n - len(val) :]
        acc.plot(v_epochs, val, color="C2", marker=".", label="validation score")
        best = int(np.argmax(val))
        acc.axvline(v_epochs[best], color="C2", ls=":", lw=1)
        right = v_epochs[best] > (n + 1) / 2  # the note on the side with room
        acc.annotate(
            f"best {val[best]:.3f} (epoch {v_epochs[best]})", (v_epochs[best], val[best]),
            xytext=(-4 if right else 4, -12), textcoords="offset points", color="C2",
            fontsize=8, ha="right" if right else "left",
        )  # fmt: skip
    planned = linear + int(getattr(est, "epochs", n))
    title = f"{type(est).__name__}: {n} epoch{'s' if n != 1 else ''}"
    if n < planned:
        title += f" (stopped early, of {planned})"
    ax.set_title(title)
    handles = [h for a in (ax, acc) for h in a.get_legend_handles_labels()[0]]
    ax.legend(handles=handles, loc="center right", fontsize=8)
    ax.set_xlim(0.5, n + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return ax


# ---------------------------------------------------------------------------- bench


def _load_result(result) -> dict:
    if isinstance(result, dict):
        return result
    return json.loads(Path(result).read_text(encoding="utf-8"))


def _sources(paper) -> dict:
    """The paper's figures of a row: {source: value}, source "" for the suite's paper."""
    return dict(paper) if isinstance(paper, dict) else {"": paper}


def bench_series(results, metric=None):
    """The numbers :func:`plot_bench` draws, from bench results of one suite.

    Parameters
    ----------
    results : dict, path-like, or a list of them
        Results of ``irdialog bench`` (the JSON it writes with ``--output``), all of one
        suite. Results of the same model (and options) are one series, so the three Movie
        Dialog task files of a model join up.
    metric : str, default=None
        A metric of the long rows (:func:`irdialog.bench.result_rows`); None: the suite's
        main one (its declaration's ``metric``: dialog bAbI ``"per_response"``, bAbI QA
        ``"accuracy"``), or every row where the suite's rows each carry their own metric
        (Movie Dialog, Ubuntu: leave None). Another metric, such as ``"per_dialog"`` or
        ``"supporting_accuracy"``, may have no paper figure.

    Returns
    -------
    suite : str
    metric : str
    labels : list of str
        The x positions, each row's as its suite declares it (``plot_label``): tasks
        (``T1``, ``"T1\\nOOV"``, ...) or metrics (Ubuntu); ``"mean"`` last where the results
        hold the mean of the metric over the tasks (bAbI QA's accuracy, for which the
        papers give a figure even where they give none per task).
    series : list of dict
        ``{"name", "model", "kind" ("ours" or "paper"), "values", "std", "seeds"}`` (and
        the paper's ``"source"``, ``""`` for the paper of the suite) with one value (NaN
        when missing) per label; ``std`` (over seeds) is None for one seed and for the
        paper.

    Examples
    --------
    >>> from irdialog.plot import bench_series
    >>> row = {"task": 1, "split": "tst", "per_response": 99.9, "per_dialog": 99.0,
    ...        "paper_per_response": 99.9, "paper_per_dialog": 99.6}
    >>> result = {"suite": "dialog-babi", "model": "memn2n", "seeds": [0], "rows": [row]}
    >>> suite, metric, labels, series = bench_series(result)
    >>> labels, [(s["name"], s["kind"], s["values"]) for s in series]
    (['T1'], [('memn2n', 'ours', [99.9]), ('memn2n', 'paper', [99.9])])
    """
    from .bench import SUITES

    if isinstance(results, (dict, str, Path)):
        results = [results]
    results = [_load_result(r) for r in results]
    if not results:
        raise ValueError("bench_series needs at least one result.")
    suites = {r["suite"] for r in results}
    if len(suites) != 1:
        raise ValueError(f"results of one suite are plotted together, got {sorted(suites)}")
    name = suites.pop()
    suite = SUITES.get(name)
    if suite is None:
        raise ValueError(f"unknown bench suite {name!r}; known: {sorted(SUITES)}")
    if suite.metric is None and metric is not None:
        raise ValueError(f"{name} rows have one value each: leave metric=None, got {metric!r}")
    metric = suite.metric if metric is None else metric
    labels: list[str] = []
    ours: dict[str, dict] = {}
    papers: dict[tuple, dict] = {}
    for r in results:
        series_name = suite.model_label(r)
        seeds = len(r.get("seeds", [0]))
        entry = ours.setdefault(series_name, {"values": {}, "std": {}, "seeds": seeds})
        rows = suite.rows(r)
        per_task = [row for row in rows if row.task != "all"]
        if metric is not None:
            per_task = [row for row in per_task if row.metric == metric]
            if not per_task:
                known = sorted({row.metric for row in rows if row.task != "all"})
                raise ValueError(f"{name} rows have no {metric!r}; metrics: {known}")
        # The mean over tasks, where the result has it (bAbI QA's Table 3 gives it even
        # where it gives no figure per task).
        mean = [row for row in rows if row.task == "all" and row.metric == f"mean_{metric}"]
        for row, label in [(row, suite.row_label(row)) for row in per_task] + [
            (row, "mean") for row in mean
        ]:
            if label not in labels:
                labels.append(label)
            entry["values"][label] = row.value
            if seeds > 1 and row.std is not None:
                entry["std"][label] = row.std
            for source, value in _sources(row.paper).items():
                if value is not None:
                    papers.setdefault((series_name, source), {})[label] = value
    if "mean" in labels:  # last, after every task
        labels.remove("mean")
        labels.append("mean")
    series = []
    for series_name, entry in ours.items():
        vals = entry["values"]
        std = entry["std"]
        series.append(
            {
                "name": series_name,
                "model": series_name,
                "kind": "ours",
                "values": [vals.get(lb, np.nan) for lb in labels],
                "std": [std.get(lb, 0.0) for lb in labels] if std else None,
                "seeds": entry["seeds"],
            }
        )
        for (pname, source), vals in papers.items():
            if pname == series_name:
                series.append(
                    {
                        "name": series_name + (f" ({source})" if source else ""),
                        "model": series_name,
                        "source": source,
                        "kind": "paper",
                        "values": [vals.get(lb, np.nan) for lb in labels],
                        "std": None,
                        "seeds": None,
                    }
                )
    return name, "value" if metric is None else metric, labels, series


def plot_bench(result, *, metric=None, ax=None, title=None):
    """Our rows of a bench result next to the paper's, per task, as grouped bars.

    Each model gives a bar of ours (with the standard deviation over seeds as an error bar
    when the result has several seeds) and, hatched in a lighter shade of its colour, a bar
    of the paper's figure (one per source when a row cites several, as Ubuntu's). Missing
    figures leave a gap.

    Parameters
    ----------
    result : dict, path-like, or a list of them
        Results of ``irdialog bench`` (``benchmarks/results/*.json``), all of one suite:
        dialog bAbI (per task and OOV split), bAbI QA (per task), Movie Dialog (per task and
        response), Ubuntu (per R@k). See :func:`bench_series`.
    metric : str, default=None
        Which column of the rows (see :func:`bench_series`).
    ax : matplotlib Axes, default=None
    title : str, default=None
        None: the suite, the models and the seeds.

    Returns
    -------
    ax : matplotlib Axes
        ``ax.containers`` holds one BarContainer per series (ours, paper, ...), each with
        one bar per task (label).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from irdialog.plot import plot_bench
    >>> rows = [{"task": t, "n": 1000, "accuracy": a, "paper": p}
    ...         for t, a, p in [(1, 100.0, 100.0), (2, 97.3, 100.0), (3, 21.8, 20.0)]]
    >>> result = {"suite": "babi-qa", "model": "memnn", "seeds": [0], "rows": rows}
    >>> ax = plot_bench(result, ax=Figure().add_subplot())
    >>> [[float(bar.get_height()) for bar in bars] for bars in ax.containers]
    [[100.0, 97.3, 21.8], [100.0, 100.0, 20.0]]
    """
    _require_matplotlib()
    from matplotlib.colors import to_rgba

    from .bench import SUITES

    suite, metric, labels, series = bench_series(result, metric)
    n_bars = len(series)
    fig_width = max(5.0, 0.16 * n_bars * len(labels) + 1.8)
    ax = _axes(ax, (fig_width, 3.8))
    ncols = max(1, min(n_bars, int(fig_width // 2.6)))
    headroom = 1.06 + 0.075 * -(-n_bars // ncols)  # for the rows of the legend
    x = np.arange(len(labels))
    width = 0.8 / n_bars
    models = list(dict.fromkeys(s["model"] for s in series))
    for i, s in enumerate(series):
        model = s["model"]
        color = f"C{models.index(model) % 10}"
        offset = (i - (n_bars - 1) / 2) * width
        values = np.asarray(s["values"], dtype=float)
        if s["kind"] == "ours":
            seeds = f", {s['seeds']} seeds ± sd" if s["std"] is not None else ""
            ax.bar(
                x + offset, values, width, color=color, label=f"{model} (ours{seeds})",
                yerr=s["std"], capsize=2 if s["std"] is not None else 0,
                error_kw={"elinewidth": 0.8},
            )  # fmt: skip
        else:
            label = f"paper: {s['source']}" if s["source"] else "paper"
            ax.bar(
                x + offset, values, width, facecolor=to_rgba(color, 0.35), edgecolor=color,
                hatch="//", lw=0.6, label=f"{model} ({label})",
            )  # fmt: skip
    ax.set_xticks(x, labels)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel(SUITES[suite].metric_names.get(metric, "%"))
    top = max([np.nanmax(s["values"]) for s in series if np.isfinite(s["values"]).any()] + [1])
    if SUITES[suite].full_scale:  # accuracies: 0-100, room for the legend above 100
        ax.set_ylim(0, max(100.0, top) * headroom)
        ax.set_yticks(range(0, 101, 20))
    else:
        ax.set_ylim(0, top * (headroom + 0.05))
    if title is None:
        title = f"{suite}: {', '.join(models)} against the paper"
    ax.set_title(title)
    ax.legend(fontsize=8, ncols=ncols, loc="upper left", framealpha=0.9)
    ax.grid(axis="y", color="0.9", zorder=0)
    ax.set_axisbelow(True)
    return ax


# ---------------------------------------------------------------------------- files


def save_plot(path, plot, *args, dpi=100, **kwargs):
    """Draw ``plot(*args, **kwargs)`` on a new figure made outside pyplot and save it.

    Parameters
    ----------
    path : path-like
        The image file; its suffix picks the format (``.png``, ``.svg``, ``.pdf``, ...).
    plot : callable
        One of this module's functions (anything drawing on a new figure when ``ax`` is
        None and returning its Axes).
    *args, **kwargs
        Passed to ``plot``.
    dpi : int, default=100

    Returns
    -------
    path : Path
    """
    _require_matplotlib()
    token = _USE_PYPLOT.set(False)  # the new figures are made without pyplot
    try:
        ax = plot(*args, **kwargs)
    finally:
        _USE_PYPLOT.reset(token)
    path = Path(path)
    ax.figure.savefig(path, dpi=dpi)
    return path


def check_plot_file(path) -> Path:
    """A file :func:`save_plot` can write, checked before any work: matplotlib is
    installed, the folder exists and the suffix names a format matplotlib writes.

    Raises
    ------
    ImportError
        Without matplotlib, naming the extra to install.
    ValueError
        Otherwise.
    """
    _require_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(path)
    formats = FigureCanvasBase.get_supported_filetypes()
    if path.suffix.lstrip(".").lower() not in formats:
        raise ValueError(f"{path}: the suffix must be one of {', '.join(sorted(formats))}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{path}: the directory {folder} does not exist")
    return path


def _plot_argument(text: str) -> Path:
    """``--plot FILE``, checked when the command line is parsed (before any training)."""
    try:
        return check_plot_file(text)
    except (ImportError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
