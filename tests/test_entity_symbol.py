"""EntitySymbolRanker: the estimator contract, entity predictions, the KB memory, parameter
errors, and scores identical to the wrapped ranker fitted by hand on the rewritten data."""

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import CITIES, MOVIE_ENTITIES, MOVIE_KB, make_tiny_dialogs
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from irdialog import (
    EntityParser,
    EntitySymbolRanker,
    KBMemoryRetriever,
    MemN2NRanker,
    SupervisedEmbeddingRanker,
)

FAST = dict(embedding_dim=8, n_negatives=5, epochs=5, learning_rate=0.1, margin=0.5)

# Every tiny response is one entity (a dialog symbol) and the cities are entities of the
# contexts, so each gold response names exactly one entity.
_, _TINY_Y, _ = make_tiny_dialogs()
TINY_ENTITIES = list(dict.fromkeys(_TINY_Y)) + CITIES


class TestEntitySymbolConformance(RankerConformance):
    param_grid = {"min_count": [1, 2], "ranker__embedding_dim": [4, 8]}

    def make_estimator(self):
        return EntitySymbolRanker(
            SupervisedEmbeddingRanker(random_state=0, **FAST), TINY_ENTITIES, min_count=1
        )

    def test_candidates_are_the_entities(self):
        est, X, y = self.fitted()
        assert est.candidates_.tolist() == TINY_ENTITIES
        assert set(est.predict(X)) <= set(TINY_ENTITIES)
        assert est.n_unanswerable_ == 0


MOVIE_X = ["who directed heat", "who directed alien", "what did michael mann direct"] * 5
MOVIE_Y = ["Michael Mann", "Ridley Scott", "Heat, Collateral"] * 5


def _se():
    return SupervisedEmbeddingRanker(epochs=30, learning_rate=0.1, margin=0.5, random_state=0)


def _memn2n():
    return MemN2NRanker(hops=1, epochs=60, learning_rate=0.05, candidate_words=True, random_state=0)


def test_is_exported_and_the_bench_uses_the_same_class():
    import irdialog
    from irdialog.bench import _movie_dialog
    from irdialog.entities import EntitySymbolRanker as from_entities

    assert "EntitySymbolRanker" in irdialog.__all__
    assert _movie_dialog.EntitySymbolRanker is EntitySymbolRanker is from_entities


def test_predicts_entity_names_on_a_tiny_movie_example():
    # "HEAT" repeats "Heat" up to case: one entity, spelled as its first name
    entities = MOVIE_ENTITIES + ["HEAT"]
    model = EntitySymbolRanker(_se(), entities, min_count=1).fit(MOVIE_X, MOVIE_Y)
    assert model.candidates_.tolist() == MOVIE_ENTITIES
    assert model.predict(MOVIE_X[:2]).tolist() == ["Michael Mann", "Ridley Scott"]
    assert model.predict(["what did michael mann direct"])[0] in ("Heat", "Collateral")
    # an answer list is no single candidate: the third example is always a miss
    assert model.score(MOVIE_X, MOVIE_Y) == pytest.approx(2 / 3)
    scores = model.decision_function(MOVIE_X[:3])
    assert scores.shape == (3, len(MOVIE_ENTITIES))
    np.testing.assert_array_equal(model.rank(MOVIE_X[:3], k=1)[:, 0], scores.argmax(axis=1))
    # an entity name scores as its column (the wrapped ranker scores its symbol)
    lists = [["Ridley Scott", "Michael Mann"]] * 3
    np.testing.assert_allclose(
        model.rank_candidates(MOVIE_X[:3], lists), scores[:, [4, 3]], rtol=1e-6, atol=1e-9
    )


def test_answer_lists_give_one_example_per_entity_and_unanswerable_ones_are_counted():
    X = MOVIE_X + ["who is your favourite"]
    y = MOVIE_Y + ["I do not know"]
    model = EntitySymbolRanker(_se(), MOVIE_ENTITIES, min_count=1).fit(X, y)
    assert model.n_unanswerable_ == 1
    # the parser's tokens are the wrapped ranker's candidates, in the order of MOVIE_ENTITIES
    assert model.ranker_.candidates_.tolist() == model.parser_.entity_tokens_.tolist()


def test_a_gold_response_naming_no_entity_raises():
    with pytest.raises(ValueError, match="no gold response of y names an entity"):
        EntitySymbolRanker(_se(), MOVIE_ENTITIES, min_count=1).fit(
            ["who directed heat", "who directed alien"], ["nobody", "no idea"]
        )


@pytest.mark.parametrize("make_ranker", [_se, _memn2n], ids=["se", "memn2n"])
def test_kb_memory_is_added_to_the_rewritten_contexts(make_ranker):
    model = EntitySymbolRanker(make_ranker(), MOVIE_ENTITIES, min_count=1, kb=MOVIE_KB)
    model.fit(MOVIE_X, MOVIE_Y)
    assert isinstance(model.retriever_, KBMemoryRetriever)
    # the memory holds the KB rewritten over the entity dictionary
    assert list(model.retriever_.sentences)[0] == "ent:heat directed_by ent:michael_mann"
    [ctx] = model._rewrite(["who directed alien"])
    assert ctx.query == "who directed ent:alien"
    assert [t.text for t in ctx.history] == ["ent:alien directed_by ent:ridley_scott"]
    assert all(t.speaker == "kb" for t in ctx.history)
    assert model.predict(MOVIE_X[:2]).tolist() == ["Michael Mann", "Ridley Scott"]
    # without kb (or with an empty one) there is no memory
    for kb in (None, []):
        plain = EntitySymbolRanker(make_ranker(), MOVIE_ENTITIES, min_count=1, kb=kb)
        assert plain.fit(MOVIE_X, MOVIE_Y).retriever_ is None


def _fit_by_hand(ranker, entities, X, y, *, min_count, kb=None):
    """The wrapped ranker fitted on the parser-rewritten data, as the Movie Dialog bench
    fitted it before EntitySymbolRanker was public: returns the rewriting and the ranker."""
    kb = list(kb or [])
    parser = EntityParser(entities, min_count=min_count).fit(X + kb, y + [""] * len(kb))
    retriever = KBMemoryRetriever(parser.transform_text(kb)).fit() if kb else None

    def rewrite(X):
        X = parser.transform(X)
        return X if retriever is None else retriever.transform(X)

    tokens = parser.entity_tokens_
    X_fit, y_fit = [], []
    for ctx, answer in zip(rewrite(X), y):
        for e in dict.fromkeys(parser.entity_ids(answer)):
            X_fit.append(ctx)
            y_fit.append(tokens[e])
    fitted = clone(ranker).set_params(candidates=list(tokens)).fit(X_fit, y_fit)
    return rewrite, fitted


@pytest.mark.parametrize("kb", [None, MOVIE_KB], ids=["no-kb", "kb"])
@pytest.mark.parametrize("make_ranker", [_se, _memn2n], ids=["se", "memn2n"])
def test_scores_are_bit_identical_to_the_ranker_fitted_by_hand(make_ranker, kb):
    X = MOVIE_X + ["who is your favourite"]
    y = MOVIE_Y + ["I do not know"]
    model = EntitySymbolRanker(make_ranker(), MOVIE_ENTITIES, min_count=2, kb=kb).fit(X, y)
    rewrite, ranker = _fit_by_hand(make_ranker(), MOVIE_ENTITIES, X, y, min_count=2, kb=kb)
    queries = X + ["zzqx unseen words", "", "did al pacino star in heat"]
    np.testing.assert_array_equal(
        model.decision_function(queries), ranker.decision_function(rewrite(queries))
    )


@pytest.mark.parametrize(
    "params, error, match",
    [
        (dict(ranker="se"), TypeError, "ranker must be a ranker estimator"),
        (dict(ranker=LogisticRegression()), ValueError, "candidates parameter"),
        (dict(entities=[]), ValueError, "entities is empty"),
        (dict(entities=["", "  "]), ValueError, "no name with a word"),
        (dict(entities="Heat"), ValueError, "'entities' parameter"),
        (dict(min_count=0), ValueError, "'min_count' parameter"),
        (dict(kb="Heat directed_by Michael Mann"), ValueError, "'kb' parameter"),
        (dict(max_memories=0), ValueError, "'max_memories' parameter"),
    ],
)
def test_bad_parameters_raise_clear_errors_in_fit(params, error, match):
    model = EntitySymbolRanker(_se(), MOVIE_ENTITIES, min_count=1).set_params(**params)
    with pytest.raises(error, match=match):
        model.fit(MOVIE_X, MOVIE_Y)


@pytest.mark.parametrize("method, arg", [("score", ["Heat"]), ("rank_candidates", [["Heat"]])])
def test_every_public_method_needs_fit(method, arg):
    model = EntitySymbolRanker(_se(), MOVIE_ENTITIES)
    with pytest.raises(NotFittedError):
        getattr(model, method)(MOVIE_X[:1], arg)
