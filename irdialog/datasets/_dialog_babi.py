"""Dialog bAbI (Bordes, Boureau & Weston 2017): tasks 1-5 on restaurant booking, task 6 DSTC2."""

from __future__ import annotations

from pathlib import Path

from sklearn.utils import Bunch

from ._base import (
    DataFormatError,
    check_choice,
    check_task,
    find_data_file,
    iter_numbered_lines,
    parse_dialog_file,
    read_id_texts,
)

_DIR = "dialog-babi"
_TASK_NAMES = {
    1: "task1-API-calls",
    2: "task2-API-refine",
    3: "task3-options",
    4: "task4-phone-address",
    5: "task5-full-dialogs",
    6: "task6-dstc2",
}
SPLITS = ("trn", "dev", "tst", "tst-OOV")
_CANDIDATES = {False: "dialog-babi-candidates.txt", True: "dialog-babi-task6-dstc2-candidates.txt"}
_KB = {False: "dialog-babi-kb-all.txt", True: "dialog-babi-task6-dstc2-kb.txt"}


def _read_kb(path: Path) -> dict[str, str]:
    """Entity -> type from ``1 subject R_rel<TAB>object`` or ``1 subject R_rel object`` lines.

    Objects get their relation as type (``korean`` -> ``R_cuisine``) and subjects the type
    ``R_name``; an entity listed twice keeps its first type.
    """
    kb: dict[str, str] = {}
    for line in iter_numbered_lines(path):
        if line is None:
            continue
        if "\t" in line.text:
            head, *rest = line.text.split("\t")
            parts = head.split() + [r.strip() for r in rest]
        else:
            parts = line.text.split(None, 2)
        if len(parts) != 3 or not all(parts):
            raise DataFormatError(
                path,
                line.lineno,
                "'ID subject relation<TAB>object' or 'ID subject relation object'",
                f"{line.id} {line.text}",
            )
        subject, relation, obj = parts
        kb.setdefault(subject, "R_name")
        kb.setdefault(obj.strip(), relation)
    return kb


def load_dialog_babi(task, split, data_home=None) -> Bunch:
    """Load a dialog bAbI task: one sample per bot turn, with its candidates and KB.

    Parameters
    ----------
    task : int
        1-5 (restaurant booking: API calls, API refinement, options, phone and address,
        full dialogs) or 6 (DSTC2).
    split : {"trn", "dev", "tst", "tst-OOV"}
        ``"tst-OOV"`` (test dialogs with entities unseen in training) exists for tasks 1-5.
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; the files are read from ``<data_home>/dialog-babi/``.
        The bundled samples hold task 1 (all splits), its candidates and its KB.

    Returns
    -------
    data : sklearn.utils.Bunch
        X : list of Context
            The dialog so far, oldest first: user and bot turns of the earlier exchanges
            and API results (lines with no tab, such as ``resto_x R_phone resto_x_phone``
            or ``api_call no result``) as ``kb`` turns; the query is the user utterance
            of the exchange (``<SILENCE>`` kept verbatim; empty in the six task 6
            training turns where DSTC2 recognised nothing). Turn objects are shared
            between the samples of a dialog.
        y : list of str
            The gold bot utterance of each sample, stripped.
        groups : ndarray of int64
            The dialog of each sample, numbered from 0 in file order (for GroupKFold).
        candidates : list of str
            The task's candidate responses (``dialog-babi-candidates.txt`` for tasks 1-5,
            ``dialog-babi-task6-dstc2-candidates.txt`` for task 6), stripped.
        kb : dict of str -> str
            Entity -> type (``"korean"`` -> ``"R_cuisine"``; restaurant names ->
            ``"R_name"``), from ``dialog-babi-kb-all.txt`` (tasks 1-5) or
            ``dialog-babi-task6-dstc2-kb.txt`` (task 6).
        filename : str
            The dialog file read.

    Raises
    ------
    FileNotFoundError
        A file is missing; the message names the task, the split and the paths tried.
    DataFormatError
        A malformed line; the message names the file, the line and what was expected.

    References
    ----------
    Bordes, Boureau & Weston, "Learning End-to-End Goal-Oriented Dialog", ICLR 2017,
    section 3 (the tasks) and appendix (data format).

    Examples
    --------
    >>> from irdialog.datasets import load_dialog_babi
    >>> data = load_dialog_babi(task=1, split="trn")
    >>> len(data.X), len(data.candidates), int(data.groups.max()) + 1
    (6024, 4212, 1000)
    >>> data.X[2].query, data.y[2]
    ('<SILENCE>', 'any preference on a type of cuisine')
    >>> [(t.speaker, t.text) for t in data.X[2].history][:2]
    [('user', 'hi'), ('bot', 'hello what can i help you with today')]
    >>> data.kb["korean"], data.kb["resto_seoul_cheap_korean_1stars"]
    ('R_cuisine', 'R_name')
    """
    task = check_task(task, range(1, 7), "dialog bAbI")
    split = check_choice(split, "split", SPLITS, "dialog bAbI")
    if task == 6 and split == "tst-OOV":
        raise ValueError(
            "dialog bAbI task 6 (DSTC2) has no 'tst-OOV' split; choose one of trn, dev, tst."
        )
    what = f"dialog bAbI task {task}, split {split!r}"
    dstc2 = task == 6
    dialog_path = find_data_file(
        data_home, [f"{_DIR}/dialog-babi-{_TASK_NAMES[task]}-{split}.txt"], what
    )
    cand_path = find_data_file(
        data_home, [f"{_DIR}/{_CANDIDATES[dstc2]}"], f"{what} (candidate file)"
    )
    kb_path = find_data_file(data_home, [f"{_DIR}/{_KB[dstc2]}"], f"{what} (knowledge base)")
    X, y, groups = parse_dialog_file(dialog_path)
    return Bunch(
        X=X,
        y=y,
        groups=groups,
        candidates=read_id_texts(cand_path),
        kb=_read_kb(kb_path),
        filename=str(dialog_path),
    )
