"""Data sent to a Dask cluster so that the cluster can make it again.

``Client.scatter`` puts data in workers' memory only: the scheduler cannot compute it again,
the active memory manager drops the copies of ``broadcast=True`` that no waiting task needs,
and a worker lost takes the last copy with it, cancelling every task that reads it. A task
that returns the data keeps it in the scheduler's graph instead: a lost copy is computed
again from there, as any lost result is, and the tasks that read it run on.
"""

from __future__ import annotations

import warnings


def _value(value):
    return value


def held(client, value):
    """A future of ``value`` on ``client``'s cluster that survives the loss of any worker.

    The scheduler keeps a serialised copy of ``value`` for as long as the future lives.
    Dask's warning on a large graph is silenced here: the value is sent once and read by
    reference, which is what that warning advises.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        return client.submit(_value, value, pure=False)
