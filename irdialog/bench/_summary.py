"""The summary tables that open BENCHMARKS.md: ours, the paper's figure, the best published.

One table per paper table, between markers that name it::

    <!-- summary: dialog-babi -->
    ... (written by this module; edits here are overwritten) ...
    <!-- end summary -->

:func:`update_summaries` rewrites every such block from the result JSON files of
``benchmarks/results`` (ours, over seeds, and the paper's figure, which each file carries)
and from ``irdialog/data/best_published.csv`` (the best published result we know, with its
source), so ``irdialog bench report --check`` fails when a summary and the files
disagree. What each table shows is its suite's ``summary``, declared with the suite (in
``_<suite>.py``); the helpers here are what those share.
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


def load_result(results: Path, name: str, summary: str | None = None) -> dict:
    """The result ``name`` in ``results`` that the summary ``summary`` of BENCHMARKS.md
    (None: a results block) needs."""
    path = results / f"{name}.json"
    if not path.is_file():
        needs = f"the {summary!r} summary of BENCHMARKS.md needs"
        needs = "BENCHMARKS.md names result" if summary is None else needs
        raise FileNotFoundError(f"{needs} {name!r}, but {path} does not exist")
    return json.loads(path.read_text(encoding="utf-8"))


def seed_spread(values_by_seed: list[float], digits: int) -> str:
    """Mean ± sample standard deviation over seeds (the mean alone for one seed)."""
    mean = statistics.fmean(values_by_seed)
    if len(values_by_seed) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {statistics.stdev(values_by_seed):.{digits}f}"


def by_seed(row: dict, key: str) -> list[float]:
    return row.get(f"{key}_by_seed") or [row[key]]


def short(value: float) -> str:
    return f"{round(value, 2):g}"


def best_of(summary: str, cell: str, table: list[dict]) -> dict | None:
    rows = [r for r in table if r["summary"] == summary and r["cell"] == cell]
    if not rows:
        return None
    pick = max if rows[0]["better"] == "higher" else min
    return pick(rows, key=lambda r: r["value"])


def cite(row: dict, failed: bool = False) -> str:
    """``method value[, n failed] (source[, note])``."""
    value = short(row["value"])
    if failed and row["failed"] is not None:
        value += f", {row['failed']} failed"
    note = f", {row['note']}" if row["note"] else ""
    return f"{row['method']} {value} ({row['source']}{note})"


def others(summary: str, cell: str, table: list[dict], failed: bool = False) -> str:
    """The other published figures of one cell, after its best."""
    best = best_of(summary, cell, table)
    rest = [r for r in table if r["summary"] == summary and r["cell"] == cell and r is not best]
    return ", ".join(cite(r, failed) for r in rest)


def failed_spread(summary: dict) -> str:
    if summary.get("failed_std") is None:
        return f"{summary['failed']:g}"
    return f"{summary['failed']:.1f} ± {summary['failed_std']:.1f}"


def seed_counts(results: list[dict]) -> str:
    counts = sorted({len(r["seeds"]) for r in results})
    return "/".join(str(c) for c in counts)


def render_summary(name: str, results_dir, best_published_csv=None) -> str:
    """The Markdown of one summary block: the ``summary`` its suite declares
    (:class:`~irdialog.bench.Suite`).

    Parameters
    ----------
    name : str
        The suite whose paper table it summarises (``"dialog-babi"``, ``"babi-qa"``,
        ``"movie-dialog"``).
    results_dir : path-like
        The folder of the result JSON files.
    best_published_csv : path-like, optional
        Another table of best published results (default: irdialog's own).

    Returns
    -------
    markdown : str
    """
    from ._registry import SUITES  # the suite modules import this one's helpers

    summaries = {n: suite.summary for n, suite in SUITES.items() if suite.summary}
    if name not in summaries:
        raise ValueError(f"no summary named {name!r}; the summaries are {sorted(summaries)}")
    table = best_published(best_published_csv)
    return "\n".join(summaries[name](Path(results_dir), table)) + "\n"


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
