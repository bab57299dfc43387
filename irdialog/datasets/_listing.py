"""What ``irdialog datasets`` says of a data set family: its tasks and splits, read from
its file names, and, for the corpora of the format suites, where to get it and under which
licence."""

from __future__ import annotations

import re

_SPLIT_ORDER = {s: i for i, s in enumerate(
    ("trn", "train", "dev", "valid", "cand-valid", "tst", "test", "cand-test", "tst-OOV")
)}  # fmt: skip

# A family's file names: each pattern's groups are (task, split), babi-qa's (language
# folder, task, split); a task of "" is one file per split.
_ONE_FILE_PER_SPLIT = [r"()(train|dev|valid|test)\.txt(?:\.gz)?"]
_PATTERNS = {
    "dialog-babi": [r"dialog-babi-task(\d+)-.*-(trn|dev|tst|tst-OOV)\.txt(?:\.gz)?"],
    "babi-qa": [r"(.+)/qa(\d+)_.*_(train|test|valid)\.txt(?:\.gz)?"],
    "movie-dialog": [r"task(\d+)_.*?[_-](train|dev|test|cand-valid|cand-test)\.txt(?:\.gz)?"],
    "ubuntu": [r"()(train|valid|test)\.csv(?:\.gz)?"],
    "douban": _ONE_FILE_PER_SPLIT,
    "ecommerce": _ONE_FILE_PER_SPLIT,
    "ubuntu-v1": _ONE_FILE_PER_SPLIT,
    "dstc7": [
        r"(\w+)_(train|dev|test)_subtask_1\.json(?:\.gz)?",
        r"(\w+)\.scenario-1\.(train|dev|test)\.json(?:\.gz)?",
    ],
    "beir": [r"([^/]+)/qrels/([^/]+)\.tsv(?:\.gz)?"],
    "msmarco": [r"()qrels\.(.+)\.tsv(?:\.gz)?"],
}

# Where to get the corpora of the format suites, and their licence, as their releases state
# it.
SOURCES = {
    "douban": (
        "Wu et al. (2017), https://github.com/MarkWuNLP/MultiTurnResponseSelection "
        "(DoubanConversaionCorpus.zip)",
        "none stated by the release",
    ),
    "ecommerce": (
        "Zhang et al. (2018), https://github.com/cooelf/DeepUtteranceAggregation "
        "(the full corpus's link)",
        "none stated by the release",
    ),
    "ubuntu-v1": (
        "Xu et al. (2016), https://www.dropbox.com/s/2fdn26rj6h9bpvl/ubuntu_data.zip",
        "none stated by the release",
    ),
    "dstc7": (
        "https://ibm.github.io/dstc-noesis/public/datasets.html (subtask 1: train, "
        "validation, test and the test's ground truth)",
        "none stated for the data (the track's code is MIT)",
    ),
    "beir": (
        "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/NAME.zip "
        "(https://github.com/beir-cellar/beir), unzipped under beir/",
        "each data set's own; BEIR grants none",
    ),
    "msmarco": (
        "https://microsoft.github.io/msmarco/ (collection and queries, passage ranking)",
        "MS MARCO terms and conditions: non-commercial research only",
    ),
}


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
    >>> names = ["scifact/qrels/test.tsv", "nfcorpus/qrels/test.tsv", "nfcorpus/qrels/dev.tsv"]
    >>> for line in tasks_and_splits("beir", names):
    ...     print(line)
    dev        nfcorpus
    test       nfcorpus, scifact
    """
    found: dict[str, dict[str, list[str]]] = {}
    other = []
    for name in files:
        match = next((m for p in _PATTERNS.get(family, []) if (m := re.fullmatch(p, name))), None)
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
            tasks = sorted({t for t in splits[split] if t})
            if not tasks:  # one file per split
                lines.append(f"{prefix}{split}")
            elif all(t.isdigit() for t in tasks):
                numbers = sorted(int(t) for t in tasks)
                label = f"task{'s' if len(numbers) > 1 else ''} {number_ranges(numbers)}"
                lines.append(f"{prefix}{split:<10} {label}")
            else:  # named data sets (DSTC7's, BEIR's)
                lines.append(f"{prefix}{split:<10} {', '.join(tasks)}")
    if other:
        lines.append("other: " + ", ".join(other))
    return lines


def number_ranges(numbers) -> str:
    """Integers as runs, in the order given: ``[1, 2, 3, 5]`` as ``1-3, 5``."""
    runs: list[list[int]] = []
    for i in numbers:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
