"""Compile the numba kernels of later work in a helper process, while this one works.

The kernels are compiled with ``cache=True``, so a first run pays for compiling them (about
17 s of ``irdialog run``'s 43 s on a cold cache) and later runs load them from numba's
on-disk cache. Compilation holds numba's global lock and one core; on a machine with a
spare core, a helper process can fit each later model once on a few rows, in the order the
run needs them, and so fill the cache with the very specialisations the run will use (the
argument types are those of the real fit) while this process is busy with the earlier
models. When this process reaches a model, it waits for that model's job, then loads its
kernels from the cache instead of compiling them.

Nothing depends on the helper: a failed or skipped job only means this process compiles
the kernels itself, as without it. With one core it is not started at all, nor with the
environment variable ``IRDIALOG_COMPILE_AHEAD=0``.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor


def _fit_and_score(estimator, X, y):
    # Fitting and scoring compiles (or loads) every kernel the estimator's fit and predict
    # use; the result itself is not needed.
    estimator.fit(X, y).predict(X[:8])


def enabled() -> bool:
    """Whether the helper may run: not with ``IRDIALOG_COMPILE_AHEAD=0``."""
    return os.environ.get("IRDIALOG_COMPILE_AHEAD", "1").strip() != "0"


class CompileAhead:
    """Fit estimators in one helper process, in order, to fill numba's cache.

    Parameters
    ----------
    jobs : mapping of str to (estimator, X, y)
        Submitted in order; ``wait(name)`` blocks until that job is done.
    min_cpus : int, default=2
        Start the helper only with at least this many CPUs.

    Examples
    --------
    >>> from irdialog import TfidfRanker
    >>> ahead = CompileAhead({"tfidf": (TfidfRanker(), ["hi there"], ["hello"])}, min_cpus=1)
    >>> ahead.wait("tfidf"), ahead.wait("unknown")
    (True, False)
    >>> ahead.close()
    """

    def __init__(self, jobs: Mapping[str, tuple], *, min_cpus: int = 2):
        self._futures: dict[str, Future] = {}
        self._pool = None
        if not jobs or (os.cpu_count() or 1) < min_cpus or not enabled():
            return
        # spawn: a fresh interpreter, never a fork of a process whose numba or BLAS threads
        # may be running.
        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        for name, (estimator, X, y) in jobs.items():
            self._futures[name] = self._pool.submit(_fit_and_score, estimator, X, y)

    def wait(self, name: str) -> bool:
        """Block until job ``name`` is done; whether it ran and succeeded."""
        future = self._futures.pop(name, None)
        if future is None:
            return False
        try:
            future.result()
        except Exception:  # noqa: BLE001  (the run compiles the kernels itself instead)
            return False
        return True

    def close(self) -> None:
        """Cancel the jobs not started and let the helper exit."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
