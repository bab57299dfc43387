import numpy as np
import pytest
import scipy.sparse as sp
from conformance import TransformerConformance
from conftest import TINY_KB
from sklearn.base import clone

from irdialog import SupervisedEmbeddingRanker, make_ranking_pipeline
from irdialog.base import Context, Turn
from irdialog.features import (
    MatchTypeFeaturizer,
    match_type_matrices,
    match_type_pairs,
    rarity_kb,
)

KB = {"Paris": "R_location", "cheap": "R_price", "resto_1_phone": "R_phone"}


class TestMatchTypeFeaturizerConformance(TransformerConformance):
    def make_estimator(self):
        return MatchTypeFeaturizer(TINY_KB)


def test_entities_found_in_query_and_history():
    ctx = Context(history=(Turn("kb", "resto_1 R_phone resto_1_phone"),), query="cheap in PARIS")
    f = MatchTypeFeaturizer(KB).fit([ctx])
    assert f.transform([ctx])[0].entities == (
        ("resto_1_phone", "R_phone"),
        ("cheap", "R_price"),
        ("paris", "R_location"),
    )
    only_query = MatchTypeFeaturizer(KB, use_history=False).fit([ctx])
    assert {t for _, t in only_query.transform([ctx])[0].entities} == {"R_price", "R_location"}


def test_types_restriction_and_errors():
    f = MatchTypeFeaturizer(KB, types=["R_price"]).fit()
    assert f.transform(["cheap paris"])[0].entities == (("cheap", "R_price"),)
    with pytest.raises(ValueError, match="R_color"):
        MatchTypeFeaturizer(KB, types=["R_color"]).fit()
    with pytest.raises(ValueError, match="non-empty dict"):
        MatchTypeFeaturizer().fit()
    assert clone(f).get_params() == f.get_params()


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"types": "R_price"}, ValueError, "'types' parameter"),  # not its characters
        ({"types": ["R_price", 3]}, TypeError, r"types\[1\] must be a str"),
        ({"use_history": "no"}, ValueError, "'use_history' parameter"),
        ({"kb": [("paris", "R_location")]}, ValueError, "'kb' parameter"),
        ({"kb": {"paris": 1}}, TypeError, "kb must map str entities to str types, got 'paris': 1"),
        ({"kb": {("paris",): "R_location"}}, TypeError, "kb must map str entities"),
    ],
)
def test_parameter_errors(params, error, match):
    with pytest.raises(error, match=match):
        MatchTypeFeaturizer(**{"kb": KB, **params}).fit()


def test_match_matrices_against_brute_force():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    kb = {w: ("A" if i % 2 else "B") for i, w in enumerate(words[:8])}
    vocab = {w: i for i, w in enumerate(words)}
    cands = [list(rng.choice(words, size=3)) for _ in range(7)]
    bags = sp.csr_matrix(
        (
            [1.0] * 21,
            ([i for i in range(7) for _ in range(3)], [vocab[w] for c in cands for w in c]),
        ),
        shape=(7, 12),
    )
    feat = MatchTypeFeaturizer(kb).fit()
    contexts = feat.transform([" ".join(rng.choice(words, size=4)) for _ in range(5)])
    types = ["A", "B"]
    mats = match_type_matrices(contexts, bags, vocab, types)
    for k, t in enumerate(types):
        for i, ctx in enumerate(contexts):
            mentioned = {w for w, tt in ctx.entities if tt == t}
            for j, c in enumerate(cands):
                assert mats[k][i, j] == float(bool(mentioned & set(c)))
    pair_rows = bags[[0, 3, 6, 1, 2]]
    pairs = match_type_pairs(contexts, pair_rows, vocab, types)
    expected = np.stack([m.toarray()[np.arange(5), [0, 3, 6, 1, 2]] for m in mats], axis=1)
    np.testing.assert_array_equal(pairs, expected)


def test_oov_entity_still_matches():
    f = MatchTypeFeaturizer({"tokyo": "R_location"}).fit()
    ctx = f.transform(["table in tokyo"])
    bags = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    m = match_type_matrices(ctx, bags, {"tokyo": 0, "rome": 1}, ["R_location"])[0]
    np.testing.assert_array_equal(m.toarray(), [[1.0, 0.0]])


_STATE_KB = {
    "resto_a": "R_name", "resto_a_phone": "R_phone", "resto_a_address": "R_address",
    "resto_b": "R_name", "resto_b_phone": "R_phone", "resto_b_address": "R_address",
    "paris": "R_location",
}  # fmt: skip
_FACTS = tuple(
    Turn("kb", f"{r} {rel} {r}_{attr}")
    for r in ("resto_a", "resto_b")
    for rel, attr in (("R_phone", "phone"), ("R_address", "address"))
)


def _marks(ctx, **kw):
    [out] = MatchTypeFeaturizer(_STATE_KB, dialog_state=True, **kw).fit().transform([ctx])
    marks: dict[str, set] = {}
    for word, entity_type in out.entities:
        if ":" in entity_type:
            marks.setdefault(entity_type.split(":")[1], set()).add(word)
    return marks


def test_dialog_state_marks_what_the_bot_said_last_and_the_facts_about_it():
    proposed = _FACTS + (
        Turn("bot", "api_call paris"),
        Turn("bot", "what about resto_b"),
        Turn("user", "no"),
        Turn("bot", "what about resto_a"),
        Turn("user", "yes"),
        Turn("bot", "great"),  # names nothing: the last naming turn stays resto_a's
    )
    marks = _marks(Context(proposed, "its phone"))
    assert marks["said"] == {"paris", "resto_b", "resto_a"}
    assert marks["last"] == {"resto_a"}
    assert marks["linked"] == {"resto_a_phone", "resto_a_address"}  # resto_a's facts only
    # after the phone, the address is still linked: through the fact's subject, resto_a
    answered = proposed + (Turn("user", "its phone"), Turn("bot", "here it is resto_a_phone"))
    marks = _marks(Context(answered, "and its address"))
    assert marks["last"] == {"resto_a_phone"}
    assert marks["linked"] == {"resto_a", "resto_a_address"}


def test_dialog_state_is_off_by_default_and_empty_without_bot_turns():
    ctx = Context(_FACTS + (Turn("user", "in paris"),), "anything?")
    plain = MatchTypeFeaturizer(_STATE_KB).fit().transform([ctx])[0].entities
    marked = MatchTypeFeaturizer(_STATE_KB, dialog_state=True).fit().transform([ctx])[0].entities
    assert marked == plain and all(":" not in t for _, t in plain)
    assert _marks(Context((), "hello")) == {}


def test_dialog_state_marks_reach_a_ranker_and_carry_to_unseen_entities():
    """Trained on dialogs about two restaurants, MemN2N answers for a third it never saw
    (its words are nil): only the marks say which phone or address is the one asked for."""
    from irdialog import MemN2NRanker
    from irdialog.pipeline import RankingPipeline

    kb = {**_STATE_KB, "resto_c": "R_name", "resto_c_phone": "R_phone",
          "resto_c_address": "R_address"}  # fmt: skip
    restos = ("resto_a", "resto_b", "resto_c")
    facts = tuple(
        Turn("kb", f"{r} {rel} {r}_{attr}")
        for r in restos
        for rel, attr in (("R_phone", "phone"), ("R_address", "address"))
    )

    def dialogs(r):
        history = facts + (Turn("bot", f"what about {r}"), Turn("user", "yes"))
        return [Context(history, "its phone"), Context(history, "its address")], [
            f"here it is {r}_phone", f"here it is {r}_address"]  # fmt: skip

    (Xa, ya), (Xb, yb), (Xc, yc) = (dialogs(r) for r in restos)
    candidates = [f"here it is {r}_{a}" for r in restos for a in ("phone", "address")]
    feat = MatchTypeFeaturizer(kb, dialog_state=True)
    ranker = MemN2NRanker(candidates=candidates, embedding_dim=8, hops=1, epochs=60, random_state=0)
    model = RankingPipeline([("match_type", feat), ("ranker", ranker)])
    model.fit((Xa + Xb) * 4, (ya + yb) * 4)
    assert {"R_phone:linked", "R_name:last", "R_name:said"} <= set(model[-1].types_)
    assert list(model.predict(Xc)) == yc
    # without the marks the third restaurant's answers are a guess among equals
    plain = RankingPipeline([("match_type", MatchTypeFeaturizer(kb)), ("ranker", clone(ranker))])
    assert list(plain.fit((Xa + Xb) * 4, (ya + yb) * 4).predict(Xc)) != yc


_RANK_KB = {"resto_a": "R_name", "resto_b": "R_name", "resto_c": "R_name", "paris": "R_location",
            "2": "R_rating", "7": "R_rating", "५": "R_rating", "nan": "R_rating"}  # fmt: skip


def _ranks(history):
    feat = MatchTypeFeaturizer(_RANK_KB, kb_ranks=True).fit()
    return [(w, t) for w, t in feat.transform([Context(history, "")])[0].entities if "#" in t]


def test_kb_ranks_mark_the_subjects_of_numeric_facts_largest_first():
    facts = (Turn("kb", "resto_a R_rating 2"), Turn("kb", "resto_b R_rating 7"),
             Turn("kb", "resto_c R_rating 2"), Turn("kb", "resto_a R_location paris"))  # fmt: skip
    # equal values share a rank; facts without a number mark nothing
    assert _ranks(facts) == [("resto_b", "R_name:R_rating#1"), ("resto_a", "R_name:R_rating#2"),
                             ("resto_c", "R_name:R_rating#2")]  # fmt: skip
    # a number is a number in any script's digits; NaN is not a rank
    assert _ranks((Turn("kb", "resto_a R_rating 7"), Turn("kb", "resto_b R_rating ५"),
                   Turn("kb", "resto_c R_rating nan"))) == [
        ("resto_a", "R_name:R_rating#1"), ("resto_b", "R_name:R_rating#2")]  # fmt: skip
    # a number the KB does not type takes the fact's relation as its type
    assert _ranks((Turn("kb", "resto_a R_stars 9"), Turn("kb", "resto_b R_stars 10"),
                   Turn("kb", "resto_c R_rating 2"))) == [
        ("resto_c", "R_name:R_rating#1"), ("resto_b", "R_name:r_stars#1"),
        ("resto_a", "R_name:r_stars#2")]  # fmt: skip
    # only KB turns are facts; off by default
    assert _ranks((Turn("bot", "resto_a R_rating 7"), Turn("user", "resto_b 2"))) == []
    plain = MatchTypeFeaturizer(_RANK_KB).fit().transform([Context(facts, "")])[0].entities
    assert all("#" not in t for _, t in plain)


def test_kb_ranks_let_a_ranker_propose_the_best_unseen_option_not_yet_proposed():
    """Trained on dialogs proposing restaurants best rated first, MemN2N does the same for
    restaurants it never saw; without the ranks they score alike (a tie)."""
    from irdialog import MemN2NRanker
    from irdialog.pipeline import RankingPipeline

    rng = np.random.default_rng(0)
    names = [f"resto_{i}" for i in range(12)]
    kb = {**{n: "R_name" for n in names}, **{str(v): "R_rating" for v in range(1, 9)}}

    def dialogs(restos):
        X, y = [], []
        for _ in range(20):
            three = rng.choice(restos, 3, replace=False)
            rating = dict(zip(three, rng.choice(np.arange(1, 9), 3, replace=False)))
            history = tuple(Turn("kb", f"{r} R_rating {rating[r]}") for r in three)
            for r in sorted(three, key=lambda r: -rating[r]):
                X.append(Context(history, "<SILENCE>"))
                y.append(f"what about {r}")
                history += (Turn("bot", f"what about {r}"), Turn("user", "no"))
        return X, y

    (X, y), (X_new, y_new) = dialogs(names[:8]), dialogs(names[8:])
    ranker = MemN2NRanker(candidates=[f"what about {n}" for n in names], embedding_dim=16,
                          hops=1, epochs=40, random_state=0)  # fmt: skip

    def fit(**marks):
        feat = MatchTypeFeaturizer(kb, dialog_state=True, **marks)
        return RankingPipeline([("match_type", feat), ("ranker", clone(ranker))]).fit(X, y)

    assert np.mean(fit(kb_ranks=True).predict(X_new) == np.array(y_new)) == 1.0
    scores = fit().decision_function(X_new[:1])  # the first proposal: three new names alike
    assert (scores == scores.max()).sum() == 3


def test_rarity_kb_types_tokens_by_document_frequency():
    texts = ["a b c", "a b d", "a e", "a f"]  # df: a 4, b 2, the others 1
    kb = rarity_kb(texts, n_types=3)
    assert set(kb) == set("abcdef")
    rank = {t: int(kb[t].split(":")[1]) for t in kb}
    assert rank["a"] < rank["b"] < rank["c"]
    assert rank["c"] == rank["d"] == rank["e"] == rank["f"] == 2
    # no spaces: characters as the tokens
    kb = rarity_kb(["天气很好", "天气", "很"], n_types=2, tokenizer="char")
    assert kb["天"] == "rarity:0" and kb["好"] == "rarity:1"


@pytest.mark.parametrize(
    "texts, n_types, error, match",
    [
        (["a b"], 0, ValueError, "n_types"),
        (["a b"], 1.5, ValueError, "n_types"),
        ("a b", 2, TypeError, "not one str"),
        ([], 2, ValueError, "no token"),
    ],
)
def test_rarity_kb_errors(texts, n_types, error, match):
    with pytest.raises(error, match=match):
        rarity_kb(texts, n_types=n_types)


def test_rarity_matches_rank_answers_by_words_never_seen_in_training():
    # The right answer shares the question's rare word; test words never occur in training,
    # so only the match-type words of their rarity can find it.
    rng = np.random.default_rng(0)

    def split(words):
        X = [f"tell me about {w} please" for w in words]
        y = [f"here is what {w} means" for w in words]
        return X, y

    train_words = [f"w{i}" for i in range(60)]
    test_words = [f"z{i}" for i in range(20)]
    X, y = split(train_words)
    X_test, y_test = split(test_words)
    negatives = [[a for a in y if a != right] for right in y]
    pools = [[right] + [y_test[j] for j in rng.choice(20, 5, replace=False) if j != i][:4]
             for i, right in enumerate(y_test)]  # fmt: skip
    kb = rarity_kb(y + y_test)
    params = dict(embedding_dim=16, epochs=5, margin=0.1, random_state=0, n_negatives=10)
    plain = SupervisedEmbeddingRanker(**params).fit(X, y, negative_lists=negatives)
    typed = make_ranking_pipeline(
        MatchTypeFeaturizer(kb), SupervisedEmbeddingRanker(match_type="match", **params)
    ).fit(X, y, supervisedembeddingranker__negative_lists=negatives)

    def p_at_1(model):
        scores = model.rank_candidates(X_test, pools)
        return np.mean([np.argmax(s) == 0 and np.sum(s == s[0]) == 1 for s in scores])

    assert p_at_1(typed) == 1.0
    assert p_at_1(plain) < 0.5
