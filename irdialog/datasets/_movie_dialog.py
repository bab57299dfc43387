"""The Movie Dialog Dataset (Dodge et al. 2016): QA, recommendation, QA+recs, Reddit."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._base import (
    DataFormatError,
    check_choice,
    check_task,
    find_data_file,
    iter_stories,
    parse_dialog_file,
    read_id_texts,
    read_lines,
)

_DIR = "movie-dialog"
_TASK_NAMES = {1: "task1_qa", 2: "task2_recs", 3: "task3_qarecs"}
SPLITS = ("train", "dev", "test")
REDDIT_SPLITS = ("valid", "test")
_KB_FILES = ("movie_kb.txt", "substitute_movie_kb_wikimovies.txt")
# A fact is "subject relation objects"; the relation is the first snake_case word
# (directed_by, starred_actors, has_plot, ...). Movie titles hold no such word.
_FACT_RE = re.compile(r"(\S.*?) ([a-z]+(?:_[a-z]+)+) (.*\S)")
_UNSPLIT_RELATIONS = frozenset({"has_plot"})  # free text, its commas do not separate objects


def _entity_splitter(entities: Iterable[str] | None) -> Callable[[str], list[str]]:
    """A function splitting ``"a, b, c"`` into entities, keeping known ", " names whole.

    At each position the longest run of comma-separated pieces that is a known entity is
    taken ("Lock, Stock and Two Smoking Barrels"); otherwise the single piece.
    """
    known = {e for e in (entities or ()) if ", " in e}
    max_pieces = max((e.count(", ") + 1 for e in known), default=1)

    def split(text: str) -> list[str]:
        pieces = text.split(", ")
        if max_pieces == 1 or len(pieces) == 1:
            return pieces
        out, i = [], 0
        while i < len(pieces):
            for j in range(min(len(pieces), i + max_pieces), i + 1, -1):
                name = ", ".join(pieces[i:j])
                if name in known:
                    out.append(name)
                    i = j
                    break
            else:
                out.append(pieces[i])
                i += 1
        return out

    return split


def _read_entities(path: Path) -> list[str]:
    return [e for e in (line.strip() for line in read_lines(path)) if e]


def _entities_if_present(data_home) -> list[str] | None:
    try:
        path = find_data_file(data_home, [f"{_DIR}/entities.txt"], "Movie Dialog entity list")
    except FileNotFoundError:
        return None
    return _read_entities(path)


def load_movie_entities(data_home=None) -> list[str]:
    """Load the Movie Dialog entity list (movies, people, genres, tags, ...).

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; the file read is ``<data_home>/movie-dialog/entities.txt``.

    Returns
    -------
    entities : list of str
        One entity per non-blank line, stripped, in file order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_movie_entities
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "movie-dialog").mkdir()
    >>> _ = (home / "movie-dialog" / "entities.txt").write_text("Jean Marais\\nHi, Mom!\\n")
    >>> load_movie_entities(home)
    ['Jean Marais', 'Hi, Mom!']
    """
    path = find_data_file(data_home, [f"{_DIR}/entities.txt"], "Movie Dialog entity list")
    return _read_entities(path)


def load_movie_dialog(task, split, data_home=None) -> Bunch:
    """Load a Movie Dialog task: one sample per exchange.

    Parameters
    ----------
    task : int
        1 (factoid QA), 2 (recommendation) or 3 (QA + recommendation dialogs).
        For task 4 (Reddit) only the candidate files are available: see
        :func:`load_reddit_candidates`.
    split : {"train", "dev", "test"}
        Files ``task1_qa_<split>.txt``, ``task2_recs_<split>.txt``,
        ``task3_qarecs_<split>.txt``. (The project's shared data has only dev and test.)
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; files are read from ``<data_home>/movie-dialog/``.

    Returns
    -------
    data : sklearn.utils.Bunch
        X : list of Context
            The earlier exchanges of the dialog (user and bot turns, oldest first) and
            the user utterance as the query.
        y : list of str
            The answer string, as in the file (``"Nicole Kidman, Lauren Bacall"``).
        answers : list of list of str
            ``y`` split into entities on ``", "``. When ``entities.txt`` is in the data
            home, names that contain ", " ("Lock, Stock and Two Smoking Barrels") are kept
            whole: at each position the longest known entity wins. Without the entity
            list, a plain ``", "`` split.
        groups : ndarray of int64
            The dialog of each sample, numbered from 0 in file order.
        filename : str
            The file read.

    References
    ----------
    Dodge, Gane, Zhang, Bordes, Chopra, Miller, Szlam & Weston, "Evaluating Prerequisite
    Qualities for Learning End-to-End Dialog Systems", ICLR 2016.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_movie_dialog
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "movie-dialog").mkdir()
    >>> _ = (home / "movie-dialog" / "task3_qarecs_dev.txt").write_text(
    ...     "1 I liked Up. Any thriller?\\tSnatch\\n2 Who directed it?\\tGuy Ritchie\\n"
    ...     "3 Any other?\\tRevolver, Lock, Stock and Two Smoking Barrels\\n")
    >>> _ = (home / "movie-dialog" / "entities.txt").write_text(
    ...     "Revolver\\nLock, Stock and Two Smoking Barrels\\n")
    >>> data = load_movie_dialog(3, "dev", data_home=home)
    >>> data.X[1].query, len(data.X[1].history), data.y[1]
    ('Who directed it?', 2, 'Guy Ritchie')
    >>> data.answers[2]
    ['Revolver', 'Lock, Stock and Two Smoking Barrels']
    """
    task = check_task(task, range(1, 4), "Movie Dialog")
    split = check_choice(split, "split", SPLITS, "Movie Dialog")
    path = find_data_file(
        data_home,
        [f"{_DIR}/{_TASK_NAMES[task]}_{split}.txt"],
        f"Movie Dialog task {task}, split {split!r}",
    )
    X, y, groups = parse_dialog_file(path, facts=False)
    split_entities = _entity_splitter(_entities_if_present(data_home))
    return Bunch(
        X=X,
        y=y,
        answers=[split_entities(answer) for answer in y],
        groups=groups,
        filename=str(path),
    )


def load_movie_kb(data_home=None) -> Bunch:
    """Load the Movie Dialog knowledge base as triples and as sentences.

    Reads ``movie_kb.txt`` (the original KB) when present, else
    ``substitute_movie_kb_wikimovies.txt`` (WikiMovies, same format, no plot lines). Each
    line is ``ID subject relation objects``, the relation being a snake_case word
    (``directed_by``, ``starred_actors``, ``has_tags``, ...); a blank line or id 1 starts
    the next movie.

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; files are read from ``<data_home>/movie-dialog/``.

    Returns
    -------
    kb : sklearn.utils.Bunch
        triples : list of (str, str, tuple of str)
            ``(subject, relation, objects)``; objects are split on ", " like
            :func:`load_movie_dialog` answers (entity-aware when ``entities.txt`` is
            present), except ``has_plot`` text, kept whole.
        sentences : list of str
            Each fact as its raw text (``"Kismet directed_by William Dieterle"``), for
            models that read the KB as memories.
        groups : ndarray of int64
            The block (movie) of each fact, numbered from 0.
        filename : str
            The file read.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_movie_kb
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "movie-dialog").mkdir()
    >>> _ = (home / "movie-dialog" / "substitute_movie_kb_wikimovies.txt").write_text(
    ...     "1 Kismet directed_by William Dieterle\\n"
    ...     "2 Kismet starred_actors Marlene Dietrich, Edward Arnold\\n")
    >>> kb = load_movie_kb(home)
    >>> kb.triples[1]
    ('Kismet', 'starred_actors', ('Marlene Dietrich', 'Edward Arnold'))
    >>> kb.sentences[0]
    'Kismet directed_by William Dieterle'
    """
    path = find_data_file(data_home, [f"{_DIR}/{name}" for name in _KB_FILES], "Movie Dialog KB")
    split_entities = _entity_splitter(_entities_if_present(data_home))
    triples, sentences, groups = [], [], []
    for block, story in enumerate(iter_stories(path)):
        for line in story:
            text = line.text.strip()
            match = _FACT_RE.fullmatch(text)
            if match is None:
                raise DataFormatError(
                    path,
                    line.lineno,
                    "'ID subject relation objects' with a snake_case relation (directed_by)",
                    f"{line.id} {line.text}",
                )
            subject, relation, objects = match.groups()
            objs = (objects,) if relation in _UNSPLIT_RELATIONS else split_entities(objects)
            triples.append((subject, relation, tuple(objs)))
            sentences.append(text)
            groups.append(block)
    return Bunch(
        triples=triples,
        sentences=sentences,
        groups=np.asarray(groups, dtype=np.int64),
        filename=str(path),
    )


def load_reddit_candidates(split, data_home=None) -> list[str]:
    """Load the candidate responses of Movie Dialog task 4 (Reddit).

    Parameters
    ----------
    split : {"valid", "test"}
        File ``task4_reddit_cand-<split>.txt`` (``1 text`` lines, blank lines between).
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`; the file is read from ``<data_home>/movie-dialog/``.

    Returns
    -------
    candidates : list of str
        The candidates, stripped, in file order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_reddit_candidates
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "movie-dialog").mkdir()
    >>> _ = (home / "movie-dialog" / "task4_reddit_cand-valid.txt").write_text(
    ...     "1 MORTAL KOMBAT !\\n\\n1 Wtf ?\\n\\n")
    >>> load_reddit_candidates("valid", data_home=home)
    ['MORTAL KOMBAT !', 'Wtf ?']
    """
    split = check_choice(split, "split", REDDIT_SPLITS, "Movie Dialog Reddit candidates")
    path = find_data_file(
        data_home,
        [f"{_DIR}/task4_reddit_cand-{split}.txt"],
        f"Movie Dialog task 4 (Reddit) candidates, split {split!r}",
    )
    return read_id_texts(path)
