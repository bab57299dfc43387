"""SupervisedEmbeddingRanker.fit_chunks over a dask bag (iterative parameter mixing on Dask
workers): the vocabulary and candidates of the in-process fit_chunks, one partition its
model bit for bit, a model that the partitions and the seed fix whatever the workers, and
the errors."""

import sys
from contextlib import contextmanager

import numpy as np
import pytest
from conftest import kill_first_task, local_cluster

from irdialog import SupervisedEmbeddingRanker
from irdialog.base import Context, Turn
from irdialog.embed._cluster_fit import _average

db = pytest.importorskip("dask.bag")
pytest.importorskip("distributed")


def _data(n=240, seed=0):
    """Contexts whose last word names their gold response among 12, with a history of
    other words; non-Latin words and an empty query among them."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)] + ["día", "日本"]
    responses = [f"r{i} w{i}" for i in range(12)]
    X, y = [], []
    for i in range(n):
        g = int(rng.integers(12))
        history = (Turn("user", " ".join(rng.choice(words, 3))), Turn("bot", responses[g - 1]))
        query = "" if i == 5 else " ".join(rng.choice(words, 4)) + f" w{g}"
        X.append(Context(history, query))
        y.append(responses[g])
    return X, y


X, Y = _data()
CHUNKS = [(X[i : i + 30], Y[i : i + 30]) for i in range(0, len(X), 30)]
PARAMS = dict(embedding_dim=8, n_negatives=5, epochs=3, learning_rate=0.05, random_state=0)


@contextmanager
def local_cluster_of(n_workers):
    """A client (not the default one) of a local cluster of ``n_workers`` worker threads."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


def _bag(npartitions, chunks=CHUNKS):
    return db.from_sequence(chunks, npartitions=npartitions)


def _fitted_state(model):
    return (
        model.candidates_.tolist(),
        model.vocabulary_.tokens_,
        model.input_embeddings_,
        model.response_embeddings_,
        model.loss_curve_,
        model.n_iter_,
    )


def _assert_same(a, b):
    for x, y in zip(_fitted_state(a), _fitted_state(b), strict=True):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("candidates", [None, [*sorted(set(Y)), "never a gold response"]])
def test_vocabulary_and_candidates_are_the_in_process_ones(thread_client, candidates):
    model = SupervisedEmbeddingRanker(candidates=candidates, **PARAMS)
    ref = SupervisedEmbeddingRanker(candidates=candidates, **PARAMS).fit_chunks(CHUNKS)
    model.fit_chunks(_bag(3), client=thread_client)
    assert model.candidates_.tolist() == ref.candidates_.tolist()
    assert model.vocabulary_.index_ == ref.vocabulary_.index_
    np.testing.assert_array_equal(model.candidate_bags_.toarray(), ref.candidate_bags_.toarray())
    assert model.input_embeddings_.shape == ref.input_embeddings_.shape
    assert model.types_ == [] and model.match_vocabulary_ == {}


@pytest.mark.parametrize(
    "params",
    [
        {},
        dict(shared_embeddings=True, optimizer="adagrad"),
        dict(negatives="bm25", normalize_input=True, use_history=False),
        dict(candidates=[*sorted(set(Y))[:6]], ngram_range=(1, 2)),  # gold outside candidates
    ],
)
def test_one_partition_is_the_in_process_model(thread_client, params):
    params = {**PARAMS, **params}
    ref = SupervisedEmbeddingRanker(**params).fit_chunks(CHUNKS)
    model = SupervisedEmbeddingRanker(**params).fit_chunks(_bag(1), client=thread_client)
    _assert_same(model, ref)
    if params.get("shared_embeddings"):
        assert model.response_embeddings_ is model.input_embeddings_


def test_the_default_client_and_empty_partitions(thread_client):
    """No client=: the default one; a partition without chunks trains nothing."""
    import dask

    def bag(*parts):
        return db.from_delayed([dask.delayed(list)(p) for p in parts])

    ref = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(CHUNKS)
    _assert_same(SupervisedEmbeddingRanker(**PARAMS).fit_chunks(bag(CHUNKS)), ref)
    gap = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(bag(CHUNKS[:4], [], CHUNKS[4:]))
    two = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(bag(CHUNKS[:4], CHUNKS[4:]))
    _assert_same(gap, two)


def test_the_workers_do_not_change_the_model(thread_client):
    """Three partitions on one worker and on two: the same model, bit for bit; another
    partitioning or seed gives another."""
    two = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=thread_client)
    again = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=thread_client)
    with local_cluster_of(1) as one_worker:
        one = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=one_worker)
    _assert_same(two, one)
    _assert_same(two, again)
    in_process = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(CHUNKS)
    other_parts = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(2), client=thread_client)
    seeded = {**PARAMS, "random_state": 1}
    other_seed = SupervisedEmbeddingRanker(**seeded).fit_chunks(_bag(3), client=thread_client)
    for other in (in_process, other_parts, other_seed):
        assert not np.array_equal(two.input_embeddings_, other.input_embeddings_)


def test_an_averaged_model_learns(thread_client):
    """Four partitions averaged each epoch rank the training contexts about as well as the
    in-process fit."""
    params = {**PARAMS, "epochs": 30, "learning_rate": 0.1, "margin": 0.5}
    ref = SupervisedEmbeddingRanker(**params).fit_chunks(CHUNKS)
    model = SupervisedEmbeddingRanker(**params).fit_chunks(_bag(4), client=thread_client)
    assert ref.score(X, Y) > 0.9
    assert model.score(X, Y) > ref.score(X, Y) - 0.1
    assert model.loss_curve_[-1] < model.loss_curve_[0] / 2


def test_the_in_process_warning_without_negatives(thread_client):
    params = {**PARAMS, "candidates": [Y[0]]}
    with pytest.warns(UserWarning, match="training examples have no candidate") as expected:
        SupervisedEmbeddingRanker(**params).fit_chunks(CHUNKS)
    with pytest.warns(UserWarning, match="training examples have no candidate") as caught:
        SupervisedEmbeddingRanker(**params).fit_chunks(_bag(3), client=thread_client)
    assert str(caught[0].message) == str(expected[0].message)
    assert caught[0].filename == __file__


def test_bm25_pools_are_mined_row_by_row():
    """What lets each partition mine its own pools: an example's pool does not depend on
    the other examples."""
    from irdialog.embed._negatives import bm25_pools
    from irdialog.text import LabelIndex

    model = SupervisedEmbeddingRanker(**PARAMS).fit(X, Y)
    x, r = model._input_bags(X), model._response_bags(model.candidates_)
    gold = LabelIndex(model.candidates_).encode(Y)
    whole = bm25_pools(x, r, gold, len(r.indptr) - 1, 5)
    parts = [
        bm25_pools(x[a:b], r, gold[a:b], len(r.indptr) - 1, 5) for a, b in [(0, 100), (100, 240)]
    ]
    np.testing.assert_array_equal(np.concatenate([p.indices for p in parts]), whole.indices)


def test_average_weights_partitions_by_examples():
    a = (np.array([1.0, 2.0], np.float32),)
    b = (np.array([4.0, 8.0], np.float32),)
    np.testing.assert_array_equal(_average([a, b], [1, 2])[0], [3.0, 6.0])
    w = np.random.default_rng(0).normal(size=50).astype(np.float32)
    np.testing.assert_array_equal(_average([(w,)], [123457])[0].astype(np.float32), w)


def test_a_progress_bar_over_epochs(thread_client, capsys):
    SupervisedEmbeddingRanker(**PARAMS, verbose=True).fit_chunks(_bag(2), client=thread_client)
    assert f"{PARAMS['epochs']}/{PARAMS['epochs']}" in capsys.readouterr().err


# --------------------------------------------------------------------------- errors


def test_an_empty_bag(thread_client):
    with pytest.raises(ValueError, match="chunks held no example"):
        SupervisedEmbeddingRanker(**PARAMS).fit_chunks(
            db.from_sequence([], npartitions=1), client=thread_client
        )


def test_a_bad_chunk_names_its_partition(thread_client):
    chunks = [*CHUNKS[:2], ["not a pair of X and y", "or an object", "with X and y"]]
    with pytest.raises(TypeError, match="bag partition 1: chunk 0 must have attributes X and y"):
        SupervisedEmbeddingRanker(**PARAMS).fit_chunks(
            db.from_sequence(chunks, npartitions=2), client=thread_client
        )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(early_stopping=True), "does not support early_stopping"),
        (dict(match_type="match"), "does not support match_type"),
        (dict(init="ppmi-svd"), "does not support init"),
    ],
)
def test_what_fit_chunks_refuses_a_bag_refuses(thread_client, params, message):
    with pytest.raises(ValueError, match=message):
        SupervisedEmbeddingRanker(**PARAMS, **params).fit_chunks(_bag(2), client=thread_client)


def test_warm_start_is_refused(thread_client):
    model = SupervisedEmbeddingRanker(**PARAMS, warm_start=True).fit_chunks(CHUNKS)
    with pytest.raises(ValueError, match="does not support warm_start"):
        model.fit_chunks(_bag(2), client=thread_client)


def test_a_client_without_a_bag():
    with pytest.raises(ValueError, match="client= trains on a dask bag"):
        SupervisedEmbeddingRanker(**PARAMS).fit_chunks(CHUNKS, client=object())


def test_no_client(monkeypatch):
    import distributed

    def no_client():
        raise ValueError("No global client found")

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(ValueError, match="needs a distributed client: pass client="):
        SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(2))
    with pytest.raises(TypeError, match="client must be a distributed.Client"):
        SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(2), client="tcp://nowhere:1")


def test_without_distributed(monkeypatch):
    """A bag without Dask's distributed: an error naming the extra; an iterable of chunks
    needs no dask at all."""
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'irdialog\[dask\]'"):
        SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(2))
    for name in [m for m in sys.modules if m == "dask" or m.startswith("dask.")]:
        monkeypatch.setitem(sys.modules, name, None)
    assert SupervisedEmbeddingRanker(**PARAMS).fit_chunks(CHUNKS).n_iter_ == PARAMS["epochs"]


# --------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_worker_processes_give_the_threads_model():
    """Two worker processes (each task's inputs pickled) give the model of worker threads,
    and one partition the in-process model."""
    with local_cluster(processes=True) as client:
        processes = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=client)
        one = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(1), client=client)
    with local_cluster_of(2) as client:
        threads = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=client)
    _assert_same(processes, threads)
    _assert_same(one, SupervisedEmbeddingRanker(**PARAMS).fit_chunks(CHUNKS))


@pytest.mark.slow
def test_a_worker_lost_mid_fit_changes_nothing(tmp_path):
    """The worker of the first partition's epoch dies: its examples are encoded again
    from the bag, the epoch runs again, and the model is the one of a fit without loss."""
    marker = tmp_path / "killed"
    with local_cluster(processes=True) as client:
        expected = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=client)
        with kill_first_task(client, marker, "_partition_epoch"):
            model = SupervisedEmbeddingRanker(**PARAMS).fit_chunks(_bag(3), client=client)
        assert marker.exists()  # a worker was lost
    _assert_same(model, expected)


@pytest.mark.slow
def test_dialog_babi_task1_averaged_close_to_in_process(data_home):
    """Dialog bAbI task 1 at its preset (dev 100.0): two partitions averaged every epoch
    reach a dev accuracy within 2 points of the in-process fit_chunks."""
    from irdialog.datasets import load_dialog_babi

    train, dev = load_dialog_babi(1, "trn", data_home), load_dialog_babi(1, "dev", data_home)
    params = dict(
        candidates=train.candidates, use_history=True, embedding_dim=32, n_negatives=100,
        normalize_input=True, learning_rate=0.1, margin=0.1, epochs=270, random_state=0,
    )  # fmt: skip
    step = 500
    chunks = [(train.X[i : i + step], train.y[i : i + step]) for i in range(0, len(train.X), step)]
    ref = SupervisedEmbeddingRanker(**params).fit_chunks(chunks)
    with local_cluster(processes=True) as client:
        model = SupervisedEmbeddingRanker(**params).fit_chunks(
            db.from_sequence(chunks, npartitions=2), client=client
        )
    assert model.score(dev.X, dev.y) >= ref.score(dev.X, dev.y) - 0.02
