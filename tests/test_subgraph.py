"""SubgraphEmbeddingRanker: the QA system of Bordes, Chopra & Weston (2014)."""

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import CITIES

from irdialog import SubgraphEmbeddingRanker

# The tiny dialogs' API calls name a city: the KB joins each call to its city.
TINY_TRIPLES = [(f"api_call {c}", "books_in", c) for c in CITIES] + [
    (c, "is_a", "city") for c in CITIES
]
FAST = dict(embedding_dim=8, n_negatives=5, epochs=5, learning_rate=0.1)

# Films, their genre and their language (shared by several films, as in a real KB).
FILMS = [f"film{i}" for i in range(24)]
GENRES = ["drama", "comedy", "western"]
LANGUAGES = ["english", "french", "german", "italian"]
MOVIE_KB = [(f, "has_genre", GENRES[i % 3]) for i, f in enumerate(FILMS)] + [
    (f, "in_language", LANGUAGES[(i // 3) % 4]) for i, f in enumerate(FILMS)
]


def _questions(films):
    facts = {(s, r): o for s, r, o in MOVIE_KB}
    X = [f"what genre is {f}" for f in films] + [f"which language is {f} in" for f in films]
    y = [facts[f, "has_genre"] for f in films] + [facts[f, "in_language"] for f in films]
    return X, y


class TestSubgraphEmbeddingConformance(RankerConformance):
    param_grid = {"embedding_dim": [4, 8]}

    def make_estimator(self):
        return SubgraphEmbeddingRanker(kb=TINY_TRIPLES, random_state=0, **FAST)


def test_the_path_answers_questions_on_entities_never_seen_in_training():
    X, y = _questions(FILMS[::2])
    X_new, y_new = _questions(FILMS[1::2])
    candidates = FILMS + GENRES + LANGUAGES
    params = dict(candidates=candidates, embedding_dim=16, epochs=40, margin=1.0, random_state=0)
    model = SubgraphEmbeddingRanker(kb=MOVIE_KB, learning_rate=0.1, **params).fit(X, y)
    assert (model.predict(X_new) == np.asarray(y_new)).mean() == 1.0
    # without the KB an unseen entity has nothing to go by
    bare = SubgraphEmbeddingRanker(learning_rate=0.1, **params).fit(X, y)
    assert (bare.predict(X_new) == np.asarray(y_new)).mean() <= 0.5


def test_scores_are_the_sum_of_the_question_and_answer_feature_embeddings():
    model = SubgraphEmbeddingRanker(kb=MOVIE_KB, embedding_dim=4, epochs=2, random_state=0)
    X, y = _questions(FILMS)
    model.fit(X, y)
    U, V = model.input_embeddings_, model.answer_embeddings_
    index, n_nodes = model.node_index_, len(model.node_index_)
    words = model.vocabulary_.index_
    neighbours = {}  # node -> [(neighbour, path type)]
    for s, relation, objects in MOVIE_KB:
        r = model.relations_.index(relation)
        for o in (objects,) if isinstance(objects, str) else objects:
            neighbours.setdefault(s, []).append((o, 2 * r))
            neighbours.setdefault(o, []).append((s, 2 * r + 1))
    n_types = 2 * len(model.relations_)
    path_row = 1 + 2 * n_nodes + n_types
    question = "what genre is film3 or film5"
    f_q = sum(U[words[w]] for w in question.split() if w in words)
    mentioned = {"film3", "film5"}
    scores = model.decision_function([question])[0]
    for j, a in enumerate(model.candidates_):
        g = V[1 + index[a]].copy()
        edges = neighbours.get(a, [])
        for b, t in edges:
            g += (V[1 + n_nodes + index[b]] + V[1 + 2 * n_nodes + t]) / len(edges)
        for t in {t for b, t in edges if b in mentioned}:
            g += V[path_row + t]
        assert scores[j] == pytest.approx(float(f_q @ g), rel=1e-5, abs=1e-6)


def test_bad_knowledge_bases_give_clear_errors():
    X, y = _questions(FILMS[:2])
    with pytest.raises(ValueError, match="'kb' parameter of SubgraphEmbeddingRanker must be"):
        SubgraphEmbeddingRanker(kb="film0 has_genre drama").fit(X, y)
    with pytest.raises(ValueError, match=r"kb\[0\] must be a \(subject, relation, objects\)"):
        SubgraphEmbeddingRanker(kb=[("film0", "has_genre")]).fit(X, y)
    with pytest.raises(TypeError, match=r"kb\[0\]: subject, relation and objects must be str"):
        SubgraphEmbeddingRanker(kb=[("film0", "has_genre", 3)]).fit(X, y)
    many = [("film0", f"relation{i}", "drama") for i in range(32)]
    with pytest.raises(ValueError, match="32 relation types; at most 31"):
        SubgraphEmbeddingRanker(kb=many).fit(X, y)
