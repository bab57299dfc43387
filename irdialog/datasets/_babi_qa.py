"""bAbI QA (Weston et al. 2016): 20 story-understanding tasks, in any language folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..base import Context, Turn
from ._base import DataFormatError, check_choice, check_task, find_data_file, iter_stories
from ._listing import number_ranges

_DIR = "babi-qa"
SPLITS = ("train", "valid", "test")


def _parse_babi_qa(path: Path) -> Bunch:
    X: list[Context] = []
    y: list[str] = []
    supporting: list[tuple[int, ...]] = []
    groups: list[int] = []
    n_stories = 0
    for story in iter_stories(path):
        turns: list[Turn] = []
        position: dict[int, int] = {}  # statement line id -> index in the history
        start = len(X)
        for line in story:
            fields = line.text.split("\t")
            got = f"{line.id} {line.text}"
            if len(fields) == 1:
                position[line.id] = len(turns)
                turns.append(Turn("kb", fields[0].strip()))
                continue
            if len(fields) != 3:
                raise DataFormatError(
                    path,
                    line.lineno,
                    "a statement 'ID text' or a question "
                    "'ID question<TAB>answer<TAB>supporting fact ids' (0 or 2 tabs)",
                    got,
                )
            question, answer, support = (f.strip() for f in fields)
            if not question:
                raise DataFormatError(path, line.lineno, "a question before the first tab", got)
            if not answer:
                raise DataFormatError(path, line.lineno, "an answer after the first tab", got)
            facts = []
            for token in support.split():
                if not (token.isascii() and token.isdigit()) or int(token) not in position:
                    raise DataFormatError(
                        path,
                        line.lineno,
                        "supporting fact ids that are line ids of statements (not questions) "
                        f"earlier in the same story (this story's statements so far: "
                        f"{number_ranges(sorted(position)) or 'none'}); bad id {token!r}",
                        got,
                    )
                facts.append(position[int(token)])
            X.append(Context(history=tuple(turns), query=question))
            y.append(answer)
            supporting.append(tuple(facts))
        if len(X) > start:
            groups.extend([n_stories] * (len(X) - start))
            n_stories += 1
    if not X:
        raise DataFormatError(path, None, "at least one 'ID question<TAB>answer<TAB>facts' line")
    return Bunch(
        X=X,
        y=y,
        supporting=supporting,
        groups=np.asarray(groups, dtype=np.int64),
        filename=str(path),
    )


def load_babi_qa(task, split, lang="en", data_home=None) -> Bunch:
    """Load a bAbI QA task: one sample per question, the story so far as its history.

    Parameters
    ----------
    task : int
        1-20.
    split : {"train", "test", "valid"}
        ``"valid"`` exists only in the ``en-valid`` folders.
    lang : str, default="en"
        The language folder under ``babi-qa/``: ``"en"``, ``"hn"``, ``"shuffled"``,
        ``"en-10k"``, ... Nothing in the parser depends on the language.
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; the file read is
        ``<data_home>/babi-qa/<lang>/qa<task>_*_<split>.txt`` (or ``.txt.gz``). The bundled
        samples hold task 1 in English.

    Returns
    -------
    data : sklearn.utils.Bunch
        X : list of Context
            The story's statements before the question, oldest first, as ``kb`` turns
            (earlier questions are not part of it); the query is the question. Turn
            objects are shared between the questions of a story.
        y : list of str
            The answer, kept whole (``"north,west"``, ``"apple,football"``).
        supporting : list of tuple of int
            The supporting facts of each question, as 0-based positions into its
            ``X[i].history``, in the file's order.
        groups : ndarray of int64
            The story of each question, numbered from 0 in file order.
        filename : str
            The file read.

    Raises
    ------
    FileNotFoundError
        The file is missing; the message names the task, split, language and path tried.
    DataFormatError
        A malformed line, or a supporting fact id that is not a statement of the story
        before the question; the message names the file and line.

    References
    ----------
    Weston, Bordes, Chopra, Rush, van Merrienboer, Joulin & Mikolov, "Towards AI-Complete
    Question Answering: A Set of Prerequisite Toy Tasks", ICLR 2016.

    Examples
    --------
    >>> from irdialog.datasets import load_babi_qa
    >>> data = load_babi_qa(task=1, split="train")
    >>> len(data.X), int(data.groups.max()) + 1
    (1000, 200)
    >>> data.X[0].query, data.y[0], data.supporting[0]
    ('Where is Mary?', 'bathroom', (0,))
    >>> [t.text for t in data.X[0].history]
    ['Mary moved to the bathroom.', 'John went to the hallway.']
    """
    task = check_task(task, range(1, 21), "bAbI QA")
    split = check_choice(split, "split", SPLITS, "bAbI QA")
    if not isinstance(lang, str):
        raise TypeError(f"bAbI QA lang must be a str, got {type(lang).__name__}.")
    if not lang or lang in {".", ".."} or any(c in lang for c in "/\\*?[]"):
        raise ValueError(
            f"bAbI QA lang must be the name of a folder under babi-qa/ (such as 'en', 'hn', "
            f"'en-10k'), got {lang!r}."
        )
    path = find_data_file(
        data_home,
        [f"{_DIR}/{lang}/qa{task}_*_{split}.txt"],
        f"bAbI QA task {task}, split {split!r}, lang {lang!r}",
    )
    return _parse_babi_qa(path)
