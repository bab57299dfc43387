import pickle

import numpy as np
import pytest
from conformance import TransformerConformance
from conftest import CITIES
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from irdialog import TfidfRanker
from irdialog.base import Context, Turn
from irdialog.entities import EntityParser
from irdialog.text import tokenize

ENTITIES = ["Die Hard", "Die Hard 2", "Bruce Willis", "Hi, Mom!", "Hi Mom", "Ocean's Eleven", "!"]


def fitted(texts=("x",), **params):
    return EntityParser(ENTITIES, **params).fit(list(texts))


class TestEntityParserConformance(TransformerConformance):
    def make_estimator(self):
        # min_count=4 keeps some words of the tiny dialogs and drops others ("good morning",
        # said 3 times): the fit decides what transform outputs
        return EntityParser(CITIES, min_count=4)


def test_longest_match_left_to_right():
    p = fitted(min_count=1, texts=["die hard 3 is out"])
    assert p.parse("die hard 2") == ["ent:die_hard_2"]
    # "die hard" is the longest entity at "die"; "3" is a word seen in fit.
    assert p.parse("die hard 3") == ["ent:die_hard", "3"]
    # Left to right: "bruce willis" is consumed before "willis die hard" could start.
    assert p.parse("bruce willis die hard") == ["ent:bruce_willis", "ent:die_hard"]


def test_case_insensitive_and_punctuation_inside_names():
    p = fitted(min_count=1)
    # "in" was never seen in fit: dropped; "!" is an entity of its own.
    assert p.parse("BRUCE Willis in DIE HARD 2!") == ["ent:bruce_willis", "ent:die_hard_2", "ent:6"]
    assert p.parse("hi, mom!") == [p.entity_tokens_[3]]
    assert p.parse("ocean's eleven") == ["ent:ocean's_eleven"]
    assert [str(p.entity_names_[i]) for i in p.entity_ids("I liked HI, MOM! and hi mom")] == [
        "Hi, Mom!",
        "Hi Mom",
    ]


def test_entity_tokens_are_single_unique_tokens():
    p = fitted()
    tokens = list(p.entity_tokens_)
    assert len(set(tokens)) == len(tokens)
    for t in tokens:
        assert tokenize(t) == [t]
    # "Hi, Mom!" and "Hi Mom" share a slug; the punctuation-only "!" gets its id.
    assert tokens[3] == "ent:hi_mom" and tokens[4] == "ent:hi_mom_2"
    assert tokens[6] == "ent:6"


def test_rare_and_unknown_words_dropped_entities_kept():
    X = ["where is the cat"] * 4 + ["where is the dog"] * 5 + ["die hard"]
    p = EntityParser(ENTITIES).fit(X)  # min_count=5
    assert p.vocabulary_ == {"dog": 5, "is": 9, "the": 9, "where": 9}
    # "cat" (4 times) and "zebra" (never seen) are dropped; entities never are.
    assert p.parse("the cat and the zebra saw Die Hard 2") == ["the", "the", "ent:die_hard_2"]
    assert p.transform_text(["where is bruce willis", "cat"]) == [
        "where is ent:bruce_willis",
        "",
    ]


def test_counts_queries_and_responses_not_repeated_history():
    h = (Turn("user", "hello there"), Turn("bot", "hello there"))
    X = [Context(query="hello there"), Context(history=h, query="ok")]
    p = EntityParser(min_count=2).fit(X, ["hello there", "ok"])
    # history turns repeat earlier queries/responses and are not counted again
    assert p.vocabulary_ == {"hello": 2, "ok": 2, "there": 2}


def test_transform_keeps_speakers_history_and_annotations():
    ctx = Context(
        history=(Turn("user", "I loved Die Hard"), Turn("kb", "die hard starred bruce willis")),
        query="Who starred in it?",
        entities=(("x", "R_type"),),
    )
    p = EntityParser(ENTITIES, min_count=1).fit([ctx], ["Bruce Willis"])
    out = p.transform([ctx, "bruce willis"])
    assert [t.speaker for t in out[0].history] == ["user", "kb"]
    assert out[0].history[0].text == "ent:die_hard"
    assert out[0].history[1].text == "ent:die_hard starred ent:bruce_willis"
    assert out[0].query == "who starred in it ?"
    assert out[0].entities == ctx.entities
    assert out[1].query == "ent:bruce_willis"


def test_parse_is_idempotent():
    p = fitted(min_count=1, texts=["i liked die hard 2 and hi , mom !"])
    once = p.parse("I liked Die Hard 2 and Hi, Mom!")
    assert p.parse(" ".join(once)) == once


def test_entities_stay_whole_for_tfidf():
    X = ["i liked hi mom", "i liked die hard 2", "i liked hi, mom!"]
    y = ["Hi Mom", "Die Hard 2", "Hi, Mom!"]
    p = EntityParser(ENTITIES, min_count=1).fit(X, y)
    model = TfidfRanker().fit(p.transform(X), p.transform_text(y))
    vocab = set(model.vectorizer_.vocabulary_)
    assert {"ent:hi_mom", "ent:hi_mom_2", "ent:die_hard_2"} <= vocab
    assert not {"hi", "mom", "die", "hard", "2"} & vocab  # no entity split into words
    # At word level "hi mom" and "hi , mom !" overlap; as entities they are distinct.
    scores = model.decision_function(p.transform(["I liked Hi Mom."]))[0]
    assert scores[0] > 0 and scores[2] == 0 and scores[1] == 0


def test_errors_clone_and_pickle():
    with pytest.raises(NotFittedError):
        EntityParser(ENTITIES).parse("x")
    with pytest.raises(ValueError, match="min_count"):
        EntityParser(min_count=0).fit(["x"])
    with pytest.raises(ValueError, match="'min_count' parameter"):
        EntityParser(min_count=2.5).fit(["x"])
    with pytest.raises(ValueError, match="min_count"):
        EntityParser(min_count=True).fit(["x"])
    with pytest.raises(TypeError, match="single str"):
        EntityParser("Die Hard").fit(["x"])
    with pytest.raises(TypeError, match=r"entities\[1\]"):
        EntityParser(["a", 3]).fit(["x"])
    p = fitted(min_count=1, texts=["bruce willis was here"])
    assert clone(p).get_params() == p.get_params()
    again = pickle.loads(pickle.dumps(p))
    assert again.parse("was Die Hard 2 here") == p.parse("was Die Hard 2 here")


def _brute_force_longest_match(words, names):
    keys = {tuple(n.split()): n for n in reversed(names)}  # first spelling wins
    longest = max(len(k) for k in keys)
    out, i = [], 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            if tuple(words[i : i + n]) in keys:
                out.append(keys[tuple(words[i : i + n])])
                i += n
                break
        else:
            i += 1
    return out


def test_prefix_matching_equals_brute_force_longest_match():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    names = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(3000)]
    p = EntityParser(names, min_count=1).fit(["x"])
    text = list(rng.choice(words, size=3000))
    found = [str(p.entity_names_[i]) for i in p.entity_ids(" ".join(text))]
    assert found == _brute_force_longest_match(text, names)
