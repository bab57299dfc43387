"""Benchmark suites: the rows of the papers' tables, reproduced on the real data.

Each suite trains a model per task on the training split, with hyper-parameters chosen on
held-out data (the dev split, or a validation part of train), never on test, and reports
test accuracy. The result is a JSON-ready dict::

    {"suite", "model", "params", "rows": [...], "seconds"}

with accuracies in percent and ``params`` the chosen hyper-parameters per task. Rows are
``{"task", "split", "per_response", "per_dialog", "n"}`` for dialog bAbI and
``{"task", "accuracy", "n"}`` (plus model-specific extras) for bAbI QA.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from tqdm.auto import tqdm

from ..datasets import load_babi_qa, load_dialog_babi
from ..embed import MemN2NRanker, SupervisedEmbeddingRanker
from ..features import MatchTypeFeaturizer
from ..metrics import per_dialog_accuracy, per_response_accuracy
from ..retrieval import NearestNeighborRanker, NGramClassifier, TfidfRanker
from ..svm import StructuredSVMQA
from ._harness import reseed, round_metric
from ._memn2n_presets import MEMN2N_BABI_QA_PRESETS, MEMN2N_DIALOG_BABI_PRESETS
from ._paper import paper_table
from ._se_presets import SE_DIALOG_BABI_DEV, SE_DIALOG_BABI_PRESETS

DIALOG_BABI_ROWS = [(t, "tst") for t in range(1, 6)] + [(t, "tst-OOV") for t in range(1, 6)]
DIALOG_BABI_ROWS.append((6, "tst"))


@dataclass(frozen=True)
class Preset:
    """Hyper-parameters chosen beforehand, as data: the parameters only, the search that
    chose them, and what that search scored them (kept apart from the parameters)."""

    params: dict
    search: str
    selection: dict = field(default_factory=dict)

    @property
    def record(self) -> dict:
        """The search and its scores, for a result's ``chosen[...]["selection"]``."""
        return {"search": self.search, **self.selection}


@dataclass
class ModelSpec:
    """How a suite builds a model: a factory of (task data, params) and the dev grid."""

    paper_column: str
    build: Callable[..., object]
    grid: dict = field(default_factory=dict)
    # Per-task hyper-parameters chosen beforehand on dev, for models too slow to
    # grid-search in the bench; replaces the grid.
    presets: Callable[[int], Preset] | None = None


def _tfidf(data, **params):
    return TfidfRanker(candidates=data.candidates, **params)


def _with_match_type(data, ranker, types: str):
    """``ranker`` behind a MatchTypeFeaturizer over the task's KB. ``types``: "paper" for the
    paper's seven entity types, "all" for those and restaurant names (R_name in the KB)."""
    keep = [t for t in sorted(set(data.kb.values())) if types == "all" or t != "R_name"]
    return Pipeline([("match_type", MatchTypeFeaturizer(data.kb, types=keep)), ("ranker", ranker)])


def _tfidf_type(data, **params):
    return _with_match_type(data, _tfidf(data, **params), "paper")


def _nn(data, **params):
    return NearestNeighborRanker(candidates=data.candidates, **params)


def _memn2n(data, **params):
    return MemN2NRanker(candidates=data.candidates, random_state=0, **params)


def _memn2n_type(data, **params):
    # Every KB type: the setting the presets were chosen with.
    return _with_match_type(data, _memn2n(data, **params), "all")


SE_SEARCH = (
    "NUMBA_NUM_THREADS=1 python benchmarks/tune_supervised_embedding.py "
    "--data-home ../shared/data --tasks {task} --models {variant}"
)
MEMN2N_DIALOG_SEARCH = "python benchmarks/tune_memn2n.py dialog-babi --eval dev"


def _se(variant):
    def build(data, types=None, **params):
        # ``types``: the match-type set, or None for no match type.
        ranker = SupervisedEmbeddingRanker(candidates=data.candidates, random_state=0, **params)
        return ranker if types is None else _with_match_type(data, ranker, types)

    return ModelSpec(
        {"se": "supervised_embeddings", "se-type": "se_match_type", "se-bigrams": "se_bigrams"}[
            variant
        ],
        build,
        presets=lambda task: Preset(
            dict(SE_DIALOG_BABI_PRESETS[task][variant]),
            SE_SEARCH.format(task=task, variant=variant),
            {"dev_per_response": SE_DIALOG_BABI_DEV[task][variant]},
        ),
    )


def _memn2n_presets(task):
    return Preset(dict(MEMN2N_DIALOG_BABI_PRESETS[task]), MEMN2N_DIALOG_SEARCH)


DIALOG_BABI_MODELS: dict[str, ModelSpec] = {
    "tfidf": ModelSpec("tfidf", _tfidf, {"use_history": [True, False]}),
    "tfidf-type": ModelSpec(
        "tfidf_type", _tfidf_type, {"use_history": [True, False], "type_weight": [1.0, 3.0]}
    ),
    "nn": ModelSpec("nearest_neighbor", _nn, {"similarity": ["overlap", "jaccard"]}),
    "se": _se("se"),
    "se-type": _se("se-type"),
    "se-bigrams": _se("se-bigrams"),
    "memn2n": ModelSpec("memn2n", _memn2n, presets=_memn2n_presets),
    "memn2n-type": ModelSpec("memn2n_match_type", _memn2n_type, presets=_memn2n_presets),
}


def _evaluate(model, data) -> dict:
    pred = model.predict(data.X)
    return {
        "per_response": 100.0 * per_response_accuracy(data.y, pred),
        "per_dialog": 100.0 * per_dialog_accuracy(data.y, pred, data.groups),
        "n": len(data.y),
    }


def _dialog_paper():
    return {(int(r["task"]), r["split"]): r for r in paper_table("dialog_babi_table2.csv")}


def bench_dialog_babi(
    model: str,
    tasks=(1, 2, 3, 4, 5, 6),
    data_home=None,
    progress: bool = True,
    seed: int = 0,
) -> dict:
    """Reproduce a model's column of dialog bAbI Table 2 (Bordes et al. 2017), one seed.

    For each task: fit on trn with every point of the model's grid (or its preset), keep
    the point with the best dev per-response accuracy, refit nothing (the chosen model is
    the one fitted on trn) and score tst and tst-OOV. Every data file is loaded before the
    first fit, so a missing file fails at once.

    Parameters
    ----------
    model : str
        A key of ``DIALOG_BABI_MODELS``.
    tasks : sequence of int, default=(1, 2, 3, 4, 5, 6)
    data_home : path-like, default=None
        See :func:`irdialog.datasets.get_data_home` (None: the bundled data).
    progress : bool, default=True
    seed : int, default=0
        The ``random_state`` of the models.

    Returns
    -------
    run : dict
        ``{"suite", "model", "options", "chosen", "rows", "seconds"}``; rows ``{"task",
        "split", "n", "per_response", "per_dialog", "paper_per_response",
        "paper_per_dialog"}`` in percent; ``chosen`` one ``{"task", "params", "selection"}``
        per task, ``selection`` holding the dev accuracy of the chosen point. Use
        :func:`run_suite` for several seeds and the provenance record.

    Examples
    --------
    >>> from irdialog.bench import bench_dialog_babi, format_table
    >>> run = bench_dialog_babi("tfidf", tasks=[1], progress=False)
    >>> print(format_table(run))
    task  split          n          tfidf (ours)           paper  diff
    1     tst         5936             5.8 (0.0)       5.6 (0.0)  +0.2
    1     tst-OOV     6020             5.8 (0.0)       5.8 (0.0)  +0.0
    """
    if model not in DIALOG_BABI_MODELS:
        raise ValueError(
            f"unknown dialog-babi model {model!r}; choose from {sorted(DIALOG_BABI_MODELS)}"
        )
    spec = DIALOG_BABI_MODELS[model]
    tasks = [int(t) for t in tasks]
    unknown = set(tasks) - set(range(1, 7))
    if unknown:
        raise ValueError(f"dialog bAbI tasks are 1-6, got {sorted(unknown)}")
    start = time.perf_counter()
    data = {
        (task, split): load_dialog_babi(task, split, data_home=data_home)
        for task in tasks
        for split in ("trn", "dev", "tst", "tst-OOV")
        if split in ("trn", "dev") or (task, split) in DIALOG_BABI_ROWS
    }
    paper = _dialog_paper()
    rows, chosen = [], []
    n_points = 1 if spec.presets else len(ParameterGrid(spec.grid))
    bar = tqdm(total=len(tasks) * (n_points + 2), desc=f"dialog-babi {model}", disable=not progress)
    for task in tasks:
        if spec.presets:
            preset = spec.presets(task)
            points, preset_selection = [preset.params], {"preset": preset.record}
        else:
            points, preset_selection = list(ParameterGrid(spec.grid)), {}
        train, dev = data[task, "trn"], data[task, "dev"]
        best = None
        for point in points:
            fitted = reseed(spec.build(train, **point), seed).fit(train.X, train.y)
            dev_acc = _evaluate(fitted, dev)["per_response"]
            if best is None or dev_acc > best[0]:
                best = (dev_acc, point, fitted)
            bar.update()
        dev_acc, point, fitted = best
        chosen.append(
            {
                "task": task,
                "params": dict(point),
                "selection": {"dev_per_response": round_metric(dev_acc), **preset_selection},
            }
        )
        for split in ("tst", "tst-OOV"):
            if (task, split) in DIALOG_BABI_ROWS:
                ref = paper[(task, split)]
                rows.append(
                    {
                        "task": task,
                        "split": split,
                        **_evaluate(fitted, data[task, split]),
                        "paper_per_response": float(ref[spec.paper_column]),
                        "paper_per_dialog": float(ref[f"{spec.paper_column}_dialog"]),
                    }
                )
            bar.update()
    bar.close()
    rows.sort(key=lambda r: DIALOG_BABI_ROWS.index((r["task"], r["split"])))
    return {
        "suite": "dialog-babi",
        "model": model,
        "options": {"tasks": tasks},
        "chosen": chosen,
        "rows": rows,
        "seconds": time.perf_counter() - start,
    }


def _with_spread(row: dict, key: str, digits: int = 1) -> str:
    """``row[key]`` and, over several seeds, its standard deviation."""
    value, std = row[key], row.get(f"{key}_std")
    shown = str(value) if isinstance(value, int) else f"{value:.{digits}f}"
    return shown + ("" if std is None else f"±{std:.{digits}f}")


def format_table(result: dict) -> str:
    """A plain-text table of per-response (per-dialog) accuracy, ours next to the paper.

    Parameters
    ----------
    result : dict
        A result of :func:`bench_dialog_babi` or :func:`run_suite` over it (with several
        seeds, ours is the mean ± standard deviation).

    Returns
    -------
    table : str

    Examples
    --------
    >>> result = {"model": "tfidf", "rows": [{"task": 1, "split": "tst", "n": 5936,
    ...     "per_response": 5.8, "per_dialog": 0.0, "paper_per_response": 5.6,
    ...     "paper_per_dialog": 0.0}]}
    >>> print(format_table(result))
    task  split          n          tfidf (ours)           paper  diff
    1     tst         5936             5.8 (0.0)       5.6 (0.0)  +0.2
    """
    model = result["model"]
    lines = [f"{'task':<6}{'split':<9}{'n':>7}  {model + ' (ours)':>20}  {'paper':>14}  diff"]
    for r in result["rows"]:
        ours = f"{_with_spread(r, 'per_response')} ({_with_spread(r, 'per_dialog')})"
        paper = f"{r['paper_per_response']:.1f} ({r['paper_per_dialog']:.1f})"
        diff = r["per_response"] - r["paper_per_response"]
        lines.append(
            f"{r['task']:<6}{r['split']:<9}{r['n']:>7}  {ours:>20}  {paper:>14}  {diff:+.1f}"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- bAbI QA


@dataclass
class QAModelSpec:
    """How the bAbI QA suite builds a model.

    ``build(task)`` gives the estimator for a task (``task=None``: one joint model over all
    tasks) with its preset hyper-parameters; ``params(task)`` those presets, for the report;
    ``fit_params(data)`` extra ``fit`` arguments (supporting facts for strongly supervised
    models); ``extras(model, data)`` extra row metrics.
    """

    paper_column: str | None
    build: Callable[[int | None], object]
    params: Callable[[int | None], dict] = lambda task: {}
    fit_params: Callable[[object], dict] = lambda data: {}
    extras: Callable[[object, object], dict] | None = None
    # The paper's (mean accuracy %, failed tasks) where Table 3 has no per-task column,
    # keyed by ``joint``.
    paper_summary: dict = field(default_factory=dict)
    # The command of the validation search that chose ``params``.
    search: str = ""


BABI_QA_MODELS: dict[str, QAModelSpec] = {}


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


def bench_babi_qa(
    model: str,
    tasks=tuple(range(1, 21)),
    lang: str = "en",
    joint: bool = False,
    data_home=None,
    progress: bool = True,
    seed: int = 0,
) -> dict:
    """Test accuracy per bAbI QA task (Weston et al. 2015, Table 3 layout), one seed.

    Single-task: one model per task, trained on its train split. ``joint``: one model
    trained on the train splits of all ``tasks`` together, scored on each test split.
    Hyper-parameters are the model's presets (chosen on validation data carved from train,
    see the model's entry in ``BABI_QA_MODELS``). Every data file is loaded before the
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

    Returns
    -------
    run : dict
        ``{"suite", "model", "options", "chosen", "rows", "summary", "seconds"}``; rows
        ``{"task", "n", "accuracy", "paper"}`` (accuracy in percent, ``paper`` None where
        Table 3 has no column for the model) plus the model's extra metrics; ``summary``
        the mean accuracy and the failed tasks (under 95%), with the paper's.

    Examples
    --------
    >>> from irdialog.bench import bench_babi_qa, format_qa_table
    >>> run = bench_babi_qa("ngram", tasks=[1], progress=False)
    >>> print(format_qa_table(run))
    task       n    ours   paper
    1       1000    60.0      36
    mean accuracy 60.0%, 1 tasks under 95%
    """
    if model not in BABI_QA_MODELS:
        raise ValueError(f"unknown babi-qa model {model!r}; choose from {sorted(BABI_QA_MODELS)}")
    tasks = [int(t) for t in tasks]
    unknown = set(tasks) - set(range(1, 21))
    if unknown:
        raise ValueError(f"bAbI QA tasks are 1-20, got {sorted(unknown)}")
    spec = BABI_QA_MODELS[model]
    start = time.perf_counter()
    data = {
        (task, split): load_babi_qa(task, split, lang=lang, data_home=data_home)
        for task in tasks
        for split in ("train", "test")
    }
    paper = _qa_paper(spec.paper_column)
    bar = tqdm(total=len(tasks), desc=f"babi-qa {model}", disable=not progress)

    def fit(task, train):
        return reseed(spec.build(task), seed).fit(train.X, train.y, **spec.fit_params(train))

    fitted = {}
    if joint:
        fitted = dict.fromkeys(tasks, fit(None, _concat([data[t, "train"] for t in tasks])))
    rows = []
    for task in tasks:
        if not joint:
            fitted[task] = fit(task, data[task, "train"])
        test = data[task, "test"]
        pred = fitted[task].predict(test.X)
        row = {
            "task": task,
            "n": len(test.y),
            "accuracy": 100.0 * per_response_accuracy(test.y, pred),
            "paper": paper.get(task),
        }
        if spec.extras is not None:
            row.update(spec.extras(fitted[task], test))
        rows.append(row)
        bar.update()
    bar.close()
    accs = [r["accuracy"] for r in rows]
    summary = {
        "mean_accuracy": float(np.mean(accs)),
        "failed": sum(a < PASS_ACCURACY for a in accs),
    }
    if paper and set(tasks) == set(range(1, 21)):
        summary |= {"paper_mean_accuracy": paper["mean"], "paper_failed": paper["failed"]}
    elif joint in spec.paper_summary and set(tasks) == set(range(1, 21)):
        mean, failed = spec.paper_summary[joint]
        summary |= {"paper_mean_accuracy": mean, "paper_failed": failed}
    search = {"search": spec.search} if spec.search else {}
    return {
        "suite": "babi-qa",
        "model": model,
        "options": {"tasks": tasks, "lang": lang, "joint": joint},
        "chosen": [
            {"task": t, "params": spec.params(None if joint else t), "selection": search}
            for t in tasks
        ],
        "rows": rows,
        "summary": summary,
        "seconds": time.perf_counter() - start,
    }


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
    """Per-task test accuracy, with the paper's where Table 3 has a column for the model,
    and the model's extra row metrics (e.g. supporting-fact accuracy) after it.

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
        line = f"{r['task']:<6}{r['n']:>6}  {_with_spread(r, 'accuracy'):>6}  {ref:>6}"
        lines.append(line + "".join(f"  {_with_spread(r, k):>{len(k)}}" for k in extras))
    summary = result["summary"]
    line = f"mean accuracy {_with_spread(summary, 'mean_accuracy')}%, "
    line += f"{_with_spread(summary, 'failed')} tasks under 95%"
    if "paper_mean_accuracy" in summary:
        line += f" (paper: {summary['paper_mean_accuracy']:.1f}%, {summary['paper_failed']})"
    lines.append(line)
    for k in extras:
        mean = sum(r[k] for r in result["rows"]) / len(result["rows"])
        lines.append(f"mean {k.replace('_', ' ')} {mean:.1f}%")
    return "\n".join(lines)


# --------------------------------------------------------------------------- bAbI QA, classical

PASS_ACCURACY = 95.0  # the paper's success threshold, in %
VALID_FRACTION = 0.2  # tuning: the last stories of each training file

# Validation grids, and what `tune` chose on them per task (tasks not listed: the default).
NGRAM_GRID = {"max_df": [0.5, 1.0], "classifier__C": [0.1, 1.0]}
NGRAM_DEFAULT = {"max_df": 0.5, "classifier__C": 1.0}
NGRAM_PRESETS = {
    task: {"max_df": 0.5, "classifier__C": 0.1} for task in (1, 2, 3, 5, 11, 12, 17, 18, 20)
} | {16: {"max_df": 1.0, "classifier__C": 1.0}}
STRUCT_SVM_GRID = {"C": [1.0, 10.0]}
STRUCT_SVM_DEFAULT = {"C": 1.0}
STRUCT_SVM_PRESETS = {task: {"C": 10.0} for task in (2, 8, 17, 18, 19)}


def ngram_model(**params):
    """The N-gram classifier of the suite: a logistic regression over the bags."""
    return NGramClassifier(classifier=LogisticRegression(max_iter=1000)).set_params(**params)


def struct_svm_model(**params):
    """The structured SVM of the suite (up to 20 passes per stage, seeded)."""
    return StructuredSVMQA(epochs=20, random_state=0, **params)


def supporting_accuracy(model, X, supporting) -> float:
    """% of questions whose chosen facts are exactly the gold ones, as a set (the last
    ``max_facts`` of them when there are more, as in training)."""
    found = model.predict_supporting(X)
    k = model.max_facts
    same = [set(f) == set(tuple(s)[-k:]) for f, s in zip(found, supporting)]
    return 100.0 * float(np.mean(same))


def _preset(presets, default):
    return lambda task: {**default, **presets.get(task, {})}


def babi_qa_specs() -> dict[str, QAModelSpec]:
    """The suite entries of the two models, for ``BABI_QA_MODELS.update(...)``."""
    ngram = _preset(NGRAM_PRESETS, NGRAM_DEFAULT)
    svm = _preset(STRUCT_SVM_PRESETS, STRUCT_SVM_DEFAULT)
    search = "python benchmarks/babi_qa_classical.py --model {} --data-home ../shared/data"
    return {
        "ngram": QAModelSpec(
            paper_column="ngram",
            build=lambda task: ngram_model(**ngram(task)),
            params=ngram,
            search=search.format("ngram"),
        ),
        "struct-svm": QAModelSpec(
            paper_column="struct_svm",
            build=lambda task: struct_svm_model(**svm(task)),
            params=svm,
            search=search.format("struct-svm"),
            fit_params=lambda data: {"supporting": data.supporting},
            extras=lambda model, data: {
                "supporting_accuracy": supporting_accuracy(model, data.X, data.supporting)
            },
        ),
    }


BABI_QA_MODELS.update(babi_qa_specs())


# --------------------------------------------------------------------------- bAbI QA, MemN2N

# Sukhbaatar et al. (2015): restarts, the one with the lowest training error kept (never
# test). Joint training: one model for the 20 tasks, 30 linear-start epochs then 60,
# learning rate halved every 15 (chosen on training error with benchmarks/tune_memn2n.py).
# Dimension and restarts were chosen on the last 10% of the stories of each training file
# (`tune_memn2n.py babi-qa --joint --valid-fraction 0.1 --n-init N --set ...`, fit on the
# rest, test not loaded), mean validation error: d=50 (the paper's) 13.99% with 4 restarts,
# 13.74% with 10; d=64 13.14% / 13.19%; d=100 12.69% (4); d=128 13.38% (4); d=160 12.37% (4,
# kept) / 13.75% (10); d=200 12.54% (4). Other changes, at d=50 with 4 restarts: random_noise
# 0 (14.86%) or 0.05 (13.43%, the same with 10; with d=64 13.90%), linear_start=40 (14.20%),
# other annealing (15.30%, 16.24%), restarts chosen by validation error (14.19%), a ReLU after
# each hop (14.40%), layer-wise tying (14.94%; 15.40% without random noise, 20.16% with the
# ReLU). The spread
# between restart counts (d=160: 12.37% against 13.75%) shows how noisy the choice is.
MEMN2N_QA_RESTARTS = 10
MEMN2N_QA_JOINT = dict(
    MEMN2N_BABI_QA_PRESETS[1], embedding_dim=160, linear_start=30, epochs=60, anneal_every=15
)
MEMN2N_QA_JOINT_RESTARTS = 4


def _memn2n_qa_params(task):
    if task is None:
        return {**MEMN2N_QA_JOINT, "n_init": MEMN2N_QA_JOINT_RESTARTS}
    return {**MEMN2N_BABI_QA_PRESETS[task], "n_init": MEMN2N_QA_RESTARTS}


BABI_QA_MODELS["memn2n"] = QAModelSpec(
    paper_column=None,
    build=lambda task: MemN2NRanker(random_state=0, **_memn2n_qa_params(task)),
    params=_memn2n_qa_params,
    # Sukhbaatar et al. (2015), PE LS RN 1k: 13.9% mean error, 11 failed; joint 12.4%
    # (../shared/README.md; the failed count of the joint model is not given there).
    paper_summary={False: (86.1, 11), True: (87.6, None)},
    search="python benchmarks/tune_memn2n.py babi-qa --joint --valid-fraction 0.1 --n-init N",
)
