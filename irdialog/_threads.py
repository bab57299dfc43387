"""How many threads an ``n_jobs`` asks for, whatever joblib backend is active.

``joblib.effective_n_jobs`` answers for the active backend: inside
``parallel_config(backend="dask")`` it counts the cluster's workers, and a ``Parallel`` run
there ships each call to another process. Work that writes into shared arrays from threads
(the retrieval kernels) needs this process's own count instead.
"""

from __future__ import annotations

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
