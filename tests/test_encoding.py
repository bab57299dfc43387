"""The shared encoding layer (irdialog.text): tokenise once, encoded contexts, label encoding."""

from collections import Counter

import numpy as np
import pytest
from conftest import TINY_KB, make_tiny_dialogs
from hypothesis import given
from hypothesis import strategies as st

import irdialog.text as text
from irdialog.base import Context, Turn
from irdialog.embed import MemN2NRanker, SupervisedEmbeddingRanker
from irdialog.features import MatchTypeFeaturizer
from irdialog.metrics import gold_indices
from irdialog.text import (
    Analyzer,
    LabelIndex,
    Vocabulary,
    encode_contexts,
    encode_labels,
    is_punctuation,
    tokenize,
)

# --------------------------------------------------------------------------- tokenise once


class _CountingPattern:
    """Stands in for the tokenizer's regex: counts the texts it is asked to split."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.calls = Counter()

    def findall(self, s):
        self.calls[s] += 1
        return self.pattern.findall(s)


@pytest.fixture
def tokenizer_calls(monkeypatch):
    """Counter of tokenize() calls per (lower-cased) text, wherever tokenize is imported."""
    counting = _CountingPattern(text._TOKEN_RE)
    monkeypatch.setattr(text, "_TOKEN_RE", counting)
    return counting.calls


def test_analyzer_memoises_tokens_and_ngrams(tokenizer_calls):
    a = Analyzer(drop_punctuation=True, ngram_range=(1, 2))
    assert a.tokens("Where is Mary?") == ("where", "is", "mary")
    assert a.words("Where is Mary?") == ("where", "is", "mary", "where is", "is mary")
    assert a.words("Where is Mary?") is a.words("Where is Mary?")
    a.tokens("Where is Mary?")
    assert tokenizer_calls == {"where is mary?": 1}
    # a new analyzer (a new fit or call) starts afresh
    Analyzer().tokens("Where is Mary?")
    assert tokenizer_calls == {"where is mary?": 2}


def test_analyzer_ngrams_never_longer_than_the_text():
    a = Analyzer(ngram_range=(2, 3))
    assert a.words("a b c") == ("a b", "b c", "a b c")
    assert a.words("a") == ()
    assert a.words("") == ()


def test_analyzer_sequence_puts_each_ngram_at_its_first_token():
    a = Analyzer(ngram_range=(1, 3))
    assert a.sequence("a b c") == ("a", "a b", "a b c", "b", "b c", "c")
    assert a.sequence("a b c") is a.sequence("a b c")
    assert Analyzer(ngram_range=(2, 2)).sequence("a b c") == ("a b", "b c")
    assert Analyzer().sequence("a b") == Analyzer().tokens("a b")
    assert a.sequence("") == ()


def _annotated_tiny_dialogs():
    X, y, groups = make_tiny_dialogs()
    return MatchTypeFeaturizer(TINY_KB).fit().transform(X), y, groups


def _fit_memn2n(X, y, groups):
    model = MemN2NRanker(
        hops=1, embedding_dim=8, epochs=2, batch_size=4, candidate_words=True,
        early_stopping=True, validation_fraction=0.3, random_state=0,
    )  # fmt: skip
    return model.fit(X, y, groups=groups)


def _fit_se_match(X, y, groups):
    model = SupervisedEmbeddingRanker(
        embedding_dim=8, epochs=2, n_negatives=3, ngram_range=(1, 2), match_type="match",
        random_state=0,
    )  # fmt: skip
    return model.fit(X[:-6], y[:-6], X_val=X[-6:], y_val=y[-6:])


def _fit_se_type(X, y, groups):
    model = SupervisedEmbeddingRanker(
        embedding_dim=8, epochs=2, n_negatives=3, match_type="type", kb=TINY_KB,
        early_stopping=True, random_state=0,
    )  # fmt: skip
    return model.fit(X, y)


def _fit_se_chunks(X, y, groups):
    model = SupervisedEmbeddingRanker(embedding_dim=8, epochs=2, n_negatives=3, random_state=0)
    return model.fit_chunks([(X, y)])


@pytest.mark.parametrize("fit", [_fit_memn2n, _fit_se_match, _fit_se_type, _fit_se_chunks])
def test_a_fit_tokenises_each_text_once(fit, tokenizer_calls):
    X, y, groups = _annotated_tiny_dialogs()  # the featurizer tokenises, before counting
    tokenizer_calls.clear()
    model = fit(X, y, groups)
    texts = {t.text for c in X for t in c.history} | {c.query for c in X} | set(y)
    assert {c.query.lower() for c in X} <= set(tokenizer_calls) <= {t.lower() for t in texts}
    assert set(model.candidates_) <= set(tokenizer_calls)
    assert max(tokenizer_calls.values()) == 1, tokenizer_calls.most_common(3)
    # so does a scoring call
    tokenizer_calls.clear()
    model.rank_candidates(X[:4], [list(model.candidates_[:3]) + ["a new answer"]] * 4)
    assert max(tokenizer_calls.values()) == 1, tokenizer_calls.most_common(3)


# --------------------------------------------------------------------------- one punctuation policy


def test_punctuation_tokens_are_exactly_the_split_off_characters():
    tokens = tokenize("Où est Marie ? « Dans la cuisine », dit-il. मैरी गई।")
    assert [t for t in tokens if is_punctuation(t)] == ["?", "«", "»", ",", ".", "।"]
    assert "dit-il" in tokens  # inner punctuation stays in its word
    assert not is_punctuation("$") and not is_punctuation("north,west")


def test_drop_punctuation_any_script():
    a = Analyzer(drop_punctuation=True)
    assert a.tokens("मैरी बाथरूम में गई।") == ("मैरी", "बाथरूम", "में", "गई")
    assert a.tokens("¿Dónde está María?") == ("dónde", "está", "maría")


# --------------------------------------------------------------------------- encoded contexts


def _dialog():
    return [
        Context((Turn("user", "hi"), Turn("bot", "hello")), "a table"),
        Context((Turn("user", "hi"), Turn("bot", "hello"), Turn("user", "a table")), "hello"),
    ]


def test_each_distinct_sentence_is_encoded_once():
    X = _dialog()
    index = {"hi": 1, "hello": 2, "a": 3, "table": 4}
    enc = encode_contexts(X, tokenize, index)
    # sentences by text alone (no speakers): "a table", "hi", "hello"; the second query
    # "hello" is the bot turn's sentence
    assert enc.sptr.tolist() == [0, 2, 3, 4]
    assert enc.stok.tolist() == [3, 4, 1, 2]
    assert enc.qsent.tolist() == [0, 2]
    assert enc.mptr.tolist() == [0, 2, 5]
    assert enc.msent.tolist() == [1, 2, 1, 2, 0]
    assert len(enc) == 2
    for name in ("sptr", "qsent", "mptr", "msent", "eptr"):
        assert getattr(enc, name).dtype == np.int64
    for name in ("stok", "sspk", "eword", "etype"):
        assert getattr(enc, name).dtype == np.int32


def test_speakers_make_distinct_sentences_and_queries_have_none():
    X = _dialog()
    index = {"hi": 1, "hello": 2}
    enc = encode_contexts(X, tokenize, index, speakers={"user": 7, "bot": 8})
    # "hello" as a bot turn and as a query are two sentences; "a table" likewise
    assert len(enc.sptr) - 1 == 5
    assert enc.sspk[enc.qsent].tolist() == [0, 0]
    assert enc.sspk[enc.msent].tolist() == [7, 8, 7, 8, 7]


@pytest.mark.parametrize(
    "unknown, stok",
    [("drop", [1]), ("nil", [0, 1, 0]), ("add", [2, 1, 3])],
)
def test_unknown_words(unknown, stok):
    index = {"<nil>": 0, "b": 1}
    enc = encode_contexts([Context(query="a b c")], tokenize, index, unknown=unknown)
    assert enc.stok.tolist() == stok
    assert ("c" in index) == (unknown == "add")


def test_unknown_mode_is_checked():
    with pytest.raises(ValueError, match="unknown must be"):
        encode_contexts([Context(query="a")], tokenize, {}, unknown="keep")


@pytest.mark.parametrize("max_history, kept", [(None, 3), (0, 0), (2, 2), (3, 3), (10, 3)])
def test_max_history_keeps_the_most_recent_turns(max_history, kept):
    ctx = Context(tuple(Turn("user", w) for w in ["a", "b", "c"]), "q")
    index = {"a": 1, "b": 2, "c": 3, "q": 4}
    enc = encode_contexts([ctx], tokenize, index, max_history=max_history)
    words = enc.stok[enc.sptr[enc.msent]].tolist()
    assert words == [1, 2, 3][3 - kept :]


def test_entities_once_each_of_known_type_and_word():
    ctx = Context(
        query="x",
        entities=(("paris", "loc"), ("paris", "loc"), ("cheap", "price"), ("rome", "loc")),
    )
    enc = encode_contexts(
        [ctx, Context(query="y")], tokenize, {}, entity_types=["loc"], entity_words={"paris": 5}
    )
    assert enc.eptr.tolist() == [0, 1, 1]
    assert enc.eword.tolist() == [5] and enc.etype.tolist() == [0]
    none = encode_contexts([ctx], tokenize, {}, entity_words={"paris": 5})
    assert none.eptr.tolist() == [0, 0] and len(none.eword) == 0


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["a b", "b", "", "c a a", "zz"]), max_size=4),
            st.sampled_from(["a", "b c", "", "zz z"]),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_context_words_are_history_then_query(contexts):
    X = [Context(tuple(Turn("user", t) for t in hist), q) for hist, q in contexts]
    index = {"a": 1, "b": 2, "c": 3}
    indptr, ids = encode_contexts(X, tokenize, index).context_words()
    assert indptr.dtype == ids.dtype == np.int64
    for i, ctx in enumerate(X):
        expected = [index[w] for t in (*ctx.history, Turn("user", ctx.query)) for w in
                    tokenize(t.text) if w in index]  # fmt: skip
        assert ids[indptr[i] : indptr[i + 1]].tolist() == expected


# Devanagari (combining vowel signs, danda) and the same story with its letters shuffled by a
# fixed permutation: what is encoded must not depend on the language.
_HINDI = [
    Context((Turn("kb", "मैरी बाथरूम में गई।"), Turn("kb", "जॉन रसोई में गया।")), "मैरी कहाँ है?"),
    Context((Turn("kb", "जॉन बगीचे में गया।"),), "जॉन कहाँ है?"),
]
_ENGLISH = [
    Context((Turn("kb", "Mary went to the bathroom."), Turn("kb", "John went to the kitchen.")),
            "Where is Mary?"),
    Context((Turn("kb", "John went to the garden."),), "Where is John?"),
]  # fmt: skip
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_SHUFFLE = str.maketrans(_LETTERS + _LETTERS.upper(), "qwertyuiopasdfghjklzxcvbnm" * 2)


def _shuffled(X):
    return [
        Context(tuple(Turn(t.speaker, t.text.translate(_SHUFFLE)) for t in c.history),
                c.query.translate(_SHUFFLE))
        for c in X
    ]  # fmt: skip


def test_encoding_does_not_depend_on_the_letters():
    a = encode_contexts(_ENGLISH, Analyzer(drop_punctuation=True).tokens, {}, unknown="add")
    b = encode_contexts(
        _shuffled(_ENGLISH), Analyzer(drop_punctuation=True).tokens, {}, unknown="add"
    )
    for name in a.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert len(a.sptr) - 1 == 5  # five distinct sentences
    assert len(a.stok) == 3 + 5 + 5 + 3 + 5  # their words, punctuation dropped


def test_encoding_devanagari():
    index: dict[str, int] = {}
    enc = encode_contexts(_HINDI, Analyzer(drop_punctuation=True).tokens, index, unknown="add")
    assert len(enc.sptr) - 1 == 5
    assert len(enc.stok) == 3 + 4 + 4 + 3 + 4
    assert "।" not in index and "?" not in index
    assert {"बाथरूम", "कहाँ", "मैरी"} <= set(index)  # combining marks stay in their words


_ANSWERS = ["bathroom", "garden"]


@pytest.mark.parametrize("make", [MemN2NRanker, SupervisedEmbeddingRanker])
@pytest.mark.parametrize(
    "X, y",
    [
        (_HINDI, ["बाथरूम", "बगीचे"]),
        (_shuffled(_ENGLISH), [a.translate(_SHUFFLE) for a in _ANSWERS]),
    ],
    ids=["hindi", "shuffled"],
)
def test_models_fit_non_english_and_shuffled_text(make, X, y):
    model = make(epochs=30, random_state=0).fit(X * 5, y * 5)
    assert model.predict(X).tolist() == y
    assert len(model.vocabulary_) > 8


# --------------------------------------------------------------------------- labels


def test_label_index_keeps_order_and_first_duplicate():
    table = LabelIndex(["hello", "ok", "hello"])
    assert table.encode(["ok", "hello", "bye"]).tolist() == [1, 0, -1]
    assert table.encode([]).dtype == np.int64


def test_label_index_extends_in_order_of_first_appearance():
    table = LabelIndex(["a"])
    assert table.encode(["c", "a", "b", "c"], unknown="extend").tolist() == [1, 0, 2, 1]
    assert table.labels_ == ["a", "c", "b"]
    assert len(table) == 3
    assert table.encode(["b"]).tolist() == [2]


def test_unknown_labels_raise_a_clear_error():
    with pytest.raises(
        ValueError,
        match=r"2 distinct response\(s\) of y are not among the candidates \(2 of them\), "
        r"e\.g\. 'bye'\. Pick one\.",
    ):
        encode_labels(["ok", "bye", "bye", "ciao"], ["ok", "hi"], unknown="error", hint="Pick one.")


def test_label_errors_name_the_position_and_the_input():
    with pytest.raises(TypeError, match=r"y_val\[1\] must be a response string, got list"):
        encode_labels(["ok", ["ok"]], ["ok"], name="y_val")
    with pytest.raises(TypeError, match="single str"):
        encode_labels("ok", ["ok"])
    with pytest.raises(TypeError, match="single str"):
        LabelIndex("ok")
    with pytest.raises(ValueError, match="unknown must be one of"):
        encode_labels(["ok"], ["ok"], unknown="drop")


def test_metrics_gold_indices_is_the_shared_label_encoding():
    candidates = np.array(["hello", "ok", "api_call rome", "ok"], dtype=object)
    y = ["ok", "bye", "hello", "api_call rome"]
    np.testing.assert_array_equal(gold_indices(y, candidates), encode_labels(y, candidates))


def test_models_reject_unknown_gold_responses_clearly():
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match=r"1 distinct response\(s\) of y .* MemN2NRanker"):
        MemN2NRanker(candidates=list(dict.fromkeys(y))[:-1], epochs=1).fit(X, y)


def test_vocabulary_and_encoding_agree():
    X, _, _ = make_tiny_dialogs()
    analyzer = Analyzer()
    vocab = Vocabulary().fit(analyzer.tokens(c.query) for c in X)
    enc = encode_contexts(X, analyzer.tokens, vocab.index_, unknown="nil", max_history=0)
    got = [enc.stok[enc.sptr[s] : enc.sptr[s + 1]].tolist() for s in enc.qsent]
    assert got == [vocab.encode(analyzer.tokens(c.query)).tolist() for c in X]
    assert len(enc.msent) == 0
