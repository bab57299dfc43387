"""The threads of this process a fit or a kernel runs on.

:func:`n_threads` is how many an ``n_jobs`` asks for, whatever joblib backend is active;
:func:`threads_for_work` how many a numba parallel region's work pays for,
:func:`share_out` how work items are balanced between them, and :func:`numba_threads`
runs the regions of a fit on them.

``joblib.effective_n_jobs`` answers for the active backend: inside
``parallel_config(backend="dask")`` it counts the cluster's workers, and a ``Parallel`` run
there ships each call to another process. Work that writes into shared arrays from threads
(the retrieval kernels) needs this process's own count instead.
"""

from __future__ import annotations

from contextlib import contextmanager
from numbers import Integral

import numba
import numpy as np
from joblib import cpu_count

# A numba parallel region costs 10-20 us to start its threads and join them (measured
# with the OpenMP layer on two cores); a thread must get work that takes several times
# longer: 2**20 multiply-adds, 100-200 us at the kernels' speed, keep the cost under 10%.
MIN_WORK_PER_THREAD = 2**20


def n_threads(n_jobs) -> int:
    """Threads for ``n_jobs`` on this machine: None is 1, -1 every core, -2 all but one.

    Examples
    --------
    >>> n_threads(None), n_threads(3)
    (1, 3)
    >>> n_threads(-1) == cpu_count()
    True
    """
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}.")
    if n_jobs < 0:
        return max(cpu_count() + 1 + int(n_jobs), 1)
    return int(n_jobs)


def threads_for_work(n_jobs, work, min_work=MIN_WORK_PER_THREAD) -> int:
    """Threads a piece of ``work`` (multiply-adds, or any unit of ``min_work``) runs on
    for ``n_jobs``: one per ``min_work`` of it, at most :func:`n_threads` of ``n_jobs``
    and numba's thread count (``NUMBA_NUM_THREADS``), at least one.

    Work too small to pay for a thread's start runs on fewer threads; work below
    ``2 * min_work`` on one, where the serial kernel runs.

    Examples
    --------
    >>> threads_for_work(None, 10**9), threads_for_work(2, 1000)
    (1, 1)
    >>> threads_for_work(2, 10**9) == min(2, numba.config.NUMBA_NUM_THREADS)
    True
    """
    threads = min(n_threads(n_jobs), numba.config.NUMBA_NUM_THREADS)
    return int(max(1, min(threads, work // min_work)))


def share_out(costs, n) -> tuple[np.ndarray, np.ndarray]:
    """``costs``' items shared out between ``n`` threads: the costliest first, each to the
    thread with the least cost so far (the lower thread of equals). Returns (offsets,
    items): thread t's items are ``items[offsets[t]:offsets[t + 1]]``, in their order.

    Examples
    --------
    >>> offsets, items = share_out([5, 1, 1, 4, 2], 2)
    >>> [items[offsets[t] : offsets[t + 1]].tolist() for t in range(2)]
    [[0, 1, 2], [3, 4]]
    """
    costs = np.asarray(costs, dtype=np.float64)
    load = np.zeros(n)
    owner = np.empty(len(costs), np.int64)
    for i in np.argsort(-costs, kind="stable"):
        t = int(np.argmin(load))
        owner[i] = t
        load[t] += costs[i]
    items = np.argsort(owner, kind="stable")
    return np.searchsorted(owner[items], np.arange(n + 1)), items


@contextmanager
def numba_threads(n):
    """Run the numba parallel regions of this thread on ``n`` threads, then restore the
    count (numba's count is per calling thread).

    Examples
    --------
    >>> with numba_threads(1):
    ...     numba.get_num_threads()
    1
    """
    before = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(before)
