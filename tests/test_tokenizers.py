"""The tokenizer= parameter of every text estimator, languages written without spaces, and
the one chunk protocol of the streaming fits."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import make_tiny_dialogs
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError
from test_sklearn_conventions import PUBLIC_ESTIMATORS

from irdialog import (
    BM25Ranker,
    DualEncoderRanker,
    EntityParser,
    KBMemoryRetriever,
    MemN2NRanker,
    NearestNeighborRanker,
    NGramClassifier,
    SupervisedEmbeddingRanker,
    TfidfRanker,
)
from irdialog.base import Turn, iter_chunks

TEXT_ESTIMATORS = [e for e in PUBLIC_ESTIMATORS if "tokenizer" in e.get_params(deep=False)]


def test_every_public_estimator_takes_a_tokenizer_defaulting_to_words():
    # compositions (a pipeline's steps, fused rankers) tokenise nothing themselves
    missing = [
        type(e).__name__
        for e in PUBLIC_ESTIMATORS
        if "tokenizer" not in e.get_params(deep=False)
        and not hasattr(e, "steps")
        and type(e).__name__ not in {"FusionRanker", "SeedEnsembleRanker"}
    ]
    assert missing == []
    assert all(e.get_params()["tokenizer"] == "word" for e in TEXT_ESTIMATORS)


@pytest.mark.parametrize("bad", ["chars", 3])
@pytest.mark.parametrize("estimator", TEXT_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_an_unknown_tokenizer_is_refused_by_name(estimator, bad):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(InvalidParameterError, match="'tokenizer' parameter") as error:
        clone(estimator).set_params(tokenizer=bad).fit(X, y)
    assert "callable" in str(error.value)
    assert "'char'" in str(error.value) and "'word'" in str(error.value)


def _without_spaces(X, y):
    # The tiny dialogs written without spaces, as Chinese or Thai are.
    def squeeze(text):
        return text.replace(" ", "")

    X = [
        replace(
            c,
            history=tuple(Turn(t.speaker, squeeze(t.text)) for t in c.history),
            query=squeeze(c.query),
        )
        for c in X
    ]
    return X, [squeeze(r) for r in y]


RANKERS = [
    TfidfRanker(),
    TfidfRanker(use_history=False),
    BM25Ranker(),
    NearestNeighborRanker(),
    # bags of characters are long: a step under the default's, which diverges on them
    SupervisedEmbeddingRanker(
        embedding_dim=8, epochs=5, n_negatives=3, learning_rate=0.002, random_state=0
    ),
    MemN2NRanker(hops=1, embedding_dim=8, epochs=2, batch_size=4, random_state=0),
    DualEncoderRanker(hidden_size=4, embedding_dim=4, epochs=1, random_state=0),
]


@pytest.mark.parametrize("ranker", RANKERS, ids=lambda e: type(e).__name__)
def test_char_is_the_list_of_characters_on_text_without_spaces(ranker):
    X, y, _ = make_tiny_dialogs()
    X, y = _without_spaces(X, y)
    named = clone(ranker).set_params(tokenizer="char").fit(X, y)
    listed = clone(ranker).set_params(tokenizer=list).fit(X, y)
    np.testing.assert_array_equal(named.decision_function(X), listed.decision_function(X))


def test_tfidf_on_text_without_spaces_needs_characters():
    X, y, _ = make_tiny_dialogs()
    X, y = _without_spaces(X, y)
    words = TfidfRanker(use_history=False).fit(X, y)
    chars = TfidfRanker(use_history=False, tokenizer="char", ngram_range=(1, 2)).fit(X, y)
    scores = words.decision_function(X)
    # a whole utterance is one word: a context matches a candidate only by identity
    assert set(np.unique(scores)) <= {0.0, 1.0}
    assert (chars.decision_function(X) > 0).sum() > (scores > 0).sum()


def test_character_ngrams_never_span_two_utterances():
    model = NearestNeighborRanker(use_history=True, tokenizer="char", ngram_range=(2, 2))
    X = [replace(make_tiny_dialogs()[0][1], history=(Turn("user", "ab"),), query="cd")]
    model.fit(X, ["x"])
    assert sorted(model.vectorizer_.vocabulary_) == ["a b", "c d"]


def test_the_other_text_estimators_read_characters():
    # Chinese entities found by character tokens; the KB hashed by character bigrams.
    parser = EntityParser(["北京"], min_count=1, tokenizer="char").fit(["我在北京"])
    assert parser.parse("我在北京") == ["我", "在", "ent:北_京"]
    assert parser.parse("北京的菜") == ["ent:北_京"]  # words unseen in fit are dropped
    kb = ["北京 有 意大利菜", "上海 有 川菜"]
    memory = KBMemoryRetriever(kb, tokenizer="char", ngram_range=(2, 2)).fit()
    assert [t.text for t in memory.transform(["北京的意大利菜"])[0].history] == [kb[0]]
    X = ["小明去了厨房。", "小红去了花园。"]
    model = NGramClassifier(tokenizer="char", ngram_range=(1, 2)).fit(X, ["厨房", "花园"])
    assert model.predict(["小明去了厨房。"])[0] == "厨房"


@pytest.mark.parametrize(
    "estimator",
    [
        TfidfRanker(),
        BM25Ranker(),
        SupervisedEmbeddingRanker(epochs=1),
        DualEncoderRanker(epochs=1, hidden_size=2, embedding_dim=2),
    ],
    ids=lambda e: type(e).__name__,
)
def test_every_streaming_fit_reads_one_chunk_protocol(estimator):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(TypeError, match="chunk 1 must have attributes X and y or be an"):
        clone(estimator).fit_chunks([(X, y), X])
    with pytest.raises(ValueError, match="X has 2 contexts but y has 1"):
        clone(estimator).fit_chunks([(X[:2], y[:1])])


def test_iter_chunks_takes_bunches_and_pairs():
    class Bunch:
        X = ["hi"]
        y = ["hello"]

    got = [(list(X), list(y)) for X, y in iter_chunks([Bunch(), (["yo"], ["hey"])])]
    assert [(len(X), y) for X, y in got] == [(1, ["hello"]), (1, ["hey"])]
    assert next(iter_chunks([(["hi"], None)], y_required=False))[1] is None
