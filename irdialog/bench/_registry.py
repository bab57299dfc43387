"""The one registry of the harness: every suite module's ``SUITE`` declaration. A new suite
is one module, ``irdialog/bench/_<suite>.py``, ending in ``SUITE = Suite(...)``, and its
name in :data:`SUITE_MODULES`; nothing else lists it."""

from __future__ import annotations

import importlib

from ._suite import Row, Suite

# The suite modules, in the order of ``irdialog bench --help``.
SUITE_MODULES = ("_dialog_babi", "_babi_qa", "_movie_dialog", "_ubuntu", "_insuranceqa")

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (importlib.import_module(f"{__package__}.{m}").SUITE for m in SUITE_MODULES)
}


def result_rows(result: dict) -> list[Row]:
    """The long rows (:class:`~irdialog.bench._suite.Row`) of any suite's result record,
    committed files included.

    Examples
    --------
    >>> from irdialog.bench import result_rows
    >>> result = {"suite": "dialog-babi", "model": "tfidf", "rows": [{"task": 1,
    ...     "split": "tst", "n": 5936, "per_response": 5.8, "per_dialog": 0.0,
    ...     "paper_per_response": 5.6, "paper_per_dialog": 0.0}]}
    >>> [(r.metric, r.value, r.paper) for r in result_rows(result)]
    [('per_response', 5.8, 5.6), ('per_dialog', 0.0, 0.0)]
    """
    return _suite_of(result).rows(result)


def format_result(result: dict) -> str:
    """The plain-text table ``irdialog bench`` prints for a result of any suite: one line
    per figure (:class:`~irdialog.bench._suite.Row`), ours next to the paper's.

    Examples
    --------
    >>> from irdialog.bench import format_result
    >>> result = {"suite": "babi-qa", "model": "ngram", "options": {}, "rows": [
    ...     {"task": 1, "n": 1000, "accuracy": 60.0, "paper": 36.0}]}
    >>> print(format_result(result))
    task  split      metric               n    ngram (ours)     paper   diff
    1     test       accuracy          1000            60.0      36.0  +24.0
    """
    return _suite_of(result).format(result)


def _suite_of(result: dict) -> Suite:
    suite = SUITES.get(result.get("suite"))
    if suite is None:
        raise ValueError(f"unknown bench suite {result.get('suite')!r}; known: {sorted(SUITES)}")
    return suite
