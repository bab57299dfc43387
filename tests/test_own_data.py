"""A project's own dialogs: irdialog.datasets.load_dialogs / write_dialogs and the CLI's
train --train, evaluate and rank."""

import gzip
import json
import re

import numpy as np
import pytest

from irdialog.base import Context, Turn
from irdialog.datasets import (
    DataFormatError,
    load_dialog_babi,
    load_dialogs,
    load_ubuntu,
    write_dialogs,
)
from irdialog.datasets._base import bundled_data_dir
from irdialog.metrics import get_ranking_metric, gold_indices, hits_at_k, recall_at_k
from irdialog.persist import load


def _jsonl(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- load_dialogs


def test_jsonl_parses_turns_candidates_and_groups(tmp_path):
    path = _jsonl(
        tmp_path / "d.jsonl",
        {"history": ["hi", "hello"], "query": "a table", "response": " when? ",
         "candidates": ["never", "when?"], "group": "a"},
        {"history": [{"speaker": "kb", "text": "r1 R_phone p1"}, "ok"], "query": "",
         "response": "bye", "candidates": ["hi"], "group": 7},
        {"query": "again", "response": "sure", "candidates": ["sure"], "group": "a"},
    )  # fmt: skip
    data = load_dialogs(path)
    assert data.format == "jsonl" and data.filename == str(path)
    assert data.X[0] == Context((Turn("user", "hi"), Turn("bot", "hello")), "a table")
    assert data.X[1] == Context((Turn("kb", "r1 R_phone p1"), Turn("bot", "ok")), "")
    assert data.y == ["when?", "bye", "sure"]
    # the response joins a list that lacks it, in front
    assert data.candidate_lists == [["never", "when?"], ["bye", "hi"], ["sure"]]
    assert data.groups.tolist() == [0, 1, 0]


def test_jsonl_without_optional_keys_and_gzip(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"query": "q", "response": "r"}\n\n'))
    data = load_dialogs(path)
    assert data.X == [Context(query="q")] and data.y == ["r"]
    assert "candidate_lists" not in data and "groups" not in data


@pytest.mark.parametrize(
    "line, expected",
    [
        ('{"response": "r"}', "a 'query'"),
        ('{"query": "q"}', "a 'response'"),
        ('{"query": "q", "response": "  "}', "a non-empty 'response'"),
        ('{"query": "q", "response": "r", "history": "hi"}', "'history' to be a list of turns"),
        ('{"query": "q", "response": "r", "history": [{"speaker": "me", "text": "x"}]}',
         "history[0] to have a speaker in"),
        ('{"query": "q", "response": "r", "candidates": []}', "'candidates' to be a non-empty"),
        ('{"query": "q", "response": "r", "respones": "x"}', "unknown: ['respones']"),
        ('{"query": 3, "response": "r"}', "'query' to be a str"),
        ('["q", "r"]', "a JSON object"),
        ('{"query": "q", "response": "r"', "one JSON object per line"),
        ('{"query": "q", "response": "r", "group": 1.5}', "'group' to be a str or an int"),
    ],
)  # fmt: skip
def test_bad_jsonl_line_names_file_and_line(tmp_path, line, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"query": "q", "response": "r"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"bad\.jsonl, line 3: expected ") as err:
        load_dialogs(path)
    assert expected in str(err.value) and err.value.lineno == 3


def test_responses_optional_on_request(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", {"query": "q", "candidates": ["a", "b"]})
    with pytest.raises(DataFormatError, match="line 1: expected a 'response'"):
        load_dialogs(path)
    data = load_dialogs(path, require_response=False)
    assert data.y == [None] and data.candidate_lists == [["a", "b"]]


def test_candidates_on_some_examples_only(tmp_path):
    path = _jsonl(
        tmp_path / "d.jsonl",
        {"query": "q", "response": "r", "candidates": ["x"]},
        {"query": "q", "response": "r"},
    )
    with pytest.raises(DataFormatError, match=r"line 2: expected 'candidates' on every"):
        load_dialogs(path)


def test_empty_file_and_unknown_format(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataFormatError, match="empty.jsonl: expected at least one example"):
        load_dialogs(tmp_path / "empty.jsonl")
    with pytest.raises(ValueError, match=r"suffix '\.txt'.*format='dialog-babi'"):
        load_dialogs(tmp_path / "dialogs.txt")
    with pytest.raises(ValueError, match="format must be one of"):
        load_dialogs(tmp_path / "empty.jsonl", format="json")
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        load_dialogs(tmp_path / "missing.jsonl")


UBUNTU_TRAIN = (
    "Context,Utterance,Label\nhi __eou__ __eot__ my usb __eou__ __eot__,mount it __eou__,1\n"
)
UBUNTU_TEST = (
    "Context,Ground Truth Utterance,Distractor_0\n"
    "hi __eou__ __eot__ no sound __eou__ __eot__,restart pulseaudio __eou__,mount it __eou__\n"
)


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_ubuntu_layouts_as_csv_and_tsv(tmp_path, suffix, sep):
    train = tmp_path / f"train{suffix}"
    train.write_text(UBUNTU_TRAIN.replace(",", sep))
    data = load_dialogs(train)
    assert data.format == suffix[1:]
    assert data.X == [Context((Turn("bot", "hi"),), "my usb")] and data.y == ["mount it"]
    assert data.labels.tolist() == [1]
    test = tmp_path / f"test{suffix}"
    test.write_text(UBUNTU_TEST.replace(",", sep))
    assert load_dialogs(test).candidate_lists == [["restart pulseaudio", "mount it"]]
    test.write_text(UBUNTU_TEST.replace(",", sep) + sep.join(["x __eot__", "y"]) + "\n")
    with pytest.raises(DataFormatError, match=f"test{suffix}, line 3: expected 3 "):
        load_dialogs(test)


def test_ubuntu_sample_as_the_ubuntu_loader_reads_it(tmp_path):
    home = tmp_path / "home"
    (home / "ubuntu").mkdir(parents=True)
    (home / "ubuntu" / "valid.csv").write_text(UBUNTU_TEST)
    ours = load_dialogs(home / "ubuntu" / "valid.csv")
    theirs = load_ubuntu("valid", data_home=home)
    assert ours.X == theirs.X and ours.candidate_lists == theirs.candidate_lists


def test_dialog_babi_from_any_path_and_write_round_trip(tmp_path):
    source = bundled_data_dir() / "dialog-babi" / "dialog-babi-task1-API-calls-dev.txt.gz"
    copy = tmp_path / "mine.txt"
    copy.write_bytes(gzip.decompress(source.read_bytes()))
    data = load_dialogs(copy, format="dialog-babi")
    babi = load_dialog_babi(1, "dev")
    assert data.X == babi.X and data.y == babi.y
    assert np.array_equal(data.groups, babi.groups)
    out = write_dialogs(tmp_path / "dev.jsonl", data.X, data.y, groups=data.groups,
                        candidate_lists=[[r] for r in data.y])  # fmt: skip
    again = load_dialogs(out)
    assert again.X == data.X and again.y == data.y and again.candidate_lists[0] == [data.y[0]]
    assert np.array_equal(again.groups, data.groups)


def test_dataframe_with_the_jsonl_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"history": [["hi", "hello"], None], "query": ["a table", "thanks"],
         "response": ["when?", "bye"], "group": ["a", "b"]},
        index=[10, 11],
    )  # fmt: skip
    data = load_dialogs(frame)
    assert data.format == "dataframe" and data.y == ["when?", "bye"]
    assert data.X[1] == Context(query="thanks") and data.groups.tolist() == [0, 1]
    frame.loc[11, "response"] = ""
    with pytest.raises(DataFormatError, match=r"DataFrame row 2 \(index 11\): expected a non-e"):
        load_dialogs(frame)


# --------------------------------------------------------------------------- the command


@pytest.fixture
def bundled_only(monkeypatch):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)


def _run(*argv):
    from irdialog.cli import main

    assert main([str(a) for a in argv]) == 0


def _evaluate(model, path, *extra, metrics="hits@1,hits@10,mrr"):
    out = path.parent / f"{path.stem}-metrics.json"
    _run("evaluate", model, path, "--metrics", metrics, "--output", out, "--quiet", *extra)
    return json.loads(out.read_text())


SHOP = [
    ("hi", "hello, what can i do for you?"),
    ("a table for two please", "for when?"),
    ("tonight at eight", "booked, see you tonight"),
    ("thanks a lot", "you are welcome"),
]


def _shop_file(path, candidates=False):
    records = []
    for g in range(3):
        history = []
        for query, response in SHOP:
            record = {"history": list(history), "query": query, "response": response, "group": g}
            if candidates:
                record["candidates"] = ["goodbye", response]
            records.append(record)
            history += [query, response]
    return _jsonl(path, *records)


def test_train_evaluate_rank_round_trip(tmp_path, capsys):
    from irdialog.persist import load

    train, valid = _shop_file(tmp_path / "train.jsonl"), _shop_file(tmp_path / "valid.jsonl")
    model_file = tmp_path / "m.npz"
    _run("train", "--train", train, "--valid", valid, "--model", "tfidf", "--save", model_file)
    out = capsys.readouterr().out
    assert '{"use_history": true}: valid hits@1' in out and "kept the best on --valid" in out
    assert f"saved to {model_file}" in out
    model = load(model_file)
    data = load_dialogs(valid)
    metrics = _evaluate(model_file, valid)
    assert metrics["n"] == 12 and metrics["against"] == "the model's 4 candidates"
    gold = gold_indices(data.y, model.candidates_)
    scores = model.decision_function(data.X)
    assert metrics["hits@1"] == hits_at_k(gold, scores) and metrics["hits@10"] == 1.0
    # score is predict's accuracy: ties to the lower index, evaluate counts them at their
    # expected value
    assert model.score(data.X, data.y) == hits_at_k(gold, scores, ties="index")
    ranks = tmp_path / "ranks.jsonl"
    _run("rank", model_file, valid, "-k", "2", "--output", ranks, "--quiet")
    lines = [json.loads(line) for line in ranks.read_text().splitlines()]
    assert len(lines) == 12 and all(len(r["responses"]) == 2 for r in lines)
    assert [r["responses"][0] for r in lines] == model.predict(data.X).tolist()
    assert all(r["scores"][0] >= r["scores"][1] for r in lines)
    assert capsys.readouterr().out == ""  # --quiet


def test_evaluate_and_rank_on_the_examples_candidates(tmp_path, capsys):
    train = _shop_file(tmp_path / "train.jsonl")
    test = _shop_file(tmp_path / "test.jsonl", candidates=True)
    model_file = tmp_path / "m.joblib"
    _run("train", "--train", train, "--model", "nn", "--save", model_file, "--quiet")
    metrics = _evaluate(model_file, test)
    assert metrics["against"] == "each example's candidates" and metrics["hits@1"] == 1.0
    _run("rank", model_file, test, "-k", "5")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [len(r["responses"]) for r in lines] == [2] * 12  # a list of 2: no padding shown
    # rank needs no responses
    unlabelled = _jsonl(
        tmp_path / "new.jsonl",
        {"query": "thanks a lot", "candidates": ["goodbye", "you are welcome"]},
    )
    _run("rank", model_file, unlabelled, "-k", "1")
    assert json.loads(capsys.readouterr().out)["responses"] == ["you are welcome"]


def test_train_with_set_candidates_and_seed(tmp_path, capsys):
    from irdialog.persist import load

    train = _shop_file(tmp_path / "train.jsonl")
    cands = tmp_path / "cands.txt"
    cands.write_text("\n".join(["goodbye", *(r for _, r in SHOP)]) + "\n\n")
    model_file = tmp_path / "se.npz"
    _run("train", "--train", train, "--valid", train, "--candidates", cands, "--model", "se",
         "--set", "epochs=2", "--set", "use_history=False", "--seed", "3",
         "--save", model_file)  # fmt: skip
    out = capsys.readouterr().out
    assert '{"epochs": 2, "use_history": false} (no search)' in out and "5 candidates" in out
    params = load(model_file).get_params()
    assert (params["epochs"], params["use_history"], params["random_state"]) == (2, False, 3)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--train", "{t}", "--task", "1", "--model", "tfidf"], "not both"),
        (["--model", "tfidf"], "give --task"),
        (["--task", "1", "--valid", "{t}", "--model", "tfidf"], "--valid go with --train"),
        (["--train", "{t}", "--model", "lstm"], "choose from tfidf, bm25, nn, se, memn2n"),
        (["--train", "{t}", "--model", "bm25", "--set", "k2=1"], "has no hyper-parameter k2"),
        (["--train", "{t}", "--model", "nn", "--set", "candidates=x"], "from --candidates FILE"),
        (["--train", "{tmp}/none.jsonl", "--model", "tfidf"], "none.jsonl: no such file"),
        (["--train", "{tmp}/d.txt", "--model", "tfidf"], "format='dialog-babi'"),
        (["--train", "{t}", "--candidates", "{tmp}/d.txt", "--model", "nn"], "no candidate"),
    ],
)
def test_train_errors(tmp_path, capsys, argv, message):
    from irdialog.cli import main

    train = _shop_file(tmp_path / "train.jsonl")
    (tmp_path / "d.txt").write_text("\n")
    argv = [a.format(t=train, tmp=tmp_path) for a in argv]
    assert main(["train", *argv, "--save", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irdialog: error: ") and message in err
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    "metric, candidates, message",
    [
        ("hits@0", False, "--metrics: ranking metric 'hits@0': k must be at least 1"),
        ("r@1/2", False, "unknown ranking metric 'r@1/2'; valid names are 'hits@K', 'p@1'"),
        ("r@1/2", False, "write 'rN@K'"),
        ("p@2", False, "'ndcg@K', 'recall@K' and 'rN@K'"),
        ("r2@3", False, "'r2@3': K must be at most N"),
        ("r@1-of-2", False, "it is a scorer (make_ranking_scorer)"),
        ("r2@1", False, "give them in the file"),
        ("r3@1", True, "example 1 has 2 candidates; r3@1 needs the first 3"),
    ],
)
def test_evaluate_rejects_an_unknown_or_impossible_metric(tmp_path, capsys, metric, candidates,
                                                          message):  # fmt: skip
    from irdialog.cli import main

    train = _shop_file(tmp_path / "train.jsonl")
    test = _shop_file(tmp_path / "test.jsonl", candidates=candidates)
    _run("train", "--train", train, "--model", "tfidf", "--save", tmp_path / "m.npz", "--quiet")
    assert main(["evaluate", str(tmp_path / "m.npz"), str(test), "--metrics", metric]) == 2
    assert message in capsys.readouterr().err


def test_jsonl_labels_round_trip_and_train_on_the_true_responses(tmp_path, capsys):
    from irdialog.persist import load

    X, y = [q for q, _ in SHOP], [r for _, r in SHOP]
    wrong = y[1:] + y[:1]  # each query with another's response, labelled 0
    path = write_dialogs(tmp_path / "train.jsonl", X + X, y + wrong,
                         labels=[1] * len(y) + [0] * len(y))  # fmt: skip
    data = load_dialogs(path)
    assert data.labels.tolist() == [1] * len(y) + [0] * len(y) and data.y == y + wrong
    _run("train", "--train", path, "--model", "nn", "--save", tmp_path / "m.npz", "--quiet")
    model = load(tmp_path / "m.npz")
    assert sorted(model.candidates_) == sorted(set(y))  # learnt from the rows labelled 1
    assert model.predict(X).tolist() == y
    bad = _jsonl(tmp_path / "bad.jsonl", {"query": "q", "response": "r", "label": 2})
    with pytest.raises(DataFormatError, match="line 1: expected 'label' to be 1 or 0"):
        load_dialogs(bad)


def _babi_as_jsonl(task, folder, data_home):
    """Dialog bAbI task files written out as JSON Lines, and the candidate file."""
    for split in ("trn", "dev", "tst"):
        data = load_dialog_babi(task, split, data_home=data_home)
        write_dialogs(folder / f"{split}.jsonl", data.X, data.y, groups=data.groups)
    (folder / "cands.txt").write_text("".join(c + "\n" for c in data.candidates))


def _check_babi_tfidf_equals_the_bench(task, tmp_path, data_home=None):
    from irdialog.bench import bench_dialog_babi

    _babi_as_jsonl(task, tmp_path, data_home)
    model_file = tmp_path / "tfidf.npz"
    _run("train", "--train", tmp_path / "trn.jsonl", "--valid", tmp_path / "dev.jsonl",
         "--candidates", tmp_path / "cands.txt", "--model", "tfidf", "--save", model_file,
         "--quiet")  # fmt: skip
    hits = _evaluate(model_file, tmp_path / "tst.jsonl", metrics="hits@1")["hits@1"]
    run = bench_dialog_babi("tfidf", tasks=[task], data_home=data_home, progress=False)
    [row] = [r for r in run["rows"] if r["split"] == "tst"]
    # the bench and evaluate both count a tie at its expected value
    model, test = load(model_file), load_dialogs(tmp_path / "tst.jsonl")
    scores = model.decision_function(test.X)
    gold = gold_indices(test.y, model.candidates_)
    assert 100.0 * hits_at_k(gold, scores) == pytest.approx(row["per_response"])
    assert hits == hits_at_k(gold, scores)
    assert hits_at_k(gold, scores, ties="index") != hits  # ties that the rule decides


def test_dialog_babi_task_1_as_jsonl_gives_the_tfidf_bench(tmp_path, bundled_only):
    _check_babi_tfidf_equals_the_bench(1, tmp_path)


@pytest.mark.slow
def test_dialog_babi_task_2_as_jsonl_gives_the_tfidf_bench(tmp_path, data_home):
    _check_babi_tfidf_equals_the_bench(2, tmp_path, data_home)


def _check_ubuntu_tfidf_equals_the_bench(home, tmp_path):
    from irdialog.bench import bench_ubuntu

    folder = home / "ubuntu-sample" if (home / "ubuntu-sample").is_dir() else home / "ubuntu"
    model_file = tmp_path / "tfidf.npz"
    _run("train", "--train", folder / "train.csv", "--model", "tfidf", "--save", model_file,
         "--quiet")  # fmt: skip
    metrics = _evaluate(model_file, folder / "test.csv", metrics="r2@1,r10@1,r10@2,r10@5")
    run = bench_ubuntu("tfidf", data_home=home, progress=False)
    bench = {r["metric"]: r["value"] for r in run["rows"]}
    # the bench and evaluate both count a tie at its expected value
    model, test = load(model_file), load_dialogs(folder / "test.csv")
    scores = model.rank_candidates(test.X, test.candidate_lists)
    for n, k in ((2, 1), (10, 1), (10, 2), (10, 5)):
        expected = recall_at_k(scores, k, n, ties="expected")
        assert 100.0 * expected == pytest.approx(bench[f"r{k}@{n}"])
        assert metrics[f"r{n}@{k}"] == pytest.approx(expected)
    # over the whole list, r10@K is hits@K
    again = _evaluate(model_file, folder / "test.csv", metrics="hits@1,hits@2,hits@5")
    assert [again[f"hits@{k}"] for k in (1, 2, 5)] == [metrics[f"r10@{k}"] for k in (1, 2, 5)]


def test_ubuntu_csv_gives_the_tfidf_bench(tmp_path):
    home = tmp_path / "home"
    (home / "ubuntu").mkdir(parents=True)
    texts = ["mount usb", "no sound", "wifi down", "disk full", "update fails", "screen dark",
             "grub broken", "mouse stuck", "printer offline", "login loops"]  # fmt: skip
    answers = ["sudo mount usb", "restart pulseaudio", "restart network", "clean disk",
               "apt update again", "check screen cable", "reinstall grub", "replug the mouse",
               "add the printer", "check xauthority"]  # fmt: skip
    train = ["Context,Utterance,Label"]
    test = ["Context,Ground Truth Utterance," + ",".join(f"Distractor_{i}" for i in range(9))]
    for i, (text, answer) in enumerate(zip(texts, answers)):
        train.append(f"hi __eou__ __eot__ {text} __eou__ __eot__,{answer} __eou__,1")
        train.append(f"{text} __eou__ __eot__,{answers[i - 1]} __eou__,0")
        others = [a for a in answers if a != answer]
        test.append(f"{text} again __eou__ __eot__,{answer} __eou__," + ",".join(others))
    (home / "ubuntu" / "train.csv").write_text("\n".join(train) + "\n")
    (home / "ubuntu" / "test.csv").write_text("\n".join(test) + "\n")
    _check_ubuntu_tfidf_equals_the_bench(home, tmp_path)


@pytest.mark.slow
def test_ubuntu_sample_gives_the_tfidf_bench(tmp_path, data_home):
    _check_ubuntu_tfidf_equals_the_bench(data_home, tmp_path)


def test_the_readme_example_loads(tmp_path):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```json\n(.*?)```", readme, re.S)
    (tmp_path / "readme.jsonl").write_text(block, encoding="utf-8")
    data = load_dialogs(tmp_path / "readme.jsonl")
    assert data.y == ["for when?", "you are welcome"]
    assert data.X[0].history == (Turn("user", "hi"), Turn("bot", "hello, what can i do for you?"))


def test_train_threads_and_progress_reach_the_model(tmp_path, capsys, monkeypatch):
    from irdialog import cli
    from irdialog.persist import load

    monkeypatch.setattr(cli, "_progress", lambda args: not args.quiet)  # as on a terminal

    train = _shop_file(tmp_path / "train.jsonl")
    model_file = tmp_path / "se.npz"
    _run("train", "--train", train, "--model", "se", "--set", "epochs=2", "--threads", "2",
         "--save", model_file)  # fmt: skip
    assert load(model_file).get_params()["n_jobs"] == 2
    assert "2/2" in capsys.readouterr().err  # the model's own progress bar, over its epochs


# --------------------------------------------------------------------------- several answers, ties


def test_jsonl_responses_round_trip_and_errors(tmp_path):
    path = _jsonl(
        tmp_path / "d.jsonl",
        {"query": "q1", "response": "a", "responses": ["b", "a"], "candidates": ["x", "b"]},
        {"query": "q2", "responses": [" c "], "candidates": ["c", "y"]},
        {"query": "q3", "response": "d", "candidates": ["d", "z"]},
    )  # fmt: skip
    data = load_dialogs(path)
    # 'response' first, each right response once; the missing ones added before the others
    assert data.y == [["a", "b"], ["c"], "d"]
    assert data.candidate_lists == [["a", "x", "b"], ["c", "y"], ["d", "z"]]
    again = load_dialogs(write_dialogs(tmp_path / "again.jsonl", data.X, data.y,
                                       candidate_lists=data.candidate_lists))  # fmt: skip
    assert again.y == data.y and again.candidate_lists == data.candidate_lists
    for record, message in [
        ({"query": "q", "responses": []}, "line 1: expected 'responses' to be a non-empty list"),
        ({"query": "q", "responses": ["a", ""]}, "'responses' to hold non-empty str only"),
        ({"query": "q", "responses": "a"}, "'responses' to be a non-empty list of str"),
        ({"query": "q"}, "a 'response' (or 'responses'"),
        ({"query": "q", "responses": ["a"], "label": 1}, "'label' with a single 'response'"),
    ]:
        with pytest.raises(DataFormatError, match=re.escape(message)):
            load_dialogs(_jsonl(tmp_path / "bad.jsonl", record))


def _no_shared_word_file(path):
    """Ten candidates per query, none sharing a word with it: every score ties."""
    records = []
    for i in range(20):
        cands = [f"reply{i}x{j}" for j in range(10)]
        records.append({"query": f"unseen{i} words{i}", "response": cands[i % 10],
                        "candidates": cands})  # fmt: skip
    return _jsonl(path, *records)


def test_evaluate_counts_a_tie_at_its_expected_value(tmp_path, capsys):
    from irdialog.cli import main

    train = _shop_file(tmp_path / "train.jsonl")
    model_file = tmp_path / "m.npz"
    _run("train", "--train", train, "--model", "tfidf", "--save", model_file, "--quiet")
    test = _no_shared_word_file(tmp_path / "ties.jsonl")
    metrics = "hits@1,hits@5,mrr,map,ndcg@10,recall@5,r10@1,r2@1"
    assert main(["evaluate", str(model_file), str(test), "--metrics", metrics]) == 0
    out = capsys.readouterr().out
    assert "hits@1     10.00%" in out  # a 10-way tie holding the response: 1/10
    assert "hits@5     50.00%" in out
    values = _evaluate(model_file, test, metrics=metrics)
    mrr = sum(1 / r for r in range(1, 11)) / 10
    assert values["mrr"] == pytest.approx(mrr) and values["map"] == pytest.approx(mrr)
    assert values["recall@5"] == pytest.approx(0.5) and values["r10@1"] == pytest.approx(0.1)
    # r2@1: the first two candidates hold the response in examples 0, 1, 10 and 11 only
    assert values["r2@1"] == pytest.approx(0.5)
    assert main(["evaluate", str(model_file), str(test), "--metrics", "r2@1"]) == 0
    assert "r2@1: 16 examples with no right response among their candidates, left out" in (
        capsys.readouterr().out
    )
    miss = _evaluate(model_file, test, "--no-answer", "miss", metrics="r2@1")
    assert miss["r2@1"] == pytest.approx(0.5 * 4 / 20)


def test_evaluate_with_several_right_responses(tmp_path):
    train = _shop_file(tmp_path / "train.jsonl")
    model_file = tmp_path / "m.npz"
    _run("train", "--train", train, "--model", "tfidf", "--save", model_file, "--quiet")
    model = load(model_file)
    records = [
        {"query": "a table for two please", "responses": ["for when?", "you are welcome"]},
        {"query": "thanks a lot", "responses": ["goodbye", "you are welcome"]},
        {"query": "hi", "response": "hello, what can i do for you?"},
    ]
    test = _jsonl(tmp_path / "multi.jsonl", *records)
    data = load_dialogs(test)
    names = ["p@1", "hits@2", "mrr", "map", "recall@2", "ndcg@3"]
    got = _evaluate(model_file, test, metrics=",".join(names))
    # against the model's candidates: "goodbye" is not one, a miss in recall and MAP
    scores = model.decision_function(data.X)
    gold = [gold_indices([r] if isinstance(r, str) else r, model.candidates_) for r in data.y]
    assert gold[1].tolist()[0] == -1
    for name in names:
        assert got[name] == pytest.approx(get_ranking_metric(name)(gold, scores)), name
    # score is P@1 with predict's tie rule (the lower candidate index)
    assert model.score(data.X, data.y) == hits_at_k(gold, scores, ties="index")
    with_lists = _jsonl(
        tmp_path / "lists.jsonl",
        *[{**r, "candidates": ["goodbye", "for when?", "booked, see you tonight"]}
          for r in records],
    )  # fmt: skip
    got = _evaluate(model_file, with_lists, metrics=",".join(names))
    data = load_dialogs(with_lists)
    scores = model.rank_candidates(data.X, data.candidate_lists)
    gold = [[c.index(r) for r in ([y] if isinstance(y, str) else y)]
            for c, y in zip(data.candidate_lists, data.y)]  # fmt: skip
    for name in names:
        assert got[name] == pytest.approx(get_ranking_metric(name)(gold, scores)), name


def test_fit_names_its_one_response_limitation(tmp_path, capsys):
    from irdialog import TfidfRanker
    from irdialog.cli import load_model, main

    with pytest.raises(TypeError, match=r"y\[1\] holds several right responses.*one \(context, "):
        TfidfRanker().fit(["hi", "bye"], ["hello", ["ciao", "bye"]])
    # irdialog train learns once from each right response of an example (none: skipped)
    train = _jsonl(tmp_path / "multi.jsonl", {"query": "hi", "responses": ["hello", "hey"]},
                   {"query": "yo", "response": "sup"})  # fmt: skip
    assert main(["train", "--train", str(train), "--model", "tfidf", "--save",
                 str(tmp_path / "m.npz"), "--quiet"]) == 0  # fmt: skip
    assert list(load_model(tmp_path / "m.npz").candidates_) == ["hello", "hey", "sup"]
