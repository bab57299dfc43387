"""Benchmark suites: the rows of the papers' tables, reproduced on the real data.

One module per suite: dialog bAbI (``_dialog_babi``), bAbI QA (``_babi_qa``), Movie Dialog
(``_movie_dialog``), Ubuntu (``_ubuntu``), InsuranceQA (``_insuranceqa``), each ending in
its declaration (``SUITE``, a :class:`Suite` of :class:`ModelSpec` models, each with its
:class:`Selection` of hyper-parameters), found there by the registry (``_registry``; a suite
declared elsewhere joins with :func:`register`). Hyper-parameters chosen beforehand are data
(``_presets``, ``irdialog/data/presets/*.json``). A suite's run, one seed, gives the rows of
its table next to the paper's: the one runner (``_runner``) runs every suite that declares
how its data is read and scored, and a suite with a protocol of its own gives its ``run``.
:func:`run_suite` runs it over seeds and adds the provenance record (``_harness``,
``_provenance``); :func:`result_rows` reads any result in one long row format
(:class:`Row`); ``_report`` renders the result files as the Markdown tables of
BENCHMARKS.md, the speed results' from the declaration of the script that made them
(``_speed``). ``_own_data`` holds the models of ``irdialog train --train``. ``_command`` is
``irdialog bench``, the command over all of it; ``_reproduce`` (``bench reproduce``)
re-runs the result files from their recorded commands, parsed by ``_command``, and
compares.
"""

from ._babi_qa import BABI_QA_MODELS, bench_babi_qa, search_babi_qa, train_babi_qa
from ._dialog_babi import (
    DIALOG_BABI_MODELS,
    bench_dialog_babi,
    search_dialog_babi,
    train_dialog_babi,
)
from ._harness import dask_cluster, fit_threads, merge_runs, reseed, run_suite
from ._movie_dialog import MOVIE_DIALOG_MODELS, bench_movie_dialog
from ._paper import paper_table
from ._presets import Preset, load_presets, read_presets, write_presets
from ._provenance import provenance
from ._registry import SUITES, format_result, register, result_rows
from ._suite import ModelSpec, Row, Selection, Suite
from ._ubuntu import UBUNTU_MODELS, bench_ubuntu

__all__ = [
    "BABI_QA_MODELS",
    "SUITES",
    "DIALOG_BABI_MODELS",
    "MOVIE_DIALOG_MODELS",
    "UBUNTU_MODELS",
    "ModelSpec",
    "Preset",
    "Row",
    "Selection",
    "Suite",
    "bench_babi_qa",
    "bench_dialog_babi",
    "bench_movie_dialog",
    "bench_ubuntu",
    "dask_cluster",
    "fit_threads",
    "format_result",
    "load_presets",
    "merge_runs",
    "paper_table",
    "provenance",
    "read_presets",
    "register",
    "reseed",
    "result_rows",
    "run_suite",
    "search_babi_qa",
    "search_dialog_babi",
    "train_babi_qa",
    "train_dialog_babi",
    "write_presets",
]
