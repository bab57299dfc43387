"""The one run of a declared suite: per task, every point of a model's selection fitted on
the training split, the best on the dev split kept, the scored splits scored (or one model
fitted on every task's training split, scored on each: a joint run); the model behind one
task's row for ``irdialog train``.

A suite that declares how its data is read (``Suite.load``) and scored (``Suite.score``)
runs here; :class:`~irdialog.bench._suite.Suite` gives it its ``run`` and ``train``.
"""

from __future__ import annotations

import time
from functools import partial

from tqdm.auto import tqdm

from ._harness import reseed, round_metric

# The split a ``heldout`` run scores where the suite carves it from the training split
# (``Suite.holdout``).
HELDOUT_SPLIT = "valid"


def _build(suite, spec, train, point):
    inputs = (train,) if suite.build_inputs is None else suite.build_inputs(train)
    return spec.build(*inputs, **point)


def _fit(suite, spec, model, train) -> None:
    if suite.fit is not None:
        suite.fit(model, train, spec)
    else:
        model.fit(train.X, train.y, **(spec.fit_params(train) if spec.fit_params else {}))


def check_model_and_tasks(suite, model: str, tasks) -> list:
    """``tasks`` of ``suite`` as it names them; an error naming an unknown model or task.

    Examples
    --------
    >>> from irdialog.bench import SUITES
    >>> from irdialog.bench._runner import check_model_and_tasks
    >>> check_model_and_tasks(SUITES["dialog-babi"], "tfidf", ["1", 6])
    [1, 6]
    >>> check_model_and_tasks(SUITES["insuranceqa"], "bm25", None)
    ['en']
    >>> check_model_and_tasks(SUITES["babi-qa"], "ngram", [21])
    Traceback (most recent call last):
    ...
    ValueError: bAbI QA tasks are 1-20, got [21]
    """
    if model not in suite.models:
        raise ValueError(
            f"unknown {suite.name} model {model!r}; choose from {sorted(suite.models)}"
        )
    if suite.tasks is None:
        return [suite.task_name]
    tasks = [int(t) for t in tasks]
    unknown = set(tasks) - set(suite.tasks)
    if unknown:
        raise ValueError(
            f"{suite.title} tasks are {suite.tasks[0]}-{suite.tasks[-1]}, got {sorted(unknown)}"
        )
    return tasks


def _task_data(suite, task, splits, data_home, options) -> dict:
    """``{split: data}`` of ``task`` (``options``: the suite's own, for its ``load``)."""
    return {split: suite.load(task, split, data_home, **options) for split in splits}


def _carved_data(suite, task, data_home, options, fraction) -> dict:
    """The training split of ``task`` cut by the suite's ``holdout``: its fit part, and its
    last ``fraction`` as :data:`HELDOUT_SPLIT`; nothing else is loaded."""
    train = suite.load(task, suite.train_split, data_home, **options)
    return dict(zip((suite.train_split, HELDOUT_SPLIT), suite.holdout(train, fraction)))


def _scorer(suite, ties):
    """``score(model, data)`` of the suite under the tie rule ``ties`` (None: the suite's
    default, ``"expected"`` where its score takes a rule)."""
    if ties is not None and not suite.ties:
        raise ValueError(f"{suite.name}: its rows take no tie rule, got ties={ties!r}")
    if not suite.ties:
        return suite.score
    return partial(suite.score, ties="expected" if ties is None else ties)


def fit_task(suite, spec, presets, task, data, seed, overrides, bar=None, ties=None):
    """Fit every point of ``spec``'s selection for ``task`` on the training split and keep
    the best on the dev split (the only point where the suite has none): ``(fitted model,
    chosen)``, ``chosen`` as a run's ``chosen`` entry."""
    score_of = _scorer(suite, ties)
    points = spec.selection.points(suite.name, task, presets)
    points = [{**point, **overrides} for point in points]
    train = data[suite.train_split]
    dev = data.get(suite.dev_split) if suite.dev_split else None
    if dev is None and len(points) > 1:
        raise ValueError(f"{suite.name}: {len(points)} points to choose from and no dev split")
    best = None
    for point in points:
        fitted = reseed(_build(suite, spec, train, point), seed)
        _fit(suite, spec, fitted, train)
        score = None if dev is None else score_of(fitted, dev)[suite.metric]
        if best is None or score > best[0]:
            best = (score, point, fitted)
        if bar is not None:
            bar.update()
    score, point, fitted = best
    record = spec.selection.record(suite.name, task, presets)
    selection = record if dev is None else {
        f"{suite.dev_split}_{suite.metric}": round_metric(score), **record
    }  # fmt: skip
    chosen = {"task": task} if suite.tasks is not None else {}
    return fitted, {**chosen, "params": dict(point), "selection": selection}


def _paper_cells(suite, spec, task, split, heldout, joint=False) -> dict:
    """``{metric: the paper's figure}`` of a row (empty when held out or beyond the paper)."""
    column = spec.joint_paper if joint else spec.paper
    if heldout or column is None or suite.paper is None:
        return {}
    return suite.paper(task, split, column)


def _rows(suite, task, split, scores: dict, paper: dict) -> list[dict]:
    """The rows of one scored split, in the suite's layout: one row with a column per
    metric (``"wide"``), one row per metric (``"long"``), or one row without its split,
    the paper's figure of the main metric as ``paper`` (``"task"``)."""
    if suite.layout == "task":
        main = suite.metric
        rest = {k: v for k, v in scores.items() if k not in ("n", main)}
        return [{"task": task, "n": scores["n"], main: scores[main], "paper": paper.get(main),
                 **rest}]  # fmt: skip
    if suite.layout == "long":
        return [
            {"task": task, "split": split, "metric": m, "n": scores["n"], "paper": paper.get(m),
             "value": scores[m]}
            for m in suite.metrics
        ]  # fmt: skip
    papers = {f"paper_{m}": paper.get(m) for m in suite.metrics}
    return [{"task": task, "split": split, **scores, **papers}]


def run_declared(
    suite, model: str, *, tasks=None, data_home=None, progress: bool = True, seed: int = 0,
    heldout: bool = False, overrides: dict | None = None, ties: str | None = None,
    joint: bool = False, **options,
) -> dict:  # fmt: skip
    """One seed's run of a declared suite (see :class:`~irdialog.bench._suite.Suite`):
    ``{"suite", "model", "options", "chosen", "rows", "seconds"}``, and ``summary`` and
    ``protocol`` when the suite describes them. ``joint``: one model fitted on the training
    splits of all ``tasks`` at once (joined by the suite's ``join``), its point the
    selection's of no task, scored on each task. ``options``: the suite's own
    (``Suite.options``), passed to its ``load`` and recorded after the tasks. Every data
    file is loaded before the first fit, so a missing file fails at once.

    Examples
    --------
    >>> from irdialog.bench import SUITES
    >>> from irdialog.bench._runner import run_declared
    >>> run = run_declared(SUITES["dialog-babi"], "tfidf", tasks=[1], progress=False)
    >>> run["chosen"][0]["params"], [(r["split"], r["paper_per_response"]) for r in run["rows"]]
    ({'use_history': False}, [('tst', 5.6), ('tst-OOV', 5.8)])
    """
    tasks = check_model_and_tasks(suite, model, suite.tasks if tasks is None else tasks)
    if joint and suite.join is None:
        raise ValueError(f"{suite.name}: its models are fitted one task at a time (joint=True)")
    spec = suite.models[model]
    overrides = dict(overrides or {})
    score_of = _scorer(suite, ties)
    if suite.ties and ties is None:
        ties = "expected"
    presets = spec.selection.presets(suite.name)
    start = time.perf_counter()
    carved = heldout and suite.holdout is not None
    if heldout:
        scored = [HELDOUT_SPLIT if carved else suite.dev_split]
    else:
        scored = suite.scored_splits(data_home)
    cells = suite.cells
    fitting = [s for s in (suite.train_split, suite.dev_split) if s]
    data = {}
    for task in tasks:
        if carved:
            data[task] = _carved_data(suite, task, data_home, options, spec.selection.fraction)
            continue
        kept = [s for s in scored if heldout or cells is None or (task, s) in cells]
        data[task] = _task_data(suite, task, dict.fromkeys(fitting + kept), data_home, options)
    fits = [None] if joint else tasks
    n_points = sum(len(spec.selection.points(suite.name, t, presets)) for t in fits)
    bar = tqdm(total=n_points + 2 * len(tasks), desc=f"{suite.name} {model}",
               disable=not progress)  # fmt: skip
    if joint:
        joined = {split: suite.join([data[t][split] for t in tasks]) for split in fitting}
        fitted, entry = fit_task(suite, spec, presets, None, joined, seed, overrides, bar, ties)
    rows, chosen = [], []
    for task in tasks:
        if joint:
            entry = {**entry, "task": task}
        else:
            fitted, entry = fit_task(
                suite, spec, presets, task, data[task], seed, overrides, bar, ties
            )
        chosen.append(entry)
        for split in scored:
            if heldout or cells is None or (task, split) in cells:
                scores = score_of(fitted, data[task][split])
                if spec.extras is not None:
                    scores.update(spec.extras(fitted, data[task][split]))
                paper = _paper_cells(suite, spec, task, split, heldout, joint)
                rows += _rows(suite, task, split, scores, paper)
        bar.update(2)
    bar.close()
    if not heldout and cells is not None:
        rows.sort(key=lambda r: cells.index((r["task"], r["split"])))
    recorded = {"tasks": tasks} if suite.tasks is not None else {}
    recorded.update(options)
    if suite.join is not None:
        recorded["joint"] = joint
    if ties is not None:
        recorded["ties"] = ties
    if heldout:
        recorded["heldout"] = True
    if overrides:
        recorded["overrides"] = overrides
    run = {"suite": suite.name, "model": model, "options": recorded, "chosen": chosen,
           "rows": rows}  # fmt: skip
    if suite.run_summary is not None:
        run["summary"] = suite.run_summary(rows, spec, recorded)
    if suite.protocol is not None:
        run["protocol"] = suite.protocol(spec, fitted, data[tasks[-1]])
    run["seconds"] = time.perf_counter() - start
    return run


def train_declared(
    suite, model: str, task, data_home=None, seed: int = 0, overrides=None, ties=None,
    **options,
):  # fmt: skip
    """The model behind one task's row of :func:`run_declared`, fitted the same way:
    ``(fitted model, chosen)``; ``options``: the suite's own, as for the run."""
    [task] = check_model_and_tasks(suite, model, [task])
    spec = suite.models[model]
    presets = spec.selection.presets(suite.name)
    fitting = [s for s in (suite.train_split, suite.dev_split) if s]
    data = _task_data(suite, task, fitting, data_home, options)
    return fit_task(suite, spec, presets, task, data, seed, dict(overrides or {}), ties=ties)
