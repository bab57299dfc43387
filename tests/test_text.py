import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irdialog.base import Context, Turn
from irdialog.text import (
    Analyzer,
    Vocabulary,
    char_tokenize,
    check_ngram_range,
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
def test_context_words_is_concatenation_of_turns(texts):
    history = tuple(Turn("user" if i % 2 else "bot", t) for i, t in enumerate(texts[:-1]))
    ctx = Context(history=history, query=texts[-1] if texts else "")
    assert Analyzer().context_words(ctx) == tokenize(ctx.text())
    assert Analyzer().context_words(ctx, use_history=False) == tokenize(ctx.query)
    chars = Analyzer(tokenizer="char")
    assert chars.context_words(ctx) == char_tokenize(ctx.text())


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


# --------------------------------------------------------------------------- tokenizers


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("我想订一张两个人的桌子", list("我想订一张两个人的桌子")),
        ("订 两 个", ["订", "两", "个"]),  # white space dropped
        ("Hi, YOU", ["h", "i", ",", "y", "o", "u"]),  # lower-cased, punctuation kept
        ("ที่นี่", ["ที่", "นี่"]),  # Thai: vowel and tone marks stay on their consonant
        ("नमस्ते", ["न", "म", "स्", "ते"]),  # Devanagari: the virama and matras too
        ("", []),
    ],
)
def test_char_tokenize(text, tokens):
    assert char_tokenize(text) == tokens


def test_the_word_tokenizer_reads_a_sentence_without_spaces_as_one_token():
    assert tokenize("我想订一张两个人的桌子") == ["我想订一张两个人的桌子"]
    assert Analyzer(tokenizer="char", ngram_range=(1, 2)).words("订桌子") == (
        "订", "桌", "子", "订 桌", "桌 子",
    )  # fmt: skip


def test_a_callable_tokenizer_gets_the_lower_cased_folded_text():
    seen = []

    def split(text):
        seen.append(text)
        return text.split("|")

    a = Analyzer(tokenizer=split, case_folding={"Q": "s"}, drop_punctuation=True)
    assert a.tokens("Qee|Ya|?") == ("see", "ya")
    assert seen == ["see|ya|?"]
    assert Analyzer(tokenizer=list).tokens("Ab c") == ("a", "b", " ", "c")


@pytest.mark.parametrize("bad", ["chars", "", None, 3, ("word",)])
def test_an_unknown_tokenizer_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="tokenizer must be one of 'char', 'word' or a callable"):
        Analyzer(tokenizer=bad)


@pytest.mark.parametrize("returned", ["a b", [1, 2], ["a", None]])
def test_a_callable_that_does_not_return_strings_is_refused(returned):
    with pytest.raises(TypeError, match="tokenizer must return a list of str"):
        Analyzer(tokenizer=lambda text: returned).tokens("x")


def test_case_folding_applies_to_every_tokenizer():
    for tokenizer in ("word", "char", str.split):
        a = Analyzer(tokenizer=tokenizer, case_folding={"Q": "s"})
        assert "".join(a.tokens("Qa")) == "sa", tokenizer


def test_stop_words_go_before_the_ngrams():
    a = Analyzer(stop_words={"the"}, ngram_range=(1, 2))
    assert a.words("the cat the dog") == ("cat", "dog", "cat dog")


def test_calling_an_analyzer_gives_its_words_without_memoising():
    a = Analyzer(tokenizer="char", ngram_range=(1, 2))
    assert a("订桌") == list(a.words("订桌"))
    b = Analyzer()
    assert b("A b") == ["a", "b"] and not b._tokens


def test_no_process_wide_cache_of_tokens():
    # Memoised per analyzer: nothing in the module caches texts across models.
    import functools

    import irdialog.text as text_module

    cached = [
        name
        for name, value in vars(text_module).items()
        if isinstance(value, functools._lru_cache_wrapper)
    ]
    assert cached == []
