"""benchmarks.training_peers: each peer trains on the examples irdialog's fit trains on,
its model is read back and scored as ours is, and the PyTorch networks compute ours."""

import os
import shutil
import subprocess
from collections import Counter

import numpy as np
import pytest
from conftest import import_benchmark, make_tiny_dialogs

from irdialog import MemN2NRanker, SupervisedEmbeddingRanker
from irdialog.base import check_contexts
from irdialog.datasets import load_babi_qa

peers = import_benchmark("training_peers")


def _tiny_se(**params):
    X, y, _ = make_tiny_dialogs()
    params = {"embedding_dim": 4, "epochs": 2, "n_negatives": 3, "random_state": 0, **params}
    return X, y, SupervisedEmbeddingRanker(**params)


def _starspace_binary():
    binary = os.environ.get("STARSPACE") or shutil.which("starspace")
    if not binary:
        pytest.skip("StarSpace is not installed (set $STARSPACE to its binary)")
    return binary


@pytest.mark.parametrize("normalize_input", [False, True])
def test_starspace_files_hold_the_bags_our_fit_trains_on(tmp_path, normalize_input):
    X, y, est = _tiny_se(normalize_input=normalize_input)
    path = peers.write_starspace_files(est, X, y, tmp_path, "trn.txt")
    est.fit(X, y)
    inputs, responses = est._input_bags(X), est._response_bags(y)
    index = est.vocabulary_.index_
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(X)
    for i, line in enumerate(lines):
        lhs, rhs = line.split("\t")
        got = {}
        for item in lhs.split():
            word, weight = item.rsplit(peers.WEIGHT_SEP, 1)
            got[index[word]] = float(weight)
        row = inputs[i]
        assert sorted(got) == sorted(row.indices.tolist())
        np.testing.assert_allclose([got[j] for j in row.indices], row.data, rtol=1e-6)
        want = responses[i]
        assert Counter(index[w] for w in rhs.split()) == dict(
            zip(want.indices.tolist(), want.data.astype(int).tolist())
        )


def test_the_weight_separator_and_percent_are_escaped_reversibly(tmp_path):
    from urllib.parse import unquote

    X, y, est = _tiny_se(tokenizer=str.split)
    y = ["at 7:30 100%", *y[1:]]
    path = peers.write_starspace_files(est, X, y, tmp_path, "trn.txt")
    rhs = path.read_text(encoding="utf-8").splitlines()[0].split("\t")[1].split()
    assert rhs == ["at", "7%3A30", "100%25"]
    assert [unquote(w) for w in rhs] == ["at", "7:30", "100%"]  # as read_starspace_model reads
    with pytest.raises(ValueError, match="a space"):
        peers.starspace_word("a b")


def test_bag_accuracy_scores_a_model_as_it_ranks():
    X, y, est = _tiny_se(epochs=40, learning_rate=0.1, margin=0.5)
    est.fit(X, y)
    cands = [est._response_tokens(c) for c in est.candidates_]
    gold = [est.candidates_.tolist().index(r) for r in y]
    acc = peers.bag_accuracy(
        est.vocabulary_.index_, est.input_embeddings_, est.response_embeddings_,
        peers.se_examples(est, X, y), cands, gold,
    )  # fmt: skip
    assert acc == pytest.approx(100 * est.score(X, y))


def test_starspace_options_match_the_model_or_refuse():
    params = {"embedding_dim": 32, "learning_rate": 0.1, "margin": 0.1, "n_negatives": 100,
              "epochs": 3}  # fmt: skip
    args = peers.starspace_args(params)
    option = dict(zip(args[::2], args[1::2]))
    assert option["-dim"] == "32" and option["-negSearchLimit"] == "100"
    assert option["-maxNegSamples"] == "100" and option["-epoch"] == "3"
    assert option["-shareEmb"] == "false" and option["-adagrad"] == "false"
    with pytest.raises(ValueError, match="two dictionaries"):
        peers.starspace_args({**params, "shared_embeddings": True})


def test_a_starspace_model_is_read_back_and_scored(tmp_path):
    binary = _starspace_binary()
    X, y, est = _tiny_se(normalize_input=True)
    path = peers.write_starspace_files(est, X, y, tmp_path, "trn.txt")
    params = {"embedding_dim": 4, "learning_rate": 0.1, "margin": 0.5, "n_negatives": 3,
              "epochs": 2}  # fmt: skip
    model = tmp_path / "model"
    subprocess.run(
        [binary, "train", "-trainFile", str(path), "-model", str(model),
         *peers.starspace_args(params), "-thread", "1"],
        check=True, capture_output=True,
    )  # fmt: skip
    words, U, V = peers.read_starspace_model(model)
    assert U.shape == V.shape == (len(words), 4) and not np.array_equal(U, V)
    # the text dump holds the input embeddings, rounded
    tsv = [line.split("\t") for line in (tmp_path / "model.tsv").read_text().splitlines()]
    assert [row[0] for row in tsv] == words
    np.testing.assert_allclose(np.array([row[1:] for row in tsv], float), U, rtol=1e-4)
    assert set(words) == {w for bag, r in peers.se_examples(est, X, y) for w in [*bag, *r]}


def test_the_torch_se_learns_the_tiny_dialogs():
    torch = pytest.importorskip("torch")
    # ours: 87.5% of these examples after 40 epochs, 95.8% after 100 (torch: 79.2, 91.7)
    X, y, est = _tiny_se(epochs=200, learning_rate=0.1, margin=0.5)
    examples = peers.se_examples(est, X, y)
    cands = sorted(set(y))
    responses = [est._response_tokens(c) for c in cands]
    gold = [cands.index(r) for r in y]
    params = est.get_params()
    words, U, V = peers.torch_se_run(torch, examples, responses, gold, len(cands), params)()
    assert U.shape == V.shape == (len(words), 4) and not U[0].any() and not V[0].any()
    assert peers.bag_accuracy(words, U, V, examples, responses, gold) == 100.0


def _tiny_babi(monkeypatch):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)
    data = load_babi_qa(1, "train")
    return data.X[:60], data.y[:60]


def test_the_torch_memn2n_scores_as_our_fitted_network(monkeypatch):
    torch = pytest.importorskip("torch")
    X, y = _tiny_babi(monkeypatch)
    est = MemN2NRanker(hops=2, embedding_dim=8, epochs=2, random_noise=0.1, random_state=0)
    est.fit(X, y)
    enc = est._encode(check_contexts(X))
    t = peers._memn2n_tensors(torch, est, enc)
    mtime = peers._slot_tensor(torch, enc.mptr, enc.mtime, t["slots"])
    E = torch.from_numpy(est.embeddings_)
    with torch.no_grad():
        scores = peers._memn2n_forward(torch, E, t, mtime, torch.arange(len(X)), 2, True)
    np.testing.assert_allclose(scores.numpy(), est.decision_function(X), atol=1e-4)


def test_the_torch_memn2n_trains_and_is_scored(monkeypatch):
    torch = pytest.importorskip("torch")
    X, y = _tiny_babi(monkeypatch)
    est = MemN2NRanker(hops=2, embedding_dim=8, epochs=30, linear_start=2, random_noise=0.1)
    E = peers.torch_memn2n_run(torch, est, X, y)()
    assert E.shape == (3, len(est.vocabulary_), 8) and not E[:, 0].any()
    assert peers.torch_memn2n_accuracy(torch, est, E, X, y) > 50.0
    with pytest.raises(ValueError, match="adjacent tying"):
        peers.torch_memn2n_run(torch, MemN2NRanker(weight_tying="layerwise"), X, y)


def test_the_table_has_a_line_per_side():
    row = {
        "workload": "SE, dialog bAbI task 1", "params": {"epochs": 2}, "metric": "dev %",
        "seconds": {"irdialog": 1.0, "torch": 3.0},
        "over_irdialog": {"irdialog": 1.0, "torch": 3.0},
        "configuration": {"irdialog": "one thread", "torch": "PyTorch, 1 thread"},
        "score": {"irdialog": 50.0, "torch": 49.0},
    }  # fmt: skip
    lines = peers.SPEED.table({"cores": 2, "repeat": 2, "rows": [row]})
    assert lines[-2:] == [
        "| SE, dialog bAbI task 1 | 2 | irdialog | one thread | 1.00 | 1.00x | dev % | 50.00 |",
        "| SE, dialog bAbI task 1 | 2 | torch | PyTorch, 1 thread | 3.00 | 3.00x | dev % | 49.00 |",
    ]


def test_the_leads_compare_one_thread_each_and_each_side_at_its_fastest():
    seconds = {
        "irdialog": 2.0,
        "irdialog n_jobs=2": 1.0,
        "starspace -thread 1": 20.0,
        "starspace -thread 3": 15.0,
        "torch 1 thread": 8.0,
        "torch 2 threads": 9.0,
    }
    threads = {"irdialog": 1, "irdialog n_jobs=2": 2, "starspace -thread 1": 1,
               "starspace -thread 3": 2, "torch 1 thread": 1, "torch 2 threads": 2}  # fmt: skip
    leads = peers.leads(seconds, threads)
    assert leads == {
        "starspace": {"one thread": 10.0, "best": 15.0},
        "torch": {"one thread": 4.0, "best": 8.0},
    }
    # a peer timed only on two threads has no one-thread lead, and its row says so
    only_two = peers.leads({"irdialog": 2.0, "torch 2 threads": 9.0},
                           {"irdialog": 1, "torch 2 threads": 2})  # fmt: skip
    assert only_two == {"torch": {"one thread": None, "best": 4.5}}
    row = {"workload": "SE", "leads": only_two}
    assert peers.lead_table([row])[-1] == "| SE | torch |  | 4.5x |"
    assert peers.lead_table([{"workload": "SE"}]) == []


tta = import_benchmark("training_time_to_accuracy")


def test_time_to_accuracy_takes_each_sides_fastest_fit_to_the_common_target():
    curves = {
        "irdialog": [(1, 0.1, 40.0), (10, 0.5, 97.0), (50, 2.0, 99.5)],
        "peer": [(1, 3.0, 95.0), (2, 6.0, 98.0), (5, 15.0, 97.5)],
    }
    # the target is the best every side reaches (the peer's 98.0); the peer's first fit
    # above it is its 2 epochs, irdialog's its 50
    assert tta.time_to_target(curves) == (98.0, {"irdialog": 2.0, "peer": 6.0})


def test_the_time_to_accuracy_table_has_a_line_per_side():
    row = {
        "workload": "SE, dialog bAbI task 1", "target": 98.0,
        "curves": {"irdialog": [[1, 0.1, 40.0], [50, 2.0, 99.5]], "peer": [[2, 6.0, 98.0]]},
        "seconds_to_target": {"irdialog": 2.0, "peer": 6.0},
        "over_irdialog": {"irdialog": 1.0, "peer": 3.0},
        "configuration": {"irdialog": "one thread", "peer": "C++"},
    }  # fmt: skip
    lines = tta.SPEED.table({"cores": 2, "repeat": 2, "rows": [row]})
    assert lines[-2:] == [
        "| SE, dialog bAbI task 1 | irdialog | one thread | 1: 0.10, 40.00; 50: 2.00, 99.50 "
        "| 98.00 | 2.00 | 1.00x |",
        "| SE, dialog bAbI task 1 | peer | C++ | 2: 6.00, 98.00 | 98.00 | 6.00 | 3.00x |",
    ]
