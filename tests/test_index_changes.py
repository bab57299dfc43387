"""ShardedIndex.add, delete and compact: after any sequence of them, the top k (ids and
scores) and the statistics are those of an index rebuilt from the documents left; the BM25
impact kernel against BM25Ranker's own scoring; a change that fails leaves the index as it
was; damaged files of a changed index are refused at open."""

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import kill_first_task, local_cluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irdialog import BM25Ranker
from irdialog.retrieval import ShardedIndex
from irdialog.retrieval import _sharded as sharded
from irdialog.retrieval._bm25 import METHODS
from irdialog.retrieval._bm25_kernels import TermCounts, bm25_impacts, marked_postings
from irdialog.retrieval._sharded import (
    ShardFileError,
    _length_codes,
    _posting_impacts,
    _term_major,
)

WORDS = ["w0", "w0", "w0", "w1", "w1", "w2", "w3", "w4", "día", "日本", "W1", "?"]
QUERIES = ["w0", "w1 w2", "w0 w0 w3", "día 日本", "w4 w1 w0", "", "unknown", "w2 w2 w4"]


def _text(rng, n):
    return " ".join(rng.choice(WORDS, size=n))


def _filters(n_ids):
    """Filters over every id given so far, deleted ones included: one shared by the
    queries, and one per query."""
    return [np.arange(0, n_ids, 2), [np.arange(q % 3, n_ids, 3) for q in range(len(QUERIES))]]


def _check_equal(index, texts, method, k=10):
    """``index``'s top k, without and under filters, equals that of an index built from
    ``texts`` (id: text, the documents not deleted), ids mapped, scores to float32
    rounding."""
    live = np.array(sorted(texts), dtype=np.int64)
    assert index.n_documents_ == len(live)
    filters = _filters(int(index.offsets_[-1]))
    with ShardedIndex(BM25Ranker(method=method)).build([texts[i] for i in live]) as ref:
        want = [ref.top_k(QUERIES, k)]
        for allowed in filters:  # the same filters, of the documents left, by their ids there
            if isinstance(allowed, np.ndarray):
                rebuilt = np.flatnonzero(np.isin(live, allowed))
            else:
                rebuilt = [np.flatnonzero(np.isin(live, a)) for a in allowed]
            want.append(ref.top_k(QUERIES, k, allowed=rebuilt))
        assert index.ranker_.average_length_ == ref.ranker_.average_length_
        known = [t for t in ref.ranker_.vocabulary_]
        np.testing.assert_array_equal(
            index.ranker_.idf_[[index.ranker_.vocabulary_[t] for t in known]],
            ref.ranker_.idf_[[ref.ranker_.vocabulary_[t] for t in known]],
        )
    got = [index.top_k(QUERIES, k), *(index.top_k(QUERIES, k, allowed=a) for a in filters)]
    for (ids, scores), (want_ids, want_scores) in zip(got, want):
        np.testing.assert_array_equal(ids, np.where(want_ids >= 0, live[want_ids], -1))
        np.testing.assert_allclose(scores, want_scores, rtol=1e-6, atol=1e-12)


# -- the kernel ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("extra", "code"), [(0, np.uint8), (300, np.uint16),
                                             (70_000, np.uint32), (0.5, np.uint32)])  # fmt: skip
def test_bm25_impacts_are_term_scores_bit_for_bit(method, extra, code):
    """Whatever the width of the length codes: short, long, very long and fractional
    lengths."""
    rng = np.random.default_rng(3)
    counts = sp.random(15, 9, density=0.4, random_state=4, format="csr")
    counts.data = rng.integers(1, 5, size=counts.nnz).astype(np.float32)
    lengths = np.asarray(counts.sum(axis=1)).ravel() + rng.integers(0, 3, 15) + extra
    assert _length_codes(lengths, None, 1.0, 0.5)[0].dtype == code
    ranker = BM25Ranker(method=method, k1=1.3, b=0.6, delta=0.7)
    df = np.bincount(counts.indices, minlength=9)
    ranker._set_statistics(df, 15, float(lengths.sum()))
    reference = ranker._term_scores(counts, lengths, np.float32).T.tocsr()
    reference.sort_indices()
    indptr, docs, tfs = _term_major(counts)
    impacts, term_max = _posting_impacts(ranker, indptr, docs, tfs, lengths)
    np.testing.assert_array_equal(docs, reference.indices)
    np.testing.assert_array_equal(impacts, reference.data)  # bit for bit
    bounds = zip(reference.indptr, reference.indptr[1:])
    expected_max = np.array([reference.data[a:b].max(initial=0) for a, b in bounds], np.float32)
    np.testing.assert_array_equal(term_max, expected_max)
    # The uncompiled function agrees; the postings of a dead document score 0.
    dead = np.zeros(15, dtype=bool)
    dead[[2, 7]] = True
    out, best = np.empty_like(impacts), np.zeros_like(term_max)
    codes, norms = _length_codes(lengths, dead, ranker.average_length_, 0.6)
    args = (TermCounts(indptr, docs, tfs), codes, norms, ranker.idf_, METHODS.index(method),
            1.3, 0.7, out, best)  # fmt: skip
    bm25_impacts.py_func(*args)
    np.testing.assert_array_equal(out[~dead[docs]], impacts[~dead[docs]])
    assert (out[dead[docs]] == 0).all()
    assert (best <= term_max).all()


def test_marked_postings_against_numpy():
    rng = np.random.default_rng(5)
    counts = sp.random(40, 12, density=0.3, random_state=6, format="csr")
    indptr, docs, _ = _term_major(counts)
    marked = rng.random(40) < 0.3
    bits = np.packbits(marked, bitorder="little")
    out = np.full(12, -1, dtype=np.int64)
    marked_postings(indptr, docs, bits, out)
    expected = [marked[docs[a:b]].sum() for a, b in zip(indptr, indptr[1:])]
    np.testing.assert_array_equal(out, expected)
    again = np.full(12, -1, dtype=np.int64)
    marked_postings.py_func(indptr, docs, bits, again)
    np.testing.assert_array_equal(again, expected)


def test_a_build_in_small_blocks_writes_the_same_files(tmp_path, monkeypatch):
    """Counting a few documents at a time, and turning a few postings term-major and
    scoring them at a time (in the build and in a delete): every file of the index the same
    bytes as in one block."""
    rng = np.random.default_rng(8)
    texts = [_text(rng, rng.integers(0, 9)) for _ in range(60)]
    written = {}
    for name, blocks in {"one": (1 << 18, 1 << 24), "small": (7, 5)}.items():
        monkeypatch.setattr(sharded, "_COUNT_BLOCK", blocks[0])
        monkeypatch.setattr(sharded, "_POSTING_BLOCK", blocks[1])
        with ShardedIndex(directory=tmp_path / name).build(texts) as index:
            index.delete([3, 17, 40])
        root = tmp_path / name
        written[name] = {
            p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }
    assert written["one"].keys() == written["small"].keys()
    for path, data in written["one"].items():
        assert written["small"][path] == data, path


# -- random changes against a rebuild ------------------------------------------------------

_document = st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join)
_operation = st.one_of(
    st.tuples(st.just("add"), st.lists(_document, max_size=6)),
    st.tuples(st.just("delete"), st.lists(st.integers(0, 10**6), max_size=5)),
    st.tuples(st.just("compact")),
    st.tuples(st.just("reopen")),
)
_changes = {
    "corpus": st.lists(_document, min_size=1, max_size=14),
    "operations": st.lists(_operation, min_size=1, max_size=6),
    "method": st.sampled_from(METHODS),
    # every add a new shard; the default merge policy; every add to the last shard
    "growth": st.sampled_from([0.0, 1.1, np.inf]),
}


def _run_changes(corpus, operations, method, growth, shards, client):
    template = BM25Ranker(method=method)
    with tempfile.TemporaryDirectory() as tmp:
        index = ShardedIndex(template, shards=shards, client=client, directory=tmp,
                             max_shard_growth=growth)  # fmt: skip
        index.build(corpus)
        texts = dict(enumerate(corpus))
        try:
            for operation in operations:
                kind = operation[0]
                if kind == "add":
                    before = len(index._dirs)
                    appends = operation[1] and index._appends(len(operation[1]), growth)
                    ids = index.add(operation[1])
                    first = int(index.offsets_[-1]) - len(operation[1])
                    assert ids.tolist() == list(range(first, first + len(operation[1])))
                    assert len(index._dirs) == before + (bool(operation[1]) and not appends)
                    texts.update(zip(ids.tolist(), operation[1]))
                elif kind == "delete":
                    live = sorted(texts)
                    ids = sorted({live[i % len(live)] for i in operation[1]})[: len(live) - 1]
                    index.delete(ids)
                    for i in ids:
                        del texts[i]
                elif kind == "compact":
                    kept = index.compact()
                    assert kept.tolist() == sorted(texts)
                    texts = {j: texts[i] for j, i in enumerate(kept.tolist())}
                    assert len(index.offsets_) == shards + 1
                else:
                    index.close()
                    index = ShardedIndex.open(tmp, client=client, max_shard_growth=growth)
                _check_equal(index, texts, method)
            _check_equal(index, texts, method, k=100)  # k above the count: every document
            named = {str(Path(tmp) / name) for name in index._doc["files"]}
            for entry in index._doc["shards"]:
                named |= {str(p) for p in (Path(tmp) / entry["path"]).iterdir()}
            on_disk = {str(p) for p in Path(tmp).rglob("*") if p.is_file()}
            assert on_disk == named | {str(Path(tmp) / "index.json")}  # nothing left behind
        finally:
            index.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**_changes)
def test_changes_equal_a_rebuild_one_shard(corpus, operations, method, growth):
    _run_changes(corpus, operations, method, growth, 1, None)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(**_changes)
def test_changes_equal_a_rebuild_four_shards(thread_client, corpus, operations, method, growth):
    # four shards on the workers of an in-process cluster: no process started
    _run_changes(corpus, operations, method, growth, 4, thread_client)


@pytest.mark.slow
def test_changes_on_worker_processes_equal_a_rebuild(tmp_path):
    rng = np.random.default_rng(7)
    corpus = [_text(rng, rng.integers(0, 12)) for _ in range(400)]
    with local_cluster(processes=True) as client:
        index = ShardedIndex(shards=4, client=client, directory=tmp_path).build(corpus)
        texts = dict(enumerate(corpus))
        with index:
            for _ in range(4):
                more = [_text(rng, rng.integers(0, 12)) for _ in range(30)]
                texts.update(zip(index.add(more).tolist(), more))
                gone = rng.choice(sorted(texts), size=25, replace=False)
                index.delete(gone)
                for i in gone:
                    del texts[i]
                _check_equal(index, texts, "lucene")
            kept = index.compact()
            texts = {j: texts[i] for j, i in enumerate(kept.tolist())}
            _check_equal(index, texts, "lucene")
        with ShardedIndex.open(tmp_path, client=client) as again:
            _check_equal(again, texts, "lucene")


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["irdialog-change", "irdialog-search"])
def test_a_worker_lost_mid_change_or_mid_query(tmp_path, prefix):
    """A worker killed while the shards are scored again, or while a changed index is
    searched: the task runs again elsewhere, and the result is the rebuild's, whole."""
    rng = np.random.default_rng(11)
    corpus = [_text(rng, rng.integers(0, 12)) for _ in range(300)]
    more = [_text(rng, rng.integers(0, 12)) for _ in range(20)]
    with local_cluster(processes=True) as client:  # a new cluster: a worker is killed
        index = ShardedIndex(shards=4, client=client, directory=tmp_path / "index")
        with index.build(corpus), kill_first_task(client, tmp_path / "killed", prefix):
            texts = dict(enumerate(corpus))
            texts.update(zip(index.add(more).tolist(), more))
            index.delete([1, 2, 3, 310])
            for i in (1, 2, 3, 310):
                del texts[i]
            _check_equal(index, texts, "lucene")
            assert (tmp_path / "killed").exists()  # a worker was lost


# -- behaviours ----------------------------------------------------------------------------


def test_deleted_documents_are_never_returned(tmp_path):
    docs = ["w1 w2", "w2", "w3", "w1", "w4 w4"]
    with ShardedIndex(directory=tmp_path).build(docs) as index:
        index.delete([1, 3])
        assert index.deleted_.tolist() == [1, 3] and index.n_documents_ == 3
        ids, scores = index.top_k(["w1 w2", "w9"], 10)
        # Every document left, the one that matches first, then the others by id.
        assert ids.tolist() == [[0, 2, 4], [0, 2, 4]]
        assert scores[0, 0] > 0 and (scores[0, 1:] == 0).all()
        assert index.add(["w2 w2"]).tolist() == [5]
        assert index.top_k(["w2"], 2)[0].tolist() == [[5, 0]]


def test_each_shard_skips_its_own_deleted_documents(tmp_path):
    docs = ["w1 w2", "w2", "w3", "w1", "w4 w4", "w1 w1", "w5"]
    with ShardedIndex(directory=tmp_path, max_shard_growth=0).build(docs) as index:
        index.add(["w1 w3", "w6"])
        index.delete([0, 3, 8])
        first, added = (tmp_path / e["path"] for e in index._doc["shards"])
        assert np.load(first / "deleted.npy").tolist() == [0, 3]
        assert np.load(added / "deleted.npy").tolist() == [1]
        # A shard's own search: its top k of the documents left, as wide as they are.
        Q = index.ranker_._queries(["w1", "w9"])[1]
        top, scores = sharded._search_shard(str(first), Q, 10)
        assert top.tolist() == [[5, 1, 2, 4, 6], [1, 2, 4, 5, 6]]
        assert (scores[0, :1] > 0).all() and (scores[0, 1:] == 0).all()
        top, _ = sharded._search_shard(str(added), Q, 10)
        assert top.tolist() == [[0], [0]]
        kept = index.compact()
        assert not any((tmp_path / e["path"] / "deleted.npy").exists()
                       for e in index._doc["shards"])  # fmt: skip
        assert kept.tolist() == [1, 2, 4, 5, 6, 7]


def test_an_add_never_rewrites_a_shard_of_the_build(tmp_path):
    docs = [f"w{i % 5} w{i % 3}" for i in range(10)]
    with ShardedIndex(directory=tmp_path).build(docs) as index:  # max_shard_growth=1.1
        index.add(["w1 w6", "w6"])  # under the bound, but the build's shard: a new one
        assert np.diff(index.offsets_).tolist() == [10, 2]
        index.add(["w2"] * 3)  # the additions' shard: appended to
        assert np.diff(index.offsets_).tolist() == [10, 5]
        index.compact()  # the build's shards again
        index.add(["w3"])
        assert np.diff(index.offsets_).tolist() == [15, 1]


def test_an_add_under_the_bound_appends_to_the_last_shard_and_over_it_makes_one(tmp_path):
    docs = [f"w{i % 5} w{i % 3}" for i in range(10)]
    with ShardedIndex(directory=tmp_path, max_shard_growth=0).build(docs) as index:
        index.add(["w1 w6", "w6"])  # 0: a new shard
        index.max_shard_growth = 1.1
        sizes = []
        # The last shard with them against 1.1 times the mean: 5 <= 8.25, 9 <= 10.45,
        # 12 <= 12.1 (appended); 14 > 13.2 (a new shard).
        for n in (3, 4, 3, 2):
            ids = index.add([f"w{n} w7"] * n)
            assert ids[0] == sum(np.diff(index.offsets_)) - n
            sizes.append(np.diff(index.offsets_).tolist())
        assert sizes == [[10, 5], [10, 9], [10, 12], [10, 12, 2]]
        assert [e["path"] for e in index._doc["shards"]] == [
            "shard-00000-g00005", "shard-00001-g00005", "shard-00002-g00005"
        ]  # fmt: skip
        with pytest.raises(ValueError, match="max_shard_growth must be a real number >= 0"):
            ShardedIndex(max_shard_growth=-1).build(docs)
        for bad in (float("nan"), "1", True, None):
            index.max_shard_growth = bad
            with pytest.raises(ValueError, match=f"max_shard_growth.*got {bad!r}"):
                index.add(["w1"])
    with pytest.raises(ValueError, match="max_shard_growth"):
        ShardedIndex.open(tmp_path, max_shard_growth=-0.5)


def test_the_deleted_documents_of_a_shard_appended_to_stay_deleted(tmp_path):
    docs = ["w1 w2", "w2", "w3", "w1", "w4 w4"]
    more = ["w2 w6", "w1 w2 w2"]
    growth = float("inf")  # always the additions' shard
    with ShardedIndex(directory=tmp_path, max_shard_growth=growth).build(docs[:2]) as index:
        index.add(docs[2:])  # the additions' shard: ids 2 to 4
        index.delete([1, 3])
        assert index.add(more).tolist() == [5, 6]
        _, entry = index._doc["shards"]
        assert entry["n_docs"] == 5
        assert np.load(tmp_path / entry["path"] / "deleted.npy").tolist() == [1]  # its own id
        index.delete([5])
        shard = tmp_path / index._doc["shards"][1]["path"]
        assert np.load(shard / "deleted.npy").tolist() == [1, 3]
        assert index.top_k(["w2", "w6"], 10)[0].tolist() == [[6, 0, 2, 4], [0, 2, 4, 6]]
        # The shard's postings: those of a shard of its documents added at once, the
        # deleted ones kept.
        with ShardedIndex(max_shard_growth=growth).build(docs[:2]) as once:
            once.add([*docs[2:], *more])
            once.delete([1, 3, 5])
            mine = sharded._open_shard(str(shard)).index
            theirs = sharded._open_shard(once._dirs[1]).index
            for name in ("indptr", "docs", "impacts", "term_max"):
                np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name))
        assert index.compact().tolist() == [0, 2, 4, 6]
        assert index.top_k(["w2"], 10)[0].tolist() == [[3, 0, 1, 2]]


def test_deleted_documents_of_an_index_of_the_earlier_format_are_compacted_away(tmp_path):
    # Its shards keep no list of their deleted documents: its search refuses, naming the
    # way out, until a compaction (or a change, which writes the lists) has run.
    docs = ["w1 w2", "w2", "w3", "w1"]
    with ShardedIndex(directory=tmp_path).build(docs) as index:
        index.delete([1])
        shard = tmp_path / index._doc["shards"][0]["path"]
    path = tmp_path / "index.json"
    path.write_text(json.dumps({**json.loads(path.read_text("utf-8")), "version": 2}), "utf-8")
    manifest = json.loads((shard / "manifest.json").read_text("utf-8"))
    del manifest["files"]["deleted.npy"]
    (shard / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    (shard / "deleted.npy").unlink()
    with ShardedIndex.open(tmp_path) as index:
        with pytest.raises(ValueError, match="earlier format.*compact it"):
            index.top_k(["w2"], 2)
        index.compact()
        assert index.top_k(["w2"], 5)[0].tolist() == [[0, 1, 2]]
        assert index._doc["version"] == sharded.FORMAT_VERSION


def test_delete_checks_its_ids(tmp_path):
    with ShardedIndex(directory=tmp_path).build(["a", "b", "c"]) as index:
        with pytest.raises(ValueError, match=r"ids must be in \[0, 3\), got \[3\]"):
            index.delete([0, 3])
        with pytest.raises(TypeError, match="1-D sequence of integers"):
            index.delete(["a"])
        index.delete([1, 1])
        with pytest.raises(ValueError, match=r"already deleted: \[1\]"):
            index.delete([1])
        with pytest.raises(ValueError, match="Deleting every document"):
            index.delete([0, 2])
        index.delete([])
        assert index.n_documents_ == 2
        assert index.add([]).tolist() == []


def _fail(*args):
    raise OSError("disk full")


@pytest.mark.parametrize("growth", [0.0, 1.1])  # an add to a new shard, to the last one
def test_a_change_that_fails_leaves_the_index_as_it_was(tmp_path, monkeypatch, growth):
    docs = ["w1 w2", "w2 w3", "w3 w1", "w4"]
    with ShardedIndex(directory=tmp_path, max_shard_growth=growth).build(docs) as index:
        before = (tmp_path / "index.json").read_text(encoding="utf-8")
        expected = index.top_k(QUERIES, 3)
        monkeypatch.setattr(sharded, "_rescore_shard", _fail)
        monkeypatch.setattr(sharded, "_append_shard", _fail)
        with pytest.raises(OSError, match="disk full"):
            index.add(["w5 w1"])
        with pytest.raises(OSError, match="disk full"):
            index.delete([0])
        assert (tmp_path / "index.json").read_text(encoding="utf-8") == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "df.npy", "index.json", "shard-00000", "term_ends.npy", "terms.npy"
        ]  # fmt: skip
        for got, want in zip(index.top_k(QUERIES, 3), expected):
            np.testing.assert_array_equal(got, want)
        monkeypatch.undo()
        index.delete([0])
    with ShardedIndex.open(tmp_path) as again:
        assert again.deleted_.tolist() == [0] and again.n_documents_ == 3


def test_an_append_that_fails_after_the_other_shards_were_scored_changes_nothing(
    tmp_path, monkeypatch
):
    docs = ["w1 w2", "w2 w3", "w3 w1", "w4"]
    with ShardedIndex(directory=tmp_path, max_shard_growth=0).build(docs) as index:
        index.add(["w5 w1", "w2"])  # a second shard
        index.max_shard_growth = 1.1
        before = (tmp_path / "index.json").read_text(encoding="utf-8")
        listing = sorted(str(p) for p in tmp_path.rglob("*"))
        expected = index.top_k(QUERIES, 3)
        scored, rescore = [], sharded._rescore_shard

        def counted(*args):
            scored.append(args[0])
            return rescore(*args)

        monkeypatch.setattr(sharded, "_rescore_shard", counted)
        monkeypatch.setattr(sharded, "_append_shard", _fail)
        with pytest.raises(OSError, match="disk full"):
            index.add(["w1 w3"])
        assert len(scored) == 1  # shard 0 was scored again before the append failed
        assert (tmp_path / "index.json").read_text(encoding="utf-8") == before
        assert sorted(str(p) for p in tmp_path.rglob("*")) == listing
        for got, want in zip(index.top_k(QUERIES, 3), expected):
            np.testing.assert_array_equal(got, want)
    monkeypatch.undo()
    with ShardedIndex.open(tmp_path) as again:
        for got, want in zip(again.top_k(QUERIES, 3), expected):
            np.testing.assert_array_equal(got, want)
        assert again.add(["w1 w3"]).tolist() == [6]
        assert np.diff(again.offsets_).tolist() == [4, 3]


def test_damaged_files_of_a_changed_index_are_refused_by_path(tmp_path):
    with ShardedIndex(directory=tmp_path).build(["w1 w2", "w2 w3", "w3"]) as index:
        index.add(["w1 w4"])
        index.delete([1])
        shard = tmp_path / index._doc["shards"][-1]["path"]
        deleted = tmp_path / sharded._file(index._doc, "deleted")
    impacts = shard / "impacts.npy"
    data = bytearray(impacts.read_bytes())
    data[-1] ^= 1
    impacts.write_bytes(bytes(data))
    with pytest.raises(ShardFileError, match=f"{impacts}.*SHA-256"):
        ShardedIndex.open(tmp_path)
    deleted.write_bytes(deleted.read_bytes()[:-8])
    with pytest.raises(ShardFileError, match=f"{deleted}.*truncated"):
        ShardedIndex.open(tmp_path)


def test_a_build_over_a_changed_index_leaves_none_of_it(tmp_path):
    with ShardedIndex(directory=tmp_path).build(["w1 w2", "w2 w3", "w3"]) as index:
        index.add(["w1 w4"])
        index.delete([1])
    (tmp_path / "notes").mkdir()  # not the index's: kept
    with ShardedIndex(directory=tmp_path).build(["w5", "w6"]) as index:
        assert index.top_k(["w6"], 5)[0].tolist() == [[1, 0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "df.npy", "index.json", "notes", "shard-00000", "term_ends.npy", "terms.npy"
    ]  # fmt: skip


def test_an_index_of_the_earlier_format_opens_but_does_not_change(tmp_path):
    ShardedIndex(directory=tmp_path).build(["w1", "w2"]).close()
    path = tmp_path / "index.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**doc, "version": 1}), encoding="utf-8")
    with ShardedIndex.open(tmp_path) as index:
        assert index.top_k(["w2"], 1)[0].tolist() == [[1]]
        with pytest.raises(ValueError, match="earlier format"):
            index.add(["w3"])


def test_a_change_links_the_arrays_it_does_not_change(tmp_path):
    with ShardedIndex(directory=tmp_path).build(["w1 w2", "w2 w3"]) as index:
        before = {name: os.stat(tmp_path / "shard-00000" / name).st_ino
                  for name in ("docs.npy", "tfs.npy", "impacts.npy")}  # fmt: skip
        index.delete([0])
        shard = tmp_path / index._doc["shards"][0]["path"]
        assert shard.name == "shard-00000-g00001"
        assert not (tmp_path / "shard-00000").exists()
        assert os.stat(shard / "docs.npy").st_ino == before["docs.npy"]
        assert os.stat(shard / "tfs.npy").st_ino == before["tfs.npy"]
        assert os.stat(shard / "impacts.npy").st_ino != before["impacts.npy"]


# -- the command line ----------------------------------------------------------------------


def _ranks(main, directory, queries, out):
    assert main(["rank", str(directory), str(queries), "-k", "5", "--output", str(out),
                 "--quiet"]) == 0  # fmt: skip
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_command_line_add_delete_compact(tmp_path, capsys):
    from irdialog.cli import main

    rng = np.random.default_rng(5)
    docs = [_text(rng, rng.integers(1, 8)) for _ in range(40)]
    more = [_text(rng, rng.integers(1, 8)) for _ in range(10)]
    (tmp_path / "corpus.txt").write_text("\n".join(docs) + "\n", encoding="utf-8")
    (tmp_path / "more.txt").write_text("\n".join(more) + "\n", encoding="utf-8")
    (tmp_path / "gone.txt").write_text("3\n41\n\n7\n", encoding="utf-8")
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUERIES[:5]) + "\n", encoding="utf-8")
    save = tmp_path / "index"
    assert main(["index", "build", str(tmp_path / "corpus.txt"), "--save", str(save),
                 "--quiet"]) == 0  # fmt: skip
    assert main(["index", "add", str(save), str(tmp_path / "more.txt")]) == 0
    assert "10 documents added: 50" in capsys.readouterr().out
    assert main(["index", "delete", str(save), str(tmp_path / "gone.txt")]) == 0
    assert "3 documents deleted: 47 left" in capsys.readouterr().out
    texts = {i: t for i, t in enumerate(docs + more) if i not in (3, 7, 41)}
    live = np.array(sorted(texts))
    with ShardedIndex().build([texts[i] for i in live]) as ref:
        want_ids, want_scores = ref.top_k(QUERIES[:5], 5)
    lines = _ranks(main, save, queries, tmp_path / "r1.jsonl")
    assert [line["ids"] for line in lines] == live[want_ids].tolist()
    np.testing.assert_allclose([line["scores"] for line in lines], want_scores, rtol=1e-6)
    # Compacted: the same ids (kept in ids.json), and more added after the largest.
    assert main(["index", "compact", str(save), "--quiet"]) == 0
    assert _ranks(main, save, queries, tmp_path / "r2.jsonl") == lines
    assert main(["index", "add", str(save), str(tmp_path / "more.txt"),
                 "--max-shard-growth", "-1"]) == 2  # fmt: skip
    assert "max_shard_growth must be a real number >= 0" in capsys.readouterr().err
    assert main(["index", "add", str(save), str(tmp_path / "more.txt"), "--quiet",
                 "--max-shard-growth", "0"]) == 0  # fmt: skip
    assert len(json.loads((save / "index.json").read_text())["shards"]) == 2  # a new shard
    assert json.loads((save / "ids.json").read_text())[-10:] == list(range(50, 60))
    # Errors name what was wrong.
    (tmp_path / "bad.txt").write_text("2\nx\n", encoding="utf-8")
    assert main(["index", "delete", str(save), str(tmp_path / "bad.txt")]) == 2
    assert "bad.txt" in capsys.readouterr().err
    (tmp_path / "bad.txt").write_text("2\n\n60\n", encoding="utf-8")  # past the last id
    assert main(["index", "delete", str(save), str(tmp_path / "bad.txt")]) == 2
    assert "bad.txt, line 3" in capsys.readouterr().err
    (tmp_path / "again.txt").write_text("2\n", encoding="utf-8")
    assert main(["index", "delete", str(save), str(tmp_path / "again.txt"), "--quiet"]) == 0
    assert main(["index", "delete", str(save), str(tmp_path / "again.txt")]) == 2
    assert "already deleted" in capsys.readouterr().err


def test_command_line_changes_of_a_json_lines_index(tmp_path, capsys):
    from irdialog.cli import main

    def write(path, records):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    write(tmp_path / "c.jsonl", [{"id": f"d{i}", "text": f"w{i % 4} w{i % 3}"} for i in range(9)])
    write(tmp_path / "m.jsonl", [{"id": "x1", "text": "w1 w9"}, {"id": "d2", "text": "w2"}])
    save = tmp_path / "index"
    assert main(["index", "build", str(tmp_path / "c.jsonl"), "--save", str(save),
                 "--quiet"]) == 0  # fmt: skip
    assert main(["index", "add", str(save), str(tmp_path / "m.jsonl")]) == 2
    assert "'d2' (record 2) is already used" in capsys.readouterr().err
    write(tmp_path / "m.jsonl", [{"id": "x1", "text": "w1 w9"}])
    assert main(["index", "add", str(save), str(tmp_path / "m.jsonl"), "--quiet"]) == 0
    (tmp_path / "gone.txt").write_text('d1\n"d4"\n', encoding="utf-8")
    assert main(["index", "delete", str(save), str(tmp_path / "gone.txt"), "--quiet"]) == 0
    queries = tmp_path / "q.txt"
    queries.write_text("w9 w1\nw1\n", encoding="utf-8")
    lines = _ranks(main, save, queries, tmp_path / "r.jsonl")
    assert lines[0]["ids"][0] == "x1"
    assert not {"d1", "d4"} & {i for line in lines for i in line["ids"]}
    (tmp_path / "gone.txt").write_text("d99\n", encoding="utf-8")
    assert main(["index", "delete", str(save), str(tmp_path / "gone.txt")]) == 2
    assert "gone.txt" in capsys.readouterr().err


def test_the_speed_script_checks_the_changed_index_against_a_rebuild(capsys):
    from benchmarks.index_changes import SPEED, main

    result = main(["--documents", "3000", "--vocabulary", "500", "--workers", "1",
                   "--queries", "50", "--repeat", "1"])  # fmt: skip
    assert result["changed_documents"] == 30
    assert result["shards_after_add"] == 2  # a shard of its own: the build's is not rewritten
    assert result["identical_top_10_ids"] and result["largest_score_difference"] < 1e-9
    assert 0 < result["add_over_build"] and 0 < result["delete_over_build"]
    table = capsys.readouterr().out.strip().splitlines()
    assert table == SPEED.table(result)
