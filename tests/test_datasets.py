"""Tests of irdialog.datasets: bundled samples, tiny files in tmp_path, hypothesis round trips,
and (marked slow) every file of the shared real data."""

from __future__ import annotations

import doctest
import gzip
import pickle
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from irdialog.base import Context, Turn
from irdialog.datasets import (
    DataFormatError,
    _babi_qa,
    _base,
    _dialog_babi,
    _movie_dialog,
    _movielens,
    _ubuntu,
    get_data_home,
    iter_ubuntu,
    list_datasets,
    load_babi_qa,
    load_dialog_babi,
    load_movie_dialog,
    load_movie_entities,
    load_movie_kb,
    load_movielens_ratings,
    load_reddit_candidates,
    load_ubuntu,
)

BUNDLED = _base.bundled_data_dir()


@pytest.fixture(autouse=True)
def _no_env_data_home(monkeypatch):
    # Tests choose their data home explicitly; a developer's IRDIALOG_DATA must not leak in.
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)


def write(home: Path, rel: str, content, *, gz: bool = False) -> Path:
    """Write text (UTF-8) or bytes to home/rel (gzip-compressed to rel.gz when gz)."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    path = home / (rel + (".gz" if gz else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


DIALOG_SIDE_FILES = {
    "dialog-babi/dialog-babi-candidates.txt": "1 hello\n1 api_call italian paris\n",
    "dialog-babi/dialog-babi-kb-all.txt": (
        "1 resto_a R_cuisine\titalian\n1 resto_a R_phone\tresto_a_phone\n"
    ),
}
T1 = "dialog-babi/dialog-babi-task1-API-calls-trn.txt"
QA1 = "babi-qa/en/qa1_single-supporting-fact_train.txt"


def dialog_home(home: Path, text, *, rel: str = T1, gz: bool = False) -> Path:
    for side, content in DIALOG_SIDE_FILES.items():
        write(home, side, content)
    write(home, rel, text, gz=gz)
    return home


# --------------------------------------------------------------------------- bundled data


@pytest.mark.parametrize(
    "split, n_samples", [("trn", 6024), ("dev", 6015), ("tst", 5936), ("tst-OOV", 6020)]
)
def test_bundled_dialog_babi_task1(split, n_samples):
    data = load_dialog_babi(1, split)
    assert Path(data.filename).parent == BUNDLED / "dialog-babi"
    assert data.filename.endswith(".txt.gz")
    assert len(data.X) == len(data.y) == len(data.groups) == n_samples
    assert len(data.candidates) == 4212
    assert set(data.y) <= set(data.candidates)
    np.testing.assert_array_equal(np.unique(data.groups), np.arange(1000))
    assert np.all(np.diff(data.groups) >= 0)
    assert data.kb["korean"] == "R_cuisine"
    assert data.kb["resto_seoul_cheap_korean_1stars"] == "R_name"
    assert data.kb["resto_seoul_cheap_korean_1stars_phone"] == "R_phone"
    for x in data.X:
        assert isinstance(x, Context) and x.query
        assert all(t.speaker in ("user", "bot") for t in x.history)


def test_bundled_dialog_babi_first_dialog():
    data = load_dialog_babi(1, "trn")
    assert data.X[0] == Context(history=(), query="hi")
    assert data.y[:3] == [
        "hello what can i help you with today",
        "i'm on it",
        "any preference on a type of cuisine",
    ]
    x = data.X[2]
    assert x.query == "<SILENCE>"
    assert [(t.speaker, t.text) for t in x.history] == [
        ("user", "hi"),
        ("bot", "hello what can i help you with today"),
        ("user", "can you book a table"),
        ("bot", "i'm on it"),
    ]
    # Turns are shared between the samples of a dialog, not copied.
    assert data.X[7].history[0] is data.X[1].history[0]
    assert data.y[7] == "api_call italian paris two cheap" and data.groups[8] == 1
    assert len(data.X[8].history) == 0


@pytest.mark.parametrize("split", ["train", "test"])
def test_bundled_babi_qa_task1(split):
    data = load_babi_qa(1, split)
    assert len(data.X) == len(data.y) == len(data.supporting) == 1000
    np.testing.assert_array_equal(np.unique(data.groups), np.arange(200))
    for x, answer, facts in zip(data.X, data.y, data.supporting, strict=True):
        assert all(t.speaker == "kb" for t in x.history)
        assert not any("?" in t.text for t in x.history)  # questions are not memories
        (fact,) = facts
        # Task 1: the supporting fact names the answer's location.
        assert answer in x.history[fact].text


def test_bundled_babi_qa_first_story():
    data = load_babi_qa(1, "train")
    assert data.X[0].query == "Where is Mary?"
    assert data.y[0] == "bathroom" and data.supporting[0] == (0,)
    assert [t.text for t in data.X[1].history] == [
        "Mary moved to the bathroom.",
        "John went to the hallway.",
        "Daniel went back to the hallway.",
        "Sandra moved to the garden.",
    ]
    assert data.supporting[1] == (2,)  # line id 4 is the third statement


def test_bundled_attribution_files_present():
    for family in ("dialog-babi", "babi-qa"):
        assert "Creative Commons" in (BUNDLED / family / "LICENSE.txt").read_text()
        attribution = (BUNDLED / family / "ATTRIBUTION.txt").read_text()
        assert "CC BY 3.0" in attribution and "Weston" in attribution


# --------------------------------------------------------------------------- data home


def test_data_home_resolution_order(tmp_path, monkeypatch):
    assert get_data_home() == BUNDLED
    monkeypatch.setenv("IRDIALOG_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    assert get_data_home(str(tmp_path / "arg")) == tmp_path / "arg"
    monkeypatch.setenv("IRDIALOG_DATA", "")
    assert get_data_home() == BUNDLED
    with pytest.raises(TypeError, match="data_home"):
        get_data_home(3)


def test_env_var_is_used_by_loaders(tmp_path, monkeypatch):
    dialog_home(tmp_path, "1 hi\thello\n")
    monkeypatch.setenv("IRDIALOG_DATA", str(tmp_path))
    data = load_dialog_babi(1, "trn")
    assert data.y == ["hello"] and data.filename == str(tmp_path / T1)


def test_explicit_data_home_does_not_fall_back_to_bundled(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_dialog_babi(1, "trn", data_home=tmp_path)
    msg = str(info.value)
    assert "dialog bAbI task 1, split 'trn'" in msg
    assert str(tmp_path / T1) in msg and str(tmp_path / T1) + ".gz" in msg
    assert "data_home argument" in msg and "does not exist" not in msg


def test_missing_data_home_directory_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_babi_qa(3, "test", data_home=tmp_path / "nowhere")


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda h: load_dialog_babi(2, "dev", data_home=h), ["task 2", "'dev'", "task2-API"]),
        (lambda h: load_babi_qa(7, "test", data_home=h), ["task 7", "'test'", "qa7_*_test"]),
        (lambda h: load_movie_dialog(1, "train", data_home=h), ["task 1", "task1_qa_train"]),
        (lambda h: load_ubuntu("valid", data_home=h), ["ubuntu/valid.csv", "ubuntu-sample"]),
        (lambda h: load_movielens_ratings(h), ["MovieLens", "ratings.csv"]),
        (lambda h: load_movie_kb(h), ["movie_kb.txt", "substitute_movie_kb_wikimovies"]),
        (lambda h: load_movie_entities(h), ["entities.txt"]),
        (lambda h: load_reddit_candidates("test", h), ["Reddit", "cand-test"]),
    ],
)
def test_missing_file_names_what_and_where(tmp_path, call, words):
    with pytest.raises(FileNotFoundError) as info:
        call(tmp_path)
    for word in [*words, str(tmp_path), "IRDIALOG_DATA"]:
        assert word in str(info.value)


def test_missing_candidate_file_is_reported(tmp_path):
    write(tmp_path, T1, "1 hi\thello\n")
    with pytest.raises(FileNotFoundError, match="candidate file"):
        load_dialog_babi(1, "trn", data_home=tmp_path)


def test_list_datasets(tmp_path):
    bundled = list_datasets()
    assert bundled["dialog-babi"].found and bundled["babi-qa"].found
    assert "en/qa1_single-supporting-fact_train.txt.gz" in bundled["babi-qa"].files
    assert not bundled["ubuntu"].found and bundled["ubuntu"].files == []
    write(tmp_path, "ubuntu-sample/train.csv", "Context,Utterance,Label\n")
    write(tmp_path, "movielens-small/ratings.csv", "userId,movieId,rating,timestamp\n")
    found = list_datasets(tmp_path)
    assert set(found) == {
        "dialog-babi", "babi-qa", "movie-dialog", "ubuntu", "movielens",
        "douban", "ecommerce", "ubuntu-v1", "dstc7", "beir", "msmarco",
    }  # fmt: skip
    assert found["ubuntu"].found and found["ubuntu"].path == str(tmp_path / "ubuntu-sample")
    assert found["ubuntu"].files == ["train.csv"]
    assert found["movielens"].files == ["ratings.csv"]
    assert not found["dialog-babi"].found
    assert found["dialog-babi"].path == str(tmp_path / "dialog-babi")


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: load_dialog_babi(0, "trn"), ValueError, "tasks 1..6"),
        (lambda: load_dialog_babi(7, "trn"), ValueError, "tasks 1..6"),
        (lambda: load_dialog_babi("1", "trn"), TypeError, "task must be an int"),
        (lambda: load_dialog_babi(True, "trn"), TypeError, "task must be an int"),
        (lambda: load_dialog_babi(1.0, "trn"), TypeError, "task must be an int"),
        (lambda: load_dialog_babi(1, "train"), ValueError, "split must be one of"),
        (lambda: load_dialog_babi(1, None), TypeError, "split must be a str"),
        (lambda: load_dialog_babi(6, "tst-OOV"), ValueError, "task 6 .* no 'tst-OOV'"),
        (lambda: load_babi_qa(21, "train"), ValueError, "tasks 1..20"),
        (lambda: load_babi_qa(1, "trn"), ValueError, "split must be one of"),
        (lambda: load_babi_qa(1, "train", lang="../en"), ValueError, "lang"),
        (lambda: load_babi_qa(1, "train", lang=None), TypeError, "lang"),
        (lambda: load_movie_dialog(4, "dev"), ValueError, "tasks 1..3"),
        (lambda: load_movie_dialog(1, "tst"), ValueError, "split must be one of"),
        (lambda: load_reddit_candidates("dev"), ValueError, "split must be one of"),
        (lambda: load_ubuntu("dev"), ValueError, "split must be one of"),
        (lambda: iter_ubuntu("dev"), ValueError, "split must be one of"),
        (lambda: iter_ubuntu("train", chunksize=0), ValueError, "chunksize"),
        (lambda: iter_ubuntu("train", chunksize=2.5), TypeError, "chunksize"),
    ],
)
def test_bad_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_numpy_integer_task_is_accepted():
    assert len(load_babi_qa(np.int64(1), "test").X) == 1000


# --------------------------------------------------------------------------- dialog files

DIALOGS = (
    "1 hi\thello\n"
    "2 book a table\tapi_call italian paris\n"
    "3 resto_a R_phone resto_a_phone\n"
    "4 api_call no result\n"
    "5 <SILENCE>\twhat do you think of this option: resto_a\n"
    "\n"
    "1 hello\thi there \n"
    "1 again\t  you are welcome\n"  # id reset without a blank line: a new dialog
    "2  \tsorry?\n"  # empty user side (as in DSTC2)
    "3 only a fact\n"
)


def test_dialog_file_structure(tmp_path):
    data = load_dialog_babi(1, "trn", data_home=dialog_home(tmp_path, DIALOGS))
    assert data.y == [
        "hello",
        "api_call italian paris",
        "what do you think of this option: resto_a",
        "hi there",
        "you are welcome",
        "sorry?",
    ]
    assert [x.query for x in data.X] == ["hi", "book a table", "<SILENCE>", "hello", "again", ""]
    assert data.groups.tolist() == [0, 0, 0, 1, 2, 2]
    assert data.groups.dtype == np.int64
    assert [(t.speaker, t.text) for t in data.X[2].history] == [
        ("user", "hi"),
        ("bot", "hello"),
        ("user", "book a table"),
        ("bot", "api_call italian paris"),
        ("kb", "resto_a R_phone resto_a_phone"),
        ("kb", "api_call no result"),
    ]
    assert data.X[3].history == () and data.X[4].history == ()
    assert data.X[5].history == (Turn("user", "again"), Turn("bot", "you are welcome"))
    assert data.candidates == ["hello", "api_call italian paris"]
    assert data.kb == {"resto_a": "R_name", "italian": "R_cuisine", "resto_a_phone": "R_phone"}


def test_dialog_task6_kb_and_candidates(tmp_path):
    write(tmp_path, "dialog-babi/dialog-babi-task6-dstc2-tst.txt", "1 <SILENCE>\tHello\n")
    write(
        tmp_path,
        "dialog-babi/dialog-babi-task6-dstc2-candidates.txt",
        "1 Hello\n1  you are welcome",  # no final newline, a double space
    )
    write(
        tmp_path,
        "dialog-babi/dialog-babi-task6-dstc2-kb.txt",
        "1 prezzo R_cuisine italian\n1 prezzo R_post_code prezzo_post_code\n",
    )
    data = load_dialog_babi(6, "tst", data_home=tmp_path)
    assert data.candidates == ["Hello", "you are welcome"]
    assert data.kb == {
        "prezzo": "R_name",
        "italian": "R_cuisine",
        "prezzo_post_code": "R_post_code",
    }


def test_dialog_crlf_and_gzip_give_the_same_data(tmp_path):
    plain = load_dialog_babi(1, "trn", data_home=dialog_home(tmp_path / "a", DIALOGS))
    crlf = load_dialog_babi(
        1, "trn", data_home=dialog_home(tmp_path / "b", DIALOGS.replace("\n", "\r\n"))
    )
    gz = load_dialog_babi(1, "trn", data_home=dialog_home(tmp_path / "c", DIALOGS, gz=True))
    for other in (crlf, gz):
        assert other.X == plain.X and other.y == plain.y
        np.testing.assert_array_equal(other.groups, plain.groups)
    assert gz.filename.endswith(".txt.gz")


def test_plain_file_wins_over_gzip(tmp_path):
    dialog_home(tmp_path, "1 a\tplain\n")
    write(tmp_path, T1, "1 a\tcompressed\n", gz=True)
    assert load_dialog_babi(1, "trn", data_home=tmp_path).y == ["plain"]


@pytest.mark.parametrize(
    "text, lineno, expected",
    [
        ("hello\tbot\n", 1, "line id"),
        ("1 hi\tbot\nx2 hi\tbot\n", 2, "line id"),
        ("1 hi\tbot\n2.0 hi\tbot\n", 2, "line id"),
        ("0 hi\tbot\n", 1, "positive integer"),
        ("\u0661 hi\tbot\n", 1, "line id"),  # an Arabic-Indic digit is not an id
        (" 1 hi\tbot\n", 1, "line id"),
        ("1 hi\tbot\n2\n", 2, "text after the line id"),
        ("1 hi\tbot\n2   \n", 2, "text after the line id"),
        ("1 hi\tbot\tmore\n", 1, "at most one tab"),
        ("1 hi\tbot\n2 hi\t \n", 2, "a bot utterance after the tab"),
        ("1 hi\tbot\n3 hi\tbot\n", 2, "line id 2"),
        ("1 hi\tbot\n\n2 hi\tbot\n", 3, "line id 1 at the start"),
        ("1 hi\tbot\n2 ok\tfine\n2 hi\tbot\n", 3, "line id 3"),
    ],
)
def test_malformed_dialog_lines(tmp_path, text, lineno, expected):
    dialog_home(tmp_path, text)
    with pytest.raises(DataFormatError) as info:
        load_dialog_babi(1, "trn", data_home=tmp_path)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.lineno == lineno and err.filename == str(tmp_path / T1)
    assert f"{tmp_path / T1}, line {lineno}: expected" in str(err)
    assert expected in str(err)


@pytest.mark.parametrize(
    "rel, content, expected",
    [
        ("dialog-babi/dialog-babi-kb-all.txt", "1 resto_a R_cuisine\n", "subject relation"),
        ("dialog-babi/dialog-babi-kb-all.txt", "1 a b\tc\td\n", "subject relation"),
        ("dialog-babi/dialog-babi-candidates.txt", "hello\n", "line id"),
    ],
)
def test_malformed_side_files(tmp_path, rel, content, expected):
    dialog_home(tmp_path, "1 hi\thello\n")
    write(tmp_path, rel, content)
    with pytest.raises(DataFormatError, match=expected) as info:
        load_dialog_babi(1, "trn", data_home=tmp_path)
    assert str(tmp_path / rel) in str(info.value) and info.value.lineno == 1


def test_invalid_utf8_names_file_and_line(tmp_path):
    dialog_home(tmp_path, b"1 hi\thello\n2 caf\xe9\tbot\n")
    with pytest.raises(DataFormatError, match="UTF-8") as info:
        load_dialog_babi(1, "trn", data_home=tmp_path)
    assert info.value.lineno == 2 and str(tmp_path / T1) in str(info.value)


def test_corrupt_gzip_is_a_format_error(tmp_path):
    dialog_home(tmp_path, "")
    (tmp_path / T1).unlink()
    write(tmp_path, T1 + ".gz", b"this is not gzip data")
    with pytest.raises(DataFormatError, match="gzip") as info:
        load_dialog_babi(1, "trn", data_home=tmp_path)
    assert info.value.filename == str(tmp_path / T1) + ".gz"


def test_utf8_bom_is_ignored(tmp_path):
    dialog_home(tmp_path, "\ufeff1 hi\thello\n")
    assert load_dialog_babi(1, "trn", data_home=tmp_path).X[0].query == "hi"


def test_data_format_error_pickles():
    err = DataFormatError("f.txt", 3, "a line id", "zzz")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) == "f.txt, line 3: expected a line id, got 'zzz'"
    assert (back.filename, back.lineno) == ("f.txt", 3)
    assert str(DataFormatError("f.gz", None, "gzip data")) == "f.gz: expected gzip data"


# --------------------------------------------------------------------------- bAbI QA

STORY = (
    "1 Mary moved to the bathroom.\n"
    "2 John went to the hallway.\n"
    "3 Where is Mary? \tbathroom\t1\n"
    "4 Mary got the apple.\n"
    "5 What is Mary carrying?\tapple,football\t4 1\n"
    "6 Where was the apple?\tnorth west\t\n"
    "1 Sandra went to the office.\n"
    "2 Where is Sandra?\toffice\t1\n"
)


def test_babi_qa_structure(tmp_path):
    write(tmp_path, QA1, STORY)
    data = load_babi_qa(1, "train", data_home=tmp_path)
    assert [x.query for x in data.X] == [
        "Where is Mary?",
        "What is Mary carrying?",
        "Where was the apple?",
        "Where is Sandra?",
    ]
    assert data.y == ["bathroom", "apple,football", "north west", "office"]
    assert data.supporting == [(0,), (2, 0), (), (0,)]
    assert data.groups.tolist() == [0, 0, 0, 1]
    assert [len(x.history) for x in data.X] == [2, 3, 3, 1]
    assert data.X[1].history[2] == Turn("kb", "Mary got the apple.")
    assert data.X[1].history[0] is data.X[0].history[0]


@pytest.mark.parametrize(
    "text, lineno, expected",
    [
        ("1 A.\n2 Q?\tx\t3\n", 2, "bad id '3'"),  # a later line (itself)
        ("1 A.\n2 Q?\tx\t1\n3 Q?\ty\t2\n", 3, "bad id '2'"),  # a question
        ("1 A.\n2 B.\n3 Q?\tx\t2\n1 C.\n2 Q?\ty\t2\n", 5, "statements so far: 1"),  # other story
        ("1 A.\n2 Q?\tx\tone\n", 2, "bad id 'one'"),
        ("1 A.\n2 Q?\tx\t-1\n", 2, "bad id '-1'"),
        ("1 A.\n2 Q?\tx\n", 2, "0 or 2 tabs"),
        ("1 A.\n2 Q?\tx\t1\tmore\n", 2, "0 or 2 tabs"),
        ("1 A.\n2 Q?\t \t1\n", 2, "an answer"),
        ("1 A.\n2  \tx\t1\n", 2, "a question"),
        ("1 A.\n1\n", 2, "text after the line id"),
    ],
)
def test_malformed_babi_qa(tmp_path, text, lineno, expected):
    path = write(tmp_path, QA1, text)
    with pytest.raises(DataFormatError) as info:
        load_babi_qa(1, "train", data_home=tmp_path)
    assert info.value.lineno == lineno and info.value.filename == str(path)
    assert f"{path}, line {lineno}" in str(info.value) and expected in str(info.value)


def test_babi_qa_other_languages_and_crlf(tmp_path):
    hindi = (
        "1 \u0938\u0902\u0926\u0940\u092a \u0930\u0938\u094b\u0908 \u092e\u0947\u0902 "
        "\u0917\u092f\u093e\u0964\r\n"
        "2 \u0938\u0902\u0926\u0940\u092a \u0915\u0939\u093e\u0901 \u0939\u0948?\t"
        "\u0930\u0938\u094b\u0908\t1\r\n"
    )
    write(tmp_path, "babi-qa/hn/qa1_single-supporting-fact_test.txt", hindi)
    write(tmp_path, "babi-qa/en-10k/qa12_conjunction_train.txt", STORY, gz=True)
    data = load_babi_qa(1, "test", lang="hn", data_home=tmp_path)
    assert data.y == ["\u0930\u0938\u094b\u0908"] and data.supporting == [(0,)]
    assert data.X[0].query.endswith("?") and data.X[0].history[0].text.endswith("\u0964")
    assert len(load_babi_qa(12, "train", lang="en-10k", data_home=tmp_path).X) == 4
    # qa1_* must not pick up qa12_*: no qa1 file in en-10k
    with pytest.raises(FileNotFoundError):
        load_babi_qa(1, "train", lang="en-10k", data_home=tmp_path)


def test_babi_qa_file_without_question_is_an_error(tmp_path):
    write(tmp_path, "babi-qa/en/qa1_single-supporting-fact_train.txt", "1 Mary went home.\n")
    with pytest.raises(DataFormatError, match="qa1_single-supporting-fact_train.txt: expected"):
        load_babi_qa(1, "train", data_home=tmp_path)


def test_babi_qa_ambiguous_glob(tmp_path):
    write(tmp_path, "babi-qa/en/qa2_a_test.txt", STORY)
    write(tmp_path, "babi-qa/en/qa2_b_test.txt", STORY)
    with pytest.raises(ValueError, match="several files"):
        load_babi_qa(2, "test", data_home=tmp_path)


# --------------------------------------------------------------------------- Movie Dialog

MD = "movie-dialog"


def test_movie_dialog_answers_use_the_entity_list(tmp_path):
    write(
        tmp_path,
        f"{MD}/task1_qa_dev.txt",
        "1 what did Guy Ritchie direct?\tSnatch, Lock, Stock and Two Smoking Barrels, Revolver\n"
        "1 and Koster?\tGood Morning, Miss Dove, Harvey\n",
    )
    without = load_movie_dialog(1, "dev", data_home=tmp_path)
    assert without.answers[0] == ["Snatch", "Lock", "Stock and Two Smoking Barrels", "Revolver"]
    write(
        tmp_path,
        f"{MD}/entities.txt",
        "Lock\nLock, Stock and Two Smoking Barrels\nGood Morning, Miss Dove\n\u00a0\nHarvey\n",
    )
    data = load_movie_dialog(1, "dev", data_home=tmp_path)
    assert data.answers == [
        ["Snatch", "Lock, Stock and Two Smoking Barrels", "Revolver"],
        ["Good Morning, Miss Dove", "Harvey"],
    ]
    assert data.y[0] == "Snatch, Lock, Stock and Two Smoking Barrels, Revolver"
    assert data.groups.tolist() == [0, 1] and data.X[1].history == ()
    assert load_movie_entities(tmp_path) == [
        "Lock",
        "Lock, Stock and Two Smoking Barrels",
        "Good Morning, Miss Dove",
        "Harvey",
    ]


def test_movie_dialog_task3_history(tmp_path):
    write(
        tmp_path,
        f"{MD}/task3_qarecs_test.txt",
        "1 I like Up. A drama?\tBlow Out\n2 Who stars?\tJohn Travolta, Nancy Allen\n\n"
        "1 Any comedy?\tHi, Mom!\n",
    )
    write(tmp_path, f"{MD}/entities.txt", "Hi, Mom!\n")
    data = load_movie_dialog(3, "test", data_home=tmp_path)
    assert data.X[1].history == (Turn("user", "I like Up. A drama?"), Turn("bot", "Blow Out"))
    assert data.answers == [["Blow Out"], ["John Travolta", "Nancy Allen"], ["Hi, Mom!"]]
    assert data.groups.tolist() == [0, 0, 1]


def test_movie_dialog_line_without_answer_is_an_error(tmp_path):
    # dialog bAbI keeps tab-less lines as KB facts; Movie Dialog has none, so such a line
    # is a question that lost its answer
    write(tmp_path, f"{MD}/task1_qa_dev.txt", "1 who directed Heat?\tMichael Mann\n1 and Alien?\n")
    with pytest.raises(DataFormatError, match=r"task1_qa_dev.txt, line 2: .*\(one tab\)"):
        load_movie_dialog(1, "dev", data_home=tmp_path)


def test_dialog_file_of_facts_only_is_an_error(tmp_path):
    with pytest.raises(DataFormatError, match="trn.txt: expected at least one 'ID user<TAB>bot'"):
        load_dialog_babi(1, "trn", data_home=dialog_home(tmp_path, "1 resto_1 R_cuisine thai\n"))


def test_dialog_file_without_exchange_is_an_error(tmp_path):
    write(tmp_path, f"{MD}/task1_qa_dev.txt", "\n")
    with pytest.raises(DataFormatError, match="task1_qa_dev.txt: expected at least one"):
        load_movie_dialog(1, "dev", data_home=tmp_path)


def test_movie_kb(tmp_path):
    write(
        tmp_path,
        f"{MD}/substitute_movie_kb_wikimovies.txt",
        "1 Kismet directed_by William Dieterle\n"
        "2 Kismet has_tags bd-r, revenge\n\n"
        "1 Hi, Mom! has_plot A man films, then edits, his neighbours.\n"
        "2 Hi, Mom! starred_actors Robert De Niro\n",
    )
    kb = load_movie_kb(tmp_path)
    assert kb.triples == [
        ("Kismet", "directed_by", ("William Dieterle",)),
        ("Kismet", "has_tags", ("bd-r", "revenge")),
        ("Hi, Mom!", "has_plot", ("A man films, then edits, his neighbours.",)),
        ("Hi, Mom!", "starred_actors", ("Robert De Niro",)),
    ]
    assert kb.sentences[0] == "Kismet directed_by William Dieterle"
    assert kb.groups.tolist() == [0, 0, 1, 1]
    # the original KB, when present, is preferred
    write(tmp_path, f"{MD}/movie_kb.txt", "1 Up directed_by Pete Docter\n")
    assert load_movie_kb(tmp_path).triples == [("Up", "directed_by", ("Pete Docter",))]
    write(tmp_path, f"{MD}/movie_kb.txt", "1 Up directed_by Pete Docter\n2 Up was good\n")
    with pytest.raises(DataFormatError, match="line 2: expected 'ID subject relation"):
        load_movie_kb(tmp_path)


def test_reddit_candidates(tmp_path):
    write(tmp_path, f"{MD}/task4_reddit_cand-test.txt", "1 Wtf ?\n\n1 so good  \n\n")
    assert load_reddit_candidates("test", tmp_path) == ["Wtf ?", "so good"]


# --------------------------------------------------------------------------- Ubuntu

TRAIN_CSV = (
    "Context,Utterance,Label\r\n"
    '"a __eou__ b __eou__ __eot__ c __eou__ __eot__ d, e __eou__ __eot__",'
    '"f __eou__ g __eou__",1\r\n'
    "only __eou__ __eot__,no __eou__,0\r\n"
)
VALID_CSV = (
    "Context,Ground Truth Utterance,Distractor_0,Distractor_1\r\n"
    '"x __eou__ __eot__ y __eou__ __eot__",gt __eou__,d0 __eou__,"d1,  one __eou__"\r\n'
)


def test_ubuntu_train(tmp_path):
    write(tmp_path, "ubuntu-sample/train.csv", TRAIN_CSV)
    data = load_ubuntu("train", data_home=tmp_path)
    assert data.X[0] == Context(history=(Turn("user", "a b"), Turn("bot", "c")), query="d, e")
    assert data.X[1] == Context(history=(), query="only")
    assert data.y == ["f g", "no"]
    assert data.labels.tolist() == [1, 0] and data.labels.dtype == np.int64
    assert "candidate_lists" not in data


def test_ubuntu_valid_and_dir_preference(tmp_path):
    write(tmp_path, "ubuntu-sample/valid.csv", VALID_CSV)
    data = load_ubuntu("valid", data_home=tmp_path)
    assert data.X[0] == Context(history=(Turn("bot", "x"),), query="y")
    assert data.y == ["gt"] and data.candidate_lists == [["gt", "d0", "d1, one"]]
    assert "labels" not in data
    write(tmp_path, "ubuntu/valid.csv", VALID_CSV.replace("gt __eou__", "full"), gz=True)
    assert load_ubuntu("valid", data_home=tmp_path).y == ["full"]


def test_iter_ubuntu_chunks_match_load(tmp_path):
    rows = "".join(f"q{i} __eou__ __eot__,r{i} __eou__,{i % 2}\n" for i in range(7))
    write(tmp_path, "ubuntu/train.csv", "Context,Utterance,Label\n" + rows)
    chunks = iter_ubuntu("train", data_home=tmp_path, chunksize=3)
    assert not isinstance(chunks, list)  # lazy
    chunks = list(chunks)
    assert [len(c.X) for c in chunks] == [3, 3, 1]
    full = load_ubuntu("train", data_home=tmp_path)
    assert sum((c.y for c in chunks), []) == full.y == [f"r{i}" for i in range(7)]
    np.testing.assert_array_equal(np.concatenate([c.labels for c in chunks]), full.labels)


@pytest.mark.parametrize(
    "split, text, lineno, expected",
    [
        ("train", "Context,Response,Label\n", 1, "the header Context,Utterance,Label"),
        ("train", "", 1, "a header row"),
        ("test", "Context,Ground Truth Utterance,Distractor_0\n", None, "at least one row"),
        ("train", "Context,Utterance,Label\na __eot__,b,1\nc __eot__,d\n", 3, "3 comma"),
        ("train", "Context,Utterance,Label\na __eot__,b,yes\n", 2, "a Label of 0 or 1"),
        ("train", "Context,Utterance,Label\n__eou__ __eot__,b,1\n", 2, "non-empty Context"),
        ("train", "Context,Utterance,Label\na __eot__, __eou__ ,1\n", 2, "non-empty responses"),
        ("train", 'Context,Utterance,Label\na,"b"c,1\n', 2, "well-formed CSV"),
        ("valid", "Context,Ground Truth Utterance,Distractor_1\n", 1, "the header"),
        ("valid", "Context,Ground Truth Utterance\n", 1, "the header"),
    ],
)
def test_malformed_ubuntu(tmp_path, split, text, lineno, expected):
    path = write(tmp_path, f"ubuntu/{split}.csv", text)
    with pytest.raises(DataFormatError) as info:
        load_ubuntu(split, data_home=tmp_path)
    assert info.value.lineno == lineno and info.value.filename == str(path)
    assert expected in str(info.value)


def test_ubuntu_invalid_utf8(tmp_path):
    write(tmp_path, "ubuntu/test.csv", b"Context,Ground Truth Utterance,Distractor_0\n\xff,a,b\n")
    with pytest.raises(DataFormatError, match="UTF-8") as info:
        load_ubuntu("test", data_home=tmp_path)
    assert str(tmp_path / "ubuntu" / "test.csv") in str(info.value)


# --------------------------------------------------------------------------- MovieLens


def test_movielens(tmp_path):
    ml = "movielens-small"
    write(
        tmp_path,
        f"{ml}/ratings.csv",
        "userId,movieId,rating,timestamp\r\n1,1,4.0,9\r\n2,3,0.5,7\r\n",
    )
    data = load_movielens_ratings(tmp_path)
    assert data.user_ids.tolist() == [1, 2] and data.item_ids.tolist() == [1, 3]
    assert data.ratings.dtype == np.float32 and data.ratings.tolist() == [4.0, 0.5]
    assert data.timestamps.tolist() == [9, 7] and data.titles == {} and data.genres == {}
    write(
        tmp_path,
        f"{ml}/movies.csv",
        'movieId,title,genres\n1,"American President, The (1995)",Comedy|Drama\n',
    )
    data = load_movielens_ratings(tmp_path)
    assert data.titles == {1: "American President, The (1995)"}
    assert data.genres == {1: ("Comedy", "Drama")}
    write(tmp_path, f"{ml}/ratings.csv", "userId,movieId,rating,timestamp\n1,1,good,9\n")
    with pytest.raises(DataFormatError, match="line 2: expected integer userId"):
        load_movielens_ratings(tmp_path)
    write(tmp_path, f"{ml}/ratings.csv", "userId,movieId,rating,timestamp\n1,1,nan,9\n")
    with pytest.raises(DataFormatError, match="line 2"):
        load_movielens_ratings(tmp_path)


# --------------------------------------------------------------------------- doctests


@pytest.mark.parametrize(
    "module", [_base, _dialog_babi, _babi_qa, _movie_dialog, _ubuntu, _movielens]
)
def test_docstring_examples_run(module):
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    tests = [t for t in finder.find(module) if t.examples]
    assert tests, f"{module.__name__} has no examples"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


# --------------------------------------------------------------------------- hypothesis

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n"),
    min_size=1,
    max_size=15,
).filter(lambda s: s.strip())
_HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def babi_stories(draw):
    """Stories of statements and questions; each question's supporting ids are drawn
    from the statements before it."""
    stories = []
    for _ in range(draw(st.integers(1, 4))):
        items, n_statements = [], 0
        for _ in range(draw(st.integers(1, 8))):
            if n_statements and draw(st.booleans()):
                support = draw(st.lists(st.integers(0, n_statements - 1), max_size=3))
                items.append(("q", draw(_TEXT), draw(_TEXT), support))
            else:
                items.append(("s", draw(_TEXT)))
                n_statements += 1
        stories.append(items)
    return stories


def _babi_file(stories, newline: str) -> str:
    lines = []
    for items in stories:
        statement_ids = []
        for i, item in enumerate(items, 1):
            if item[0] == "s":
                statement_ids.append(i)
                lines.append(f"{i} {item[1]}")
            else:
                ids = " ".join(str(statement_ids[k]) for k in item[3])
                lines.append(f"{i} {item[1]}\t{item[2]}\t{ids}")
    return newline.join(lines) + newline


@_HYPOTHESIS
@given(stories=babi_stories(), newline=st.sampled_from(["\n", "\r\n"]), gz=st.booleans())
def test_babi_qa_round_trip(stories, newline, gz):
    # a file with no question is an error (test_babi_qa_file_without_question_is_an_error)
    assume(any(item[0] != "s" for items in stories for item in items))
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp), QA1, _babi_file(stories, newline), gz=gz)
        data = load_babi_qa(1, "train", data_home=tmp)
    queries, answers, support, history_lengths, groups = [], [], [], [], []
    story_no = 0
    for items in stories:
        n_statements, asked = 0, False
        for item in items:
            if item[0] == "s":
                n_statements += 1
            else:
                queries.append(item[1].strip())
                answers.append(item[2].strip())
                support.append(tuple(item[3]))
                history_lengths.append(n_statements)
                groups.append(story_no)
                asked = True
        story_no += asked
    assert [x.query for x in data.X] == queries
    assert data.y == answers
    assert data.supporting == support
    assert [len(x.history) for x in data.X] == history_lengths
    assert data.groups.tolist() == groups


@st.composite
def dialogs(draw):
    """Dialogs of exchanges (user, bot) and tab-less kb facts."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        out.append(
            draw(
                st.lists(
                    st.one_of(
                        st.tuples(st.just("ex"), st.one_of(_TEXT, st.just("<SILENCE>")), _TEXT),
                        st.tuples(st.just("kb"), _TEXT),
                    ),
                    min_size=1,
                    max_size=8,
                )
            )
        )
    return out


@_HYPOTHESIS
@given(dialog_list=dialogs(), blank_lines=st.booleans(), newline=st.sampled_from(["\n", "\r\n"]))
def test_dialog_round_trip(dialog_list, blank_lines, newline):
    # a file with no exchange at all is an error (test_dialog_file_of_facts_only_is_an_error)
    assume(any(item[0] == "ex" for items in dialog_list for item in items))
    lines = []
    for items in dialog_list:
        for i, item in enumerate(items, 1):
            lines.append(f"{i} {item[1]}\t{item[2]}" if item[0] == "ex" else f"{i} {item[1]}")
        if blank_lines:
            lines.append("")
    with tempfile.TemporaryDirectory() as tmp:
        data = load_dialog_babi(
            1, "trn", data_home=dialog_home(Path(tmp), newline.join(lines) + newline)
        )
    queries, answers, history_lengths, groups = [], [], [], []
    n_dialogs = 0
    for items in dialog_list:
        n_turns, start = 0, len(queries)
        for item in items:
            if item[0] == "kb":
                n_turns += 1
                continue
            queries.append(item[1].strip())
            answers.append(item[2].strip())
            history_lengths.append(n_turns)
            groups.append(n_dialogs)
            n_turns += 2
        n_dialogs += len(queries) > start
    assert [x.query for x in data.X] == queries
    assert data.y == answers
    assert [len(x.history) for x in data.X] == history_lengths
    assert data.groups.tolist() == groups


_GARBAGE_LINE = st.one_of(
    st.binary(max_size=20),
    st.tuples(
        st.sampled_from(["", "1 ", "2 ", "3 ", "0 ", "x ", "1\t", " ", "12 ", "\u0661 "]),
        st.text(alphabet="ab ,\t\r\"'_1 2?\u00e9\u0915", max_size=15),
    ).map(lambda t: (t[0] + t[1]).encode("utf-8")),
)


@_HYPOTHESIS
@given(lines=st.lists(_GARBAGE_LINE, max_size=8), target=st.sampled_from(range(7)))
def test_garbage_raises_only_data_format_error(lines, target):
    content = b"\n".join(lines)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        dialog_home(home, "1 hi\thello\n")
        loaders = [
            (T1, lambda: load_dialog_babi(1, "trn", data_home=home)),
            ("dialog-babi/dialog-babi-kb-all.txt", lambda: load_dialog_babi(1, "trn", home)),
            (QA1, lambda: load_babi_qa(1, "train", data_home=home)),
            (f"{MD}/task3_qarecs_dev.txt", lambda: load_movie_dialog(3, "dev", data_home=home)),
            (f"{MD}/movie_kb.txt", lambda: load_movie_kb(home)),
            ("ubuntu/train.csv", lambda: load_ubuntu("train", data_home=home)),
            ("movielens-small/ratings.csv", lambda: load_movielens_ratings(home)),
        ]
        rel, load = loaders[target]
        write(home, rel, content)
        if target == 5:  # the CSV loaders need their header to get past line 1
            write(home, rel, b"Context,Utterance,Label\n" + content)
        try:
            load()
        except DataFormatError:
            pass


# --------------------------------------------------------------------------- real data (slow)
# ``data_home`` (tests/conftest.py) is IRDIALOG_DATA or ../shared/data; the tests skip without it.


# Samples (bot turns) per dialog bAbI file, and dialogs per split.
DIALOG_BABI_COUNTS = {
    (1, "trn"): 6024, (1, "dev"): 6015, (1, "tst"): 5936, (1, "tst-OOV"): 6020,
    (2, "trn"): 9498, (2, "dev"): 9513, (2, "tst"): 9464, (2, "tst-OOV"): 9460,
    (3, "trn"): 9855, (3, "dev"): 9978, (3, "tst"): 10018, (3, "tst-OOV"): 9788,
    (4, "trn"): 3507, (4, "dev"): 3529, (4, "tst"): 3498, (4, "tst-OOV"): 3510,
    (5, "trn"): 18340, (5, "dev"): 18457, (5, "tst"): 18398, (5, "tst-OOV"): 18368,
    (6, "trn"): 14404, (6, "dev"): 4159, (6, "tst"): 11237,
}  # fmt: skip
DSTC2_DIALOGS = {"trn": 1618, "dev": 500, "tst": 1117}


@pytest.mark.slow
@pytest.mark.parametrize("task, split", sorted(DIALOG_BABI_COUNTS))
def test_real_dialog_babi(data_home, task, split):
    # (how long loading takes is a benchmark's business, not a test's: no timing here)
    data = load_dialog_babi(task, split, data_home=data_home)
    assert len(data.X) == len(data.y) == DIALOG_BABI_COUNTS[task, split]
    n_dialogs = DSTC2_DIALOGS[split] if task == 6 else 1000
    np.testing.assert_array_equal(np.unique(data.groups), np.arange(n_dialogs))
    assert len(data.candidates) == (2407 if task == 6 else 4212)
    assert len(set(data.candidates)) == len(data.candidates)
    assert set(data.y) <= set(data.candidates)
    assert len(data.kb) == (484 if task == 6 else 3635)
    n_kb_turns = sum(t.speaker == "kb" for x in data.X for t in x.history)
    assert (n_kb_turns > 0) == (task >= 3)  # API results appear from task 3 on
    if task == 6:
        assert sum(x.query == "" for x in data.X) == (6 if split == "trn" else 0)


@pytest.mark.slow
@pytest.mark.parametrize("task", range(1, 21))
def test_real_babi_qa(data_home, task):
    for split in ("train", "test"):
        data = load_babi_qa(task, split, data_home=data_home)
        assert len(data.X) == len(data.y) == len(data.supporting) == 1000
        for x, facts in zip(data.X, data.supporting, strict=True):
            assert facts and all(0 <= f < len(x.history) for f in facts)
    if task == 19:
        assert all("," in y for y in data.y)  # path answers such as "n,w" are kept whole


@pytest.mark.slow
def test_real_movie_dialog(data_home):
    counts = {
        (1, "dev"): (9968, 9968), (1, "test"): (9952, 9952),
        (2, "dev"): (10000, 10000), (2, "test"): (10000, 10000),
        (3, "dev"): (14723, 5052), (3, "test"): (14300, 4915),
    }  # fmt: skip
    entities = load_movie_entities(data_home)
    assert len(entities) == 75541 == len(set(entities))  # 75542 lines, one is a lone NBSP
    for (task, split), (n_samples, n_dialogs) in counts.items():
        data = load_movie_dialog(task, split, data_home=data_home)
        assert len(data.X) == len(data.answers) == n_samples
        assert int(data.groups.max()) + 1 == n_dialogs
        for y, answers in zip(data.y, data.answers, strict=True):
            assert ", ".join(answers) == y
    data = load_movie_dialog(1, "dev", data_home=data_home)
    with_comma = [a for answers in data.answers for a in answers if ", " in a]
    assert "Lock, Stock and Two Smoking Barrels" in with_comma
    with pytest.raises(FileNotFoundError, match="task1_qa_train"):
        load_movie_dialog(1, "train", data_home=data_home)


@pytest.mark.slow
def test_real_movie_kb_and_reddit(data_home):
    kb = load_movie_kb(data_home)
    assert kb.filename.endswith("substitute_movie_kb_wikimovies.txt")
    assert len(kb.triples) == len(kb.sentences) == 84459
    assert int(kb.groups.max()) + 1 == 17341
    assert {r for _, r, _ in kb.triples} == {
        "directed_by", "written_by", "starred_actors", "release_year", "in_language",
        "has_tags", "has_genre", "has_imdb_votes", "has_imdb_rating",
    }  # fmt: skip
    for split in ("valid", "test"):
        assert len(load_reddit_candidates(split, data_home)) == 10000


@pytest.mark.slow
def test_real_ubuntu(data_home):
    train = load_ubuntu("train", data_home=data_home)
    assert len(train.X) == 100 and train.labels.sum() == 50
    for split in ("valid", "test"):
        data = load_ubuntu(split, data_home=data_home)
        assert len(data.X) == 100
        assert all(
            len(c) == 10 and c[0] == y for c, y in zip(data.candidate_lists, data.y, strict=True)
        )
        assert not any(
            "__eou__" in t.text or "__eot__" in t.text for x in data.X for t in x.history
        )
        assert all(x.history[-1].speaker == "bot" for x in data.X if x.history)
    chunks = list(iter_ubuntu("train", data_home=data_home, chunksize=30))
    assert [len(c.X) for c in chunks] == [30, 30, 30, 10]


@pytest.mark.slow
def test_real_movielens(data_home):
    data = load_movielens_ratings(data_home)
    assert len(data.ratings) == 100836
    assert len(np.unique(data.user_ids)) == 610 and len(np.unique(data.item_ids)) == 9724
    assert data.ratings.min() == 0.5 and data.ratings.max() == 5.0
    assert len(data.titles) == 9742 and data.titles[1] == "Toy Story (1995)"


@pytest.mark.slow
def test_real_list_datasets(data_home):
    found = list_datasets(data_home)
    families = ("dialog-babi", "babi-qa", "movie-dialog", "ubuntu", "movielens")
    assert all(found[f].found for f in families)
    assert len(found["babi-qa"].files) == 40
    assert len(found["dialog-babi"].files) == 27
