"""Training on several threads: a fit with ``n_jobs=N`` against the same fit with one.

    python -m benchmarks.training_threads [--models recurrent memn2n qrn svm] [--jobs 1 2] \
        [--repeat 3] [--data-home DIR] [--ubuntu-home DIR] \
        [--output benchmarks/results/speed/training-threads.json]

Each model family's speed script names its bench workloads (``threads_workloads`` of
:mod:`benchmarks.speed` (supervised embeddings), :mod:`benchmarks.recurrent_speed`,
:mod:`benchmarks.speed_memn2n` and :mod:`benchmarks.memory_training_time` (QRN); the
structured SVM, which no speed script times, has :func:`svm_threads_workloads` here):
an estimator built with the bench's settings for a given ``n_jobs``, its fit on the
training data, and its score on the dev or validation data. The fits with each ``n_jobs``
take turns (:func:`benchmarks.alternate`, so that a busy spell of the machine hits every
side alike), after a warm-up fit each; a side's time is its best wall-clock fit over the
rounds in which the rest of the machine stayed idle (:func:`time_workload`). BLAS is held
to one thread on every side, so that only the fit's own threads differ. The score of each
``n_jobs`` is that of its last fit: a seeded fit may differ with another ``n_jobs``, and
a Hogwild one (supervised embeddings) from one run to the next (the estimators' ``n_jobs``
docstrings say how). Each row records the machine's load averages (``os.getloadavg``)
before and after its fits, and the result numba's threading layer and the OpenMP wait
policy: OpenMP's default, spinning, stalls a parallel region when the machine's other
processes hold the cores, where ``OMP_WAIT_POLICY=PASSIVE`` does not.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import time

import numba
from threadpoolctl import threadpool_limits

from benchmarks import (
    SpeedBenchmark,
    alternate,
    babi_workload,
    finish_speed_result,
    machine_cpu_seconds,
)
from irdialog.datasets import record_data_files

# The speed script of each model family whose fit trains on threads, which declares its
# workloads: its ``threads_workloads``, or the function named after a colon.
SCRIPTS = {
    "se": "benchmarks.speed",
    "recurrent": "benchmarks.recurrent_speed",
    "memn2n": "benchmarks.speed_memn2n",
    "qrn": "benchmarks.memory_training_time",
    "memnn": "benchmarks.memory_training_time:memnn_threads_workloads",
    "svm": "benchmarks.training_threads:svm_threads_workloads",
}


def workloads(model: str, data_home=None, ubuntu_home=None) -> list[dict]:
    """The workloads of one model family (see the module docstring); ``ubuntu_home``: the
    synthetic Ubuntu corpus (None: the script makes one in a temporary directory)."""
    module, _, function = SCRIPTS[model].partition(":")
    declare = getattr(importlib.import_module(module), function or "threads_workloads")
    return declare(data_home=data_home, ubuntu_home=ubuntu_home)


def svm_threads_workloads(data_home=None, ubuntu_home=None) -> list[dict]:
    """The fits of the structured SVM that the benchmark times (``ubuntu_home`` unused):
    bAbI QA tasks 1 and 3 at the bench's preset, with the supporting facts, whose stage-1
    searches the threads share. Each is a dict as :func:`benchmarks.babi_workload`
    returns."""
    name = "StructuredSVMQA"
    return [babi_workload("struct-svm", name, task, data_home) for task in (1, 3)]


def time_workload(work: dict, jobs, repeat: int) -> dict:
    """Fit ``work`` with each ``n_jobs`` of ``jobs`` in turn, ``repeat`` rounds after a
    warm-up fit each.

    Another process taking a core during a fit slows the threaded side more than the
    other, so each fit records the CPU seconds the rest of the machine ran meanwhile
    (/proc/stat less this process); the best times are taken over the rounds in which no
    side's fit had the rest of the machine above 5% of a core (over every round when no
    round was quiet: ``quiet_rounds`` says how many were)."""
    others: dict[int, list[float]] = {n: [] for n in jobs}

    def fit(n):
        machine, own = machine_cpu_seconds(), time.process_time()
        fitted = work["fit"](work["make"](n))
        if machine is not None:
            others[n].append(machine_cpu_seconds() - machine - (time.process_time() - own))
        return fitted

    load_before = [round(v, 2) for v in os.getloadavg()]
    with threadpool_limits(limits=1, user_api="blas"):
        sides = {str(n): functools.partial(fit, n) for n in jobs}
        wall, cpu, last = alternate(sides, repeat, warm_up=True)
    load_after = [round(v, 2) for v in os.getloadavg()]
    busy = {n: (others[n][-repeat:] or [0.0] * repeat) for n in jobs}
    quiet = [r for r in range(repeat) if all(busy[n][r] < 0.05 * wall[str(n)][r] for n in jobs)]
    rounds = quiet or list(range(repeat))
    best = {n: min(wall[str(n)][r] for r in rounds) for n in jobs}
    base = best[jobs[0]]
    return {
        "workload": work["name"],
        "metric": work["metric"],
        "seconds": {str(n): round(best[n], 3) for n in jobs},
        # CPU seconds of this process (all its threads): the work done, whatever the load
        "cpu_seconds": {str(n): round(min(cpu[str(n)][r] for r in rounds), 3) for n in jobs},
        "speedup": {str(n): round(base / best[n], 3) for n in jobs},
        "quiet_rounds": len(quiet),
        "others_cpu_seconds": {str(n): [round(v, 2) for v in busy[n]] for n in jobs},
        "score": {str(n): round(float(work["score"](last[str(n)])), 2) for n in jobs},
        # the 1, 5 and 15-minute load averages before and after the fits
        "load_average": {"before": load_before, "after": load_after},
    }


def _threading_layer():
    """The threading layer numba's parallel regions ran on (None if none ran)."""
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region ran yet
        return None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=sorted(SCRIPTS), default=list(SCRIPTS))
    parser.add_argument("--jobs", nargs="+", type=int, default=[1, 2], metavar="N")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", type=int, nargs="+", metavar="I",
        help="time only these workloads of each model family (numbered from 0)",
    )  # fmt: skip
    parser.add_argument("--data-home", default=None)
    parser.add_argument(
        "--ubuntu-home", default=None, metavar="DIR",
        help="the synthetic 10k-row Ubuntu corpus (benchmarks.make_ubuntu_corpus --train-rows "
        "10000 --eval-rows 1000 --words 20000 --topics 50); default: made in a temporary "
        "directory, which a re-run cannot find again",
    )  # fmt: skip
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    if args.jobs[0] != 1:
        parser.error("--jobs must start with 1, the single-thread fit the others are timed against")
    rows = []
    with record_data_files() as files:
        for model in args.models:
            for i, work in enumerate(
                workloads(model, args.data_home, ubuntu_home=args.ubuntu_home)
            ):
                if args.only is not None and i not in args.only:
                    continue
                row = {"model": model, **time_workload(work, args.jobs, args.repeat)}
                print(row, flush=True)
                rows.append(row)
    finish_speed_result(
        "training-threads",
        {
            "cores": os.cpu_count(),
            "jobs": args.jobs,
            "repeat": args.repeat,
            "rows": rows,
            "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "numba_threading_layer": _threading_layer(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        },  # fmt: skip
        argv=argv,
        files=files,
        seeds=[0],
        data_home=args.data_home,
        output=args.output,
    )


PROJECTED_CORES = (8, 16)


def amdahl(speedup: float, threads: int, cores: int) -> float:
    """The speed-up on ``cores`` that Amdahl's law projects from a measured ``speedup`` on
    ``threads``: the serial share ``f`` solves ``speedup = 1 / (f + (1 - f) / threads)``
    (0 when the measure reaches ``threads`` or more), then ``1 / (f + (1 - f) / cores)``.

    >>> round(amdahl(1.8, 2, 8), 2), amdahl(2.1, 2, 16)
    (4.5, 16.0)
    """
    f = min(max((threads / speedup - 1) / (threads - 1), 0.0), 1.0)
    return 1.0 / (f + (1 - f) / cores)


def _table(result: dict) -> list[str]:
    jobs = [str(n) for n in result["jobs"]]
    many = jobs[1:]
    top = int(many[-1]) if many else 1
    project = top > 1 and result["cores"] <= top
    lines = [
        f"A fit with `n_jobs=N` against the same fit with one thread, on a {result['cores']}-core "
        f"machine (best of {result['repeat']} fits per side after a warm-up fit, the sides "
        "taking turns, over the rounds in which no other process took more than 5% of a core; "
        "BLAS on one thread throughout), and each fitted model's score"
        + (
            f"; beside them, the speed-up Amdahl's law projects on "
            f"{' and '.join(map(str, PROJECTED_CORES))} cores from the serial share the "
            f"{top}-thread speed-up implies (a projection, not a measurement: it counts no "
            "memory bandwidth and no Hogwild contention, and takes a share of 0 where "
            f"{top} threads reached {top}x)"
            if project
            else ""
        )
        + ":",
        "",
        "| workload | one thread, s | "
        + " | ".join(f"n_jobs={n}, s | speed-up" for n in many)
        + "".join(f" | projected, {c} cores" for c in PROJECTED_CORES if project)
        + " | metric | "
        + " | ".join(f"n_jobs={n}" for n in jobs)
        + " | quiet rounds |",
        "|---|---:|"
        + "---:|---:|" * len(many)
        + "---:|" * (len(PROJECTED_CORES) if project else 0)
        + "---|"
        + "---:|" * len(jobs)
        + "---:|",
    ]
    for r in result["rows"]:
        times = " | ".join(f"{r['seconds'][n]:.2f} | {r['speedup'][n]:.2f}x" for n in many)
        if project:
            times += "".join(
                f" | {amdahl(r['speedup'][many[-1]], top, c):.1f}x" for c in PROJECTED_CORES
            )
        scores = " | ".join(f"{r['score'][n]:.2f}" for n in jobs)
        one = f"{r['seconds'][jobs[0]]:.2f}"
        quiet = f"{r['quiet_rounds']} of {result['repeat']}"
        lines.append(f"| {r['workload']} | {one} | {times} | {r['metric']} | {scores} | {quiet} |")
    return lines


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=lambda r: {
        f"{row['workload']} speed-up at n_jobs={n}": row["speedup"][str(n)]
        for row in r["rows"]
        for n in r["jobs"][1:]
    },
)


if __name__ == "__main__":
    main()
