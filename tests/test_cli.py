import json

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
    from irdialog.bench import SUITES, Suite

    def no_training(*args, **kwargs):
        raise AssertionError("the suite ran before --output was checked")

    monkeypatch.setitem(SUITES, "dialog-babi", Suite(no_training, SUITES["dialog-babi"].models))
    argv = ["bench", "dialog-babi", "--model", "nn", "--output", output.format(tmp=tmp_path)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_data_home_and_seeds_fail_at_once(tmp_path, capsys):
    assert main(["bench", "babi-qa", "--model", "ngram", "--data-home", str(tmp_path / "x")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "babi-qa", "--model", "ngram", "--seeds", "0"])


def test_datasets_command_lists_bundled(bundled_only, capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "dialog-babi" in out and "found at" in out


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
    assert result["options"] == {"tasks": [1], "lang": "en", "joint": False}
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
