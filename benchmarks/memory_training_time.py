"""CPU seconds to train the memory models on bAbI QA tasks, one thread: MemN2N, the gated
MemN2N and QRN at their bench presets.

For each task of ``--tasks``, each model is fitted on the task's whole training file (1,000
questions) with its ``irdialog bench babi-qa`` preset but one run (``n_init=1``: one
restart of the preset's epochs); the models take turns, ``--repeat`` rounds
(:func:`benchmarks.alternate`), and the table gives each model's best CPU seconds, its
ratio to MemN2N's, and the presets' restarts, by which a bench fit multiplies a run.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python -m benchmarks.memory_training_time --data-home DIR --tasks 1 2 3 \\
        --repeat 3 --output benchmarks/results/speed/memory-training-time.json
"""

from __future__ import annotations

import argparse
import sys

from threadpoolctl import threadpool_limits

from benchmarks import SpeedBenchmark, alternate, babi_workload, finish_speed_result
from irdialog.bench import load_presets
from irdialog.bench._babi_qa import BABI_QA_MODELS
from irdialog.datasets import load_babi_qa, record_data_files

MODELS = ("memn2n", "gmemn2n", "qrn")


def task_work(task: int, data_home=None) -> tuple[dict, dict]:
    """``({model: fit}, {model: preset n_init})`` for one task: each ``fit()`` trains a
    fresh model with the task's preset and one run, and returns its training accuracy."""
    train = load_babi_qa(task, "train", data_home=data_home)
    work, restarts = {}, {}
    for name in MODELS:
        params = dict(load_presets("babi-qa", name)[task].params)
        restarts[name] = int(params.pop("n_init", 1))
        build = BABI_QA_MODELS[name].build

        def fit(build=build, params=params):
            model = build(**params, n_init=1).fit(train.X, train.y)
            return float(model.score(train.X, train.y))

        work[name] = fit
    return work, restarts


def threads_workloads(data_home=None, ubuntu_home=None) -> list[dict]:
    """The fits of QRN that the ``n_jobs`` benchmark (:mod:`benchmarks.training_threads`)
    times (``ubuntu_home`` unused): bAbI QA tasks 1 and 3 at the bench's preset but one
    run (``n_init=1``), whose mini-batches the threads share, then at the preset's 10
    restarts, which the threads share. Each is a dict as :func:`benchmarks.babi_workload`
    returns."""
    one = "QRNRanker (one run)"
    return [
        babi_workload("qrn", one, 1, data_home, n_init=1),
        babi_workload("qrn", one, 3, data_home, n_init=1),
        babi_workload("qrn", "QRNRanker (10 restarts)", 1, data_home),
        babi_workload("qrn", "QRNRanker (10 restarts)", 3, data_home),
    ]


def memnn_threads_workloads(data_home=None, ubuntu_home=None) -> list[dict]:
    """The fits of the strongly supervised Memory Network that the ``n_jobs`` benchmark
    times (``ubuntu_home`` unused): bAbI QA tasks 1 and 3 at the bench's ``memnn`` preset
    (Hogwild epochs on the threads), each a dict as :func:`benchmarks.babi_workload`
    returns."""
    return [babi_workload("memnn", "MemNNQA", task, data_home) for task in (1, 3)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    rows = []
    with record_data_files() as files, threadpool_limits(1):
        for task in args.tasks:
            work, restarts = task_work(task, args.data_home)
            _, cpu, accuracy = alternate(work, args.repeat, warm_up=True)
            row = {
                "task": task,
                "seconds_per_run": {name: min(cpu[name]) for name in MODELS},
                "cpu_seconds": cpu,
                "restarts": restarts,
                "train_accuracy": accuracy,
            }
            rows.append(row)
            print(row, file=sys.stderr)
    finish_speed_result(
        "memory-training-time",
        {"models": list(MODELS), "repeat": args.repeat, "rows": rows},
        argv=argv,
        seeds=[0],
        files=files,
        data_home=args.data_home,
        output=args.output,
    )
    return 0


def _table(result: dict) -> list[str]:
    names = {"memn2n": "MemN2N", "gmemn2n": "gated MemN2N", "qrn": "QRN"}
    models = result["models"]
    lines = [
        "CPU seconds to train one run of each memory model on a bAbI QA task at its bench "
        f"preset (the task's 1,000 training questions; one thread; best of {result['repeat']} "
        "fits, the models taking turns), its ratio to MemN2N's, and the presets' restarts "
        "(n_init), by which a bench fit multiplies a run:",
        "",
        "| task | "
        + " | ".join(f"{names[m]}, s" for m in models)
        + " | "
        + " | ".join(f"{names[m]} / MemN2N" for m in models[1:])
        + " | restarts |",
        "|---:|" + "---:|" * (2 * len(models) - 1) + "---|",
    ]
    for r in result["rows"]:
        seconds = r["seconds_per_run"]
        base = seconds[models[0]]
        restarts = ", ".join(f"{names[m]} {r['restarts'][m]}" for m in models)
        lines.append(
            f"| {r['task']} | "
            + " | ".join(f"{seconds[m]:.2f}" for m in models)
            + " | "
            + " | ".join(f"{seconds[m] / base:.2f}x" for m in models[1:])
            + f" | {restarts} |"
        )
    return lines


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=lambda r: {
        f"task {row['task']} {m} / {r['models'][0]}": (
            row["seconds_per_run"][m] / row["seconds_per_run"][r["models"][0]]
        )
        for row in r["rows"]
        for m in r["models"][1:]
    },
)


if __name__ == "__main__":
    sys.exit(main())
