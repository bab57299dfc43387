"""The tasks and splits of a data set family, read from its file names (``irdialog
datasets``)."""

from __future__ import annotations

import re

_SPLIT_ORDER = {s: i for i, s in enumerate(
    ("trn", "train", "dev", "valid", "cand-valid", "tst", "test", "cand-test", "tst-OOV")
)}  # fmt: skip


def tasks_and_splits(family: str, files: list[str]) -> list[str]:
    """Lines ``split tasks`` (per language folder for bAbI QA) of the files of a data set
    family, as :func:`~irdialog.datasets.list_datasets` lists them; the files of no known
    task or split on a last line ``other: ...``.

    Examples
    --------
    >>> from irdialog.datasets._listing import tasks_and_splits
    >>> names = ["dialog-babi-task1-API-calls-trn.txt.gz", "dialog-babi-task2-x-trn.txt",
    ...          "dialog-babi-task1-API-calls-tst.txt", "dialog-babi-kb-all.txt"]
    >>> for line in tasks_and_splits("dialog-babi", names):
    ...     print(line)
    trn        tasks 1-2
    tst        task 1
    other: dialog-babi-kb-all.txt
    """
    patterns = {
        "dialog-babi": r"dialog-babi-task(\d+)-.*-(trn|dev|tst|tst-OOV)\.txt(?:\.gz)?",
        "babi-qa": r"(.+)/qa(\d+)_.*_(train|test|valid)\.txt(?:\.gz)?",
        "movie-dialog": r"task(\d+)_.*?[_-](train|dev|test|cand-valid|cand-test)\.txt(?:\.gz)?",
        "ubuntu": r"()(train|valid|test)\.csv(?:\.gz)?",
    }
    found: dict[str, dict[str, list[str]]] = {}
    other = []
    for name in files:
        match = re.fullmatch(patterns.get(family, r"(?!)"), name)
        if not match:
            other.append(name)
            continue
        *where, split = match.groups()
        group, task = (where[0], where[1]) if family == "babi-qa" else ("", where[0])
        found.setdefault(group, {}).setdefault(split, []).append(task)
    lines = []
    for group, splits in found.items():
        prefix = f"{group}: " if group else ""
        for split in sorted(splits, key=lambda x: (_SPLIT_ORDER.get(x, 9), x)):
            numbers = sorted({int(t) for t in splits[split] if t})
            if not numbers:  # Ubuntu: one file per split
                lines.append(f"{prefix}{split}")
                continue
            label = f"task{'s' if len(numbers) > 1 else ''} {_ranges(numbers)}"
            lines.append(f"{prefix}{split:<10} {label}")
    if other:
        lines.append("other: " + ", ".join(other))
    return lines


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5]`` as ``1-3, 5``."""
    out, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)
