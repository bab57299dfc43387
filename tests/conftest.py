"""Tiny synthetic fixtures shared by every test, and the location of the real data sets."""

import importlib
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from irdialog.base import Context, Turn

# No per-example deadline: on a loaded machine (pytest-xdist on every core) scheduling, not
# the code, decides whether an example takes 200 ms
settings.register_profile("irdialog", deadline=None)
settings.load_profile("irdialog")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="also run the real-data tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow") or config.getoption("-m"):
        return
    skip = pytest.mark.skip(reason="real-data test: pass --run-slow (or -m slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def real_data_home() -> Path | None:
    """../shared/data (or IRDIALOG_DATA) when it exists, else None."""
    env = os.environ.get("IRDIALOG_DATA")
    for p in (Path(env) if env else None, SHARED_DATA):
        if p is not None and p.is_dir():
            return p
    return None


@pytest.fixture(scope="session")
def data_home():
    home = real_data_home()
    if home is None:
        pytest.skip("real data sets not found (set IRDIALOG_DATA or provide ../shared/data)")
    return home


CITIES = ["paris", "rome", "madrid", "london", "bombay", "seoul"]
GREETING = "hello what can i help you with today"


def make_tiny_dialogs():
    """Six short restaurant dialogs: a greeting, a city question, an API call naming the city.

    One query is empty and the KB knows the cities, so match-type features have work to do.
    """
    X, y, groups = [], [], []
    for g, city in enumerate(CITIES):
        hist = ()
        turns = [
            ("hi" if g % 2 else "good morning", GREETING),
            ("can you book a table", "where should it be"),
            (f"in {city} please", "ok let me look into some options for you"),
            ("" if g == 0 else "<SILENCE>", f"api_call {city}"),
        ]
        for user, bot in turns:
            X.append(Context(history=hist, query=user))
            y.append(bot)
            groups.append(g)
            hist = hist + (Turn("user", user), Turn("bot", bot))
    return X, y, groups


TINY_KB = {city: "R_location" for city in CITIES}

# A dictionary of films and people, and knowledge-base facts about them (Movie Dialog's form).
MOVIE_ENTITIES = ["Heat", "Alien", "Collateral", "Michael Mann", "Ridley Scott", "Al Pacino"]
MOVIE_KB = [
    "Heat directed_by Michael Mann",
    "Heat starred_actors Al Pacino",
    "Alien directed_by Ridley Scott",
    "Collateral directed_by Michael Mann",
]


def make_where_is_stories(n=160, seed=0, facts=4):
    """``n`` where-is questions over ``facts`` moves of three people among four places: the
    answer is the place of the person's last move, which a model reading in order must
    find among the other people's moves."""
    people, places = ["mary", "john", "sandra"], ["kitchen", "garden", "office", "hallway"]
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        story, where = [], {}
        for _ in range(facts):
            p, loc = people[rng.integers(3)], places[rng.integers(4)]
            story.append(Turn("kb", f"{p} went to the {loc}."))
            where[p] = loc
        p = list(where)[rng.integers(len(where))]
        X.append(Context(tuple(story), f"Where is {p}?"))
        y.append(where[p])
    return X, y


@pytest.fixture
def tiny_dialogs():
    return make_tiny_dialogs()


def import_benchmark(name: str):
    """A script of the repository's ``benchmarks/`` (not installed with the package, and
    the tests may run from another directory): imported with the root on ``sys.path``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(Path(__file__).resolve().parents[1]))
        return importlib.import_module(f"benchmarks.{name}")


@contextmanager
def local_cluster(processes: bool):
    """A client of a new local Dask cluster of two one-thread workers, processes or threads
    of this process; the test is skipped where distributed is not installed. Its active
    memory manager runs every 20 ms, not every 2 s, so that a test meets what a long run
    meets: the copies that no waiting task needs dropped from the workers."""
    distributed = pytest.importorskip("distributed")
    import dask

    with (
        dask.config.set({"distributed.scheduler.active-memory-manager.interval": "20ms"}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def client():
    """A Dask client of two worker processes, shared by a module's tests."""
    with local_cluster(processes=True) as c:
        yield c


@pytest.fixture(scope="module")
def thread_client():
    """A Dask client of two worker threads in this process (no process started), shared by
    a module's tests."""
    with local_cluster(processes=False) as c:
        yield c


class _KillFirstTask:
    """A worker plugin that ends its worker's process when it starts the first task whose
    key begins with ``prefix`` (once in the cluster: a marker file records it)."""

    name = "irdialog-test-kill-first-task"

    def __init__(self, marker, prefix):
        self.marker = marker
        self.prefix = prefix

    def setup(self, worker):
        pass

    def teardown(self, worker):
        pass

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith(self.prefix):
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                return
            os.close(fd)
            os._exit(1)


@contextmanager
def kill_first_task(client, marker, prefix):
    """While the block runs, the worker of ``client``'s cluster that starts the first task
    whose key begins with ``prefix`` ends its process (once: the file ``marker`` records
    it). The plugin travels to the workers by value (they cannot import this module)."""
    import cloudpickle
    import distributed

    plugin = type("KillFirstTask", (_KillFirstTask, distributed.WorkerPlugin), {})
    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)
    try:
        client.register_plugin(plugin(str(marker), prefix))
        yield
    finally:
        client.unregister_worker_plugin(_KillFirstTask.name)
        cloudpickle.unregister_pickle_by_value(module)
