"""Hyper-parameters chosen beforehand, as data: ``irdialog/data/presets/<suite>-<model>.json``.

A preset file holds, per task, the parameters only, with the search that chose them (a
command) and what that search scored them kept apart::

    {"suite": "babi-qa", "model": "ngram", "search": "irdialog bench ... --search",
     "notes": [...], "grid": {...},
     "presets": [{"task": 1, "params": {...}, "selection": {"valid_accuracy": 61.2}}, ...]}

``"task": null`` is the preset of a joint model over all tasks. ``irdialog bench ...
--search`` writes such a file; the bench reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


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


def write_presets(path, *, suite, model, search, chosen, grid=None, notes=()) -> None:
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
    if grid is not None:
        doc["grid"] = grid
    doc["presets"] = [
        {"task": c["task"], "params": c["params"], "selection": c["selection"]} for c in chosen
    ]
    Path(path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
