"""Choose the per-task presets of the classical bAbI QA models on validation data.

For each task, every point of the model's grid is fitted on the first 80% of the stories of
the training file and scored on the last 20%; the test files are never looked at. The
output is what ``NGRAM_PRESETS`` / ``STRUCT_SVM_PRESETS`` in ``irdialog/bench/_babi.py``
record, and ``irdialog bench babi-qa --model ngram|struct-svm`` uses::

    python benchmarks/babi_qa_classical.py --model struct-svm --data-home ../shared/data
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.model_selection import ParameterGrid
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from irdialog.bench._babi import (
    NGRAM_GRID,
    STRUCT_SVM_GRID,
    VALID_FRACTION,
    ngram_model,
    struct_svm_model,
)
from irdialog.datasets import load_babi_qa

TUNING = {
    "ngram": (ngram_model, NGRAM_GRID, False),
    "struct-svm": (struct_svm_model, STRUCT_SVM_GRID, True),
}


def tune_babi_qa(model, tasks=range(1, 21), lang="en", data_home=None, progress=True) -> dict:
    """Each task's best grid point by accuracy on the last 20% of its training stories, the
    model being fitted on the first 80%. Returns ``{task: {**point, "valid_accuracy"}}``."""
    build, grid, strong = TUNING[model]
    points = list(ParameterGrid(grid))
    chosen = {}
    bar = tqdm(total=len(tasks) * len(points), desc=f"tune {model}", disable=not progress)
    for task in tasks:
        train = load_babi_qa(task, "train", lang=lang, data_home=data_home)
        cut = int(np.ceil((max(train.groups) + 1) * (1 - VALID_FRACTION)))
        fit = [i for i, g in enumerate(train.groups) if g < cut]
        valid = [i for i, g in enumerate(train.groups) if g >= cut]
        X, y = [train.X[i] for i in fit], [train.y[i] for i in fit]
        extra = {"supporting": [train.supporting[i] for i in fit]} if strong else {}
        best = None
        for point in points:
            est = build(**point).fit(X, y, **extra)
            acc = 100.0 * est.score([train.X[i] for i in valid], [train.y[i] for i in valid])
            if best is None or acc > best[0]:
                best = (acc, point)
            bar.update()
        chosen[task] = {**best[1], "valid_accuracy": round(best[0], 2)}
    bar.close()
    return chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, choices=sorted(TUNING))
    parser.add_argument("--tasks", nargs="+", type=int, default=list(range(1, 21)))
    parser.add_argument("--lang", default="en")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with threadpool_limits(limits=1):  # the models are single-threaded; the machine is shared
        chosen = tune_babi_qa(args.model, args.tasks, args.lang, args.data_home, not args.quiet)
    print(json.dumps(chosen, indent=1))
    print(f"{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
