"""A project's own dialogs: irdialog.datasets.load_dialogs / write_dialogs and the CLI's
train --train, evaluate and rank."""

import gzip
import json

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
