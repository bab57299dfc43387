"""The papers' result tables, bundled as CSV in ``irdialog/data/reference``."""

import csv
from importlib import resources


def paper_table(name: str) -> list[dict]:
    """A result table of the papers (bundled CSV), as a list of rows."""
    text = resources.files("irdialog").joinpath("data", "reference", name).read_text("utf-8")
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines))
