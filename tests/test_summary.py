"""The summary tables that open BENCHMARKS.md are derived from the result files."""

import json
import shutil
from pathlib import Path

import pytest

from irdialog.bench._report import update_markdown
from irdialog.bench._summary import best_published, render_summary
from irdialog.cli import main

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SUMMARIES = ("dialog-babi", "babi-qa", "movie-dialog")


@pytest.fixture
def results(tmp_path):
    """A copy of the committed result files, free to edit."""
    folder = tmp_path / "results"
    folder.mkdir()
    for path in RESULTS.glob("*.json"):
        shutil.copy(path, folder / path.name)
    return folder


def _edit(folder, name, change):
    path = folder / f"{name}.json"
    result = json.loads(path.read_text())
    change(result)
    path.write_text(json.dumps(result))


def _row(markdown, label):
    """The cells of the table row whose first cell is ``label``."""
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in\n{markdown}")


def test_benchmarks_md_opens_with_every_summary():
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    first_results = text.index("<!-- results:")
    for name in SUMMARIES:
        assert -1 < text.find(f"<!-- summary: {name} -->") < first_results


def test_dialog_babi_cell_follows_the_result_file(results):
    before = _row(render_summary("dialog-babi", results), "rule-based bot")
    assert before[6:8] == ["41.9", "33.3"]  # task 6: ours, the paper's

    def change(result):
        row = next(r for r in result["rows"] if r["task"] == 6)
        row["per_response"], row["paper_per_response"] = 12.34, 50.0

    _edit(results, "dialog-babi-rule-based", change)
    after = _row(render_summary("dialog-babi", results), "rule-based bot")
    assert after[6:9] == ["12.3", "50.0", "1 of 11"]
    assert after[:6] == before[:6]


def test_seed_spread_is_over_the_per_seed_means(results):
    def change(result):  # two seeds: tasks 1-5 average 10 on one, 20 on the other
        for row in result["rows"]:
            row["per_response_by_seed"] = [10.0, 20.0]
        result["seeds"] = [0, 1]

    _edit(results, "dialog-babi-memn2n", change)
    cells = _row(render_summary("dialog-babi", results), "MemN2N")
    assert cells[1] == "2" and cells[2] == "15.0 ± 7.1"


def test_babi_qa_cell_follows_the_result_file(results):
    def change(result):
        result["summary"].update(mean_accuracy=90.0, mean_accuracy_std=1.5, failed=3.0)

    _edit(results, "babi-qa-memn2n", change)
    cells = _row(render_summary("babi-qa", results), "MemN2N (PE LS RN)")
    assert cells[3:5] == ["10.00 ± 1.50", "3.0 ± 0.5"]
    assert cells[-1].startswith("Universal Transformer 4.55, 3 failed")


def test_best_published_is_read_from_its_table(tmp_path, results):
    table = tmp_path / "best.csv"
    table.write_text(
        "summary,cell,measure,better,value,failed,method,source,note\n"
        "dialog-babi,task 6,accuracy,higher,60.5,,X,Someone 2030,\n"
        "dialog-babi,task 6,accuracy,higher,70.5,,Y,Other 2031,a note\n"
    )
    best = _row(render_summary("dialog-babi", results, table), "**best published**")
    assert best[6] == "Y 70.5 (Other 2031, a note)" and best[4] == "—"
    table.write_text(table.read_text().replace("higher,70.5", "sideways,70.5"))
    with pytest.raises(ValueError, match="higher or lower"):
        best_published(table)


def test_only_the_figures_we_were_given_are_best_published():
    rows = {(r["method"], r["value"], r["failed"]) for r in best_published()}
    assert ("Universal Transformer", 4.55, 3) in rows and ("HCN", 55.6, None) in rows
    assert {r["summary"] for r in best_published()} == {"babi-qa", "dialog-babi"}
    assert all(r["source"] for r in best_published())


def test_a_missing_result_file_is_named(results):
    (results / "babi-qa-lstm.json").unlink()
    with pytest.raises(FileNotFoundError, match="babi-qa-lstm"):
        render_summary("babi-qa", results)
    with pytest.raises(ValueError, match="no summary named"):
        render_summary("ubuntu", results)


def test_report_check_fails_on_a_stale_summary(tmp_path, results, capsys):
    markdown = tmp_path / "BENCH.md"
    markdown.write_text("# B\n<!-- summary: movie-dialog -->\nstale\n<!-- end summary -->\n")
    args = ["bench", "report", "--markdown", str(markdown), "--results", str(results)]
    assert main([*args, "--check"]) == 1
    assert main(args) == 0 and "| SVD | 1 | not run |" in markdown.read_text()
    assert main([*args, "--check"]) == 0
    _edit(results, "movie-dialog-svd-task2", lambda r: r["rows"][0].update(value=1.0))
    assert update_markdown(markdown, results, check=True)
    assert main([*args, "--check"]) == 1
