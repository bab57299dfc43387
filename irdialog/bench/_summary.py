"""The summary tables that open BENCHMARKS.md: ours, the paper's figure, the best published.

One table per paper table, between markers that name it::

    <!-- summary: dialog-babi -->
    ... (written by this module; edits here are overwritten) ...
    <!-- end summary -->

:func:`update_summaries` rewrites every such block from the result JSON files of
``benchmarks/results`` (ours, over seeds, and the paper's figure, which each file carries)
and from ``irdialog/data/best_published.csv`` (the best published result we know, with its
source), so ``irdialog bench report --check`` fails when a summary and the files disagree.
The per-task tables below the summaries are :mod:`irdialog.bench._report`'s.
"""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from importlib import resources
from pathlib import Path

SUMMARY_BLOCK = re.compile(
    r"(<!-- summary: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end summary -->)", re.DOTALL
)

# Each summary's rows: (result file, label, and what the summary needs to know of it).
_DIALOG_BABI = (
    ("dialog-babi-rule-based", "rule-based bot"),
    ("dialog-babi-tfidf", "TF-IDF"),
    ("dialog-babi-tfidf-type", "TF-IDF + match type"),
    ("dialog-babi-nn", "nearest neighbour"),
    ("dialog-babi-se", "supervised embeddings"),
    ("dialog-babi-se-type", "supervised embeddings + match type (Table 10)"),
    ("dialog-babi-se-bigrams", "supervised embeddings + bigrams (Table 10)"),
    ("dialog-babi-memn2n", "MemN2N"),
    ("dialog-babi-memn2n-type", "MemN2N + match type"),
    ("dialog-babi-bm25", "BM25 (not in the paper)"),
    ("dialog-babi-bm25-type", "BM25 + match type (not in the paper)"),
)
_WESTON = "Weston et al. 2015, Table 3"
_SUKHBAATAR = "Sukhbaatar et al. 2015, 1k"
_BABI_QA = (  # (file, label, supervision, whose figure the paper column is)
    ("babi-qa-ngram", "N-gram classifier", "weak", _WESTON),
    ("babi-qa-lstm", "LSTM reader", "weak", _WESTON),
    ("babi-qa-memn2n", "MemN2N (PE LS RN)", "weak", _SUKHBAATAR),
    ("babi-qa-memn2n-joint", "MemN2N, joint", "weak", _SUKHBAATAR),
    ("babi-qa-struct-svm", "structured SVM", "strong", _WESTON),
    ("babi-qa-memnn", "MemNN", "strong", _WESTON),
    ("babi-qa-memnn-am", "MemNN AM", "strong", _WESTON),
    ("babi-qa-memnn-am-ng", "MemNN AM+NG", "strong", _WESTON),
    ("babi-qa-memnn-am-nl", "MemNN AM+NL", "strong", _WESTON),
    ("babi-qa-memnn-am-ng-nl", "MemNN AM+NG+NL", "strong", _WESTON),
    ("babi-qa-memnn-am-ng-nl-joint", "MemNN AM+NG+NL, joint", "strong", _WESTON),
)
_MOVIE_DIALOG = (  # (model, label); files movie-dialog-<model>-task<t>
    ("svd", "SVD"),
    ("se", "supervised embeddings"),
    ("memn2n", "MemN2N"),
    ("lstm", "LSTM"),
)
_MOVIE_TASKS = ((1, "QA hits@1"), (2, "Recs hits@100"), (3, "QA+Recs hits@10"))


def best_published(path=None) -> list[dict]:
    """The best published results we know, one dict per row of ``best_published.csv``.

    Parameters
    ----------
    path : path-like, optional
        Another CSV of the same columns (default: the one in ``irdialog/data``).

    Returns
    -------
    rows : list of dict
        ``summary``, ``cell``, ``measure``, ``better`` (``"higher"`` or ``"lower"``),
        ``value`` (float), ``failed`` (int or None), ``method``, ``source``, ``note``.

    Examples
    --------
    >>> from irdialog.bench._summary import best_published
    >>> best = [r for r in best_published() if r["summary"] == "babi-qa"]
    >>> min(best, key=lambda r: r["value"])["method"]
    'Universal Transformer'
    """
    if path is None:
        text = resources.files("irdialog").joinpath("data", "best_published.csv").read_text("utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    for row in rows:
        if row["better"] not in ("higher", "lower"):
            raise ValueError(f"best_published.csv: better must be higher or lower, not {row}")
        row["value"] = float(row["value"])
        row["failed"] = int(row["failed"]) if row["failed"] else None
    return rows


def _load(results: Path, name: str, summary: str) -> dict:
    path = results / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"the {summary!r} summary of BENCHMARKS.md needs {name!r}, but {path} does not exist"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def _spread(values_by_seed: list[float], digits: int) -> str:
    """Mean ± sample standard deviation over seeds (the mean alone for one seed)."""
    mean = statistics.fmean(values_by_seed)
    if len(values_by_seed) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {statistics.stdev(values_by_seed):.{digits}f}"


def _by_seed(row: dict, key: str) -> list[float]:
    return row.get(f"{key}_by_seed") or [row[key]]


def _short(value: float) -> str:
    return f"{round(value, 2):g}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _best(summary: str, cell: str, table: list[dict]) -> dict | None:
    rows = [r for r in table if r["summary"] == summary and r["cell"] == cell]
    if not rows:
        return None
    pick = max if rows[0]["better"] == "higher" else min
    return pick(rows, key=lambda r: r["value"])


def _cite(row: dict, failed: bool = False) -> str:
    """``method value[, n failed] (source[, note])``."""
    value = _short(row["value"])
    if failed and row["failed"] is not None:
        value += f", {row['failed']} failed"
    note = f", {row['note']}" if row["note"] else ""
    return f"{row['method']} {value} ({row['source']}{note})"


def _others(summary: str, cell: str, table: list[dict], failed: bool = False) -> str:
    """The other published figures of one cell, after its best."""
    best = _best(summary, cell, table)
    rest = [r for r in table if r["summary"] == summary and r["cell"] == cell and r is not best]
    return ", ".join(_cite(r, failed) for r in rest)


def _failed(summary: dict) -> str:
    if summary.get("failed_std") is None:
        return f"{summary['failed']:g}"
    return f"{summary['failed']:.1f} ± {summary['failed_std']:.1f}"


def _seeds(results: list[dict]) -> str:
    counts = sorted({len(r["seeds"]) for r in results})
    return "/".join(str(c) for c in counts)


def _dialog_babi(results_dir: Path, table: list[dict]) -> list[str]:
    groups = (  # (column, its cell in best_published.csv, its rows)
        ("tasks 1-5", "tasks 1-5", lambda r: r["split"] == "tst" and r["task"] != 6),
        ("tasks 1-5 OOV", "OOV", lambda r: r["split"] == "tst-OOV"),
        ("task 6", "task 6", lambda r: r["task"] == 6),
    )
    header = ["model", "seeds"]
    for label, _, _ in groups:
        header += [f"{label} (ours)", "paper"]
    header.append("rows under the paper")
    body = []
    for name, label in _DIALOG_BABI:
        result = _load(results_dir, name, "dialog-babi")
        line = [label, _seeds([result])]
        for _, _, keep in groups:
            rows = [r for r in result["rows"] if keep(r)]
            seeds = zip(*(_by_seed(r, "per_response") for r in rows))
            per_seed = [statistics.fmean(values) for values in seeds]
            papers = [r["paper_per_response"] for r in rows]
            paper = "—" if None in papers else f"{statistics.fmean(papers):.1f}"
            line += [_spread(per_seed, 1), paper]
        compared = [r for r in result["rows"] if r["paper_per_response"] is not None]
        under = sum(round(r["per_response"], 1) < r["paper_per_response"] for r in compared)
        line.append(f"{under} of {len(compared)}" if compared else "—")
        body.append(line)
    best = ["**best published**", ""]
    for _, cell, _ in groups:
        found = _best("dialog-babi", cell, table)
        best += ["—" if found is None else _cite(found), ""]
    body.append(best + [""])
    notes = [
        "",
        "Test per-response accuracy in %, the mean over the tasks of each column (the paper's "
        "figure: the mean of its per-task figures); ± the sample standard deviation over "
        "seeds. Rows under the paper: the task rows (of 11) where ours, rounded as the "
        "paper's, is lower. Other published figures on task 6: "
        + _others("dialog-babi", "task 6", table)
        + ".",
    ]
    return _table(header, body) + notes


def _babi_qa(results_dir: Path, table: list[dict]) -> list[str]:
    header = [
        "model",
        "supervision",
        "seeds",
        "mean error % (ours)",
        "failed tasks (ours)",
        "tasks under the paper",
        "paper: error % (failed)",
        "best published, same supervision",
    ]
    body = []
    for name, label, supervision, whose in _BABI_QA:
        result = _load(results_dir, name, "babi-qa")
        s = result["summary"]  # the mean and spread the per-task tables below show
        error = f"{100.0 - s['mean_accuracy']:.2f}" + (
            "" if s.get("mean_accuracy_std") is None else f" ± {s['mean_accuracy_std']:.2f}"
        )
        paper = "—"
        if s.get("paper_mean_accuracy") is not None:
            failed = s.get("paper_failed")
            paper = _short(100.0 - s["paper_mean_accuracy"]) + (
                "" if failed is None else f" ({failed})"
            )
            paper += f", {whose}"
        compared = [r for r in result["rows"] if r.get("paper") is not None]
        under = sum(round(r["accuracy"]) < r["paper"] for r in compared)
        best = _best("babi-qa", supervision, table)
        body.append(
            [
                label,
                supervision,
                _seeds([result]),
                error,
                _failed(s),
                f"{under} of {len(compared)}" if compared else "—",
                paper,
                "—" if best is None else _cite(best, failed=True),
            ]
        )
    notes = [
        "",
        "Mean test error over the 20 tasks in % (100 minus the mean accuracy of the per-task "
        "tables below); a task fails under 95% accuracy; ± the sample standard deviation "
        "over seeds. Supervision: weak, answers only; strong, the supporting facts too (the "
        "paper's structured SVM also used coreference and semantic-role tools). Tasks under "
        "the paper: ours, rounded to a whole number as the paper's, is lower. Best published, "
        "weakly supervised: the best we know in the last column; also "
        + _others("babi-qa", "weak", table, failed=True)
        + ". For strong supervision we know of no figure beyond the paper's own.",
    ]
    return _table(header, body) + notes


def _movie_dialog(results_dir: Path, table: list[dict]) -> list[str]:
    header = ["model", "seeds"]
    for _, label in _MOVIE_TASKS:
        header += [f"{label} (ours)", "paper"]
    body = []
    for model, label in _MOVIE_DIALOG:
        results, line = [], []
        for task, _ in _MOVIE_TASKS:
            if model == "svd" and task != 2:  # SVD ranks movies for a user: Recs only
                line += ["not run", "—"]
                continue
            result = _load(results_dir, f"movie-dialog-{model}-task{task}", "movie-dialog")
            results.append(result)
            row = next(r for r in result["rows"] if "response" not in r)
            paper = row.get("paper")
            line += [_spread(_by_seed(row, "value"), 2), "—" if paper is None else f"{paper:.1f}"]
        body.append([label, _seeds(results), *line])
    cells = [_best("movie-dialog", label, table) for _, label in _MOVIE_TASKS]
    best = ["**best published**", ""]
    for found in cells:
        best += ["—" if found is None else _cite(found), ""]
    notes = [
        "",
        "Test hits@k in %, Dodge et al. 2016, Table 6. Ours are fitted on the dev split (the "
        "training files are not distributed with the data we have), the paper's on the "
        "training split, which is many times larger (the Movie Dialog section below).",
    ]
    return _table(header, body + [best]) + notes


_SUMMARIES = {
    "dialog-babi": _dialog_babi,
    "babi-qa": _babi_qa,
    "movie-dialog": _movie_dialog,
}


def render_summary(name: str, results_dir, best_published_csv=None) -> str:
    """The Markdown of one summary block.

    Parameters
    ----------
    name : {"dialog-babi", "babi-qa", "movie-dialog"}
        Which paper table.
    results_dir : path-like
        The folder of the result JSON files.
    best_published_csv : path-like, optional
        Another table of best published results (default: irdialog's own).

    Returns
    -------
    markdown : str
    """
    if name not in _SUMMARIES:
        raise ValueError(f"no summary named {name!r}; the summaries are {sorted(_SUMMARIES)}")
    table = best_published(best_published_csv)
    return "\n".join(_SUMMARIES[name](Path(results_dir), table)) + "\n"


def update_summaries(text: str, results_dir) -> str:
    """``text`` with every summary block re-rendered from ``results_dir``.

    Examples
    --------
    >>> from irdialog.bench._summary import update_summaries
    >>> update_summaries("# Benchmarks\\n", "benchmarks/results")
    '# Benchmarks\\n'
    """

    def render(match):
        return match.group(1) + render_summary(match.group("name"), results_dir) + match.group(4)

    return SUMMARY_BLOCK.sub(render, text)
