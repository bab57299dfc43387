"""Seconds per epoch of the Movie Dialog MemN2N, and where a batch spends them.

The bench preset of ``irdialog bench movie-dialog --model memn2n`` (EntitySymbolRanker over
MemN2NRanker, 72k entity candidates, the KB as long-term memory), fitted on task ``--task``'s
dev split (the suite's dev-as-train protocol) for ``--epochs`` epochs, one thread, once per
``--optimizer``. The kernels of one training step are wrapped in timers to split a batch into
the forward and backward pass with the softmax over every candidate
(``batch_loss_grad``), and the optimizer step: ``apply_update``, which with dense Adam
reads and writes every row of every embedding matrix, or the row-wise ``batch_rows`` +
``apply_update_rows`` of SGD and lazy Adam.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.movie_memn2n_epoch \\
        --data-home DIR --task 1 --optimizer adam lazy_adam \\
        --output benchmarks/results/speed/movie-memn2n-epoch.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict

from threadpoolctl import threadpool_limits

from benchmarks import SpeedBenchmark, finish_speed_result
from irdialog.bench._movie_dialog import _memn2n, entity_candidates
from irdialog.datasets import load_movie_dialog, record_data_files
from irdialog.embed import _memn2n_kernels as K


def _timed(fn, totals, name):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        totals[name] += time.perf_counter() - t
        return out

    return wrapper


def epoch_time(task, optimizer, epochs, data_home):
    candidates = entity_candidates(data_home)
    dev = load_movie_dialog(task, "dev", data_home=data_home)
    model = _memn2n(candidates, data_home, ranker__epochs=epochs, ranker__optimizer=optimizer)
    totals = defaultdict(float)
    step_kernels = ("batch_loss_grad", "apply_update", "batch_rows", "apply_update_rows")
    originals = {name: getattr(K, name) for name in step_kernels}
    try:
        for name, fn in originals.items():
            setattr(K, name, _timed(fn, totals, name))
        t = time.perf_counter()
        model.fit(dev.X, dev.y)
        total = time.perf_counter() - t
    finally:
        for name, fn in originals.items():
            setattr(K, name, fn)
    ranker = model.ranker_
    n_epochs = ranker.n_iter_
    return {
        "task": task,
        "optimizer": optimizer,
        "epochs": int(n_epochs),
        "fit_seconds": total,
        "train_seconds_per_epoch": sum(totals.values()) / n_epochs,
        "batch_loss_grad_seconds_per_epoch": totals["batch_loss_grad"] / n_epochs,
        # the dense step, or the row-wise one with its row collection
        "optimizer_step_seconds_per_epoch": (
            totals["apply_update"] + totals["batch_rows"] + totals["apply_update_rows"]
        )
        / n_epochs,
        "n_examples": len(dev.X),
        "vocabulary": len(ranker.vocabulary_),
        "candidates": len(ranker.candidates_),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--task", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--optimizer", nargs="+", default=["adam", "lazy_adam"])
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    rows = []
    with record_data_files() as files, threadpool_limits(1):
        for optimizer in args.optimizer:
            row = epoch_time(args.task, optimizer, args.epochs, args.data_home)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    finish_speed_result(
        "movie-memn2n-epoch",
        {"rows": rows},
        argv=argv,
        seeds=[0],
        files=files,
        data_home=args.data_home,
        output=args.output,
    )
    return 0


def _table(result: dict) -> list[str]:
    lines = [
        "| task | optimizer | s/epoch (training steps) | forward + backward | optimizer step "
        "| fit s (epochs) |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['task']} | {r['optimizer']} | {r['train_seconds_per_epoch']:.1f} "
            f"| {r['batch_loss_grad_seconds_per_epoch']:.1f} "
            f"| {r['optimizer_step_seconds_per_epoch']:.1f} "
            f"| {r['fit_seconds']:.1f} ({r['epochs']}) |"
        )
    return lines


def _ratios(r):
    out, base = {}, r["rows"][0]
    for row in r["rows"]:
        name, per_epoch = row["optimizer"], row["train_seconds_per_epoch"]
        if row is not base:
            out[f"{name} epoch / {base['optimizer']} epoch"] = (
                per_epoch / base["train_seconds_per_epoch"]
            )
        out[f"{name} optimizer step / epoch"] = row["optimizer_step_seconds_per_epoch"] / per_epoch
    return out


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(table=_table, ratios=_ratios)


if __name__ == "__main__":
    sys.exit(main())
