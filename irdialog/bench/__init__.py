"""Benchmark suites: the rows of the papers' tables, reproduced on the real data.

One module per data family: dialog bAbI and bAbI QA (``_babi``), Movie Dialog
(``_movie_dialog``), Ubuntu (``_ubuntu``). Each suite returns a JSON-ready dict with
``suite``, ``model``, ``params`` (chosen on held-out data, never test), ``rows`` and
``seconds``; the ``irdialog bench`` command prints and saves it.
"""

from ._babi import (
    BABI_QA_MODELS,
    DIALOG_BABI_MODELS,
    bench_babi_qa,
    bench_dialog_babi,
    format_qa_table,
    format_table,
    with_paper,
)
from ._movie_dialog import MOVIE_DIALOG_MODELS, bench_movie_dialog
from ._paper import paper_table
from ._ubuntu import UBUNTU_MODELS, bench_ubuntu

__all__ = [
    "BABI_QA_MODELS",
    "DIALOG_BABI_MODELS",
    "MOVIE_DIALOG_MODELS",
    "UBUNTU_MODELS",
    "bench_babi_qa",
    "bench_dialog_babi",
    "bench_movie_dialog",
    "bench_ubuntu",
    "format_qa_table",
    "format_table",
    "paper_table",
    "with_paper",
]
