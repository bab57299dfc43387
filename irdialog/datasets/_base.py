"""Shared machinery of the dataset loaders: data home, file lookup, the "ID text" line format.

Every loader goes through the same three steps: resolve the data home (the ``data_home``
argument, else the ``IRDIALOG_DATA`` environment variable, else the samples bundled in
``irdialog/data``), find its file there (plain or ``.gz``), and parse it with the helpers
below, which raise :class:`DataFormatError` naming the file, the 1-based line number and
what was expected. A loader builds its whole result before returning it, so a malformed
file never gives a half-loaded data set.

The bAbI family of formats (bAbI QA, dialog bAbI, Movie Dialog, the knowledge bases and
candidate files) shares one line shape, ``ID text``: an integer line id, one space, the
text. Ids count up from 1 within a story (or dialog); an id of 1, or a blank line, starts
the next one.
"""

from __future__ import annotations

import csv
import gzip
import os
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sklearn.utils import Bunch

from ..base import Context, Turn

ENV_VAR = "IRDIALOG_DATA"

# Where each family lives under a data home, and which files count as its data
# (relative glob patterns; a ".gz" twin of each is accepted too).
_FAMILIES = {
    "dialog-babi": ("dialog-babi", ("dialog-babi-*.txt",)),
    "babi-qa": ("babi-qa", ("*/qa*_*.txt",)),
    "movie-dialog": (
        "movie-dialog",
        ("task*.txt", "entities.txt", "movie_kb.txt", "substitute_movie_kb_wikimovies.txt"),
    ),
    "ubuntu": (("ubuntu", "ubuntu-sample"), ("*.csv",)),
    "movielens": ("movielens-small", ("ratings.csv", "movies.csv")),
    # the corpora of the format suites (irdialog bench douban, ecommerce, ...), in the
    # folders those suites read
    "douban": (("douban", "DoubanConversaionCorpus"), ("train.txt", "dev.txt", "test.txt")),
    "ecommerce": (("ecommerce", "E_commerce"), ("train.txt", "dev.txt", "test.txt")),
    "ubuntu-v1": (("ubuntu-v1", "ubuntu_data"), ("train.txt", "valid.txt", "test.txt")),
    "dstc7": ("dstc7", ("*_subtask_1.json", "*.scenario-1.*.json", "*_responses_subtask_1.tsv")),
    "beir": ("beir", ("*/qrels/*.tsv",)),
    "msmarco": ("msmarco-passage", ("qrels.*.tsv",)),
}

_GOT_WIDTH = 80  # characters of an offending line quoted in an error message

# The data files found while a `record_data_files` block runs (for the provenance of
# benchmark results); None outside such a block.
_RECORDED: ContextVar[list[Path] | None] = ContextVar("irdialog_recorded_files", default=None)


class DataFormatError(ValueError):
    """A data file does not have the expected format.

    The message names the file, the 1-based line number (when the problem is on one line)
    and what was expected there.

    Attributes
    ----------
    filename : str
    lineno : int or None
    expected : str

    Examples
    --------
    >>> err = DataFormatError("qa1_train.txt", 3, "'ID text' with an integer ID", got="x Mary")
    >>> print(err)
    qa1_train.txt, line 3: expected 'ID text' with an integer ID, got 'x Mary'
    """

    def __init__(self, filename, lineno: int | None, expected: str, got=None):
        self.filename = str(filename)
        self.lineno = lineno
        self.expected = expected
        self.got = got
        where = self.filename if lineno is None else f"{self.filename}, line {lineno}"
        msg = f"{where}: expected {expected}"
        if got is not None:
            text = got if len(got) <= _GOT_WIDTH else got[:_GOT_WIDTH] + "..."
            msg += f", got {text!r}"
        super().__init__(msg)

    def __reduce__(self):
        # The default reduce would call __init__(message) only; joblib pickles exceptions.
        return (type(self), (self.filename, self.lineno, self.expected, self.got))


# --------------------------------------------------------------------------- arguments


def check_task(task, valid: range, dataset: str) -> int:
    """Validate a task number: an int (not bool) in ``valid``."""
    if isinstance(task, (bool, np.bool_)) or not isinstance(task, (int, np.integer)):
        raise TypeError(
            f"{dataset} task must be an int in {valid.start}..{valid.stop - 1}, "
            f"got {task!r} ({type(task).__name__})."
        )
    if int(task) not in valid:
        raise ValueError(
            f"{dataset} has tasks {valid.start}..{valid.stop - 1}, got task {int(task)}."
        )
    return int(task)


def check_choice(value, name: str, choices: Sequence[str], dataset: str) -> str:
    """Validate a string option such as ``split`` against its allowed values."""
    if not isinstance(value, str):
        raise TypeError(
            f"{dataset} {name} must be a str, one of {list(choices)}, "
            f"got {value!r} ({type(value).__name__})."
        )
    if value not in choices:
        raise ValueError(f"{dataset} {name} must be one of {list(choices)}, got {value!r}.")
    return value


# --------------------------------------------------------------------------- data home


def bundled_data_dir() -> Path:
    """The directory of the samples shipped inside the package (``irdialog/data``)."""
    return Path(__file__).resolve().parent.parent / "data"


def _resolve_data_home(data_home) -> tuple[Path, str]:
    """The data home and a phrase saying where it came from (for error messages)."""
    if data_home is not None:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(
                f"data_home must be a path (str or os.PathLike), got {type(data_home).__name__}."
            )
        return Path(data_home).expanduser(), "the data_home argument"
    env = os.environ.get(ENV_VAR, "")
    if env.strip():
        return Path(env).expanduser(), f"the {ENV_VAR} environment variable"
    return bundled_data_dir(), f"the samples bundled with irdialog ({ENV_VAR} is not set)"


def get_data_home(data_home=None) -> Path:
    """The directory the loaders read from.

    Resolved in this order: the ``data_home`` argument, the ``IRDIALOG_DATA`` environment
    variable, the small real samples bundled in the package (``irdialog/data``). Only the
    resolved directory is searched: an explicit ``data_home`` or ``IRDIALOG_DATA`` never
    falls back to the bundled samples, so what is loaded never depends on which files
    happen to be missing.

    The directory has the layout of the project's shared data: ``dialog-babi/``,
    ``babi-qa/<lang>/``, ``movie-dialog/``, ``ubuntu/`` (or ``ubuntu-sample/``),
    ``movielens-small/``. Any text file may be stored gzip-compressed as ``name.gz``.

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        An explicit data directory.

    Returns
    -------
    path : pathlib.Path
        The directory (it may not exist; the loaders then report the missing file).

    Examples
    --------
    >>> from irdialog.datasets import get_data_home
    >>> get_data_home("/data/irdialog").as_posix()
    '/data/irdialog'
    """
    return _resolve_data_home(data_home)[0]


def find_data_file(data_home, relpaths: Sequence[str], what: str) -> Path:
    """The first of ``relpaths`` (glob patterns, plain or ``.gz``) present in the data home.

    Raises
    ------
    FileNotFoundError
        Naming ``what`` (the data set, task and split) and every path looked at.
    ValueError
        When a pattern matches several files.
    """
    home, source = _resolve_data_home(data_home)
    tried = []
    for rel in relpaths:
        for suffix in ("", ".gz"):
            pattern = rel + suffix
            tried.append(home / pattern)
            matches = sorted(home.glob(pattern)) if home.is_dir() else []
            matches = [m for m in matches if m.is_file()]
            if len(matches) > 1:
                raise ValueError(
                    f"{what}: several files match {home / pattern}: "
                    f"{', '.join(str(m) for m in matches)}; keep only one."
                )
            if matches:
                note_data_file(matches[0])
                return matches[0]
    missing_home = (
        ""
        if home.is_dir()
        else f" ({home} {'is not a directory' if home.exists() else 'does not exist'})"
    )
    raise FileNotFoundError(
        f"{what}: file not found in the data home {home}, taken from {source}"
        f"{missing_home}. Looked for: {', '.join(str(p) for p in tried)}. Pass data_home= "
        f"or set {ENV_VAR} to a directory with that file (the layout is in the README's Data "
        "section; `irdialog datasets` lists what a data home holds)."
    )


def note_data_file(path: Path) -> None:
    """Count ``path`` as read by the ``record_data_files`` block running, if any (for data
    that a cache serves without finding its file again)."""
    recorded = _RECORDED.get()
    if recorded is not None and path not in recorded:
        recorded.append(path)


@contextmanager
def record_data_files() -> Iterator[list[Path]]:
    """Collect the data files every loader finds inside the ``with`` block, in first-use order.

    Yields
    ------
    files : list of pathlib.Path
        Filled as the loaders run; each file once.

    Examples
    --------
    >>> from irdialog.datasets import load_babi_qa, record_data_files
    >>> with record_data_files() as files:
    ...     _ = load_babi_qa(1, "train")
    >>> [f.name for f in files]
    ['qa1_single-supporting-fact_train.txt.gz']
    """
    files: list[Path] = []
    token = _RECORDED.set(files)
    try:
        yield files
    finally:
        _RECORDED.reset(token)


def list_datasets(data_home=None) -> dict[str, Bunch]:
    """Which data set families are present in the data home, and where.

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`.

    Returns
    -------
    families : dict of str -> Bunch
        One entry per family (``"dialog-babi"``, ``"babi-qa"``, ``"movie-dialog"``,
        ``"ubuntu"``, ``"movielens"``, and the corpora of the format suites ``"douban"``,
        ``"ecommerce"``, ``"ubuntu-v1"``, ``"dstc7"``, ``"beir"``, ``"msmarco"``), each a
        Bunch with ``found`` (bool), ``path`` (the family's directory, as a str; for a
        family with several folder names, such as Ubuntu's ``ubuntu/`` and
        ``ubuntu-sample/``, the first that holds data) and ``files`` (the data files
        found, relative to ``path``, sorted; BEIR's are the ``qrels`` files of its data
        sets, MS MARCO's its qrels files).

    Examples
    --------
    >>> from irdialog.datasets import list_datasets
    >>> from irdialog.datasets._base import bundled_data_dir
    >>> found = list_datasets(bundled_data_dir())
    >>> found["dialog-babi"].found, found["ubuntu"].found
    (True, False)
    >>> "dialog-babi-task1-API-calls-trn.txt.gz" in found["dialog-babi"].files
    True
    """
    home = get_data_home(data_home)
    out = {}
    for family, (dirs, patterns) in _FAMILIES.items():
        dirs = (dirs,) if isinstance(dirs, str) else dirs
        found = [(home / d, _data_files(home / d, patterns)) for d in dirs]
        path, files = next(((p, f) for p, f in found if f), (home / dirs[0], []))
        out[family] = Bunch(found=bool(files), path=str(path), files=files)
    return out


def _data_files(directory: Path, patterns: Sequence[str]) -> list[str]:
    """The files of ``directory`` matching any pattern (or its .gz twin), relative, sorted."""
    if not directory.is_dir():
        return []
    return sorted(
        {
            p.relative_to(directory).as_posix()
            for pattern in patterns
            for suffix in ("", ".gz")
            for p in directory.glob(pattern + suffix)
            if p.is_file()
        }
    )


# --------------------------------------------------------------------------- reading


def open_maybe_gzip(path, mode: str = "rb", **kwargs):
    """``path`` opened as :func:`open` would, through gzip when its name ends in ``.gz``."""
    return (gzip.open if str(path).endswith(".gz") else open)(path, mode, **kwargs)


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file (plain or gzip), without their line ends.

    ``\\n`` and ``\\r\\n`` both end a line; a UTF-8 byte-order mark is dropped. Invalid
    UTF-8 or gzip data raise :class:`DataFormatError` naming the file (and the line).
    """
    raw = Path(path).read_bytes()
    if str(path).endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataFormatError(path, None, f"gzip-compressed data ({exc})") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = raw.count(b"\n", 0, exc.start) + 1
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        bad = raw[line_start : exc.end + 20].decode("utf-8", errors="backslashreplace")
        raise DataFormatError(path, lineno, f"UTF-8 text ({exc.reason})", bad) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class NumberedLine(NamedTuple):
    """One non-blank line of an "ID text" file."""

    lineno: int  # 1-based position in the file
    id: int  # the line id written in the file
    text: str  # everything after "ID ", not stripped


def iter_numbered_lines(
    path: Path, lines: Sequence[str] | None = None
) -> Iterator[NumberedLine | None]:
    """Parse the non-blank lines of an "ID text" file; blank lines give ``None``.

    The text after the id must hold something other than white space.
    """
    if lines is None:
        lines = read_lines(path)
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            yield None
            continue
        head, _, text = line.partition(" ")
        if not (head.isascii() and head.isdigit()) or int(head) == 0:
            raise DataFormatError(
                path, lineno, "a line id (a positive integer) followed by a space", line
            )
        if not text.strip():
            raise DataFormatError(path, lineno, "text after the line id", line)
        yield NumberedLine(lineno, int(head), text)


def read_id_texts(path: Path) -> list[str]:
    """The stripped texts of the non-blank lines of an "ID text" file (candidate files)."""
    return [line.text.strip() for line in iter_numbered_lines(path) if line is not None]


def iter_stories(path: Path, lines: Sequence[str] | None = None) -> Iterator[list[NumberedLine]]:
    """Group the lines of an "ID text" file into stories (dialogs).

    A story starts at a line with id 1 (ids restart) or after a blank line; inside a story
    each id is the previous one plus one.
    """
    story: list[NumberedLine] = []
    for line in iter_numbered_lines(path, lines):
        if line is None:
            if story:
                yield story
                story = []
        elif line.id == 1:
            if story:
                yield story
            story = [line]
        elif story and line.id == story[-1].id + 1:
            story.append(line)
        else:
            expected = (
                f"line id {story[-1].id + 1} (the next in this story) or 1 (a new story)"
                if story
                else "line id 1 at the start of a story"
            )
            raise DataFormatError(path, line.lineno, expected, f"{line.id} {line.text}")
    if story:
        yield story


def iter_csv_rows(path: Path, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """(first line number, row) of each non-empty CSV record (TSV with ``delimiter="\\t"``),
    with format errors mapped."""
    with open_maybe_gzip(path, "rt", encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter=delimiter, strict=True)
        while True:
            lineno = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except UnicodeDecodeError as exc:
                raise DataFormatError(
                    path, None, f"UTF-8 text ({exc.reason}, after line {reader.line_num})"
                ) from None
            except csv.Error as exc:
                raise DataFormatError(path, lineno, f"well-formed CSV ({exc})") from None
            except (OSError, EOFError, zlib.error) as exc:
                raise DataFormatError(path, None, f"gzip-compressed data ({exc})") from None
            if row:
                yield lineno, row


def parse_dialog_file(
    path: Path, facts: bool = True
) -> tuple[list[Context], list[str], np.ndarray]:
    """Parse a dialog file of the bAbI family (dialog bAbI, Movie Dialog).

    Lines are ``ID user<TAB>bot`` exchanges or, with ``facts``, tab-less ``ID fact`` lines
    (API results, knowledge-base facts); without ``facts`` (Movie Dialog has none) a
    tab-less line is an error, not a silently kept fact. Each exchange gives one sample: a
    context whose history is every earlier turn of the dialog (user and bot turns of
    earlier exchanges, facts as ``kb`` turns, oldest first) and whose query is the user
    utterance (possibly empty, as in six DSTC2 training turns); the target is the bot
    utterance, which must not be empty. Turn objects are shared between the samples of a
    dialog. A file with no exchange is an error.

    Returns
    -------
    X : list of Context
    y : list of str
    groups : ndarray of int64
        The dialog of each sample, numbered from 0 in file order (dialogs with no
        exchange are not numbered).
    """
    X: list[Context] = []
    y: list[str] = []
    groups: list[int] = []
    n_dialogs = 0
    for story in iter_stories(path):
        turns: list[Turn] = []
        start = len(X)
        for line in story:
            fields = line.text.split("\t")
            if len(fields) == 1 and facts:
                turns.append(Turn("kb", fields[0].strip()))
                continue
            if len(fields) != 2:
                raise DataFormatError(
                    path,
                    line.lineno,
                    "'ID user utterance<TAB>bot utterance'"
                    + (" or 'ID fact' (at most one tab)" if facts else " (one tab)"),
                    f"{line.id} {line.text}",
                )
            # The user side may be empty: DSTC2 (dialog bAbI task 6) has turns where
            # nothing was recognised ("17 \tOk , a restaurant in any part of town ...").
            user, bot = fields[0].strip(), fields[1].strip()
            if not bot:
                raise DataFormatError(
                    path, line.lineno, "a bot utterance after the tab", f"{line.id} {line.text}"
                )
            X.append(Context(history=tuple(turns), query=user))
            y.append(bot)
            turns.append(Turn("user", user))
            turns.append(Turn("bot", bot))
        if len(X) > start:
            groups.extend([n_dialogs] * (len(X) - start))
            n_dialogs += 1
    if not X:
        raise DataFormatError(path, None, "at least one 'ID user<TAB>bot' exchange")
    return X, y, np.asarray(groups, dtype=np.int64)
