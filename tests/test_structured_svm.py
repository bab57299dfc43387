import gzip
import itertools
import re
from contextlib import contextmanager

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import make_tiny_dialogs
from sklearn.utils.validation import check_is_fitted

from irdialog.base import Context, Turn
from irdialog.datasets import load_babi_qa
from irdialog.datasets._base import bundled_data_dir
from irdialog.svm import PairwiseFeaturizer, StructuredSVMQA
from irdialog.svm import _kernels as K
from irdialog.svm import _reference as R

NF = 2**12


class TestStructuredSVMConformance(RankerConformance):
    param_grid = {"C": [0.5, 2.0]}

    def make_estimator(self):
        return StructuredSVMQA(epochs=2, n_features=NF, random_state=0)


# --------------------------------------------------------------------------- helpers


def story(facts, query):
    return Context(history=tuple(Turn("kb", f) for f in facts), query=query)


def feature(template, *args):
    """The hashed index of a symbolic feature, by the reference hash."""
    return R.feature_index(template, *args)


def psi_indices(featurizer, ctx, tuple_):
    row = featurizer.transform([ctx], [tuple_])
    return dict(zip(row.indices.tolist(), row.data.tolist()))


MARY = story(
    ["Mary went to the kitchen.", "John went to the garden.", "Mary went to the office."],
    "Where is Mary?",
)


def random_stories(rng, n_stories, words="abcdefgh"):
    out = []
    for _ in range(n_stories):
        n = int(rng.integers(1, 6))
        facts = [" ".join(rng.choice(list(words), size=rng.integers(2, 5))) for _ in range(n)]
        out.append(story(facts, " ".join(rng.choice(list(words), size=rng.integers(1, 4)))))
    return out


def run_search(w, batch, q, gold, loss_weight):
    work = K.search_workspace(batch)
    gold = np.asarray(gold, dtype=np.int64)
    score = K.search_question(w, 1.0, batch, q, gold, loss_weight, work)
    return score, tuple(int(b) for b in work.best if b >= 0)


# --------------------------------------------------------------------------- featurizer


def test_featurizer_learns_stopwords_by_document_frequency():
    feat = PairwiseFeaturizer(max_df=0.7).fit([MARY])
    # 4 sentences: went/to/the/. in 3 of them (0.75), mary in 3, the rest in 1
    assert feat.stopwords_ == ["mary", "went", "to", "the", "."]
    assert list(feat.vocabulary_)[:6] == ["mary", "went", "to", "the", "kitchen", "."]
    assert feat.nonlinking_ == feat.stopwords_  # no supporting facts: link_df falls back


def test_featurizer_learns_linking_words_from_supporting_facts():
    X = [MARY, story(["Sandra went to the hallway.", "Mary went to the cinema."], "Where is Mary?")]
    feat = PairwiseFeaturizer(max_df=1.0).fit(X, supporting=[(2,), (1,)])
    # Only "mary" links each question to its supporting fact: every other word of the
    # supporting facts can stop linking, most frequent first.
    assert "mary" not in feat.nonlinking_
    assert {"went", "to", "the", "."} <= set(feat.nonlinking_)
    assert feat.stopwords_ == []


def test_feature_vector_of_hand_made_story():
    feat = PairwiseFeaturizer(max_df=1.0, max_facts=1).fit([MARY])
    v = feat.vocabulary_
    psi = psi_indices(feat, MARY, (2,))
    # x = where is mary ? (4 tokens), f2 = mary went to the office . (6 tokens), all content:
    # 24 word pairs + 24 positioned word pairs + distance + 6 fact words
    # + the shared word "mary": position pair (from the starts and from the ends), identity,
    # 6 + 6 recency features + count
    assert sum(psi.values()) == 24 + 24 + 1 + 6 + (2 + 1 + 6 + 6) + 1
    assert feature(K.T_XF_DIST, 0, 1) in psi  # the last fact: one back from the question
    assert feature(K.T_XF_DIST, 0, 3) in psi_indices(feat, MARY, (0,))
    assert feature(K.T_XF_MPOS, 0, 2, 0) in psi  # "mary": question position 2, fact position 0
    assert feature(K.T_XF_MPOSE, 0, 1, 5) in psi  # ... and 1 and 5 from the ends
    assert feature(K.T_XF_WP, 0, v["where"], v["office"]) in psi
    # recency: no later fact holds (mary, to) after f2; one does after f0
    lat_last = feature(K.T_XF_LAT, 0, v["to"], 0)
    lat_one = feature(K.T_XF_LAT, 0, v["to"], 1)
    assert lat_last in psi and lat_one not in psi
    psi0 = psi_indices(feat, MARY, (0,))
    assert lat_one in psi0 and lat_last not in psi0
    # (went, to) is in the later fact f1 too, but without mary: f1 never counts
    assert feature(K.T_XF_LAT, 0, v["went"], 0) in psi


def test_fact_pair_features_of_hand_made_story():
    feat = PairwiseFeaturizer(max_df=1.0, max_facts=2).fit([MARY])
    v = feat.vocabulary_
    pair = psi_indices(feat, MARY, (0, 2))
    assert feature(K.T_FF_DIST, 0, K._OFF + 2) in pair  # f0 -> f2: two facts on, forward
    assert feature(K.T_FF_DIST, 0, K._OFF - 2) in psi_indices(feat, MARY, (2, 0))
    assert feature(K.T_FF_MW, 0, v["mary"]) in pair
    assert feature(K.T_FF_WP, 0, v["kitchen"], v["office"]) in pair
    assert feature(K.T_FF_WPP, 0, v["kitchen"], 4, v["office"], 4) in pair
    # f1 (between) holds (went, to) but not mary: nothing about mary in between
    clear_forward = 2 * 1 + 1
    assert feature(K.T_FF_BTWA, 0, v["to"], clear_forward) in pair
    # an empty second slot is one feature
    single = psi_indices(feat, MARY, (0,))
    assert feature(K.T_FF_EMPTYB, 0) in single
    assert (
        sum(single.values())
        == sum(psi_indices(feat.set_params(max_facts=1), MARY, (0,)).values()) + 2
    )


def test_feature_indices_are_bounded_and_relabelling_invariant():
    rng = np.random.default_rng(0)
    X = random_stories(rng, 10)
    tuples = [tuple(range(min(2, len(c.history)))) for c in X]
    feat = PairwiseFeaturizer(n_features=97, max_df=0.6).fit(X)
    psi = feat.transform(X, tuples)
    assert psi.shape == (10, 97) and psi.indices.max() < 97
    # the same stories in other letters give the same features
    table = str.maketrans("abcdefgh", "ωψχφυτσρ")
    Y = [story([t.text.translate(table) for t in c.history], c.query.translate(table)) for c in X]
    other = PairwiseFeaturizer(n_features=97, max_df=0.6).fit(Y).transform(Y, tuples)
    assert (psi != other).nnz == 0


def test_feature_counts_stay_within_the_buffer_bounds():
    # Repeated words are the worst case: a word counts at its first position only.
    X = [
        story(["a a b a a b a ."] * 3 + ["b b b a"], "a b a a b ?"),
        story(["x"], "a a a a a a a a a a a a a"),
    ]
    feat = PairwiseFeaturizer(n_features=NF, max_df=1.0).fit(X, answers=["a,b,a", "a"])
    b = feat.encode(X, answers=["a,b,a", "a"])
    L = int(np.diff(b.sent).max())
    big = np.zeros(100_000, dtype=np.int64)
    bound = K.feature_buffer_size(b)
    for q in range(len(X)):
        n = b.qsent[q + 1] - b.qsent[q] - 1
        facts = list(range(n)) + [n]
        for o in itertools.product(facts, repeat=3):
            assert K.tuple_features(big, b, q, np.array(o)) <= bound
        assert max(K.xf_features(big, 0, b, q, 0, j) for j in facts) <= 4 * L * L + 3 * L + 2
    tuples = np.array([[0, 1, 3], [0, -1, -1]])
    pq, pc = np.repeat([0, 1], 2), np.tile([0, 1], 2)
    feats = K.stage2_features(b, tuples, pq, pc)
    assert np.diff(feats.phi_ptr).max() <= 16 * L * L + 8 * L
    assert np.diff(feats.gam_ptr).max() <= 2 + 3 * (3 * L * L + 10 * L + 14)


def test_feature_hash_matches_reference():
    rng = np.random.default_rng(9)
    for _ in range(50):
        t, a, b, c = (int(v) for v in rng.integers(0, 10**6, size=4))
        nf = int(rng.integers(1, K.MAX_FEATURES, endpoint=True))
        assert K._fin(K._h3(t, a, b, c), nf) == R.feature_index(t, a, b, c, n_features=nf)
        assert K._fin(K._h1(t, a), nf) == R.feature_index(t, a, n_features=nf)


def test_story_stats_against_reference():
    rng = np.random.default_rng(1)
    X = random_stories(rng, 8, words="abcd")
    b = PairwiseFeaturizer().fit(X).encode(X)
    later, near = R.story_stats(b)
    np.testing.assert_array_equal(b.later, later)
    np.testing.assert_array_equal(b.near, near)


def test_compiled_kernels_agree_with_python():
    rng = np.random.default_rng(2)
    X = random_stories(rng, 6)
    feat = PairwiseFeaturizer(max_df=0.6).fit(X)
    b = feat.encode(X)._replace(n_features=1000)
    for q in range(len(X)):
        n = b.qsent[q + 1] - b.qsent[q] - 1
        for i, j in itertools.product(range(n + 1), repeat=2):
            if i == j and i < n or (i == n and j < n):
                continue
            out = []
            for f in (K.ff_features, K.ff_features.py_func):
                buf = np.zeros(5000, dtype=np.int64)
                m = f(buf, 0, b, q, 1, i, j)
                out.append(buf[:m])
            np.testing.assert_array_equal(out[0], out[1])
            assert out[0].max() < 1000
        for j in range(n + 1):
            out = []
            for f in (K.xf_features, K.xf_features.py_func):
                buf = np.zeros(5000, dtype=np.int64)
                m = f(buf, 0, b, q, 2, j)
                out.append(buf[:m])
            np.testing.assert_array_equal(out[0], out[1])


# --------------------------------------------------------------------------- search


@pytest.mark.parametrize("max_facts", [1, 2, 3])
@pytest.mark.parametrize("loss_weight", [0.0, 1.0])
def test_search_matches_brute_force(max_facts, loss_weight):
    rng = np.random.default_rng(3 + max_facts)
    X = random_stories(rng, 12)
    feat = PairwiseFeaturizer(n_features=NF, max_df=0.7, link_df=0.4, max_facts=max_facts)
    feat.fit(X)
    b = feat.encode(X)
    w = rng.normal(size=NF)
    for q in range(len(X)):
        n = len(X[q].history)
        gold = list(rng.permutation(n)[: rng.integers(0, min(n, max_facts) + 1)])
        gold_slots = gold + [-1] * (3 - len(gold))
        best, best_tuple = R.best_tuple(w, b, q, gold_slots, loss_weight)
        got_score, got_tuple = run_search(w, b, q, gold_slots, loss_weight)
        assert got_tuple == best_tuple
        assert got_score == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_pair_score_tables_equal_feature_sums():
    rng = np.random.default_rng(4)
    X = random_stories(rng, 6)
    feat = PairwiseFeaturizer(n_features=NF, max_df=0.6).fit(X)
    b = feat.encode(X)
    w = rng.normal(size=NF)
    work = K.search_workspace(b)
    buf = np.empty_like(work.buf)
    for q in range(len(X)):
        n = b.qsent[q + 1] - b.qsent[q] - 1
        K._lat_tables(w, b, q, work)
        for pk, i, j in itertools.product(range(3), range(n), range(n)):
            if i == j:
                continue
            fast = K.ff_score(w, b, q, pk, i, j, work)
            m = K.ff_features(buf, 0, b, q, pk, i, j)
            assert fast == pytest.approx(w[buf[:m]].sum(), rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- training


def test_structured_hinge_subgradient_matches_finite_differences():
    """d/dw of lambda/2 |w|^2 + mean_q [max_o (Delta + w.Psi(o)) - w.Psi(gold)] is
    lambda w + mean_q (Psi(o*) - Psi(gold)), o* the loss-augmented argmax of the search."""
    rng = np.random.default_rng(5)
    X = random_stories(rng, 8)
    gold = [tuple(int(f) for f in rng.permutation(len(c.history))[:2]) for c in X]
    feat = PairwiseFeaturizer(n_features=NF, max_df=0.7, link_df=0.4).fit(X)
    b = feat.encode(X)
    lam = 0.3
    w = rng.normal(size=NF)
    grad = lam * w
    for q in range(len(X)):
        pred = run_search(w, b, q, list(gold[q]) + [-1] * (3 - len(gold[q])), 1.0)[1]
        grad += np.bincount(R.tuple_score(w, b, q, pred)[1], minlength=NF) / len(X)
        grad -= np.bincount(R.tuple_score(w, b, q, gold[q])[1], minlength=NF) / len(X)
    for _ in range(3):
        d = rng.normal(size=NF)
        eps = 1e-6
        plus = R.structured_hinge_loss(w + eps * d, b, gold, lam)
        minus = R.structured_hinge_loss(w - eps * d, b, gold, lam)
        assert (plus - minus) / (2 * eps) == pytest.approx(grad @ d, rel=1e-5, abs=1e-6)


def test_answer_hinge_subgradient_matches_finite_differences():
    """Stage 2: lambda/2 |w|^2 + mean_q [max_c (Delta + w.Psi(q, c)) - w.Psi(q, gold)]."""
    rng = np.random.default_rng(8)
    X = random_stories(rng, 10)
    answers = ["a", "b", "c d", "zz"]
    feat = PairwiseFeaturizer(n_features=NF, max_df=0.7).fit(X, answers=answers)
    b = feat.encode(X, answers=answers)
    tuples = np.full((len(X), 3), -1, dtype=np.int64)
    for q, c in enumerate(X):
        facts = rng.permutation(len(c.history))[:2]
        tuples[q, : len(facts)] = facts
    nq, nc = len(X), len(answers)
    pairs_q = np.repeat(np.arange(nq), nc)
    pairs_c = np.tile(np.arange(nc), nq)
    feats = K.stage2_features(b, tuples, pairs_q, pairs_c)
    cls = pairs_c.copy()
    cls[pairs_c == 3] = -1  # an answer with no class: generic features only
    gold = rng.integers(0, nc, size=nq)
    lam = 0.2

    def scores(w):
        return K.answer_scores(w, feats, pairs_q, cls).reshape(nq, nc)

    def features(q, c):
        r = q * nc + c
        indices = R.class_features(feats, q, r, cls[r])
        buf = np.empty(10000, dtype=np.int64)
        np.testing.assert_array_equal(buf[: K._class_features(buf, feats, q, r, cls[r])], indices)
        return np.bincount(indices, minlength=NF)

    w = rng.normal(size=NF)
    s = scores(w)
    np.testing.assert_allclose(s.ravel(), R.answer_scores(w, feats, pairs_q, cls), rtol=1e-10)
    for q in range(nq):  # Psi . w is the score the kernel gives
        for c in range(nc):
            assert features(q, c) @ w == pytest.approx(s[q, c], rel=1e-10, abs=1e-10)
    pred = (s + (np.arange(nc)[None, :] != gold[:, None])).argmax(axis=1)
    grad = lam * w + sum(features(q, pred[q]) - features(q, gold[q]) for q in range(nq)) / nq
    for _ in range(3):
        d = rng.normal(size=NF)
        plus = R.multiclass_hinge_loss(w + 1e-6 * d, scores(w + 1e-6 * d), gold, lam)
        minus = R.multiclass_hinge_loss(w - 1e-6 * d, scores(w - 1e-6 * d), gold, lam)
        assert (plus - minus) / 2e-6 == pytest.approx(grad @ d, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("lam, eta0", [(1e-3, 1.0), (0.5, 1.9)])  # the second renormalises
def test_averaged_sgd_matches_dense_reference(lam, eta0):
    rng = np.random.default_rng(6)
    d = 50
    steps = [
        (rng.integers(0, d, size=rng.integers(0, 6)), rng.integers(0, d, size=rng.integers(0, 6)))
        for _ in range(40)
    ]
    iterates, mean = R.averaged_sgd(steps, d, lam, eta0)
    run = K.start_asgd(d, lam, eta0)
    for (plus, minus), w in zip(steps, iterates):
        K._asgd_step(run, plus, len(plus), minus, len(minus))
        np.testing.assert_allclose(run.state[0] * run.U, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(K.averaged_weights(run), mean, rtol=1e-8, atol=1e-12)


def test_fit_finds_the_supporting_fact_on_hand_made_stories():
    names, places = ["mary", "john", "sandra"], ["kitchen", "garden", "office", "hallway"]
    rng = np.random.default_rng(7)
    X, y, sup = [], [], []
    for _ in range(60):
        facts, where = [], {}
        for _ in range(rng.integers(2, 7)):
            who, place = rng.choice(names), rng.choice(places)
            facts.append(f"{who} went to the {place}.")
            where[who] = (len(facts) - 1, place)
        who = rng.choice(sorted(where))
        X.append(story(facts, f"where is {who}?"))
        y.append(where[who][1])
        sup.append((where[who][0],))
    model = StructuredSVMQA(epochs=5, n_features=2**14, random_state=0)
    model.fit(X[:40], y[:40], supporting=sup[:40])
    assert model.predict_supporting(X[40:]) == sup[40:]
    assert model.score(X[40:], y[40:]) == 1.0


def test_same_seed_same_model_and_different_seed_differs():
    data = load_babi_qa(1, "train")
    X, y, sup = data.X[:300], data.y[:300], data.supporting[:300]
    fits = [
        StructuredSVMQA(epochs=2, n_features=2**14, random_state=s).fit(X, y, supporting=sup)
        for s in (0, 0, 1)
    ]
    np.testing.assert_array_equal(fits[0].coef_support_, fits[1].coef_support_)
    np.testing.assert_array_equal(fits[0].coef_answer_, fits[1].coef_answer_)
    np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))
    assert not np.array_equal(fits[0].coef_support_, fits[2].coef_support_)


def test_decision_function_in_blocks_and_early_stopping(monkeypatch):
    from irdialog.svm import _structured_svm

    data = load_babi_qa(1, "train")
    model = StructuredSVMQA(epochs=50, n_features=2**14, random_state=0)
    model.fit(data.X[:200], data.y[:200], supporting=data.supporting[:200])
    # qa1 is separated within a few passes: both stages stop after 3 quiet ones
    assert (model.n_iter_ < 50).all()
    assert not model.violations_[:, model.n_iter_.min() - 3 :].any()
    whole = model.decision_function(data.X[200:260])
    monkeypatch.setattr(_structured_svm, "PAIR_BLOCK", 7 * len(model.candidates_))
    np.testing.assert_array_equal(model.decision_function(data.X[200:260]), whole)


def test_ctrl_c_ends_a_stage_and_an_error_closes_the_progress_bar(monkeypatch):
    from irdialog.svm import _structured_svm

    data = load_babi_qa(1, "train")
    X, y, sup = data.X[:100], data.y[:100], data.supporting[:100]
    calls = []
    real = K.stage1_epoch

    def interrupted(order, run, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(order, run, *args)

    monkeypatch.setattr(_structured_svm._kernels, "stage1_epoch", interrupted)
    model = StructuredSVMQA(epochs=4, n_features=2**14, random_state=0)
    with pytest.warns(UserWarning, match="interrupted in stage 1 after 1 of 4 epochs"):
        model.fit(X, y, supporting=sup)
    # stage 1 keeps its first epoch, stage 2 still trains, and the model ranks
    assert len(calls) == 2 and model.n_iter_[0] == 1 and model.n_iter_[1] >= 1
    assert model.score(X, y) > 0.5

    def failing(order, run, *args):
        raise RuntimeError("boom")

    bars = []
    session = _structured_svm.training_session

    @contextmanager
    def spy(*args, **kwargs):
        with session(*args, **kwargs) as bar:
            bars.append(bar)
            yield bar

    monkeypatch.setattr(_structured_svm._kernels, "stage1_epoch", failing)
    monkeypatch.setattr(_structured_svm, "training_session", spy)
    model = StructuredSVMQA(epochs=2, n_features=2**14, random_state=0, verbose=True)
    with pytest.raises(RuntimeError, match="boom"):
        model.fit(X, y, supporting=sup)
    assert len(bars) == 1 and bars[0].disable  # tqdm's close() disables the bar


def test_fit_without_supporting_facts_uses_distant_supervision():
    X, y, _ = make_tiny_dialogs()
    model = StructuredSVMQA(epochs=2, n_features=NF, random_state=0).fit(X, y)
    assert model.pseudo_supporting_
    data = load_babi_qa(1, "train")
    weak = StructuredSVMQA(epochs=3, n_features=2**14, random_state=0)
    weak.fit(data.X[:300], data.y[:300])
    # the latest fact naming the answer is the supporting fact of qa1
    assert weak.score(data.X[300:500], data.y[300:500]) > 0.9


def test_supporting_is_validated():
    X = [MARY, MARY]
    with pytest.raises(ValueError, match="supporting has 1 entries"):
        StructuredSVMQA().fit(X, ["office", "office"], supporting=[(2,)])
    with pytest.raises(ValueError, match=r"supporting\[1\].*outside the history"):
        StructuredSVMQA().fit(X, ["office", "office"], supporting=[(2,), (3,)])
    with pytest.raises(ValueError, match="repeats"):
        StructuredSVMQA().fit(X, ["office", "office"], supporting=[(2,), (0, 0)])


def test_supporting_must_hold_one_sequence_per_context():
    X = [MARY, MARY]
    with pytest.raises(TypeError, match=r"supporting\[0\] must be a sequence of ints"):
        StructuredSVMQA().fit(X, ["office", "office"], supporting=[0, 1])  # flat
    with pytest.raises(TypeError, match=r"supporting\[1\] must be a sequence of ints"):
        PairwiseFeaturizer().fit(X, supporting=[(2,), 1])
    feat = PairwiseFeaturizer(n_features=NF).fit(X)
    with pytest.raises(TypeError, match=r"tuples\[0\] must be a sequence of ints"):
        feat.transform(X, [0, 1])
    with pytest.raises(ValueError, match=r"tuples\[1\].*outside the history"):
        feat.transform(X, [(0,), (5,)])
    with pytest.raises(ValueError, match=r"tuples\[0\] has more than max_facts=3"):
        feat.transform(X, [(0, 1, 2, 3), ()])


def test_featurizer_answers_must_be_a_sequence_of_str():
    with pytest.raises(TypeError, match="answers must be a sequence of str, got a single str"):
        PairwiseFeaturizer().fit([MARY], answers="kitchen")  # not k, i, t, c, h, e, n
    with pytest.raises(TypeError, match=r"answers\[1\] must be a str"):
        PairwiseFeaturizer().fit([MARY], answers=["kitchen", 3])
    feat = PairwiseFeaturizer(n_features=NF).fit([MARY], answers=["kitchen"])
    with pytest.raises(TypeError, match="answers must be a sequence of str"):
        feat.encode([MARY], answers="kitchen")


def test_no_answer_among_the_candidates_is_an_error():
    with pytest.raises(ValueError, match="none of the answers in y is among the candidates"):
        StructuredSVMQA(candidates=["garden", "hallway"]).fit([MARY], ["office"])


def test_more_supporting_facts_than_slots_keeps_the_last():
    model = StructuredSVMQA(max_facts=1, epochs=1, n_features=NF, random_state=0)
    model.fit([MARY], ["office"], supporting=[(0, 2)])
    assert model.predict_supporting([MARY]) == [(2,)]


def test_fit_learns_only_attributes_with_a_trailing_underscore():
    """check_is_fitted looks for attributes ending in "_": all that fit learns is one, and
    the documented ones are there."""
    model = StructuredSVMQA(epochs=1, n_features=NF, random_state=0)
    feat = PairwiseFeaturizer(n_features=NF)
    documented = {
        model: {"candidates_", "featurizer_", "coef_support_", "coef_answer_", "violations_"}
        | {"n_iter_", "pseudo_supporting_"},
        feat: {"vocabulary_", "document_frequency_", "stopwords_", "nonlinking_", "case_folding_"},
    }
    params = {est: set(vars(est)) for est in documented}
    model.fit([MARY], ["office"], supporting=[(2,)])
    feat.fit([MARY])
    for est, names in documented.items():
        learned = set(vars(est)) - params[est]
        assert names <= learned
        assert all(a.endswith("_") and not a.startswith("_") for a in learned)
        check_is_fitted(est)
    assert set(vars(model.featurizer_)) - params[feat] == documented[feat]


# --------------------------------------------------------------------------- languages


def _babi_lines(split, n_stories):
    path = next((bundled_data_dir() / "babi-qa" / "en").glob(f"qa1_*_{split}.txt.gz"))
    lines, stories = [], 0
    for line in gzip.open(path, "rt", encoding="utf-8").read().splitlines():
        if line.split(" ", 1)[0] == "1":
            stories += 1
            if stories > n_stories:
                break
        lines.append(line)
    return lines


def _translate_line(line, word):
    ident, rest = line.split(" ", 1)
    fields = rest.split("\t")
    fields[:2] = [re.sub(r"[A-Za-z]+", lambda m: word(m.group(0).lower()), f) for f in fields[:2]]
    return " ".join([ident, "\t".join(fields)])


SHUFFLED = str.maketrans("abcdefghijklmnopqrstuvwxyz", "qwertyuiopasdfghjklzxcvbnm")
DEVANAGARI = "कखगघचछजझटठडढतथदधनपफबभमयरलव"


def _hindi_like(word):
    return "".join(DEVANAGARI[ord(c) - 97] + ("ि" if ord(c) % 2 else "") for c in word)


def write_babi_folder(root, lang, word, period="."):
    folder = root / "babi-qa" / lang
    folder.mkdir(parents=True)
    for split, n in (("train", 60), ("test", 20)):
        lines = [_translate_line(ln, word).replace(".", period) for ln in _babi_lines(split, n)]
        (folder / f"qa1_single-supporting-fact_{split}.txt").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )


@pytest.mark.parametrize(
    "lang, word, period",
    [("shuffled", lambda w: w.translate(SHUFFLED), "."), ("hn", _hindi_like, "।")],
)
def test_same_model_on_a_non_english_babi_folder(tmp_path, lang, word, period):
    write_babi_folder(tmp_path, "en", lambda w: w)
    write_babi_folder(tmp_path, lang, word, period)
    results = []
    for folder in ("en", lang):
        train = load_babi_qa(1, "train", lang=folder, data_home=tmp_path)
        test = load_babi_qa(1, "test", lang=folder, data_home=tmp_path)
        model = StructuredSVMQA(epochs=3, n_features=2**14, random_state=0)
        model.fit(train.X, train.y, supporting=train.supporting)
        results.append((model, test))
    (en, en_test), (other, other_test) = results
    assert other_test.X[0].query != en_test.X[0].query
    np.testing.assert_array_equal(
        other.decision_function(other_test.X), en.decision_function(en_test.X)
    )
    assert other.predict_supporting(other_test.X) == en.predict_supporting(en_test.X)
    assert list(other.predict(other_test.X)) == [word(a) for a in en.predict(en_test.X)]
    assert en.score(en_test.X, en_test.y) > 0.9


# --------------------------------------------------------------------------- real data


@pytest.mark.slow
@pytest.mark.parametrize("task", [1, 2, 15])
def test_babi_tasks_pass(data_home, task):
    train = load_babi_qa(task, "train", data_home=data_home)
    test = load_babi_qa(task, "test", data_home=data_home)
    model = StructuredSVMQA(epochs=20, random_state=0)
    model.fit(train.X, train.y, supporting=train.supporting)
    assert model.score(test.X, test.y) >= 0.95
    found = model.predict_supporting(test.X)
    assert np.mean([set(f) == set(s) for f, s in zip(found, test.supporting)]) >= 0.95
