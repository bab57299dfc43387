"""bAbI QA suite (Weston et al. 2015, Table 3): test accuracy per task, 1k training questions.

Three modes over one registry (``BABI_QA_MODELS``):

- the bench (default): fit each task's model (or one joint model) on the training file
  with its preset hyper-parameters, score the test file;
- held-out (``heldout=True``): fit on the first stories of each training file, score the
  last ``valid_fraction`` of them; the test files are never loaded. With ``overrides`` this
  is how presets are tuned (``irdialog bench babi-qa --heldout --set NAME=VALUE``);
- search (:func:`search_babi_qa`): every point of the model's grid on that same split,
  through ``GridSearchCV`` over a ``PredefinedSplit``; the best point per task becomes the
  model's preset file (``irdialog bench babi-qa --search --presets-output FILE``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from tqdm.auto import tqdm

from ..datasets import load_babi_qa
from ..embed import MemN2NRanker, MemNNQA, RecurrentReader
from ..metrics import per_response_accuracy
from ..retrieval import NGramClassifier
from ..svm import StructuredSVMQA
from ._harness import reseed, round_metric, with_spread
from ._paper import paper_table
from ._presets import load_presets

PASS_ACCURACY = 95.0  # the paper's success threshold, in %


@dataclass
class QAModelSpec:
    """How the bAbI QA suite builds a model.

    ``build(params)`` gives the estimator (at seed 0); its parameters per task come from the
    model's preset file (``task=None``: the joint model). ``fit_params(data)`` gives extra
    ``fit`` arguments (supporting facts for strongly supervised models), ``extras(model,
    data)`` extra row metrics. ``grid`` is what ``search_babi_qa`` searches, on the last
    ``valid_fraction`` of the stories of each training file.
    """

    paper_column: str | None
    build: Callable[..., object]
    fit_params: Callable[[object], dict] = lambda data: {}
    extras: Callable[[object, object], dict] | None = None
    grid: dict | None = None
    valid_fraction: float = 0.2
    # The paper's (mean accuracy %, failed tasks) where Table 3 has no per-task column,
    # keyed by ``joint`` (None: not reported).
    paper_summary: dict = field(default_factory=dict)
    # The Table 3 column of the joint (multitask) model, when it has one.
    joint_paper_column: str | None = None


def ngram_model(**params):
    """The N-gram classifier of the suite: a logistic regression over the bags."""
    return NGramClassifier(classifier=LogisticRegression(max_iter=1000)).set_params(**params)


def struct_svm_model(**params):
    """The structured SVM of the suite (up to 20 passes per stage, seeded)."""
    return StructuredSVMQA(epochs=20, random_state=0, **params)


def supporting_accuracy(model, X, supporting, *, first=False) -> float:
    """% of questions whose chosen facts are exactly the gold ones, as a set: the last
    ``max_facts`` of them when there are more, as the structured SVM is trained, or the
    first ``hops`` with ``first`` (MemNN)."""
    found = model.predict_supporting(X)
    if first:
        same = [set(f) == set(tuple(s)[: model.hops]) for f, s in zip(found, supporting)]
    else:
        k = model.max_facts
        same = [set(f) == set(tuple(s)[-k:]) for f, s in zip(found, supporting)]
    return 100.0 * float(np.mean(same))


def lstm_model(**params):
    """The weakly supervised LSTM of section 5: it reads the story and then the question
    (the last 200 words; the longest stories of tasks 3 and 5 have over 600) and picks the
    answer from its final state; Adam for up to 60 epochs, the epoch kept by early stopping
    (patience 8) on 10% of the training questions; word dropout 0.3 on the story (chosen
    against 0 and 0.5 on the held-out stories of all 20 tasks, BENCHMARKS.md)."""
    base = dict(
        cell="lstm",
        hidden_size=50,
        embedding_dim=50,
        max_length=200,
        epochs=60,
        early_stopping=True,
        n_iter_no_change=8,
        word_dropout=0.3,
        random_state=0,
    )
    return RecurrentReader(**{**base, **params})


def _memnn(column, **variant):
    """A strongly supervised MemNN column of Table 3: the base model (k = 2 hops) or its
    extensions (adaptive memory up to 10 hops, 1- to 3-grams, non-linear matching)."""
    if variant.get("adaptive_memory"):
        variant["hops"] = 10
    return QAModelSpec(
        column,
        lambda **params: MemNNQA(random_state=0, **variant, **params),
        fit_params=lambda data: {"supporting": data.supporting},
        extras=lambda model, data: {
            "supporting_accuracy": supporting_accuracy(model, data.X, data.supporting, first=True)
        },
        grid={"learning_rate": [0.01, 0.03], "margin": [0.5, 1.0]},
        joint_paper_column="memnn_am_ng_nl_multitask" if column == "memnn_am_ng_nl" else None,
    )


BABI_QA_MODELS: dict[str, QAModelSpec] = {
    "ngram": QAModelSpec(
        "ngram", ngram_model, grid={"max_df": [0.5, 1.0], "classifier__C": [0.1, 1.0]}
    ),
    "struct-svm": QAModelSpec(
        "struct_svm",
        struct_svm_model,
        fit_params=lambda data: {"supporting": data.supporting},
        extras=lambda model, data: {
            "supporting_accuracy": supporting_accuracy(model, data.X, data.supporting)
        },
        grid={"C": [1.0, 10.0]},
    ),
    # Sukhbaatar et al. (2015), PE LS RN 1k: 13.9% mean error, 11 failed; joint 12.4%
    # (no failed count is given for the joint model).
    "memn2n": QAModelSpec(
        None,
        lambda **params: MemN2NRanker(random_state=0, **params),
        valid_fraction=0.1,
        paper_summary={False: (86.1, 11), True: (87.6, None)},
    ),
    # Weston et al. (2015), Table 3: the LSTM column (mean 49%), answers only.
    "lstm": QAModelSpec(
        "lstm",
        lstm_model,
        grid={"hidden_size": [50, 100], "learning_rate": [0.001, 0.003, 0.01]},
        valid_fraction=0.1,
    ),
    "memnn": _memnn("memnn"),
    "memnn-am": _memnn("memnn_am", adaptive_memory=True),
    "memnn-am-ng": _memnn("memnn_am_ng", adaptive_memory=True, ngram_range=(1, 3)),
    "memnn-am-nl": _memnn("memnn_am_nl", adaptive_memory=True, nonlinear=True),
    "memnn-am-ng-nl": _memnn(
        "memnn_am_ng_nl", adaptive_memory=True, ngram_range=(1, 3), nonlinear=True
    ),
}


def _concat(datasets):
    # One training set over several tasks; the groups stay distinct across tasks.
    X, y, supporting, groups, offset = [], [], [], [], 0
    for d in datasets:
        X += d.X
        y += list(d.y)
        supporting += list(d.supporting)
        groups += [g + offset for g in d.groups]
        offset += max(d.groups) + 1
    return type(datasets[0])(X=X, y=y, supporting=supporting, groups=groups)


def _subset(data, rows):
    return type(data)(
        X=[data.X[i] for i in rows],
        y=[data.y[i] for i in rows],
        supporting=[data.supporting[i] for i in rows],
        groups=[data.groups[i] for i in rows],
    )


def valid_split(groups, fraction: float) -> PredefinedSplit:
    """The suite's validation split of a training file: its last ``fraction`` of stories
    (at least one) are the validation fold, the others the fit part.

    Examples
    --------
    >>> from irdialog.bench._babi_qa import valid_split
    >>> [(a.tolist(), b.tolist()) for a, b in valid_split([0, 0, 1, 2, 3, 4], 0.2).split()]
    [([0, 1, 2, 3, 4], [5])]
    """
    groups = np.asarray(groups)
    n_stories = int(groups.max()) + 1
    cut = n_stories - max(1, int(round(fraction * n_stories)))
    return PredefinedSplit(np.where(groups >= cut, 0, -1))


def _check_tasks(model, tasks):
    if model not in BABI_QA_MODELS:
        raise ValueError(f"unknown babi-qa model {model!r}; choose from {sorted(BABI_QA_MODELS)}")
    tasks = [int(t) for t in tasks]
    unknown = set(tasks) - set(range(1, 21))
    if unknown:
        raise ValueError(f"bAbI QA tasks are 1-20, got {sorted(unknown)}")
    return BABI_QA_MODELS[model], tasks


def _fit(spec, params, train, seed):
    estimator = reseed(spec.build(**params), seed)
    return estimator.fit(train.X, train.y, **spec.fit_params(train))


def train_babi_qa(model: str, task: int, data_home=None, seed: int = 0, overrides=None,
                  lang: str = "en"):  # fmt: skip
    """The single-task model :func:`bench_babi_qa` scores for one task, fitted the same way
    (its preset, on the task's train split), for ``irdialog train``.

    Returns
    -------
    fitted : estimator
    chosen : dict
        ``{"task", "params", "selection"}`` as in the bench's ``chosen``.

    Examples
    --------
    >>> from irdialog.bench import train_babi_qa
    >>> model, chosen = train_babi_qa("ngram", task=1)
    >>> from irdialog.datasets import load_babi_qa
    >>> test = load_babi_qa(1, "test")
    >>> round(100 * model.score(test.X, test.y), 1)  # the bench's row for task 1
    60.0
    """
    spec, [task] = _check_tasks(model, [task])
    preset = load_presets("babi-qa", model)[task]
    params = {**preset.params, **dict(overrides or {})}
    train = load_babi_qa(task, "train", lang=lang, data_home=data_home)
    fitted = _fit(spec, params, train, seed)
    return fitted, {"task": task, "params": params, "selection": {"preset": preset.record}}


def bench_babi_qa(
    model: str,
    tasks=tuple(range(1, 21)),
    lang: str = "en",
    joint: bool = False,
    data_home=None,
    progress: bool = True,
    seed: int = 0,
    heldout: bool = False,
    overrides: dict | None = None,
) -> dict:
    """Test accuracy per bAbI QA task (Weston et al. 2015, Table 3 layout), one seed.

    Single-task: one model per task, trained on its train split. ``joint``: one model
    trained on the train splits of all ``tasks`` together, scored on each task. The
    hyper-parameters are the model's presets (``irdialog/data/presets/babi-qa-<model>.json``,
    chosen on validation data carved from train). Every data file is loaded before the
    first fit.

    Parameters
    ----------
    model : str
        A key of ``BABI_QA_MODELS``.
    tasks : sequence of int, default=1..20
    lang : str, default="en"
        The bAbI language folder (``en``, ``hn``, ``shuffled``, ...).
    joint : bool, default=False
    data_home : path-like, default=None
        See :func:`irdialog.datasets.get_data_home` (None: the bundled data).
    progress : bool, default=True
    seed : int, default=0
        The ``random_state`` of the models.
    heldout : bool, default=False
        Fit on the first stories of each training file and score the last
        ``valid_fraction`` of them (the model's spec), instead of test; test is not loaded.
    overrides : dict, default=None
        Parameters set on top of the presets (for tuning, with ``heldout``).

    Returns
    -------
    run : dict
        ``{"suite", "model", "options", "chosen", "rows", "summary", "seconds"}``; rows
        ``{"task", "n", "accuracy", "paper"}`` (accuracy in percent, ``paper`` None where
        Table 3 has no column for the model, and with ``heldout``) plus the
        model's extra metrics; ``summary`` the mean accuracy and the failed tasks (under
        95%), with the paper's.

    Examples
    --------
    >>> from irdialog.bench import bench_babi_qa, format_qa_table
    >>> run = bench_babi_qa("ngram", tasks=[1], progress=False)
    >>> print(format_qa_table(run))
    task       n    ours   paper
    1       1000    60.0      36
    mean accuracy 60.0%, 1 tasks under 95%
    """
    spec, tasks = _check_tasks(model, tasks)
    overrides = dict(overrides or {})
    presets = load_presets("babi-qa", model)
    start = time.perf_counter()
    data = {}
    for task in tasks:
        train = load_babi_qa(task, "train", lang=lang, data_home=data_home)
        if heldout:
            fit_rows, valid_rows = next(valid_split(train.groups, spec.valid_fraction).split())
            data[task, "train"] = _subset(train, fit_rows)
            data[task, "eval"] = _subset(train, valid_rows)
        else:
            data[task, "train"] = train
            data[task, "eval"] = load_babi_qa(task, "test", lang=lang, data_home=data_home)
    column = spec.joint_paper_column if joint else spec.paper_column
    paper = {} if heldout else _qa_paper(column)
    bar = tqdm(total=len(tasks), desc=f"babi-qa {model}", disable=not progress)

    def params(task):
        return {**presets[None if joint else task].params, **overrides}

    def fit(task, train):
        return _fit(spec, params(task), train, seed)

    fitted = {}
    if joint:
        fitted = dict.fromkeys(tasks, fit(None, _concat([data[t, "train"] for t in tasks])))
    rows = []
    for task in tasks:
        if not joint:
            fitted[task] = fit(task, data[task, "train"])
        evaluation = data[task, "eval"]
        pred = fitted[task].predict(evaluation.X)
        row = {
            "task": task,
            "n": len(evaluation.y),
            "accuracy": 100.0 * per_response_accuracy(evaluation.y, pred),
            "paper": paper.get(task),
        }
        if spec.extras is not None:
            row.update(spec.extras(fitted[task], evaluation))
        rows.append(row)
        bar.update()
    bar.close()
    accs = [r["accuracy"] for r in rows]
    summary = {
        "mean_accuracy": float(np.mean(accs)),
        "failed": sum(a < PASS_ACCURACY for a in accs),
    }
    if not heldout and set(tasks) == set(range(1, 21)):
        if paper:
            summary |= {"paper_mean_accuracy": paper["mean"], "paper_failed": paper["failed"]}
        elif joint in spec.paper_summary:
            mean, failed = spec.paper_summary[joint]
            summary |= {"paper_mean_accuracy": mean, "paper_failed": failed}
    chosen = []
    for task in tasks:
        preset = presets[None if joint else task]
        chosen.append(
            {
                "task": task,
                "params": params(task),
                "selection": {"preset": preset.record},
            }
        )
    return {
        "suite": "babi-qa",
        "model": model,
        "options": {
            "tasks": tasks,
            "lang": lang,
            "joint": joint,
            **({"heldout": True} if heldout else {}),
            **({"overrides": overrides} if overrides else {}),
        },
        "chosen": chosen,
        "rows": rows,
        "summary": summary,
        "seconds": time.perf_counter() - start,
    }


def search_babi_qa(
    model: str, tasks=tuple(range(1, 21)), lang: str = "en", data_home=None, progress=True
) -> list[dict]:
    """Each task's best point of the model's grid, on the validation split of its training
    file (:func:`valid_split`; the test files are never loaded).

    Returns
    -------
    chosen : list of dict
        ``{"task", "params", "selection": {"valid_accuracy", "grid"}}`` per task, accuracies
        in percent, ties going to the first grid point; ready for
        :func:`irdialog.bench.write_presets`.

    Examples
    --------
    >>> from irdialog.bench import search_babi_qa
    >>> [entry] = search_babi_qa("ngram", tasks=[1], progress=False)
    >>> sorted(entry["params"]), len(entry["selection"]["grid"])
    (['classifier__C', 'max_df'], 4)
    """
    spec, tasks = _check_tasks(model, tasks)
    if spec.grid is None:
        raise ValueError(
            f"babi-qa model {model!r} has no grid to search; tune it with --heldout --set"
        )
    chosen = []
    for task in tqdm(tasks, desc=f"search babi-qa {model}", disable=not progress):
        train = load_babi_qa(task, "train", lang=lang, data_home=data_home)
        search = GridSearchCV(
            spec.build(),
            spec.grid,
            cv=valid_split(train.groups, spec.valid_fraction),
            refit=False,
            error_score="raise",
        ).fit(train.X, train.y, **spec.fit_params(train))
        scores = [round_metric(100.0 * s) for s in search.cv_results_["mean_test_score"]]
        grid = [{**p, "valid_accuracy": s} for p, s in zip(search.cv_results_["params"], scores)]
        chosen.append(
            {
                "task": task,
                "params": search.best_params_,
                "selection": {"valid_accuracy": scores[search.best_index_], "grid": grid},
            }
        )
    return chosen


def _qa_paper(column) -> dict:
    """{task: accuracy} of a Table 3 column, with its "mean" (the table's own mean row)
    and "failed" (tasks under 95%); empty for None."""
    if column is None:
        return {}
    rows = {r["task"]: r for r in paper_table("babi_qa_table3.csv")}
    out = {int(t): float(r[column]) for t, r in rows.items() if t.isdigit()}
    out["mean"] = float(rows["mean"][column])
    out["failed"] = sum(out[t] < PASS_ACCURACY for t in range(1, 21))
    return out


def format_qa_table(result: dict) -> str:
    """Per-task accuracy, with the paper's where Table 3 has a column for the model, and
    the model's extra row metrics (e.g. supporting-fact accuracy) after it.

    Parameters
    ----------
    result : dict
        A result of :func:`bench_babi_qa` or :func:`run_suite` over it (with several
        seeds, ours is the mean ± standard deviation).

    Returns
    -------
    table : str

    Examples
    --------
    >>> result = {"rows": [{"task": 1, "n": 1000, "accuracy": 60.0, "paper": 36.0}],
    ...           "summary": {"mean_accuracy": 60.0, "failed": 1}}
    >>> print(format_qa_table(result))
    task       n    ours   paper
    1       1000    60.0      36
    mean accuracy 60.0%, 1 tasks under 95%
    """
    fixed = ("task", "n", "accuracy", "paper")
    extras = [k for k in result["rows"][0] if k not in fixed and not k.startswith("accuracy_")]
    extras = [k for k in extras if not k.endswith(("_std", "_by_seed"))]
    lines = [f"{'task':<6}{'n':>6}  {'ours':>6}  {'paper':>6}" + "".join(f"  {k}" for k in extras)]
    for r in result["rows"]:
        ref = "" if r.get("paper") is None else f"{r['paper']:g}"
        line = f"{r['task']:<6}{r['n']:>6}  {with_spread(r, 'accuracy'):>6}  {ref:>6}"
        lines.append(line + "".join(f"  {with_spread(r, k):>{len(k)}}" for k in extras))
    summary = result["summary"]
    line = f"mean accuracy {with_spread(summary, 'mean_accuracy')}%, "
    line += f"{with_spread(summary, 'failed')} tasks under 95%"
    if "paper_mean_accuracy" in summary:
        line += f" (paper: {summary['paper_mean_accuracy']:.1f}%, {summary['paper_failed']})"
    lines.append(line)
    for k in extras:
        mean = sum(r[k] for r in result["rows"]) / len(result["rows"])
        lines.append(f"mean {k.replace('_', ' ')} {mean:.1f}%")
    return "\n".join(lines)
