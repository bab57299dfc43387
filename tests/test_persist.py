"""irdialog.persist: every public model saved as arrays + JSON and loaded without pickle gives
the same scores, read or memory-mapped; files that name other code, or are not model files,
or are damaged, are refused."""

import json
import mmap
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from conformance import persist_round_trip
from conftest import CITIES, TINY_KB, make_tiny_dialogs
from sklearn.preprocessing import FunctionTransformer

import irdialog
from irdialog import (
    BM25Ranker,
    Context,
    DualEncoderRanker,
    EntityParser,
    EntitySymbolRanker,
    KBMemoryRetriever,
    MatchTypeFeaturizer,
    MemN2NRanker,
    MemNNQA,
    NearestNeighborRanker,
    NGramClassifier,
    QRNRanker,
    RankingPipeline,
    RecurrentReader,
    RuleBasedRanker,
    StructuredSVMQA,
    SubgraphEmbeddingRanker,
    SupervisedEmbeddingRanker,
    SVDRecommender,
    TfidfRanker,
    Turn,
)
from irdialog.persist import MOVED, ModelFileError, load, save

FAST = dict(embedding_dim=8, n_negatives=5, epochs=5, learning_rate=0.1, margin=0.5)
X, Y, _ = make_tiny_dialogs()
ENTITIES = list(dict.fromkeys(Y)) + CITIES
KB_SENTENCES = [f"resto_{c} R_location {c}" for c in CITIES]

# Every estimator of irdialog.__all__, fitted on the tiny dialogs, with what to compare.
RANKERS = {
    "TfidfRanker": lambda: TfidfRanker(),
    "BM25Ranker": lambda: BM25Ranker(method="bm25+"),
    "NearestNeighborRanker": lambda: NearestNeighborRanker(),
    "RuleBasedRanker": lambda: RuleBasedRanker(kb=TINY_KB, slots=("R_location",)),
    "SupervisedEmbeddingRanker": lambda: SupervisedEmbeddingRanker(random_state=0, **FAST),
    "SubgraphEmbeddingRanker": lambda: SubgraphEmbeddingRanker(
        kb=[(f"api_call {c}", "books_in", c) for c in CITIES], random_state=0, **FAST
    ),
    "MemN2NRanker": lambda: MemN2NRanker(hops=2, embedding_dim=8, epochs=3, random_state=0),
    "MemNNQA": lambda: MemNNQA(epochs=2, embedding_dim=8, random_state=0),
    "QRNRanker": lambda: QRNRanker(embedding_dim=8, epochs=3, random_state=0),
    "NGramClassifier": lambda: NGramClassifier(),
    "StructuredSVMQA": lambda: StructuredSVMQA(epochs=2, n_features=2**12, random_state=0),
    "SVDRecommender": lambda: SVDRecommender(n_components=3, random_state=0),
    "RecurrentReader": lambda: RecurrentReader(
        hidden_size=8, embedding_dim=8, epochs=2, random_state=0
    ),  # fmt: skip
    "DualEncoderRanker": lambda: DualEncoderRanker(
        hidden_size=8, embedding_dim=8, epochs=2, random_state=0
    ),  # fmt: skip
    "EntitySymbolRanker": lambda: EntitySymbolRanker(
        SupervisedEmbeddingRanker(random_state=0, **FAST), ENTITIES, min_count=1
    ),
    "FusionRanker": lambda: irdialog.FusionRanker(
        [("tfidf", TfidfRanker()), ("se", SupervisedEmbeddingRanker(random_state=0, **FAST))]
    ),
    "LearningToRankRanker": lambda: irdialog.LearningToRankRanker(
        [("bm25", BM25Ranker())], n_estimators=5, min_child_samples=2, random_state=0
    ),
    "SeedEnsembleRanker": lambda: irdialog.SeedEnsembleRanker(
        SupervisedEmbeddingRanker(**FAST), n_seeds=2, random_state=0
    ),
    "RankingPipeline": lambda: irdialog.make_ranking_pipeline(
        MatchTypeFeaturizer(TINY_KB), MemN2NRanker(epochs=2, embedding_dim=8, random_state=0)
    ),
}
TRANSFORMERS = {
    "MatchTypeFeaturizer": lambda: MatchTypeFeaturizer(TINY_KB).fit(X, Y),
    "EntityParser": lambda: EntityParser(ENTITIES, min_count=1).fit([c.text() for c in X]),
    "KBMemoryRetriever": lambda: KBMemoryRetriever(KB_SENTENCES).fit(),
}


def test_every_public_estimator_is_covered():
    public = {name for name in irdialog.__all__ if isinstance(getattr(irdialog, name), type)}
    data = {"Context", "Turn"}  # the input types, tested below
    assert public - data == set(RANKERS) | set(TRANSFORMERS)


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_round_trip_gives_identical_scores(name, tmp_path, monkeypatch):
    model = RANKERS[name]().fit(X, Y)
    again = persist_round_trip(model, tmp_path / "model.npz", monkeypatch)
    assert type(again) is type(model)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert again.get_params(deep=False).keys() == model.get_params(deep=False).keys()


def test_round_trip_keeps_attention_and_nested_structure(tmp_path):
    model = RANKERS["RankingPipeline"]().fit(X, Y)
    save(model, tmp_path / "m.npz")
    again = load(tmp_path / "m.npz")
    assert isinstance(again, RankingPipeline)
    np.testing.assert_array_equal(again.attention(X), model.attention(X))
    # the step list and named_steps share their estimators, as after fit
    assert again.named_steps["memn2nranker"] is again.steps[-1][1]


@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
def test_transformers_round_trip(name, tmp_path):
    model = TRANSFORMERS[name]()
    save(model, tmp_path / "t.npz")
    again = load(tmp_path / "t.npz")
    assert again.transform(X) == model.transform(X)


def test_contexts_and_turns_round_trip(tmp_path):
    data = {"x": [Context((Turn("user", "hi"), Turn("bot", "hello")), "a table", (("x", "y"),))]}
    save(data, tmp_path / "c.npz")
    assert load(tmp_path / "c.npz") == data


def test_unstorable_content_is_an_error_not_dropped(tmp_path):
    with pytest.raises(TypeError, match="lambda"):
        save(FunctionTransformer(lambda v: v), tmp_path / "f.npz")
    with pytest.raises(TypeError, match="not an irdialog, scikit-learn"):
        save({"x": zipfile.ZipInfo()}, tmp_path / "z.npz")


def _tamper(path, edit):
    """Rewrite the JSON header of a saved model with ``edit(doc)``."""
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files}
    doc = json.loads(arrays["__irdialog__"].tobytes())
    edit(doc)
    arrays["__irdialog__"] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    np.savez(path, **arrays)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["model"].update({"__object__": "os:system"}), "refusing to load the class"),
        (lambda d: d["model"].update({"__object__": "irdialog.persist:os.PathLike"}), "refusing"),
        (lambda d: d["model"].update({"__object__": "irdialog:Nothing"}), "does not exist"),
        (lambda d: d["model"].update({"__object__": "irdialog.__main__:main"}), "refusing"),
        (lambda d: d.update({"model": {"__function__": "builtins:eval"}}), "refusing"),
        (lambda d: d.update({"model": {"__function__": "irdialog.persist:os.system"}}), "refusing"),
        (lambda d: d.update({"format": "something-else"}), "not an irdialog model file"),
        (lambda d: d.update({"version": 99}), "version 99"),
        (lambda d: d.update({"model": {"__array__": "a999"}}), "missing"),
        (lambda d: d.update({"model": {"__what__": 1}}), "unknown entry"),
    ],
)
def test_tampered_files_are_refused(tmp_path, edit, message):
    path = tmp_path / "m.npz"
    save(TfidfRanker().fit(X, Y), path)
    _tamper(path, edit)
    with pytest.raises(ModelFileError, match=message):
        load(path)


def test_pickles_and_other_files_are_refused(tmp_path):
    (tmp_path / "p.npz").write_bytes(pickle.dumps(TfidfRanker()))
    (tmp_path / "a.npz").write_bytes(b"")
    np.savez(tmp_path / "plain.npz", x=np.arange(3))
    for name in ("p.npz", "a.npz", "plain.npz"):
        with pytest.raises(ModelFileError, match="not an irdialog model file"):
            load(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.npz")


# --------------------------------------------------------------------------- memory-mapped


def _is_mapped(a) -> bool:
    """Whether ``a`` is a np.memmap or a view on one (no copy)."""
    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


def _arrays_in(obj, seen=None):
    """(kind, array) for every ndarray reachable from ``obj``, but through the attributes
    its class derives after loading (``_transient_attributes``): "dense", or "sparse" for
    the ``data`` of a sparse matrix."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, type):
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield "dense", obj
    elif sp.issparse(obj):
        yield "sparse", obj.data
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _arrays_in(v, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            yield from _arrays_in(v, seen)
    elif hasattr(obj, "__dict__"):
        transient = getattr(type(obj), "_transient_attributes", ())
        for k, v in vars(obj).items():
            if k not in transient:
                yield from _arrays_in(v, seen)


def _members(path):
    """name -> (ZipInfo, the local header's extra field length, where the data starts)."""
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        out = {}
        for info in archive.infolist():
            name_length, extra_length = struct.unpack_from("<HH", raw, info.header_offset + 26)
            start = info.header_offset + 30 + name_length + extra_length
            out[info.filename] = (info, extra_length, start)
    return out


def _arrays_of_every_kind():
    rng = np.random.default_rng(0)
    return {
        "floats": rng.random((123, 7)),
        "fortran": np.asfortranarray(rng.random((9, 5)).astype(np.float32)),
        "int64": np.arange(1000, dtype=np.int64),
        "strided": np.arange(40.0)[::3],
        "scalar": np.array(3.5),
        "empty": np.zeros((0, 4)),
        "bools": rng.random(17) > 0.5,
        "records": np.array([(1, 2.0), (3, 4.5)], dtype=[("a", "<i4"), ("b", "<f8")]),
        "strings": np.array(["ab", "c"]),
    }


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_mapped_round_trip_gives_identical_scores(name, tmp_path):
    model = RANKERS[name]().fit(X, Y)
    path = tmp_path / "model.npz"
    save(model, path, compress=False)
    again = load(path, mmap_mode="r")
    assert type(again) is type(model)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    # Every array with content is a read-only map on the file; only object arrays (stored as
    # JSON) and empty ones are read.
    found = [
        (kind, a)
        for kind, a in _arrays_in(again)
        if not a.dtype.hasobject and a.size and not isinstance(a, np.generic)
    ]
    assert found or name == "RuleBasedRanker"  # its knowledge base is all strings
    for kind, a in found:
        assert _is_mapped(a), (kind, a.dtype, a.shape)
        assert not a.flags.writeable
        assert a.flags.aligned  # save(compress=False) aligns each member's data


@pytest.mark.parametrize("mode", ["r", "c"])
def test_mapped_arrays_equal_numpy_reading_them(mode, tmp_path):
    arrays = _arrays_of_every_kind()
    path = tmp_path / "arrays.npz"
    save(arrays, path, compress=False)
    # A multi-member file of stored members, whose local headers carry numpy's zip64 extra
    # field and the alignment padding, while the central directory has no zip64 field: the
    # local header gives where the data starts.
    members = _members(path)
    assert len(members) == len(arrays) + 1  # the JSON header, then the arrays
    for info, extra_length, start in members.values():
        assert info.compress_type == zipfile.ZIP_STORED
        assert extra_length == len(info.extra) + 20
        assert start % 64 == 0
    loaded = load(path, mmap_mode=mode)
    with np.load(path) as reference:  # the writer's keys follow the dict's order
        keys = {k: f"a{i}" for i, k in enumerate(arrays)}
        for k, a in loaded.items():
            expected = reference[keys[k]]
            assert a.dtype == expected.dtype and a.shape == expected.shape
            np.testing.assert_array_equal(a, expected)
            if k == "empty":  # nothing to map: read
                assert not _is_mapped(a)
                continue
            assert isinstance(a, np.memmap) and os.path.samefile(a.filename, path)
            assert a.flags.writeable == (mode == "c")
    assert loaded["fortran"].flags.f_contiguous
    if mode == "c":  # copy-on-write: the file keeps its values
        loaded["floats"][:] = -1
        np.testing.assert_array_equal(load(path)["floats"], arrays["floats"])
    else:
        with pytest.raises(ValueError, match="read-only"):
            loaded["floats"][0, 0] = -1


def test_mapped_sparse_matrices(tmp_path):
    rng = np.random.default_rng(0)
    dense = rng.random((30, 40)) * (rng.random((30, 40)) < 0.2)
    m64 = sp.csr_matrix(dense)
    m64.indices, m64.indptr = m64.indices.astype(np.int64), m64.indptr.astype(np.int64)
    data = {"csr": sp.csr_matrix(dense), "csc": sp.csc_array(dense), "coo": sp.coo_matrix(dense)}
    data["csr64"] = m64
    save(data, tmp_path / "s.npz", compress=False)
    loaded = load(tmp_path / "s.npz", mmap_mode="r")
    for k, m in loaded.items():
        assert type(m) is type(data[k])
        np.testing.assert_array_equal(m.toarray(), dense)
        assert _is_mapped(m.data) and not m.data.flags.writeable, k
    # sklearn's int32 index arrays stay on the map (scipy casts int64 ones to int32, a copy)
    assert _is_mapped(loaded["csr"].indices) and _is_mapped(loaded["csr"].indptr)
    product = (data["csr"] @ data["csc"].T).toarray()
    np.testing.assert_array_equal((loaded["csr"] @ loaded["csc"].T).toarray(), product)


def test_mmap_mode_on_a_compressed_file_reads_the_arrays(tmp_path):
    model = TfidfRanker().fit(X, Y)
    save(model, tmp_path / "m.npz")
    again = load(tmp_path / "m.npz", mmap_mode="r")
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    found = [a for _, a in _arrays_in(again) if a.size]
    assert found and not any(_is_mapped(a) for a in found)
    arrays = _arrays_of_every_kind()
    save(arrays, tmp_path / "a.npz")
    for k, a in load(tmp_path / "a.npz", mmap_mode="c").items():
        assert not _is_mapped(a)
        np.testing.assert_array_equal(a, arrays[k])


@pytest.mark.parametrize(
    "mode, message",
    [
        ("r+", "would write"),
        ("w+", "would write"),
        ("x", "must be None"),
        (True, "must be None"),
        (["r"], "must be None"),
    ],
)
def test_a_bad_mmap_mode_is_refused(mode, message, tmp_path):
    save(TfidfRanker(), tmp_path / "m.npz", compress=False)
    with pytest.raises(ValueError, match=message) as err:
        load(tmp_path / "m.npz", mmap_mode=mode)
    assert not isinstance(err.value, ModelFileError)


def _saved_arrays(tmp_path):
    path = tmp_path / "m.npz"
    save(_arrays_of_every_kind(), path, compress=False)
    return path, path.read_bytes(), _members(path)


def _central_entry(raw: bytes, name: str) -> int:
    """Where the central directory entry of the member ``name`` starts (a small file: no
    zip64 end record, no comment)."""
    assert raw[-22:-18] == b"PK\x05\x06"
    at = struct.unpack_from("<I", raw, len(raw) - 22 + 16)[0]
    while raw[at : at + 4] == b"PK\x01\x02":
        lengths = struct.unpack_from("<HHH", raw, at + 28)  # name, extra field, comment
        if raw[at + 46 : at + 46 + lengths[0]] == name.encode():
            return at
        at += 46 + sum(lengths)
    raise KeyError(name)


@pytest.mark.parametrize("mode", [None, "r"])
def test_a_file_truncated_in_an_array_is_refused(mode, tmp_path):
    path, raw, members = _saved_arrays(tmp_path)
    info, _, start = members["a0.npy"]  # the 123 x 7 floats
    path.write_bytes(raw[: start + info.file_size // 2])
    with pytest.raises(ModelFileError, match="damaged or truncated"):
        load(path, mmap_mode=mode)


def _enlarge_shape(raw, members):
    return raw.replace(b"'shape': (123, 7)", b"'shape': (999, 7)", 1)


def _negative_shape(raw, members):
    return raw.replace(b"'shape': (123, 7)", b"'shape': (-12, 7)", 1)


def _damage_npy_magic(raw, members):
    start = members["a0.npy"][2]
    return raw[:start] + b"XXXX" + raw[start + 4 :]


def _offset_past_the_end(raw, members):
    at = _central_entry(raw, "a0.npy") + 42
    return raw[:at] + struct.pack("<I", len(raw) + 1000) + raw[at + 4 :]


def _offset_onto_another_member(raw, members):
    at = _central_entry(raw, "a0.npy") + 42
    return raw[:at] + struct.pack("<I", members["a0.npy"][2]) + raw[at + 4 :]


def _size_past_the_end(raw, members):
    at = _central_entry(raw, "a1.npy") + 20  # compressed size, then size
    return raw[:at] + struct.pack("<II", 10**6, 10**6) + raw[at + 8 :]


@pytest.mark.parametrize("mode", [None, "r"])
@pytest.mark.parametrize(
    "damage",
    [
        _enlarge_shape,
        _negative_shape,
        _damage_npy_magic,
        _offset_past_the_end,
        _offset_onto_another_member,
        _size_past_the_end,
    ],
)
def test_damaged_members_are_refused(damage, mode, tmp_path):
    path, raw, members = _saved_arrays(tmp_path)
    damaged = damage(raw, members)
    assert damaged != raw
    path.write_bytes(damaged)
    if damage is _size_past_the_end and mode is None:
        # numpy reads the array's own bytes and stops: the intact array is loaded
        np.testing.assert_array_equal(load(path)["fortran"], _arrays_of_every_kind()["fortran"])
        return
    with pytest.raises(ModelFileError, match=r"^m\.npz: .*(damaged|truncated|malformed|negative)"):
        load(path, mmap_mode=mode)


def test_saving_over_a_mapped_file_leaves_the_maps_valid(tmp_path):
    model = TfidfRanker().fit(X, Y)
    path = tmp_path / "m.npz"
    save(model, path, compress=False)
    os.chmod(path, 0o640)
    mapped = load(path, mmap_mode="r")
    save(mapped, path, compress=False)  # the mapped model itself, written over its file
    save(TfidfRanker().fit(X[:5], Y[:5]), path, compress=False)
    np.testing.assert_array_equal(mapped.decision_function(X), model.decision_function(X))
    assert len(load(path, mmap_mode="r").candidates_) < len(model.candidates_)
    assert os.listdir(tmp_path) == ["m.npz"]  # no temporary file left
    assert os.stat(path).st_mode & 0o777 == 0o640
    with pytest.raises(TypeError):
        save(FunctionTransformer(lambda v: v), path)
    assert os.listdir(tmp_path) == ["m.npz"]
    assert len(load(path).candidates_) < len(model.candidates_)
    with pytest.raises(FileNotFoundError, match="missing"):
        save(model, tmp_path / "missing" / "m.npz")
    (tmp_path / "link.npz").symlink_to(path)  # the file a link names is replaced
    save(model, tmp_path / "link.npz", compress=False)
    assert (tmp_path / "link.npz").is_symlink()
    assert len(load(path, mmap_mode="r").candidates_) == len(model.candidates_)


# --------------------------------------------------------------------------- texts


def test_arrays_of_texts_round_trip_as_one_buffer(tmp_path):
    texts = ["", "a table for two", "é à ü", "北京烤鸭", "x\ny", "\ud800 lone surrogate", "🙂"]
    model = TfidfRanker(candidates=texts[1:5]).fit(["a table"], ["a table for two"])
    model.extra_ = np.array(texts, dtype=object).reshape(7, 1)
    path = tmp_path / "m.npz"
    save(model, path, compress=False)
    doc = json.loads(np.load(path)["__irdialog__"].tobytes())
    assert "__strarray__" in json.dumps(doc["model"]["state"]["candidates_"])
    for mode in (None, "r"):
        loaded = load(path, mmap_mode=mode)
        assert loaded.extra_.shape == (7, 1) and loaded.extra_.ravel().tolist() == texts
        assert loaded.candidates_.tolist() == model.candidates_.tolist()


def test_the_same_texts_twice_are_stored_and_decoded_once(tmp_path):
    # A ranker given its documents holds them twice: the ``candidates`` parameter and
    # ``candidates_``. One buffer in the file, one set of strings after loading.
    docs = [f"document number {i}" for i in range(100)]
    model = BM25Ranker(candidates=docs).fit(["a query"], [docs[0]])
    path = tmp_path / "m.npz"
    save(model, path, compress=False)
    state = json.loads(np.load(path)["__irdialog__"].tobytes())["model"]["state"]
    as_list, as_array = state["candidates"]["__strlist__"], state["candidates_"]
    assert as_list["__strarray__"] == as_array["__strarray__"]  # the same member
    loaded = load(path, mmap_mode="r")
    assert loaded.candidates == docs and loaded.candidates_.tolist() == docs
    assert all(a is b for a, b in zip(loaded.candidates, loaded.candidates_))
    loaded.candidates_[0] = "changed"  # separate containers: one edit does not reach both
    assert loaded.candidates[0] == docs[0]


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.update({"shape": [99]}),
        lambda s: s.update({"ends": {"__array__": s["__strarray__"]["__array__"]}}),
    ],
)
def test_texts_that_do_not_add_up_are_refused(tmp_path, edit):
    path = tmp_path / "m.npz"
    save(TfidfRanker().fit(X, Y), path)
    _tamper(path, lambda d: edit(d["model"]["state"]["candidates_"]))
    with pytest.raises(ModelFileError, match="does not add up"):
        load(path)


@pytest.mark.parametrize("name", ["EntityParser", "EntitySymbolRanker", "SVDRecommender"])
def test_files_naming_a_class_where_it_was_before_it_moved_still_load(name, tmp_path):
    path = tmp_path / "m.npz"
    model = TRANSFORMERS[name]() if name in TRANSFORMERS else RANKERS[name]().fit(X, Y)
    save(model, path)
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files}
    text = arrays["__irdialog__"].tobytes().decode()
    for old, new in MOVED.items():
        assert old.startswith("irdialog.") and old != new
        text = text.replace(f'"{new}"', f'"{old}"')
    assert "irdialog.entities" not in text  # the file names only the paths of before the move
    arrays["__irdialog__"] = np.frombuffer(text.encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    again = load(path)
    assert type(again) is type(model)
    if name == "EntityParser":
        texts = [c.text() for c in X]
        assert again.transform_text(texts) == model.transform_text(texts)
    else:
        np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))


def test_version_1_files_with_texts_as_json_still_load(tmp_path):
    path = tmp_path / "m.npz"
    model = TfidfRanker().fit(X, Y)
    save(model, path)
    cands = model.candidates_.tolist()
    as_json = {"__objarray__": cands, "shape": [len(cands)]}

    def to_version_1(doc):
        doc["version"] = 1
        doc["model"]["state"]["candidates_"] = as_json

    _tamper(path, to_version_1)
    np.testing.assert_array_equal(load(path).decision_function(X), model.decision_function(X))


def test_vocabularies_round_trip_as_arrays(tmp_path):
    words = [f"w{i}" for i in range(300)] + ["é", "北京", ""]
    model = TfidfRanker().fit([" ".join(words)], ["a b"])
    model.table_ = {w: 7 * i for i, w in enumerate(words)}
    path = tmp_path / "m.npz"
    save(model, path)
    doc = json.loads(np.load(path)["__irdialog__"].tobytes())
    assert "__strintdict__" in json.dumps(doc["model"]["state"]["table_"])
    loaded = load(path)
    assert loaded.table_ == model.table_ and list(loaded.table_) == words
    assert loaded.vectorizer_.vocabulary_ == model.vectorizer_.vocabulary_
    _tamper(path, lambda d: d["model"]["state"]["table_"].update({"values": {"__array__": "a0"}}))
    with pytest.raises(ModelFileError, match="does not add up"):
        load(path)


def test_transient_attributes_are_not_saved(tmp_path):
    # BM25's candidate rows of rank_candidates: derived when needed, never stored.
    docs = [f"document number {i}" for i in range(20)]
    model = BM25Ranker(candidates=docs).fit(["a query"], [docs[0]])
    queries, lists = ["number 3", "document 7"], [docs[:12], docs[5:]]
    scores = model.rank_candidates(queries, [docs] * 2)
    assert "_candidate_term_rows" in vars(model)
    path = tmp_path / "m.npz"
    save(model, path)
    state = json.loads(np.load(path)["__irdialog__"].tobytes())["model"]["state"]
    assert "_candidate_term_rows" not in state and "index_" in state
    loaded = load(path)
    assert "_candidate_term_rows" not in vars(loaded)
    np.testing.assert_array_equal(loaded.rank_candidates(queries, [docs] * 2), scores)
    np.testing.assert_array_equal(
        loaded.rank_candidates(queries, lists), model.rank_candidates(queries, lists)
    )
