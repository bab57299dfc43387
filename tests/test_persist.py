"""irdialog.persist: every public model saved as arrays + JSON and loaded without pickle gives
the same scores; files that name other code, or are not model files, are refused."""

import json
import pickle
import zipfile

import numpy as np
import pytest
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
    RankingPipeline,
    RecurrentReader,
    RuleBasedRanker,
    StructuredSVMQA,
    SupervisedEmbeddingRanker,
    SVDRecommender,
    TfidfRanker,
    Turn,
)
from irdialog.persist import ModelFileError, load, save

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
    "MemN2NRanker": lambda: MemN2NRanker(hops=2, embedding_dim=8, epochs=3, random_state=0),
    "MemNNQA": lambda: MemNNQA(epochs=2, embedding_dim=8, random_state=0),
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
    path = tmp_path / "model.npz"
    save(model, path)
    with monkeypatch.context() as m:  # loading must not unpickle anything
        m.setattr(pickle, "loads", _no_pickle)
        m.setattr(pickle, "load", _no_pickle)
        m.setattr(pickle, "Unpickler", _no_pickle)
        again = load(path)
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


def _no_pickle(*args, **kwargs):
    raise AssertionError("pickle was called")


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
        (lambda d: d["model"].update({"__object__": "irdialog.cli:os.PathLike"}), "refusing"),
        (lambda d: d["model"].update({"__object__": "irdialog:Nothing"}), "does not exist"),
        (lambda d: d["model"].update({"__object__": "irdialog.__main__:main"}), "refusing"),
        (lambda d: d.update({"model": {"__function__": "builtins:eval"}}), "refusing"),
        (lambda d: d.update({"model": {"__function__": "irdialog.cli:os.system"}}), "refusing"),
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
