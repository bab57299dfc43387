"""Recurrent encoders: the numba kernels against a plain numpy reference, finite-difference
checks of the whole-sequence losses (both cells, both uses), masking, the optimizer step,
and the estimators' contract."""

import numba
import numpy as np
import pytest
from conformance import RankerConformance
from conftest import make_tiny_dialogs, make_where_is_stories

from irdialog import DualEncoderRanker, RecurrentReader
from irdialog._threads import n_threads
from irdialog.base import Context, Turn, check_contexts
from irdialog.embed import _recurrent
from irdialog.embed import _recurrent_kernels as K
from irdialog.embed import _reference as R
from irdialog.embed import _training as training
from irdialog.embed._recurrent import (
    _drop_words,
    _droppable,
    _query_reversed_copy,
    _reread_query,
)
from irdialog.persist import load, save
from irdialog.text import Vocabulary

# --------------------------------------------------------------------------- a tiny problem

V, E, H = 12, 4, 3


def _params(seed, lstm, use, dtype=np.float64, bidirectional=False):
    rng = np.random.default_rng(seed)
    G = 4 if lstm else 1
    P = {
        "Emb": rng.standard_normal((V, E)) * 0.5,
        "Wx": rng.standard_normal((E, G * H)) * 0.5,
        "Wh": rng.standard_normal((H, G * H)) * 0.5,
        "b": rng.standard_normal(G * H) * 0.1,
    }
    if use == "reader":
        P["O"] = rng.standard_normal((V, H)) * 0.5
    else:
        P["M"] = rng.standard_normal((H, H)) * 0.5
        P["bias"] = rng.standard_normal(1) * 0.1
    if bidirectional:  # the right-to-left encoder, and output embeddings for both states
        P["Wx_rev"] = rng.standard_normal((E, G * H)) * 0.5
        P["Wh_rev"] = rng.standard_normal((H, G * H)) * 0.5
        P["b_rev"] = rng.standard_normal(G * H) * 0.1
        P["O"] = rng.standard_normal((V, 2 * H)) * 0.5
    return {k: v.astype(dtype) for k, v in P.items()}


def _ragged(seqs):
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in seqs])]).astype(np.int64)
    tok = np.concatenate([np.asarray(s, np.int64) for s in seqs]).astype(np.int32)
    return ptr, tok


# ragged lengths, with a length 1, an empty one and two of the same length
SEQS = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9], [2, 2], [9, 8, 7, 6, 5], [3, 11, 10, 1]]
CANDS = (
    np.array([0, 1, 3, 4], np.int64),
    np.array([5, 6, 7, 8], np.int32),
    np.array([1.0, 1.0, 2.0, 1.0]),
)
Y = np.array([0, 1, 2, 0, 1, 2, 1])
PAIRS = (np.array([0, 3, 5, 6, 1]), np.array([4, 1, 6, 2, 0]), np.array([1, 0, 1, 0, 1]))


def _bags(cands, dtype=np.float64):
    cptr, ctok, cw = cands
    out = np.zeros((len(cptr) - 1, V))
    for c in range(len(cptr) - 1):
        for p in range(cptr[c], cptr[c + 1]):
            out[c, ctok[p]] += cw[p]
    return out.astype(dtype)


def kernel_loss_grad(P, lstm, use, seqs=SEQS, max_len=0):
    ptr, tok = _ragged(seqs)
    grads = K.Grads(P)
    if use == "reader":
        cands = (CANDS[0], CANDS[1], CANDS[2].astype(P["Emb"].dtype))
        loss, correct = K.reader_batch(
            P, grads, lstm, ptr, tok, np.arange(len(seqs)), max_len, cands, Y[: len(seqs)]
        )
    else:
        loss, correct = K.dual_batch(P, grads, lstm, ptr, tok, *PAIRS, max_len)
    return loss, correct, grads


def reference_loss_grad(P, lstm, use, seqs=SEQS, max_len=0):
    ptr, tok = _ragged(seqs)
    if use == "reader":
        loss, correct, grads, _ = R.reader_loss_grad(
            P, lstm, ptr, tok, np.arange(len(seqs)), max_len, _bags(CANDS), Y[: len(seqs)]
        )
    else:
        loss, correct, grads = R.dual_loss_grad(P, lstm, ptr, tok, *PAIRS, max_len)
    return loss, correct, grads


CELLS = [True, False]
USES = ["reader", "dual"]


def assert_matches_reference(P, kernel, reference):
    """The kernels' (loss, correct, Grads) against the reference's (loss, correct, grads),
    to the precision of P's float type; the touched rows are those with a gradient."""
    loss, correct, grads = kernel
    r_loss, r_correct, r_grads = reference[:3]
    float64 = P["Emb"].dtype == np.float64
    tol = dict(rtol=1e-10, atol=1e-12) if float64 else dict(rtol=2e-4, atol=2e-6)
    np.testing.assert_allclose(loss, r_loss, **tol)
    assert correct == r_correct
    for k in P:
        np.testing.assert_allclose(grads.dense[k], r_grads[k], err_msg=k, **tol)
    # the touched rows are exactly the embedding rows with a gradient
    touched = set(grads.touched[: grads.n_touched].tolist())
    assert touched == set(np.flatnonzero(np.abs(r_grads["Emb"]).sum(axis=1) > 0).tolist())


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("max_len", [0, 3])
def test_kernels_match_numpy_reference(lstm, use, dtype, max_len):
    P = _params(0, lstm, use, dtype)
    assert_matches_reference(
        P,
        kernel_loss_grad(P, lstm, use, max_len=max_len),
        reference_loss_grad(P, lstm, use, max_len=max_len),
    )


def test_final_states_match_reference_in_the_given_order():
    P = _params(1, True, "reader")
    ptr, tok = _ragged(SEQS)
    rows = np.array([6, 2, 0, 3, 1])
    h, _ = K.encode_batch(P, True, ptr, tok, rows, 0)
    for i, r in enumerate(rows):
        want, _ = R.rnn_sequence(P["Emb"], P["Wx"], P["Wh"], P["b"], True, SEQS[r])
        np.testing.assert_allclose(h[i], want, rtol=1e-12, atol=1e-14)
    assert not h[1].any()  # the empty sequence keeps the zero state


def test_pack_batch_sorts_by_length_and_packs_only_active_rows():
    ptr, tok = _ragged(SEQS)
    order, nact, off, ptok = K.pack_batch(ptr, tok, np.arange(len(SEQS)), 0)
    lengths = np.array([len(s) for s in SEQS])
    assert (np.diff(lengths[order]) <= 0).all()
    np.testing.assert_array_equal(nact, [(lengths > t).sum() for t in range(5)])
    assert off[-1] == lengths.sum() == len(ptok)  # no padded position is ever computed
    # with max_len, the last tokens are read
    order, nact, off, ptok = K.pack_batch(ptr, tok, np.array([3]), 2)
    np.testing.assert_array_equal(ptok, [8, 9])


GRAD_CASES = [(lstm, use) for lstm in CELLS for use in USES]


@pytest.mark.parametrize(("lstm", "use"), GRAD_CASES, ids=[f"{'lstm' if c else 'rnn'}-{u}"
                                                          for c, u in GRAD_CASES])  # fmt: skip
def test_finite_difference_gradient_of_whole_sequence_loss(lstm, use):
    """Central differences of the summed loss over whole ragged sequences, for every entry
    of every parameter (float64 kernels)."""
    assert_finite_differences(_params(2, lstm, use), lambda P: kernel_loss_grad(P, lstm, use))


def assert_finite_differences(P, loss_grad):
    """Central differences of the loss of ``loss_grad(P)`` (loss, correct, Grads) against
    its gradient, for every entry of every parameter of P (float64); returns the gradient
    (the dense arrays)."""
    grads = loss_grad(P)[2]
    eps = 1e-6
    worst = 0.0
    for name, x in P.items():
        flat = x.ravel()
        g = grads.dense[name].ravel()
        for k in range(len(flat)):
            old = flat[k]
            flat[k] = old + eps
            up = loss_grad(P)[0]
            flat[k] = old - eps
            down = loss_grad(P)[0]
            flat[k] = old
            fd = (up - down) / (2 * eps)
            assert fd == pytest.approx(g[k], rel=1e-5, abs=1e-8), (name, k)
            if max(abs(fd), abs(g[k])) > 1e-3:
                worst = max(worst, abs(fd - g[k]) / max(abs(fd), abs(g[k])))
    print(f"max relative error {worst:.2e}")
    assert worst < 1e-5
    return grads.dense


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
def test_padding_changes_nothing(lstm):
    """A batch's other rows (longer, shorter, empty) change neither a row's final state nor
    its gradient: each row gives the same as alone."""
    P = _params(3, lstm, "reader")
    ptr, tok = _ragged(SEQS)
    h_all, _ = K.encode_batch(P, lstm, ptr, tok, np.arange(len(SEQS)), 0)
    for r in range(len(SEQS)):
        h_one, _ = K.encode_batch(P, lstm, ptr, tok, np.array([r]), 0)
        np.testing.assert_allclose(h_all[r], h_one[0], rtol=1e-12, atol=1e-14)
    total = K.Grads(P)
    cands = CANDS
    K.reader_batch(P, total, lstm, ptr, tok, np.arange(len(SEQS)), 0, cands, Y)
    summed = {k: np.zeros_like(v) for k, v in P.items()}
    for r in range(len(SEQS)):
        one = K.Grads(P)
        K.reader_batch(P, one, lstm, ptr, tok, np.array([r]), 0, cands, Y[[r]])
        for k in P:
            summed[k] += one.dense[k]
    for k in P:
        np.testing.assert_allclose(total.dense[k], summed[k], rtol=1e-10, atol=1e-12)


def test_adam_step_clips_the_global_norm_and_updates_only_touched_rows():
    P = _params(4, True, "reader")
    before = {k: v.copy() for k, v in P.items()}
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in P.items()}
    _, _, grads = kernel_loss_grad(P, True, "reader", seqs=[[1, 2], [3], [1]])
    G = {k: v.copy() for k, v in grads.dense.items()}
    touched = grads.touched[: grads.n_touched].copy()
    norm = K.apply_adam(P, grads, moments, 0.01, 0.5, 1)
    want_norm = np.sqrt(sum((G[k] ** 2).sum() for k in G))
    assert norm == pytest.approx(want_norm)
    scale = 0.5 / want_norm
    for k in P:
        ref, m, v = R.adam_step(before[k], scale * G[k], 0 * G[k], 0 * G[k], 1, 0.01,
                                0.9, 0.999, 1e-8)  # fmt: skip
        if k == "Emb":
            untouched = np.setdiff1d(np.arange(V), touched)
            np.testing.assert_array_equal(P[k][untouched], before[k][untouched])
            np.testing.assert_allclose(P[k][touched], ref[touched], rtol=1e-10)
        else:
            np.testing.assert_allclose(P[k], ref, rtol=1e-10)
        assert not grads.dense[k].any()  # zeroed for the next batch
    assert not grads.mark.any() and grads.n_touched == 0


def test_kernels_are_repeatable():
    P = _params(5, True, "dual", np.float32)
    a = kernel_loss_grad(P, True, "dual")
    b = kernel_loss_grad(P, True, "dual")
    assert a[0] == b[0]
    for k in P:
        np.testing.assert_array_equal(a[2].dense[k], b[2].dense[k])


# --------------------------------------------------------------------------- bidirectional


def _reverse(P):
    """The right-to-left encoder's weights under the left-to-right names."""
    return {"Emb": P["Emb"], "Wx": P["Wx_rev"], "Wh": P["Wh_rev"], "b": P["b_rev"]}


def bidirectional_reference(P, lstm, seqs=SEQS, max_len=0):
    """The bidirectional reader's summed loss, gradients and states in plain float64 numpy,
    one sequence at a time: each sequence (its last ``max_len`` tokens) read left to right
    with Wx, Wh, b and right to left with the reverse weights, the states concatenated."""
    return two_encoder_reference(P, lstm, seqs, seqs, True, max_len)


def two_encoder_reference(P, lstm, seqs, second, reverse, max_len=0):
    """A reader of two encoders in plain float64 numpy, one sequence at a time: sequence
    i (its last ``max_len`` tokens) read with Wx, Wh, b, and ``second[i]`` (its last
    ``max_len`` tokens, right to left with ``reverse``) with the second encoder's weights,
    the final states concatenated. (summed loss, correct, gradients, states)."""
    P = {k: np.asarray(v, np.float64) for k, v in P.items()}
    grads = {k: np.zeros_like(v) for k, v in P.items()}
    back = {"Emb": grads["Emb"], "Wx": grads["Wx_rev"], "Wh": grads["Wh_rev"], "b": grads["b_rev"]}
    bags = _bags(CANDS)
    C = bags @ P["O"]
    loss, correct, states = 0.0, 0, []
    for seq, seq2, gold in zip(seqs, second, Y):
        seq = seq[-max_len:] if max_len > 0 else seq
        seq2 = seq2[-max_len:] if max_len > 0 else seq2
        hf, f_steps = R.rnn_sequence(P["Emb"], P["Wx"], P["Wh"], P["b"], lstm, seq)
        hb, b_steps = R.rnn_sequence(*_reverse(P).values(), lstm, seq2[::-1] if reverse else seq2)
        h = np.concatenate((hf, hb))
        states.append(h)
        s = C @ h
        p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        loss += -np.log(p[gold])
        correct += int(np.argmax(s) == gold)
        ds = p.copy()
        ds[gold] -= 1
        grads["O"] += bags.T @ np.outer(ds, h)
        dh = C.T @ ds
        R.rnn_sequence_backward(P["Wx"], P["Wh"], lstm, f_steps, dh[:H], grads)
        R.rnn_sequence_backward(P["Wx_rev"], P["Wh_rev"], lstm, b_steps, dh[H:], back)
    return loss, correct, grads, np.array(states)


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
@pytest.mark.parametrize("max_len", [0, 3])
def test_bidirectional_states_match_numpy_reference(lstm, max_len):
    """Both directions read the same tokens (the last max_len with truncation), in the given
    row order, and the state is [left to right; right to left]."""
    P = _params(6, lstm, "reader", bidirectional=True)
    assert K.readings(P) == (K.FORWARD, K.RIGHT_TO_LEFT)
    ptr, tok = _ragged(SEQS)
    rows = np.array([6, 2, 0, 3, 1, 5, 4])
    h, _ = K.encode_states(P, lstm, ptr, tok, rows, max_len)
    want = bidirectional_reference(P, lstm, max_len=max_len)[3]
    assert h.shape == (len(rows), 2 * H)
    np.testing.assert_allclose(h, want[rows], rtol=1e-12, atol=1e-14)
    assert not h[1].any()  # the empty sequence keeps the zero state in both directions
    # a palindrome reads the same both ways: with the same weights, the same two halves
    same = {**P, "Wx_rev": P["Wx"], "Wh_rev": P["Wh"], "b_rev": P["b"]}
    pptr, ptok = _ragged([[1, 2, 3, 2, 1]])
    h, _ = K.encode_states(same, lstm, pptr, ptok, np.array([0]), 0)
    np.testing.assert_array_equal(h[0, :H], h[0, H:])


def test_pack_batch_reverse_reads_the_same_last_tokens_backwards():
    ptr, tok = _ragged(SEQS)
    for max_len, want in [(0, [9, 8, 7, 6, 5]), (2, [9, 8])]:
        _, _, _, ptok = K.pack_batch(ptr, tok, np.array([3]), max_len, True)
        np.testing.assert_array_equal(ptok, want)


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("max_len", [0, 3])
def test_bidirectional_reader_kernels_match_numpy_reference(lstm, dtype, max_len):
    P = _params(7, lstm, "reader", dtype, bidirectional=True)
    assert_matches_reference(
        P,
        kernel_loss_grad(P, lstm, "reader", max_len=max_len),
        bidirectional_reference(P, lstm, max_len=max_len),
    )


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
@pytest.mark.parametrize("max_len", [0, 3])
def test_finite_difference_gradient_of_bidirectional_reader_loss(lstm, max_len):
    """Central differences of the summed loss of the bidirectional reader, for every entry
    of every parameter: both directions' weights, the shared embedding rows, O."""
    P = _params(8, lstm, "reader", bidirectional=True)
    grads = assert_finite_differences(
        P, lambda P: kernel_loss_grad(P, lstm, "reader", max_len=max_len)
    )
    for name in ("Wx_rev", "Wh_rev", "b_rev", "Emb"):  # checked on gradients that are not 0
        assert np.abs(grads[name]).max() > 1e-3, name


# --------------------------------------------------------------------------- query both ways

# a second copy of SEQS, as the reader's query_both_ways makes it (any tokens will do for
# the kernels: the second encoder reads row i of the second copy)
SEQS_2 = [s[:1] + s[1:][::-1] for s in SEQS]


def query_both_ways_loss_grad(P, lstm, max_len=0, rows=None):
    """The kernels' (loss, correct, Grads) of the reader of two encoders whose second reads
    the second copy, the copies stored one after the other in one ragged array."""
    ptr, tok = _ragged(SEQS + SEQS_2)
    rows = np.arange(len(SEQS)) if rows is None else rows
    grads = K.Grads(P)
    cands = (CANDS[0], CANDS[1], CANDS[2].astype(P["Emb"].dtype))
    reads = K.readings(P, query_reversed=True)
    loss, correct = K.reader_batch(P, grads, lstm, ptr, tok, rows, max_len, cands, Y[rows],
                                   reads)  # fmt: skip
    return loss, correct, grads


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("max_len", [0, 3])
def test_query_both_ways_kernels_match_numpy_reference(lstm, dtype, max_len):
    """The second encoder reads row i of the second copy, left to right, and the states
    are [first; second] in the given row order."""
    P = _params(11, lstm, "reader", dtype, bidirectional=True)
    assert K.readings(P, query_reversed=True) == (K.FORWARD, K.QUERY_REVERSED)
    want = two_encoder_reference(P, lstm, SEQS, SEQS_2, False, max_len)
    assert_matches_reference(P, query_both_ways_loss_grad(P, lstm, max_len), want)
    ptr, tok = _ragged(SEQS + SEQS_2)
    rows = np.array([6, 2, 0, 3, 1, 5, 4])
    h, _ = K.encode_states(P, lstm, ptr, tok, rows, max_len, K.readings(P, True))
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(h, want[3][rows], **tol)


@pytest.mark.parametrize("lstm", CELLS, ids=["lstm", "rnn"])
def test_finite_difference_gradient_of_query_both_ways_reader_loss(lstm):
    P = _params(12, lstm, "reader", bidirectional=True)
    grads = assert_finite_differences(P, lambda P: query_both_ways_loss_grad(P, lstm))
    for name in ("Wx_rev", "Wh_rev", "b_rev", "Emb"):  # checked on gradients that are not 0
        assert np.abs(grads[name]).max() > 1e-3, name


Q = 0  # the query word of _query_rows


def _query_rows(seed):
    """50 random ragged rows of token ids, each a history, the query word Q and a query
    (maybe empty), as lists and as (ptr, tok)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(50):
        history = list(rng.integers(1, 9, rng.integers(0, 6)))
        rows.append(history + [Q] + list(rng.integers(1, 9, rng.integers(0, 4))))
    ptr = np.concatenate(([0], np.cumsum([len(r) for r in rows])))
    return rows, ptr, np.concatenate(rows).astype(np.int32)


def test_query_reversed_copy_matches_a_plain_python_reference():
    rows, ptr, tok = _query_rows(1)
    copy = []
    for r in rows:
        q = len(r) - 1 - r[::-1].index(Q)  # the last query word
        copy.append(r[: q + 1] + r[q + 1 :][::-1])
    new_ptr, new_tok = _query_reversed_copy(ptr, tok, Q)
    want = rows + copy
    np.testing.assert_array_equal(new_ptr, np.concatenate(([0], np.cumsum([len(w) for w in want]))))
    np.testing.assert_array_equal(new_tok, np.concatenate(want))


def test_query_both_ways_reads_the_history_then_the_query_right_to_left():
    model = _reader(epochs=1, query_both_ways=True).fit(["hello there now"], ["hi"])
    ptr, tok = model._context_sequences(
        [Context((Turn("user", "hello"),), "there zzz now"), Context((), "now")],
        model._analyzer(),
        model.vocabulary_.index_,
    )
    words = [model.vocabulary_.tokens_[t] for t in tok]
    seqs = [words[ptr[i] : ptr[i + 1]] for i in range(len(ptr) - 1)]
    assert seqs == [["hello", "<query>", "there", "now"], ["<query>", "now"],
                    ["hello", "<query>", "now", "there"], ["<query>", "now"]]  # fmt: skip


def test_query_both_ways_reader_scores_from_both_encoders_and_keeps_them(tmp_path):
    X, y = _story_data(20)
    model = _reader(epochs=2, query_both_ways=True, max_length=8).fit(X, y)
    H, V = model.hidden_size, len(model.vocabulary_)
    assert model.output_embeddings_.shape == (V, 2 * H)
    params = model._all_params()
    ptr, tok = model._context_sequences(X, model._analyzer(), model.vocabulary_.index_)
    assert len(ptr) - 1 == 2 * len(X)
    first, _ = K.encode_batch(params, True, ptr, tok, np.arange(len(X)), 8)
    second, _ = K.encode_batch(params, True, ptr, tok, len(X) + np.arange(len(X)), 8,
                               K.QUERY_REVERSED)  # fmt: skip
    C = K.candidate_matrix(params["O"].astype(np.float64), *model._cands_[:2],
                           model._cands_[2].astype(np.float64))  # fmt: skip
    want = np.hstack((first, second)) @ C.T
    np.testing.assert_allclose(model.decision_function(X), want, rtol=1e-5, atol=1e-6)
    # rank_candidates scores each pair from both encoders too
    pairs = model.rank_candidates(X[:3], [model.candidates_.tolist()] * 3)
    np.testing.assert_allclose(pairs, want[:3], rtol=1e-5, atol=1e-6)
    # the pickle-free format keeps the second encoder and the reading of the copy
    path = tmp_path / "reader.irdialog"
    save(model, path)
    np.testing.assert_array_equal(load(path).decision_function(X), model.decision_function(X))
    with pytest.raises(ValueError, match="query_both_ways=True"):
        model.set_params(warm_start=True, query_both_ways=False).fit(X, y)


@pytest.mark.parametrize("other", ["bidirectional", "reread_query"])
def test_query_both_ways_refuses_the_other_second_readings(other):
    X, y = _story_data(10)
    with pytest.raises(ValueError, match=f"does not combine with.*{other}"):
        _reader(epochs=1, query_both_ways=True, **{other: True}).fit(X, y)


# --------------------------------------------------------------------------- the estimators


def _reader(**kw):
    params = dict(hidden_size=16, embedding_dim=8, epochs=15, batch_size=4, random_state=0)
    params.update(kw)
    return RecurrentReader(**params)


def _dual(**kw):
    params = dict(hidden_size=16, embedding_dim=8, epochs=15, batch_size=4,
                  learning_rate=0.01, random_state=0)  # fmt: skip
    params.update(kw)
    return DualEncoderRanker(**params)


class TestRecurrentReaderConformance(RankerConformance):
    fit_runs_on_threads = True
    fit_is_hogwild = True
    param_grid = {"cell": ["lstm", "rnn"]}

    def make_estimator(self):
        return _reader()


class TestBidirectionalReaderConformance(RankerConformance):
    fit_runs_on_threads = True
    fit_is_hogwild = True
    param_grid = {"bidirectional": [False, True]}

    def make_estimator(self):
        return _reader(bidirectional=True)


class TestQueryBothWaysReaderConformance(RankerConformance):
    fit_runs_on_threads = True
    fit_is_hogwild = True
    param_grid = {"query_both_ways": [False, True]}

    def make_estimator(self):
        return _reader(query_both_ways=True, word_dropout=0.2)


class TestRereadQueryReaderConformance(RankerConformance):
    fit_runs_on_threads = True
    fit_is_hogwild = True
    param_grid = {"reread_query": [False, True]}

    def make_estimator(self):
        return _reader(reread_query=True, word_dropout=0.2)


class TestRestartedReaderConformance(RankerConformance):
    fit_runs_on_threads = True
    fit_is_hogwild = True
    param_grid = {"n_init": [1, 2]}

    def make_estimator(self):
        return _reader(n_init=2, early_stopping=True, validation_fraction=0.25)


class TestDualEncoderConformance(RankerConformance):
    fit_runs_on_threads = True
    fit_is_hogwild = True
    param_grid = {"cell": ["lstm", "rnn"]}

    def make_estimator(self):
        return _dual()


def _story_data(n=160, seed=0):
    """Where-is questions over three moves (:func:`make_where_is_stories`)."""
    return make_where_is_stories(n, seed, facts=3)


@pytest.mark.parametrize(
    ("cell", "weight_init", "bidirectional", "floor"),
    [("lstm", "uniform", False, 0.6), ("rnn", "uniform", False, 0.45),
     ("rnn", "orthogonal", False, 0.45), ("lstm", "uniform", True, 0.6)],
)  # fmt: skip
def test_reader_learns_where_is_questions(cell, weight_init, bidirectional, floor):
    X, y = _story_data()
    Xt, yt = _story_data(60, seed=1)
    model = _reader(cell=cell, weight_init=weight_init, bidirectional=bidirectional,
                    hidden_size=32, embedding_dim=16, epochs=40, learning_rate=0.01)  # fmt: skip
    model.fit(X, y)
    assert model.loss_curve_[-1] < model.loss_curve_[0]
    assert model.score(Xt, yt) > floor  # chance is about 0.25


@pytest.mark.parametrize("make", [_reader, _dual])
@pytest.mark.parametrize("cell", ["lstm", "rnn"])
def test_orthogonal_weight_init_is_lowe_et_al(make, cell):
    X, y, _ = make_tiny_dialogs()
    model = make(cell=cell, weight_init="orthogonal", epochs=0).fit(X, y)
    H = model.hidden_size
    Wh = model.recurrent_weights_.astype(np.float64)
    for gate in range(Wh.shape[1] // H):  # each gate's block is orthogonal
        block = Wh[:, gate * H : (gate + 1) * H]
        np.testing.assert_allclose(block.T @ block, np.eye(H), atol=1e-5)
    assert np.abs(model.input_weights_).max() <= 0.01
    default = make(cell=cell, epochs=0).fit(X, y)
    assert np.abs(default.input_weights_).max() > 0.01  # uniform in 1/sqrt(16) = 0.25


REVERSE_ATTRS = ("reverse_input_weights_", "reverse_recurrent_weights_", "reverse_bias_")
FITTED_ARRAYS = ("embeddings_", "input_weights_", "recurrent_weights_", "bias_",
                 "output_embeddings_")  # fmt: skip


def test_unidirectional_reader_is_the_reader_as_before():
    """bidirectional=False is the default and draws and trains exactly as the reader did
    before the option: the initial weights have the sums the earlier code gave (sums of
    float32 arrays drawn by numpy's Generator, the same on every machine), and the
    bidirectional reader draws its left-to-right encoder first, the same."""
    X, y = _story_data(20)
    before = {  # (sum, sum of absolute values) at epochs=0 before the option existed
        "embeddings_": (1.287154187913984, 10.278832717332989),
        "input_weights_": (-2.731338295037858, 62.40303858357947),
        "recurrent_weights_": (6.484368886821869, 131.72916771748572),
        "bias_": (16.0, 16.0),
        "output_embeddings_": (-1.6696821524528787, 18.61609753582161),
    }
    start = _reader(epochs=0).fit(X, y)
    both = _reader(epochs=0, bidirectional=True).fit(X, y)
    for attr, sums in before.items():
        w = getattr(start, attr).astype(np.float64)
        np.testing.assert_allclose((w.sum(), np.abs(w).sum()), sums, rtol=1e-12, err_msg=attr)
        if attr != "output_embeddings_":
            np.testing.assert_array_equal(getattr(both, attr), w.astype(np.float32))
    assert not any(hasattr(start, a) for a in REVERSE_ATTRS)
    kw = dict(epochs=3, word_dropout=0.3, max_length=8, early_stopping=True)
    default = _reader(**kw).fit(X, y)
    off = _reader(bidirectional=False, **kw).fit(X, y)
    for attr in FITTED_ARRAYS:
        np.testing.assert_array_equal(getattr(off, attr), getattr(default, attr))
    np.testing.assert_array_equal(off.decision_function(X), default.decision_function(X))


def test_bidirectional_reader_weights_warm_start_and_refit():
    X, y = _story_data(20)
    model = _reader(epochs=2, bidirectional=True, max_length=8).fit(X, y)
    H, V = model.hidden_size, len(model.vocabulary_)
    assert model.output_embeddings_.shape == (V, 2 * H)
    for attr, fwd in zip(REVERSE_ATTRS, FITTED_ARRAYS[1:4]):
        rev = getattr(model, attr)
        assert rev.shape == getattr(model, fwd).shape and rev.dtype == np.float32
        assert not np.array_equal(rev, getattr(model, fwd))
    # the scores are h . O_c with h = [left-to-right state; right-to-left state]
    params = model._all_params()
    ptr, tok = model._context_sequences(X, model._analyzer(), model.vocabulary_.index_)
    fwd, _ = K.encode_batch(params, True, ptr, tok, np.arange(len(X)), 8)
    rev, _ = K.encode_batch(params, True, ptr, tok, np.arange(len(X)), 8, K.RIGHT_TO_LEFT)
    C = K.candidate_matrix(params["O"].astype(np.float64), *model._cands_[:2],
                           model._cands_[2].astype(np.float64))  # fmt: skip
    np.testing.assert_allclose(model.decision_function(X), np.hstack((fwd, rev)) @ C.T,
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    # warm_start continues both encoders and refuses a change of bidirectional
    model.set_params(warm_start=True)
    weights = model.reverse_recurrent_weights_.copy()
    model.fit(X, y)
    assert model.n_iter_ == 4 and not np.array_equal(model.reverse_recurrent_weights_, weights)
    with pytest.raises(ValueError, match="bidirectional=True"):
        model.set_params(bidirectional=False).fit(X, y)
    with pytest.raises(ValueError, match="bidirectional=False"):
        _reader(epochs=1, warm_start=True).fit(X, y).set_params(bidirectional=True).fit(X, y)
    # a fit from scratch without it leaves no right-to-left weights behind
    model.set_params(warm_start=False).fit(X, y)
    assert not any(hasattr(model, a) for a in REVERSE_ATTRS)
    assert model.output_embeddings_.shape == (V, H)
    assert model.decision_function(X).shape == (len(X), len(model.candidates_))


def test_reader_reads_the_query_token_between_history_and_query():
    model = _reader(epochs=1).fit(["hello there"], ["hi"])
    ptr, tok = model._context_sequences(
        [Context((Turn("user", "hello"),), "there zzz")],
        model._analyzer(),
        model.vocabulary_.index_,
    )
    words = [model.vocabulary_.tokens_[t] for t in tok]
    assert words == ["hello", "<query>", "there"]  # the unknown word is dropped


def test_reread_query_reads_the_query_again_right_to_left():
    model = _reader(epochs=1, reread_query=True).fit(["hello there now"], ["hi"])
    ptr, tok = model._context_sequences(
        [Context((Turn("user", "hello"),), "there zzz now"), Context((), "now")],
        model._analyzer(),
        model.vocabulary_.index_,
    )
    words = [model.vocabulary_.tokens_[t] for t in tok]
    assert words[: ptr[1]] == ["hello", "<query>", "there", "now", "<query>", "now", "there"]
    assert words[ptr[1] :] == ["<query>", "now", "<query>", "now"]


def test_reread_query_and_history_match_a_plain_python_reference():
    rows, ptr, tok = _query_rows(0)
    want = []
    for r in rows:
        query = r[len(r) - 1 - r[::-1].index(Q) + 1 :]
        want.append(r + [Q] + query[::-1])
    new_ptr, new_tok = _reread_query(ptr, tok, Q)
    np.testing.assert_array_equal(new_ptr, np.concatenate(([0], np.cumsum([len(w) for w in want]))))
    np.testing.assert_array_equal(new_tok, np.concatenate(want))
    # word dropout may leave out everything before the last query word: the history, and
    # after rereading the query's first reading
    for p, t, seqs in ((ptr, tok, rows), (new_ptr, new_tok, want)):
        mask = [[i < len(s) - 1 - s[::-1].index(Q) for i in range(len(s))] for s in seqs]
        np.testing.assert_array_equal(_droppable(p, t, Q), np.concatenate(mask))


def test_reread_query_changes_the_reader_and_default_reads_once():
    X, y = _story_data(40)
    base = _reader(epochs=3, word_dropout=0.3).fit(X, y)
    off = _reader(epochs=3, word_dropout=0.3, reread_query=False).fit(X, y)
    np.testing.assert_array_equal(base.decision_function(X), off.decision_function(X))
    on = _reader(epochs=3, word_dropout=0.3, reread_query=True).fit(X, y)
    assert not np.allclose(base.decision_function(X), on.decision_function(X))


def _spy_runs(monkeypatch):
    """Record the starting embeddings of each training run of a RecurrentReader fit, and
    the key it is compared by: its best validation score, or its train_key."""
    starts, keys = [], []
    adam_run = RecurrentReader._adam_run

    def spy(self, params, *args):
        starts.append(params["Emb"].copy())
        run = adam_run(self, params, *args)
        if run.train_key is not None:
            key = run.train_key
            run.train_key = lambda kept: keys.append(key(kept)) or keys[-1]
        return run

    monkeypatch.setattr(RecurrentReader, "_adam_run", spy)
    run_epochs = training.run_epochs

    def spy_epochs(*args, **kwargs):
        log = run_epochs(*args, **kwargs)
        if log.best_weights is not None:
            keys.append((log.best_score, list(log.validation_scores)))
        return log

    monkeypatch.setattr(training, "run_epochs", spy_epochs)
    return starts, keys


def test_n_init_restarts_from_new_weights_and_keeps_the_best_validated_run(monkeypatch):
    X, y = _story_data(60)
    starts, keys = _spy_runs(monkeypatch)
    params = dict(epochs=4, early_stopping=True, validation_fraction=0.25, n_iter_no_change=9)
    model = _reader(n_init=3, **params).fit(X, y)
    assert len(starts) == len(keys) == 3
    assert not np.array_equal(starts[0], starts[1]) and not np.array_equal(starts[1], starts[2])
    best_score, curve = max(keys, key=lambda k: k[0])
    assert model.best_validation_score_ == best_score
    assert model.validation_scores_ == curve
    # the first run is the model of n_init=1
    one = _reader(n_init=1, **params).fit(X, y)
    assert one.validation_scores_ == keys[0][1]


def test_n_init_without_validation_keeps_the_best_training_accuracy(monkeypatch):
    X, y = _story_data(60)
    starts, keys = _spy_runs(monkeypatch)
    model = _reader(n_init=3, epochs=2).fit(X, y)
    assert len(starts) == len(keys) == 3
    assert model.score(X, y) == max(keys)[0]
    assert len(model.loss_curve_) == model.n_iter_ == 2
    # a continued fit is one run
    model.set_params(warm_start=True).fit(X, y)
    assert len(starts) == 4 and model.n_iter_ == 4


def test_drop_words_removes_only_droppable_tokens():
    ptr = np.array([0, 3, 3, 7, 7])  # two empty rows
    tok = np.arange(7, dtype=np.int32)
    droppable = np.array([1, 1, 0, 1, 1, 1, 0], bool)
    rng = np.random.default_rng(0)
    same_ptr, same_tok = _drop_words(ptr, tok, droppable, 0.0, rng)
    np.testing.assert_array_equal(same_ptr, ptr)
    np.testing.assert_array_equal(same_tok, tok)
    new_ptr, new_tok = _drop_words(ptr, tok, droppable, 1.0 - 1e-12, rng)
    np.testing.assert_array_equal(new_ptr, [0, 1, 1, 2, 2])
    np.testing.assert_array_equal(new_tok, [2, 6])  # the kept tokens, still in their rows
    kept = [_drop_words(ptr, tok, droppable, 0.5, rng)[1].size for _ in range(2000)]
    assert abs(np.mean(kept) - (2 + 5 * 0.5)) < 0.1


def test_word_dropout_spares_the_query_and_zero_changes_nothing():
    X, y = _story_data(40)
    base = _reader(epochs=3).fit(X, y)
    zero = _reader(epochs=3, word_dropout=0.0).fit(X, y)
    np.testing.assert_array_equal(base.decision_function(X), zero.decision_function(X))
    dropped = _reader(epochs=3, word_dropout=0.5).fit(X, y)
    assert not np.allclose(base.decision_function(X), dropped.decision_function(X))
    # the history is all dropped: only the query token and the query are ever read, so
    # the reader cannot tell the stories apart
    blind = _reader(epochs=3, word_dropout=1.0 - 1e-12).fit(X, y)
    assert blind.train_accuracy_curve_[-1] < 0.7
    with pytest.raises(ValueError, match="word_dropout"):
        _reader(word_dropout=1.0).fit(X, y)


def test_reader_max_length_reads_the_last_tokens():
    X, y = _story_data(20)
    a = _reader(max_length=6, epochs=2).fit(X, y)
    # the query is the last 4 tokens: only 2 story tokens are read, so changing the
    # first fact changes nothing
    changed = [Context((Turn("kb", "john went to the office."),) + X[0].history[1:], X[0].query)]
    np.testing.assert_array_equal(a.decision_function(X[:1]), a.decision_function(changed))


FIT_CASES = [(_reader, {}), (_reader, {"bidirectional": True, "early_stopping": True}),
             (_dual, {}), (_dual, {"cell": "rnn", "early_stopping": True})]  # fmt: skip


def _every_thread(monkeypatch):
    """Let every epoch and validation split of the recurrent models run on as many
    threads as n_jobs asks (numba's at most), however little its work."""
    monkeypatch.setattr(
        _recurrent, "threads_for_work",
        lambda n_jobs, work: min(n_threads(n_jobs), numba.config.NUMBA_NUM_THREADS),
    )  # fmt: skip


@pytest.mark.parametrize(("make", "kw"), FIT_CASES)
def test_n_jobs_fit_repeats_and_one_thread_is_the_default(make, kw, monkeypatch):
    """n_jobs=1 is the model of n_jobs=None bit for bit; n_jobs=2 trains the epochs
    Hogwild on two threads (where numba has two), a model close to it but not the same."""
    _every_thread(monkeypatch)
    X, y = _story_data(48)
    kw = dict(epochs=3, batch_size=16, **kw)

    def weights(n_jobs):
        model = make(n_jobs=n_jobs, **kw).fit(X, y)
        return {k: v for k, v in model.__dict__.items() if isinstance(v, np.ndarray)}

    default, one, two = weights(None), weights(1), weights(2)
    assert default.keys() == one.keys() == two.keys() and "embeddings_" in default
    for k in default:
        np.testing.assert_array_equal(one[k], default[k], err_msg=k)
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert not np.array_equal(two["recurrent_weights_"], one["recurrent_weights_"])
    assert all(np.isfinite(v).all() for v in two.values() if v.dtype.kind == "f")


@pytest.mark.parametrize("kw", [{}, {"bidirectional": True}, {"query_both_ways": True}])
def test_threads_encode_as_one_thread(kw, monkeypatch):
    """The validation split encoded on threads (a contiguous block of the rows each, in
    one numba parallel region) gives the states one thread gives, in the same order."""
    X, y = _story_data(40)
    model = _reader(epochs=1, **kw).fit(X, y)
    params = model._all_params()
    ptr, tok = model._context_sequences(X, model._analyzer(), model.vocabulary_.index_)
    rows = np.array([5, 3, 39, 0, 17, 8, 8, 21, 2])
    alone = model._encode_rows(params, ptr, tok, rows)
    _every_thread(monkeypatch)
    blocks, kernel = [], _recurrent.encode_parts

    def counted(*args):
        blocks.append(args[-1])  # the rows of a block
        return kernel(*args)

    monkeypatch.setattr(_recurrent, "encode_parts", counted)
    shared = model._encode_rows(params, ptr, tok, rows, n_jobs=3)
    threads = min(3, numba.config.NUMBA_NUM_THREADS)
    assert blocks == ([-(-len(rows) // threads)] if threads > 1 else [])
    np.testing.assert_allclose(shared, alone, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [_reader, _dual])
@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_bad_n_jobs_is_a_clear_error(make, n_jobs):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="n_jobs"):
        make(n_jobs=n_jobs).fit(X, y)


def test_dual_encoder_fit_chunks_equals_fit():
    X, y, _ = make_tiny_dialogs()
    whole = _dual(epochs=3).fit(X, y)
    chunks = [(X[:7], y[:7]), (X[7:], y[7:])]
    streamed = _dual(epochs=3).fit_chunks(iter(chunks))
    assert streamed.candidates_.tolist() == whole.candidates_.tolist()
    assert streamed.vocabulary_.tokens_ == whole.vocabulary_.tokens_
    np.testing.assert_allclose(streamed.decision_function(X), whole.decision_function(X),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_dual_encoder_learns_and_takes_explicit_labels():
    X = ["my usb stick does not mount", "no sound after the update", "wifi drops often"] * 10
    y = ["sudo mount the usb stick", "restart pulseaudio for sound", "reload the wifi driver"] * 10
    model = _dual(epochs=30).fit(X, y)
    assert model.score(X[:3], y[:3]) == 1.0
    rows = X + X
    resp = y + y[1:] + y[:1]
    labels = [1] * len(X) + [0] * len(X)
    flagged = _dual(epochs=30).fit(rows, resp, labels=labels)
    assert flagged.candidates_.tolist() == y[:3]
    assert flagged.score(X[:3], y[:3]) == 1.0
    with pytest.raises(ValueError, match="labels must hold one 0 or 1"):
        _dual().fit(X, y, labels=[2] * len(X))


@pytest.mark.parametrize("make", [_reader, _dual])
def test_early_stopping_keeps_history(make):
    X, y, groups = make_tiny_dialogs()
    model = make(epochs=6, early_stopping=True, n_iter_no_change=2,
                 validation_fraction=0.34).fit(X, y, groups=groups)  # fmt: skip
    assert 1 <= len(model.validation_scores_) == model.n_iter_ <= 6
    assert len(model.loss_curve_) == model.n_iter_


@pytest.mark.parametrize("make", [_reader, _dual])
def test_divergence_and_errors_are_clear(make):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="cell"):
        make(cell="gru").fit(X, y)
    with pytest.raises(ValueError, match="weight_init"):
        make(weight_init="xavier").fit(X, y)
    with pytest.raises(ValueError, match="empty"):
        make().fit([], [])
    model = make(epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="empty"):
        model.rank_candidates(X[:1], [[]])


def test_fixed_candidates_and_unknown_gold():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="not among the candidates"):
        _reader(candidates=["a", "b"]).fit(X, y)


def test_reader_ranks_entity_symbols_inside_entity_symbol_ranker():
    from irdialog import EntitySymbolRanker

    X = ["who directed heat", "who directed alien", "who directed heat please"] * 4
    y = ["michael_mann", "ridley_scott", "michael_mann"] * 4
    model = EntitySymbolRanker(
        ranker=_reader(epochs=20, learning_rate=0.02),
        entities=["michael_mann", "ridley_scott"],
        min_count=1,
    ).fit(X, y)
    assert model.predict(X[:2]).tolist() == ["michael_mann", "ridley_scott"]


# --------------------------------------------------------------------------- hard negatives


def _spy_pairs(monkeypatch):
    """Record the (pair table, contexts, responses, flags) of every epoch's pairs."""
    seen = []
    pairs_of = DualEncoderRanker._pairs

    def spy(self, pairs, rows, rng):
        ctx, resp, flags = pairs_of(self, pairs, rows, rng)
        seen.append((pairs, ctx, resp, flags))
        return ctx, resp, flags

    monkeypatch.setattr(DualEncoderRanker, "_pairs", spy)
    return seen


def test_dual_encoder_draws_negatives_from_the_pools_only(monkeypatch):
    X, y, _ = make_tiny_dialogs()
    others = list(dict.fromkeys(y))
    # every third context has an empty pool: it draws among the true responses
    pools = [[] if i % 3 == 0 else [others[(i + 1) % 3], "a pool reply never true"]
             for i in range(len(X))]  # fmt: skip
    seen = _spy_pairs(monkeypatch)
    model = _dual(epochs=2, n_negatives=3).fit(X, y, negative_lists=pools)
    assert len(seen) == 3  # the validation pairs (none), then two epochs
    drawn_from_pool = drawn_at_random = 0
    for pairs, ctx, resp, flags in seen[1:]:
        table = list(dict.fromkeys(y)) + ["a pool reply never true"]
        assert pairs["n_true"] == len(table) - 1 == pairs["n_resp"] - 1
        for c, r, f in zip(ctx, resp, flags):
            text = table[r - pairs["n_ctx"]]
            if f == 1:
                assert text == y[c]
            elif pools[c]:
                assert text in set(pools[c]) - {y[c]}
                drawn_from_pool += 1
            else:
                assert text != y[c] and text in set(y)
                drawn_at_random += 1
    assert drawn_from_pool and drawn_at_random
    assert "a pool reply never true" not in set(model.candidates_)
    assert "never" in model.vocabulary_.index_  # a pool's words are read


def test_dual_encoder_empty_pools_draw_as_the_default_fit():
    X, y, _ = make_tiny_dialogs()
    default = _dual(epochs=2, n_negatives=2).fit(X, y)
    empty = _dual(epochs=2, n_negatives=2).fit(X, y, negative_lists=[[]] * len(X))
    for k, v in default._all_params().items():
        np.testing.assert_array_equal(empty._all_params()[k], v, err_msg=k)
    assert empty.loss_curve_ == default.loss_curve_


def test_dual_encoder_negative_lists_and_a_callable_give_the_same_model():
    X, y, _ = make_tiny_dialogs()
    pools = [[r for r in dict.fromkeys(y) if r != g][:2] for g in y]
    given = _dual(epochs=2).fit(X, y, negative_lists=pools)
    called = _dual(epochs=2, negatives=lambda X_, y_: pools).fit(X, y)
    default = _dual(epochs=2).fit(X, y)
    np.testing.assert_array_equal(given.match_matrix_, called.match_matrix_)
    assert not np.array_equal(given.match_matrix_, default.match_matrix_)
    # partial_fit takes the same pools
    part = _dual(negatives=lambda X_, y_: pools).partial_fit(X, y)
    ref = _dual().partial_fit(X, y, negative_lists=pools)
    np.testing.assert_array_equal(part.match_matrix_, ref.match_matrix_)


def test_dual_encoder_pools_decide_which_response_is_pushed_down():
    """Contexts "a" and "b" with true responses "r0" and "r1", and a third candidate "r2"
    that is no context's. Random negatives push "a" away from "r1" (the only other true
    response), so "r1" ranks last for "a"; a pool of "r2" alone pushes "a" away from "r2"
    instead, which then ranks last."""
    X, y = ["a", "b"] * 20, ["r0", "r1"] * 20
    params = dict(candidates=["r0", "r1", "r2"], epochs=20, tokenizer="char")
    plain = _dual(**params).fit(X, y)
    pooled = _dual(**params).fit(X, y, negative_lists=[["r2"]] * len(X))
    assert plain.rank(["a"], k=3)[0].tolist() == [0, 2, 1]
    assert pooled.rank(["a"], k=3)[0].tolist() == [0, 1, 2]


def test_dual_encoder_bm25_pools_share_the_contexts_words(monkeypatch):
    monkeypatch.setattr(_recurrent, "MINED_NEGATIVES", 1)
    X = ["where is the red car", "a blue bike", "the green boat"]
    model = _dual(epochs=1, negatives="bm25", max_length=None)
    responses = ["parked outside", "in the shed", "on the lake", "a red car", "too a blue bike"]
    # the pools as the fit mines them, over the true responses only
    analyzer = model._analyzer()
    model.vocabulary_ = Vocabulary(extra_tokens=[_recurrent.QUERY_TOKEN]).fit(
        analyzer.tokens(t) for t in X + responses
    )
    index = model.vocabulary_.index_
    cptr, ctok = model._context_sequences(check_contexts(X), analyzer, index)
    rptr, rtok = model._text_sequences(responses, analyzer, index)
    pairs = _recurrent._pair_table(cptr, ctok, rptr, rtok, np.array([0, 1, 2]), None)
    pools = _recurrent._mined_pools(pairs, 0)
    assert pools.indptr.tolist() == [0, 1, 2, 3]
    # each context's best BM25 response but its own: the one sharing its rare words
    assert pools.indices.tolist() == [3, 4, 1]  # "the" of "the green boat": "in the shed"
    # reading only the last token of each text: "car", "bike" and "boat" (no match: the
    # lowest row but its own)
    short = _recurrent._mined_pools(pairs, 1)
    assert short.indices.tolist() == [3, 4, 0]


def test_dual_encoder_bm25_negatives_fit_and_fit_chunks_agree(monkeypatch):
    # pools smaller than the other true responses of the tiny dialogs, or they hold them all
    monkeypatch.setattr(_recurrent, "MINED_NEGATIVES", 3)
    X, y, _ = make_tiny_dialogs()
    whole = _dual(epochs=2, negatives="bm25").fit(X, y)
    chunked = _dual(epochs=2, negatives="bm25").fit_chunks([(X[:7], y[:7]), (X[7:], y[7:])])
    np.testing.assert_allclose(chunked.decision_function(X), whole.decision_function(X),
                               rtol=1e-5, atol=1e-5)  # fmt: skip
    random = _dual(epochs=2).fit(X, y)
    assert not np.allclose(random.decision_function(X), whole.decision_function(X))


def test_dual_encoder_negative_pool_errors():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match="pass one or the other"):
        _dual(negatives="bm25").fit(X, y, negative_lists=[[]] * len(X))
    with pytest.raises(ValueError, match="one list per example"):
        _dual().fit(X, y, negative_lists=[[]])
    with pytest.raises(TypeError, match=r"negative_lists\[0\] must be a sequence of str"):
        _dual().fit(X, y, negative_lists=["hello"] * len(X))
    with pytest.raises(ValueError, match="callable"):
        _dual(negatives=lambda X, y: []).fit_chunks([(X, y)])
    with pytest.raises(ValueError, match="negatives"):
        _dual(negatives="hard").fit(X, y)
    labels = [1] * len(X)
    for model, kw in [(_dual(negatives="bm25"), {}), (_dual(), {"negative_lists": [[]] * len(X)})]:
        with pytest.raises(ValueError, match="labels gives the negatives"):
            model.fit(X, y, labels=labels, **kw)


def test_dual_encoder_negatives_clone_and_get_params():
    from sklearn.base import clone

    def pools(X, y):
        return [[] for _ in y]

    for negatives in ("bm25", pools):
        model = _dual(negatives=negatives)
        assert clone(model).get_params()["negatives"] is negatives
    X, y, _ = make_tiny_dialogs()
    fitted = _dual(epochs=1, negatives="bm25").fit(X, y)
    assert fitted.get_params()["negatives"] == "bm25"
    assert clone(fitted).get_params() == fitted.get_params()
