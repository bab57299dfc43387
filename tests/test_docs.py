"""The documentation: its code examples run, and its API reference names every public name.

The guide's examples are doctests (``>>>``) and ``console`` blocks (``$ irdialog ...``); each
page runs top to bottom in a temporary folder, on the data bundled with the package, so that
a file one example writes is there for the next. A ``console`` block marked
``:class: real-data`` reads the real data sets, and one marked ``:class: slow`` takes a
minute or more: both run only with ``--run-slow``; ``from-root`` runs a block from the
repository's root instead (the commands that read its committed results).
The HTML build itself (``python -m sphinx -W ...``) is a step of ``.ci/run``.
"""

import doctest
import importlib
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import irdialog

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted((DOCS / "user_guide").glob("*.rst")) + [DOCS / "index.rst"]
API = [DOCS / "api.rst", *sorted((DOCS / "api").glob("*.rst"))]  # the index, a page a module
IMPORTED = Path(irdialog.__file__).resolve().parents[1]
# The modules whose names the API reference must list: every __all__, and the public
# functions of the modules that have none.
PUBLIC = {
    "irdialog": None,
    "irdialog.datasets": None,
    "irdialog.metrics": None,
    "irdialog.retrieval": None,
    "irdialog.embed": None,
    "irdialog.svm": None,
    "irdialog.entities": None,
    "irdialog.ensemble": None,
    "irdialog.persist": None,
    "irdialog.bench": None,
    "irdialog.base": ["Context", "Turn", "RankerMixin", "ContextTransformerMixin"],
    "irdialog.features": ["MatchTypeFeaturizer", "match_type_matrices"],
    "irdialog.pipeline": ["RankingPipeline", "make_ranking_pipeline"],
    "irdialog.text": ["tokenize", "char_tokenize", "SubwordTokenizer", "UnigramTokenizer"],
    "irdialog.chat": ["ChatSession", "chat"],
    "irdialog.plot": ["plot_attention", "plot_learning_curve", "plot_bench", "save_plot"],
}
CONSOLE = re.compile(r"^\.\. code-block:: console\n((?:   :\w+:.*\n)*)\n((?:(?:   .*)?\n)+)", re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _segments(text: str):
    """The page as ("doctest", text, first line) and ("console", commands, options) parts,
    in order."""
    position = 0
    for match in CONSOLE.finditer(text):
        yield "doctest", text[position : match.start()], text[:position].count("\n")
        lines = [line[3:] for line in match.group(2).splitlines()]
        commands, current = [], ""
        for line in lines:
            if line.startswith("$ "):
                current = line[2:]
            elif current and current.endswith("\\"):
                current = current[:-1] + " " + line.strip()
            else:
                continue
            if not current.endswith("\\"):
                commands.append(current)
        yield "console", commands, match.group(1)
        position = match.end()
    yield "doctest", text[position:], text[:position].count("\n")


def _run_command(command: str, env: dict, cwd=None) -> None:
    argv = ["bash", "-c", "set -o pipefail; " + command]
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"


def _imports_missing(source: str) -> bool:
    """Does a doctest example import a module this environment lacks (an optional extra's,
    such as ``distributed`` in the minimum-versions run)?"""
    for match in re.finditer(r"^\s*(?:from|import)\s+([\w.]+)", source, re.M):
        if importlib.util.find_spec(match.group(1).split(".")[0]) is None:
            return True
    return False


def _irdialog_on_path(folder: Path) -> str:
    """A folder whose ``irdialog`` runs, with this Python, the irdialog these tests import,
    whatever console script the environment has."""
    folder.mkdir()
    script = folder / "irdialog"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m irdialog "$@"\n')
    script.chmod(0o755)
    return str(folder)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_guide_examples_run(page, tmp_path, monkeypatch, request):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    env = {
        **os.environ,
        # the commands import the irdialog these tests import (the checkout's, or an installed one)
        "PYTHONPATH": os.pathsep.join([str(IMPORTED), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([_irdialog_on_path(tmp_path / ".bin"), os.environ["PATH"]]),
    }
    run_slow = request.config.getoption("--run-slow")
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict = {"__name__": "__docs__"}
    lacking = False
    ran = 0
    for kind, body, options in _segments(page.read_text(encoding="utf-8")):
        if kind == "doctest":
            test = parser.get_doctest(body, globs, page.stem, str(page), options)
            for example in test.examples:  # skipped from the first that needs a missing extra
                lacking = lacking or _imports_missing(example.source)
                if lacking:
                    example.options[doctest.SKIP] = True
            runner.run(test, clear_globs=False)
            globs = test.globs  # a DocTest runs on a copy: carry its names to the next part
            ran += len(test.examples)
        elif "real-data" in options or "slow" in options:
            if run_slow:
                extra = {}
                if "real-data" in options:
                    extra["IRDIALOG_DATA"] = str(request.getfixturevalue("data_home"))
                cwd = ROOT if "from-root" in options else None
                for command in body:
                    _run_command(command, {**env, **extra}, cwd)
        else:
            for command in body:
                _run_command(command, env)
                ran += 1
    failed, _ = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} example(s) of {page.name} failed: see the output above"
    assert ran or page.stem in {"index", "models", "development"}


def _documented_names() -> set[str]:
    text = "\n".join(page.read_text(encoding="utf-8") for page in API)
    listed = re.findall(r"^   ([A-Za-z_]\w*)$", text, re.M)  # autosummary entries
    linked = re.findall(r":\w+:`~?irdialog\.(\w+)`", text)  # estimators listed again as links
    return set(listed) | set(linked)


def test_api_reference_names_every_public_name():
    documented = _documented_names()
    missing = []
    for name, names in PUBLIC.items():
        module = importlib.import_module(name)
        for public in names if names is not None else module.__all__:
            if public not in documented:
                missing.append(f"{name}.{public}")
    assert not missing, f"docs/api/ does not list: {', '.join(missing)}"


def test_every_public_module_is_in_the_api_reference():
    """A subpackage added to irdialog with an __all__ needs a section of its own."""
    import pkgutil

    text = "\n".join(page.read_text(encoding="utf-8") for page in API)
    for info in pkgutil.iter_modules(irdialog.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"irdialog.{info.name}")
        if hasattr(module, "__all__"):
            assert f".. automodule:: irdialog.{info.name}\n" in text, info.name
            assert f"irdialog.{info.name}" in PUBLIC, info.name
