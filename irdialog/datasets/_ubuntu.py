"""The Ubuntu Dialogue Corpus v2 (Lowe et al. 2015) next-utterance CSV files, streamed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..base import Context, Turn
from ._base import DataFormatError, check_choice, find_data_file, iter_csv_rows

_DIRS = ("ubuntu", "ubuntu-sample")
SPLITS = ("train", "valid", "test")
_TRAIN_HEADER = ["Context", "Utterance", "Label"]
_EVAL_HEADER = ["Context", "Ground Truth Utterance"]  # then Distractor_0, Distractor_1, ...
_LABELS = {"0": 0, "1": 1, "0.0": 0, "1.0": 1}
DEFAULT_CHUNKSIZE = 10_000
_SEPARATED = {",": "comma-separated", "\t": "tab-separated"}


def _clean(text: str) -> str:
    """Drop ``__eou__`` (end-of-utterance) markers and normalise white space."""
    return " ".join(text.replace("__eou__", " ").split())


def _context(text: str) -> Context | None:
    """``u1 __eou__ __eot__ u2 __eou__ __eot__ q __eou__ __eot__`` -> Context.

    The last turn is the query (speaker ``user``); earlier turns alternate ``bot`` /
    ``user`` going backwards. ``None`` for a context with no text.
    """
    turns = [t for t in (_clean(part) for part in text.split("__eot__")) if t]
    if not turns:
        return None
    n = len(turns)
    history = tuple(Turn("bot" if (n - 1 - i) % 2 else "user", t) for i, t in enumerate(turns[:-1]))
    return Context(history=history, query=turns[-1])


def _check_header(
    path: Path, split: str, lineno: int, header: list[str], delimiter: str = ","
) -> None:
    if split == "train":
        ok, expected = header == _TRAIN_HEADER, delimiter.join(_TRAIN_HEADER)
    else:
        distractors = [f"Distractor_{i}" for i in range(len(header) - 2)]
        ok = len(header) > 2 and header == _EVAL_HEADER + distractors
        expected = delimiter.join([*_EVAL_HEADER, "Distractor_0", "...", "Distractor_<k>"])
    if not ok:
        raise DataFormatError(path, lineno, f"the header {expected}", delimiter.join(header))


def _chunks(path: Path, split: str, chunksize: int, delimiter: str = ",") -> Iterator[Bunch]:
    rows = iter_csv_rows(path, delimiter)
    first = next(rows, None)
    if first is None:
        raise DataFormatError(path, 1, "a header row")
    _check_header(path, split, *first, delimiter)
    n_fields = len(first[1])
    X: list[Context] = []
    y: list[str] = []
    extra: list = []  # labels (train) or candidate lists (valid, test)

    def flush() -> Bunch:
        out = Bunch(X=X.copy(), y=y.copy(), filename=str(path))
        if split == "train":
            out.labels = np.asarray(extra, dtype=np.int64)
        else:
            out.candidate_lists = extra.copy()
        X.clear()
        y.clear()
        extra.clear()
        return out

    n_rows = 0
    for lineno, row in rows:
        n_rows += 1
        if len(row) != n_fields:
            raise DataFormatError(
                path,
                lineno,
                f"{n_fields} {_SEPARATED[delimiter]} fields like the header",
                delimiter.join(row),
            )
        context = _context(row[0])
        if context is None:
            raise DataFormatError(path, lineno, "a non-empty Context", delimiter.join(row))
        responses = [_clean(r) for r in (row[1:2] if split == "train" else row[1:])]
        if not all(responses):
            raise DataFormatError(path, lineno, "non-empty responses", delimiter.join(row))
        if split == "train":
            if row[2].strip() not in _LABELS:
                raise DataFormatError(path, lineno, "a Label of 0 or 1", row[2])
            extra.append(_LABELS[row[2].strip()])
        else:
            extra.append(responses)
        X.append(context)
        y.append(responses[0])
        if len(X) == chunksize:
            yield flush()
    if X:
        yield flush()
    if not n_rows:
        raise DataFormatError(path, None, "at least one row after the header")


def _find(split, data_home) -> Path:
    split = check_choice(split, "split", SPLITS, "Ubuntu")
    return find_data_file(
        data_home, [f"{d}/{split}.csv" for d in _DIRS], f"Ubuntu Dialogue Corpus split {split!r}"
    )


def iter_ubuntu(split, data_home=None, chunksize=DEFAULT_CHUNKSIZE) -> Iterator[Bunch]:
    """Stream an Ubuntu v2 CSV file in chunks of at most ``chunksize`` rows.

    Memory stays bounded by one chunk, so the 1M-row training file can be processed
    row block by row block. The arguments are checked and the file looked up when the
    function is called; rows are read as the chunks are consumed.

    Parameters
    ----------
    split : {"train", "valid", "test"}
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`. ``<data_home>/ubuntu/<split>.csv`` is read if present
        (the full corpus), else ``<data_home>/ubuntu-sample/<split>.csv``; either may be
        gzip-compressed (``.csv.gz``).
    chunksize : int, default=10000
        The most rows per chunk.

    Yields
    ------
    chunk : sklearn.utils.Bunch
        The fields of :func:`load_ubuntu` for the chunk's rows.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import iter_ubuntu
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "ubuntu").mkdir()
    >>> _ = (home / "ubuntu" / "train.csv").write_text(
    ...     "Context,Utterance,Label\\n"
    ...     "hi __eou__ __eot__ hello __eou__ __eot__,how __eou__,1\\n"
    ...     "ok __eou__ __eot__,no __eou__,0\\n")
    >>> [len(chunk.X) for chunk in iter_ubuntu("train", data_home=home, chunksize=1)]
    [1, 1]
    """
    if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)):
        raise TypeError(f"chunksize must be a positive int, got {type(chunksize).__name__}.")
    if chunksize < 1:
        raise ValueError(f"chunksize must be a positive int, got {chunksize}.")
    path = _find(split, data_home)
    return _chunks(path, split, int(chunksize))


def load_ubuntu(split, data_home=None) -> Bunch:
    """Load an Ubuntu Dialogue Corpus v2 CSV file (next-utterance ranking).

    ``__eot__`` ends a turn and ``__eou__`` an utterance within a turn: the context is
    split into turns on ``__eot__``, the ``__eou__`` markers are dropped (white space
    normalised), the last turn is the query (speaker ``user``) and the earlier turns
    alternate ``bot`` / ``user`` going backwards. CRLF line ends are handled by the csv
    module. For the 1M-row training file in bounded memory use :func:`iter_ubuntu`.
    Fields longer than the csv module's limit (``csv.field_size_limit()``, 131072
    characters by default; the loader does not change this process-wide setting) raise
    :class:`DataFormatError`.

    Parameters
    ----------
    split : {"train", "valid", "test"}
        ``train`` has columns Context, Utterance, Label; ``valid`` and ``test`` have
        Context, Ground Truth Utterance, Distractor_0 ... Distractor_8.
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home` and :func:`iter_ubuntu` for the file looked up.

    Returns
    -------
    data : sklearn.utils.Bunch
        X : list of Context
            The contexts, one per row.
        y : list of str
            The response (``train``) or the ground-truth response (``valid``, ``test``).
        labels : ndarray of int64, only for ``train``
            1 when ``y`` is the true next utterance, 0 for a random one.
        candidate_lists : list of list of str, only for ``valid`` and ``test``
            ``[ground truth, distractor 0, ..., distractor 8]`` per row (1-in-10 ranking;
            the ground truth is always first).
        filename : str
            The file read.

    Raises
    ------
    DataFormatError
        A malformed row (wrong number of fields, empty context or response, bad label,
        wrong header); the message names the file and line.

    References
    ----------
    Lowe, Pow, Serban & Pineau, "The Ubuntu Dialogue Corpus: A Large Dataset for Research
    in Unstructured Multi-Turn Dialogue Systems", SIGDIAL 2015.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.datasets import load_ubuntu
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "ubuntu").mkdir()
    >>> _ = (home / "ubuntu" / "valid.csv").write_text(
    ...     "Context,Ground Truth Utterance,Distractor_0\\n"
    ...     "hi __eou__ __eot__ hello __eou__ you ? __eou__ __eot__,fine __eou__,no __eou__\\n")
    >>> data = load_ubuntu("valid", data_home=home)
    >>> [(t.speaker, t.text) for t in data.X[0].history], data.X[0].query
    ([('bot', 'hi')], 'hello you ?')
    >>> data.candidate_lists
    [['fine', 'no']]
    """
    return read_ubuntu_file(_find(split, data_home), split)


def read_ubuntu_file(path: Path, split: str, delimiter: str = ",") -> Bunch:
    """The fields of :func:`load_ubuntu` from one file of the ``split`` layout (``"train"``,
    or ``"valid"`` and ``"test"``), comma- or tab-separated."""
    X: list[Context] = []
    y: list[str] = []
    extra: list = []
    for chunk in _chunks(path, split, DEFAULT_CHUNKSIZE, delimiter):
        X += chunk.X
        y += chunk.y
        extra.append(chunk.labels if split == "train" else chunk.candidate_lists)
    out = Bunch(X=X, y=y, filename=str(path))
    if split == "train":
        out.labels = np.concatenate(extra) if extra else np.zeros(0, dtype=np.int64)
    else:
        out.candidate_lists = [c for block in extra for c in block]
    return out
