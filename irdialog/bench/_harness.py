"""One way to run a suite: over seeds, with its data recorded, into one result record.

A suite's ``run`` (``SUITES["babi-qa"].run``, ``bench_dialog_babi``,
``bench_movie_dialog``, ``bench_ubuntu``) runs one seed and returns a *run*: ``rows`` (one
per table cell, with the paper's value beside ours), ``chosen`` (the hyper-parameters per
task, with the held-out scores that chose them kept apart), and optional ``summary``,
``protocol`` and ``resources``. :func:`run_suite` runs it once per seed and merges the runs:

- a metric of a row (any number that is not an id, a count or a paper value) becomes the
  mean over the seeds, with ``<metric>_std`` (sample standard deviation) and
  ``<metric>_by_seed`` beside it when there are several seeds;
- ``runs`` keeps each seed's ``chosen``, ``summary`` and ``seconds``;
- ``provenance`` records the code, libraries, command, seeds, date and data files.

Percentages are rounded to 2 decimals and seconds to 1, once, here.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed, parallel_config

from ..base import nested_params
from ..datasets import get_data_home, record_data_files
from ._provenance import data_record, provenance

# The threads of every fit of the seed being run (each estimator's ``n_jobs``), set by
# run_suite in the process that runs the seed; None leaves n_jobs as the suite built it.
_FIT_THREADS: ContextVar[int | None] = ContextVar("fit_threads", default=None)

# Row keys that identify a cell or describe it, never averaged over seeds.
ID_KEYS = frozenset({"task", "split", "n", "metric", "response", "model"})
DECIMALS = 2


# How the rows of a result that records no tie rule (no "ties" among its options) count a
# gold response tied at the top, by suite: as ``predict`` orders the tied candidates (the
# candidate file's order) in dialog bAbI and bAbI QA, against the model in Ubuntu. The
# rows of the other suites follow the rule their protocol states.
RECORDED_TIES = {"dialog-babi": "index", "babi-qa": "index", "ubuntu": "pessimistic"}


def recorded_ties(result: dict) -> str | None:
    """The tie rule a result's rows were computed under (for its re-run and its notes): its
    recorded ``options["ties"]``, else its suite's entry of :data:`RECORDED_TIES` (None:
    the suite's own rule, which its protocol states).

    Examples
    --------
    >>> from irdialog.bench._harness import recorded_ties
    >>> recorded_ties({"suite": "dialog-babi", "options": {"tasks": [1]}})
    'index'
    >>> recorded_ties({"suite": "dialog-babi", "options": {"tasks": [1], "ties": "expected"}})
    'expected'
    >>> recorded_ties({"suite": "insuranceqa", "options": {}}) is None
    True
    """
    options = result.get("options") or {}
    if "ties" in options:
        return options["ties"]
    return RECORDED_TIES.get(result.get("suite"))


def _is_metric(key, value) -> bool:
    return (
        key not in ID_KEYS
        and not key.startswith("paper")
        and isinstance(value, (int, float, np.number))
        and not isinstance(value, bool)
    )


def round_metric(value):
    """A percentage rounded to ``DECIMALS``; None and non-finite values as they are."""
    if value is None or not math.isfinite(value):
        return value
    return round(float(value), DECIMALS)


def _merge(records: list[dict]) -> dict:
    """One row (or summary) from the same row of each seed's run."""
    first = records[0]
    out = {}
    for key, value in first.items():
        if not _is_metric(key, value):
            out[key] = value
            continue
        if len(records) == 1:  # one seed: the value itself (an int stays an int)
            out[key] = value if isinstance(value, int) else round_metric(float(value))
            continue
        values = [float(r[key]) for r in records]
        out[key] = round_metric(float(np.mean(values)))
        out[f"{key}_std"] = round_metric(float(np.std(values, ddof=1)))
        out[f"{key}_by_seed"] = [round_metric(v) for v in values]
    return out


def merge_runs(runs: list[dict], seeds) -> dict:
    """The result record of several seeds' runs of one suite (see the module docstring).

    Examples
    --------
    >>> from irdialog.bench import merge_runs
    >>> runs = [{"suite": "s", "model": "m", "chosen": [], "seconds": 1.0,
    ...          "rows": [{"task": 1, "n": 10, "accuracy": a, "paper": 50.0}]}
    ...         for a in (60.0, 70.0)]
    >>> row = merge_runs(runs, seeds=[0, 1])["rows"][0]
    >>> row["accuracy"], row["accuracy_std"], row["accuracy_by_seed"], row["paper"]
    (65.0, 7.07, [60.0, 70.0], 50.0)
    """
    first = runs[0]
    layout = [[(r.get("task"), r.get("split"), r.get("metric"), r.get("response"))
               for r in run["rows"]] for run in runs]  # fmt: skip
    if any(keys != layout[0] for keys in layout):
        raise RuntimeError("the seeds' runs have different rows; they cannot be averaged")
    result = {k: v for k, v in first.items() if k not in ("rows", "chosen", "summary", "seconds")}
    result["seeds"] = [int(s) for s in seeds]
    result["rows"] = [_merge([run["rows"][i] for run in runs]) for i in range(len(first["rows"]))]
    if "summary" in first:
        result["summary"] = _merge([run["summary"] for run in runs])
    result["runs"] = [
        {
            "seed": int(seed),
            "chosen": run["chosen"],
            **({"summary": run["summary"]} if "summary" in run else {}),
            "seconds": round(float(run["seconds"]), 1),
        }
        for seed, run in zip(seeds, runs)
    ]
    result["seconds"] = round(sum(float(run["seconds"]) for run in runs), 1)
    return result


@contextmanager
def fit_threads(threads: int | None):
    """Inside, :func:`reseed` sets every ``n_jobs`` parameter to ``threads`` (None: leaves
    them as built): the threads of each fit of a suite's run or training.

    Examples
    --------
    >>> from irdialog import SupervisedEmbeddingRanker
    >>> from irdialog.bench import fit_threads, reseed
    >>> with fit_threads(2):
    ...     reseed(SupervisedEmbeddingRanker(), 0).n_jobs
    2
    """
    token = _FIT_THREADS.set(threads)
    try:
        yield
    finally:
        _FIT_THREADS.reset(token)


def _run_seed(suite_fn, seed, data_home, options, threads):
    # Each seed records its own data files, so that runs in other processes (joblib's
    # workers, a Dask cluster) report them too.
    with fit_threads(threads), record_data_files() as files:
        run = suite_fn(seed=seed, data_home=data_home, **options)
    return run, files


def run_suite(
    suite_fn, *, seeds=(0,), data_home=None, command=None, n_jobs=None, threads=None,
    **options,
) -> dict:  # fmt: skip
    """Run a suite once per seed and merge the runs into one result with provenance.

    Parameters
    ----------
    suite_fn : callable
        A suite function taking ``seed=``, ``data_home=`` and ``options``.
    seeds : sequence of int, default=(0,)
        Every ``random_state`` of the models is set to each seed in turn.
    data_home : path-like, default=None
    command : sequence of str, default=None
        The command line to record (None: ``sys.argv``).
    n_jobs : int, default=None
        Seeds run at once, each in a joblib worker process (None: one at a time, in this
        process). Under ``joblib.parallel_config(backend="dask")`` they run on a Dask
        cluster; see :func:`dask_cluster`.
    threads : int, default=None
        Threads of each fit: every ``n_jobs`` parameter of the suite's estimators is set to
        it (see :func:`reseed`), so that the models that train on threads use that many
        (None: as the suite builds them, one thread). A run uses about
        ``n_jobs * threads`` cores.
    **options
        Passed to ``suite_fn`` (model, tasks, progress, ...).

    Returns
    -------
    result : dict
        See :func:`merge_runs`, plus ``provenance``.

    Examples
    --------
    >>> from irdialog.bench import SUITES, run_suite
    >>> result = run_suite(SUITES["babi-qa"].run, model="ngram", tasks=[1], progress=False,
    ...                    command=["irdialog", "bench", "babi-qa", "--model", "ngram"])
    >>> result["rows"][0]["accuracy"], result["rows"][0]["paper"]
    (60.0, 36.0)
    >>> [f["path"].split("/")[-1] for f in result["provenance"]["data"]]
    ['qa1_single-supporting-fact_train.txt.gz', 'qa1_single-supporting-fact_test.txt.gz']
    """
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    home = get_data_home(data_home)
    if data_home is not None:  # workers may start in another directory
        data_home = Path(home).resolve()
    # The code's state is read before the runs: edits made while they run do not count.
    record = provenance(command=command, seeds=seeds, files=[], data_home=home)
    start = time.perf_counter()
    done = Parallel(n_jobs=n_jobs)(
        delayed(_run_seed)(suite_fn, seed, data_home, options, threads) for seed in seeds
    )
    runs = [run for run, _ in done]
    files = list(dict.fromkeys(f for _, seed_files in done for f in seed_files))
    result = merge_runs(runs, seeds)
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    result["provenance"] = {**record, "data": data_record(files, home)}
    return result


def reseed(estimator, seed: int):
    """``estimator`` with every ``random_state`` parameter (nested ones included) set to
    ``seed``; a suite builds its models at seed 0 and runs them at the seed asked for.
    Inside :func:`run_suite` with ``threads`` (or :func:`fit_threads`), every ``n_jobs``
    parameter is set to it too.

    Examples
    --------
    >>> from irdialog import MemN2NRanker
    >>> from irdialog.bench import reseed
    >>> reseed(MemN2NRanker(random_state=0), 3).random_state
    3
    """
    settings = dict.fromkeys(nested_params(estimator, "random_state"), int(seed))
    threads = _FIT_THREADS.get()
    if threads is not None:
        settings.update(dict.fromkeys(nested_params(estimator, "n_jobs"), threads))
    return estimator.set_params(**settings) if settings else estimator


@contextmanager
def dask_cluster(address: str):
    """Run joblib's parallel work (the seeds of :func:`run_suite`, ``GridSearchCV``'s
    fits) on the Dask cluster whose scheduler is at ``address`` (``tcp://host:port``).

    Needs ``dask.distributed`` (``pip install irdialog[dask]``). Every worker must see the
    data home at the same path, and have irdialog installed.

    Examples
    --------
    >>> from irdialog.bench import SUITES, dask_cluster, run_suite
    >>> with dask_cluster("tcp://127.0.0.1:8786"):  # doctest: +SKIP
    ...     result = run_suite(SUITES["babi-qa"].run, model="ngram", seeds=range(4), n_jobs=-1)
    """
    try:
        from dask.distributed import Client
    except ImportError as err:
        raise ImportError(
            "running on a Dask cluster needs dask.distributed: pip install 'irdialog[dask]'"
        ) from err
    with Client(address), parallel_config(backend="dask"):
        yield
