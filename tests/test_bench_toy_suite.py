"""A bench suite added by one file, this one: a toy suite declared over a tiny data set it
writes itself, run by ``irdialog bench toy`` and re-run by ``irdialog bench reproduce``
from the JSON that run wrote, with the package's one runner and nothing else of the
package touched."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from sklearn.utils import Bunch

from irdialog import BM25Ranker, TfidfRanker
from irdialog.bench import SUITES, ModelSpec, Selection, Suite, format_result, register
from irdialog.bench._reproduce import reproduce
from irdialog.bench._runner import run_declared
from irdialog.bench._suite import markdown_table, spread
from irdialog.cli import main
from irdialog.datasets import load_dialogs
from irdialog.metrics import per_response_accuracy

# ------------------------------------------------------------------ the suite, declared

_CITIES = ["paris", "rome", "oslo", "lima", "kyiv", "bern"]
_FOODS = ["pasta", "sushi", "tapas", "curry"]


def _load(task, split, data_home):
    return load_dialogs(Path(data_home) / "toy" / f"task{task}-{split}.jsonl")


def _score(model, data) -> dict:
    return {
        "accuracy": 100.0 * per_response_accuracy(data.y, model.predict(data.X)),
        "n": len(data.y),
    }


def _paper(task, split, column) -> dict:
    return {"accuracy": {"tfidf": {1: 75.0, 2: 50.0}}[column][task]}


def _tfidf(train, **params):
    return TfidfRanker(candidates=sorted(set(train.y)), **params)


def _bm25(train, **params):
    return BM25Ranker(candidates=sorted(set(train.y)), **params)


def _table(results) -> list[str]:
    body = [
        [r["model"], str(row.task), spread(row)]
        for _name, r in results
        for row in SUITES["toy"].rows(r)
    ]
    return markdown_table(["model", "task", "accuracy"], body)


TOY = register(
    Suite(
        name="toy",
        help="a toy suite: the city or the food asked about",
        models={
            "tfidf": ModelSpec("tfidf", _tfidf, Selection.dev_grid({"use_history": [False, True]})),
            "bm25": ModelSpec(None, _bm25, Selection.fixed({"method": "lucene"}, "the default")),
        },
        table=_table,
        load=_load,
        score=_score,
        metrics=("accuracy",),
        metric="accuracy",
        tasks=(1, 2),
        paper=_paper,
        heldout="score dev instead of test",
    )
)

# ------------------------------------------------------------------ its data and tests


def _examples(task: int, split: str) -> list[dict]:
    """Task 1 asks for the city of a name, task 2 for the food; splits differ in names."""
    words = _CITIES if task == 1 else _FOODS
    offset = {"train": 0, "dev": 1, "test": 2}[split]
    out = []
    for i, word in enumerate(words):
        out.append({
            "history": [f"hello {split} {i}", "hi how can i help"],
            "query": f"i want {word} please {offset}",
            "response": f"here is {word}",
        })  # fmt: skip
    if split != "train":  # an example no word of the training responses answers
        out.append({"query": f"something else {offset}", "response": f"here is {words[0]}"})
    return out


@pytest.fixture
def toy_home(tmp_path) -> Path:
    home = tmp_path / "data"
    (home / "toy").mkdir(parents=True)
    for task in (1, 2):
        for split in ("train", "dev", "test"):
            lines = [json.dumps(e) for e in _examples(task, split)]
            (home / "toy" / f"task{task}-{split}.jsonl").write_text("\n".join(lines) + "\n")
    return home


def _run(model, home, results, *extra) -> dict:
    out = results / f"toy-{model}.json"
    argv = ["bench", "toy", "--model", model, "--data-home", str(home), "--output", str(out)]
    assert main([*argv, "--quiet", *extra]) == 0
    return json.loads(out.read_text())


def test_toy_suite_runs_from_the_command_line_and_reproduces(toy_home, tmp_path, capsys):
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    result = _run("tfidf", toy_home, results)
    assert result["suite"] == "toy" and result["options"] == {"tasks": [1, 2]}
    assert [(r["task"], r["split"], r["n"]) for r in result["rows"]] == [
        (1, "test", 7), (2, "test", 5),
    ]  # fmt: skip
    assert [r["paper_accuracy"] for r in result["rows"]] == [75.0, 50.0]
    # every question but the one no training word answers
    assert [r["accuracy"] for r in result["rows"]] == [round(600 / 7, 2), 80.0]
    [chosen] = result["runs"][0]["chosen"][:1]
    assert chosen["task"] == 1 and "dev_accuracy" in chosen["selection"]
    assert chosen["params"]["use_history"] in (False, True)
    data = [Path(f["path"]).name for f in result["provenance"]["data"]]
    assert data[:3] == ["task1-train.jsonl", "task1-dev.jsonl", "task1-test.jsonl"]
    assert "accuracy" in format_result(result)
    assert TOY.table([("toy-tfidf", result)])[2].startswith("| tfidf | 1 | 85.7")

    capsys.readouterr()
    argv = ["bench", "reproduce", "toy-tfidf", "--results", str(results)]
    assert main(argv) == 0
    assert "toy-tfidf  reproduced" in capsys.readouterr().out

    # the comparison can fail: a committed figure moved is a difference (re-run here)
    result["rows"][0]["accuracy"] += 1.0
    (results / "toy-tfidf.json").write_text(json.dumps(result))
    lines = []
    reproduce(results, ["toy-tfidf"], out=lines.append, run_bench=_in_this_process)
    assert lines[0].startswith("toy-tfidf  differ") and "task 1, split test accuracy" in lines[0]


def _in_this_process(args) -> dict:
    args.func(args)
    return json.loads(Path(args.output).read_text())


def test_toy_suite_options_come_from_its_declaration(toy_home, tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    result = _run("bm25", toy_home, results, "--tasks", "2", "--heldout")
    assert result["options"] == {"tasks": [2], "heldout": True}
    [row] = result["rows"]
    assert row["split"] == "dev" and row["paper_accuracy"] is None
    assert result["runs"][0]["chosen"][0]["selection"]["search"] == "the default"
    # irdialog train --suite toy: the model behind a row, chosen on dev as the run chose it
    capsys.readouterr()
    saved = tmp_path / "toy.npz"
    argv = ["train", "--suite", "toy", "--task", "1", "--model", "tfidf", "--save", str(saved)]
    assert main([*argv, "--data-home", str(toy_home)]) == 0
    assert saved.exists() and "dev accuracy: 85.71%" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["bench", "toy", "--model", "bm25", "--tasks", "3"])
    with pytest.raises(SystemExit):
        main(["bench", "toy", "--model", "memn2n"])


def test_a_joint_run_fits_one_model_on_the_training_splits_of_every_task(toy_home):
    from dataclasses import replace

    from irdialog.bench._runner import run_declared

    sizes = []

    def fit(model, train, spec):
        sizes.append(len(train.X))
        model.fit(train.X, train.y)

    def join(parts):
        return type(parts[0])(X=[x for p in parts for x in p.X], y=[y for p in parts for y in p.y])

    with pytest.raises(ValueError, match="one task at a time"):
        run_declared(replace(TOY, fit=fit), "bm25", data_home=toy_home, joint=True)
    # the protocol hook sees the last model fitted: here, how many answers it ranks
    suite = replace(
        TOY, fit=fit, join=join, protocol=lambda spec, model, data, **_: model.candidates
    )
    alone = run_declared(suite, "bm25", data_home=toy_home, progress=False)
    assert sizes == [6, 4] and alone["options"] == {"tasks": [1, 2], "joint": False}
    sizes.clear()
    run = run_declared(suite, "bm25", data_home=toy_home, progress=False, joint=True)
    assert sizes == [10] and run["options"] == {"tasks": [1, 2], "joint": True}
    assert [(c["task"], c["params"]) for c in run["chosen"]] == [
        (1, {"method": "lucene"}), (2, {"method": "lucene"}),
    ]  # fmt: skip
    assert [(r["task"], r["n"]) for r in run["rows"]] == [(1, 7), (2, 5)]
    assert len(alone["protocol"]) == 4 and len(run["protocol"]) == 10  # foods; and cities


def test_the_package_suites_are_found_where_they_are_declared():
    from irdialog.bench._registry import _suite_modules, registered_modules

    modules = _suite_modules()
    assert modules == [
        "_babi_qa", "_beir", "_dialog_babi", "_douban", "_dstc7", "_ecommerce", "_insuranceqa",
        "_movie_dialog", "_msmarco", "_ubuntu", "_ubuntu_v1",
    ]  # fmt: skip
    assert {"babi-qa", "dialog-babi", "insuranceqa", "movie-dialog", "ubuntu"} < set(SUITES)
    assert registered_modules() == [__name__]  # this file's suite, for reproduce's child
    with pytest.raises(ValueError, match="already registered"):
        register(Suite("toy", "another toy", models={}, table=list, run=dict))
    with pytest.raises(ValueError, match="neither load and score nor run"):
        Suite("empty", "no run", models={}, table=list)


def _long_toy(**fields):
    """The toy suite with a row per metric, a metric its score never gives, a row of the
    first example alone (``parts``) and a record of the rows each fit read."""
    fitted = []

    def fit(model, train, spec):
        fitted.append(len(train.y))
        model.fit(train.X, train.y)

    def score(model, data) -> dict:
        first = {"accuracy": 100.0 * float(model.predict(data.X[:1])[0] == data.y[0]), "n": 1}
        return {**_score(model, data), "parts": [({"response": 1}, first)]}

    fields = dict(layout="long", metrics=("accuracy", "mrr"), fit=fit, score=score, **fields)
    return replace(TOY, **fields), fitted


def test_the_runner_refits_the_chosen_point_and_adds_the_rows_of_parts(toy_home):
    suite, fitted = _long_toy(refit="dev")
    run = run_declared(suite, "tfidf", tasks=[1], data_home=toy_home, progress=False)
    assert fitted == [6, 6, 7]  # both points on train, the chosen one again on dev
    assert [(r["metric"], r.get("response"), r["paper"]) for r in run["rows"]] == [
        ("accuracy", None, 75.0), ("accuracy", 1, None),
    ]  # fmt: skip
    assert run["rows"][1]["n"] == 1


def test_a_joint_run_fits_one_model_on_every_task_and_binds_the_suites_own_options(toy_home):
    def concat(splits):
        return Bunch(X=[x for s in splits for x in s.X], y=[y for s in splits for y in s.y])

    suite, fitted = _long_toy(
        join=concat,
        joint_choice="normalised_mean",
        bind=lambda scored="test": {"scored": (scored,)},
    )
    run = run_declared(suite, "tfidf", data_home=toy_home, progress=False, joint=True, scored="dev")
    assert fitted == [10, 10, 10]  # two points on both tasks' train (6 + 4), the chosen again
    assert run["options"] == {"tasks": [1, 2], "joint": True, "scored": "dev"}
    assert {r["split"] for r in run["rows"]} == {"dev"} and [c["task"] for c in run["chosen"]] == [
        1,
        2,
    ]
    assert run["chosen"][0]["params"] == run["chosen"][1]["params"]
    assert "dev_accuracy" in run["chosen"][1]["selection"]
    with pytest.raises(ValueError, match="no joint runs"):
        TOY.run("tfidf", data_home=toy_home, progress=False, joint=True)
