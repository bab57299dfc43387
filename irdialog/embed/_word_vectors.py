"""Pretrained word vectors: the files of word2vec, GloVe and fastText, read as the starting
embeddings of the models of :mod:`irdialog.embed` (their ``initial_embeddings``).

The formats (Mikolov et al. 2013's word2vec tool, Pennington et al. 2014's GloVe,
Bojanowski et al. 2017's fastText ``.vec``) are lines of a word and its values separated by
spaces, under a header line ``"n_words dim"`` (word2vec text, fastText ``.vec``) or none
(GloVe); word2vec's binary format has that header, then per word the word, a space and
``dim`` little-endian float32 values. A file is read once, as a stream: with a vocabulary,
only its words' values are parsed and kept, so a file of millions of words costs the memory
of the model's words.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from ..datasets._base import open_maybe_gzip

# Bytes of a file's start read to tell a binary file from text.
_SNIFF_BYTES = 4096
# Bytes read at a time from a binary file.
_BINARY_CHUNK = 1 << 20


def _header(fields) -> tuple[int, int] | None:
    """(n_words, dim) of a header line's fields, or None when the line is not a header."""
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        return None
    return int(fields[0]), int(fields[1])


def _is_binary(path) -> bool:
    """Whether the file is word2vec binary: a header line, then bytes that are not UTF-8
    text (float32 values hold control bytes or invalid sequences)."""
    with open_maybe_gzip(path) as f:
        start = f.read(_SNIFF_BYTES)
    newline = start.find(b"\n")
    try:
        first = start[: newline if newline >= 0 else len(start)].decode("utf-8").split()
    except UnicodeDecodeError:
        return False  # the text reader names the line
    if newline < 0 or _header(first) is None:
        return False
    rest = start[newline + 1 :]
    if any(b < 0x20 and b not in b"\t\n\r" for b in rest):
        return True
    try:
        rest.decode("utf-8")
    except UnicodeDecodeError as e:  # a multi-byte character cut by the sample's end is text
        return e.start < len(rest) - 3
    return False


def _values(fields, where) -> np.ndarray:
    try:
        vec = np.asarray(fields, dtype=np.float32)
    except ValueError:
        bad = next(f for f in fields if not _is_number(f))
        raise ValueError(f"{where}: {bad!r} is not a number.") from None
    if not np.all(np.isfinite(vec)):
        raise ValueError(f"{where}: a value is not finite (inf or nan).")
    return vec


def _is_number(text) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_text(path, vocabulary) -> tuple[dict, int]:
    """The text formats. With a vocabulary, a line of another word is only counted: its
    word is decoded, its values neither split nor parsed."""
    vectors: dict[str, np.ndarray] = {}
    dim = n_words = None
    n_read = 0
    with open_maybe_gzip(path) as f:
        for lineno, raw in enumerate(f, 1):
            where = f"{path}, line {lineno}"
            if lineno == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark
            raw = raw.rstrip(b"\r\n ")  # fastText ends its lines with a space
            if not raw.strip():
                continue
            head, _, rest = raw.partition(b" ")
            try:
                word = head.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{where}: not UTF-8 text (byte {e.start}).") from None
            if lineno == 1 and _header([word, rest.decode("ascii", "replace")]) is not None:
                n_words, dim = _header([word, rest.decode("ascii")])
                if dim == 0:
                    raise ValueError(f"{where}: the header gives vectors of 0 values.")
                continue
            n_read += 1
            known = word in vectors or (vocabulary is not None and word not in vocabulary)
            if known and dim is not None:
                continue  # a repeated word keeps its first vector
            try:
                fields = rest.decode("utf-8").split(" ") if rest else []
            except UnicodeDecodeError as e:
                at = len(head) + 1 + e.start
                raise ValueError(f"{where}: not UTF-8 text (byte {at}).") from None
            if dim is None:  # GloVe: the first line gives the dimension
                dim = len(fields)
                if dim == 0:
                    raise ValueError(f"{where}: a word without values.")
            if len(fields) != dim:
                raise ValueError(
                    f"{where}: {len(fields)} values after the word {word!r}, expected {dim} "
                    "(words hold no spaces; values are separated by one space)."
                )
            if not known:
                vectors[word] = _values(fields, where)
    if dim is None:
        raise ValueError(f"{path}: the file holds no word vector.")
    if n_words is not None and n_read != n_words:
        raise ValueError(f"{path}: the header announces {n_words} words, the file holds {n_read}.")
    return vectors, dim


def _read_binary(path, vocabulary) -> tuple[dict, int]:
    vectors: dict[str, np.ndarray] = {}
    with open_maybe_gzip(path) as f:
        buf = f.read(_BINARY_CHUNK)
        newline = buf.find(b"\n")
        fields = buf[: max(newline, 0)].decode("utf-8", "replace").split()
        header = _header(fields) if newline >= 0 else None
        if header is None or header[1] == 0:
            raise ValueError(
                f"{path}, line 1: not a word2vec binary file (its first line must be "
                f"'n_words dim', got {buf[:40]!r}); fastText's .bin models are not word "
                "vector files: read their .vec."
            )
        n_words, dim = header
        size = 4 * dim
        pos = newline + 1
        offset = 0  # of buf in the file
        for k in range(1, n_words + 1):
            where = f"{path}, word {k} (byte {offset + pos})"
            while True:  # the word: up to a space, past the newline of the previous record
                while pos < len(buf) and buf[pos : pos + 1] in (b"\n", b"\r"):
                    pos += 1
                space = buf.find(b" ", pos)
                if space >= 0 and space + 1 + size <= len(buf):
                    break
                more = f.read(_BINARY_CHUNK)
                if not more:
                    raise ValueError(
                        f"{where}: the file ends before word {k} of the {n_words} its "
                        f"header announces, or its values ({dim} float32 each)."
                    )
                offset += pos
                buf = buf[pos:] + more
                pos = 0
                where = f"{path}, word {k} (byte {offset})"
            try:
                word = buf[pos:space].decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{where}: the word is not UTF-8 text.") from None
            if not word or "\n" in word:
                raise ValueError(f"{where}: unreadable record (empty word or a newline in it).")
            if word not in vectors and (vocabulary is None or word in vocabulary):
                vec = np.frombuffer(buf, dtype="<f4", count=dim, offset=space + 1)
                if not np.all(np.isfinite(vec)):
                    raise ValueError(f"{where}: a value of {word!r} is not finite (inf or nan).")
                vectors[word] = vec.astype(np.float32)
            pos = space + 1 + size
    return vectors, dim


def _from_mapping(mapping, vocabulary) -> tuple[dict, int]:
    vectors: dict[str, np.ndarray] = {}
    dim = None
    for word, values in mapping.items():
        if not isinstance(word, str):
            raise TypeError(f"word vectors: the keys must be words (str), got {word!r}.")
        where = f"word vectors, the vector of {word!r}"
        vec = np.asarray(values)
        if vec.ndim != 1 or not vec.size or not np.issubdtype(vec.dtype, np.number):
            raise ValueError(f"{where}: expected a 1-d array of numbers, got {vec!r}.")
        if dim is None:
            dim = vec.size
        elif vec.size != dim:
            raise ValueError(f"{where}: {vec.size} values, where the first vector has {dim}.")
        if vocabulary is not None and word not in vocabulary:
            continue
        vec = vec.astype(np.float32)
        if not np.all(np.isfinite(vec)):
            raise ValueError(f"{where}: a value is not finite (inf or nan).")
        vectors[word] = vec
    if dim is None:
        raise ValueError("word vectors: the mapping holds no word vector.")
    return vectors, dim


def read_word_vectors(source, vocabulary=None, binary=None) -> tuple[dict, int]:
    """(vectors, dim): :func:`load_word_vectors`'s mapping, and the dimension of the
    source's vectors (known even when no word of ``vocabulary`` has one)."""
    if isinstance(source, Mapping):
        return _from_mapping(source, vocabulary)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(
            f"word vectors: expected a path or a dict of word -> array, got {type(source)}."
        )
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"word vectors: no such file: {path}")
    if os.path.getsize(path) == 0:
        raise ValueError(f"{path}: the file is empty.")
    if binary is None:
        binary = path.removesuffix(".gz").endswith(".bin") or _is_binary(path)
    return (_read_binary if binary else _read_text)(path, vocabulary)


def load_word_vectors(source, *, vocabulary=None, binary=None) -> dict[str, np.ndarray]:
    """Read pretrained word vectors: a word2vec, GloVe or fastText file, or a mapping.

    The file formats: word2vec text and fastText ``.vec`` (a header line ``"n_words dim"``,
    then one line per word: the word and its values, separated by single spaces), GloVe
    text (the same lines without the header), and word2vec binary (the header line, then
    per word its UTF-8 bytes, a space and ``dim`` little-endian float32 values). A name
    ending in ``.gz`` is read through gzip. A word is any sequence of non-space
    characters, in any script; a word that recurs keeps its first vector.

    Parameters
    ----------
    source : str, path-like or mapping of str to array-like
        The file, or a dict ``{word: vector}`` (checked as a file is).
    vocabulary : container of str, default=None
        Keep only these words: the file is streamed and only their values are parsed, so
        a file of gigabytes costs the memory of the words kept. None: every word.
    binary : bool, default=None
        Whether the file is word2vec binary. None: when its name ends in ``.bin`` (or
        ``.bin.gz``), or when the bytes after its header line are not UTF-8 text.

    Returns
    -------
    vectors : dict of str to ndarray of shape (dim,), float32
        The words (of ``vocabulary``) the source holds, in the source's order.

    Raises
    ------
    ValueError
        On an empty file, a line with the wrong number of values or a value that is not a
        finite number, text that is not UTF-8, a binary file that ends early; the message
        names the file and the line (the word's number and byte offset in a binary file).
        With ``vocabulary``, the values of the other words are not read, nor checked.
    FileNotFoundError
        When the file does not exist.

    See Also
    --------
    SupervisedEmbeddingRanker, MemN2NRanker, QRNRanker, RecurrentReader, DualEncoderRanker :
        their ``initial_embeddings`` take what this function reads.

    References
    ----------
    Mikolov et al. (2013). Distributed Representations of Words and Phrases and their
    Compositionality. NIPS (word2vec's formats).
    Pennington, Socher & Manning (2014). GloVe: Global Vectors for Word Representation.
    EMNLP.
    Bojanowski et al. (2017). Enriching Word Vectors with Subword Information. TACL
    (fastText's ``.vec``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "vectors.vec"
    >>> _ = path.write_text("3 2\\nhello 0.5 1\\n你好 0.5 1.0\\nbye -1 0\\n", encoding="utf-8")
    >>> vectors = load_word_vectors(path, vocabulary={"你好", "bye", "unknown"})
    >>> sorted(vectors), vectors["bye"].tolist()
    (['bye', '你好'], [-1.0, 0.0])
    """
    return read_word_vectors(source, vocabulary, binary)[0]


# The parameters of the models that take pretrained word vectors, validated alike.
WORD_VECTOR_CONSTRAINTS = {
    "initial_embeddings": [str, os.PathLike, Mapping, None],
    "freeze_embeddings": ["boolean"],
}


def embedding_start(model, index) -> tuple[np.ndarray, np.ndarray] | None:
    """The starting rows of a model's word embeddings from its ``initial_embeddings``:
    (rows, vectors), the rows of the vocabulary ``index`` (word -> row; row 0, the nil
    word, left out) whose word the vectors hold, in increasing order, and their vectors,
    float32 of shape (len(rows), ``model.embedding_dim``); None without
    ``initial_embeddings``.

    Raises ValueError when the vectors' dimension is not ``embedding_dim`` (naming both),
    and when ``freeze_embeddings`` is set without vectors to freeze."""
    source = model.initial_embeddings
    if source is None:
        if model.freeze_embeddings:
            raise ValueError(
                "freeze_embeddings=True keeps the pretrained vectors of initial_embeddings "
                "as they are: pass initial_embeddings."
            )
        return None
    vectors, dim = read_word_vectors(source, index)
    if dim != model.embedding_dim:
        name = "the mapping" if isinstance(source, Mapping) else os.fspath(source)
        raise ValueError(
            f"initial_embeddings: the vectors of {name} have {dim} values, the model's "
            f"embedding_dim is {model.embedding_dim}: set embedding_dim={dim}."
        )
    found = sorted((index[w], w) for w in vectors if index[w] != 0)
    rows = np.fromiter((r for r, _ in found), dtype=np.int64, count=len(found))
    matrix = np.empty((len(found), dim), dtype=np.float32)
    for i, (_, w) in enumerate(found):
        matrix[i] = vectors[w]
    return rows, matrix
