"""Data held on a Dask cluster by irdialog._held: a worker lost with its copy costs nothing,
where data scattered to it would be gone."""

import contextlib
import os
import time

import numpy as np
import pytest
from conftest import local_cluster

from irdialog._held import held

distributed = pytest.importorskip("distributed")


def _lose_the_holder(client, future):
    """End the process of the worker that holds ``future``'s value, and wait until the
    scheduler has removed it."""
    distributed.wait(future)
    [holder] = client.who_has([future])[future.key]
    with contextlib.suppress(Exception):
        client.run(os._exit, 1, workers=[holder])
    deadline = time.monotonic() + 30
    while holder in client.scheduler_info()["workers"]:
        assert time.monotonic() < deadline, f"the worker {holder} was not lost"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_held_value_outlives_the_worker_that_held_it():
    with local_cluster(processes=True) as client:
        value = held(client, np.arange(10))
        _lose_the_holder(client, value)
        assert client.submit(np.sum, value).result(timeout=60) == 45


@pytest.mark.slow
def test_a_scattered_value_does_not():
    """Why held exists: the same loss with scatter cancels the task that reads the value."""
    with local_cluster(processes=True) as client:
        [value] = client.scatter([np.arange(10)], hash=False)
        _lose_the_holder(client, value)
        with pytest.raises(distributed.client.FutureCancelledError):
            client.submit(np.sum, value).result(timeout=60)


def test_a_held_value_is_the_value_and_no_large_graph_warning(recwarn):
    with local_cluster(processes=False) as client:
        big = np.zeros(3 << 20)  # 24 MB: past Dask's 10 MB large-graph threshold
        value = held(client, big)
        assert client.submit(np.shape, value).result() == big.shape
    assert not [w for w in recwarn if "large graph" in str(w.message)]
