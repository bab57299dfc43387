import json

import numpy as np
import pytest

from irdialog.bench import bench_dialog_babi, paper_table
from irdialog.cli import main


@pytest.fixture
def bundled_only(monkeypatch):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)


def test_bench_writes_json_on_bundled_task_1(tmp_path, bundled_only, capsys):
    out = tmp_path / "nn.json"
    assert (
        main(["bench", "dialog-babi", "--model", "nn", "--tasks", "1", "--output", str(out)]) == 0
    )
    result = json.loads(out.read_text())
    assert set(result) == {
        "suite", "model", "options", "seeds", "rows", "runs", "seconds", "wall_seconds",
        "provenance",
    }  # fmt: skip
    assert (result["suite"], result["model"]) == ("dialog-babi", "nn")
    assert [(r["task"], r["split"]) for r in result["rows"]] == [(1, "tst"), (1, "tst-OOV")]
    row = result["rows"][0]
    assert set(row) == {
        "task", "split", "per_response", "per_dialog", "n", "paper_per_response",
        "paper_per_dialog",
    }  # fmt: skip
    assert row["n"] == 5936 and 0.0 <= row["per_response"] <= 100.0
    assert row["paper_per_response"] == 55.1
    [chosen] = result["runs"][0]["chosen"]
    assert chosen["task"] == 1 and set(chosen["params"]) == {"similarity"}
    assert "dev_per_response" in chosen["selection"]
    prov = result["provenance"]
    assert prov["command"].startswith("irdialog bench dialog-babi --model nn")
    assert prov["seeds"] == [0] and prov["irdialog"]
    assert {"numpy", "scipy", "numba", "scikit-learn", "python"} <= set(prov["libraries"])
    assert [f["path"] for f in prov["data"]] == [
        f"dialog-babi/dialog-babi-task1-API-calls-{s}.txt.gz" for s in ("trn",)
    ] + ["dialog-babi/dialog-babi-candidates.txt.gz", "dialog-babi/dialog-babi-kb-all.txt.gz"] + [
        f"dialog-babi/dialog-babi-task1-API-calls-{s}.txt.gz" for s in ("dev", "tst", "tst-OOV")
    ]
    assert all(len(f["sha256"]) == 64 for f in prov["data"])
    assert "paper" in capsys.readouterr().out


@pytest.mark.parametrize(
    "output, message",
    [("{tmp}/missing/out.json", "does not exist"), ("{tmp}", "is a directory")],
)
def test_bad_output_fails_before_any_training(tmp_path, monkeypatch, capsys, output, message):
    from dataclasses import replace

    from irdialog.bench import SUITES

    def no_training(*args, **kwargs):
        raise AssertionError("the suite ran before --output was checked")

    monkeypatch.setitem(SUITES, "dialog-babi", replace(SUITES["dialog-babi"], run=no_training))
    # the parser's train command reads the registry too
    argv = ["bench", "dialog-babi", "--model", "nn", "--output", output.format(tmp=tmp_path)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_data_home_and_seeds_fail_at_once(tmp_path, capsys):
    assert main(["bench", "babi-qa", "--model", "ngram", "--data-home", str(tmp_path / "x")]) == 2
    assert "x does not exist" in capsys.readouterr().err
    assert main(["bench", "babi-qa", "--model", "ngram", "--data-home", __file__]) == 2
    assert "is not a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "babi-qa", "--model", "ngram", "--seeds", "0"])


def test_datasets_command_lists_bundled(bundled_only, capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "\ndialog-babi    dialog-babi/\n" in out


def test_missing_data_is_a_clear_error(tmp_path, capsys):
    code = main(
        ["bench", "dialog-babi", "--model", "tfidf", "--tasks", "2", "--data-home", str(tmp_path)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "irdialog: error" in err and "task 2" in err and str(tmp_path) in err


def test_unknown_model_and_task_rejected():
    with pytest.raises(SystemExit):
        main(["bench", "dialog-babi", "--model", "bert"])
    with pytest.raises(ValueError, match="unknown dialog-babi model"):
        bench_dialog_babi("bert")
    with pytest.raises(ValueError, match="tasks are 1-6"):
        bench_dialog_babi("nn", tasks=[7])


def test_paper_table_is_bundled():
    rows = paper_table("dialog_babi_table2.csv")
    assert len(rows) == 11 and rows[0]["tfidf"] == "5.6"


def test_babi_qa_bench_on_bundled_task_1(tmp_path, bundled_only):
    out = tmp_path / "ngram.json"
    assert (
        main(
            [
                "bench",
                "babi-qa",
                "--model",
                "ngram",
                "--tasks",
                "1",
                "--output",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert (result["suite"], result["model"]) == ("babi-qa", "ngram")
    assert result["options"] == {"tasks": [1], "lang": "en", "joint": False, "ties": "expected"}
    (row,) = result["rows"]
    assert row["task"] == 1 and row["n"] == 1000 and 0.0 <= row["accuracy"] <= 100.0


def test_set_and_heldout_tune_without_test(tmp_path, bundled_only, capsys):
    out = tmp_path / "tune.json"
    argv = ["bench", "dialog-babi", "--model", "nn", "--tasks", "1", "--heldout"]
    assert main([*argv, "--set", "similarity='jaccard'", "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["options"]["overrides"] == {"similarity": "jaccard"}
    assert [r["split"] for r in result["rows"]] == ["dev"]
    assert not any("tst" in f["path"] for f in result["provenance"]["data"])
    with pytest.raises(SystemExit):
        main([*argv, "--set", "similarity"])


def test_search_writes_a_preset_file(tmp_path, bundled_only, capsys):
    from irdialog.bench import read_presets

    out = tmp_path / "presets.json"
    argv = ["bench", "babi-qa", "--model", "ngram", "--tasks", "1", "--search"]
    assert main([*argv, "--presets-output", str(out)]) == 0
    doc = read_presets(out)
    assert doc["search"].startswith("irdialog bench babi-qa --model ngram")
    assert set(doc["presets"]) == {1} and "valid" in capsys.readouterr().out
    assert "last 20% of the stories" in json.loads(out.read_text())["notes"][0]


def test_search_note_names_the_models_own_held_out_share(tmp_path, bundled_only, monkeypatch):
    from dataclasses import replace

    from irdialog.bench import SUITES

    chosen = [{"task": 1, "params": {"learning_rate": 0.01}, "selection": {}}]
    suite = replace(SUITES["babi-qa"], search=lambda *args, **kwargs: chosen)
    monkeypatch.setitem(SUITES, "babi-qa", suite)
    out = tmp_path / "presets.json"
    argv = ["bench", "babi-qa", "--model", "lstm", "--tasks", "1", "--search", "--quiet"]
    assert main([*argv, "--presets-output", str(out)]) == 0
    note = json.loads(out.read_text())["notes"][0]
    assert "last 10% of the stories" in note and "first 90%" in note  # the LSTM's spec


def test_a_search_records_the_code_it_started_with(tmp_path, bundled_only, monkeypatch):
    """A commit made while a search runs is not credited with its choices."""
    from dataclasses import replace

    import irdialog.bench._presets as presets
    from irdialog.bench import SUITES

    state = {"commit": "a" * 40, "dirty": False}

    def search(*args, **kwargs):  # the checkout moves on while the search runs
        state.update(commit="b" * 40, dirty=True)
        return [{"task": 1, "params": {"learning_rate": 0.01}, "selection": {}}]

    monkeypatch.setattr(presets, "git_commit", lambda: dict(state))
    monkeypatch.setitem(SUITES, "babi-qa", replace(SUITES["babi-qa"], search=search))
    out = tmp_path / "presets.json"
    argv = ["bench", "babi-qa", "--model", "lstm", "--tasks", "1", "--search", "--quiet"]
    assert main([*argv, "--presets-output", str(out)]) == 0
    assert json.loads(out.read_text())["protocol"]["searched_at"] == "aaaaaaa"


def test_dialog_babi_search_writes_a_preset_the_bench_reads(tmp_path, bundled_only, monkeypatch):
    import irdialog.bench._dialog_babi as suite
    from irdialog.bench import read_presets

    # a tiny search: one grid point, a few epochs (the real one runs up to 300)
    monkeypatch.setattr(suite, "MAX_EPOCHS", {True: 3, False: 3})
    monkeypatch.setattr(suite, "PATIENCE", 1)
    out = tmp_path / "se.json"
    argv = ["bench", "dialog-babi", "--model", "se", "--tasks", "1", "--search", "--points", "1"]
    assert main([*argv, "--presets-output", str(out), "--quiet"]) == 0
    doc = read_presets(out)
    assert doc["search"].startswith("irdialog bench dialog-babi --model se --tasks 1 --search")
    assert doc["notes"] == suite.SE_SEARCH_NOTES
    assert set(doc["protocol"]) == {"searched_at", "test_results_before", "after_test"}
    [entry] = json.loads(out.read_text())["presets"]
    point = suite.se_search_grid("se")(1, {})[1]
    assert entry["params"] == {**point, "epochs": entry["selection"]["grid"][0]["epoch"]}
    assert 1 <= entry["params"]["epochs"] <= 3
    assert (
        entry["selection"]["dev_per_response"] == entry["selection"]["grid"][0]["dev_per_response"]
    )
    # the bench fits the preset as written: the searched model's dev score, bit for bit
    monkeypatch.setattr(suite.Selection, "presets", lambda self, name: doc["presets"])
    _, chosen = suite.train_dialog_babi("se", 1)
    assert chosen["selection"]["dev_per_response"] == entry["selection"]["dev_per_response"]
    # MemN2N's presets were tuned by hand on dev: no grid to search
    assert main(["bench", "dialog-babi", "--model", "memn2n", "--search"]) == 2


@pytest.mark.parametrize("patience", [None, 6])
def test_dialog_babi_search_chooses_epochs_on_the_mean_of_the_seeds(
    tmp_path, bundled_only, monkeypatch, patience
):
    import irdialog.bench._dialog_babi as suite
    from irdialog.bench import read_presets

    # every seed runs all 6 epochs (the suite's patience, or --patience over a shorter
    # default); at this point seed 0 peaks at epoch 5, the mean at 6
    monkeypatch.setattr(suite, "MAX_EPOCHS", {True: 6, False: 6})
    monkeypatch.setattr(suite, "PATIENCE", 6 if patience is None else 1)
    out = tmp_path / "se.json"
    argv = ["bench", "dialog-babi", "--model", "se", "--tasks", "1", "--search", "--points", "3"]
    if patience is not None:
        argv += ["--patience", str(patience)]
    assert main([*argv, "--seeds", "3", "--presets-output", str(out), "--quiet"]) == 0
    assert ("--patience 6" in json.loads(out.read_text())["search"]) == (patience is not None)
    doc = read_presets(out)
    [entry] = json.loads(out.read_text())["presets"]
    point = suite.se_search_grid("se")(1, {})[3]
    train = suite.load_dialog_babi(1, "trn")
    dev = suite.load_dialog_babi(1, "dev")
    spec = suite.DIALOG_BABI_MODELS["se"]
    curves = [suite._dev_curve(spec, point, train, dev, seed, patience=6) for seed in range(3)]
    assert all(len(curve) == 6 for curve in curves)
    epochs = int(np.argmax(np.mean(curves, axis=0))) + 1
    assert epochs != int(np.argmax(curves[0])) + 1  # the mean decides, not seed 0
    assert entry["params"] == {**point, "epochs": epochs}
    by_seed = entry["selection"]["dev_per_response_by_seed"]
    assert by_seed == [round(c[epochs - 1], 2) for c in curves]
    assert entry["selection"]["dev_per_response"] == round(float(np.mean(by_seed)), 2)
    # the bench at seed 2 fits the preset as written: that seed's dev score, bit for bit
    monkeypatch.setattr(suite.Selection, "presets", lambda self, name: doc["presets"])
    _, chosen = suite.train_dialog_babi("se", 1, seed=2)
    score = chosen["selection"]["dev_per_response"]
    assert score == pytest.approx(curves[2][epochs - 1], abs=0.005)


def test_qa_search_averages_the_seeds(monkeypatch):
    from sklearn.base import BaseEstimator

    import irdialog.bench._babi_qa as suite

    class SeedScored(BaseEstimator):  # validation accuracy = (c + random_state) / 10
        def __init__(self, c=0, random_state=None):
            self.c, self.random_state = c, random_state

        def fit(self, X, y):
            return self

        def score(self, X, y):
            return (self.c + self.random_state) / 10

    spec = suite.ModelSpec(None, SeedScored, suite._preset("x", {"c": [0, 1]}))
    monkeypatch.setitem(suite.BABI_QA_MODELS, "seed-scored", spec)
    [entry] = suite.search_babi_qa("seed-scored", tasks=[1], progress=False, seeds=3)
    # seeds 0, 1, 2: c=0 scores 0, 10, 20 (mean 10), c=1 scores 10, 20, 30 (mean 20)
    assert [p["valid_accuracy"] for p in entry["selection"]["grid"]] == [10.0, 20.0]
    assert entry["params"] == {"c": 1} and entry["selection"]["valid_accuracy"] == 20.0


# --------------------------------------------------------------------------- the command line


def test_bare_irdialog_prints_help_and_trains_nothing(monkeypatch, capsys):
    import irdialog.cli as cli

    monkeypatch.setattr(cli, "bench_dialog_babi", _no_training)
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: irdialog")
    for command in ("run", "bench", "train", "evaluate", "rank", "chat", "datasets"):
        assert f"\n    {command} " in out
    assert "``" not in out


def _no_training(*args, **kwargs):
    raise AssertionError("a model was trained")


def _fake_run(model, **kwargs):
    return {
        "suite": "dialog-babi",
        "model": model,
        "seconds": 0.0,
        "chosen": [{"task": 1, "params": {}, "selection": {}}],
        "rows": [{"task": 1, "split": "tst", "n": 1, "per_response": 1.0, "per_dialog": 0.0,
                  "paper_per_response": 1.0, "paper_per_dialog": 0.0}],
    }  # fmt: skip


def test_run_quiet_prints_no_table(monkeypatch, capsys):
    import irdialog.cli as cli

    monkeypatch.setattr(cli, "bench_dialog_babi", _fake_run)
    assert main(["run", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["run"]) == 0
    assert "paper" in capsys.readouterr().out


def test_run_prints_one_short_table_of_the_headline_models(monkeypatch, capsys):
    import irdialog.cli as cli

    trained = []

    def fake_run(model, **kwargs):
        trained.append(model)
        run = _fake_run(model, **kwargs)
        run["seconds"] = 2.25
        if model == "bm25":  # beyond the paper
            run["rows"][0]["paper_per_response"] = None
        return run

    monkeypatch.setattr(cli, "bench_dialog_babi", fake_run)
    monkeypatch.setattr(cli, "compile_ahead_jobs", lambda *a, **k: {})
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert trained == ["rule-based", "tfidf", "bm25", "se", "memn2n-type"]
    lines = out.splitlines()
    assert len(lines) <= 30
    header = lines.index("model          ours   paper  seconds")
    assert lines[header + 1 : header + 6] == [
        "rule-based      1.0     1.0      2.2",
        "tfidf           1.0     1.0      2.2",
        "bm25            1.0       -      2.2",
        "se              1.0     1.0      2.2",
        "memn2n-type     1.0     1.0      2.2",
    ]
    assert "5 models in 11 s" in out

    trained.clear()
    assert main(["run", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert trained == list(cli.SUITES["dialog-babi"].models)
    header = next(i for i, line in enumerate(lines) if line.startswith("model "))
    shown = [line.split()[0] for line in lines[header + 1 : header + 1 + len(trained)]]
    assert shown == trained and len(lines) <= 30


@pytest.mark.parametrize("suite", ["dialog-babi", "babi-qa", "movie-dialog", "ubuntu"])
def test_bench_help_documents_model_and_defaults(suite, capsys):
    with pytest.raises(SystemExit):
        main(["bench", suite, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--model MODEL the model" in out and "(default: 1)" in out  # --seeds
    assert "``" not in out
    if suite in ("dialog-babi", "babi-qa"):
        assert "the tasks to run" in out and "(default: [1, 2, 3" in out
    with pytest.raises(SystemExit):  # --model is required in every suite
        main(["bench", suite, "--task", "1"] if suite == "movie-dialog" else ["bench", suite])
    assert "--model" in capsys.readouterr().err


def test_datasets_lists_tasks_and_splits(bundled_only, capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "data home: the bundled samples" in out
    assert "  trn        task 1\n  dev        task 1\n  tst        task 1\n" in out
    assert "en: train      task 1" in out and "movie-dialog   not found" in out


def test_datasets_lists_the_format_corpora_with_source_and_licence(tmp_path, capsys):
    for name in (
        "douban/train.txt",
        "DoubanConversaionCorpus/test.txt",
        "ubuntu_data/valid.txt.gz",
        "dstc7/ubuntu_train_subtask_1.json",
        "dstc7/advising.scenario-1.dev.json",
        "dstc7/ubuntu_dev_subtask_1.json",
        "dstc7/ubuntu_responses_subtask_1.tsv",
        "beir/scifact/qrels/test.tsv",
        "beir/nfcorpus/qrels/test.tsv",
        "beir/scifact/corpus.jsonl",
        "msmarco-passage/qrels.dev.small.tsv",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    assert main(["datasets", "--data-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # a family's first folder that holds data; the other folder names are read too
    assert "\ndouban         douban/\n  train\n  get: Wu et al. (2017), https://" in out
    assert "\nubuntu-v1      ubuntu_data/\n  valid\n" in out
    assert "\necommerce      not found\n  get: Zhang et al. (2018)" in out
    assert (
        "\ndstc7          dstc7/\n  train      ubuntu\n  dev        advising, ubuntu\n"
        "  other: ubuntu_responses_subtask_1.tsv\n"
    ) in out
    assert "\nbeir           beir/\n  test       nfcorpus, scifact\n" in out
    assert "\nmsmarco        msmarco-passage/\n  dev.small\n" in out
    assert "  licence: MS MARCO terms and conditions: non-commercial research only\n" in out
    assert out.count("  get: ") == out.count("  licence: ") == 6  # the format corpora only


def test_datasets_warns_on_a_missing_data_home(tmp_path, capsys):
    assert main(["datasets", "--data-home", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err
    assert err == f"irdialog: warning: --data-home {tmp_path / 'nope'} does not exist\n"
    assert main(["datasets", "--data-home", str(tmp_path)]) == 1  # exists, holds nothing
    assert "no data set found" in capsys.readouterr().err


def test_errors_name_no_internal_path(tmp_path, capsys):
    assert main(["bench", "dialog-babi", "--model", "nn", "--data-home", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irdialog: error: ") and err.count("\n") == 1
    assert "shared" not in err and "Traceback" not in err


def test_compile_notice_once_and_only_for_irdialog_kernels():
    import io

    import numba
    from numba.core import event

    from irdialog._compile_notice import MESSAGE, CompileNotice
    from irdialog.embed._kernels import _se_dot

    stream = io.StringIO()
    notice = CompileNotice(stream)
    event.register("numba:compile", notice)
    try:
        numba.njit(lambda a: a + 1)(1)  # not irdialog's
        assert stream.getvalue() == ""
        a = np.ones(3, dtype=np.float32)
        numba.njit(_se_dot.py_func)(a, a)  # a fresh dispatcher: a real compilation
        numba.njit(_se_dot.py_func)(a, a)
    finally:
        event.unregister("numba:compile", notice)
    assert stream.getvalue() == MESSAGE + "\n"


# --------------------------------------------------------------------------- train and chat

# A scripted dialog bAbI task 1 conversation and what the bundled task 1 model answers.
SCRIPT = [
    "hi",
    "may i have a table with italian food",
    "",  # <SILENCE>
    "in rome",
    "for two please",
    "i love cheap price range",
    "",
]
ANSWERS = [
    "hello what can i help you with today",
    "i'm on it",
    "where should it be",
    "how many people would be in your party",
    "which price range are looking for",
    "ok let me look into some options for you",
    "api_call italian rome two cheap",
]


@pytest.fixture(scope="module")
def memn2n_file(tmp_path_factory):
    """The bench's MemN2N of bundled task 1 (its preset: 10 epochs, a few seconds)."""
    path = tmp_path_factory.mktemp("models") / "memn2n.npz"
    with pytest.MonkeyPatch.context() as m:
        m.delenv("IRDIALOG_DATA", raising=False)
        argv = ["train", "--task", "1", "--model", "memn2n", "--save", str(path), "--quiet"]
        assert main(argv) == 0
    return path


def _chat(monkeypatch, capsys, argv, lines):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in lines)))
    assert main(["chat", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_train_saves_the_bench_model(memn2n_file, bundled_only):
    from irdialog.bench import load_presets, train_dialog_babi
    from irdialog.persist import load

    model = load(memn2n_file)
    assert model.get_params()["hops"] == load_presets("dialog-babi", "memn2n")[1].params["hops"]
    same, chosen = train_dialog_babi("memn2n", 1)
    assert chosen["selection"]["dev_per_response"] > 99.0
    X = ["hi", "in rome"]
    np.testing.assert_array_equal(model.decision_function(X), same.decision_function(X))


def test_scripted_chat_on_task_1(memn2n_file, monkeypatch, capsys):
    out = _chat(monkeypatch, capsys, [str(memn2n_file), "--no-memory"], SCRIPT)
    assert out == [f"bot: {a}" for a in ANSWERS]


def test_chat_top_k_memory_and_commands(memn2n_file, monkeypatch, capsys):
    lines = [*SCRIPT[:2], "/reset", "/kb resto_1 R_cuisine italian", "/nope", SCRIPT[0], "/quit"]
    out = _chat(monkeypatch, capsys, [str(memn2n_file), "--top", "3"], lines)
    assert out[0] == f"bot: {ANSWERS[0]}"
    assert [line[:5] for line in out[1:3]] == ["  2. ", "  3. "]
    assert out[3] == f"bot: {ANSWERS[1]}"
    # the second turn's memory: the conversation so far (the MemN2N preset has one hop)
    assert out[6].startswith("  hop 1 attends ") and out[6].endswith(f"bot: {ANSWERS[0]}")
    assert out[7] == "(new dialog)"
    assert out[8].startswith("unknown command /nope")
    assert out[9] == f"bot: {ANSWERS[0]}"
    assert "hop 1 attends" in out[12] and out[12].endswith("kb: resto_1 R_cuisine italian")
    assert len(out) == 13  # nothing after /quit


def test_train_joblib_and_chat(tmp_path, bundled_only, monkeypatch, capsys):
    path = tmp_path / "tfidf.joblib"
    assert main(["train", "--task", "1", "--model", "tfidf", "--save", str(path)]) == 0
    out = capsys.readouterr().out
    assert '{"use_history": false}' in out and f"saved to {path}" in out
    assert _chat(monkeypatch, capsys, [str(path)], ["in rome", "/quit"]) == [
        "bot: api_call french rome two cheap"
    ]


def test_bench_and_train_a_model_beyond_the_paper(tmp_path, bundled_only, capsys):
    out = tmp_path / "bm25.json"
    argv = ["bench", "dialog-babi", "--model", "bm25", "--tasks", "1", "--output", str(out)]
    assert main(argv) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["paper_per_response"] for r in rows] == [None, None]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split()[-3:] == ["(ours)", "paper", "diff"]
    assert [len(line.split()) for line in printed[1:3]] == [5, 5]  # no paper, no diff
    path = tmp_path / "bm25.joblib"
    assert main(["train", "--task", "1", "--model", "bm25", "--save", str(path)]) == 0
    assert f"saved to {path}" in capsys.readouterr().out


def test_train_babi_qa(tmp_path, bundled_only, capsys):
    from irdialog.datasets import load_babi_qa
    from irdialog.persist import load

    path = tmp_path / "ngram.npz"
    argv = ["train", "--suite", "babi-qa", "--task", "1", "--model", "ngram", "--save", str(path)]
    assert main(argv) == 0
    test = load_babi_qa(1, "test")
    assert load(path).score(test.X, test.y) == pytest.approx(0.6)  # the bench's 60.0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--task", "1", "--model", "nn", "--save", "{tmp}/m.txt"], "ending in .npz"),
        (["train", "--task", "7", "--model", "nn", "--save", "{tmp}/m.npz"], "tasks are 1-6"),
        (["train", "--task", "1", "--model", "x", "--save", "{tmp}/m.npz"], "unknown dialog-"),
        (["train", "--task", "1", "--model", "nn", "--save", "{tmp}/no/m.npz"], "does not exist"),
        (["chat", "{tmp}/missing.npz"], "no such model file"),
        (["chat", "{tmp}/bad.npz"], "not an irdialog model file"),
        (["chat", "{tmp}/bad.joblib"], "could not be loaded with joblib"),
        (["rank", "{tmp}/bad.npz", "{tmp}/q.txt", "--threads", "2"], "--threads searches an"),
        (["rank", "{tmp}/bad.npz", "{tmp}/q.txt", "--scheduler", "tcp://x:1"], "an index dir"),
    ],
)
def test_train_and_chat_errors(tmp_path, monkeypatch, capsys, argv, message):
    import irdialog.bench._runner as runner

    monkeypatch.setattr(runner, "fit_task", _no_training)
    (tmp_path / "bad.npz").write_text("x")
    (tmp_path / "bad.joblib").write_text("x")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irdialog: error: ") and message in err


@pytest.mark.slow
def test_compile_notice_on_a_first_run_only(tmp_path):
    """End to end, in fresh processes with an empty numba cache: the first run says that it
    compiles (about a minute), the second loads the kernels and says nothing."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_NUM_THREADS": "1"}
    env.pop("IRDIALOG_DATA", None)
    argv = [sys.executable, "-m", "irdialog", "train", "--task", "1", "--model", "memn2n"]
    argv += ["--save", str(tmp_path / "m.npz")]
    first, second = (subprocess.run(argv, env=env, capture_output=True, text=True) for _ in "12")
    assert first.returncode == second.returncode == 0
    assert first.stderr.count("irdialog: compiling numba kernels") == 1
    assert second.stderr == ""
