"""Evidence for the Movie Dialog gaps: held-out score against the number of training dialogs.

The suite trains on the dev files (about 10k examples) where the paper trained on the training
files (96k QA questions, 1M recommendation dialogs). This script fits a model of the suite, at
its chosen point (read from the bench JSON), on 25%, 50% and 100% of the fit part of dev and
scores the held-out 20% of the dev dialogs (the suite's split). A curve still rising at 100%
says the model is short of data. ``--set`` changes parameters of that point (the optimizer
and epoch comparisons of BENCHMARKS.md). Test is never read.

Usage::

    python -m benchmarks.movie_dialog_learning_curve --task 1 --model memn2n \\
        --params benchmarks/results/movie-dialog-memn2n-task1.json --data-home DIR
"""

from __future__ import annotations

import argparse
import ast
import json

import numpy as np
from sklearn.utils import Bunch

from irdialog.bench._movie_dialog import (
    MOVIE_DIALOG_MODELS,
    TASK_METRIC,
    entity_candidates,
    gold_lists,
    heldout_score,
    heldout_split,
)
from irdialog.datasets import load_movie_dialog


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", type=int, choices=sorted(TASK_METRIC), required=True)
    ap.add_argument("--model", required=True, choices=sorted(MOVIE_DIALOG_MODELS))
    ap.add_argument("--params", required=True, help="bench JSON holding the chosen point")
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    ap.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="override parameters of the chosen point (values read as Python literals), "
        "e.g. ranker__epochs=30 ranker__optimizer='sgd'",
    )
    args = ap.parse_args(argv)
    result = json.loads(open(args.params, encoding="utf-8").read())
    if (result["suite"], result["model"]) != ("movie-dialog", args.model):
        ap.error(f"{args.params} is not a movie-dialog {args.model} result")
    [chosen] = result["runs"][0]["chosen"]  # seed 0's choice
    point = dict(chosen["params"])
    for item in args.set:
        name, _, value = item.partition("=")
        point[name] = ast.literal_eval(value)
    metric, k = TASK_METRIC[args.task]
    candidates = entity_candidates(args.data_home)
    dev = load_movie_dialog(args.task, "dev", data_home=args.data_home)
    gold, _ = gold_lists(dev.answers, candidates)
    fit_idx, held_idx = heldout_split(dev.groups)
    groups = np.asarray(dev.groups)[fit_idx]
    order = np.random.default_rng(0).permutation(np.unique(groups))
    X_held, gold_held = [dev.X[i] for i in held_idx], [gold[i] for i in held_idx]
    spec = MOVIE_DIALOG_MODELS[args.model]
    for fraction in args.fractions:
        keep = set(order[: int(round(fraction * len(order)))].tolist())
        rows = [i for i, g in zip(fit_idx, groups) if g in keep]
        model = spec.build(Bunch(candidates=candidates, data_home=args.data_home), **point)
        model.fit([dev.X[i] for i in rows], [dev.y[i] for i in rows])
        held = heldout_score(model, X_held, gold_held, k)
        print(
            f"task {args.task} {args.model} {args.set} fraction={fraction} n_fit={len(rows)} "
            f"heldout_{metric}={held:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
