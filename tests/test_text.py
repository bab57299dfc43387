import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irdialog.base import Context, Turn
from irdialog.text import (
    Analyzer,
    Vocabulary,
    check_ngram_range,
    context_tokens,
    learn_case_folding,
    tokenize,
)


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Mary moved to the bathroom.", ["mary", "moved", "to", "the", "bathroom", "."]),
        ("Where is Mary? ", ["where", "is", "mary", "?"]),
        ("north,west", ["north,west"]),
        ("i'm on it", ["i'm", "on", "it"]),
        ("<SILENCE>", ["<silence>"]),
        ("resto_rome_cheap_indian_6stars", ["resto_rome_cheap_indian_6stars"]),
        ("", []),
        ("   \t\r\n", []),
        ("...", [".", ".", "."]),
    ],
)
def test_tokenize_cases(text, tokens):
    assert tokenize(text) == tokens


def test_tokenize_hindi_keeps_combining_marks_and_splits_danda():
    # Devanagari vowel signs are combining marks (Mc/Mn): they must stay in their word.
    assert tokenize("मैरी बाथरूम में गई।") == ["मैरी", "बाथरूम", "में", "गई", "।"]


def test_tokenize_shuffled_letters_same_shape_as_english():
    assert len(tokenize("Yzpr yxbnvg sx smn ewsmnxxy.")) == len(
        tokenize("Mary moved to the bathroom.")
    )


def test_learn_case_folding_natural_languages_learn_nothing():
    english = ["Mary went home.", "Where is mary?", "Bill is tired.", "Where will bill go?"]
    # "Bill"/"will" alone would pair B with w; the words that pair as Unicode does win.
    assert learn_case_folding(english) == {}
    assert learn_case_folding(["मैरी घर गई।", "मैरी कहाँ है?"]) == {}  # no case at all
    assert learn_case_folding([]) == {}
    # English bAbI task 2: "Where"/"there" (no "where") is the only word seen both ways.
    assert learn_case_folding(["Where is the milk?", "John went there."]) == {}


def test_learn_case_folding_pairs_capitals_permuted_apart():
    texts = ["Qumit went home.", "Where is sumit?", "Qarah left.", "Why did sarah go?"]
    texts += ["Kason slept.", "Where is jason?", "Xill is tired.", "Where will xill go?"]
    folding = learn_case_folding(texts)
    assert folding == {"Q": "s", "K": "j"}  # X: one vote each for x and w, a tie
    assert tokenize("Qumit met Kason.", case_folding=folding) == tokenize("sumit met jason.")
    assert Analyzer(case_folding=folding).tokens("Qarah?") == ("sarah", "?")
    # Only with lowercase: a case-keeping tokenisation keeps the capitals.
    assert tokenize("Qumit", lowercase=False, case_folding=folding) == ["Qumit"]


def test_tokenize_rejects_non_str():
    with pytest.raises(TypeError, match="str"):
        tokenize(None)


@given(st.text())
def test_tokens_are_nonempty_and_spaceless(text):
    tokens = tokenize(text)
    assert all(tok and not any(ch.isspace() for ch in tok) for tok in tokens)
    # Nothing but whitespace is lost: the tokens' characters are the text's, in order.
    assert "".join(tokens) == "".join(ch for ch in text.lower() if not ch.isspace())


@given(st.text(alphabet=st.characters(categories=["P"]), min_size=1))
def test_punctuation_alone_is_one_token_per_character(text):
    bmp = "".join(
        ch for ch in text if ord(ch) <= 0xFFFF and unicodedata.category(ch).startswith("P")
    )
    assert tokenize(bmp) == list(bmp)


@given(st.lists(st.text(alphabet="abcxyz ", max_size=12), max_size=6))
def test_context_tokens_is_concatenation_of_turns(texts):
    history = tuple(Turn("user" if i % 2 else "bot", t) for i, t in enumerate(texts[:-1]))
    ctx = Context(history=history, query=texts[-1] if texts else "")
    assert context_tokens(ctx) == tokenize(ctx.text())
    assert context_tokens(ctx, use_history=False) == tokenize(ctx.query)


def test_vocabulary_nil_first_unknown_dropped():
    v = Vocabulary(extra_tokens=["<time:0>"]).fit([["b", "a"], ["a"]])
    assert v.tokens_ == ["<nil>", "<time:0>", "a", "b"]
    np.testing.assert_array_equal(v.encode(["a", "zzz", "b"]), [2, 3])
    bags = v.bags([["a", "a", "q"], []], binary=False)
    np.testing.assert_array_equal(bags.toarray(), [[0, 0, 2, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(v.bags([["a", "a"]], binary=True).toarray(), [[0, 0, 1, 0]])


def test_vocabulary_min_count():
    v = Vocabulary(min_count=2).fit([["a", "b"], ["a"]])
    assert "a" in v and "b" not in v


@pytest.mark.parametrize("bad", [(2, 1), (0, 1), (1, 2, 3), 2, (True, 2), (1.0, 2), "12"])
def test_check_ngram_range_names_the_bad_value(bad):
    with pytest.raises(ValueError, match=r"ngram_range must be a tuple .*got "):
        check_ngram_range(bad)
    assert check_ngram_range((np.int64(1), 3)) == (1, 3)
