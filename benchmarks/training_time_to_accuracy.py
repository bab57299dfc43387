"""Time to accuracy: supervised embeddings against StarSpace, over budgets of epochs.

    PYTHONPATH=. python -m benchmarks.training_time_to_accuracy \\
        --starspace ../peers/StarSpace/starspace \\
        --starspace-commit 8aee0a950aa607c023e5c91cff518bec335b5df5 \\
        --tasks 1 --repeat 2 --data-home ../shared/data

A fit of a fixed number of epochs (:mod:`benchmarks.training_peers`) favours whichever side
learns more per epoch, and StarSpace learns far more per epoch than our supervised embeddings
at the same learning rate (its step averages over the violating negatives only, its negatives
are training responses, its learning rate decays over the run). What a user waits for is a
model of a given accuracy. So each side is fitted with each of its budgets of epochs (a whole
run each: StarSpace's learning rate decays over the epochs it is given, so a shorter run is not
a prefix of a longer one), timed (best wall time of ``--repeat`` fits, the sides taking turns)
and scored on the dev split. The target is the highest dev accuracy that every side reaches
within the budgets; a side's time to accuracy is its fastest fit that reaches it.

The model, data and the StarSpace options are those of :mod:`benchmarks.training_peers` (the
``se`` preset of ``irdialog bench dialog-babi``; StarSpace with the same dimension, negatives,
learning rate, margin, initialisation and plain SGD, at each ``--starspace-threads``).
irdialog trains at each ``--irdialog-threads`` (``n_jobs`` 1, the sequential fit, and 2,
Hogwild), and each row gives irdialog's lead over StarSpace on one training thread each and
each at its fastest (:func:`benchmarks.training_peers.leads`). Writes
``benchmarks/results/speed/training-time-to-accuracy.json`` (with provenance and StarSpace's
build) and prints its table.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from benchmarks import RESULTS, SpeedBenchmark, alternate, finish_speed_result, over_irdialog
from benchmarks.training_peers import (
    _irdialog_side,
    _se_setting,
    bag_accuracy,
    lead_table,
    leads,
    run_starspace,
    se_examples,
    starspace_accuracy,
    starspace_args,
    starspace_configuration,
    starspace_trainers,
    starspace_version,
    write_starspace_files,
)
from irdialog.datasets import record_data_files


def time_to_target(curves: dict) -> tuple[float, dict]:
    """The target (the highest score every side reaches) and each side's fastest time to it.

    Parameters
    ----------
    curves : dict of str to list of (epochs, seconds, score)

    Returns
    -------
    target : float
    seconds : dict of str to float

    Examples
    --------
    >>> time_to_target({"a": [(1, 1.0, 50.0), (5, 4.0, 90.0)], "b": [(1, 2.0, 80.0)]})
    (80.0, {'a': 4.0, 'b': 2.0})
    """
    target = min(max(score for _, _, score in points) for points in curves.values())
    return target, {
        side: min(s for _, s, score in points if score >= target) for side, points in curves.items()
    }


def se_curve_row(task, args, workdir) -> dict:
    """The time-to-accuracy row of one dialog bAbI task (see the module docstring)."""
    from irdialog.bench._dialog_babi import _evaluate

    params, trn, dev, make = _se_setting(task, args.data_home, max(args.epochs))
    params = {k: v for k, v in params.items() if k != "epochs"}  # each fit sets its own
    cands = list(trn.candidates)
    dev_examples = se_examples(make(), dev.X, dev.y)
    cand_words = [make()._response_tokens(c) for c in cands]
    position = {c: i for i, c in enumerate(cands)}
    dev_gold = [position[r] for r in dev.y]
    train = write_starspace_files(make(), trn.X, trn.y, workdir, f"se-task{task}-trn.txt")
    make().set_params(epochs=1).fit(trn.X, trn.y)  # compiles (or loads) the kernels

    def accuracy(lookup, U, V):
        return bag_accuracy(lookup, U, V, dev_examples, cand_words, dev_gold)

    ours = {_irdialog_side(t): t for t in args.irdialog_threads}
    configs = {
        side: f"SupervisedEmbeddingRanker, n_jobs={t} "
        f"({'sequential SGD' if t == 1 else 'Hogwild SGD'}), numba"
        for side, t in ours.items()
    }
    theirs = {f"starspace -thread {t}": t for t in args.starspace_threads}
    configs.update((side, starspace_configuration(t)) for side, t in theirs.items())
    budgets = {
        **{side: args.epochs for side in ours},
        **{side: args.starspace_epochs for side in theirs},
    }
    work, models = {}, {}
    for side, epochs_list in budgets.items():
        for epochs in epochs_list:
            key = f"{side}, {epochs} epochs"
            if side in ours:
                work[key] = lambda e=epochs, t=ours[side]: (
                    make(t).set_params(epochs=e).fit(trn.X, trn.y)
                )
                continue
            models[key] = Path(workdir) / f"se-task{task}-{len(models)}"
            work[key] = lambda e=epochs, m=models[key], t=theirs[side]: run_starspace(
                args.starspace, train, m, {**params, "epochs": e}, t
            )
    walls, _, last = alternate(work, args.repeat)
    curves = {side: [] for side in budgets}
    for side, epochs_list in budgets.items():
        for epochs in epochs_list:
            key = f"{side}, {epochs} epochs"
            if side in ours:
                score = _evaluate(last[key], dev)["per_response"]
            else:
                score = starspace_accuracy(models[key], accuracy)
            curves[side].append((epochs, round(min(walls[key]), 3), round(float(score), 2)))
    target, seconds = time_to_target(curves)
    threads = {**ours, **{side: starspace_trainers(t) for side, t in theirs.items()}}
    base = seconds["irdialog"]
    return {
        "workload": f"SE, dialog bAbI task {task}",
        "params": params,
        "examples": len(trn.y),
        "metric": "dev per-response accuracy %",
        "configuration": configs,
        "curves": {side: [list(p) for p in points] for side, points in curves.items()},
        "target": target,
        "seconds_to_target": seconds,
        # the side's time to the target over irdialog's: above 1, irdialog gets there first
        "over_irdialog": {side: round(s / base, 3) for side, s in seconds.items()},
        "threads": threads,
        "leads": leads(seconds, threads),
        "starspace_options": starspace_args({**params, "epochs": "EPOCHS"}),  # each budget
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starspace", required=True, help="the starspace binary")
    ap.add_argument("--starspace-commit", default=None, help="the commit it was built from")
    ap.add_argument("--starspace-threads", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--irdialog-threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--tasks", type=int, nargs="+", default=[1])
    ap.add_argument(
        "--epochs", type=int, nargs="+", default=[1, 2, 5, 10, 20, 50, 100, 150, 200, 270],
        help="the budgets of epochs irdialog is fitted with",
    )  # fmt: skip
    ap.add_argument(
        "--starspace-epochs", type=int, nargs="+", default=[1, 2, 3, 5, 10],
        help="the budgets of epochs StarSpace is fitted with (an epoch of StarSpace costs "
        "over a hundred of irdialog's)",
    )  # fmt: skip
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--output", default=str(RESULTS / "speed" / "training-time-to-accuracy.json"))
    args = ap.parse_args(argv)
    if min(args.epochs + args.starspace_epochs) < 1:
        ap.error("--epochs: every budget must be at least 1")
    with record_data_files() as files, tempfile.TemporaryDirectory() as workdir:
        rows = [se_curve_row(task, args, workdir) for task in args.tasks]
    fields = {
        "cores": os.cpu_count(),
        "repeat": args.repeat,
        "peers": {"starspace": starspace_version(args.starspace, args.starspace_commit)},
        "rows": rows,
    }
    finish_speed_result(
        "training-time-to-accuracy", fields, argv=argv, files=files, seeds=[0],
        data_home=args.data_home, output=args.output,
    )  # fmt: skip


def _table(result: dict) -> list[str]:
    lines = [
        f"Each side fitted with each budget of epochs on a {result['cores']}-core machine "
        f"(best wall time of {result['repeat']} fits, the sides taking turns), its dev "
        "accuracy after each budget, and its fastest fit to the target: the "
        "highest accuracy every side reaches. Above 1x, irdialog on one thread gets there "
        "first:",
        "",
        "| workload | side | configuration | epochs: s, accuracy | target | s to target "
        "| side / irdialog |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for r in result["rows"]:
        for side, points in r["curves"].items():
            curve = "; ".join(f"{e}: {s:.2f}, {a:.2f}" for e, s, a in points)
            lines.append(
                f"| {r['workload']} | {side} | {r['configuration'][side]} | {curve} "
                f"| {r['target']:.2f} | {r['seconds_to_target'][side]:.2f} "
                f"| {r['over_irdialog'][side]:.2f}x |"
            )
    return lines + lead_table(result["rows"])


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=lambda r: over_irdialog(r, ", time to accuracy"),
    programs={"--starspace": "StarSpace"},
)


if __name__ == "__main__":
    main()
