"""Benchmark suites: the rows of the papers' tables, reproduced on the real data.

One module per data family: dialog bAbI and bAbI QA (``_babi``), Movie Dialog
(``_movie_dialog``), Ubuntu (``_ubuntu``). A suite function runs one seed and returns the
rows of its table next to the paper's; :func:`run_suite` runs it over seeds and adds the
provenance record (``_harness``, ``_provenance``); ``_report`` renders the result files as
the Markdown tables of BENCHMARKS.md. ``irdialog bench`` is the command over all of it.
"""

from ._babi import (
    BABI_QA_MODELS,
    DIALOG_BABI_MODELS,
    Preset,
    bench_babi_qa,
    bench_dialog_babi,
    format_qa_table,
    format_table,
)
from ._harness import merge_runs, reseed, run_suite
from ._movie_dialog import MOVIE_DIALOG_MODELS, bench_movie_dialog
from ._paper import paper_table
from ._provenance import provenance
from ._ubuntu import UBUNTU_MODELS, bench_ubuntu

__all__ = [
    "BABI_QA_MODELS",
    "DIALOG_BABI_MODELS",
    "MOVIE_DIALOG_MODELS",
    "UBUNTU_MODELS",
    "Preset",
    "bench_babi_qa",
    "bench_dialog_babi",
    "bench_movie_dialog",
    "bench_ubuntu",
    "format_qa_table",
    "format_table",
    "merge_runs",
    "paper_table",
    "provenance",
    "reseed",
    "run_suite",
]
