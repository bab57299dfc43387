"""The speed runs, evidence and data generators behind BENCHMARKS.md.

Run from the repository root as ``python -m benchmarks.<module> --help``. The paper suites
themselves, and the searches that write their presets, are ``irdialog bench`` (the harness
``irdialog.bench``), which these modules import; each takes ``--data-home`` (default:
``$IRDIALOG_DATA``, then the bundled samples).

- ``speed``, ``speed_memn2n``, ``recurrent_speed``, ``retrieval_speed``, ``pool_speed``,
  ``movie_memn2n_epoch``, ``compile_time``: the speed benchmarks; each ends in
  :func:`finish_speed_result` (provenance, table, JSON in ``benchmarks/results/speed/``),
  and each comparison with a reference (numpy's matmul, a peer library) times the two in
  turn with :func:`alternate`;
- ``movie_dialog_learning_curve``, ``movie_dialog_coverage``, ``tfidf_type_task4_dev``,
  ``rule_based_coverage``, ``ubuntu_cooccurrence_probe``: evidence for the shortfalls
  reported in BENCHMARKS.md;
- ``make_shuffled_babi``, ``make_hindi_babi``, ``make_ubuntu_corpus``: data sets the suites
  run on;
- ``gallery``: the pictures of ``irdialog.plot`` in ``docs/gallery/`` and ``docs/gallery.md``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine_cpu_seconds() -> float | None:
    """CPU seconds every process of the machine has run (Linux's /proc/stat; None
    elsewhere)."""
    try:
        with open("/proc/stat") as f:
            user, nice, system = (int(v) for v in f.readline().split()[1:4])
    except OSError:
        return None
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of the children it waited for (a
    peer run as a program)."""
    own = time.process_time()
    try:
        import resource

        children = resource.getrusage(resource.RUSAGE_CHILDREN)
    except ImportError:  # not on Windows
        return own
    return own + children.ru_utime + children.ru_stime


_STARTED = (time.perf_counter(), _own_cpu_seconds(), machine_cpu_seconds())


def machine_load() -> dict | None:
    """What the rest of the machine ran since this package was imported (the start of a
    speed run): ``{"wall_seconds", "others_cpu_seconds"}``, the CPU seconds of every other
    process. A speed figure is only as good as this is small. None where the OS does not
    say (Linux's /proc/stat)."""
    wall, own, machine = _STARTED
    now = machine_cpu_seconds()
    if machine is None or now is None:
        return None
    others = (now - machine) - (_own_cpu_seconds() - own)
    return {
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "others_cpu_seconds": round(max(others, 0.0), 1),
    }


def alternate(work: dict, repeat: int, *, warm_up: bool = False):
    """Call each function of ``work`` in turn, ``repeat`` rounds, so that a busy spell of a
    shared machine (or a drift of its clock speed) hits every side alike.

    Parameters
    ----------
    work : dict of str to callable
        The sides, called without arguments.
    repeat : int
    warm_up : bool, default=False
        Call each side once, untimed, first (compilation, caches, the allocator).

    Returns
    -------
    wall, cpu : dict of str to list of float
        Every call's wall seconds (``time.perf_counter``) and CPU seconds of this process
        (``time.process_time``: with one thread per side, the work done whatever else runs).
    last : dict of str to object
        Each side's last return value.
    """
    if warm_up:
        for fn in work.values():
            fn()
    wall = {name: [] for name in work}
    cpu = {name: [] for name in work}
    last = {}
    for _ in range(repeat):
        for name, fn in work.items():
            c, t = time.process_time(), time.perf_counter()
            last[name] = fn()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    return wall, cpu, last


def finish_speed_result(
    name, fields, *, argv, files=(), seeds=(), data_home=None, output=None, libraries=None
):
    """The JSON of a speed benchmark: ``{"benchmark": name, **fields, "machine_load",
    "provenance"}`` (:func:`machine_load`), printed as its BENCHMARKS.md table
    (``irdialog.bench._speed_tables``) and written to ``output`` (when given).
    ``libraries`` adds versions to the provenance's (a peer such as torch)."""
    from irdialog.bench import provenance
    from irdialog.bench._speed_tables import SPEED_TABLES

    module = name.replace("-", "_")
    record = provenance(
        command=["python", "-m", f"benchmarks.{module}", *(sys.argv[1:] if argv is None else argv)],
        seeds=seeds,
        files=files,
        data_home=data_home,
    )
    record["libraries"].update(libraries or {})
    load = machine_load()
    result = {"benchmark": name, **fields, "machine_load": load, "provenance": record}
    print("\n".join(SPEED_TABLES[name](result)))
    if output:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def babi_workload(model: str, name: str, task: int, data_home=None, epochs=None) -> dict:
    """A training workload of :mod:`benchmarks.training_threads`: ``model`` of ``irdialog
    bench babi-qa`` at its preset for one task (``epochs`` capped when given), fitted and
    scored as ``--heldout`` does: on the first share of the training stories, scored on
    the rest (the test file is never read)."""
    from irdialog.bench._babi_qa import BABI_QA_MODELS, SUITE_NAME, valid_split
    from irdialog.datasets import load_babi_qa
    from irdialog.metrics import per_response_accuracy

    spec = BABI_QA_MODELS[model]
    [point] = spec.selection.points(SUITE_NAME, task)
    params = {**point, **({} if epochs is None else {"epochs": epochs})}
    train = load_babi_qa(task, "train", data_home=data_home)
    fit_rows, valid_rows = next(valid_split(train.groups, spec.selection.fraction).split())

    def rows(which):
        return [train.X[i] for i in which], [train.y[i] for i in which]

    (X, y), (Xv, yv) = rows(fit_rows), rows(valid_rows)
    capped = "" if epochs is None else f", epochs capped at {epochs}"
    held = round(100 * spec.selection.fraction)
    return {
        "name": f"{name}, bAbI QA task {task}{capped}",
        "make": lambda n_jobs: _as_bench_builds(spec.build(**params), n_jobs),
        "fit": lambda est: est.fit(X, y),
        "score": lambda est: 100.0 * per_response_accuracy(yv, est.predict(Xv)),
        "metric": f"held-out accuracy % (the last {held}% of the training stories)",
    }


def dialog_babi_workload(model: str, name: str, task: int, data_home=None, epochs=None):
    """A training workload of :mod:`benchmarks.training_threads`: ``model`` of ``irdialog
    bench dialog-babi`` at its preset for one task (``epochs`` capped when given), fitted
    on trn and scored on dev (per-response accuracy)."""
    from irdialog.bench._dialog_babi import DIALOG_BABI_MODELS, SUITE_NAME
    from irdialog.datasets import load_dialog_babi
    from irdialog.metrics import per_response_accuracy

    spec = DIALOG_BABI_MODELS[model]
    [point] = spec.selection.points(SUITE_NAME, task)
    params = {**point, **({} if epochs is None else {"epochs": epochs})}
    train = load_dialog_babi(task, "trn", data_home=data_home)
    dev = load_dialog_babi(task, "dev", data_home=data_home)
    capped = "" if epochs is None else f", epochs capped at {epochs}"
    return {
        "name": f"{name}, dialog bAbI task {task}{capped}",
        "make": lambda n_jobs: _as_bench_builds(spec.build(train, **params), n_jobs),
        "fit": lambda est: est.fit(train.X, train.y),
        "score": lambda est: 100.0 * per_response_accuracy(dev.y, est.predict(dev.X)),
        "metric": "dev per-response accuracy %",
    }


def _as_bench_builds(estimator, n_jobs):
    """``estimator`` at seed 0 with every ``n_jobs`` (a pipeline's steps' too) set, as
    ``irdialog bench --threads`` sets them (:func:`irdialog.bench.reseed`)."""
    from irdialog.bench import fit_threads, reseed

    with fit_threads(n_jobs):
        return reseed(estimator, 0)
