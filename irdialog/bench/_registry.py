"""The one registry of the harness: every suite's ``SUITE`` declaration.

A suite is one module of this package, ``irdialog/bench/_<suite>.py``, that declares
``SUITE = Suite(...)`` (or a helper that returns one, as ``tsv_suite``) at its top level:
the registry finds it there, and nothing else lists it. A suite declared outside the
package (a project's own, a test's) joins with :func:`register`.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from ._suite import Row, Suite

_DECLARES = re.compile(r"^SUITE = \w+\(", re.MULTILINE)


def _suite_modules() -> list[str]:
    """The modules of this package that declare a suite (read, not imported)."""
    here = Path(__file__).parent
    return [
        path.stem
        for path in sorted(here.glob("_*.py"))
        if _DECLARES.search(path.read_text(encoding="utf-8"))
    ]


# In the order of their modules' names (``irdialog bench --help``).
SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        getattr(importlib.import_module(f"{__package__}.{m}"), "SUITE", None)
        for m in _suite_modules()
    )
    if isinstance(suite, Suite)
}
# The modules that declared the suites registered from outside the package: a child
# process imports them to know those suites too (``bench reproduce``).
_REGISTERED_FROM: dict[str, str] = {}


def register(suite: Suite) -> Suite:
    """Add a suite declared outside the package to the registry: ``irdialog bench
    NAME``, ``bench reproduce`` and ``bench report`` then know it. Register it at the top
    level of the module that declares it.

    Examples
    --------
    >>> from irdialog.bench import SUITES, Suite, register
    >>> toy = Suite("toy-doc", "a suite of no data", models={}, table=list, run=dict)
    >>> register(toy) is SUITES["toy-doc"]
    True
    >>> del SUITES["toy-doc"]
    """
    if suite.name in SUITES and SUITES[suite.name] is not suite:
        raise ValueError(f"a bench suite named {suite.name!r} is already registered")
    SUITES[suite.name] = suite
    defined_by = suite.load if suite.load is not None else suite.run
    module = getattr(defined_by, "__module__", None)
    if module and not module.startswith(f"{__package__}."):
        _REGISTERED_FROM[suite.name] = module
    return suite


def registered_modules() -> list[str]:
    """The modules outside the package whose suites are registered."""
    return sorted(set(_REGISTERED_FROM.values()))


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
