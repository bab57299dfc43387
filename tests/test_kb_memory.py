"""KBMemoryRetriever (the hashing lookup of long-term memories) and the entity-symbol setting
of the Movie Dialog models."""

import pickle
from dataclasses import replace

import numpy as np
import pytest
from conformance import TransformerConformance
from conftest import CITIES, MOVIE_ENTITIES, MOVIE_KB

from irdialog import Context, KBMemoryRetriever, MemN2NRanker, SupervisedEmbeddingRanker, Turn
from irdialog.bench._movie_dialog import EntitySymbolRanker

KB = [
    "heat directed_by michael_mann",
    "heat starred_actors al_pacino robert_de_niro",
    "alien directed_by ridley_scott",
    "alien starred_actors sigourney_weaver",
    "collateral directed_by michael_mann",
]


class TestKBMemoryRetrieverConformance(TransformerConformance):
    def make_estimator(self):
        return KBMemoryRetriever([f"resto_{c} R_location {c}" for c in CITIES], max_memories=2)


def test_retrieves_sentences_sharing_a_token_most_shared_first():
    r = KBMemoryRetriever(KB, max_frequency=10).fit()
    [ctx] = r.transform(["who directed heat"])
    assert [t.text for t in ctx.history] == KB[:2]
    assert all(t.speaker == "kb" for t in ctx.history)
    # two shared tokens beat one; the cap keeps the best ones, in file order
    [ctx] = KBMemoryRetriever(KB, max_memories=1).fit().transform(["michael_mann directed heat"])
    assert [t.text for t in ctx.history] == [KB[0]]


def test_frequent_tokens_are_not_looked_up_and_unknown_words_retrieve_nothing():
    r = KBMemoryRetriever(KB, max_frequency=2).fit()  # directed_by is in 3 sentences
    assert r.transform(["directed_by"])[0].history == ()
    assert r.transform(["zzz unknown"])[0].history == ()
    assert r.transform([""])[0].history == ()
    assert r.n_retrieved_ == 0.0


def test_memories_go_before_the_conversation_and_lookback_hashes_earlier_turns():
    ctx = Context((Turn("user", "tell me about alien"), Turn("bot", "ok")), "who directed it")
    [plain] = KBMemoryRetriever(KB).fit().transform([ctx])
    assert plain.history == ctx.history and plain.query == ctx.query
    [back] = KBMemoryRetriever(KB, lookback=3).fit().transform([ctx])
    assert [t.text for t in back.history] == [KB[2], KB[3], "tell me about alien", "ok"]


def test_bad_knowledge_bases_are_rejected():
    with pytest.raises(ValueError, match="array-like"):
        KBMemoryRetriever("heat directed_by x").fit()
    with pytest.raises(ValueError, match="empty"):
        KBMemoryRetriever([]).fit()
    with pytest.raises(TypeError, match=r"sentences\[1\]"):
        KBMemoryRetriever(["a b", 3]).fit()
    with pytest.raises(ValueError, match="max_memories"):
        KBMemoryRetriever(KB, max_memories=0).fit()


def test_pickle_round_trip():
    r = KBMemoryRetriever(KB).fit()
    again = pickle.loads(pickle.dumps(r))
    assert again.transform(["heat"]) == r.transform(["heat"])


@pytest.mark.parametrize(
    "ranker",
    [
        SupervisedEmbeddingRanker(epochs=30, learning_rate=0.1, margin=0.5, random_state=0),
        MemN2NRanker(hops=1, epochs=60, learning_rate=0.05, candidate_words=True, random_state=0),
    ],
    ids=["se", "memn2n"],
)
def test_entity_symbol_ranker_columns_are_the_entities(ranker):
    X = ["who directed heat", "who directed alien", "what did michael mann direct"] * 5
    y = ["Michael Mann", "Ridley Scott", "Heat, Collateral"] * 5
    model = EntitySymbolRanker(ranker, MOVIE_ENTITIES, min_count=1, kb=MOVIE_KB).fit(X, y)
    assert list(model.parser_.entity_names_) == MOVIE_ENTITIES
    # the answer list gives one example per entity: 5 + 5 + 10
    assert len(model.ranker_.candidates_) == len(MOVIE_ENTITIES)
    scores = model.decision_function(X[:3])
    assert scores.shape == (3, len(MOVIE_ENTITIES))
    best = [MOVIE_ENTITIES[j] for j in scores.argmax(axis=1)]
    assert best[:2] == ["Michael Mann", "Ridley Scott"]
    assert MOVIE_ENTITIES[int(np.argmax(scores[2]))] in ("Heat", "Collateral")


def test_entity_symbol_ranker_needs_answers_naming_entities():
    with pytest.raises(ValueError, match="names an entity"):
        EntitySymbolRanker(SupervisedEmbeddingRanker(), MOVIE_ENTITIES, min_count=1).fit(
            ["who directed heat"], ["nobody"]
        )


def _tiny_movie_home(tmp_path):
    """A Movie Dialog data home with 40 one-question dialogs per split and a 10-film KB."""
    films = [f"Film {c}" for c in "ABCDEFGHIJ"]
    people = [f"Director {c}" for c in "KLMNOPQRST"]
    home = tmp_path / "movie-dialog"
    home.mkdir()
    (home / "entities.txt").write_text("\n".join(films + people) + "\n")
    kb = "".join(f"1 {f} directed_by {p}\n" for f, p in zip(films, people))
    (home / "substitute_movie_kb_wikimovies.txt").write_text(kb)
    for split, offset in (("dev", 0), ("test", 3)):
        lines = [
            f"1 who directed {films[(i + offset) % 10]}?\t{people[(i + offset) % 10]}\n"
            for i in range(40)
        ]
        for name in ("task1_qa", "task2_recs", "task3_qarecs"):
            (home / f"{name}_{split}.txt").write_text("\n".join(lines))
    return tmp_path


@pytest.mark.parametrize("model", ["se", "memn2n"])
def test_movie_dialog_bench_runs_the_entity_models(tmp_path, model, monkeypatch):
    from irdialog.bench import _movie_dialog
    from irdialog.bench._movie_dialog import bench_movie_dialog

    # one small grid point keeps the test fast; the protocol is what is under test
    spec = _movie_dialog.MOVIE_DIALOG_MODELS[model]
    monkeypatch.setitem(spec.selection.grid, 1, {"ranker__epochs": [5], "min_count": [1]})
    result = bench_movie_dialog(1, model, data_home=_tiny_movie_home(tmp_path), progress=False)
    [row] = result["rows"]
    assert row["metric"] == "hits@1" and row["n"] == 40 and row["split"] == "test"
    assert 0.0 <= row["value"] <= 100.0
    selection = result["chosen"][0]["selection"]
    assert selection["n_fit"] + selection["n_heldout"] == 40
    assert "train on dev" in result["protocol"].lower() or "fit on the dev" in result["protocol"]


def test_movie_dialog_bench_rejects_a_sweep_the_model_cannot_take(tmp_path):
    from irdialog.bench._movie_dialog import bench_movie_dialog

    with pytest.raises(ValueError, match="has no parameter n_components to sweep"):
        bench_movie_dialog(
            1, "se", data_home=_tiny_movie_home(tmp_path), progress=False,
            sweep={"n_components": [10]},
        )  # fmt: skip


@pytest.mark.parametrize(
    "model, grid",
    [
        ("se", {"ranker__epochs": [5], "ranker__margin": [0.1, 0.5], "min_count": [1]}),
        ("memn2n", {"ranker__epochs": [5], "min_count": [1]}),
    ],
)
def test_movie_dialog_joint_run_scores_each_task_from_one_fit(tmp_path, model, grid, monkeypatch):
    from irdialog.bench import _movie_dialog
    from irdialog.bench._movie_dialog import bench_movie_dialog

    spec = _movie_dialog.MOVIE_DIALOG_MODELS[model]
    monkeypatch.setitem(spec.selection.grid, None, grid)
    fits = []
    build = spec.build
    monkeypatch.setitem(
        _movie_dialog.MOVIE_DIALOG_MODELS, model,
        replace(spec, build=lambda *a, **p: fits.append(p) or build(*a, **p)),
    )  # fmt: skip
    result = bench_movie_dialog(
        model=model, joint=True, data_home=_tiny_movie_home(tmp_path), progress=False
    )
    whole = [row for row in result["rows"] if "response" not in row]
    assert [(r["task"], r["metric"]) for r in whole] == [
        (1, "hits@1"), (2, "hits@100"), (3, "hits@10"),
    ]  # fmt: skip
    assert all(r["n"] == 40 and 0.0 <= r["value"] <= 100.0 for r in whole)
    assert [r["paper"] for r in whole] == {"se": [43.6, 28.1, 58.9], "memn2n": [83.5, 26.5, 78.9]}[
        model
    ]
    # a grid of two points: two held-out fits and the refit; of one point: the refit alone
    n_points = 2 if model == "se" else 1
    assert len(fits) == (n_points + 1 if n_points > 1 else 1)
    [entry, *_] = result["chosen"]
    assert entry["selection"]["n_fit"] + entry["selection"]["n_heldout"] == 40
    assert [c["task"] for c in result["chosen"]] == [1, 2, 3]
    assert ("heldout_hits@1" in entry["selection"]) == (n_points > 1)
    assert result["options"] == {"joint": True}


def test_movie_dialog_joint_run_needs_a_joint_model_and_no_task(tmp_path):
    from irdialog.bench._movie_dialog import bench_movie_dialog

    home = _tiny_movie_home(tmp_path)
    with pytest.raises(ValueError, match="'lstm' has no joint run"):
        bench_movie_dialog(model="lstm", joint=True, data_home=home)
    with pytest.raises(ValueError, match="not both"):
        bench_movie_dialog(1, "se", joint=True, data_home=home)
    with pytest.raises(ValueError, match="--task"):
        bench_movie_dialog(model="se", data_home=home)
