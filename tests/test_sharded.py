"""ShardedIndex: shards on Dask workers whose merged top k is one BM25Ranker's, ids and
scores; damaged shard files refused by name; a worker lost mid-query; the command line."""

import json
import os

import numpy as np
import pytest
from conftest import kill_first_task

from irdialog import BM25Ranker
from irdialog.cli import main
from irdialog.retrieval import ShardedIndex
from irdialog.retrieval._bm25 import METHODS
from irdialog.retrieval._sharded import (
    ShardError,
    ShardFileError,
    _as_bag,
    _FileRanges,
    _read_files,
    _splits,
    merge_top_k,
)

needs_distributed = pytest.mark.skipif(
    __import__("importlib").util.find_spec("distributed") is None,
    reason="needs Dask's distributed (the dask extra)",
)


def _corpus(n=300, seed=0):
    """Zipf-distributed words; no two documents alike for BM25Ranker (which keeps one copy
    of a repeated candidate), but some equal after analysis (case, punctuation), so their
    scores tie across shards; empty documents among them."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(200)] + ["día", "naïve", "日本"])
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.1
    p /= p.sum()
    docs = [" ".join(rng.choice(words, size=rng.integers(0, 15), p=p)) for _ in range(n)]
    docs = list(dict.fromkeys(docs))
    docs[7] = "?"  # no token once the punctuation is dropped
    docs += [docs[3].upper(), docs[10] + " .", "!", docs[20].upper()]  # ties with earlier ones
    docs.insert(150, docs[40].title())
    queries = [" ".join(rng.choice(words, size=rng.integers(1, 6), p=p)) for _ in range(60)]
    queries += ["", "unknown words only", docs[3], docs[40], "w0 w0 w0 w1"]
    return docs, queries


DOCS, QUERIES = _corpus()


def _reference(method="lucene", docs=DOCS, queries=QUERIES, k=10):
    model = BM25Ranker(candidates=docs, method=method).fit(["x"], [docs[0]])
    assert len(model.candidates_) == len(docs)  # no repeated document
    top = model.rank(queries, k)
    return top, np.take_along_axis(model.decision_function(queries), top, axis=1)


def test_merge_top_k_reference():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 4, size=(6, 20)).astype(float)  # many ties
    offsets = [0, 5, 12, 20]
    parts = []
    for a, b in zip(offsets, offsets[1:]):
        block = scores[:, a:b]
        top = np.argsort(-block, axis=1, kind="stable")[:, :3]
        parts.append((top, np.take_along_axis(block, top, axis=1)))
    ids, merged = merge_top_k(parts, offsets[:-1], 3)
    expected = np.argsort(-scores, axis=1, kind="stable")[:, :3]  # ties to the lower id
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_array_equal(merged, np.take_along_axis(scores, expected, axis=1))


@pytest.mark.parametrize("method", METHODS)
def test_one_shard_in_this_process_is_bm25ranker(method):
    top, scores = _reference(method)
    with ShardedIndex(BM25Ranker(method=method)).build(DOCS) as index:
        assert index._client is None
        ids, got = index.top_k(QUERIES, 10)
        # several chunks of queries, ranked on two threads
        threaded = index.top_k(QUERIES * 5, 10, n_jobs=2)
    np.testing.assert_array_equal(ids, top)
    np.testing.assert_array_equal(got, scores)  # bit for bit
    np.testing.assert_array_equal(threaded[0], np.tile(top, (5, 1)))
    np.testing.assert_array_equal(threaded[1], np.tile(scores, (5, 1)))


@needs_distributed
@pytest.mark.parametrize("method", METHODS)
def test_four_shards_on_two_workers_are_one_index(client, method):
    template = BM25Ranker(method=method, k1=1.2, b=0.8)
    model = BM25Ranker(candidates=DOCS, method=method, k1=1.2, b=0.8).fit(["x"], [DOCS[0]])
    top = model.rank(QUERIES, 10)
    scores = np.take_along_axis(model.decision_function(QUERIES), top, axis=1)
    with ShardedIndex(template, shards=4, client=client).build(DOCS) as index:
        assert len(index.offsets_) == 5 and index.n_documents_ == len(DOCS)
        ids, got = index.top_k(QUERIES, 10)
        assert index.ranker_.vocabulary_ == model.vocabulary_
        threaded = index.top_k(QUERIES * 5, 10, n_jobs=2)  # two threads on each worker
    np.testing.assert_array_equal(ids, top)
    np.testing.assert_array_equal(got, scores)  # the same float32 impacts, summed alike
    np.testing.assert_array_equal(threaded[0], np.tile(top, (5, 1)))
    np.testing.assert_array_equal(threaded[1], np.tile(scores, (5, 1)))
    assert client.status == "running"  # a client given is not closed


@needs_distributed
def test_repeated_documents_across_shards_tie_to_the_lower_id(client, tmp_path):
    docs = DOCS[:100] + DOCS[:60]  # exact repeats, in the last shards
    with ShardedIndex(shards=1).build(docs) as one:
        expected = one.top_k(QUERIES, 10)
    with ShardedIndex(shards=3, client=client, directory=tmp_path).build(docs) as index:
        ids, scores = index.top_k(QUERIES, 10)
        # More than there are documents: all of them, every shard's.
        assert index.top_k(QUERIES[:2], 1000)[0].shape == (2, len(docs))
    np.testing.assert_array_equal(ids, expected[0])
    np.testing.assert_array_equal(scores, expected[1])


@needs_distributed
def test_a_bag_and_files_give_the_same_index(client, tmp_path):
    import dask.bag as db

    top, scores = _reference()
    bag = db.from_sequence(DOCS, npartitions=3)  # repartitioned into the 4 shards
    with ShardedIndex(shards=4, client=client).build(bag) as index:
        ids, got = index.top_k(QUERIES, 10)
    np.testing.assert_array_equal(ids, top)
    np.testing.assert_array_equal(got, scores)
    halves = [tmp_path / "a.txt", tmp_path / "b.txt"]
    halves[0].write_text("\n".join(DOCS[:100]) + "\n", encoding="utf-8-sig")  # with a BOM
    halves[1].write_text("\r\n".join(DOCS[100:]), encoding="utf-8")  # no final line end
    with ShardedIndex(shards=4, client=client).build(halves) as index:
        assert index.n_documents_ == len(DOCS)
        ids, got = index.top_k(QUERIES, 10)
    np.testing.assert_array_equal(ids, top)
    np.testing.assert_array_equal(got, scores)
    with ShardedIndex().build(halves) as index:  # the same files, read here
        np.testing.assert_array_equal(index.top_k(QUERIES, 10)[0], top)


@needs_distributed
@pytest.mark.parametrize("shards", [2, 3, 7])
def test_one_file_is_read_by_the_workers_in_line_order(client, tmp_path, shards):
    """One file cut into byte ranges, one a shard, each read by a worker: every line once,
    in order, whatever the cut (multi-byte characters, CRLF, a BOM, empty lines)."""
    top, scores = _reference()
    path = tmp_path / "corpus.txt"
    path.write_text("\r\n".join(DOCS) + "\r\n", encoding="utf-8-sig")
    parts = _as_bag([path], shards, in_process=False)  # a range a shard, read on its worker
    assert len(parts) == shards and all(isinstance(p, _FileRanges) for p in parts)
    with ShardedIndex(shards=shards, client=client).build([path]) as index:
        assert index.n_documents_ == len(DOCS)
        assert len(index.offsets_) == shards + 1
        ids, got = index.top_k(QUERIES, 10)
    np.testing.assert_array_equal(ids, top)
    np.testing.assert_array_equal(got, scores)


def test_byte_ranges_of_files_read_every_line_once_in_order(tmp_path):
    """However the files are cut (a cut inside a line, a multi-byte character, a CRLF, at a
    line's first byte), the parts' lines are the files' lines."""
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    a.write_bytes("\ufeffuno\r\ndos\n\ntres día\ncuatro".encode())  # no final line end
    b.write_bytes("cinco\nseis\n日本\n".encode())
    c.write_bytes(b"")
    files = [str(a), str(c), str(b)]
    want = list(_read_files(files))
    assert want == ["uno", "dos", "", "tres día", "cuatro", "cinco", "seis", "日本"]
    for n in range(1, 45):
        parts = _splits(files, n)
        assert len(parts) == n
        assert [t for ranges in parts for t in _FileRanges(ranges)] == want


def test_a_byte_range_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\nbad \xff here\n")
    with pytest.raises(ValueError, match=r"bad.txt: byte 7: not UTF-8"):
        list(_FileRanges(_splits([str(path)], 1)[0]))


@needs_distributed
def test_more_shards_than_documents(client):
    docs = ["w1 w2", "w2 w3 w3"]
    model = BM25Ranker(candidates=docs).fit(["x"], [docs[0]])
    with ShardedIndex(shards=4, client=client).build(docs) as index:
        assert index.offsets_.tolist() == [0, 0, 1, 1, 2]  # two empty shards
        ids, scores = index.top_k(["w3", "w9"], 5)
    np.testing.assert_array_equal(ids, model.rank(["w3", "w9"], 5))
    np.testing.assert_array_equal(scores[0], model.decision_function(["w3"])[0, ids[0]])


@needs_distributed
def test_a_truncated_shard_file_is_refused_by_path(client, tmp_path):
    ShardedIndex(shards=2, client=client, directory=tmp_path).build(DOCS).close()
    with ShardedIndex.open(tmp_path, client=client) as index:  # intact: opens and ranks
        np.testing.assert_array_equal(index.top_k(QUERIES, 10)[0], _reference()[0])
    damaged = tmp_path / "shard-00001" / "impacts.npy"
    damaged.write_bytes(damaged.read_bytes()[:-8])
    with pytest.raises(ShardFileError, match=f"{damaged}.*truncated"):
        ShardedIndex.open(tmp_path, client=client)


def test_a_corrupted_or_missing_file_is_refused_by_path(tmp_path):
    ShardedIndex(directory=tmp_path).build(DOCS).close()
    damaged = tmp_path / "shard-00000" / "docs.npy"
    data = bytearray(damaged.read_bytes())
    data[-1] ^= 1  # same size, one bit flipped
    damaged.write_bytes(bytes(data))
    with pytest.raises(ShardFileError, match=f"{damaged}.*SHA-256"):
        ShardedIndex.open(tmp_path)
    (tmp_path / "df.npy").unlink()
    with pytest.raises(ShardFileError, match=f"{tmp_path / 'df.npy'}.*missing"):
        ShardedIndex.open(tmp_path)


@needs_distributed
def test_a_worker_lost_mid_query_gives_the_whole_list(client, tmp_path):
    top, scores = _reference()
    index = ShardedIndex(shards=4, client=client, directory=tmp_path / "index").build(DOCS)
    marker = tmp_path / "killed"
    with kill_first_task(client, marker, "irdialog-search"), index:
        ids, got = index.top_k(QUERIES, 10)
    assert marker.exists()  # a worker was lost
    np.testing.assert_array_equal(ids, top)
    np.testing.assert_array_equal(got, scores)
    client.wait_for_workers(2, timeout=120)


@needs_distributed
def test_a_shard_that_keeps_failing_is_named(client, tmp_path):
    with ShardedIndex(shards=2, client=client).build(DOCS[:30]) as index:
        # A task that fails on the cluster's side (not a ValueError of the data): tried
        # again once, then named; the other shard's result is not returned alone.
        missing = str(tmp_path / "shard-gone")
        with pytest.raises(ShardError, match=f"shard 1 \\({missing}\\).*FileNotFoundError"):
            index._run(os.stat, [(str(tmp_path),), (missing,)], None, retries=1)


def test_parameters_and_input_are_checked(tmp_path):
    with pytest.raises(ValueError, match="shards must be a positive integer"):
        ShardedIndex(shards=0).build(DOCS)
    with pytest.raises(TypeError, match="tokenizer must be"):
        ShardedIndex(BM25Ranker(tokenizer=str.split)).build(DOCS)
    with pytest.raises(TypeError, match="shard 0, document 1: a document is a str"):
        ShardedIndex().build(["a b", 3])
    with pytest.raises(TypeError, match="got a str"):
        ShardedIndex().build("one text")
    with pytest.raises(FileNotFoundError, match="no-such.txt"):
        ShardedIndex().build([tmp_path / "no-such.txt"])
    with pytest.raises(ShardFileError, match="index.json: missing"):
        ShardedIndex.open(tmp_path)
    index = ShardedIndex().build(DOCS[:5])
    index.close()
    with pytest.raises(RuntimeError, match="closed"):
        index.top_k(["w1"])
    with ShardedIndex().build(DOCS[:5]) as index, pytest.raises(ValueError, match="n_jobs"):
        index.top_k(["w1"], n_jobs=0)


@needs_distributed
def test_command_line_build_and_rank(client, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    address = client.scheduler.address
    top, scores = _reference()
    for shards, extra in ((4, ["--scheduler", address]), (1, [])):
        save, out = tmp_path / f"index-{shards}", tmp_path / f"ranks-{shards}.jsonl"
        build = ["index", "build", str(corpus), "--shards", str(shards), "--save", str(save)]
        assert main([*build, *extra]) == 0
        assert f"{len(DOCS)} documents" in capsys.readouterr().out
        rank = ["rank", str(save), str(queries), "-k", "10", "--output", str(out), "--quiet"]
        assert main([*rank, *extra, "--threads", "2"]) == 0
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [line["query"] for line in lines] == list(range(len(QUERIES)))
        np.testing.assert_array_equal([line["ids"] for line in lines], top)
        np.testing.assert_array_equal([line["scores"] for line in lines], scores)
    # JSON Lines: the corpus's own ids.
    records = tmp_path / "corpus.jsonl"
    records.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(DOCS)),
        encoding="utf-8",
    )
    save = tmp_path / "index-jsonl"
    assert main(["index", "build", str(records), "--save", str(save), "--quiet"]) == 0
    assert main(["rank", str(save), str(queries), "-k", "3"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["ids"] == [f"d{j}" for j in top[0, :3]]
    records.write_text('{"id": 1, "text": "a"}\n{"text": "b"}\n', encoding="utf-8")
    assert main(["index", "build", str(records), "--save", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "corpus.jsonl" in err and "line 2" in err and '"id" and "text"' in err
