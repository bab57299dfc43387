"""``irdialog rank --allowed``: a filter of an index's documents or of a model's candidates,
one for every query (a text file of ids) or one per query (JSON Lines), ranked as the
library's ``allowed=``; ids that name nothing are refused with the file and line."""

import json
import re

import numpy as np
import pytest

from irdialog import BM25Ranker
from irdialog.cli import main
from irdialog.persist import save
from irdialog.retrieval import ShardedIndex

DOCS = ["w1 w2", "w2 w3", "w3", "w1", "w4 w4", "w1 w1 w2", "w5", "w2 w2"]
QUERIES = ["w1", "w2 w3", "w9"]


def _write(path, lines):
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _rank(*argv):
    out = argv[-1]
    assert main(["rank", *map(str, argv[:-1]), "--output", str(out), "--quiet"]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _expected(ids, scores, external=None):
    """The lines of ``irdialog rank`` from ``top_k`` under a filter: -1 left out."""
    out = []
    for row, values in zip(ids.tolist(), scores.tolist()):
        n = sum(j >= 0 for j in row)
        out.append(([external[j] for j in row[:n]] if external else row[:n], values[:n]))
    return out


@pytest.fixture
def text_index(tmp_path):
    """An index of a text corpus (ids: line numbers), changed: a document added, two
    deleted."""
    save_dir = tmp_path / "index"
    corpus = _write(tmp_path / "corpus.txt", DOCS)
    assert main(["index", "build", str(corpus), "--save", str(save_dir), "--quiet"]) == 0
    assert main(["index", "add", str(save_dir), str(_write(tmp_path / "more.txt", ["w1 w3"])),
                 "--quiet"]) == 0  # fmt: skip
    gone = _write(tmp_path / "gone.txt", ["3", "5"])
    assert main(["index", "delete", str(save_dir), str(gone), "--quiet"]) == 0
    return save_dir


def test_an_index_ranks_the_allowed_documents(text_index, tmp_path):
    queries = _write(tmp_path / "q.txt", QUERIES)
    # One filter for every query: a deleted document (5) among its ids, a blank line.
    shared = _write(tmp_path / "allowed.txt", ["0", "5", "", " 8 ", "2"])
    lines = _rank(text_index, queries, "-k", "2", "--allowed", shared, tmp_path / "r1.jsonl")
    with ShardedIndex.open(text_index) as index:
        want = _expected(*index.top_k(QUERIES, 2, allowed=[0, 5, 8, 2]))
        per_query = [[1, 4, 8], [], [6]]
        want_each = _expected(*index.top_k(QUERIES, 3, allowed=per_query))
    assert [(line["ids"], line["scores"]) for line in lines] == want
    assert [line["ids"] for line in lines] == [[0, 8], [2, 0], [0, 2]]
    # One filter per query, JSON Lines: a query allowed fewer than k gets them all.
    each = _write(tmp_path / "allowed.jsonl", [json.dumps(f) for f in per_query])
    lines = _rank(text_index, queries, "-k", "3", "--allowed", each, tmp_path / "r2.jsonl")
    assert [(line["ids"], line["scores"]) for line in lines] == want_each
    assert [line["ids"] for line in lines] == [[8, 1, 4], [], [6]]


def test_an_index_of_json_lines_takes_its_own_ids(tmp_path):
    corpus = tmp_path / "c.jsonl"
    _write(corpus, [json.dumps({"id": f"d{i}", "text": t}) for i, t in enumerate(DOCS)])
    save_dir = tmp_path / "index"
    assert main(["index", "build", str(corpus), "--save", str(save_dir), "--quiet"]) == 0
    queries = _write(tmp_path / "q.txt", QUERIES)
    shared = _write(tmp_path / "allowed.txt", ["d1", '"d5"', "d3"])  # unquoted or JSON
    lines = _rank(save_dir, queries, "-k", "5", "--allowed", shared, tmp_path / "r.jsonl")
    external = [f"d{i}" for i in range(len(DOCS))]
    with ShardedIndex.open(save_dir) as index:
        want = _expected(*index.top_k(QUERIES, 5, allowed=[1, 5, 3]), external)
    assert [(line["ids"], line["scores"]) for line in lines] == want
    assert lines[0]["ids"] == ["d3", "d5", "d1"]
    each = _write(tmp_path / "allowed.jsonl", ['["d7", "d0"]', "[]", '["d2"]'])
    lines = _rank(save_dir, queries, "-k", "5", "--allowed", each, tmp_path / "r2.jsonl")
    assert [line["ids"] for line in lines] == [["d0", "d7"], [], ["d2"]]


@pytest.mark.parametrize(
    ("name", "lines", "message"),
    [
        ("bad.txt", ["0", "x"], r"bad.txt, line 2: expected document ids \(integers in \[0, 9\)\)"),
        ("bad.txt", ["9"], r"bad.txt, line 1: expected document ids"),
        ("bad.jsonl", ["[0]", "[1, -1]", "[]"], r"bad.jsonl, line 2: expected document ids"),
        ("bad.jsonl", ["[0]", "3", "[]"], r"bad.jsonl, line 2: expected a JSON list of ids"),
        ("bad.jsonl", ["[0]", "[1"], r"bad.jsonl, line 2: expected a JSON list of ids"),
        ("bad.jsonl", ["[0]", "[1]"], r"bad.jsonl: 2 filters \(one a line\), but .*q.txt holds 3"),
    ],
)
def test_an_index_refuses_bad_ids_by_file_and_line(text_index, tmp_path, capsys, name, lines,
                                                   message):  # fmt: skip
    queries = _write(tmp_path / "q.txt", QUERIES)
    bad = _write(tmp_path / name, lines)
    assert main(["rank", str(text_index), str(queries), "--allowed", str(bad)]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_missing_filter_file_is_named(text_index, tmp_path, capsys):
    queries = _write(tmp_path / "q.txt", QUERIES)
    assert main(["rank", str(text_index), str(queries), "--allowed", "nowhere.txt"]) == 2
    assert "--allowed nowhere.txt: no such file" in capsys.readouterr().err


CANDIDATES = ["hello there", "the cat sat", "a dog barks", "cats and dogs", "goodbye"]


@pytest.fixture
def model_file(tmp_path):
    model = BM25Ranker(candidates=CANDIDATES).fit(["hi"], ["hello there"])
    save(model, tmp_path / "bm25.npz")
    return tmp_path / "bm25.npz"


def test_a_model_ranks_the_allowed_candidates(model_file, tmp_path):
    queries = ["the cat and the dog", "hello", "nothing"]
    data = _write(tmp_path / "q.jsonl", [json.dumps({"query": q}) for q in queries])
    shared = _write(tmp_path / "allowed.txt", ["goodbye", "a dog barks", "", "the cat sat"])
    lines = _rank(model_file, data, "-k", "2", "--allowed", shared, tmp_path / "r.jsonl")
    model = BM25Ranker(candidates=CANDIDATES).fit(["hi"], ["hello there"])
    scores = model.decision_function(queries)
    for line, row in zip(lines, scores):
        ids = [1, 2, 4]
        best = [ids[j] for j in np.argsort(-row[ids], kind="stable")[:2]]
        assert line["responses"] == [CANDIDATES[j] for j in best]
        assert line["scores"] == row[best].tolist()
    each = [["cats and dogs"], [], ["goodbye", "hello there"]]
    per_query = _write(tmp_path / "allowed.jsonl", [json.dumps(f) for f in each])
    lines = _rank(model_file, data, "-k", "5", "--allowed", per_query, tmp_path / "r2.jsonl")
    assert [line["responses"] for line in lines] == [["cats and dogs"], [],
                                                     ["hello there", "goodbye"]]  # fmt: skip


def test_a_model_refuses_texts_that_are_not_its_candidates(model_file, tmp_path, capsys):
    data = _write(tmp_path / "q.jsonl", [json.dumps({"query": "hello"})])
    bad = _write(tmp_path / "allowed.txt", ["goodbye", "good bye"])
    assert main(["rank", str(model_file), str(data), "--allowed", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "allowed.txt, line 2: expected a candidate of the model (its text), got 'good " in err
    # A file that gives each example its own candidates: nothing of the model's to filter.
    own = _write(tmp_path / "own.jsonl", [json.dumps({"query": "hi", "candidates": ["a", "b"]})])
    assert main(["rank", str(model_file), str(own), "--allowed", str(bad)]) == 2
    assert "gives each example its own" in capsys.readouterr().err
