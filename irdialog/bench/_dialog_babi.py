"""Dialog bAbI suite (Bordes et al. 2017, Table 2): per-response and per-dialog accuracy.

For each task, a model is fitted on trn for every point of its grid (or with its preset,
``irdialog/data/presets/dialog-babi-<model>.json``), the point with the best dev accuracy is
kept and scored on tst and tst-OOV. With ``heldout=True`` only dev is scored (the test
files are never loaded): with ``overrides`` this is how presets are tuned
(``irdialog bench dialog-babi --heldout --set NAME=VALUE``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sklearn.model_selection import ParameterGrid
from tqdm.auto import tqdm

from ..datasets import load_dialog_babi
from ..embed import MemN2NRanker, SupervisedEmbeddingRanker
from ..features import MatchTypeFeaturizer
from ..metrics import per_dialog_accuracy, per_response_accuracy
from ..pipeline import RankingPipeline
from ..retrieval import BM25Ranker, NearestNeighborRanker, RuleBasedRanker, TfidfRanker
from ._harness import reseed, round_metric, with_spread
from ._paper import paper_table
from ._presets import load_presets

DIALOG_BABI_ROWS = [(t, "tst") for t in range(1, 6)] + [(t, "tst-OOV") for t in range(1, 6)]
DIALOG_BABI_ROWS.append((6, "tst"))


@dataclass
class ModelSpec:
    """How a suite builds a model: a factory of (task data, params) and the dev grid."""

    # The model's column of the paper's table (dialog_babi_table2.csv); None for a model
    # beyond the paper, whose rows then carry no paper value.
    paper_column: str | None
    build: Callable[..., object]
    grid: dict = field(default_factory=dict)
    # The preset file (irdialog/data/presets/dialog-babi-<presets>.json) of hyper-parameters
    # chosen beforehand on dev, for models too slow to grid-search in the bench; replaces
    # the grid.
    presets: str | None = None


def _tfidf(data, **params):
    return TfidfRanker(candidates=data.candidates, **params)


def _with_match_type(data, ranker, types: str):
    """``ranker`` behind a MatchTypeFeaturizer over the task's KB. ``types``: "paper" for the
    paper's seven entity types, "all" for those and restaurant names (R_name in the KB)."""
    keep = [t for t in sorted(set(data.kb.values())) if types == "all" or t != "R_name"]
    return RankingPipeline(
        [("match_type", MatchTypeFeaturizer(data.kb, types=keep)), ("ranker", ranker)]
    )


def _tfidf_type(data, **params):
    return _with_match_type(data, _tfidf(data, **params), "paper")


def _bm25(data, **params):
    # Lucene's BM25 (bm25s's default), fixed rather than searched.
    return BM25Ranker(candidates=data.candidates, **{"method": "lucene", **params})


def _bm25_type(data, **params):
    return _with_match_type(data, _bm25(data, **params), "paper")


# BM25's grid: fixed before any test split was scored, small on purpose (18 points; 36 with
# match type), each task's point chosen on dev like TF-IDF's.
_BM25_GRID = {"use_history": [True, False], "k1": [0.5, 1.2, 2.0], "b": [0.25, 0.75, 1.0]}


def _nn(data, **params):
    return NearestNeighborRanker(candidates=data.candidates, **params)


def _rule_based(data, **params):
    return RuleBasedRanker(kb=data.kb, candidates=data.candidates, **params)


def _memn2n(data, **params):
    return MemN2NRanker(candidates=data.candidates, random_state=0, **params)


def _memn2n_type(data, **params):
    # Every KB type: the setting the presets were chosen with.
    return _with_match_type(data, _memn2n(data, **params), "all")


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
        presets=variant,
    )


DIALOG_BABI_MODELS: dict[str, ModelSpec] = {
    "tfidf": ModelSpec("tfidf", _tfidf, {"use_history": [True, False]}),
    "tfidf-type": ModelSpec(
        "tfidf_type", _tfidf_type, {"use_history": [True, False], "type_weight": [1.0, 3.0]}
    ),
    # Beyond the paper (no column of Table 2): Okapi BM25 instead of the TF-IDF cosine.
    "bm25": ModelSpec(None, _bm25, _BM25_GRID),
    "bm25-type": ModelSpec(None, _bm25_type, {**_BM25_GRID, "type_weight": [1.0, 3.0]}),
    "nn": ModelSpec("nearest_neighbor", _nn, {"similarity": ["overlap", "jaccard"]}),
    "rule-based": ModelSpec("rule_based", _rule_based),
    "se": _se("se"),
    "se-type": _se("se-type"),
    "se-bigrams": _se("se-bigrams"),
    # One preset per task serves both columns.
    "memn2n": ModelSpec("memn2n", _memn2n, presets="memn2n"),
    "memn2n-type": ModelSpec("memn2n_match_type", _memn2n_type, presets="memn2n"),
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


def _fit_task(spec, presets, task, train, dev, seed, overrides, bar=None):
    """Fit every grid point (or the preset) of a task on trn and keep the best on dev:
    ``(dev accuracy, params, fitted model, preset record)``."""
    if spec.presets:
        preset = presets[task]
        points, preset_selection = [preset.params], {"preset": preset.record}
    else:
        points, preset_selection = list(ParameterGrid(spec.grid)), {}
    points = [{**point, **overrides} for point in points]
    best = None
    for point in points:
        fitted = reseed(spec.build(train, **point), seed).fit(train.X, train.y)
        dev_acc = _evaluate(fitted, dev)["per_response"]
        if best is None or dev_acc > best[0]:
            best = (dev_acc, point, fitted)
        if bar is not None:
            bar.update()
    return (*best, preset_selection)


def _check_model_and_tasks(model, tasks) -> list[int]:
    if model not in DIALOG_BABI_MODELS:
        raise ValueError(
            f"unknown dialog-babi model {model!r}; choose from {sorted(DIALOG_BABI_MODELS)}"
        )
    tasks = [int(t) for t in tasks]
    unknown = set(tasks) - set(range(1, 7))
    if unknown:
        raise ValueError(f"dialog bAbI tasks are 1-6, got {sorted(unknown)}")
    return tasks


def compile_ahead_jobs(models, task: int = 1, data_home=None, seed: int = 0, n_rows: int = 200):
    """The jobs of :class:`irdialog._compile_ahead.CompileAhead` for a run of ``models``:
    each model with a preset (the numba ones), built as the bench builds it for ``task``,
    with the first ``n_rows`` training rows, so that its fit compiles the kernels (and the
    argument types) of the real one.

    Examples
    --------
    >>> sorted(compile_ahead_jobs(["tfidf", "se", "memn2n"]))
    ['memn2n', 'se']
    """
    train = load_dialog_babi(task, "trn", data_home=data_home)
    X, y = train.X[:n_rows], train.y[:n_rows]
    jobs = {}
    for model in models:
        spec = DIALOG_BABI_MODELS[model]
        if spec.presets:
            params = load_presets("dialog-babi", spec.presets)[task].params
            jobs[model] = (reseed(spec.build(train, **params), seed), X, y)
    return jobs


def train_dialog_babi(model: str, task: int, data_home=None, seed: int = 0, overrides=None):
    """The model :func:`bench_dialog_babi` scores for one task, fitted the same way.

    The model is built from its preset (or each point of its grid), fitted on the trn split
    and, for a grid, the point with the best dev accuracy kept: exactly the model behind
    the bench's row, ready to save (``irdialog train``) or to talk to (``irdialog chat``).

    Parameters
    ----------
    model : str
        A key of ``DIALOG_BABI_MODELS``.
    task : int
        1-6.
    data_home : path-like, default=None
    seed : int, default=0
    overrides : dict, default=None
        Parameters set on top of the preset or every grid point.

    Returns
    -------
    fitted : estimator
    chosen : dict
        ``{"task", "params", "selection"}`` as in the bench's ``chosen``.

    Examples
    --------
    >>> from irdialog.bench import train_dialog_babi
    >>> model, chosen = train_dialog_babi("tfidf", task=1)
    >>> chosen["params"], chosen["selection"]["dev_per_response"]
    ({'use_history': False}, 6.02)
    """
    [task] = _check_model_and_tasks(model, [task])
    spec = DIALOG_BABI_MODELS[model]
    presets = load_presets("dialog-babi", spec.presets) if spec.presets else {}
    train = load_dialog_babi(task, "trn", data_home=data_home)
    dev = load_dialog_babi(task, "dev", data_home=data_home)
    dev_acc, point, fitted, preset_selection = _fit_task(
        spec, presets, task, train, dev, seed, dict(overrides or {})
    )
    selection = {"dev_per_response": round_metric(dev_acc), **preset_selection}
    return fitted, {"task": task, "params": dict(point), "selection": selection}


def bench_dialog_babi(
    model: str,
    tasks=(1, 2, 3, 4, 5, 6),
    data_home=None,
    progress: bool = True,
    seed: int = 0,
    heldout: bool = False,
    overrides: dict | None = None,
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
    heldout : bool, default=False
        Score the dev split only (rows of split ``"dev"``, no paper values); the test files
        are not loaded.
    overrides : dict, default=None
        Parameters set on top of every grid point or preset (for tuning, with ``heldout``).

    Returns
    -------
    run : dict
        ``{"suite", "model", "options", "chosen", "rows", "seconds"}``; rows ``{"task",
        "split", "n", "per_response", "per_dialog", "paper_per_response",
        "paper_per_dialog"}`` in percent (the paper's None on held-out rows and for the
        models beyond the paper, ``bm25`` and ``bm25-type``); ``chosen`` one ``{"task",
        "params", "selection"}`` per task, ``selection`` holding the dev accuracy of the
        chosen point. Use
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
    tasks = _check_model_and_tasks(model, tasks)
    spec = DIALOG_BABI_MODELS[model]
    overrides = dict(overrides or {})
    presets = load_presets("dialog-babi", spec.presets) if spec.presets else {}
    start = time.perf_counter()
    scored = [("dev", "dev")] if heldout else [("tst", "tst"), ("tst-OOV", "tst-OOV")]
    data = {
        (task, split): load_dialog_babi(task, split, data_home=data_home)
        for task in tasks
        for split in ("trn", "dev", "tst", "tst-OOV")
        if split in ("trn", "dev") or (not heldout and (task, split) in DIALOG_BABI_ROWS)
    }
    paper = _dialog_paper()
    rows, chosen = [], []
    n_points = 1 if spec.presets else len(ParameterGrid(spec.grid))
    bar = tqdm(total=len(tasks) * (n_points + 2), desc=f"dialog-babi {model}", disable=not progress)
    for task in tasks:
        dev_acc, point, fitted, preset_selection = _fit_task(
            spec, presets, task, data[task, "trn"], data[task, "dev"], seed, overrides, bar
        )
        chosen.append(
            {
                "task": task,
                "params": dict(point),
                "selection": {"dev_per_response": round_metric(dev_acc), **preset_selection},
            }
        )
        for split, row_split in scored:
            if (task, split) in data:
                column = spec.paper_column
                # Held-out rows, and models beyond the paper, have no paper value.
                ref = paper.get((task, row_split), {}) if column and not heldout else {}
                rows.append(
                    {
                        "task": task,
                        "split": split,
                        **_evaluate(fitted, data[task, split]),
                        "paper_per_response": float(ref[column]) if ref else None,
                        "paper_per_dialog": float(ref[f"{column}_dialog"]) if ref else None,
                    }
                )
        bar.update(2)
    bar.close()
    if not heldout:
        rows.sort(key=lambda r: DIALOG_BABI_ROWS.index((r["task"], r["split"])))
    return {
        "suite": "dialog-babi",
        "model": model,
        "options": {
            "tasks": tasks,
            **({"heldout": True} if heldout else {}),
            **({"overrides": overrides} if overrides else {}),
        },
        "chosen": chosen,
        "rows": rows,
        "seconds": time.perf_counter() - start,
    }


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
        ours = f"{with_spread(r, 'per_response')} ({with_spread(r, 'per_dialog')})"
        if r["paper_per_response"] is None:  # held-out rows, models beyond the paper
            paper, diff = "", ""
        else:
            paper = f"{r['paper_per_response']:.1f} ({r['paper_per_dialog']:.1f})"
            diff = f"{r['per_response'] - r['paper_per_response']:+.1f}"
        lines.append(f"{r['task']:<6}{r['split']:<9}{r['n']:>7}  {ours:>20}  {paper:>14}  {diff}")
    return "\n".join(lines)
