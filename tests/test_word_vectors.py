"""Pretrained word vectors: the reader of their files (load_word_vectors) and the
initial_embeddings / freeze_embeddings of the five models that embed words."""

import gzip

import numpy as np
import pytest
from sklearn.base import clone

from irdialog import (
    DualEncoderRanker,
    MemN2NRanker,
    QRNRanker,
    RecurrentReader,
    SupervisedEmbeddingRanker,
)
from irdialog.base import check_contexts
from irdialog.embed import load_word_vectors

WORDS = {"hello": [0.5, -1.0, 2.0], "你好": [1.0, 0.0, -0.25], "naïve": [3.0, 2.0, 1.0]}


def _lines(vectors):
    return [f"{w} {' '.join(repr(float(v)) for v in vec)}" for w, vec in vectors.items()]


def _binary(vectors, newline=True):
    dim = len(next(iter(vectors.values())))
    out = f"{len(vectors)} {dim}\n".encode()
    for word, vec in vectors.items():
        out += word.encode() + b" " + np.asarray(vec, "<f4").tobytes() + (b"\n" if newline else b"")
    return out


def _check(vectors, expected=WORDS):
    assert list(vectors) == list(expected)
    for word, vec in expected.items():
        assert vectors[word].dtype == np.float32
        np.testing.assert_array_equal(vectors[word], np.asarray(vec, np.float32))


# ------------------------------------------------------------------------- the formats


def test_word2vec_text_round_trip(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("\n".join(["3 3", *_lines(WORDS)]) + "\n", encoding="utf-8")
    _check(load_word_vectors(path))
    _check(load_word_vectors(str(path)))


def test_fasttext_vec_round_trip_with_trailing_spaces_and_crlf(tmp_path):
    path = tmp_path / "cc.vec"
    path.write_bytes("".join(f"{line} \r\n" for line in ["3 3", *_lines(WORDS)]).encode())
    _check(load_word_vectors(path))


def test_glove_text_without_header_round_trip(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("\n".join(_lines(WORDS)), encoding="utf-8")
    _check(load_word_vectors(path))


@pytest.mark.parametrize("newline", [True, False])
def test_word2vec_binary_round_trip_by_extension_and_by_sniffing(tmp_path, newline):
    (tmp_path / "vectors.bin").write_bytes(_binary(WORDS, newline))
    (tmp_path / "vectors.w2v").write_bytes(_binary(WORDS, newline))
    _check(load_word_vectors(tmp_path / "vectors.bin"))
    _check(load_word_vectors(tmp_path / "vectors.w2v"))  # no extension: the bytes tell
    _check(load_word_vectors(tmp_path / "vectors.w2v", binary=True))


def test_binary_file_larger_than_a_read_chunk(tmp_path, monkeypatch):
    import irdialog.embed._word_vectors as wv

    monkeypatch.setattr(wv, "_BINARY_CHUNK", 7)  # records cut anywhere across reads
    rng = np.random.default_rng(0)
    vectors = {f"w{i}": rng.normal(size=5).astype(np.float32) for i in range(40)}
    (tmp_path / "v.bin").write_bytes(_binary(vectors))
    _check(load_word_vectors(tmp_path / "v.bin"), vectors)


def test_gzip_files(tmp_path):
    with gzip.open(tmp_path / "v.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(["3 3", *_lines(WORDS)]))
    (tmp_path / "v.bin.gz").write_bytes(gzip.compress(_binary(WORDS)))
    _check(load_word_vectors(tmp_path / "v.txt.gz"))
    _check(load_word_vectors(tmp_path / "v.bin.gz"))


def test_mapping(tmp_path):
    _check(load_word_vectors(WORDS))
    _check(load_word_vectors({w: np.asarray(v, np.float64) for w, v in WORDS.items()}))


@pytest.mark.parametrize("kind", ["text", "glove", "binary", "mapping"])
def test_vocabulary_keeps_only_its_words_in_any_script(tmp_path, kind):
    path = tmp_path / "v"
    if kind == "text":
        path.write_text("\n".join(["3 3", *_lines(WORDS)]), encoding="utf-8")
    elif kind == "glove":
        path.write_text("\n".join(_lines(WORDS)), encoding="utf-8")
    elif kind == "binary":
        path.write_bytes(_binary(WORDS))
    source = WORDS if kind == "mapping" else path
    kept = load_word_vectors(source, vocabulary={"你好", "naïve", "absent"})
    _check(kept, {w: WORDS[w] for w in ("你好", "naïve")})
    assert load_word_vectors(source, vocabulary=set()) == {}


def test_with_a_vocabulary_the_other_lines_are_not_parsed(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("3 2\nkeep 1 2\nother 1 x y\nalso 3 4\n", encoding="utf-8")
    assert list(load_word_vectors(path, vocabulary={"keep", "also"})) == ["keep", "also"]
    with pytest.raises(ValueError, match="line 3: 3 values"):
        load_word_vectors(path)


def test_a_repeated_word_keeps_its_first_vector(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("a 1 2\nb 3 4\na 5 6\n", encoding="utf-8")
    np.testing.assert_array_equal(load_word_vectors(path)["a"], [1, 2])


# ------------------------------------------------------------------------- the errors


@pytest.mark.parametrize(
    "text, match",
    [
        ("2 3\nhello 1 2 3\nbye 1 2\n", r"line 3: 2 values after the word 'bye', expected 3"),
        ("hello 1 2 3\nbye 1 2 3 4\n", r"line 2: 4 values after the word 'bye', expected 3"),
        ("2 2\nhello 1 x\nbye 1 2\n", r"line 2: 'x' is not a number"),
        ("hello 1 nan\n", r"line 1: a value is not finite"),
        ("3 2\nhello 1 2\nbye 1 2\n", r"header announces 3 words, the file holds 2"),
        ("2 0\n", r"line 1: the header gives vectors of 0 values"),
        ("\n \n", r"holds no word vector"),
        ("hello\n", r"line 1: a word without values"),
    ],
)
def test_text_errors_name_file_and_line(tmp_path, text, match):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match) as info:
        load_word_vectors(path)
    assert str(path) in str(info.value)


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("a 1 2\nna\xefve 1 2\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.txt, line 2: not UTF-8"):
        load_word_vectors(path)


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "empty.vec").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty.vec: the file is empty"):
        load_word_vectors(tmp_path / "empty.vec")
    with pytest.raises(FileNotFoundError, match="nowhere.vec"):
        load_word_vectors(tmp_path / "nowhere.vec")
    with pytest.raises(TypeError, match="a path or a dict"):
        load_word_vectors(3)


def test_binary_errors_name_file_and_word(tmp_path):
    data = _binary(WORDS)
    (tmp_path / "cut.bin").write_bytes(data[:-6])
    with pytest.raises(ValueError, match=r"cut.bin, word 3 \(byte \d+\): the file ends before"):
        load_word_vectors(tmp_path / "cut.bin")
    (tmp_path / "fasttext.bin").write_bytes(b"\xba\x16\x4f\x2f\x0c\x00\x00\x00" * 8)
    with pytest.raises(ValueError, match=r"fasttext.bin, line 1: not a word2vec binary"):
        load_word_vectors(tmp_path / "fasttext.bin")


def test_mapping_errors_name_the_word():
    with pytest.raises(ValueError, match=r"'b': 2 values, where the first vector has 3"):
        load_word_vectors({"a": [1, 2, 3], "b": [1, 2]})
    with pytest.raises(ValueError, match=r"'a': expected a 1-d array of numbers"):
        load_word_vectors({"a": [["x"]]})
    with pytest.raises(ValueError, match="holds no word vector"):
        load_word_vectors({})


# ------------------------------------------------------------------------- the models

X = ["hi there friend", "bye now friend", "hello you there", "see you later"]
Y = ["hello", "goodbye", "hello", "goodbye"]
DIM = 6


def _make(cls, **params):
    common = dict(embedding_dim=DIM, random_state=0)
    if cls is SupervisedEmbeddingRanker:
        common.update(n_negatives=1, epochs=2)
    elif cls in (MemN2NRanker, QRNRanker):
        common.update(epochs=2, batch_size=2)
    else:
        common.update(hidden_size=4, epochs=2, batch_size=2)
    return cls(**{**common, **params})


def _vectors():
    rng = np.random.default_rng(7)
    words = ["hi", "bye", "friend", "goodbye", "not-in-the-data", "你好"]
    return {w: rng.normal(size=DIM).astype(np.float32) for w in words}


def _word_matrices(model, which="U"):
    """The fitted word embedding matrices of a model, each (n_words, dim)."""
    if isinstance(model, SupervisedEmbeddingRanker):
        return [model.input_embeddings_, model.response_embeddings_]
    E = model.embeddings_
    return list(E) if E.ndim == 3 else [E]


MODELS = [
    SupervisedEmbeddingRanker,
    MemN2NRanker,
    QRNRanker,
    RecurrentReader,
    DualEncoderRanker,
]


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_frozen_embeddings_are_the_given_vectors_after_fit(cls, tmp_path):
    vectors = _vectors()
    path = tmp_path / "v.vec"
    path.write_text("\n".join([f"{len(vectors)} {DIM}", *_lines(vectors)]), encoding="utf-8")
    for source in (vectors, str(path)):
        model = _make(cls, initial_embeddings=source, freeze_embeddings=True).fit(X, Y)
        index = model.vocabulary_.index_
        found = [w for w in vectors if w in index]
        assert {"hi", "bye", "friend"} <= set(found)
        for E in _word_matrices(model):
            for w in found:
                np.testing.assert_array_equal(E[index[w]], vectors[w])
        # the other words learn
        free = _make(cls).fit(X, Y)
        assert not np.array_equal(_word_matrices(model)[0], _word_matrices(free)[0])


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_training_starts_from_the_vectors_and_moves_them(cls):
    vectors = _vectors()
    if cls is SupervisedEmbeddingRanker:  # epochs >= 1: the kernel's starting tables
        model = _make(cls, initial_embeddings=vectors)
        problem = model._training_problem(check_contexts(X), Y, np.random.RandomState(0))
        start = [problem["params"].U, problem["params"].V]
    else:
        model = _make(cls, initial_embeddings=vectors, epochs=0).fit(X, Y)
        start = _word_matrices(model)
    index = model.vocabulary_.index_
    for E in start:
        np.testing.assert_array_equal(E[index["hi"]], vectors["hi"])
    trained = _make(cls, initial_embeddings=vectors, learning_rate=0.05).fit(X, Y)
    assert not np.array_equal(_word_matrices(trained)[0][index["hi"]], vectors["hi"])


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_words_the_vectors_lack_start_as_without_vectors(cls):
    # vectors of no word of the data: the fit is bit for bit the fit without vectors
    absent = {"absent-word": np.ones(DIM, np.float32)}
    plain = _make(cls).fit(X, Y)
    with_absent = _make(cls, initial_embeddings=absent, freeze_embeddings=True).fit(X, Y)
    for a, b in zip(_word_matrices(plain), _word_matrices(with_absent)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(plain.decision_function(X), with_absent.decision_function(X))


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_clone_and_get_params_keep_the_argument_as_given(cls, tmp_path):
    vectors = _vectors()
    for source in (vectors, str(tmp_path / "v.vec")):
        model = _make(cls, initial_embeddings=source, freeze_embeddings=True)
        params = clone(model).get_params()
        assert params["freeze_embeddings"] is True
        if isinstance(source, str):
            assert params["initial_embeddings"] == source
        else:
            assert params["initial_embeddings"].keys() == vectors.keys()


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_dimension_mismatch_and_freeze_without_vectors(cls):
    wrong = {"hi": np.ones(DIM + 2)}
    with pytest.raises(ValueError, match=rf"have {DIM + 2} values.*embedding_dim is {DIM}"):
        _make(cls, initial_embeddings=wrong).fit(X, Y)
    with pytest.raises(ValueError, match="freeze_embeddings=True .* pass initial_embeddings"):
        _make(cls, freeze_embeddings=True).fit(X, Y)
    with pytest.raises(ValueError, match="initial_embeddings"):
        _make(cls, initial_embeddings=3).fit(X, Y)  # neither a path nor a mapping


def test_supervised_embeddings_fit_chunks_and_ppmi_svd_take_the_vectors():
    vectors = _vectors()
    chunked = _make(SupervisedEmbeddingRanker, initial_embeddings=vectors, freeze_embeddings=True)
    chunked.fit_chunks([(X[:2], Y[:2]), (X[2:], Y[2:])])
    ppmi = _make(
        SupervisedEmbeddingRanker,
        init="ppmi-svd",
        initial_embeddings=vectors,
        freeze_embeddings=True,
    ).fit(X, Y)
    for model in (chunked, ppmi):
        index = model.vocabulary_.index_
        np.testing.assert_array_equal(model.input_embeddings_[index["bye"]], vectors["bye"])
        np.testing.assert_array_equal(model.response_embeddings_[index["bye"]], vectors["bye"])


def test_dual_encoder_fit_chunks_takes_the_vectors():
    vectors = _vectors()
    model = _make(DualEncoderRanker, initial_embeddings=vectors, freeze_embeddings=True)
    model.fit_chunks([(X[:2], Y[:2]), (X[2:], Y[2:])])
    index = model.vocabulary_.index_
    for w in ("hi", "bye", "goodbye"):
        np.testing.assert_array_equal(model.embeddings_[index[w]], vectors[w])


def test_memn2n_unseen_words_keep_their_pretrained_vectors():
    vectors = {"goodbye": np.full(DIM, 0.5, np.float32), "later": np.ones(DIM, np.float32)}
    cands = ["hello", "goodbye", "see you later", "ciao"]
    model = MemN2NRanker(
        embedding_dim=DIM, candidates=cands, candidate_words=True, unseen_std=1.0, epochs=1,
        initial_embeddings=vectors, freeze_embeddings=True, random_state=0,
    ).fit(["hi there", "bye now"], ["hello", "goodbye"])  # fmt: skip
    index = model.vocabulary_.index_
    for E in model.embeddings_:
        np.testing.assert_array_equal(E[index["later"]], vectors["later"])
        assert np.abs(E[index["ciao"]]).max() > 0  # unseen, no vector: drawn


# ------------------------------------------------------------------------- the toy task


def _toy_task(seed):
    """Inputs of three words of one class out of two (12 words each, in several scripts),
    each answered by that class's response; the test inputs are word triples that no
    training input holds. Vectors that encode the task give every word of a class, and
    its response's word, one direction (plus a little noise)."""
    rng = np.random.default_rng(seed)
    classes = {
        "answer_one": [f"a{i}" for i in range(8)] + ["甲", "乙", "αλφα", "один"],
        "answer_two": [f"b{i}" for i in range(8)] + ["丙", "丁", "βήτα", "два"],
    }

    def examples(n):
        X, y = [], []
        for _ in range(n):
            label = ["answer_one", "answer_two"][rng.integers(2)]
            X.append(" ".join(rng.choice(classes[label], 3, replace=False)))
            y.append(label)
        return X, y

    X_train, y_train = examples(40)
    seen = set(X_train)
    X_test, y_test = [], []
    while len(X_test) < 200:
        X, y = examples(1)
        if X[0] not in seen:
            X_test += X
            y_test += y
    directions = {"answer_one": np.eye(DIM)[0], "answer_two": np.eye(DIM)[1]}
    vectors = {}
    for label, words in classes.items():
        for w in [*words, label]:
            vectors[w] = (directions[label] + 0.1 * rng.normal(size=DIM)).astype(np.float32)
    return X_train, y_train, X_test, y_test, vectors


@pytest.mark.parametrize(
    "cls, params",
    [
        (SupervisedEmbeddingRanker, dict(n_negatives=1, epochs=1, learning_rate=0.01)),
        (MemN2NRanker, dict(epochs=1, hops=1, batch_size=8)),
    ],
    ids=lambda p: getattr(p, "__name__", ""),
)
def test_vectors_that_encode_the_task_beat_a_random_start_after_one_epoch(cls, params):
    wins = 0
    for seed in range(3):
        X_train, y_train, X_test, y_test, vectors = _toy_task(seed)
        scores = []
        for start in (None, vectors):
            model = cls(embedding_dim=DIM, initial_embeddings=start, random_state=seed, **params)
            scores.append(model.fit(X_train, y_train).score(X_test, y_test))
        random_start, pretrained = scores
        assert pretrained >= 0.95, (seed, scores)
        wins += pretrained >= random_start + 0.2
    assert wins >= 2
