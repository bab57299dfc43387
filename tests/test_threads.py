"""Training on several threads: the rule that picks the threads, the kernels that train one
model on them (against their numpy references), what ``n_jobs`` accepts, and for each model
that trains on threads, that a 2-thread fit lands within the spread of 5 seeds of one."""

import itertools

import numba
import numpy as np
import pytest
from conftest import make_tiny_dialogs
from test_memn2n import CONFIGS, GATED, Problem, record_hogwild_threads
from test_qrn import CONFIGS as QRN_CONFIGS
from test_qrn import QRNProblem, _central_differences
from test_recurrent import (
    CANDS,
    PAIRS,
    SEQS,
    SEQS_2,
    Y,
    _bags,
    _params,
    _ragged,
    bidirectional_reference,
    two_encoder_reference,
)
from test_structured_svm import random_stories
from test_supervised_embedding import csr, kernel_inputs, make_problem

from irdialog._threads import (
    MIN_WORK_PER_THREAD,
    n_threads,
    numba_threads,
    share_out,
    threads_for_work,
)
from irdialog.datasets import load_babi_qa, load_dialog_babi
from irdialog.embed import (
    DualEncoderRanker,
    MemN2NRanker,
    MemNNQA,
    QRNRanker,
    RecurrentReader,
    SupervisedEmbeddingRanker,
    _memn2n,
    _memnn,
    _qrn,
    _supervised_embedding,
)
from irdialog.embed import _hogwild_kernels as H
from irdialog.embed import _kernels as K
from irdialog.embed import _memn2n_kernels as MK
from irdialog.embed import _memn2n_parallel_kernels as P
from irdialog.embed import _qrn_parallel_kernels as QP
from irdialog.embed import _recurrent as _rec
from irdialog.embed import _recurrent_kernels as RK
from irdialog.embed import _recurrent_parallel_kernels as RP
from irdialog.embed import _reference as R
from irdialog.svm import PairwiseFeaturizer, StructuredSVMQA, _structured_svm
from irdialog.svm import _kernels as SK
from irdialog.svm import _parallel_kernels as SP
from irdialog.svm import _reference as SR

two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread (NUMBA_NUM_THREADS)"
)

# --------------------------------------------------------------------------- the rule


@pytest.mark.parametrize("n", [1, 2, 3])
def test_share_out_gives_each_item_once_in_order_and_balances_the_cost(n):
    costs = np.random.default_rng(n).integers(1, 100, 40)
    offsets, items = share_out(costs, n)
    assert offsets[0] == 0 and offsets[-1] == len(costs) and np.all(np.diff(offsets) >= 0)
    assert sorted(items.tolist()) == list(range(len(costs)))
    loads = []
    for t in range(n):
        mine = items[offsets[t] : offsets[t + 1]]
        assert np.all(np.diff(mine) > 0)  # in the items' order
        loads.append(costs[mine].sum())
    assert max(loads) - min(loads) <= costs.max()  # the costliest first, to the least loaded


def test_threads_for_work_is_one_per_min_work_up_to_n_jobs():
    most = min(4, numba.config.NUMBA_NUM_THREADS)
    assert threads_for_work(4, 0) == 1
    assert threads_for_work(4, 2 * MIN_WORK_PER_THREAD - 1) == 1  # too small for two
    assert threads_for_work(4, 2 * MIN_WORK_PER_THREAD) == min(2, most)
    assert threads_for_work(4, 100 * MIN_WORK_PER_THREAD) == most
    assert threads_for_work(None, 100 * MIN_WORK_PER_THREAD) == 1
    assert threads_for_work(1, 100 * MIN_WORK_PER_THREAD) == 1
    assert threads_for_work(-1, 100 * MIN_WORK_PER_THREAD) == min(
        n_threads(-1), numba.config.NUMBA_NUM_THREADS
    )
    assert threads_for_work(4, 30, min_work=10) == min(3, most)


def test_numba_threads_sets_and_restores_the_count():
    before = numba.get_num_threads()
    with numba_threads(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with pytest.raises(RuntimeError), numba_threads(1):
        raise RuntimeError
    assert numba.get_num_threads() == before


@pytest.mark.parametrize(
    "model", [SupervisedEmbeddingRanker, MemN2NRanker, QRNRanker, MemNNQA, StructuredSVMQA]
)
@pytest.mark.parametrize("n_jobs", [0, 1.5, "two", True])
def test_bad_n_jobs_is_named(model, n_jobs):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="n_jobs") as error:
        model(n_jobs=n_jobs, epochs=1).fit(X, y)
    assert repr(n_jobs) in str(error.value) or str(n_jobs) in str(error.value)
    with pytest.raises(ValueError, match="n_jobs must be"):
        n_threads(n_jobs)


def test_negative_n_jobs_counts_back_from_every_core():
    # scikit-learn's and joblib's convention: -1 every core, -3 all but two, at least one
    assert n_threads(-3) == max(n_threads(-1) - 2, 1)
    X, y, _ = make_tiny_dialogs()
    SupervisedEmbeddingRanker(n_jobs=-3, epochs=1).fit(X, y)


def _record_argument(monkeypatch, module, name, position):
    """Wrap the kernel ``module.name`` so that each call appends its argument at
    ``position`` to the list returned."""
    calls, kernel = [], getattr(module, name)

    def recorded(*args):
        calls.append(args[position])
        return kernel(*args)

    monkeypatch.setattr(module, name, recorded)
    return calls


# --------------------------------------------------------------------------- SE kernels


def _run_hogwild(P, order, n_shards, n_negatives, lr, margin, adagrad, threads):
    params, matches, pools, state, stats = kernel_inputs(P)
    with numba_threads(threads):
        loss = H.se_hogwild_epoch(
            params, K.CSR(*P["x"]), P["gold"], K.CSR(*P["r"]),
            P["n_candidates"], matches, order, K.SESettings(n_negatives, lr, margin, adagrad),
            state, stats, n_shards, pools,
        )  # fmt: skip
    assert not matches.mark.any()  # the caller's scratch is untouched
    return *params, loss, stats


@pytest.mark.parametrize("n", [0, 1, 5, 7, 8])
@pytest.mark.parametrize("n_shards", [1, 2, 3])
def test_shard_bounds_cover_the_items_in_order(n, n_shards):
    bounds = [H.se_shard_bounds(n, n_shards, s) for s in range(n_shards)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [end - start for start, end in bounds]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize(
    "shared, types, adagrad, n_shards",
    [
        (False, False, False, 1),
        (False, True, False, 2),
        (True, True, True, 3),
        (False, True, True, 2),
    ],
)
def test_se_hogwild_epoch_on_one_thread_is_its_numpy_reference(shared, types, adagrad, n_shards):
    P = make_problem(3, shared=shared, types=types)
    order = np.array([4, 0, 6, 2, 1, 5, 3, 0], dtype=np.int64)
    U, V, GU, GV, loss, stats = _run_hogwild(P, order, n_shards, 3, 0.05, 0.5, adagrad, 1)
    Ur, Vr, GUr, GVr, loss_r, _ = R.se_hogwild_epoch(P, order, n_shards, 3, 0.05, 0.5, adagrad)
    assert loss > 0 and stats[1] > 0
    np.testing.assert_allclose(loss, loss_r, rtol=1e-4)
    np.testing.assert_allclose(stats[0], loss, rtol=1e-12)
    np.testing.assert_allclose(U, Ur, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(V, Vr, rtol=1e-4, atol=1e-5)
    if adagrad:
        np.testing.assert_allclose(GU, GUr, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(GV, GVr, rtol=1e-4, atol=1e-6)
    assert (U is V) == shared
    # the shards draw from their own generators: another model than the serial epoch's
    if n_shards > 1:
        Us, *_ = R.se_sgd_epoch(P, order, 3, 0.05, 0.5, adagrad)
        assert not np.allclose(U, Us, atol=1e-5)


def _disjoint_problem(shared):
    """Two groups of four examples with their own input words, responses and pools: the
    shards of the order [group 0, group 1] touch no row in common."""
    rng = np.random.default_rng(8)
    n_words, dim = 20, 5
    groups = [(range(1, 9), range(0, 3)), (range(10, 19), range(3, 6))]
    x_rows, r_rows, gold, pools = [], [[] for _ in range(6)], [], []
    for words, responses in groups:
        for c in responses:
            r_rows[c] = [(int(w), 1.0) for w in rng.choice(list(words), 2, replace=False)]
        for _ in range(4):
            x_rows.append([(int(w), 1.0) for w in rng.choice(list(words), 3, replace=False)])
            g = int(rng.choice(list(responses)))
            gold.append(g)
            pools.append([c for c in responses if c != g])
    U = rng.normal(0, 0.5, (n_words, dim)).astype(np.float32)
    V = U if shared else rng.normal(0, 0.5, (n_words, dim)).astype(np.float32)
    GU = np.full(n_words, 0.1, np.float32)
    indptr = np.cumsum([0] + [len(p) for p in pools]).astype(np.int64)
    return dict(
        U=U, V=V, GU=GU, GV=GU if shared else GU.copy(), shared=shared,
        x=csr(x_rows, n_words), r=csr(r_rows, n_words), gold=np.array(gold, np.int64),
        n_candidates=6, e=(np.zeros(9, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)),
        m=(np.zeros(7, np.int64), np.zeros(0, np.int64)), n_match=1,
        type_rows=np.zeros(0, np.int64), state=np.array([99], dtype=np.uint64),
        pools=(indptr, np.array([c for p in pools for c in p], np.int64)),
    )  # fmt: skip


@two_threads
@pytest.mark.parametrize("shared, adagrad", [(False, False), (True, True)])
def test_se_hogwild_epoch_on_two_threads_with_disjoint_shards_is_the_reference(shared, adagrad):
    # shards that share no row cannot race: the threads' timing cannot change the result
    P = _disjoint_problem(shared)
    order = np.array([2, 0, 3, 1, 1, 7, 4, 6, 5, 4], dtype=np.int64)
    Ur, Vr, _, _, loss_r, _ = R.se_hogwild_epoch(P, order, 2, 4, 0.1, 1.0, adagrad)
    for _ in range(5):
        U, V, _, _, loss, _ = _run_hogwild(P, order, 2, 4, 0.1, 1.0, adagrad, 2)
        np.testing.assert_allclose(loss, loss_r, rtol=1e-4)
        np.testing.assert_allclose(U, Ur, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(V, Vr, rtol=1e-4, atol=1e-5)
    assert not np.allclose(U, P["U"])


# --------------------------------------------------------------------------- estimators


def _se_work_per_example(model, X, y):
    problem = model._training_problem(X, y, np.random.RandomState(0))
    return _supervised_embedding._epoch_work(problem, 1, model.n_negatives)


def test_se_epochs_too_small_for_threads_run_the_serial_kernel(monkeypatch):
    X, y, _ = make_tiny_dialogs()
    params = dict(embedding_dim=8, epochs=3, random_state=0)
    assert _se_work_per_example(SupervisedEmbeddingRanker(**params), X, y) * len(X) < (
        2 * MIN_WORK_PER_THREAD
    )
    single = SupervisedEmbeddingRanker(**params).fit(X, y)
    monkeypatch.setattr(H, "se_hogwild_epoch", None)  # a call would fail
    threaded = SupervisedEmbeddingRanker(**params, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(threaded.input_embeddings_, single.input_embeddings_)
    np.testing.assert_array_equal(threaded.response_embeddings_, single.response_embeddings_)


def _spread(make, fit_score, seeds=range(5)):
    """(min, max) of the 1-thread scores over ``seeds``, and the 2-thread scores."""
    ones = [fit_score(make(seed, 1)) for seed in seeds]
    twos = [fit_score(make(seed, 2)) for seed in seeds]
    return min(ones), max(ones), twos


@two_threads
def test_se_two_threads_land_within_the_seed_spread_of_one(monkeypatch):
    """Dialog bAbI task 1 (bundled), 3 epochs at the bench's settings: the 2-thread
    (Hogwild) fits of 5 seeds score, on average, inside the range of the 1-thread fits."""
    train, dev = load_dialog_babi(1, "trn"), load_dialog_babi(1, "dev")
    Xd, yd = dev.X[:1000], dev.y[:1000]

    def make(seed, n_jobs):
        return SupervisedEmbeddingRanker(
            candidates=train.candidates, embedding_dim=32, n_negatives=100,
            normalize_input=True, learning_rate=0.1, margin=0.1, epochs=3,
            random_state=seed, n_jobs=n_jobs,
        )  # fmt: skip

    calls = _record_argument(monkeypatch, H, "se_hogwild_epoch", 10)  # its shards
    low, high, twos = _spread(make, lambda m: m.fit(train.X, train.y).score(Xd, yd))
    assert calls == [2] * 15  # every epoch of the 2-thread fits ran on two threads
    assert low <= np.mean(twos) <= high, (low, high, twos)


# --------------------------------------------------------------------------- MemN2N kernels


def _reference_epoch(pb, order, batch_size, adam, lr, frozen_rows):
    """The numpy reference of an epoch of ``pb`` (test_memn2n's Problem): the batches of
    ``order`` in turn, each a step of plain SGD or dense Adam (no clipping) on
    :func:`~irdialog.embed._reference.batch_loss_grad`'s gradient, but for the embedding
    rows ``frozen_rows``. Returns (E, H, G, loss, correct)."""
    W = {"E": pb.E.copy(), "H": pb.H.copy(), "G": pb.G.copy()}
    moments = {k: (np.zeros_like(x), np.zeros_like(x)) for k, x in W.items()}
    trained = ["E"] + ["H"] * bool(pb.cfg[MK.USE_H]) + ["G"] * bool(len(pb.G))
    loss = correct = 0
    for step, start in enumerate(range(0, len(order), batch_size), start=1):
        pb.batch = order[start : start + batch_size]
        b_loss, b_correct, dE, dH, dG, _ = R.batch_loss_grad(pb, W["E"], W["H"], W["G"])
        loss, correct = loss + b_loss, correct + b_correct
        dE[:, frozen_rows] = 0.0
        grads = {"E": dE, "H": dH, "G": dG}
        for k in trained:
            g = grads[k]
            if adam:
                betas, eps = _memn2n._ADAM_BETAS, _memn2n._ADAM_EPS
                W[k], *moments[k] = R.adam_step(W[k], g, *moments[k], step, lr, *betas, eps)
            else:
                W[k] = R.sgd_step(W[k], g, lr)
        W["E"][:, 0] = 0.0
        W["E"][:, frozen_rows] = pb.E[:, frozen_rows]
    E, H, G = W["E"], W["H"], W["G"]
    return E, H, G, loss, correct


@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[2], GATED[1]])
@pytest.mark.parametrize("adam, frozen", [(False, False), (True, False), (False, True)])
def test_memn2n_hogwild_epoch_on_one_thread_is_the_numpy_reference(config, adam, frozen):
    """On one thread, the batches of :func:`hogwild_epoch` step the weights one after
    another, as the serial fit does: SGD (row-wise, as the fit takes it) and dense Adam,
    with and without frozen rows."""
    pb = Problem(0, dtype=np.float64, **config)
    order = np.array([3, 0, 5, 1, 2, 4, 0], np.int64)  # batches of 3, 3 and 1
    batch_size, lr = 3, 0.05
    rows = np.array([9, 11], np.int64) if frozen else np.zeros(0, np.int64)
    ref = _reference_epoch(pb, order, batch_size, adam, lr, rows)
    E, H, G = pb.E.copy(), pb.H.copy(), pb.G.copy()
    n_mat = len(E)
    th = P.make_threads(1, n_mat, pb.V, pb.dim, pb.hops, batch_size,
                        int(np.diff(pb.mptr).max()), pb.n_cand, 2, E.dtype, len(G))  # fmt: skip
    moments = MK.Moments(*(np.zeros_like(x) for x in (E, E, H, H, G, G)))
    use_h = pb.cfg[MK.USE_H] != 0
    update = MK.Update(adam, use_h, len(G) > 0, -1.0, lr, *_memn2n._ADAM_BETAS, _memn2n._ADAM_EPS)
    values = E[:, rows, :].copy()
    cands = pb.cands()
    words = cands._replace(ctok=np.unique(cands.ctok))
    with numba_threads(1):
        epoch = P.HogwildEpoch(order, batch_size, 1, 0, not adam, words.ctok, rows, values)
        loss, correct = P.hogwild_epoch(
            E, H, G, pb.cfg, pb.data(), cands, pb.y, th, moments, update, epoch
        )
    np.testing.assert_allclose(loss, ref[3], rtol=1e-9)
    assert correct == ref[4]
    np.testing.assert_array_equal(E[:, rows], values)
    tol = dict(rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(E, ref[0], **tol)
    np.testing.assert_allclose(H, ref[1], **tol)
    np.testing.assert_allclose(G, ref[2], **tol)
    assert not np.allclose(E, pb.E)  # the epoch moved them


def test_memn2n_epochs_too_small_for_threads_run_the_serial_kernels(monkeypatch):
    X, y, _ = make_tiny_dialogs()
    params = dict(hops=1, embedding_dim=8, epochs=2, batch_size=4, random_state=0)
    model = MemN2NRanker(**params).fit(X, y)
    n_batches = -(-len(X) // 4)
    assert model._batch_work(model._encode(X)) * n_batches < 2 * MIN_WORK_PER_THREAD
    monkeypatch.setattr(_memn2n, "hogwild_epoch", None)  # a call would fail
    threaded = MemN2NRanker(**params, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(threaded.embeddings_, model.embeddings_)


@two_threads
def test_memn2n_two_threads_land_within_the_seed_spread_of_one(monkeypatch):
    """Dialog bAbI task 1 (bundled), 600 examples, 2 epochs at the bench's settings: the
    epochs of the 2-thread fits run on two threads (Hogwild), and the fits of 5 seeds
    score, on average, inside the range of the 1-thread fits."""
    train, dev = load_dialog_babi(1, "trn"), load_dialog_babi(1, "dev")
    X, y, Xd, yd = train.X[:600], train.y[:600], dev.X[:600], dev.y[:600]

    def make(seed, n_jobs):
        return MemN2NRanker(
            candidates=train.candidates, hops=1, embedding_dim=32, position_encoding=False,
            learning_rate=0.01, epochs=2, random_state=seed, n_jobs=n_jobs,
        )  # fmt: skip

    calls = record_hogwild_threads(monkeypatch)
    low, high, twos = _spread(make, lambda m: m.fit(X, y).score(Xd, yd))
    assert calls == [2] * (5 * 2)  # every epoch of the 2-thread fits ran on two threads
    assert low <= np.mean(twos) <= high, (low, high, twos)


# --------------------------------------------------------------------------- MemNN


def _memnn_epoch_inputs(monkeypatch):
    """The arguments of the first serial epoch of a MemNNQA fit on 200 questions of bAbI
    QA task 1 (bundled), the weights copied before the epoch stepped them."""
    data = load_babi_qa(1, "train")
    calls, kernel = [], _memnn.K.train_epoch

    def recorded(params, *args):
        calls.append((type(params)(*(a.copy() for a in params)), *args))
        return kernel(params, *args)

    monkeypatch.setattr(_memnn.K, "train_epoch", recorded)
    MemNNQA(epochs=1, random_state=0).fit(data.X[:200], data.y[:200], data.supporting[:200])
    return kernel, calls[0]


@pytest.mark.parametrize("n_shards", [1, 2, 3])
def test_memnn_hogwild_epoch_on_one_thread_is_the_serial_epoch(monkeypatch, n_shards):
    """On one thread the shards run in turn, each the serial kernel from the weights the
    one before left: the serial epoch over the whole order, bit for bit (the serial
    kernel draws nothing at random)."""
    train_epoch, (params, *args, work) = _memnn_epoch_inputs(monkeypatch)
    serial = type(params)(*(a.copy() for a in params))
    loss = train_epoch(serial, *args, work)
    scratch = H.stack_scratch([work] * n_shards)
    with numba_threads(1):
        sharded = H.memnn_hogwild_epoch(params, *args, *scratch)
    for a, b in zip(params, serial):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(sharded, loss, rtol=1e-12)
    assert np.abs(params.UO).sum() > 0


def test_memnn_epoch_too_small_for_two_threads_is_the_serial_fit(monkeypatch):
    data = load_babi_qa(1, "train")
    X, y, S = data.X[:20], data.y[:20], data.supporting[:20]
    single = MemNNQA(epochs=2, random_state=0).fit(X, y, S)
    monkeypatch.setattr(_memnn, "memnn_hogwild_epoch", None)  # a call would fail
    threaded = MemNNQA(epochs=2, random_state=0, n_jobs=2).fit(X, y, S)
    for a, b in zip(threaded.params_, single.params_):
        np.testing.assert_array_equal(a, b)


@two_threads
def test_memnn_two_threads_land_within_the_seed_spread_of_one(monkeypatch):
    """bAbI QA task 1 (bundled), 600 questions, 2 epochs at the bench's settings: the
    epochs of the 2-thread (Hogwild) fits run on two threads, and the fits of 5 seeds
    score, on average, inside the range of the 1-thread fits (93-99% on the rest)."""
    data = load_babi_qa(1, "train")
    X, y, S = data.X[:600], data.y[:600], data.supporting[:600]
    Xv, yv = data.X[600:], data.y[600:]

    def make(seed, n_jobs):
        return MemNNQA(epochs=2, learning_rate=0.01, margin=0.5, random_state=seed, n_jobs=n_jobs)

    calls = _record_argument(monkeypatch, _memnn, "memnn_hogwild_epoch", 9)  # its facts
    low, high, twos = _spread(make, lambda m: m.fit(X, y, S).score(Xv, yv))
    assert [len(facts) for facts in calls] == [2] * 10  # a row per thread
    assert low <= np.mean(twos) <= high, (low, high, twos)


# --------------------------------------------------------------------------- QRN


def _qrn_parts_loss_grad(qp, n_parts, threads, batch=None, min_work=MIN_WORK_PER_THREAD):
    """batch_loss_grad_parts on the QRNProblem ``qp`` (its batch, or ``batch``): (loss,
    correct, dE, dtheta), with parts made for the whole batch of the problem; ``min_work``
    0 runs every pass on the threads."""
    pb = qp.pb
    batch = pb.batch if batch is None else batch
    sizes = (int(qp.cfg[0]), len(pb.batch), int(np.diff(pb.mptr).max()), pb.n_cand, 2)
    parts = QP.make_parts(n_parts, qp.E, qp.theta, *sizes)
    parts.dE[:] = 7.0  # what the last batch left: overwritten
    parts.dtheta[:] = 7.0
    with numba_threads(threads):
        loss, correct = QP.batch_loss_grad_parts(
            qp.E, qp.theta, qp.cfg, pb.data(), pb.cands(), pb.y, batch, parts, n_parts, min_work
        )
    return loss, correct, parts.dE[0].copy(), parts.dtheta[0].copy()


@pytest.mark.parametrize(
    "config, n_parts, min_work",
    [(QRN_CONFIGS[0], 2, MIN_WORK_PER_THREAD), (QRN_CONFIGS[1], 3, 0), (QRN_CONFIGS[3], 5, 0)],
)
def test_qrn_batch_on_parts_is_the_numpy_reference(config, n_parts, min_work):
    """The loss and answers of the numpy reference, and the central differences of its
    loss over every weight (float64), as the serial kernel's in test_qrn; the candidates
    and the sum on this thread (the tiny problem's work) or on the threads (min_work 0)."""
    qp = QRNProblem(1, **config)
    r_loss, r_correct, _ = qp.reference_loss()
    threads = min(n_parts, numba.config.NUMBA_NUM_THREADS)
    loss, correct, dE, dtheta = _qrn_parts_loss_grad(qp, n_parts, threads, min_work=min_work)
    np.testing.assert_allclose(loss, r_loss, rtol=1e-9, atol=1e-10)
    assert correct == r_correct
    E, theta = qp.E.copy(), qp.theta.copy()
    fd_E = _central_differences(lambda: qp.reference_loss(E=E)[0], E)
    fd_theta = _central_differences(lambda: qp.reference_loss(theta=theta)[0], theta)
    fd_E[:, 0] = 0  # the nil word is held at zero
    dE[:, 0] = 0
    np.testing.assert_allclose(dE, fd_E, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dtheta, fd_theta, rtol=1e-5, atol=1e-7)
    assert np.count_nonzero(dtheta) > 0.5 * dtheta.size
    # the serial kernel's gradient, up to the order of the sums
    _, _, s_dE, s_dtheta = qp.kernel_loss_grad()
    s_dE[:, 0] = 0
    np.testing.assert_allclose(dE, s_dE, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dtheta, s_dtheta, rtol=1e-9, atol=1e-12)


def test_qrn_batch_on_parts_float32_and_a_batch_shorter_than_the_parts():
    qp = QRNProblem(3, dtype=np.float32)
    batch = qp.pb.batch[:4]  # parts of two examples, smaller than make_parts sized
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    loss, correct, dE, dtheta = _qrn_parts_loss_grad(qp, 2, threads, batch, min_work=0)
    qp.pb.batch = batch
    r_loss, r_correct, _ = qp.reference_loss()
    _, _, s_dE, s_dtheta = qp.kernel_loss_grad()
    np.testing.assert_allclose(loss, r_loss, rtol=2e-4)
    assert correct == r_correct
    np.testing.assert_allclose(dE, s_dE, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(dtheta, s_dtheta, rtol=2e-4, atol=2e-5)
    assert np.abs(dtheta).sum() > 0


def test_qrn_batches_too_small_for_threads_run_the_serial_kernel(monkeypatch):
    X, y, _ = make_tiny_dialogs()
    params = dict(embedding_dim=8, epochs=3, batch_size=4, random_state=0)
    model = QRNRanker(**params).fit(X, y)
    assert model._batch_work(model._encode(X)) < 2 * MIN_WORK_PER_THREAD
    monkeypatch.setattr(_qrn, "batch_loss_grad_parts", None)  # a call would fail
    threaded = QRNRanker(**params, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(threaded.embeddings_, model.embeddings_)
    np.testing.assert_array_equal(threaded.unit_weights_, model.unit_weights_)


@two_threads
def test_qrn_two_threads_land_within_the_seed_spread_of_one(monkeypatch):
    """bAbI QA task 1 (bundled), one run of 5 epochs at the bench's settings (the 1-thread
    fits of 5 seeds score 78-100% on the held-out stories): the batches of the 2-thread
    fits run on two threads, and those fits score, on average, inside that range."""
    data = load_babi_qa(1, "train")
    X, y, Xv, yv = data.X[:800], data.y[:800], data.X[800:], data.y[800:]

    def make(seed, n_jobs):
        return QRNRanker(learning_rate=0.005, epochs=5, random_state=seed, n_jobs=n_jobs)

    calls = []
    parts = _qrn.batch_loss_grad_parts

    def counted(*args):
        calls.append(args[8])
        return parts(*args)

    monkeypatch.setattr(_qrn, "batch_loss_grad_parts", counted)
    low, high, twos = _spread(make, lambda m: m.fit(X, y).score(Xv, yv))
    assert calls and set(calls) == {2}
    assert len(calls) == 5 * 5 * (800 // 32)  # every batch of the 2-thread fits
    assert low <= np.mean(twos) <= high, (low, high, twos)


# --------------------------------------------------------------------------- dual encoder


# the schedule of three batches on one thread, in their order
ONE_THREAD = (np.array([0, 3], np.int64), np.arange(3, dtype=np.int64))


def _record_threads(monkeypatch, name, position):
    """Wrap the recurrent Hogwild kernel ``name`` so that each call appends the threads of
    its epoch's schedule (the epoch record at ``position``) to the list returned."""
    calls, kernel = [], getattr(_rec, name)

    def recorded(*args):
        calls.append(len(args[position].tptr) - 1)
        return kernel(*args)

    monkeypatch.setattr(_rec, name, recorded)
    return calls


def _serial_epoch(P, batches, step_batch, frozen, clip=None):
    """The batches stepped one after another as the serial fit steps them:
    ``step_batch(P, grads, batch) -> (loss, correct)`` then
    :func:`~irdialog.embed._recurrent_kernels.apply_adam` (at learning rate 0.01, the
    ``frozen`` rows' gradient dropped). Returns (params, moments, loss, correct)."""
    P = {k: v.copy() for k, v in P.items()}
    grads = RK.Grads(P)
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in P.items()}
    loss = correct = 0
    for step, batch in enumerate(batches, start=1):
        b_loss, b_correct = step_batch(P, grads, batch)
        loss, correct = loss + b_loss, correct + b_correct
        grads.dense["Emb"][frozen] = 0.0
        RK.apply_adam(P, grads, moments, 0.01, clip, step)
    return P, moments, loss, correct


def _hogwild_settings(P, frozen, clip=None):
    """(moments m, moments v, AdamSteps) of a Hogwild epoch from zero moments."""
    m = {k: np.zeros_like(v) for k, v in P.items()}
    v = {k: np.zeros_like(x) for k, x in P.items()}
    max_norm = -1.0 if clip is None else clip
    return m, v, RP.AdamSteps(np.asarray(frozen, np.int64), max_norm, 0.01, 0.9, 0.999, 1e-8, 0)


def _assert_same_epoch(P, m, loss, correct, want):
    """The params, first moments, loss and answers of a Hogwild epoch on one thread are
    those of :func:`_serial_epoch`."""
    W, moments, w_loss, w_correct = want
    np.testing.assert_allclose(loss, w_loss, rtol=1e-12)
    assert correct == w_correct
    for name in W:
        np.testing.assert_allclose(P[name], W[name], rtol=1e-12, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(m[name], moments[name][0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("lstm", [True, False], ids=["lstm", "rnn"])
@pytest.mark.parametrize("frozen, clip", [([], None), ([2, 7], 0.5)])
def test_dual_hogwild_epoch_on_one_thread_is_the_serial_epoch(lstm, frozen, clip):
    """float64, test_recurrent's tiny pairs in batches of 2, 2 and 1: on one thread the
    epoch's steps are those of dual_batch and apply_adam in turn (clipped or not, with
    frozen rows or not), which test_recurrent holds to the numpy references."""
    P = _params(9, lstm, "dual")
    ptr, tok = _ragged(SEQS)
    ctx, resp, flags = (np.asarray(a, np.int64) for a in PAIRS)
    bptr = np.array([0, 2, 4, 5], np.int64)
    batches = [slice(bptr[i], bptr[i + 1]) for i in range(3)]

    def step_batch(P, grads, b):
        return RK.dual_batch(P, grads, lstm, ptr, tok, ctx[b], resp[b], flags[b], 0)

    want = _serial_epoch(P, batches, step_batch, frozen, clip)
    P = {k: v.copy() for k, v in P.items()}
    m, v, adam_steps = _hogwild_settings(P, frozen, clip)
    buffers = RP.make_dual_threads(P, 1, P["Emb"].dtype)
    epoch = RP.DualEpoch(ptr, tok, bptr, ctx, resp, flags, *ONE_THREAD)
    with numba_threads(1):
        loss, correct = RP.dual_hogwild_epoch(
            RP.weights_record(P), lstm, epoch, 0, buffers, RP.weights_record(m),
            RP.weights_record(v), adam_steps,
        )  # fmt: skip
    _assert_same_epoch(P, m, loss, correct, want)
    for name, buffer in zip(buffers._fields, buffers):
        assert name == "touched" or not buffer.any(), name  # zero again after each step


@two_threads
def test_dual_two_threads_land_within_the_seed_spread_of_one(monkeypatch):
    """Dialog bAbI task 1 (bundled), 600 contexts, 2 epochs of a small LSTM: the epochs
    of the 2-thread fits run on two threads (Hogwild), and the fits of 5 seeds score, on
    average, inside the range of the 1-thread fits on 300 dev contexts."""
    train, dev = load_dialog_babi(1, "trn"), load_dialog_babi(1, "dev")
    X, y, Xd, yd = train.X[:600], train.y[:600], dev.X[:300], dev.y[:300]

    def make(seed, n_jobs):
        return DualEncoderRanker(
            candidates=train.candidates, embedding_dim=32, hidden_size=32, epochs=2,
            learning_rate=0.01, random_state=seed, n_jobs=n_jobs,
        )  # fmt: skip

    calls = _record_threads(monkeypatch, "dual_hogwild_epoch", 2)
    low, high, twos = _spread(make, lambda m: m.fit(X, y).score(Xd, yd))
    assert calls == [2] * (5 * 2)  # every epoch of the 2-thread fits ran on two threads
    assert low <= np.mean(twos) <= high, (low, high, twos)


# --------------------------------------------------------------------------- reader

# the reader's readings: one encoder, two (the second right to left), two (the second on
# the copy of the sequences whose queries are reversed)
READINGS = ["one", "bidirectional", "query_both_ways"]
BATCH = np.array([6, 2, 0, 3, 1, 5, 4])  # the rows of test_recurrent's tiny problem


def _reader_problem(seed, lstm, reading, dtype=np.float64):
    """(params, readings, ptr, tok, cands) of the tiny reader of ``reading``."""
    P = _params(seed, lstm, "reader", dtype, bidirectional=reading != "one")
    reads = RK.readings(P, query_reversed=reading == "query_both_ways")
    ptr, tok = _ragged(SEQS + SEQS_2 if reading == "query_both_ways" else SEQS)
    return P, reads, ptr, tok, (CANDS[0], CANDS[1], CANDS[2].astype(dtype))


def _reader_reference(P, lstm, reading):
    """The numpy reference's (loss, correct, grads, states) of the reader of ``reading``."""
    if reading == "one":
        ptr, tok = _ragged(SEQS)
        return R.reader_loss_grad(P, lstm, ptr, tok, np.arange(len(SEQS)), 0, _bags(CANDS), Y)
    if reading == "bidirectional":
        return bidirectional_reference(P, lstm)
    return two_encoder_reference(P, lstm, SEQS, SEQS_2, False)


@pytest.mark.parametrize("lstm", [True, False], ids=["lstm", "rnn"])
@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("frozen, clip", [([], None), ([2, 7], 0.5)])
def test_reader_hogwild_epoch_on_one_thread_is_the_serial_epoch(lstm, reading, frozen, clip):
    """float64, the tiny reader's BATCH in batches of 3, 3 and 1: on one thread the
    epoch's steps are those of reader_batch and apply_adam in turn, for every reading
    (the second encoder's weights, with one reading, left alone)."""
    P, reads, ptr, tok, cands = _reader_problem(13, lstm, reading)
    bptr = np.array([0, 3, 6, 7], np.int64)
    batches = [BATCH[bptr[i] : bptr[i + 1]] for i in range(3)]

    def step_batch(P, grads, rows):
        return RK.reader_batch(P, grads, lstm, ptr, tok, rows, 0, cands, Y[rows], reads)

    want = _serial_epoch(P, batches, step_batch, frozen, clip)
    P = {k: v.copy() for k, v in P.items()}
    m, v, adam_steps = _hogwild_settings(P, frozen, clip)
    buffers = RP.make_reader_threads(P, reads, 1, P["Emb"].dtype)
    epoch = RP.ReaderEpoch(ptr, tok, bptr, BATCH.astype(np.int64), Y, *ONE_THREAD)
    with numba_threads(1):
        loss, correct = RP.reader_hogwild_epoch(
            RP.reader_weights_record(P, reads), RP.reading_array(reads), lstm, epoch, 0, cands,
            buffers, RP.reader_weights_record(m, reads), RP.reader_weights_record(v, reads),
            adam_steps,
        )  # fmt: skip
    _assert_same_epoch(P, m, loss, correct, want)


@pytest.mark.parametrize("lstm", [True, False], ids=["lstm", "rnn"])
@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("block", [1, 3, 7])
def test_encode_parts_is_the_numpy_reference(lstm, reading, block):
    """float64: the numpy reference's states of BATCH, in its order, every reading's side
    by side. float32: encode_states over the same blocks of rows, bit for bit."""
    P, reads, ptr, tok, _ = _reader_problem(16, lstm, reading)

    def states(P):
        out = np.full((len(BATCH), P["Wh"].shape[0] * len(reads)), np.nan)
        with numba_threads(min(2, numba.config.NUMBA_NUM_THREADS)):
            RP.encode_parts(RP.encoders_record(P, reads), RP.reading_array(reads), lstm, ptr,
                            tok, BATCH, 0, out, block)  # fmt: skip
        return out

    want = _reader_reference(P, lstm, reading)[3]
    np.testing.assert_allclose(states(P), want[BATCH], rtol=1e-12, atol=1e-14)
    P32 = _reader_problem(17, lstm, reading, np.float32)[0]
    ours = states(P32)
    for lo in range(0, len(BATCH), block):
        h, _ = RK.encode_states(P32, lstm, ptr, tok, BATCH[lo : lo + block], 0, reads)
        np.testing.assert_array_equal(ours[lo : lo + block], h)


def test_reader_epochs_too_small_for_threads_run_the_serial_kernels(monkeypatch):
    """A tiny reader's epochs (and its validation split) do not pay for two threads: the
    fit of n_jobs=2 runs the serial kernels and is that of n_jobs=1, bit for bit."""
    X, y, _ = make_tiny_dialogs()
    params = dict(hidden_size=8, embedding_dim=8, epochs=3, batch_size=4, early_stopping=True,
                  validation_fraction=0.3, random_state=0)  # fmt: skip
    single = RecurrentReader(**params).fit(X, y)
    monkeypatch.setattr(_rec, "reader_hogwild_epoch", None)  # a call would fail
    monkeypatch.setattr(_rec, "encode_parts", None)
    threaded = RecurrentReader(**params, n_jobs=2).fit(X, y)
    for name in ("embeddings_", "recurrent_weights_", "output_embeddings_"):
        np.testing.assert_array_equal(getattr(threaded, name), getattr(single, name))


@two_threads
def test_reader_two_threads_land_within_the_seed_spread_of_one(monkeypatch):
    """bAbI QA task 1 (bundled), 800 stories, 5 epochs of an LSTM of 32 units: the epochs
    of the 2-thread fits run on two threads (Hogwild), and the fits of 5 seeds score, on
    average, inside the range of the 1-thread fits on the held-out stories."""
    data = load_babi_qa(1, "train")
    X, y, Xv, yv = data.X[:800], data.y[:800], data.X[800:], data.y[800:]

    def make(seed, n_jobs):
        return RecurrentReader(hidden_size=32, embedding_dim=32, epochs=5, random_state=seed,
                               n_jobs=n_jobs)  # fmt: skip

    calls = _record_threads(monkeypatch, "reader_hogwild_epoch", 3)
    low, high, twos = _spread(make, lambda m: m.fit(X, y).score(Xv, yv))
    assert calls == [2] * (5 * 5)  # every epoch of the 2-thread fits ran on two threads
    assert low <= np.mean(twos) <= high, (low, high, twos)


# --------------------------------------------------------------------------- structured SVM


def _svm_problem(seed, max_facts):
    """A batch of random stories, random gold tuples and random weights (no ties between
    tuples): (batch, gold, w)."""
    rng = np.random.default_rng(seed)
    X = random_stories(rng, 14)
    feat = PairwiseFeaturizer(n_features=2**12, max_df=0.7, link_df=0.4, max_facts=max_facts)
    batch = feat.fit(X).encode(X)
    gold = np.full((len(X), 3), -1, dtype=np.int64)
    for q, ctx in enumerate(X):
        n = len(ctx.history)
        facts = rng.permutation(n)[: rng.integers(0, min(n, max_facts) + 1)]
        gold[q, : len(facts)] = facts
    return batch, gold, rng.normal(size=2**12)


def _svm_run(w, lam, eta0):
    """An averaged-SGD run whose weights are ``w``, before its first step."""
    run = SK.start_asgd(len(w), lam, eta0)
    run.U[:] = w
    return run


def _svm_epochs(kernel, w, lam, eta0, fold=False):
    """``kernel(run)`` from a run whose weights are ``w`` (on the brink of folding their
    scale into U with ``fold``): the run, the kernel's violations."""
    run = _svm_run(w, lam, eta0)
    if fold:  # the second step folds the scale into U
        run.U[:] = w / 1.05e-9
        run.state[0] = 1.05e-9
    return run, kernel(run)


@pytest.mark.parametrize("max_facts", [2, 3])
@pytest.mark.parametrize(
    "block, n_parts, per_block",
    [(1, 1, np.inf), (2, 2, np.inf), (3, 1, np.inf), (5, 2, np.inf), (4, 3, np.inf),
     (32, 2, np.inf), (8, 2, 0.6), (6, 3, 2.0)],
)  # fmt: skip
def test_svm_speculative_epoch_is_the_serial_epoch(max_facts, block, n_parts, per_block):
    """The searches of a block run ahead on threads, the steps up to its first violation,
    in blocks of a fixed size (``per_block`` inf) or sized by the recent violations: the
    serial epoch's weights and violations, bit for bit (as the single-thread reference of
    the blocks), and the dense numpy pass's."""
    batch, gold, w = _svm_problem(20 + max_facts, max_facts)
    order = np.array([3, 0, 7, 12, 1, 5, 9, 2, 13, 4, 11, 6, 10, 8, 0, 3], dtype=np.int64)
    lam, eta0 = 0.3, 1.5  # steps that shrink the weights enough to change the searches
    bw = SP.block_workspace(batch, n_parts, block)

    def speculative(run):
        with numba_threads(min(n_parts, numba.config.NUMBA_NUM_THREADS)):
            costs = SP.search_costs(batch)
            return SP.stage1_epoch_speculative(
                order, run, gold, batch, costs, bw, n_parts, block, per_block, 0.0
            )

    def serial(run):
        return SK.stage1_epoch(order, run, gold, batch, SK.search_workspace(batch))

    def reference(run):
        return SP.stage1_epoch_speculative_reference(order, run, gold, batch, block)

    run, violations = _svm_epochs(speculative, w, lam, eta0)
    last, mean, r_violations = SR.stage1_epoch(w, batch, gold, order, lam, eta0)
    assert violations == r_violations > 0
    np.testing.assert_allclose(run.state[0] * run.U, last, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(SK.averaged_weights(run), mean, rtol=1e-9, atol=1e-12)
    for kernel, fold in [(serial, False), (reference, False), (speculative, True)]:
        other, other_violations = _svm_epochs(kernel, w, lam, eta0, fold)
        if fold:  # the serial epoch from the same brink
            run, violations = _svm_epochs(serial, w, lam, eta0, fold)
        assert other_violations == violations
        for ours, theirs in zip(run[:3], other[:3]):  # U, V, state
            np.testing.assert_array_equal(ours, theirs)


def test_svm_speculative_searches_see_the_scale_of_their_step():
    """From trained weights, steps that halve the weights' scale: the searches after
    quiet steps in a block find other tuples at the scale of their own step than at the
    block's start, and the kernel's steps are still the serial epoch's."""
    batch, gold, w = _svm_problem(23, 3)
    order = np.array([3, 0, 7, 12, 1, 5, 9, 2, 13, 4, 11, 6, 10, 8, 0, 3], dtype=np.int64)
    trained = SK.start_asgd(len(w), 0.01, 1.0)
    for _ in range(6):
        SK.stage1_epoch(order, trained, gold, batch, SK.search_workspace(batch))

    def start():  # the trained weights, the step sizes of a new run
        state = np.array([trained.state[0], trained.state[1], 0.0])
        return SK.ASGD(trained.U.copy(), trained.V.copy(), state, 0.9, 1.9)

    serial = start()
    violations = SK.stage1_epoch(order, serial, gold, batch, SK.search_workspace(batch))
    threaded = start()
    with numba_threads(min(2, numba.config.NUMBA_NUM_THREADS)):
        bw = SP.block_workspace(batch, 2, 8)
        costs = SP.search_costs(batch)
        violations_2 = SP.stage1_epoch_speculative(
            order, threaded, gold, batch, costs, bw, 2, 8, np.inf, 0.0
        )
        assert violations_2 == violations
    for ours, theirs in zip(threaded[:3], serial[:3]):
        np.testing.assert_array_equal(ours, theirs)
    frozen = start()  # every search of a block at the scale of its start: another model
    work = SK.search_workspace(batch)
    plus, minus = np.empty_like(work.buf), np.empty_like(work.buf)
    for lo in range(0, len(order), 8):
        alpha = frozen.state[0]
        for q in order[lo : lo + 8]:
            U, now = frozen.U, frozen.state[0]
            n_plus, n_minus, loss = SK.stage1_search(U, alpha, gold, batch, q, work, plus, minus)
            if not SK.margin_violated(U, now, plus, n_plus, minus, n_minus, loss):
                n_plus = n_minus = 0
            SK._asgd_step(frozen, plus, n_plus, minus, n_minus)
    assert not np.array_equal(frozen.U, serial.U)


def test_svm_share_out_gives_each_question_once_the_costliest_first():
    batch, _, _ = _svm_problem(22, 2)
    bw = SP.block_workspace(batch, 3, 8)
    cost = np.array([5.0, 1.0, 9.0, 2.0, 2.0, 7.0, 3.0, 1.0, 4.0, 6.0])
    questions = np.array([9, 0, 2, 7, 5, 3, 8, 6], dtype=np.int64)  # costs 6 5 9 1 7 2 4 3
    SP.share_out(cost, questions, bw, 3)
    parts = [sorted(bw.rows[p, : bw.n_rows[p]].tolist()) for p in range(3)]
    # costs 9, 7, 6 to parts 0, 1, 2, then 5 -> 2, 4 -> 1, 3 -> 0, 2 -> 1 (the first of
    # two parts at 11), 1 -> 2
    assert parts == [[2, 7], [4, 5, 6], [0, 1, 3]]
    np.testing.assert_array_equal(bw.load[:3], [12.0, 13.0, 12.0])


def test_svm_blocks_hold_the_violations_per_block_at_the_recent_rate():
    assert SP._next_block(0.01, 2, 16, 0.6, 0, 800) == 16  # at most the block
    assert SP._next_block(0.25, 2, 16, 1.5, 0, 800) == 6
    assert SP._next_block(0.5, 3, 16, 1.5, 0, 800) == 3
    assert SP._next_block(0.5, 2, 16, 0.75, 0, 800) == 1  # below one per part: this thread
    assert SP._next_block(0.01, 2, 16, 0.6, 795, 800) == 5  # the questions left
    assert SP._next_block(0.9, 2, 16, np.inf, 0, 800) == 16


def test_svm_quiet_scales_are_the_steps_scales_up_to_a_fold():
    run = _svm_run(np.ones(4), 0.1, 0.5)
    alpha = np.zeros(6)
    assert SP.quiet_scales(run, alpha, 6) == 6
    for r in range(6):
        assert alpha[r] == run.state[0]  # bit for bit
        SK._asgd_step(run, np.zeros(0, np.int64), 0, np.zeros(0, np.int64), 0)
    run.state[0] = SK.FOLD_BELOW * 1.07  # the second step folds
    assert SP.quiet_scales(run, alpha, 6) == 2
    assert alpha[0] == run.state[0]


@pytest.mark.parametrize("max_facts", [1, 3])
@pytest.mark.parametrize("n_parts", [1, 2, 3])
def test_svm_predict_on_parts_is_the_numpy_reference(max_facts, n_parts):
    batch, _, w = _svm_problem(30 + max_facts, max_facts)
    out = np.full((len(batch.qsent) - 1, 3), 7, dtype=np.int64)
    with numba_threads(min(n_parts, numba.config.NUMBA_NUM_THREADS)):
        SP.stage1_predict_parts(w, batch, SP.block_workspace(batch, n_parts, 1), out, n_parts)
    serial = np.empty_like(out)
    SK.stage1_predict(w, batch, SK.search_workspace(batch), serial)
    np.testing.assert_array_equal(out, serial)
    for q in range(len(out)):
        facts = SR.best_tuple(w, batch, q)[1]
        assert tuple(out[q]) == tuple(facts) + (-1,) * (3 - len(facts))
    assert (out[:, 0] >= 0).any()


def _reference_search_costs(batch):
    """search_costs by enumeration: the chained pairs and triples of facts, and the fact
    pairs the search scores for them, as sets."""
    out = []
    for q in range(len(batch.qsent) - 1):
        lengths = np.diff(batch.sent[batch.qsent[q] : batch.qsent[q + 1] + 1])
        n = len(lengths) - 1
        link_sets = SR.sentence_sets(batch, q, batch.link)
        slots = sum(lengths[i] * (lengths[n] + lengths[i]) for i in range(n))
        scored, tuples = set(), 0
        for size in range(2, batch.max_facts + 1):
            for facts in itertools.permutations(range(n), size):
                if not SR.chained(link_sets, facts):
                    continue
                if size == 2:
                    scored.add((0, *facts))
                else:
                    tuples += 1
                    scored |= {(1, facts[1], facts[2]), (2, facts[0], facts[2])}
        pairs = sum(lengths[i] * lengths[j] for _, i, j in scored)
        units = pairs + SP.SLOT_WEIGHT * batch.max_facts * slots + SP.TUPLE_WEIGHT * tuples
        out.append(SP.PAIR_COST * units)
    return np.array(out)


@pytest.mark.parametrize("max_facts", [1, 2, 3])
def test_svm_search_costs_are_the_tuples_of_the_pruning(max_facts):
    batch, _, _ = _svm_problem(40 + max_facts, max_facts)
    costs = SP.search_costs(batch)
    np.testing.assert_allclose(costs, _reference_search_costs(batch), rtol=1e-12)
    assert len(set(costs.tolist())) > 3


def test_svm_fits_too_small_for_threads_run_the_serial_kernel(monkeypatch):
    X, y, _ = make_tiny_dialogs()
    params = dict(epochs=3, n_features=2**12, random_state=0)
    single = StructuredSVMQA(**params).fit(X, y)
    batch = single.featurizer_.encode(X)
    assert 2 * _structured_svm.BLOCK_PER_THREAD * SP.search_costs(batch).mean() < (
        2 * MIN_WORK_PER_THREAD
    )
    monkeypatch.setattr(_structured_svm, "stage1_epoch_speculative", None)  # a call would fail
    threaded = StructuredSVMQA(**params, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(threaded.coef_support_, single.coef_support_)
    np.testing.assert_array_equal(threaded.coef_answer_, single.coef_answer_)


@two_threads
def test_svm_two_threads_fit_the_model_of_one(monkeypatch):
    """bAbI QA task 1 (bundled), 300 stories, up to 5 passes per stage: the epochs of the
    2-thread fits run ahead on two threads, their models are those of one thread, bit for
    bit, and so are their scores and tuples of 200 held-out stories, searched on two."""
    data = load_babi_qa(1, "train")
    X, y, sup, Xv = data.X[:300], data.y[:300], data.supporting[:300], data.X[800:]
    calls = _record_argument(monkeypatch, _structured_svm, "stage1_epoch_speculative", 6)
    predictions = _record_argument(monkeypatch, _structured_svm, "stage1_predict_parts", 4)
    for seed in (0, 1):
        one = StructuredSVMQA(epochs=5, random_state=seed).fit(X, y, supporting=sup)
        two = StructuredSVMQA(epochs=5, random_state=seed, n_jobs=2).fit(X, y, supporting=sup)
        assert len(calls) == two.n_iter_[0] and set(calls) == {2}  # every pass, two threads
        calls.clear()
        np.testing.assert_array_equal(two.coef_support_, one.coef_support_)
        np.testing.assert_array_equal(two.coef_answer_, one.coef_answer_)
        np.testing.assert_array_equal(two.violations_, one.violations_)
        assert one.violations_[0, 0] > 0
        assert not predictions
        np.testing.assert_array_equal(two.decision_function(Xv), one.decision_function(Xv))
        assert two.predict_supporting(Xv) == one.predict_supporting(Xv)
        assert predictions == [2, 2]  # the searches of the held-out stories on two threads
        predictions.clear()
