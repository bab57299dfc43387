"""SupervisedEmbeddingRanker: the numba kernels against plain numpy references, a
finite-difference check of the margin loss gradient, and the estimator contract."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conformance import RankerConformance
from conftest import TINY_KB, make_tiny_dialogs
from sklearn.pipeline import make_pipeline

from irdialog.base import Context, Turn
from irdialog.embed import SupervisedEmbeddingRanker
from irdialog.embed import _kernels as K
from irdialog.embed import _reference as R
from irdialog.features import MatchTypeFeaturizer, type_token


def csr(rows, n_cols):
    """CSR arrays (int64 indptr, uint32 indices, float32 data) of lists of (col, value)."""
    m = sp.csr_matrix(
        (
            [v for r in rows for _, v in r],
            ([i for i, r in enumerate(rows) for _ in r], [c for r in rows for c, _ in r]),
        ),
        shape=(len(rows), n_cols),
        dtype=np.float32,
    )
    m.sum_duplicates()
    return m.indptr.astype(np.int64), m.indices.astype(np.uint32), m.data.astype(np.float32)


def make_problem(seed, *, shared=False, types=True, dim=6, n_examples=7):
    """A random tiny training problem, built directly as the kernel's arrays.

    14 words (0 nil, 12-13 type words), 6 candidates plus one gold response outside the
    candidate set, bags of 0-4 words with counts, some examples with no input words, and
    (with types) entity mentions over a match vocabulary of 10 words.
    """
    rng = np.random.default_rng(seed)
    n_words, n_cand, n_match = 14, 6, 10
    U = rng.normal(0, 0.5, (n_words, dim)).astype(np.float32)
    U[0] = 0
    V = U if shared else rng.normal(0, 0.5, (n_words, dim)).astype(np.float32)
    x_rows = [
        [(int(w), float(rng.integers(1, 3))) for w in rng.integers(1, 12, rng.integers(0, 5))]
        for _ in range(n_examples)
    ]
    r_rows = [
        [(int(w), 1.0) for w in rng.choice(np.arange(1, 12), rng.integers(1, 4), replace=False)]
        for _ in range(n_cand + 1)
    ]
    m_rows = [
        [(int(w), 1.0) for w in rng.choice(n_match, 2, replace=False)] for _ in range(n_cand + 1)
    ]
    gold = rng.integers(0, n_cand + 1, n_examples).astype(np.int64)
    if types:
        e_rows = [
            [
                (int(w), int(t))
                for w, t in zip(rng.choice(n_match, 2, replace=False), rng.integers(0, 2, 2))
            ]
            for _ in range(n_examples)
        ]
        type_rows = np.array([12, 13], dtype=np.int64)
    else:
        e_rows = [[] for _ in range(n_examples)]
        type_rows = np.zeros(0, dtype=np.int64)
    e_indptr = np.cumsum([0] + [len(r) for r in e_rows]).astype(np.int64)
    m_indptr, m_indices, _ = csr(m_rows, n_match)
    e_words = np.array([w for r in e_rows for w, _ in r], np.int64)
    e_types = np.array([t for r in e_rows for _, t in r], np.int64)
    GU = np.abs(rng.normal(0, 0.1, n_words)).astype(np.float32)
    return dict(
        U=U, V=V, GU=GU, GV=GU if shared else GU.copy(), shared=shared,
        x=csr(x_rows, n_words), r=csr(r_rows, n_words), gold=gold, n_candidates=n_cand,
        e=(e_indptr, e_words, e_types),
        m=(m_indptr, m_indices.astype(np.int64)), n_match=n_match, type_rows=type_rows,
        state=np.array([int(rng.integers(0, 2**62))], dtype=np.uint64),
    )  # fmt: skip


def kernel_inputs(P):
    """Fresh copies of problem ``P``'s tables (one array for U and V with one dictionary),
    its matches and negative pools, rng state and statistics, as an SE epoch kernel takes
    them: ``(params, matches, pools, state, stats)``."""
    U, GU = P["U"].copy(), P["GU"].copy()
    V = U if P["shared"] else P["V"].copy()
    GV = GU if P["shared"] else P["GV"].copy()
    matches = K.SEMatches(*P["e"], *P["m"], P["type_rows"], np.zeros(P["n_match"], np.int64))
    pools = K.SENegatives(*P["pools"]) if "pools" in P else None
    return K.SEParams(U, V, GU, GV), matches, pools, P["state"].copy(), np.zeros(2)


def run_kernel(P, order, n_negatives, lr, margin, adagrad):
    params, matches, pools, state, stats = kernel_inputs(P)
    loss = K.se_sgd_epoch(
        params, K.CSR(*P["x"]), P["gold"], K.CSR(*P["r"]), P["n_candidates"],
        matches, order, K.SESettings(n_negatives, lr, margin, adagrad), state, stats, pools,
    )  # fmt: skip
    return *params, loss, stats


# --------------------------------------------------------------------------- kernels


def test_rng_matches_python_splitmix_and_is_uniform():
    state = np.array([12345], dtype=np.uint64)
    ref = 12345
    for n in (1, 2, 7, 4212, 2**31 + 11):
        for _ in range(20):
            ref, expected = R.rand_below(ref, n)
            assert K.se_rand_below(state, n) == expected
    draws = np.array([K.se_rand_below(state, 10) for _ in range(4000)])
    counts = np.bincount(draws, minlength=10)
    assert draws.min() >= 0 and draws.max() <= 9
    assert counts.min() > 320 and counts.max() < 480  # 400 +- 4 standard deviations


def test_score_bags_and_bag_add_match_numpy():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(9, 5)).astype(np.float32)
    indptr, indices, data = csr(
        [[(1, 2.0), (3, 1.0), (4, 1.0)], [], [(8, 1.0)], [(2, 1.0), (5, 3.0)]], 9
    )
    x = rng.normal(size=5).astype(np.float32)
    rows = np.array([3, 0, 1, 2, 0], dtype=np.int64)
    out = np.empty(len(rows), np.float32)
    K._se_score_bags(W, indptr, indices, data, rows, x, out)
    B = R.dense(indptr, indices, data, 9)
    np.testing.assert_allclose(out, (B[rows] @ W) @ x, rtol=1e-5, atol=1e-6)
    for r in range(4):
        acc = np.ones(5, np.float32)
        K._se_bag_add(W, indices, data, indptr[r], indptr[r + 1], np.float32(-0.5), acc)
        np.testing.assert_allclose(acc, 1 - 0.5 * B[r] @ W, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_match_scores_matches_numpy(dtype):
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(4, 6)).astype(dtype)
    type_scores = rng.normal(size=(4, 3)).astype(dtype)
    rows = np.array([0, 0, 2, 3, 3, 3])
    cols = np.array([1, 5, 0, 1, 2, 4])
    types = np.array([2, 0, 1, 0, 0, 2])
    expected = scores.copy()
    expected[rows, cols] += type_scores[rows, types]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=4))]).astype(np.int64)
    K.se_add_match_scores(
        scores, indptr, cols.astype(np.int64), types.astype(np.int64), type_scores
    )
    np.testing.assert_allclose(scores, expected, rtol=1e-6)


@pytest.mark.parametrize("adagrad", [False, True])
def test_bag_step_matches_numpy(adagrad):
    rng = np.random.default_rng(1)
    W = rng.normal(size=(6, 4)).astype(np.float32)
    G = np.full(6, 0.3, np.float32)
    indptr, indices, data = csr([[(1, 2.0), (4, 1.0)]], 6)
    vec = rng.normal(size=4).astype(np.float32)
    Wr, Gr = W.astype(np.float64), G.astype(np.float64)
    K._se_bag_step(
        W,
        G,
        indices,
        data,
        0,
        2,
        np.float32(0.5),
        vec,
        np.float32(vec @ vec),
        np.float32(0.1),
        adagrad,
    )
    for w, v in ((1, 2.0), (4, 1.0)):
        g = 0.5 * v
        if adagrad:
            Gr[w] += g * g * (vec @ vec) / 4
            Wr[w] -= 0.1 * g / np.sqrt(Gr[w] + 1e-6) * vec
        else:
            Wr[w] -= 0.1 * g * vec
    np.testing.assert_allclose(W, Wr, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(G, Gr, rtol=1e-5)


def _epoch_against_reference(P, order, adagrad):
    """One epoch (3 negatives, lr 0.05, margin 0.5) of the kernel and of its reference on
    ``P``: their losses and tables agree. Returns the kernel's U, V, the draws."""
    U, V, _, _, loss, _ = run_kernel(P, order, 3, 0.05, 0.5, adagrad)
    Ur, Vr, _, _, loss_r, draws = R.se_sgd_epoch(P, order, 3, 0.05, 0.5, adagrad)
    np.testing.assert_allclose(loss, loss_r, rtol=1e-4)
    np.testing.assert_allclose(U, Ur, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(V, Vr, rtol=1e-4, atol=1e-5)
    return U, V, draws


@pytest.mark.parametrize("shared, adagrad", [(False, False), (True, False), (False, True)])
def test_sgd_epoch_leaves_rows_of_infinite_accumulator_alone(shared, adagrad):
    # freeze_embeddings: the kernel and its reference hold such rows, and only them
    P = make_problem(5, shared=shared, types=True)
    frozen = np.array([1, 3, 5, 7, 9])
    P["GU"][frozen] = np.inf
    P["GV"][frozen] = np.inf
    U, V, _ = _epoch_against_reference(P, np.array([4, 0, 6, 2, 1, 5, 3, 0]), adagrad)
    np.testing.assert_array_equal(U[frozen], P["U"][frozen])
    np.testing.assert_array_equal(V[frozen], P["V"][frozen])
    others = np.setdiff1d(np.arange(1, 14), frozen)
    assert (U[others] != P["U"][others]).any() and (V[others] != P["V"][others]).any()


@pytest.mark.parametrize(
    "shared, types, adagrad, n_negatives, margin",
    [
        (False, False, False, 3, 0.5),
        (True, False, False, 4, 0.5),
        (False, True, False, 3, 0.5),
        (True, True, True, 5, 1.0),
        (False, True, True, 2, 0.2),
    ],
)
def test_sgd_epoch_matches_numpy_reference(shared, types, adagrad, n_negatives, margin):
    P = make_problem(3, shared=shared, types=types)
    order = np.array([4, 0, 6, 2, 1, 5, 3, 0], dtype=np.int64)
    U, V, GU, GV, loss, stats = run_kernel(P, order, n_negatives, 0.05, margin, adagrad)
    Ur, Vr, GUr, GVr, loss_r, _ = R.se_sgd_epoch(P, order, n_negatives, 0.05, margin, adagrad)
    assert loss > 0 and stats[1] > 0
    np.testing.assert_allclose(loss, loss_r, rtol=1e-4)
    np.testing.assert_allclose(U, Ur, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(V, Vr, rtol=1e-4, atol=1e-5)
    if adagrad:
        np.testing.assert_allclose(GU, GUr, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(GV, GVr, rtol=1e-4, atol=1e-6)
    if shared:
        assert U is V
    assert not (U == P["U"]).all()
    np.testing.assert_array_equal(U[0], 0)  # the nil word never moves


def test_sgd_epoch_never_draws_the_gold_response():
    # Two candidates: the only negative of a gold candidate is the other one; a gold
    # response outside the candidate set may be paired with either.
    P = make_problem(5, types=False)
    P["n_candidates"] = 2
    P["gold"] = np.array([0, 1, 6, 0, 1, 6, 0], dtype=np.int64)
    _, _, _, _, _, draws = R.se_sgd_epoch(P, np.arange(7), 4, 0.0, 0.5, False)
    for i, negs in draws.items():
        g = P["gold"][i]
        assert all(c != g and 0 <= c < 2 for c in negs)
        if g < 2:
            assert set(negs) == {1 - g}


def _with_pools(P):
    # Example i draws from a pool of two or three rows of the response table (gold left
    # out), but for examples 2 and 5, whose empty pools draw from the candidates.
    rows = []
    for i, g in enumerate(P["gold"]):
        others = [c for c in range(len(P["r"][0]) - 1) if c != g]
        rows.append([] if i in (2, 5) else others[i % 3 :: 3][:3])
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    return dict(P, pools=(indptr, np.array([c for r in rows for c in r], np.int64)))


@pytest.mark.parametrize("types, adagrad", [(False, False), (True, True)])
def test_sgd_epoch_with_pools_matches_numpy_reference(types, adagrad):
    P = _with_pools(make_problem(4, types=types))
    order = np.array([4, 0, 6, 2, 1, 5, 3, 0], dtype=np.int64)
    U, V, draws = _epoch_against_reference(P, order, adagrad)
    indptr, indices = P["pools"]
    for i, negs in draws.items():
        pool = set(indices[indptr[i] : indptr[i + 1]].tolist())
        if pool:
            assert set(negs) <= pool
        else:
            assert all(c < P["n_candidates"] and c != P["gold"][i] for c in negs)
    # the pools change the draws: the same epoch without them is another model
    U0, *_ = run_kernel({k: v for k, v in P.items() if k != "pools"}, order, 3, 0.05, 0.5, adagrad)
    assert not np.allclose(U0, U)


@pytest.mark.parametrize("shared, types", [(False, False), (False, True), (True, True)])
def test_margin_loss_gradient_by_finite_differences(shared, types):
    """One example, one step: (W_before - W_after) / lr is the gradient of the mean hinge
    loss over the step's draws, which we check against central differences."""
    P = make_problem(11, shared=shared, types=types, dim=4)
    i, n_neg, margin, lr = 1, 6, 3.0, 1e-3
    order = np.array([i], dtype=np.int64)
    _, _, _, _, _, draws = R.se_sgd_epoch(P, order, n_neg, 0.0, margin, False)
    negs = draws[i]
    U, V, *_ = run_kernel(P, order, n_neg, lr, margin, False)

    n_words = P["U"].shape[0]
    xb = R.dense(*P["x"], n_words)[i]
    rb = R.dense(*P["r"], n_words)
    mb = R.dense(P["m"][0], P["m"][1], np.ones(len(P["m"][1])), P["n_match"]) > 0
    e0, e1 = P["e"][0][i], P["e"][0][i + 1]
    ents = list(zip(P["e"][1][e0:e1], P["e"][2][e0:e1]))

    def bag(r):
        b = rb[r].copy()
        for t, row in enumerate(P["type_rows"]):
            if any(mb[r, w] for w, tt in ents if tt == t):
                b[row] += 1.0
        return b

    def loss(U_, V_):
        ex = xb @ U_
        pos = ex @ (bag(P["gold"][i]) @ V_)
        hinges = [margin - pos + ex @ (bag(c) @ V_) for c in negs]
        assert min(abs(h) for h in hinges) > 1e-3  # away from the kinks
        return sum(max(0.0, h) for h in hinges) / n_neg

    U0 = P["U"].astype(np.float64)
    V0 = U0 if shared else P["V"].astype(np.float64)
    params = [U0] if shared else [U0, V0]
    steps = [U] if shared else [U, V]
    eps = 1e-5
    for W0, W1, before in zip(params, steps, [P["U"]] if shared else [P["U"], P["V"]]):
        num = np.zeros_like(W0)
        for idx in np.ndindex(W0.shape):
            Wp, Wm = W0.copy(), W0.copy()
            Wp[idx] += eps
            Wm[idx] -= eps
            if shared:
                num[idx] = (loss(Wp, Wp) - loss(Wm, Wm)) / (2 * eps)
            elif W0 is U0:
                num[idx] = (loss(Wp, V0) - loss(Wm, V0)) / (2 * eps)
            else:
                num[idx] = (loss(U0, Wp) - loss(U0, Wm)) / (2 * eps)
        grad = (before.astype(np.float64) - W1.astype(np.float64)) / lr
        assert np.abs(num).max() > 0.01  # the check has something to check
        np.testing.assert_allclose(grad, num, rtol=2e-3, atol=2e-4)


# --------------------------------------------------------------------------- estimator

FAST = dict(embedding_dim=8, n_negatives=5, epochs=5, learning_rate=0.1, margin=0.5)


class TestSupervisedEmbeddingConformance(RankerConformance):
    param_grid = {"embedding_dim": [4, 8]}

    def make_estimator(self):
        return SupervisedEmbeddingRanker(random_state=0, **FAST)


@pytest.mark.parametrize("shared", [False, True])
def test_match_type_pipeline_pairs_equal_full_scores(shared):
    X, y, _ = make_tiny_dialogs()
    pipe = make_pipeline(
        MatchTypeFeaturizer(TINY_KB),
        SupervisedEmbeddingRanker(
            match_type="match", shared_embeddings=shared, random_state=0, **FAST
        ),
    ).fit(X, y)
    feats, model = pipe[0].transform(X), pipe[-1]
    lists = [list(model.candidates_)] * len(X)
    np.testing.assert_allclose(
        model.rank_candidates(feats, lists), model.decision_function(feats), rtol=1e-6, atol=1e-9
    )
    np.testing.assert_array_equal(pipe.predict(X), model.predict(feats))


def fit_tiny(**params):
    X, y, _ = make_tiny_dialogs()
    return SupervisedEmbeddingRanker(**{"random_state": 0, **FAST, **params}).fit(X, y), X, y


def test_learns_the_tiny_dialogs():
    model, X, y = fit_tiny(epochs=60, embedding_dim=16)
    assert model.score(X, y) >= 0.9
    assert model.loss_curve_[-1] < model.loss_curve_[0]


def test_same_seed_bitwise_identical_and_other_seed_different():
    a, X, _ = fit_tiny(random_state=3)
    b, _, _ = fit_tiny(random_state=3)
    c, _, _ = fit_tiny(random_state=4)
    np.testing.assert_array_equal(a.input_embeddings_, b.input_embeddings_)
    np.testing.assert_array_equal(a.response_embeddings_, b.response_embeddings_)
    assert a.loss_curve_ == b.loss_curve_
    assert not np.array_equal(a.input_embeddings_, c.input_embeddings_)


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("shared", [False, True])
def test_pickle_round_trip(optimizer, shared):
    model, X, _ = fit_tiny(optimizer=optimizer, shared_embeddings=shared)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    assert (again.input_embeddings_ is again.response_embeddings_) == shared


def test_unknown_words_and_empty_history():
    model, X, _ = fit_tiny()
    scores = model.decision_function(
        ["zzqx unseenword", "", Context(history=(), query=""), Context(query="in rome please")]
    )
    assert np.isfinite(scores).all()
    # unknown words are dropped: an all-unknown input scores like the empty input (zero)
    np.testing.assert_array_equal(scores[0], scores[1])
    np.testing.assert_array_equal(scores[1], 0.0)
    # an empty history with a known query differs from the empty input
    assert np.abs(scores[3]).max() > 0
    # history is used: the same query with and without history scores differently
    ctx = X[7]
    assert ctx.history
    no_hist = Context(history=(), query=ctx.query)
    assert not np.allclose(model.decision_function([ctx]), model.decision_function([no_hist]))
    # ... unless use_history=False
    flat, _, _ = fit_tiny(use_history=False)
    np.testing.assert_array_equal(flat.decision_function([ctx]), flat.decision_function([no_hist]))


def test_decision_function_is_the_embedding_inner_product():
    # bigrams double the bags: the tiny dialogs' step of 0.1 would diverge
    model, X, _ = fit_tiny(shared_embeddings=False, ngram_range=(1, 2), learning_rate=0.01)
    U, V = model.input_embeddings_, model.response_embeddings_
    x_bags = model.vocabulary_.bags([model._input_tokens(c) for c in X]).toarray()
    c_bags = model.vocabulary_.bags([model._response_tokens(c) for c in model.candidates_])
    expected = (x_bags @ U.astype(np.float64)) @ (c_bags.toarray() @ V.astype(np.float64)).T
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-5, atol=1e-6)
    assert "in paris" in model.vocabulary_  # a bigram of an utterance
    assert "please <silence>" not in model.vocabulary_  # never across utterances


def test_normalize_input_scales_each_input_to_unit_norm():
    model, X, _ = fit_tiny(normalize_input=True)
    bags = model._input_bags(X + [Context(query="")]).toarray()
    norms = np.linalg.norm(bags, axis=1)
    np.testing.assert_allclose(norms[:-1], 1.0, rtol=1e-6)
    assert norms[-1] == 0.0  # the empty input stays empty
    raw = model.vocabulary_.bags([model._input_tokens(c) for c in X]).toarray()
    np.testing.assert_allclose(bags[:-1], raw / np.linalg.norm(raw, axis=1)[:, None], rtol=1e-6)
    # the ranking of an input's candidates does not depend on the scale of its bag
    scores = model.decision_function(X)
    C = model.candidate_bags_.toarray() @ model.response_embeddings_.astype(np.float64)
    unscaled = raw @ model.input_embeddings_.astype(np.float64) @ C.T
    np.testing.assert_array_equal(np.argmax(scores, axis=1), np.argmax(unscaled, axis=1))


def test_match_type_adds_type_words_per_context():
    X, y, _ = make_tiny_dialogs()
    kb = dict(TINY_KB, tokyo="R_location")  # tokyo never occurs in training
    cands = sorted(set(y)) + ["api_call tokyo"]
    pipe = make_pipeline(
        MatchTypeFeaturizer(kb),
        SupervisedEmbeddingRanker(candidates=cands, match_type="match", random_state=0, **FAST),
    ).fit(X, y)
    model = pipe[-1]
    assert model.types_ == ["R_location"]
    t_row = model.vocabulary_[type_token("R_location")]
    feats = pipe[0].transform(
        [Context(history=(Turn("user", "in tokyo please"),), query="<SILENCE>")]
    )
    j = cands.index("api_call tokyo")
    scores = model.decision_function(feats)[0]
    # the input . V[type] term is added to the one candidate sharing the mentioned entity
    U, V = model.input_embeddings_.astype(np.float64), model.response_embeddings_.astype(np.float64)
    tokens = model._input_tokens(feats[0])
    assert type_token("R_location") in tokens
    e_x = model.vocabulary_.bags([tokens]).toarray()[0] @ U
    expected = model.candidate_bags_.toarray() @ V @ e_x
    expected[j] += e_x @ V[t_row]
    np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-9)
    assert abs(e_x @ V[t_row]) > 1e-3


def test_match_type_without_annotations_warns():
    X, y, _ = make_tiny_dialogs()
    with pytest.warns(UserWarning, match="MatchTypeFeaturizer"):
        model = SupervisedEmbeddingRanker(match_type="match", random_state=0, **FAST).fit(X, y)
    assert model.types_ == []
    assert np.isfinite(model.decision_function(X)).all()


def test_a_single_candidate_warns_that_nothing_trains():
    X, y = ["hi", "hello there"], ["yes", "yes"]
    with pytest.warns(UserWarning, match="2 of 2 training examples have no candidate other"):
        model = SupervisedEmbeddingRanker(random_state=0, **FAST).fit(X, y)
    assert model.loss_curve_ == [0.0] * FAST["epochs"]
    with pytest.warns(UserWarning, match="1 of 1 training examples"):
        SupervisedEmbeddingRanker(random_state=0, **FAST).fit_chunks([(X[:1], y[:1])])
    # a gold response outside the candidates has the one candidate as its negative
    with pytest.warns(UserWarning, match="1 of 2 training examples"):
        SupervisedEmbeddingRanker(candidates=["yes"], random_state=0, **FAST).fit(X, ["yes", "no"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SupervisedEmbeddingRanker(random_state=0, **FAST).fit(X, ["yes", "no"])


def test_match_type_type_types_candidates_regardless_of_context():
    model, X, _ = fit_tiny(match_type="type", kb=TINY_KB, use_history=False)
    assert model.types_ == ["R_location"]
    tok = type_token("R_location")
    col = model.vocabulary_[tok]
    typed = [c for c in model.candidates_ if any(city in c.split() for city in TINY_KB)]
    assert typed
    bags = model.candidate_bags_.toarray()
    for j, c in enumerate(model.candidates_):
        assert bags[j, col] == (1.0 if c in typed else 0.0)
    assert tok in model._input_tokens(Context(query="in paris please"))
    assert tok not in model._input_tokens(Context(query="hello"))
    with pytest.raises(ValueError, match="kb"):
        fit_tiny(match_type="type")


def test_gold_responses_outside_the_candidate_set_are_never_ranked():
    X, y, _ = make_tiny_dialogs()
    cands = sorted(set(y))[:5]
    model = SupervisedEmbeddingRanker(candidates=cands, random_state=0, **FAST).fit(X, y)
    assert list(model.candidates_) == cands
    assert model.decision_function(X).shape == (len(X), 5)


def test_early_stopping_keeps_the_best_epoch():
    X, y, _ = make_tiny_dialogs()
    model = SupervisedEmbeddingRanker(
        random_state=0, early_stopping=True, n_iter_no_change=2, **{**FAST, "epochs": 30}
    ).fit(X, y, X_val=X[:8], y_val=y[:8])
    assert len(model.validation_scores_) == model.n_iter_ <= 30
    assert model.best_validation_score_ == max(model.validation_scores_)
    assert model.score(X[:8], y[:8]) == pytest.approx(model.best_validation_score_)
    # a validation fraction of the training data, drawn at random
    frac = SupervisedEmbeddingRanker(
        random_state=0, early_stopping=True, validation_fraction=0.25, **FAST
    ).fit(X, y)
    assert len(frac.validation_scores_) == frac.n_iter_
    # without early stopping, given validation data are only scored
    scored = SupervisedEmbeddingRanker(random_state=0, **FAST).fit(X, y, X_val=X, y_val=y)
    assert scored.n_iter_ == FAST["epochs"] == len(scored.validation_scores_)
    with pytest.raises(ValueError, match="both"):
        SupervisedEmbeddingRanker(**FAST).fit(X, y, X_val=X)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(ngram_range=(2, 1)), "ngram_range"),
        (dict(ngram_range=(0, 1)), "ngram_range"),
        (dict(embedding_dim=0), "embedding_dim"),
        (dict(optimizer="adam"), "optimizer"),
        (dict(match_type="yes"), "match_type"),
        (dict(learning_rate=-1.0), "learning_rate"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(n_jobs=1.5), "n_jobs"),
    ],
)
def test_invalid_parameters(params, match):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match=match):
        SupervisedEmbeddingRanker(**params).fit(X, y)


@pytest.mark.parametrize(
    "fit",
    [
        lambda m, X, y: m.fit(X, y),
        lambda m, X, y: m.set_params(early_stopping=True, validation_fraction=0.25).fit(X, y),
        lambda m, X, y: m.fit(X, y, X_val=X[:4], y_val=y[:4]),
        lambda m, X, y: m.set_params(match_type="type", kb=TINY_KB).fit(X, y),
        lambda m, X, y: make_pipeline(
            MatchTypeFeaturizer(TINY_KB), m.set_params(match_type="match")
        ).fit(X, y),
        lambda m, X, y: m.fit_chunks([(X[:5], y[:5]), (X[5:], y[5:])]),
    ],
)
def test_fit_sets_only_trailing_underscore_attributes(fit):
    """Every attribute fit sets ends in "_", so that check_is_fitted sees the fitted state
    and get_params/clone see only the parameters."""
    X, y, _ = make_tiny_dialogs()
    model = SupervisedEmbeddingRanker(**FAST)
    before = set(vars(model))
    fit(model, X, y)
    new = set(vars(model)) - before
    assert {"input_embeddings_", "loss_curve_", "n_iter_"} <= new
    assert [a for a in new if not a.endswith("_")] == []


def test_divergence_names_the_model_and_what_to_lower():
    X, y, _ = make_tiny_dialogs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(FloatingPointError, match="SupervisedEmbeddingRanker diverged.*adagrad"):
            SupervisedEmbeddingRanker(learning_rate=1e30, epochs=3, random_state=0).fit(X, y)


def test_shared_defaults_with_memn2n():
    from irdialog.embed import MemN2NRanker

    se, mem = SupervisedEmbeddingRanker().get_params(), MemN2NRanker().get_params()
    for name in ("init_std", "n_iter_no_change", "early_stopping", "validation_fraction"):
        assert se[name] == mem[name], name
    assert se["n_iter_no_change"] == 10


def test_n_jobs_and_verbose_do_not_change_scores(capsys):
    model, X, _ = fit_tiny()
    threaded, _, _ = fit_tiny(n_jobs=1, verbose=True)
    np.testing.assert_array_equal(model.decision_function(X), threaded.decision_function(X))
    assert "supervised embeddings" in capsys.readouterr().err


# --------------------------------------------------------------------------- real data


@pytest.mark.slow
def test_dialog_babi_task1_reaches_the_paper(data_home):
    """Table 2: 100 (tst) and 60.0 (tst-OOV) for supervised embeddings on task 1."""
    from irdialog.datasets import load_dialog_babi

    train, test, oov = (load_dialog_babi(1, s, data_home) for s in ("trn", "tst", "tst-OOV"))
    model = SupervisedEmbeddingRanker(
        candidates=train.candidates, embedding_dim=32, learning_rate=0.01, margin=1.0,
        epochs=300, random_state=0,
    ).fit(train.X, train.y)  # fmt: skip
    assert model.score(test.X, test.y) >= 0.99
    assert model.score(oov.X, oov.y) >= 0.59


@pytest.mark.slow
def test_dialog_babi_task4_match_type_solves_oov(data_home):
    """Match-type words let the model pick phone numbers and addresses it never saw."""
    from irdialog.datasets import load_dialog_babi

    train, oov = load_dialog_babi(4, "trn", data_home), load_dialog_babi(4, "tst-OOV", data_home)
    types = sorted(set(train.kb.values()) - {"R_name"})
    model = make_pipeline(
        MatchTypeFeaturizer(train.kb, types=types),
        SupervisedEmbeddingRanker(
            candidates=train.candidates, match_type="match", use_history=False,
            embedding_dim=128, learning_rate=0.05, margin=1.0, epochs=5, random_state=0,
        ),
    ).fit(train.X, train.y)  # fmt: skip
    assert model.score(oov.X, oov.y) >= 0.99


@pytest.mark.parametrize("candidates", [None, "fixed"])
def test_fit_chunks_equals_fit_on_the_concatenation(candidates):
    X, y, _ = make_tiny_dialogs()
    params = dict(epochs=5, random_state=0, normalize_input=True)
    if candidates == "fixed":  # some gold responses outside the fixed set, one never gold
        params["candidates"] = sorted(set(y))[1:] + ["an unused candidate"]
    whole = SupervisedEmbeddingRanker(**params).fit(X, y)
    chunks = [(X[i : i + 3], y[i : i + 3]) for i in range(0, len(X), 3)]
    streamed = SupervisedEmbeddingRanker(**params).fit_chunks(iter(chunks))
    assert streamed.vocabulary_.tokens_ == whole.vocabulary_.tokens_
    assert list(streamed.candidates_) == list(whole.candidates_)
    np.testing.assert_array_equal(streamed.input_embeddings_, whole.input_embeddings_)
    np.testing.assert_array_equal(streamed.response_embeddings_, whole.response_embeddings_)
    assert streamed.loss_curve_ == whole.loss_curve_


def test_fit_chunks_rejects_what_needs_the_contexts():
    with pytest.raises(ValueError, match="match_type"):
        SupervisedEmbeddingRanker(match_type="match").fit_chunks([(["a"], ["b"])])
    with pytest.raises(ValueError, match="early_stopping"):
        SupervisedEmbeddingRanker(early_stopping=True).fit_chunks([(["a"], ["b"])])
    with pytest.raises(ValueError, match="no example"):
        SupervisedEmbeddingRanker().fit_chunks([])
    with pytest.raises(TypeError, match="chunk 1 must"):
        SupervisedEmbeddingRanker().fit_chunks([(["a"], ["b"]), ["a", "b", "c"]])


# --------------------------------------------------------------------------- hard negatives


def _weights(model):
    return model.input_embeddings_, model.response_embeddings_


def test_empty_negative_pools_draw_as_the_default_fit():
    X, y, _ = make_tiny_dialogs()
    params = dict(embedding_dim=8, n_negatives=3, epochs=3, random_state=0)
    default = SupervisedEmbeddingRanker(**params).fit(X, y)
    empty = SupervisedEmbeddingRanker(**params).fit(X, y, negative_lists=[[]] * len(X))
    for a, b in zip(_weights(default), _weights(empty), strict=True):
        np.testing.assert_array_equal(a, b)


def test_negative_lists_and_a_callable_give_the_same_model():
    X, y, _ = make_tiny_dialogs()
    pools = [[r for r in dict.fromkeys(y) if r != g][:2] + ["a pool reply never gold"] for g in y]
    params = dict(embedding_dim=8, n_negatives=3, epochs=3, random_state=0)
    given = SupervisedEmbeddingRanker(**params).fit(X, y, negative_lists=pools)
    called = SupervisedEmbeddingRanker(**params, negatives=lambda X_, y_: pools).fit(X, y)
    default = SupervisedEmbeddingRanker(**params).fit(X, y)
    for a, b in zip(_weights(given), _weights(called), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(given.input_embeddings_, default.input_embeddings_)
    # a pool's response outside the candidates is drawn, never ranked
    assert "a pool reply never gold" not in set(given.candidates_)


def test_bm25_pools_are_the_best_bm25_candidates_but_the_gold():
    from irdialog.base import check_contexts
    from irdialog.embed._negatives import bm25_pools

    X = check_contexts(["cheap italian food", "a table in paris"])
    y = ["cheap italian", "paris table"]
    cands = ["cheap italian", "paris table", "italian food here", "food", "a b c d"]
    model = SupervisedEmbeddingRanker(candidates=cands, epochs=1, random_state=0).fit(X, y)
    x_bags = model._input_bags(X)
    r_bags = model._response_bags(cands)
    gold = np.array([0, 1])
    pools = bm25_pools(x_bags, r_bags, gold, len(cands), 2)
    assert pools.indptr.tolist() == [0, 2, 4]
    # brute force: BM25 with Lucene's idf over the candidates' bags
    C = r_bags.toarray()
    df, n = (C > 0).sum(0), len(cands)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    ratio = C.sum(1) / C.sum(1).mean()
    impact = idf * C / (1.5 * (0.25 + 0.75 * ratio[:, None]) + C)
    scores = (x_bags.toarray() > 0) @ impact.T
    for i in range(2):
        scores[i, gold[i]] = -np.inf
        # the two best, ties broken by the lower index, in increasing index order
        best = sorted(np.argsort(-scores[i], kind="stable")[:2].tolist())
        assert pools.indices[2 * i : 2 * i + 2].tolist() == best


def test_top_k_breaks_ties_by_the_lower_index_whatever_the_partition():
    from irdialog.embed._negatives import top_k_lowest_index_first

    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=(50, 12)).astype(np.float64)  # many ties
    scores[0] = -np.inf
    for k in (1, 4, 11):
        expected = np.sort(np.argsort(-scores, axis=1, kind="stable")[:, :k], axis=1)
        np.testing.assert_array_equal(top_k_lowest_index_first(scores, k), expected)


def test_bm25_negatives_fit_and_fit_chunks_agree(monkeypatch):
    from irdialog.embed import _supervised_embedding

    # pools smaller than the 8 other candidates of the tiny dialogs, or they hold them all
    # and draw as negatives="random" does
    monkeypatch.setattr(_supervised_embedding, "MINED_NEGATIVES", 3)
    X, y, _ = make_tiny_dialogs()
    params = dict(embedding_dim=8, n_negatives=3, epochs=3, random_state=0, negatives="bm25")
    fitted = SupervisedEmbeddingRanker(**params).fit(X, y)
    chunked = SupervisedEmbeddingRanker(**params).fit_chunks([(X[:10], y[:10]), (X[10:], y[10:])])
    for a, b in zip(_weights(fitted), _weights(chunked), strict=True):
        np.testing.assert_array_equal(a, b)
    random = SupervisedEmbeddingRanker(**dict(params, negatives="random")).fit(X, y)
    assert not np.array_equal(fitted.input_embeddings_, random.input_embeddings_)


def test_negative_pool_errors():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="pass one or the other"):
        SupervisedEmbeddingRanker(negatives="bm25").fit(X, y, negative_lists=[[]] * len(X))
    with pytest.raises(ValueError, match="one list per example"):
        SupervisedEmbeddingRanker().fit(X, y, negative_lists=[[]])
    with pytest.raises(TypeError, match=r"negative_lists\[0\] must be a sequence of str"):
        SupervisedEmbeddingRanker().fit(X, y, negative_lists=["hello"] * len(X))
    with pytest.raises(ValueError, match="callable"):
        SupervisedEmbeddingRanker(negatives=lambda X, y: []).fit_chunks([(X, y)])


# --------------------------------------------------------------------------- init="ppmi-svd"


def test_ppmi_svd_init_starts_both_tables_from_the_count_vectors():
    from sklearn.utils import check_random_state

    from irdialog.embed._cooccurrence import ppmi_svd_vectors
    from irdialog.text import Analyzer

    X, y, _ = make_tiny_dialogs()
    model = SupervisedEmbeddingRanker(init="ppmi-svd", embedding_dim=4, random_state=0)
    problem = model._training_problem(X, y, check_random_state(0))
    U, V = problem["params"].U, problem["params"].V
    # the same draw of the SVD's seed, over the inputs' utterances and the responses
    texts = list(dict.fromkeys([t for ctx in X for t in model._texts(ctx)] + sorted(set(y))))
    seed = int(check_random_state(0).randint(0, 2**31 - 1))
    index, analyzer = model.vocabulary_.index_, Analyzer()
    sequences = [np.array([index.get(w, -1) for w in analyzer.sequence(t)]) for t in texts]
    vectors = ppmi_svd_vectors(sequences, len(index), 4, scale=0.1, random_state=seed)
    rows = np.flatnonzero(vectors.any(axis=1))
    assert len(rows) > 10
    np.testing.assert_array_equal(U[rows], vectors[rows].astype(np.float32))
    np.testing.assert_array_equal(V[rows], U[rows])
    others = np.setdiff1d(np.arange(1, len(index)), rows)  # words never near another: drawn
    assert np.all(U[0] == 0) and not np.array_equal(U[others], V[others])


def test_ppmi_svd_init_repeats_for_a_seed_and_differs_from_normal():
    a, X, y = fit_tiny(init="ppmi-svd")
    b, _, _ = fit_tiny(init="ppmi-svd")
    normal, _, _ = fit_tiny()
    np.testing.assert_array_equal(a.input_embeddings_, b.input_embeddings_)
    np.testing.assert_array_equal(a.response_embeddings_, b.response_embeddings_)
    assert not np.allclose(a.input_embeddings_, normal.input_embeddings_)
    shared, _, _ = fit_tiny(init="ppmi-svd", shared_embeddings=True)
    assert shared.response_embeddings_ is shared.input_embeddings_
    with pytest.raises(ValueError, match="init"):
        SupervisedEmbeddingRanker(init="ppmi-svd").fit_chunks([(X, y)])
    with pytest.raises(ValueError, match="init"):
        SupervisedEmbeddingRanker(init="svd").fit(X, y)
