"""The papers' result tables, bundled as CSV in ``irdialog/data/reference``."""

import csv
from importlib import resources


def paper_table(name: str) -> list[dict]:
    """A result table of the papers (bundled CSV), as a list of rows.

    Parameters
    ----------
    name : str
        The file name in ``irdialog/data/reference`` (e.g. ``"dialog_babi_table2.csv"``).

    Returns
    -------
    rows : list of dict
        One dict of str per row, keyed by the CSV header (comment lines skipped).

    Examples
    --------
    >>> from irdialog.bench import paper_table
    >>> row = paper_table("dialog_babi_table2.csv")[0]
    >>> row["task"], row["split"], row["tfidf"]
    ('1', 'tst', '5.6')
    """
    text = resources.files("irdialog").joinpath("data", "reference", name).read_text("utf-8")
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines))
