"""Choose SupervisedEmbeddingRanker hyper-parameters on the dialog bAbI dev sets and report
dev and test per-response accuracy next to the paper (Bordes et al. 2017, Tables 2 and 10).

Three models, as in the paper's supervised-embedding columns:

- ``se``: plain supervised embeddings (Table 2);
- ``se-type``: with match-type features (Table 10), the contexts annotated by a
  ``MatchTypeFeaturizer`` in a Pipeline (``match_type="match"``), or, for inputs without
  history, the paper's "type regardless of a match" variant (``match_type="type"``);
- ``se-bigrams``: unigrams and bigrams (Table 10).

Protocol (test data never enter a choice):

1. ``use_history``, ``embedding_dim`` and ``n_negatives`` are the paper's own dev choices per
   task (Table 8, ``../shared/reference/dialog_babi_hyperparameters.csv``).
2. ``se``: a grid of learning rate x margin (x ``normalize_input`` for whole-conversation
   inputs, see :func:`grid`); each point is trained on trn with early stopping on dev
   (hits@1 after every epoch, patience 20; the epoch count is thus chosen on dev too) and
   the point with the best dev accuracy wins (ties: the first grid point).
3. ``se-bigrams`` searches the same grid as ``se``, with bigrams. ``se-type`` starts from
   the ``se`` preset of the task (its learning rate, margin and input scaling) and searches
   only what it adds: the match-type variant (``"match"``; also ``"type"`` for inputs
   without history) and the type set (the paper's 7 KB types, or all types including
   restaurant names).
4. The chosen model scores tst and tst-OOV.

The chosen points are recorded below in ``SE_DIALOG_BABI_PRESETS``. A preset fitted with its
recorded ``epochs`` and no early stopping reproduces the chosen model bit for bit (the
seed fixes the initialisation, the example order and the negatives; validation draws no
random numbers), which ``--presets`` does.

Usage (each call under about 10 minutes on one core; split the longest searches, those of
task 5, with ``--points``)::

    NUMBA_NUM_THREADS=1 python benchmarks/tune_supervised_embedding.py --data-home ../shared/data \
        --tasks 1 2 --models se
    NUMBA_NUM_THREADS=1 python benchmarks/tune_supervised_embedding.py --data-home ../shared/data \
        --presets --tasks 5
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from threadpoolctl import threadpool_limits

from irdialog.bench._babi import DIALOG_BABI_MODELS, DIALOG_BABI_ROWS
from irdialog.bench._paper import paper_table
from irdialog.bench._se_presets import SE_DIALOG_BABI_PRESETS
from irdialog.datasets import load_dialog_babi
from irdialog.embed import SupervisedEmbeddingRanker
from irdialog.features import MatchTypeFeaturizer

MODELS = ("se", "se-type", "se-bigrams")

# Bordes et al. 2017, Table 8 (the paper's dev choices): input, dimension, negatives.
TABLE8 = {
    1: dict(use_history=True, embedding_dim=32, n_negatives=100),
    2: dict(use_history=False, embedding_dim=128, n_negatives=100),
    3: dict(use_history=False, embedding_dim=128, n_negatives=1000),
    4: dict(use_history=False, embedding_dim=128, n_negatives=1000),
    5: dict(use_history=True, embedding_dim=32, n_negatives=100),
    6: dict(use_history=False, embedding_dim=128, n_negatives=100),
}

# Test per-response accuracy of the paper (dialog_babi_table2.csv), per model and row.
_TABLE2 = {(int(r["task"]), r["split"]): r for r in paper_table("dialog_babi_table2.csv")}
PAPER = {
    m: {row: float(_TABLE2[row][DIALOG_BABI_MODELS[m].paper_column]) for row in DIALOG_BABI_ROWS}
    for m in MODELS
}

# Common to every run: the seed, and the early-stopping budget of the search.
COMMON = dict(random_state=0)
MAX_EPOCHS = {True: 300, False: 150}  # by use_history: long inputs learn more slowly
PATIENCE = 20

# The chosen presets live in irdialog/bench/_se_presets.py (SE_DIALOG_BABI_PRESETS).


def splits(task):
    return ("tst", "tst-OOV") if task < 6 else ("tst",)


def kb_types(kb, types):
    every = sorted(set(kb.values()))
    return every if types == "all" else [t for t in every if t != "R_name"]


class TaskData:
    """A task's trn, dev and test splits, and their match-type annotations (cached)."""

    def __init__(self, task, data_home=None):
        self.task = task
        self.data = {s: load_dialog_babi(task, s, data_home) for s in ("trn", "dev", *splits(task))}
        self.trn = self.data["trn"]
        self._annotated = {}

    def X(self, split, types=None):
        if types is None:
            return self.data[split].X
        key = (split, types)
        if key not in self._annotated:
            f = MatchTypeFeaturizer(self.trn.kb, types=kb_types(self.trn.kb, types)).fit()
            self._annotated[key] = f.transform(self.data[split].X)
        return self._annotated[key]

    def ranker(self, params, **extra):
        """The ranker of a preset/grid point and the type set its inputs need (or None)."""
        params = dict(params)
        types = params.pop("types", None)
        params.pop("dev", None)
        if params.get("match_type") == "type":
            keep = set(kb_types(self.trn.kb, types))
            params["kb"] = {e: t for e, t in self.trn.kb.items() if t in keep}
            types = None  # the ranker types words itself; contexts need no annotation
        model = SupervisedEmbeddingRanker(
            candidates=self.trn.candidates, **COMMON, **params, **extra
        )
        return model, types


def evaluate(model, td: TaskData, types) -> dict:
    out = {}
    for split in ("dev", *splits(td.task)):
        out[split] = 100.0 * model.score(td.X(split, types), td.data[split].y)
    return out


def grid(task, model, presets) -> list[dict]:
    t8 = TABLE8[task]
    if model == "se":
        margins = (0.1, 1.0)
        if not t8["use_history"]:
            return [dict(t8, learning_rate=lr, margin=m) for lr in (0.01, 0.05) for m in margins]
        # Whole conversations: raw counts (the paper's bags; larger steps diverge) or
        # unit-norm bags, which take 10-50 times larger steps and converge much faster.
        raw = [dict(t8, learning_rate=0.01, margin=m) for m in margins]
        unit = [
            dict(t8, normalize_input=True, learning_rate=lr, margin=m)
            for lr in (0.1, 0.5)
            for m in margins
        ]
        return raw + unit
    if model == "se-bigrams":
        return [dict(point, ngram_range=(1, 2)) for point in grid(task, "se", presets)]
    if task not in presets or "se" not in presets[task]:
        raise SystemExit(f"{model} starts from the se preset of task {task}: search se first.")
    base = {k: v for k, v in presets[task]["se"].items() if k not in ("epochs", "dev")}
    modes = ("match",) if t8["use_history"] else ("match", "type")
    return [dict(base, match_type=mode, types=ts) for mode in modes for ts in ("paper", "all")]


def search(td: TaskData, model: str, presets, log, points=None) -> dict:
    """Fit every grid point (or those numbered in ``points``) with early stopping on dev;
    return the best as a preset, with the test scores of the chosen model."""
    best = None
    for number, point in enumerate(grid(td.task, model, presets)):
        if points is not None and number not in points:
            continue
        epochs = MAX_EPOCHS[point["use_history"]]
        ranker, types = td.ranker(
            point, epochs=epochs, early_stopping=True, n_iter_no_change=PATIENCE
        )
        start = time.perf_counter()
        try:
            ranker.fit(
                td.X("trn", types), td.trn.y, X_val=td.X("dev", types), y_val=td.data["dev"].y
            )
        except FloatingPointError as e:
            log(f"  {point}: {e}")
            continue
        dev = 100.0 * ranker.best_validation_score_
        best_epoch = int(np.argmax(ranker.validation_scores_)) + 1
        seconds = time.perf_counter() - start
        log(
            f"  #{number} {point}: dev {dev:.2f} at epoch {best_epoch}/{ranker.n_iter_} "
            f"({seconds:.0f}s)"
        )
        if best is None or dev > best[0]:
            best = (dev, dict(point, epochs=best_epoch), ranker, types)
    dev, preset, ranker, types = best
    preset["dev"] = round(dev, 2)
    return preset, evaluate(ranker, td, types)


def fit_preset(td: TaskData, preset: dict):
    ranker, types = td.ranker(preset)
    ranker.fit(td.X("trn", types), td.trn.y)
    return evaluate(ranker, td, types)


def report(rows: list[dict]) -> str:
    head = f"{'model':<11}{'task':<5}{'split':<9}{'dev':>7}{'test':>8}{'paper':>8}{'diff':>7}  ok"
    lines = [head]
    for r in rows:
        diff = r["test"] - r["paper"]
        ok = "yes" if diff >= -1.0 else "NO"
        lines.append(
            f"{r['model']:<11}{r['task']:<5}{r['split']:<9}{r['dev']:>7.2f}{r['test']:>8.2f}"
            f"{r['paper']:>8.1f}{diff:>+7.2f}  {ok}"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--presets", action="store_true", help="fit the recorded presets only")
    parser.add_argument(
        "--points",
        type=int,
        nargs="+",
        default=None,
        help="search only these grid points (numbered from 0), to split a long search in "
        "parts; the preset is then the best dev score over the parts",
    )
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    threadpool_limits(1)  # like NUMBA_NUM_THREADS=1: one core per experiment
    presets = {t: dict(m) for t, m in SE_DIALOG_BABI_PRESETS.items()}
    rows, chosen = [], {}
    for task in args.tasks:
        td = TaskData(task, args.data_home)
        for model in [m for m in MODELS if m in args.models]:
            start = time.perf_counter()
            if args.presets:
                preset = presets[task][model]
                scores = fit_preset(td, preset)
            else:
                print(f"task {task} {model}: searching", flush=True)
                log = lambda s: print(s, flush=True)  # noqa: E731
                preset, scores = search(td, model, presets, log, args.points)
                presets.setdefault(task, {})[model] = preset
            chosen.setdefault(task, {})[model] = preset
            print(f"task {task} {model}: {preset} -> {scores} ({time.perf_counter() - start:.0f}s)")
            for split in splits(task):
                rows.append(
                    dict(model=model, task=task, split=split, dev=scores["dev"],
                         test=scores[split], paper=PAPER[model][(task, split)])
                )  # fmt: skip
    print()
    print(report(rows))
    if not args.presets:
        print("\nSE_DIALOG_BABI_PRESETS entries:")
        print(json.dumps({str(t): m for t, m in chosen.items()}, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            out = {"rows": rows, "presets": {str(t): m for t, m in chosen.items()}}
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
