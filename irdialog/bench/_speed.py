"""The speed benchmarks, found where they are declared: a speed result records the command
that made it (``python -m benchmarks.<name> ...``), and that script of the repository's
``benchmarks/`` folder (not installed) declares at its top level what ``irdialog bench
report`` and ``irdialog bench reproduce`` read of its results, ``SPEED``: its Markdown
``table``, the ``ratios`` a re-run must repeat, and the ``peers`` and ``programs`` it needs.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path


def script_module(command: str) -> str:
    """The module of a recorded ``python -m benchmarks.<name> ...`` command.

    Examples
    --------
    >>> from irdialog.bench._speed import script_module
    >>> script_module("python -m benchmarks.pool_speed --dims 32 --output r.json")
    'benchmarks.pool_speed'
    """
    argv = shlex.split(command)
    if len(argv) < 3 or argv[1] != "-m" or not argv[2].startswith("benchmarks."):
        raise ValueError(f"not a python -m benchmarks.<name> command: {command}")
    return argv[2]


def speed_declaration(result: dict, root=None):
    """The ``SPEED`` declaration of the script that made a speed result, imported from the
    repository ``root``, else from the current directory.

    Raises
    ------
    ValueError
        When the result records no such command, or its script is not found or declares
        nothing.
    """
    command = (result.get("provenance") or {}).get("command") or ""
    module = script_module(command)
    where = [str(Path(p).resolve()) for p in ([root] if root is not None else []) + ["."]]
    added = [p for p in dict.fromkeys(where) if p not in sys.path]
    sys.path[:0] = added
    try:
        script = importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise ValueError(f"no script {module} under {' or '.join(where)} ({err})") from None
    finally:
        for path in added:
            sys.path.remove(path)
    declaration = getattr(script, "SPEED", None)
    if declaration is None:
        raise ValueError(f"{module} declares no SPEED = SpeedBenchmark(...)")
    return declaration
