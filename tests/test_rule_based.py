import random

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import CITIES, TINY_KB, make_tiny_dialogs

from irdialog import RuleBasedRanker
from irdialog.base import Context, Turn


class TestRuleBasedConformance(RankerConformance):
    param_grid = {"slots": [("R_location",), ("R_location", "R_cuisine")]}

    def make_estimator(self):
        return RuleBasedRanker(kb=TINY_KB, slots=("R_location",))


def _booking(cuisine, city, results=(), query="<SILENCE>", extra=()):
    """A restaurant dialog up to the API call, then the given results and extra turns."""
    history = (
        Turn("user", "hi"),
        Turn("bot", "hello"),
        Turn("user", f"a table with {cuisine} food in {city}"),
        Turn("bot", "ok let me look"),
        Turn("user", "<SILENCE>"),
        Turn("bot", f"api_call {cuisine} {city}"),
    )
    for name, rating in results:
        history += (
            Turn("kb", f"{name} R_phone {name}_phone"),
            Turn("kb", f"{name} R_rating {rating}"),
        )
    return Context(history=history + tuple(extra), query=query)


KB = {
    **{c: "R_cuisine" for c in ("italian", "thai", "korean")},
    **{c: "R_location" for c in ("paris", "rome", "seoul")},
    **{f"r{i}": "R_name" for i in range(6)},
    **{f"r{i}_phone": "R_phone" for i in range(6)},
    **{str(i): "R_rating" for i in range(1, 9)},
}
SLOTS = ("R_cuisine", "R_location")


def _kb_training_set():
    """Three dialogs of each step: the API call, the first option, a rejection and the
    next option, and the phone number of the accepted restaurant."""
    X, y = [], []
    for cuisine, city, names in [("italian", "paris", "r0 r1"), ("thai", "rome", "r2 r3")]:
        first, second = names.split()
        before_call = Context(history=_booking(cuisine, city).history[:-1], query="<SILENCE>")
        X.append(before_call)
        y.append(f"api_call {cuisine} {city}")
        results = [(first, 3), (second, 7)]
        X.append(_booking(cuisine, city, results))
        y.append(f"what about {second}")
        proposed = (Turn("bot", f"what about {second}"),)
        X.append(_booking(cuisine, city, results, "no", proposed))
        y.append("let me look again")
        again = proposed + (Turn("user", "no"), Turn("bot", "let me look again"))
        X.append(_booking(cuisine, city, results, "<SILENCE>", again))
        y.append(f"what about {first}")
        accepted = again + (Turn("user", "<SILENCE>"), Turn("bot", f"what about {first}"))
        X.append(_booking(cuisine, city, results, "the phone please", accepted))
        y.append(f"here it is {first}_phone")
    return X, y


def _candidates(y):
    names = [f"r{i}" for i in range(6)]
    return list(
        dict.fromkeys(
            y
            + [f"api_call {c} {p}" for c in ("italian", "thai", "korean") for p in CITIES[:3]]
            + [f"api_call {c} seoul" for c in ("italian", "thai", "korean")]
            + [f"what about {n}" for n in names]
            + [f"here it is {n}_phone" for n in names]
        )
    )


@pytest.fixture(scope="module")
def kb_bot():
    X, y = _kb_training_set()
    return RuleBasedRanker(kb=KB, candidates=_candidates(y), slots=SLOTS).fit(X, y)


def test_api_call_fills_slots_with_entities_never_seen_in_training(kb_bot):
    call = Context(history=_booking("korean", "seoul").history[:-1], query="<SILENCE>")
    assert kb_bot.predict([call])[0] == "api_call korean seoul"


def test_the_last_mention_of_a_slot_wins(kb_bot):
    history = _booking("korean", "seoul").history[:-1] + (
        Turn("user", "actually in paris"),
        Turn("bot", "ok let me look"),
    )
    assert kb_bot.predict([Context(history=history, query="<SILENCE>")])[0] == (
        "api_call korean paris"
    )


def test_options_come_best_rated_first_and_skip_those_proposed(kb_bot):
    results = [("r4", 2), ("r5", 8), ("r1", 5)]
    first = _booking("korean", "seoul", results)
    assert kb_bot.predict([first])[0] == "what about r5"
    again = (
        Turn("bot", "what about r5"),
        Turn("user", "no"),
        Turn("bot", "let me look again"),
    )
    assert kb_bot.predict([_booking("korean", "seoul", results, "<SILENCE>", again)])[0] == (
        "what about r1"
    )


def test_phone_of_the_restaurant_under_discussion(kb_bot):
    results = [("r4", 2), ("r5", 8)]
    accepted = (
        Turn("bot", "what about r5"),
        Turn("user", "no"),
        Turn("bot", "let me look again"),
        Turn("user", "<SILENCE>"),
        Turn("bot", "what about r4"),
    )
    context = _booking("korean", "seoul", results, "the phone please", accepted)
    assert kb_bot.predict([context])[0] == "here it is r4_phone"


def test_an_unseen_phrasing_backs_off_to_the_state(kb_bot):
    # "phone the please" was never seen: the same words in another order still match.
    accepted = (Turn("bot", "what about r4"),)
    context = _booking("korean", "seoul", [("r4", 2)], "phone the please", accepted)
    assert kb_bot.predict([context])[0] == "here it is r4_phone"


def test_scores_prefer_specific_rules_and_rank_candidates_agrees(kb_bot):
    X, _ = _kb_training_set()
    scores = kb_bot.decision_function(X)
    assert scores.max(axis=1).min() >= 4  # every training state is matched exactly
    lists = [list(kb_bot.candidates_[:7]) for _ in X]
    np.testing.assert_allclose(kb_bot.rank_candidates(X, lists), scores[:, :7])


def test_without_kb_it_is_a_lookup_table_of_utterances():
    X, y, _ = make_tiny_dialogs()
    bot = RuleBasedRanker().fit(X, y)
    assert bot.entity_types_ == {}
    assert bot.score(X, y) < 1.0  # the API calls name cities it cannot recognise
    assert RuleBasedRanker(kb=TINY_KB, slots=("R_location",)).fit(X, y).score(X, y) == 1.0


def test_the_same_predictions_after_shuffling_letters():
    """Nothing leans on English: permute the letters of every word, the KB included (the
    schema's relation names, such as R_rating, are labels and stay)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    perm = list(letters)
    random.Random(0).shuffle(perm)
    table = str.maketrans(letters, "".join(perm))

    def shuffle(text):
        return " ".join(w if w.startswith("R_") else w.translate(table) for w in text.split())

    def shuffle_context(c):
        history = tuple(Turn(t.speaker, shuffle(t.text)) for t in c.history)
        return Context(history=history, query=shuffle(c.query))

    X, y = _kb_training_set()
    cands = _candidates(y)
    test = [_booking("korean", "seoul", [("r4", 2), ("r5", 8)])]
    bot = RuleBasedRanker(kb=KB, candidates=cands, slots=SLOTS).fit(X, y)
    shuffled = RuleBasedRanker(
        kb={shuffle(e): t for e, t in KB.items()},
        candidates=[shuffle(c) for c in cands],
        slots=SLOTS,
    ).fit([shuffle_context(x) for x in X], [shuffle(r) for r in y])
    expected = [shuffle(p) for p in bot.predict(test)]
    assert list(shuffled.predict([shuffle_context(x) for x in test])) == expected
    assert expected == [shuffle("what about r5")]


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"kb": {"paris": 3}}, TypeError, "kb must map str entities to str types"),
        ({"slots": ("R_location", 7)}, TypeError, r"slots\[1\] must be a str"),
        ({"kb": ["paris"]}, ValueError, "kb"),
    ],
)
def test_bad_parameters_are_named(params, error, match):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(error, match=match):
        RuleBasedRanker(**params).fit(X, y)
