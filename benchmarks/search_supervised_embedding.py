"""Choose SupervisedEmbeddingRanker hyper-parameters on the dialog bAbI dev sets (Bordes et
al. 2017, Tables 2 and 10): the search that wrote ``irdialog/data/presets/dialog-babi-se*.json``.

Three models, as in the paper's supervised-embedding columns:

- ``se``: plain supervised embeddings (Table 2);
- ``se-type``: with match-type features (Table 10), the contexts annotated by a
  ``MatchTypeFeaturizer`` in a Pipeline (``match_type="match"``), or, for inputs without
  history, the paper's "type regardless of a match" variant (``match_type="type"``);
- ``se-bigrams``: unigrams and bigrams (Table 10).

Protocol (the test files are never loaded):

1. ``use_history``, ``embedding_dim`` and ``n_negatives`` are the paper's own dev choices per
   task (Bordes et al. 2016, Table 8).
2. ``se``: a grid of learning rate x margin (x ``normalize_input`` for whole-conversation
   inputs, see :func:`grid`); each point is trained on trn with early stopping on dev
   (hits@1 after every epoch, patience 20; the epoch count is thus chosen on dev too) and
   the point with the best dev accuracy wins (ties: the first grid point).
3. ``se-bigrams`` searches the same grid as ``se``, with bigrams. ``se-type`` starts from
   the ``se`` preset of the task (its learning rate, margin and input scaling) and searches
   only what it adds: the match-type variant (``"match"``; also ``"type"`` for inputs
   without history) and the type set (the paper's 7 KB types, or all types including
   restaurant names).

A preset fitted with its recorded ``epochs`` and no early stopping reproduces the chosen
model bit for bit (the seed fixes the initialisation, the example order and the negatives;
validation draws no random numbers): ``irdialog bench dialog-babi --model se`` fits them.

Usage (each call under about 10 minutes on one core; split the longest searches, those of
task 5, with ``--points``)::

    NUMBA_NUM_THREADS=1 python -m benchmarks.search_supervised_embedding \
        --data-home DIR --tasks 1 2 --models se --presets-output /tmp/se.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

from irdialog.bench import load_presets, read_presets, write_presets
from irdialog.bench._presets import preset_path
from irdialog.datasets import load_dialog_babi
from irdialog.embed import SupervisedEmbeddingRanker
from irdialog.features import MatchTypeFeaturizer

MODELS = ("se", "se-type", "se-bigrams")
COMMAND = ("python", "-m", "benchmarks.search_supervised_embedding")

# Bordes et al. 2017, Table 8 (the paper's dev choices): input, dimension, negatives.
TABLE8 = {
    1: dict(use_history=True, embedding_dim=32, n_negatives=100),
    2: dict(use_history=False, embedding_dim=128, n_negatives=100),
    3: dict(use_history=False, embedding_dim=128, n_negatives=1000),
    4: dict(use_history=False, embedding_dim=128, n_negatives=1000),
    5: dict(use_history=True, embedding_dim=32, n_negatives=100),
    6: dict(use_history=False, embedding_dim=128, n_negatives=100),
}

# Common to every run: the seed, and the early-stopping budget of the search.
COMMON = dict(random_state=0)
MAX_EPOCHS = {True: 300, False: 150}  # by use_history: long inputs learn more slowly
PATIENCE = 20


def kb_types(kb, types):
    every = sorted(set(kb.values()))
    return every if types == "all" else [t for t in every if t != "R_name"]


class TaskData:
    """A task's trn and dev splits, and their match-type annotations (cached)."""

    def __init__(self, task, data_home=None):
        self.task = task
        self.data = {s: load_dialog_babi(task, s, data_home) for s in ("trn", "dev")}
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
        if params.get("match_type") == "type":
            keep = set(kb_types(self.trn.kb, types))
            params["kb"] = {e: t for e, t in self.trn.kb.items() if t in keep}
            types = None  # the ranker types words itself; contexts need no annotation
        model = SupervisedEmbeddingRanker(
            candidates=self.trn.candidates, **COMMON, **params, **extra
        )
        return model, types


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
    base = {k: v for k, v in presets[task]["se"].items() if k != "epochs"}
    modes = ("match",) if t8["use_history"] else ("match", "type")
    return [dict(base, match_type=mode, types=ts) for mode in modes for ts in ("paper", "all")]


def search(td: TaskData, model: str, presets, log, points=None) -> dict:
    """Fit every grid point (or those numbered in ``points``) with early stopping on dev;
    return the best as a preset entry ``{"task", "params", "selection"}``."""
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
            best = (dev, dict(point, epochs=best_epoch))
    dev, preset = best
    return {"task": td.task, "params": preset, "selection": {"dev_per_response": round(dev, 2)}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument(
        "--points",
        type=int,
        nargs="+",
        default=None,
        help="search only these grid points (numbered from 0), to split a long search in "
        "parts; the preset is then the best dev score over the parts",
    )
    parser.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    parser.add_argument(
        "--presets-output",
        default=None,
        help="write each model's chosen presets to this file (the model's name is appended "
        "before .json when several models are searched)",
    )
    args = parser.parse_args(argv)
    threadpool_limits(1)  # like NUMBA_NUM_THREADS=1: one core per experiment
    # se-type starts from the se preset of its task: the recorded one, or the one found here.
    presets = {t: {"se": p.params} for t, p in load_presets("dialog-babi", "se").items()}
    chosen = {model: [] for model in args.models}
    for task in args.tasks:
        td = TaskData(task, args.data_home)
        for model in [m for m in MODELS if m in args.models]:
            start = time.perf_counter()
            print(f"task {task} {model}: searching", flush=True)
            entry = search(td, model, presets, lambda s: print(s, flush=True), args.points)
            presets.setdefault(task, {})[model] = entry["params"]
            chosen[model].append(entry)
            print(f"task {task} {model}: {json.dumps(entry)} ({time.perf_counter() - start:.0f}s)")
    if args.presets_output:
        for model, entries in chosen.items():
            path = args.presets_output
            if len(chosen) > 1:
                path = path.removesuffix(".json") + f"-{model}.json"
            write_presets(
                path,
                suite="dialog-babi",
                model=model,
                search=shlex.join(
                    [
                        "python",
                        "-m",
                        "benchmarks.search_supervised_embedding",
                        *(argv or sys.argv[1:]),
                    ]
                ),
                chosen=entries,
                notes=read_presets(preset_path("dialog-babi", model))["notes"],
            )


if __name__ == "__main__":
    main()
