"""MemNNQA: the ranking step against its numpy reference, a finite-difference check of the
loss gradient, the estimator contract, and what strong supervision buys on tiny stories."""

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import make_tiny_dialogs

from irdialog import MemNNQA
from irdialog.base import Context, Turn
from irdialog.embed import _memnn_kernels as K
from irdialog.embed import _reference as R


def _supporting(X):
    # The tiny dialogs' last history turn supports each answer.
    return [(len(x.history) - 1,) if x.history else () for x in X]


class _StronglySupervised(MemNNQA):
    """MemNNQA that takes the tiny dialogs' supporting facts when fit without them, so the
    shared conformance suite (which calls fit(X, y)) trains it as meant."""

    def fit(self, X, y, supporting=None, groups=None):
        if supporting is None:
            supporting = _supporting(X)
        return super().fit(X, y, supporting=supporting, groups=groups)


class TestMemNNConformance(RankerConformance):
    param_grid = {"margin": [0.1, 1.0]}

    def make_estimator(self):
        return _StronglySupervised(epochs=3, embedding_dim=8, random_state=0)


class TestAdaptiveNonlinearConformance(RankerConformance):
    param_grid = {"learning_rate": [0.01, 0.05]}

    def make_estimator(self):
        return _StronglySupervised(
            epochs=3,
            embedding_dim=8,
            adaptive_memory=True,
            hops=4,
            nonlinear=True,
            ngram_range=(1, 2),
            random_state=0,
        )


# --------------------------------------------------------------------------- the kernel


def _problem(seed, nonlinear, n_rows=30, dim=6, n_cand=7):
    rng = np.random.default_rng(seed)
    U = rng.normal(0, 0.5, (n_rows, dim))
    W = rng.normal(0, 0.5, (dim, dim))
    in_rows = rng.integers(0, n_rows, 5)
    in_w = np.ones(5)
    lengths = rng.integers(1, 5, n_cand)
    cand_ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    cand_rows = rng.integers(0, n_rows, cand_ptr[-1])
    cand_w = rng.uniform(0.1, 2.0, cand_ptr[-1])  # write-time features are weighted
    bags = K.Bags(in_rows, in_w, cand_ptr, cand_rows, cand_w, np.zeros(1, dtype=np.int64))
    ref_bags = [(cand_rows[a:b], cand_w[a:b]) for a, b in zip(cand_ptr[:-1], cand_ptr[1:])]
    return U, W, bags, (in_rows, in_w), ref_bags


@pytest.mark.parametrize("nonlinear", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_rank_step_matches_the_numpy_reference(seed, nonlinear):
    U, W, bags, in_bag, cand_bags = _problem(seed, nonlinear)
    gold, margin, lr = seed % 7, 10.0, 0.1
    U_ref, W_ref, loss_ref = R.memnn_rank_step(U, W, nonlinear, in_bag, cand_bags, gold, margin, lr)
    buf = K.make_buffers(U.shape[1], len(cand_bags))
    loss = K.rank_step(U, W, nonlinear, bags, len(in_bag[0]), len(cand_bags), gold, margin, lr, buf)
    assert loss > 0
    assert loss == pytest.approx(loss_ref)
    np.testing.assert_allclose(U, U_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(W, W_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("nonlinear", [False, True])
def test_rank_step_is_a_gradient_step_of_the_loss(nonlinear):
    U, W, _, in_bag, cand_bags = _problem(11, nonlinear)
    gold, margin, lr = 2, 1.0, 1e-3
    e_in = R.memnn_embed(U, W, nonlinear, *in_bag)
    s = np.array([e_in @ R.memnn_embed(U, W, nonlinear, *b) for b in cand_bags])
    n_viol = int((np.delete(margin - s[gold] + s, gold) > 0).sum())
    U_new, W_new, _ = R.memnn_rank_step(U, W, nonlinear, in_bag, cand_bags, gold, margin, lr)
    grad_U, grad_W = (U - U_new) / lr, (W - W_new) / lr
    eps = 1e-6

    def loss(U_, W_):
        return R.memnn_rank_loss(U_, W_, nonlinear, in_bag, cand_bags, gold, margin, n_viol)

    rows = [int(in_bag[0][0]), int(cand_bags[gold][0][0]), int(cand_bags[0][0][0])]
    for r, d in zip(rows, [0, 3, 5]):
        Up, Um = U.copy(), U.copy()
        Up[r, d] += eps
        Um[r, d] -= eps
        assert (loss(Up, W) - loss(Um, W)) / (2 * eps) == pytest.approx(grad_U[r, d], abs=1e-6)
    if nonlinear:
        for i, j in [(0, 0), (2, 4), (5, 1)]:
            Wp, Wm = W.copy(), W.copy()
            Wp[i, j] += eps
            Wm[i, j] -= eps
            fd = (loss(U, Wp) - loss(U, Wm)) / (2 * eps)
            assert fd == pytest.approx(grad_W[i, j], abs=1e-6)


def test_no_violation_no_step():
    U, W, bags, in_bag, cand_bags = _problem(3, False)
    before = U.copy()
    buf = K.make_buffers(U.shape[1], len(cand_bags))
    assert K.rank_step(U, W, False, bags, 5, len(cand_bags), 0, -1e9, 0.1, buf) == 0.0
    np.testing.assert_array_equal(U, before)


# --------------------------------------------------------------------------- the model


def _story_task(n_stories=60, seed=0):
    """Where is <person>? from stories of moves: the supporting fact is the person's last
    move (a first-order version of bAbI task 1)."""
    rng = np.random.default_rng(seed)
    people, places = ["mary", "john", "sandra", "daniel"], ["kitchen", "garden", "office", "hall"]
    X, y, supporting, groups = [], [], [], []
    for g in range(n_stories):
        history, last = [], {}
        for _ in range(int(rng.integers(3, 9))):
            p, place = rng.choice(people), rng.choice(places)
            last[p] = (len(history), place)
            history.append(Turn("kb", f"{p} went to the {place}."))
        person = rng.choice(list(last))
        X.append(Context(tuple(history), f"Where is {person}?"))
        y.append(last[person][1])
        supporting.append((last[person][0],))
        groups.append(g)
    return X, y, supporting, groups


def test_learns_the_last_move_with_strong_supervision():
    X, y, supporting, _ = _story_task(200)
    Xt, yt, st, _ = _story_task(60, seed=1)
    model = MemNNQA(epochs=20, embedding_dim=20, margin=1.0, random_state=0).fit(X, y, supporting)
    found = model.predict_supporting(Xt)
    assert np.mean([f[0] == s[0] for f, s in zip(found, st)]) > 0.9
    assert model.score(Xt, yt) > 0.9
    assert not model.pseudo_supporting_


def test_adaptive_memory_stops_after_the_gold_facts():
    X, y, supporting, _ = _story_task(200)
    Xt, _, st, _ = _story_task(60, seed=1)
    model = MemNNQA(epochs=20, embedding_dim=20, margin=1.0, adaptive_memory=True, hops=5,
                    random_state=0).fit(X, y, supporting)  # fmt: skip
    found = model.predict_supporting(Xt)
    assert np.mean([f == s for f, s in zip(found, st)]) > 0.9  # one fact, then the stop


def test_adaptive_answers_are_read_word_by_word_in_order():
    # Paths: the answer is two words whose order matters ("n,w" is not "w,n").
    X, y, supporting = [], [], []
    for a, b in [("n", "w"), ("w", "n"), ("s", "e"), ("e", "s")] * 10:
        X.append(Context((Turn("kb", f"go {a} then {b}"),), "Which way?"))
        y.append(f"{a},{b}")
        supporting.append((0,))
    model = MemNNQA(epochs=30, embedding_dim=16, margin=1.0, adaptive_memory=True, hops=2,
                    nonlinear=True, ngram_range=(1, 3), random_state=0)  # fmt: skip
    model.fit(X, y, supporting)
    assert model.score(X, y) == 1.0
    assert model.answer_words_ == ["e", "n", "s", "w"]


def test_without_supporting_facts_it_falls_back_to_distant_supervision():
    X, y, _, _ = _story_task(100)
    model = MemNNQA(epochs=5, embedding_dim=8, random_state=0).fit(X, y)
    assert model.pseudo_supporting_


def test_seeded_fits_are_repeatable_and_early_stopping_keeps_the_best_epoch():
    X, y, supporting, groups = _story_task(80)
    params = dict(epochs=6, embedding_dim=8, early_stopping=True, n_iter_no_change=2,
                  random_state=3)  # fmt: skip
    a = MemNNQA(**params).fit(X, y, supporting, groups=groups)
    b = MemNNQA(**params).fit(X, y, supporting, groups=groups)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert len(a.validation_scores_) == a.n_iter_ <= 6


@pytest.mark.parametrize(
    ("supporting", "error", "match"),
    [
        ([(0,)], ValueError, "has 6 contexts but supporting has 1"),
        ([(9,)] * 6, ValueError, r"supporting\[0\] = \(9,\) names fact 9"),
    ],
)
def test_bad_supporting_facts_are_named(supporting, error, match):
    X, y, _ = make_tiny_dialogs()
    X = X[:6]
    with pytest.raises(error, match=match):
        MemNNQA(epochs=1).fit(X, y[:6], supporting)


def test_bad_ngram_range_is_named():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="ngram_range must be"):
        MemNNQA(ngram_range=(2, 1)).fit(X, y, _supporting(X))
