"""Hyper-parameters chosen beforehand, as data: ``irdialog/data/presets/<suite>-<model>.json``.

A preset file holds, per task, the parameters only, with the search that chose them (a
command) and what that search scored them kept apart::

    {"suite": "babi-qa", "model": "ngram", "search": "irdialog bench ... --search",
     "notes": [...], "grid": {...},
     "presets": [{"task": 1, "params": {...}, "selection": {"valid_accuracy": 61.2}}, ...]}

``"task": null`` is the preset of a joint model over all tasks. ``irdialog bench ...
--search`` writes such a file; the bench reads it.

Each file also keeps its protocol record (:func:`search_protocol`): the commit the search
ran at, the test results of the model that already existed then (a search space should be
committed before test is first scored), and ``after_test``, every choice made or search
widened after test results of the model were seen. benchmarks/NOTES.md shows them all
(:func:`protocol_table`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ._provenance import git_commit


@dataclass(frozen=True)
class Preset:
    """The parameters of one task, the search that chose them, and its scores."""

    params: dict
    search: str
    selection: dict = field(default_factory=dict)

    @property
    def record(self) -> dict:
        """The search and its scores, for a result's ``chosen[...]["selection"]``."""
        return {"search": self.search, **self.selection}


def _tuples(params: dict) -> dict:
    # JSON has no tuples; the estimators' sequence parameters (ngram_range) take tuples.
    return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}


def preset_path(suite: str, model: str) -> Path:
    """The bundled preset file of a suite's model."""
    return (
        Path(str(resources.files("irdialog").joinpath("data", "presets"))) / f"{suite}-{model}.json"
    )


def read_presets(path) -> dict:
    """A preset file as ``{"search", "notes", "grid", "presets": {task: Preset}}``.

    Examples
    --------
    >>> from irdialog.bench._presets import preset_path, read_presets
    >>> presets = read_presets(preset_path("babi-qa", "struct-svm"))
    >>> presets["presets"][2].params
    {'C': 10.0}
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    search = doc["search"]
    return {
        **doc,
        "presets": {
            entry["task"]: Preset(_tuples(entry["params"]), search, entry.get("selection", {}))
            for entry in doc["presets"]
        },
    }


def load_presets(suite: str, model: str) -> dict:
    """``{task: Preset}`` of a suite's model, from its bundled preset file.

    Examples
    --------
    >>> from irdialog.bench import load_presets
    >>> load_presets("babi-qa", "memn2n")[None].params["embedding_dim"]  # the joint model
    160
    """
    return read_presets(preset_path(suite, model))["presets"]


def write_presets(
    path, *, suite, model, search, chosen, grid=None, notes=(), protocol=None
) -> None:
    """Write a preset file from the ``chosen`` entries of a search (``{"task", "params",
    "selection"}`` each).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.bench import read_presets, write_presets
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.json"
    >>> write_presets(path, suite="babi-qa", model="ngram", search="by hand",
    ...               chosen=[{"task": 1, "params": {"max_df": 0.5}, "selection": {}}])
    >>> read_presets(path)["presets"][1].params
    {'max_df': 0.5}
    """
    doc = {"suite": suite, "model": model, "search": search, "notes": list(notes)}
    if protocol is not None:
        doc["protocol"] = protocol
    if grid is not None:
        doc["grid"] = grid
    doc["presets"] = [
        {"task": c["task"], "params": c["params"], "selection": c["selection"]} for c in chosen
    ]
    Path(path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def search_protocol(suite: str, model: str, results_dir="benchmarks/results") -> dict:
    """The protocol record of a search run now: the commit of this checkout (``+changes``
    when its code has uncommitted changes; None outside git) and the committed test results
    of ``model`` in ``results_dir`` (``after_test`` starts empty: a person fills it in).

    Examples
    --------
    >>> from irdialog.bench._presets import search_protocol
    >>> record = search_protocol("babi-qa", "no-such-model")
    >>> record["test_results_before"], record["after_test"]
    ([], [])
    """
    commit = git_commit()
    seen = []
    for path in sorted(Path(results_dir).glob(f"{suite}-{model}*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        if result.get("suite") == suite and result.get("model") == model:
            seen.append(path.stem)
    return {
        "searched_at": None
        if commit is None
        else commit["commit"][:7] + ("+changes" if commit["dirty"] else ""),
        "test_results_before": seen,
        "after_test": [],
    }


PROTOCOL_BLOCK = re.compile(r"(<!-- presets -->\n)(.*?)(<!-- end presets -->)", re.DOTALL)


def protocol_table(presets_dir=None) -> list[str]:
    """One Markdown row per preset file: its search, the commit it ran at, whether test
    results of the model existed then, and what was chosen after test results were seen.

    Examples
    --------
    >>> from irdialog.bench._presets import protocol_table
    >>> protocol_table()[0].split(" | ")[:2]
    ['| preset', 'searched at']
    """
    folder = preset_path("x", "y").parent if presets_dir is None else Path(presets_dir)
    lines = [
        "| preset | searched at | test results of the model before | chosen after test "
        "results were seen |",
        "|---|---|---|---|",
    ]
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        record = doc.get("protocol")
        if record is None:
            raise ValueError(f"preset file {path.name} has no protocol record")
        before = record["test_results_before"]
        after = "; ".join(record["after_test"]) or "nothing"
        lines.append(
            f"| `{path.stem}` | {record['searched_at'] or 'outside git'} | "
            f"{', '.join(f'`{name}`' for name in before) or 'none'} | {after} |"
        )
    return lines


def update_protocol(text: str) -> str:
    """``text`` with its presets block (``<!-- presets -->``) re-rendered."""
    return PROTOCOL_BLOCK.sub(
        lambda m: m.group(1) + "\n".join(protocol_table()) + "\n" + m.group(3), text
    )
