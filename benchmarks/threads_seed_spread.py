"""Does a fit on two threads land inside the seed spread of one thread?

    python -m benchmarks.threads_seed_spread --models memnn [--workloads "task 3"] \
        [--seeds 10] [--data-home DIR] [--ubuntu-home DIR]

A fit with ``n_jobs > 1`` may be Hogwild and need not repeat a seed bit for bit; it must
score inside the spread of the one-thread fits. For each bench workload of
:mod:`benchmarks.training_threads` of the models named (``--workloads``: only those whose
name holds one of the strings given), this fits seeds 0 to ``--seeds`` - 1 with ``n_jobs``
1 and 2 (:func:`irdialog.bench.reseed`), BLAS held to one thread, and prints a Markdown
row per workload: each side's scores, their mean and standard deviation, and whether the
two-thread mean lies inside the one-thread range. Nothing is timed; nothing is written.
"""

from __future__ import annotations

import argparse

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.training_threads import SCRIPTS, workloads
from irdialog.bench import reseed


def spread_row(work: dict, seeds: int) -> dict:
    """The scores of ``work`` (a workload of :mod:`benchmarks.training_threads`) at seeds
    ``0 .. seeds - 1``, per ``n_jobs`` (1 and 2), and whether the mean of two threads lies
    inside the range of one."""
    scores = {1: [], 2: []}
    for seed in range(seeds):
        for n_jobs in scores:
            est = reseed(work["make"](n_jobs), seed)
            work["fit"](est)
            scores[n_jobs].append(round(float(work["score"](est)), 2))
    one, two = scores[1], float(np.mean(scores[2]))
    return {"workload": work["name"], "scores": scores, "inside": min(one) <= two <= max(one)}


def markdown(row: dict) -> str:
    """One table row of :func:`spread_row`'s result.

    Examples
    --------
    >>> markdown({"workload": "w", "scores": {1: [20.0, 24.0], 2: [22.0, 23.0]},
    ...           "inside": True})
    '| w | 20.0, 24.0 | 22.00 ± 2.00 | 22.0, 23.0 | 22.50 ± 0.50 | yes |'
    """
    cells = [row["workload"]]
    for n_jobs in (1, 2):
        s = row["scores"][n_jobs]
        cells += [", ".join(map(str, s)), f"{np.mean(s):.2f} ± {np.std(s):.2f}"]
    return "| " + " | ".join([*cells, "yes" if row["inside"] else "no"]) + " |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", choices=sorted(SCRIPTS), required=True)
    ap.add_argument("--workloads", nargs="*", default=[], help="substrings of workload names")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--ubuntu-home", default=None)
    args = ap.parse_args(argv)
    if args.seeds < 2:
        ap.error("--seeds: a spread needs at least 2 seeds")
    print("| workload | n_jobs=1 | mean ± std | n_jobs=2 | mean ± std | 2-thread mean inside? |")
    print("|---|---|---:|---|---:|---|")
    with threadpool_limits(1):
        for model in args.models:
            for work in workloads(model, args.data_home, args.ubuntu_home):
                if args.workloads and not any(w in work["name"] for w in args.workloads):
                    continue
                print(markdown(spread_row(work, args.seeds)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
