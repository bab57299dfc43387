"""bAbI QA, Table 3 of Weston et al. (2016): the classical track on the 20 tasks (1k each).

The N-gram classifier (weakly supervised, section 5) and the structured SVM (supporting facts,
appendix B; here without its external coreference and SRL tools), as entries of the bAbI QA
suite of ``irdialog/bench`` (``BABI_QA_MODELS``)::

    # choose each task's hyper-parameters on a validation split of its training file
    python benchmarks/babi_qa_classical.py tune --model struct-svm --data-home ../shared/data
    # the suite with the chosen presets: fit on train, score test
    python benchmarks/babi_qa_classical.py bench --model struct-svm --data-home ../shared/data \\
        --output benchmarks/results/babi-qa-struct-svm.json
    python benchmarks/babi_qa_classical.py table benchmarks/results/babi-qa-ngram.json \\
        benchmarks/results/babi-qa-struct-svm.json

Tuning fits each grid point on the first 80% of a training file's stories and keeps the best on
the last 20%; the test files are never looked at. Its output is the ``*_PRESETS`` below.
Everything from ``PASS_ACCURACY`` to :func:`babi_qa_specs` is written to move into
``irdialog/bench/_babi.py`` as is, followed by ``BABI_QA_MODELS.update(babi_qa_specs())``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from irdialog import bench
from irdialog.bench import paper_table
from irdialog.bench._babi import QAModelSpec, _grid_points
from irdialog.datasets import load_babi_qa
from irdialog.retrieval._ngram import NGramClassifier
from irdialog.svm import StructuredSVMQA

PASS_ACCURACY = 95.0  # the paper's success threshold, in %
VALID_FRACTION = 0.2  # tuning: the last stories of each training file

# Validation grids, and what `tune` chose on them per task (tasks not listed: the default).
NGRAM_GRID = {"max_df": [0.5, 1.0], "classifier__C": [0.1, 1.0]}
NGRAM_DEFAULT = {"max_df": 0.5, "classifier__C": 1.0}
NGRAM_PRESETS = {
    task: {"max_df": 0.5, "classifier__C": 0.1} for task in (1, 2, 3, 5, 11, 12, 17, 18, 20)
} | {16: {"max_df": 1.0, "classifier__C": 1.0}}
STRUCT_SVM_GRID = {"C": [1.0, 10.0]}
STRUCT_SVM_DEFAULT = {"C": 1.0}
STRUCT_SVM_PRESETS = {task: {"C": 10.0} for task in (2, 8, 17, 18, 19)}


def ngram_model(**params):
    """The N-gram classifier of the suite: a logistic regression over the bags."""
    return NGramClassifier(classifier=LogisticRegression(max_iter=1000)).set_params(**params)


def struct_svm_model(**params):
    """The structured SVM of the suite (up to 20 passes per stage, seeded)."""
    return StructuredSVMQA(epochs=20, random_state=0, **params)


def supporting_accuracy(model, X, supporting) -> float:
    """% of questions whose chosen facts are exactly the gold ones, as a set (the last
    ``max_facts`` of them when there are more, as in training)."""
    found = model.predict_supporting(X)
    k = model.max_facts
    same = [set(f) == set(tuple(s)[-k:]) for f, s in zip(found, supporting)]
    return 100.0 * float(np.mean(same))


def _preset(presets, default):
    return lambda task: {**default, **presets.get(task, {})}


def babi_qa_specs() -> dict[str, QAModelSpec]:
    """The suite entries of the two models, for ``BABI_QA_MODELS.update(...)``."""
    ngram = _preset(NGRAM_PRESETS, NGRAM_DEFAULT)
    svm = _preset(STRUCT_SVM_PRESETS, STRUCT_SVM_DEFAULT)
    return {
        "ngram": QAModelSpec(
            paper_column="ngram",
            build=lambda task: ngram_model(**ngram(task)),
            params=ngram,
        ),
        "struct-svm": QAModelSpec(
            paper_column="struct_svm",
            build=lambda task: struct_svm_model(**svm(task)),
            params=svm,
            fit_params=lambda data: {"supporting": data.supporting},
            extras=lambda model, data: {
                "supporting_accuracy": supporting_accuracy(model, data.X, data.supporting)
            },
        ),
    }


TUNING = {
    "ngram": (ngram_model, NGRAM_GRID, False),
    "struct-svm": (struct_svm_model, STRUCT_SVM_GRID, True),
}


def tune_babi_qa(model, tasks=range(1, 21), lang="en", data_home=None, progress=True) -> dict:
    """Each task's best grid point by accuracy on the last 20% of its training stories, the
    model being fitted on the first 80%. Returns ``{task: {**point, "valid_accuracy"}}``."""
    build, grid, strong = TUNING[model]
    points = _grid_points(grid)
    chosen = {}
    bar = tqdm(total=len(tasks) * len(points), desc=f"tune {model}", disable=not progress)
    for task in tasks:
        train = load_babi_qa(task, "train", lang=lang, data_home=data_home)
        cut = int(np.ceil((max(train.groups) + 1) * (1 - VALID_FRACTION)))
        fit = [i for i, g in enumerate(train.groups) if g < cut]
        valid = [i for i, g in enumerate(train.groups) if g >= cut]
        X, y = [train.X[i] for i in fit], [train.y[i] for i in fit]
        extra = {"supporting": [train.supporting[i] for i in fit]} if strong else {}
        best = None
        for point in points:
            est = build(**point).fit(X, y, **extra)
            acc = 100.0 * est.score([train.X[i] for i in valid], [train.y[i] for i in valid])
            if best is None or acc > best[0]:
                best = (acc, point)
            bar.update()
        chosen[task] = {**best[1], "valid_accuracy": round(best[0], 2)}
    bar.close()
    return chosen


# --------------------------------------------------------------------------- reporting


def _paper(column: str) -> dict[int, float]:
    return {
        int(r["task"]): float(r[column])
        for r in paper_table("babi_qa_table3.csv")
        if r["task"].isdigit()
    }


def summary(result: dict) -> dict:
    """Mean accuracy, failed tasks (< 95%) and, when reported, mean supporting-fact accuracy."""
    rows = result["rows"]
    out = {
        "mean_accuracy": round(float(np.mean([r["accuracy"] for r in rows])), 2),
        "failed_tasks": [r["task"] for r in rows if r["accuracy"] < PASS_ACCURACY],
    }
    if rows and "supporting_accuracy" in rows[0]:
        out["mean_supporting_accuracy"] = round(
            float(np.mean([r["supporting_accuracy"] for r in rows])), 2
        )
    return out


def markdown_table(results: list[dict]) -> str:
    """bAbI QA results side by side, next to the paper's column of each model; supporting-fact
    accuracy in brackets where reported."""
    papers = [_paper(babi_qa_specs()[r["model"]].paper_column) for r in results]
    head = "| task | " + " | ".join(f"{r['model']} (ours) | paper" for r in results) + " |"
    out = [head, "|" + "---|" * (1 + 2 * len(results))]
    for rows in zip(*(r["rows"] for r in results)):
        cells = [str(rows[0]["task"])]
        for r, paper in zip(rows, papers):
            ours = f"{r['accuracy']:.1f}"
            if "supporting_accuracy" in r:
                ours += f" ({r['supporting_accuracy']:.1f})"
            cells += [ours, f"{paper[r['task']]:.0f}"]
        out.append("| " + " | ".join(cells) + " |")
    mean, failed = ["**mean**"], ["**failed (< 95%)**"]
    for r, paper in zip(results, papers):
        s = summary(r)
        tasks = [row["task"] for row in r["rows"]]
        mean += [f"{s['mean_accuracy']:.1f}", f"{np.mean([paper[t] for t in tasks]):.1f}"]
        failed += [str(len(s["failed_tasks"])), str(sum(paper[t] < PASS_ACCURACY for t in tasks))]
    out += ["| " + " | ".join(mean) + " |", "| " + " | ".join(failed) + " |"]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--model", required=True, choices=sorted(TUNING))
    common.add_argument("--tasks", nargs="+", type=int, default=list(range(1, 21)))
    common.add_argument("--lang", default="en")
    common.add_argument("--data-home", default=None)
    common.add_argument("--quiet", action="store_true")
    sub.add_parser("tune", parents=[common], help="choose presets on validation")
    run = sub.add_parser("bench", parents=[common], help="the suite with the presets")
    run.add_argument("--output", help="write the result as JSON to this file")
    table = sub.add_parser("table", help="render bench JSON results as Markdown")
    table.add_argument("results", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "table":
        results = [json.loads(Path(p).read_text("utf-8")) for p in args.results]
        print(markdown_table(results))
        for r in results:
            print(f"\n- {r['model']}: {r['seconds']:.0f} s; {json.dumps(summary(r))}")
        return 0
    start = time.perf_counter()
    # One BLAS thread: the machine is shared, and the models are single-threaded anyway.
    with threadpool_limits(limits=1):
        if args.command == "tune":
            chosen = tune_babi_qa(args.model, args.tasks, args.lang, args.data_home, not args.quiet)
            print(json.dumps(chosen, indent=1))
            print(f"{time.perf_counter() - start:.1f} s")
            return 0
        for name, spec in babi_qa_specs().items():
            bench.BABI_QA_MODELS.setdefault(name, spec)
        result = bench.bench_babi_qa(
            args.model,
            args.tasks,
            lang=args.lang,
            data_home=args.data_home,
            progress=not args.quiet,
        )
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(markdown_table([result]))
    print(f"\n{json.dumps(summary(result))}\n{result['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
