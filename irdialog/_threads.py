"""The threads of this process a fit or a kernel runs on.

:func:`n_threads` is how many an ``n_jobs`` asks for, whatever joblib backend is active;
:class:`FitThreads` runs a fit's calls on them.

``joblib.effective_n_jobs`` answers for the active backend: inside
``parallel_config(backend="dask")`` it counts the cluster's workers, and a ``Parallel`` run
there ships each call to another process. Work that writes into shared arrays from threads
(the retrieval kernels) needs this process's own count instead.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

from joblib import cpu_count


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


class FitThreads:
    """The threads of a fit: this one and a pool of ``n - 1`` more, created once per fit.

    The kernels they run release the GIL; they are threads of this process, never
    joblib's active backend (which could run them on copies of the gradient buffers).

    Examples
    --------
    >>> with FitThreads(2) as threads:
    ...     threads.run(pow, [(2, 3), (3, 2)])
    [8, 9]
    """

    def __init__(self, n):
        self.n = n
        self.pool = ThreadPoolExecutor(n - 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.pool.shutdown()

    def run(self, fn, calls):
        """``[fn(*args) for args in calls]``: the first call in this thread, the others
        on the pool's, at once."""
        futures = [self.pool.submit(fn, *args) for args in calls[1:]]
        return [fn(*calls[0])] + [f.result() for f in futures]
