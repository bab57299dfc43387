"""SubwordTokenizer: byte-pair units learned from the characters of texts, on any script,
with spaces or without, held to a plain implementation of byte-pair encoding."""

import random
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from irdialog import SupervisedEmbeddingRanker, TfidfRanker
from irdialog.ensemble import LearningToRankRanker
from irdialog.persist import load, save
from irdialog.text import (
    Analyzer,
    SubwordTokenizer,
    UnigramTokenizer,
    char_tokenize,
    is_punctuation,
)

# A made-up script: letters of the Private Use Area, one with a combining mark after it.
INVENTED = ["\ue000", "\ue001", "\ue002\u0301", "\ue003"]


def reference_units(texts, n_merges, min_count=2):
    """Byte-pair encoding as written in the paper: count every adjacent pair of every
    segment (runs between white space and punctuation, each distinct text once), merge the
    most frequent pair (ties to the smaller pair of strings) left to right, repeat."""
    segments = Counter()
    for text in dict.fromkeys(texts):
        for chunk in text.lower().split():
            run = []
            for c in char_tokenize(chunk, lowercase=False):
                if is_punctuation(c[0]):
                    segments[tuple(run)] += bool(run)
                    run = []
                else:
                    run.append(c)
            segments[tuple(run)] += bool(run)
    words = [[list(s), n] for s, n in segments.items() if n]
    units = []
    for _ in range(n_merges):
        pairs = Counter()
        for symbols, n in words:
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += n
        if not pairs:
            break
        (a, b), count = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if count < min_count:
            break
        for word in words:
            symbols, merged, i = word[0], [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            word[0] = merged
        if a + b not in units:
            units.append(a + b)
    return units


def random_texts(alphabet, n, rng, max_len=30):
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_units_are_those_of_plain_byte_pair_encoding(seed):
    rng = random.Random(seed)
    # few letters, so that runs ("aaaa"), ties and pairs made two ways ("ab"+"c", "a"+"bc") occur
    alphabet = ["a", "b", "c", "a", " ", ".", *INVENTED[:2]]
    texts = random_texts(alphabet, 40, rng)
    for n_merges, min_count in [(1, 2), (10, 2), (200, 2), (50, 1), (30, 4)]:
        got = SubwordTokenizer(n_merges, min_count=min_count).fit(texts).units_
        assert got == reference_units(texts, n_merges, min_count), (n_merges, min_count)


def test_units_do_not_depend_on_the_order_of_the_texts():
    rng = random.Random(0)
    texts = random_texts(list("abcdeab"), 60, rng)
    units = SubwordTokenizer(40).fit(texts).units_
    rng.shuffle(texts)
    assert SubwordTokenizer(40).fit(texts + texts[:5]).units_ == units
    assert len(units) == len(set(units)) > 10


def test_on_text_without_spaces_it_learns_the_words():
    words = ["policy", "renew", "online", "insurance", "life", "pays", "the", "my", "can", "i"]
    rng = random.Random(1)
    texts = ["".join(rng.choice(words) for _ in range(8)) for _ in range(300)]
    tokenizer = SubwordTokenizer(30).fit(texts)
    assert {"policy", "renew", "online", "insurance"} <= set(tokenizer.units_)
    assert tokenizer("canirenewmypolicyonline?") == ["can", "i", "renew", "my", "policy",
                                                     "online", "?"]  # fmt: skip
    # merged further, it learns the pairs of words seen most
    assert "lifeinsurance" in SubwordTokenizer(60).fit(texts).units_


@pytest.mark.parametrize(
    "texts, text",
    [
        (["我想订一张桌子", "我想订一家餐厅", "请问一张桌子几位", "我想订两张桌子"],
         "我想订一张大桌子。"),
        (["ที่นี่มีห้องว่างไหม", "ที่นี่มีอาหารไหม", "มีห้องว่างไหม"], "ที่นี่มีห้องไหม"),
        (["".join(INVENTED * 3), "".join(INVENTED[::-1] * 2), "".join(INVENTED[:3])],
         "".join(INVENTED[1:] + INVENTED)),
    ],
    ids=["chinese", "thai", "invented"],
)  # fmt: skip
def test_any_script_keeps_its_characters_and_marks(texts, text):
    tokenizer = SubwordTokenizer(20).fit(texts)
    tokens = tokenizer(text)
    assert "".join(tokens) == text  # nothing lost, nothing reordered
    assert len(tokens) < len(char_tokenize(text))  # units longer than a character were used
    chars = set(char_tokenize(text))
    for token in tokens:  # a combining mark never starts a token (Thai signs, the invented mark)
        assert char_tokenize(token)[0] in chars


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=20), max_size=8), st.text(max_size=30))
def test_tokens_are_the_text_without_its_white_space(texts, text):
    tokenizer = SubwordTokenizer(30, min_count=1).fit(texts)
    tokens = tokenizer(text)
    assert "".join(tokens) == "".join(text.split())
    assert all(t and not any(c.isspace() for c in t) for t in tokens)
    assert tokenizer(text) == tokens  # remembered, and the same again


def test_units_never_span_white_space_or_punctuation():
    tokenizer = SubwordTokenizer(100, min_count=1).fit(["ab ab, ab.ab", "ab!ab"] * 3)
    assert tokenizer.units_ == ["ab"]
    assert tokenizer("ab ab,ab") == ["ab", "ab", ",", "ab"]


def test_it_learns_from_lower_cased_texts_unless_told():
    assert SubwordTokenizer(5).fit(["ABab", "AbaB"]).units_ == ["ab", "abab"]
    assert SubwordTokenizer(5, lowercase=False).fit(["ABab", "AbaB"]).units_ == []


def test_errors_name_what_was_wrong():
    with pytest.raises(NotFittedError, match="call fit"):
        SubwordTokenizer()("abc")
    with pytest.raises(ValueError, match="n_merges must be an int >= 0, got -1"):
        SubwordTokenizer(-1).fit(["ab"])
    with pytest.raises(ValueError, match="min_count must be an int >= 1, got 0"):
        SubwordTokenizer(min_count=0).fit(["ab"])
    with pytest.raises(TypeError, match="single str"):
        SubwordTokenizer().fit("abab")
    with pytest.raises(TypeError, match=r"texts\[1\] .* must be a str, got int"):
        SubwordTokenizer().fit(["ab", 3])
    with pytest.raises(TypeError, match="expects a str, got bytes"):
        SubwordTokenizer(min_count=1).fit(["ab"])(b"ab")


def test_an_analyzer_reads_its_units_as_words():
    tokenizer = SubwordTokenizer(12).fit(["renewpolicy", "renewonline", "policyonline"])
    words = Analyzer(tokenizer=tokenizer, ngram_range=(1, 2)).words("RenewPolicy!")
    assert words == ("renew", "policy", "!", "renew policy", "policy !")


TRAIN_X = ["howdoirenewmypolicy", "whatdoeslifeinsurancepay", "canirenewonline",
           "whogetsthelifeinsurancebenefit"] * 3  # fmt: skip
TRAIN_Y = ["yourenewyourpolicyonline", "lifeinsurancepaysadeathbenefit",
           "yourenewyourpolicyonline", "thebeneficiarygetsthebenefit"] * 3  # fmt: skip


def test_models_with_it_clone_and_round_trip(tmp_path):
    tokenizer = SubwordTokenizer(40).fit(TRAIN_X + TRAIN_Y)
    for model in [
        TfidfRanker(tokenizer=tokenizer),
        SupervisedEmbeddingRanker(tokenizer=tokenizer, embedding_dim=8, epochs=3, random_state=0),
        LearningToRankRanker(tokenizer=tokenizer, n_estimators=5, min_child_samples=2,
                             random_state=0),
    ]:  # fmt: skip
        model.fit(TRAIN_X, TRAIN_Y)
        twin = clone(model).fit(TRAIN_X, TRAIN_Y)
        save(model, tmp_path / "model.npz")
        again = load(tmp_path / "model.npz")
        assert again.tokenizer is not tokenizer and again.tokenizer.units_ == tokenizer.units_
        queries = ["renewpolicyonline", "lifeinsurancebenefit"]
        expected = model.decision_function(queries)
        np.testing.assert_array_equal(twin.decision_function(queries), expected)
        np.testing.assert_array_equal(again.decision_function(queries), expected)
    assert model.predict(["renewmypolicyonline"])[0] == "yourenewyourpolicyonline"


# -- UnigramTokenizer: SentencePiece's unigram model ------------------------------------------

# Sentences of a small vocabulary written without spaces: the unigram model's most likely
# split of a new one is, nearly piece for piece, its words.
WORDS = ["renew", "policy", "online", "life", "insurance", "benefit", "claim", "pay", "the",
         "your", "how", "can"]  # fmt: skip


def word_sentences(n, seed):
    rng = random.Random(seed)
    return [[rng.choice(WORDS) for _ in range(rng.randint(3, 7))] for _ in range(n)]


NO_SPACE_TEXTS = ["".join(words) for words in word_sentences(300, 0)] + TRAIN_X + TRAIN_Y


def test_unigram_pieces_cover_the_text_and_recover_its_words():
    pytest.importorskip("sentencepiece")
    tokenizer = UnigramTokenizer(40).fit(NO_SPACE_TEXTS)
    pieces = [p for words in word_sentences(50, 1) for p in tokenizer("".join(words))]
    assert np.mean([p in WORDS for p in pieces]) > 0.9
    for text in ["HowDoIRenewMyPolicy?", "the life insurance   benefit", "我想订桌子"]:
        pieces = tokenizer(text)
        assert "".join(pieces) == "".join(text.lower().split())  # nothing lost but spaces
        assert all(pieces) and not any(c.isspace() for piece in pieces for c in piece)
    # characters never seen in training come out one by one, not as one unknown piece
    assert tokenizer("我想订桌子") == list("我想订桌子")
    assert tokenizer("renewmypolicyonline") == ["renew", "m", "y", "policy", "online"]


def test_unigram_fits_repeat_and_follow_lowercase():
    pytest.importorskip("sentencepiece")
    one, two = UnigramTokenizer(40).fit(NO_SPACE_TEXTS), UnigramTokenizer(40).fit(NO_SPACE_TEXTS)
    np.testing.assert_array_equal(one.model_, two.model_)
    assert one("RENEW") == one("renew")
    cased = UnigramTokenizer(60, lowercase=False).fit(NO_SPACE_TEXTS)
    assert "".join(cased("RENEW")) == "RENEW"


def test_unigram_models_clone_and_round_trip(tmp_path):
    pytest.importorskip("sentencepiece")
    tokenizer = UnigramTokenizer(40).fit(NO_SPACE_TEXTS)
    model = TfidfRanker(tokenizer=tokenizer).fit(TRAIN_X, TRAIN_Y)
    twin = clone(model).fit(TRAIN_X, TRAIN_Y)
    save(model, tmp_path / "model.npz")
    again = load(tmp_path / "model.npz")
    assert again.tokenizer is not tokenizer
    np.testing.assert_array_equal(again.tokenizer.model_, tokenizer.model_)
    queries = ["renewpolicyonline", "lifeinsurancebenefit"]
    expected = model.decision_function(queries)
    np.testing.assert_array_equal(twin.decision_function(queries), expected)
    np.testing.assert_array_equal(again.decision_function(queries), expected)
    assert model.predict(["renewmypolicyonline"])[0] == "yourenewyourpolicyonline"


def test_unigram_errors_name_what_is_wrong(monkeypatch):
    pytest.importorskip("sentencepiece")
    with pytest.raises(NotFittedError, match="not fitted yet"):
        UnigramTokenizer()("abc")
    with pytest.raises(ValueError, match="vocab_size must be an int >= 1"):
        UnigramTokenizer(0).fit(["ab"])
    with pytest.raises(ValueError, match="max_piece_length must be an int >= 1"):
        UnigramTokenizer(max_piece_length=2.5).fit(["ab"])
    with pytest.raises(TypeError, match="a single str"):
        UnigramTokenizer().fit("abab")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        UnigramTokenizer().fit(["ab", 3])
    with pytest.raises(ValueError, match="no character"):
        UnigramTokenizer().fit(["", "  "])
    assert UnigramTokenizer(9).fit(["abcdefgh"])("abcd") == list("abcd")  # a short text
    with pytest.raises(ValueError, match="cannot hold the 8 distinct characters"):
        UnigramTokenizer(8).fit(["abcdefgh"])
    with pytest.raises(ValueError, match="cannot hold the 9 distinct characters"):
        UnigramTokenizer(9).fit(["abcd efgh"])
    assert UnigramTokenizer(10).fit(["abcd efgh"])("abc") == list("abc")
    with pytest.raises(TypeError, match="expects a str"):
        UnigramTokenizer(40).fit(NO_SPACE_TEXTS)(b"ab")
    monkeypatch.setitem(sys.modules, "sentencepiece", None)
    with pytest.raises(ImportError, match=r"irdialog\[subword\]"):
        UnigramTokenizer().fit(["ab"])
