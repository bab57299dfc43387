"""DualEncoderRanker.fit_chunks over a dask bag (iterative parameter mixing of its Adam
epochs on Dask workers): the vocabulary and candidates of the in-process fit_chunks, one
partition its model bit for bit, a model that the partitions and the seed fix whatever the
workers, and the errors."""

import copy

import numpy as np
import pytest
from conftest import kill_first_task, local_cluster

from irdialog import DualEncoderRanker, RecurrentReader
from irdialog.base import Context, Turn
from irdialog.embed import _cluster_fit, _recurrent

db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")


def _data(n=160, seed=0):
    """Contexts whose query ends with a word of their true response among 8, with a
    history; non-Latin words and an empty query among them."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(30)] + ["día", "日本"]
    responses = [f"r{i} w{i}" for i in range(8)]
    X, y = [], []
    for i in range(n):
        g = int(rng.integers(8))
        history = (Turn("user", " ".join(rng.choice(words, 3))), Turn("bot", responses[g - 1]))
        query = "" if i == 5 else " ".join(rng.choice(words, 3)) + f" w{g}"
        X.append(Context(history, query))
        y.append(responses[g])
    return X, y


X, Y = _data()
CHUNKS = [(X[i : i + 20], Y[i : i + 20]) for i in range(0, len(X), 20)]
PARAMS = dict(hidden_size=8, embedding_dim=8, epochs=2, learning_rate=0.01, random_state=0)


def _bag(npartitions, chunks=CHUNKS):
    return db.from_sequence(chunks, npartitions=npartitions)


def _fit(npartitions, client, **params):
    return DualEncoderRanker(**{**PARAMS, **params}).fit_chunks(_bag(npartitions), client=client)


def _assert_same(a, b):
    assert a.candidates_.tolist() == b.candidates_.tolist()
    assert a.vocabulary_.index_ == b.vocabulary_.index_
    pa, pb = a._all_params(), b._all_params()
    assert list(pa) == list(pb)
    for k in pa:
        np.testing.assert_array_equal(pa[k], pb[k], err_msg=k)
    assert a.loss_curve_ == b.loss_curve_
    assert a.train_accuracy_curve_ == b.train_accuracy_curve_
    assert a.n_iter_ == b.n_iter_


@pytest.fixture(scope="module")
def one_worker():
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


@pytest.mark.parametrize("candidates", [None, [*sorted(set(Y)), "never a true response"]])
def test_vocabulary_and_candidates_are_the_in_process_ones(thread_client, candidates):
    ref = DualEncoderRanker(candidates=candidates, **PARAMS).fit_chunks(CHUNKS)
    model = _fit(3, thread_client, candidates=candidates)
    assert model.candidates_.tolist() == ref.candidates_.tolist()
    assert model.vocabulary_.index_ == ref.vocabulary_.index_
    assert model.embeddings_.shape == ref.embeddings_.shape


@pytest.mark.parametrize(
    "params",
    [
        {},
        dict(cell="rnn", weight_init="orthogonal", n_negatives=2, batch_size=7),
        dict(max_length=5, clip_norm=None, tokenizer="char"),
        dict(negatives="bm25", n_negatives=2),
        dict(negatives="bm25", max_length=3),
    ],
)
def test_one_partition_is_the_in_process_model(thread_client, params, monkeypatch):
    # pools smaller than the 7 other responses, or they hold them all
    monkeypatch.setattr(_recurrent, "MINED_NEGATIVES", 3)
    ref = DualEncoderRanker(**{**PARAMS, **params}).fit_chunks(CHUNKS)
    _assert_same(_fit(1, thread_client, **params), ref)


def test_bm25_pools_are_mined_by_each_partition_as_in_process(thread_client, monkeypatch):
    """Each partition mines its contexts' pools over the whole response table: each
    context's pool is that of the in-process fit, and the model not negatives="random"'s."""
    monkeypatch.setattr(_recurrent, "MINED_NEGATIVES", 3)
    mined = []
    mine = _recurrent._mined_pools

    def spy(pairs, max_len):
        pools = mine(pairs, max_len)
        ptr, tok = pairs["ptr"], pairs["tok"]
        for i in range(pairs["n_ctx"]):  # (context tokens, response row, pool), in order
            pool = pools.indices[pools.indptr[i] : pools.indptr[i + 1]]
            mined.append((tuple(tok[ptr[i] : ptr[i + 1]]), pairs["codes"][i], tuple(pool)))
        return pools

    monkeypatch.setattr(_cluster_fit, "_mined_pools", spy)
    model = _fit(3, thread_client, negatives="bm25")
    parts, mined[:] = sorted(mined), []  # the partitions' in the order they ran
    monkeypatch.setattr(_recurrent, "_mined_pools", spy)
    DualEncoderRanker(**PARAMS, negatives="bm25").fit_chunks(CHUNKS)
    assert len(parts) == len(mined) == len(X)
    assert parts == sorted(mined)
    assert len({pool for _, _, pool in mined}) > 1
    assert not np.array_equal(model.match_matrix_, _fit(3, thread_client).match_matrix_)


def test_the_default_client_and_empty_partitions(thread_client):
    """No client=: the default one; a partition without chunks trains nothing."""
    import dask

    def bag(*parts):
        return db.from_delayed([dask.delayed(list)(p) for p in parts])

    ref = DualEncoderRanker(**PARAMS).fit_chunks(CHUNKS)
    _assert_same(DualEncoderRanker(**PARAMS).fit_chunks(bag(CHUNKS)), ref)
    gap = DualEncoderRanker(**PARAMS).fit_chunks(bag(CHUNKS[:3], [], CHUNKS[3:]))
    two = DualEncoderRanker(**PARAMS).fit_chunks(bag(CHUNKS[:3], CHUNKS[3:]))
    _assert_same(gap, two)


def test_the_workers_do_not_change_the_model(thread_client, one_worker):
    """Three partitions on one worker and on two: the same model, bit for bit; another
    partitioning or seed gives another."""
    two = _fit(3, thread_client)
    _assert_same(two, _fit(3, one_worker))
    _assert_same(two, _fit(3, thread_client))
    in_process = DualEncoderRanker(**PARAMS).fit_chunks(CHUNKS)
    for other in (in_process, _fit(2, thread_client), _fit(3, thread_client, random_state=1)):
        assert not np.array_equal(two.embeddings_, other.embeddings_)


_EPOCHS = []  # what _spied_epoch saw (the tasks' functions travel by reference)


def _spied_epoch(pairs, model, state, n_steps, rng):
    state = copy.deepcopy(state)  # with worker threads, the client's arrays themselves
    out = _cluster_fit._dual_partition_epoch(pairs, model, state, n_steps, rng)
    _EPOCHS.append((pairs["n_ctx"], n_steps, state, out))
    return out


def _mean(a, b, n_a, n_b):
    return ((a.astype(np.float64) * n_a + b.astype(np.float64) * n_b) / (n_a + n_b)).astype(
        np.float32
    )


def test_weights_and_moments_are_averaged_by_contexts(thread_client, monkeypatch):
    """After each epoch, the weights and both Adam moments are the partitions' means
    weighted by their numbers of contexts; each partition counts its own steps."""
    submit = thread_client.submit

    def spy_submit(fn, *args, **kwargs):
        return submit(_spied_epoch if fn is _cluster_fit._dual_partition_epoch else fn,
                      *args, **kwargs)  # fmt: skip

    monkeypatch.setattr(thread_client, "submit", spy_submit)
    _EPOCHS.clear()
    chunks = [CHUNKS[0], (X[20:30], Y[20:30])]  # 20 and 10 contexts: 5 and 3 batches of 8
    model = DualEncoderRanker(**{**PARAMS, "epochs": 2, "batch_size": 8})
    model.fit_chunks(db.from_sequence(chunks, npartitions=2), client=thread_client)
    first, second = sorted(_EPOCHS[:2], key=lambda e: e[0]), sorted(_EPOCHS[2:], key=lambda e: e[0])
    assert [(n, steps, out[2]) for n, steps, _, out in first + second] == [
        (10, 0, 3), (20, 0, 5), (10, 3, 6), (20, 5, 10)
    ]  # fmt: skip
    (n_a, _, _, a), (n_b, _, _, b) = first
    weights, moments = second[0][2]
    for k in weights:  # both partitions start from the same state
        np.testing.assert_array_equal(second[1][2][0][k], weights[k])
    for k in weights:
        np.testing.assert_array_equal(weights[k], _mean(a[0][k], b[0][k], n_a, n_b))
        for i in range(2):
            np.testing.assert_array_equal(moments[k][i], _mean(a[1][k][i], b[1][k][i], n_a, n_b))
    assert not np.array_equal(a[0]["Wh"], b[0]["Wh"])
    assert not np.array_equal(a[1]["Wh"][1], b[1]["Wh"][1])
    (n_a, _, _, a), (n_b, _, _, b) = second
    for k, v in model._all_params().items():
        np.testing.assert_array_equal(v, _mean(a[0][k], b[0][k], n_a, n_b))


def test_the_partitions_streams():
    """The first partition draws on from the fit's generator, the others from streams
    seeded from its state and their index, which it does not advance."""

    def generator():
        rng = np.random.default_rng(0)
        rng.random(3)
        return rng

    rng = generator()
    streams = _cluster_fit._dual_streams(rng, 3)
    assert streams[0] is rng and rng.random() == np.random.default_rng(0).random(4)[3]
    draws = [s.random(4).tolist() for s in streams[1:]]
    assert draws[0] != draws[1]
    assert draws == [s.random(4).tolist() for s in _cluster_fit._dual_streams(generator(), 3)[1:]]


def test_an_averaged_model_learns(thread_client):
    """Four partitions averaged each epoch rank the training contexts about as well as the
    in-process fit."""
    params = dict(epochs=25, learning_rate=0.02, hidden_size=16, embedding_dim=16)
    ref = DualEncoderRanker(**{**PARAMS, **params}).fit_chunks(CHUNKS)
    model = _fit(4, thread_client, **params)
    assert ref.score(X, Y) > 0.8
    assert model.score(X, Y) > ref.score(X, Y) - 0.15
    assert model.loss_curve_[-1] < model.loss_curve_[0] * 0.75


def test_a_progress_bar_over_epochs(thread_client, capsys):
    _fit(2, thread_client, verbose=True)
    assert f"{PARAMS['epochs']}/{PARAMS['epochs']}" in capsys.readouterr().err


# --------------------------------------------------------------------------- errors


def test_an_empty_bag(thread_client):
    with pytest.raises(ValueError, match="chunks held no example"):
        DualEncoderRanker(**PARAMS).fit_chunks(
            db.from_sequence([], npartitions=1), client=thread_client
        )


def test_a_bad_chunk_names_its_partition(thread_client):
    chunks = [*CHUNKS[:2], ["not a pair of X and y", "or an object", "with X and y"]]
    with pytest.raises(TypeError, match="bag partition 1: chunk 0 must have attributes X and y"):
        DualEncoderRanker(**PARAMS).fit_chunks(
            db.from_sequence(chunks, npartitions=2), client=thread_client
        )


def test_early_stopping_warm_start_and_a_callables_pools_are_refused(thread_client):
    with pytest.raises(ValueError, match="a callable's pools need fit"):
        _fit(2, thread_client, negatives=lambda X, y: [[] for _ in y])
    with pytest.raises(ValueError, match="does not support early_stopping"):
        _fit(2, thread_client, early_stopping=True)
    model = DualEncoderRanker(**PARAMS, warm_start=True).fit_chunks(CHUNKS)
    with pytest.raises(ValueError, match="does not support warm_start"):
        model.fit_chunks(_bag(2), client=thread_client)


def test_a_model_without_a_cluster_fit(thread_client):
    from irdialog.embed._cluster_fit import fit_bag

    with pytest.raises(TypeError, match="RecurrentReader.fit_chunks takes an iterable"):
        fit_bag(RecurrentReader(), _bag(2), thread_client)


# --------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_worker_processes_give_the_threads_model():
    """Two worker processes (each task's inputs pickled) give the model of worker threads,
    and one partition the in-process model."""
    with local_cluster(processes=True) as client:
        processes, one = _fit(3, client), _fit(1, client)
    with local_cluster(processes=False) as client:
        threads = _fit(3, client)
    _assert_same(processes, threads)
    _assert_same(one, DualEncoderRanker(**PARAMS).fit_chunks(CHUNKS))


@pytest.mark.slow
def test_a_worker_lost_mid_fit_changes_nothing(tmp_path):
    """The worker of the first partition's epoch dies: its contexts are encoded again
    from the bag, the epoch runs again, and the model is the one of a fit without loss."""
    marker = tmp_path / "killed"
    with local_cluster(processes=True) as client:
        expected = _fit(3, client)
        with kill_first_task(client, marker, "_dual_partition_epoch"):
            model = _fit(3, client)
        assert marker.exists()  # a worker was lost
    _assert_same(model, expected)
