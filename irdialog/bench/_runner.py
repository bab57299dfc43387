"""The one run of a declared suite: per task, every point of a model's selection fitted on
the training split, the best on the dev split kept (refitted where the suite says), the
scored splits scored; a joint run's one model for every task, scored on each; the model
behind one task's row for ``irdialog train``.

A suite that declares how its data is read (``Suite.load``) and scored (``Suite.score``)
runs here; :class:`~irdialog.bench._suite.Suite` gives it its ``run`` and ``train``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

import numpy as np
from tqdm.auto import tqdm

from ._harness import reseed, round_metric

# The split a ``heldout`` run scores where the suite carves it from the training split
# (``Suite.holdout``).
HELDOUT_SPLIT = "valid"


def _build(suite, spec, train, point):
    """``spec``'s estimator at ``point`` (``build`` given ``Suite.build_inputs``)."""
    inputs = (train,) if suite.build_inputs is None else suite.build_inputs(train)
    return spec.build(*inputs, **point)


def _fitted(suite, spec, point, train, seed):
    """``spec``'s model at ``point`` and ``seed``, fitted on the split ``train``."""
    model = reseed(_build(suite, spec, train, point), seed)
    if suite.fit is not None:
        suite.fit(model, train, spec)
    else:
        model.fit(train.X, train.y, **(spec.fit_params(train) if spec.fit_params else {}))
    return model


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
    covered = suite.models[model].selection.tasks()
    if covered is not None and not set(tasks) <= set(covered):
        raise ValueError(
            f"model {model!r} applies to {suite.title} tasks {covered}, not "
            f"{sorted(set(tasks) - set(covered))}"
        )
    return tasks


def _check_joint(suite, model: str, task) -> None:
    """An error naming what a joint run of ``model`` lacks."""
    if suite.join is None:
        raise ValueError(
            f"{suite.title} has no joint runs: its models are fitted one task at a time"
        )
    if task is not None:
        raise ValueError(
            f"a joint run covers tasks {suite.tasks[0]}-{suite.tasks[-1]}: give --joint or "
            "--task, not both"
        )
    joint = sorted(m for m, s in suite.models.items() if s.selection.has_joint(suite.name))
    if model in suite.models and model not in joint:
        raise ValueError(f"model {model!r} has no joint run; joint models: {joint}")


def _bound(suite, own: dict):
    """``suite`` with the fields its ``bind`` gives for its own options ``own``."""
    if suite.bind is None:
        if own:
            raise TypeError(f"{suite.name} takes no option {', '.join(own)}")
        return suite
    return replace(suite, **suite.bind(**own))


def _task_data(suite, task, splits, data_home) -> dict:
    return {split: suite.load(task, split, data_home) for split in splits}


def _carved_data(suite, task, data_home, fraction) -> dict:
    """The training split of ``task`` cut by the suite's ``holdout``: its fit part, and its
    last ``fraction`` as :data:`HELDOUT_SPLIT`; nothing else is loaded."""
    train = suite.load(task, suite.train_split, data_home)
    return dict(zip((suite.train_split, HELDOUT_SPLIT), suite.holdout(train, fraction)))


def _scorer(suite, ties):
    """``score(model, data)`` of the suite under the tie rule ``ties`` (None: the suite's
    default, ``"expected"`` where its score takes a rule)."""
    if ties is not None and not suite.ties:
        raise ValueError(f"{suite.name}: its rows take no tie rule, got ties={ties!r}")
    if not suite.ties:
        return suite.score
    return partial(suite.score, ties="expected" if ties is None else ties)


def _metric(suite, task) -> str:
    """The metric that chooses among ``task``'s points."""
    return suite.metric if suite.task_metric is None else suite.task_metric(task)


def _points(suite, spec, presets, task, overrides) -> list[dict]:
    return [{**p, **overrides} for p in spec.selection.points(suite.name, task, presets)]


def _sizes(spec, train, dev) -> dict:
    """The rows a held-out selection fitted its points on and held out."""
    if spec.selection.kind != "heldout":
        return {}
    return {"n_fit": len(train.X), "n_heldout": len(dev.X)}


def _sweep(suite, spec, point, train, dev, seed, score_of, metric, sweep) -> dict:
    """Diagnostics, never a choice: the dev score of ``point`` with each parameter of
    ``sweep`` set to each of its values in turn, ``{name: {value: score}}``."""
    return {
        name: {
            str(value): round_metric(
                score_of(_fitted(suite, spec, {**point, name: value}, train, seed), dev)[metric]
            )
            for value in values
        }
        for name, values in sweep.items()
    }


def fit_task(suite, spec, presets, task, data, seed, overrides, bar=None, ties=None,
             sweep=None):  # fmt: skip
    """Fit every point of ``spec``'s selection for ``task`` on the training split and keep
    the best on the dev split (the only point where the suite has none), refitted on the
    suite's ``refit`` split where it has one: ``(fitted model, chosen)``, ``chosen`` as a
    run's ``chosen`` entry (a held-out selection's with every point's score; ``sweep``:
    see :func:`run_declared`)."""
    score_of, metric = _scorer(suite, ties), _metric(suite, task)
    points = _points(suite, spec, presets, task, overrides)
    train = data[suite.train_split]
    dev = data.get(suite.dev_split) if suite.dev_split else None
    if dev is None and (len(points) > 1 or sweep):
        raise ValueError(f"{suite.name}: {len(points)} points or a sweep, and no dev split")
    if sweep:  # a parameter the model lacks fails before the grid is fitted
        unknown = sorted(set(sweep) - set(_build(suite, spec, train, points[0]).get_params()))
        if unknown:
            raise ValueError(f"the model has no parameter {', '.join(unknown)} to sweep")
    best, grid = None, []
    for point in points:
        fitted = _fitted(suite, spec, point, train, seed)
        score = None if dev is None else score_of(fitted, dev)[metric]
        grid.append({**point, f"{suite.dev_split}_{metric}": round_metric(score)})
        if best is None or score > best[0]:
            best = (score, point, fitted)
        if bar is not None:
            bar.update()
    score, point, fitted = best
    record = spec.selection.record(suite.name, task, presets)
    selection = record if dev is None else {
        f"{suite.dev_split}_{metric}": round_metric(score), **record
    }  # fmt: skip
    if spec.selection.kind == "heldout":
        selection["grid"] = grid
    if sweep:
        sweeps = _sweep(suite, spec, point, train, dev, seed, score_of, metric, sweep)
        selection[f"{suite.dev_split}_sweep"] = sweeps
    selection.update(_sizes(spec, train, dev))
    if suite.refit is not None:
        fitted = _fitted(suite, spec, point, data[suite.refit], seed)
    chosen = {"task": task} if suite.tasks is not None else {}
    return fitted, {**chosen, "params": dict(point), "selection": selection}


def fit_joint(suite, spec, presets, data, seed, overrides, bar=None, ties=None):
    """One model for every task of ``data`` (``{task: splits}``): each point of the joint
    grid fitted on the tasks' training splits together (``Suite.join``), the best by the
    mean over the tasks of its dev score divided by the grid's best on that task, then
    fitted on the tasks' ``refit`` (else training) splits together; one point is fitted
    once, without the dev scores. ``(fitted model, chosen)``, a ``chosen`` entry per task."""
    score_of = _scorer(suite, ties)
    points = _points(suite, spec, presets, None, overrides)
    keys = {t: f"task{t}_{suite.dev_split}_{_metric(suite, t)}" for t in data}
    grid = [dict(point) for point in points]
    mean = f"{suite.dev_split}_normalised_mean"
    if len(points) > 1:
        train = suite.join([splits[suite.train_split] for splits in data.values()])
        for point, record in zip(points, grid):
            fitted = _fitted(suite, spec, point, train, seed)
            for t, splits in data.items():
                record[keys[t]] = round_metric(
                    score_of(fitted, splits[suite.dev_split])[_metric(suite, t)]
                )
            if bar is not None:
                bar.update()
        tops = {key: max(r[key] for r in grid) or 1.0 for key in keys.values()}
        for record in grid:
            record[mean] = round(float(np.mean([record[k] / tops[k] for k in keys.values()])), 4)
    best = int(np.argmax([r.get(mean, 0.0) for r in grid]))  # the first of equals
    point = points[best]
    final = suite.join([splits[suite.refit or suite.train_split] for splits in data.values()])
    fitted = _fitted(suite, spec, point, final, seed)
    chosen = []
    for t, splits in data.items():
        selection = {}
        if len(points) > 1:
            selection[f"{suite.dev_split}_{_metric(suite, t)}"] = grid[best][keys[t]]
        selection.update(spec.selection.record(suite.name, None, presets))
        if spec.selection.kind == "heldout":
            selection.update(joint=True, grid=grid)
            selection.update(_sizes(spec, splits[suite.train_split], splits[suite.dev_split]))
        chosen.append({"task": t, "params": dict(point), "selection": selection})
    return fitted, chosen


def _paper_cells(suite, spec, task, split, heldout, joint=False) -> dict:
    """``{metric: the paper's figure}`` of a row (empty when held out or beyond the paper)."""
    column = spec.joint_paper if joint else spec.paper
    if heldout or column is None or suite.paper is None:
        return {}
    return suite.paper(task, split, column)


def _rows(suite, task, split, scores: dict, paper: dict) -> list[dict]:
    """The rows of one scored split, in the suite's layout: one row with a column per
    metric (``"wide"``), one row per metric the scores give (``"long"``, then those of the
    scores' ``parts``), or one row without its split, the paper's figure of the main metric
    as ``paper`` (``"task"``)."""
    if suite.layout == "task":
        main = suite.metric
        rest = {k: v for k, v in scores.items() if k not in ("n", main)}
        return [{"task": task, "n": scores["n"], main: scores[main], "paper": paper.get(main),
                 **rest}]  # fmt: skip
    if suite.layout == "long":
        parts = [({}, scores, paper), *((keys, part, {}) for keys, part in scores.get("parts", ()))]
        return [
            {"task": task, "split": split, "metric": m, **keys, "n": part["n"],
             "paper": figures.get(m), "value": part[m]}
            for keys, part, figures in parts
            for m in suite.metrics
            if m in part
        ]  # fmt: skip
    papers = {f"paper_{m}": paper.get(m) for m in suite.metrics}
    return [{"task": task, "split": split, **scores, **papers}]


def _fitting(suite) -> list[str]:
    """The splits a task's model is chosen and fitted on."""
    return [s for s in (suite.train_split, suite.dev_split, suite.refit) if s]


def run_declared(
    suite, model: str, *, tasks=None, task=None, data_home=None, progress: bool = True,
    seed: int = 0, heldout: bool = False, overrides: dict | None = None,
    ties: str | None = None, joint: bool = False, sweep: dict | None = None, **own,
) -> dict:  # fmt: skip
    """One seed's run of a declared suite (see :class:`~irdialog.bench._suite.Suite`):
    ``{"suite", "model", "options", "chosen", "rows", "seconds"}``, and ``summary``,
    ``protocol`` and ``resources`` when the suite describes them. Every data file is loaded
    before the first fit, so a missing file fails at once.

    ``task`` is the one task of a ``one_task`` suite; ``joint`` fits one model for every
    task (see ``Suite.join`` and ``Suite.joint_choice``), scored on each; ``sweep``
    (``{parameter: [values]}``, diagnostics only) records the dev score of the chosen point
    with each parameter set to each value, never used for the choice; ``own`` are the
    suite's own options (``Suite.bind``: they may replace its ``load`` or its ``scored``
    splits), recorded after the tasks.

    Examples
    --------
    >>> from irdialog.bench import SUITES
    >>> from irdialog.bench._runner import run_declared
    >>> run = run_declared(SUITES["dialog-babi"], "tfidf", tasks=[1], progress=False)
    >>> run["chosen"][0]["params"], [(r["split"], r["paper_per_response"]) for r in run["rows"]]
    ({'use_history': False}, [('tst', 5.6), ('tst-OOV', 5.8)])
    """
    suite = _bound(suite, own)
    if joint:
        _check_joint(suite, model, task)
        if sweep:
            raise ValueError("sweep is not available with a joint run")
    elif suite.one_task and task is None:
        joint_run = " or a joint run (--joint)" if suite.join else ""
        raise ValueError(f"give a task (--task){joint_run}")
    if task is not None:
        tasks = [task]
    tasks = check_model_and_tasks(suite, model, suite.tasks if tasks is None else tasks)
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
    data = {}
    for t in tasks:
        if carved:
            data[t] = _carved_data(suite, t, data_home, spec.selection.fraction)
            continue
        kept = [s for s in scored if heldout or cells is None or (t, s) in cells]
        data[t] = _task_data(suite, t, dict.fromkeys(_fitting(suite) + kept), data_home)
    by_mean = joint and suite.joint_choice == "normalised_mean"
    fits = [None] if joint else tasks
    n_points = sum(len(spec.selection.points(suite.name, t, presets)) for t in fits)
    bar = tqdm(total=n_points + 2 * len(tasks), desc=f"{suite.name} {model}",
               disable=not progress)  # fmt: skip
    rows, chosen, fitted = [], [], {}
    if by_mean:
        model_all, chosen = fit_joint(suite, spec, presets, data, seed, overrides, bar, ties)
        fitted = dict.fromkeys(tasks, model_all)
    elif joint:
        joined = {s: suite.join([data[t][s] for t in tasks]) for s in _fitting(suite)}
        model_all, entry = fit_task(suite, spec, presets, None, joined, seed, overrides, bar, ties)
        fitted = dict.fromkeys(tasks, model_all)
        chosen = [{**entry, "task": t} for t in tasks]
    for t in tasks:
        if not joint:
            fitted[t], entry = fit_task(
                suite, spec, presets, t, data[t], seed, overrides, bar, ties, sweep
            )
            chosen.append(entry)
        for split in scored:
            if heldout or cells is None or (t, split) in cells:
                scores = score_of(fitted[t], data[t][split])
                if spec.extras is not None:
                    scores.update(spec.extras(fitted[t], data[t][split]))
                paper = _paper_cells(suite, spec, t, split, heldout, joint)
                rows += _rows(suite, t, split, scores, paper)
        bar.update(2)
    bar.close()
    if not heldout and cells is not None:
        rows.sort(key=lambda r: cells.index((r["task"], r["split"])))
    options = {}
    if suite.tasks is not None and not (joint and suite.one_task):
        options["task" if suite.one_task else "tasks"] = task if suite.one_task else tasks
    if suite.join is not None:
        options["joint"] = joint
    given = {**own, "sweep": sweep, "ties": ties, "heldout": heldout, "overrides": overrides}
    options.update((k, v) for k, v in given.items() if v)
    run = {"suite": suite.name, "model": model, "options": options, "chosen": chosen,
           "rows": rows}  # fmt: skip
    if suite.run_summary is not None:
        run["summary"] = suite.run_summary(rows, spec, options)
    last = fitted[tasks[-1]]
    if suite.protocol is not None:
        context = {**({"ties": ties} if suite.ties else {}), **({"joint": True} if joint else {})}
        run["protocol"] = suite.protocol(spec, last, data if joint else data[tasks[-1]], **context)
    if suite.resources is not None:
        run["resources"] = suite.resources(spec, last, data[tasks[-1]])
    run["seconds"] = time.perf_counter() - start
    return run


def train_declared(
    suite, model: str, task, data_home=None, seed: int = 0, overrides=None, ties=None,
    **options,
):  # fmt: skip
    """The model behind one task's row of :func:`run_declared`, fitted the same way:
    ``(fitted model, chosen)``; ``options``: the suite's own, as for the run."""
    suite = _bound(suite, options)
    [task] = check_model_and_tasks(suite, model, [task])
    spec = suite.models[model]
    presets = spec.selection.presets(suite.name)
    data = _task_data(suite, task, dict.fromkeys(_fitting(suite)), data_home)
    return fit_task(suite, spec, presets, task, data, seed, dict(overrides or {}), ties=ties)
