"""A BM25 index in shards on Dask's ``distributed``, scoring as one index over the collection.

The collection is split into contiguous shards (a document's global id is its shard's
offset plus its id in the shard). The index is built in the way of Elasticsearch's
``dfs_query_then_fetch``, global statistics first:

1. each worker counts its shard's terms: its vocabulary in order of first appearance, each
   term's document frequency, its number of documents and their total length;
2. the client merges the vocabularies in shard order (the vocabulary one index over the
   whole collection would have, term for term), sums the document frequencies and writes
   the collection's statistics to the index directory;
3. each worker computes its shard's impacts with the collection's IDF and mean length
   (:meth:`BM25Ranker._term_scores`, the single index's own code) and writes its shard as
   arrays with a manifest of their sizes and SHA-256.

A query is encoded once by the client, scattered to the shards, each shard returns its
exact top k and the scores of those documents (:meth:`InvertedIndex.scores_at`), and the
client merges them, ties to the lower global id. A shard's impacts, and a document's score,
are bit for bit those of one index, so the merged ranking is the one index's.

Workers receive paths, never index arrays: a shard is memory-mapped from its directory by
the worker that searches it and kept open there.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
import tempfile
import threading
import uuid
import weakref
from collections.abc import Iterable
from numbers import Integral
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from tqdm.auto import tqdm

from ._bm25 import BM25Ranker
from ._index import InvertedIndex, check_allowed

FORMAT = "irdialog-sharded-index"
FORMAT_VERSION = 1
INDEX_FILE = "index.json"
MANIFEST = "manifest.json"
# The template's parameters that the index keeps (the analyzer and the scoring); the
# candidates are the corpus, and match types need annotated contexts.
PARAMETERS = ("use_history", "method", "k1", "b", "delta", "tokenizer", "ngram_range",
              "drop_punctuation", "stop_words")  # fmt: skip
# Queries sent to the shards at a time by top_k.
_QUERY_BLOCK = 4096
# A block of queries up to this size travels inside each shard's task; a larger one is
# scattered to the workers first (one copy each).
_INLINE_BYTES = 1 << 18
_COUNTS = ("counts_data", "counts_indices", "counts_indptr", "lengths", "terms", "term_ends")
_SHARD_ARRAYS = ("indptr", "docs", "impacts", "term_max")
_READ_BLOCK = 1 << 20


class ShardFileError(ValueError):
    """A file of a sharded index that is missing, truncated or damaged (named in the
    message)."""


class ShardError(RuntimeError):
    """A shard that could not be searched (its worker lost, again after a retry)."""


# -- files -----------------------------------------------------------------------------------


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_READ_BLOCK):
            h.update(block)
    return h.hexdigest()


def _write_array(directory: Path, name: str, a: np.ndarray) -> dict:
    """``a`` as ``directory/name.npy`` (written beside it, then renamed into place); its
    manifest entry."""
    path = directory / f"{name}.npy"
    part = directory / f".{name}.{uuid.uuid4().hex}.npy"
    np.save(part, np.ascontiguousarray(a), allow_pickle=False)
    os.replace(part, path)
    return {"bytes": path.stat().st_size, "sha256": _digest(path)}


def _write_json(path: Path, doc: dict) -> None:
    part = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    part.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(part, path)


def _read_json(path: Path, what: str) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardFileError(f"{path}: missing; not a {what}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ShardFileError(f"{path}: damaged ({err})") from None
    if not isinstance(doc, dict):
        raise ShardFileError(f"{path}: damaged (not a JSON object)")
    return doc


def _read_arrays(directory: Path, files: dict, *, checksum: bool = True) -> dict:
    """The arrays of a manifest, memory-mapped, after checking each file's size (and, with
    ``checksum``, its SHA-256) against the manifest."""
    out = {}
    for name, entry in files.items():
        path = directory / name
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise ShardFileError(f"{path}: missing (the manifest lists it)") from None
        if size != entry["bytes"]:
            raise ShardFileError(
                f"{path}: {size} bytes where the manifest says {entry['bytes']} "
                "(truncated or damaged); rebuild the index"
            )
        if checksum and _digest(path) != entry["sha256"]:
            raise ShardFileError(
                f"{path}: its SHA-256 differs from the manifest's (damaged); rebuild the index"
            )
        try:
            out[path.stem] = np.load(path, mmap_mode="r", allow_pickle=False)
        except ValueError as err:
            raise ShardFileError(f"{path}: not an array file ({err})") from None
    return out


def _terms_arrays(terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Terms as one UTF-8 buffer (uint8) and the end of each in it (int64)."""
    encoded = [t.encode("utf-8", "surrogatepass") for t in terms]
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), ends


def _terms_list(buffer: np.ndarray, ends: np.ndarray) -> list[str]:
    data = bytes(np.asarray(buffer))
    starts = itertools.chain([0], ends[:-1].tolist())
    return [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts, ends.tolist())]


# -- the work of a shard (on a worker, or in this process) ----------------------------------


def _ranker(params: dict) -> BM25Ranker:
    params = dict(params)
    params["ngram_range"] = tuple(params["ngram_range"])
    return BM25Ranker(**params)


def _checked_texts(texts: Iterable, shard: int):
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"shard {shard}, document {i}: a document is a str, got {type(text).__name__} "
                f"({text!r:.60})"
            )
        yield text


def _count_shard(texts, params: dict, directory: str, shard: int) -> dict:
    """Step 1: the shard's term counts, kept in ``directory`` for step 3; returns its
    statistics (vocabulary, document frequencies, documents, total length)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ranker = _ranker(params)
    counts, lengths = ranker._documents(_checked_texts(texts, shard))
    terms = list(ranker.vocabulary_)
    buffer, ends = _terms_arrays(terms)
    arrays = (counts.data, counts.indices, counts.indptr, lengths, buffer, ends)
    for name, a in zip(_COUNTS, arrays):
        np.save(directory / f"{name}.npy", a, allow_pickle=False)
    return {
        "terms": terms,
        "df": np.bincount(counts.indices, minlength=len(terms)).astype(np.int64),
        "n_docs": len(lengths),
        "total_length": float(lengths.sum()),
    }


def _collection_ranker(index_dir: Path, doc: dict) -> BM25Ranker:
    """A ranker holding the collection's statistics (no vocabulary): what scores a shard."""
    arrays = _read_arrays(index_dir, {"df.npy": doc["files"]["df.npy"]})
    ranker = _ranker(doc["ranker"])
    ranker._set_statistics(np.asarray(arrays["df"]), doc["n_documents"], doc["total_length"])
    return ranker


def _index_shard(directory: str, index_dir: str) -> dict:
    """Step 3: the shard's impacts with the collection's statistics, written as arrays
    with their manifest; returns the manifest."""
    directory, index_dir = Path(directory), Path(index_dir)
    doc = _read_json(index_dir / INDEX_FILE, "sharded index")
    ranker = _collection_ranker(index_dir, doc)
    n_terms = len(ranker.idf_)
    parts = {name: np.load(directory / f"{name}.npy") for name in _COUNTS}
    remap = np.load(directory / "remap.npy")
    lengths = parts["lengths"]
    counts = sp.csr_matrix(
        (parts["counts_data"], remap[parts["counts_indices"]].astype(np.int32),
         parts["counts_indptr"]),
        shape=(len(lengths), n_terms),
    )  # fmt: skip
    index = InvertedIndex.from_matrix(ranker._term_scores(counts, lengths, np.float32))
    files = {
        f"{name}.npy": _write_array(directory, name, getattr(index, name)) for name in _SHARD_ARRAYS
    }
    manifest = {"format": FORMAT, "n_docs": index.n_docs, "n_terms": n_terms, "files": files}
    _write_json(directory / MANIFEST, manifest)
    for name in (*_COUNTS, "remap"):
        (directory / f"{name}.npy").unlink()
    return manifest


# The shards this process has open, by directory: (the stat of their files, the index).
_OPEN: dict[str, tuple[tuple, InvertedIndex]] = {}
_OPEN_LOCK = threading.Lock()


def _stat(directory: Path) -> tuple:
    """What tells that a shard's files have changed: each one's size, time and inode."""
    out = []
    for name in (MANIFEST, *(f"{a}.npy" for a in _SHARD_ARRAYS)):
        try:
            st = (directory / name).stat()
        except FileNotFoundError:
            st = None
        out.append(None if st is None else (st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(out)


def _open_shard(directory: str, *, verify: bool = False) -> InvertedIndex:
    """The shard of ``directory``, memory-mapped, its files checked against its manifest
    (sizes and SHA-256) when this process first opens it, when any of them has changed
    since (so that a file cut short is never read through a map), or with ``verify``."""
    directory = Path(directory)
    path = directory / MANIFEST
    with _OPEN_LOCK:
        key = _stat(directory)
        held = _OPEN.get(str(directory))
        if held is not None and held[0] == key and not verify:
            return held[1]
        _OPEN.pop(str(directory), None)
        manifest = _read_json(path, "shard of an index")
        if manifest.get("format") != FORMAT or set(manifest.get("files", ())) != {
            f"{name}.npy" for name in _SHARD_ARRAYS
        }:
            raise ShardFileError(f"{path}: not the manifest of a shard of an index")
        try:
            a = _read_arrays(directory, manifest["files"])
        except (KeyError, TypeError) as err:
            raise ShardFileError(f"{path}: malformed ({type(err).__name__}: {err})") from None
        index = InvertedIndex(
            a["indptr"], a["docs"], a["impacts"], a["term_max"], manifest["n_docs"]
        )
        n_postings = int(index.indptr[-1]) if len(index.indptr) else -1
        if index.n_terms != manifest["n_terms"] or not (
            n_postings == len(index.docs) == len(index.impacts)
        ):
            raise ShardFileError(f"{path}: its arrays do not add up (damaged)")
        _OPEN[str(directory)] = (key, index)
        return index


def _forget_shards(dirs) -> None:
    """Unmap the shards of ``dirs`` in this process (an index closed)."""
    with _OPEN_LOCK:
        for d in dirs:
            _OPEN.pop(str(d), None)


def _warm_shard(directory: str) -> int:
    return _open_shard(directory, verify=True).n_docs


def _search_shard(directory: str, queries: sp.csr_matrix, k: int, allowed=None):
    """A shard's exact top k of the queries (its own ids) and their scores; under a filter
    (``allowed``, :class:`~irdialog.retrieval._kernels.Allowed` in the shard's ids), -1
    with score -inf past the end of a query's allowed documents."""
    index = _open_shard(directory)
    if index.n_docs == 0:
        return np.empty((queries.shape[0], 0), np.int64), np.empty((queries.shape[0], 0))
    if allowed is None:
        top = index.top_k(queries, k)
        return top, index.scores_at(queries, top)
    top = index.top_k(queries, k, allowed=allowed)
    scores = index.scores_at(queries, np.maximum(top, 0))
    scores[top < 0] = -np.inf
    return top, scores


def _shard_filters(allowed, offsets) -> list:
    """Each shard's part of the filters ``allowed`` (global ids), in the shard's ids."""
    sizes = np.diff(allowed.indptr)
    of_filter = np.repeat(np.arange(len(sizes)), sizes)
    parts = []
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        inside = (allowed.ids >= lo) & (allowed.ids < hi)
        counts = np.bincount(of_filter[inside], minlength=len(sizes))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        parts.append(allowed._replace(indptr=indptr, ids=allowed.ids[inside] - lo))
    return parts


def merge_top_k(parts, offsets, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best of the shards' top k: ``parts`` holds each shard's (local ids, scores),
    ``offsets`` each shard's first global id; best first, ties to the lower global id. A
    local id of -1 (score -inf: past the end of a filter) stays -1, after the others.

    Examples
    --------
    >>> import numpy as np
    >>> parts = [(np.array([[1, 0]]), np.array([[2.0, 1.0]])),
    ...          (np.array([[0, 1]]), np.array([[2.0, 0.5]]))]
    >>> merge_top_k(parts, [0, 5], k=3)
    (array([[1, 5, 0]]), array([[2., 2., 1.]]))
    """
    ids = np.hstack([np.where(np.asarray(top) < 0, -1, np.asarray(top, np.int64) + off)
                     for (top, _), off in zip(parts, offsets)])  # fmt: skip
    scores = np.hstack([np.asarray(s, np.float64) for _, s in parts])
    order = np.lexsort((ids, -scores), axis=-1)[:, :k]
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(scores, order, axis=1)


# -- running the work: in this process or on Dask -----------------------------------------


def _distributed():
    try:
        import distributed
    except ImportError:  # pragma: no cover - the dask extra is installed in the tests
        raise ImportError(
            "a ShardedIndex on more than one shard, or on a cluster, needs Dask's "
            "distributed: pip install 'irdialog[dask]'"
        ) from None
    return distributed


def _shutdown(client, cluster, directory) -> None:
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


class ShardedIndex:
    """BM25 over a collection in shards on Dask workers, scoring as one index.

    The shards are built and searched on the workers of a :class:`distributed.Client`
    (or of a :class:`distributed.LocalCluster` of processes that the index starts, and
    stops at :meth:`close`); with ``shards=1`` and no client, everything runs in this
    process. Statistics come first (as Elasticsearch's ``dfs_query_then_fetch``): each
    shard's term counts are summed into the collection's document frequencies, document
    count and mean length, and every shard scores with those, so a document's score, and
    the ranking, are those of one :class:`BM25Ranker` whose candidates are the collection
    (a document and its score, bit for bit; ties to the lower id). Each shard is a
    directory of arrays with a manifest of their sizes and SHA-256, written by the worker
    that built it and memory-mapped by the worker that searches it: workers receive paths,
    never arrays, and every worker must see the directory (on several machines, a shared
    file system).

    Documents keep their place in the collection: a document's id is its position (line
    number of a file, from 0), repeated documents included (a :class:`BM25Ranker` keeps one
    copy of a repeated candidate).

    Parameters
    ----------
    ranker : BM25Ranker or None, default=None
        The template of the analyzer and scoring parameters (``method``, ``k1``, ``b``,
        ``delta``, ``tokenizer``, ``ngram_range``, ``drop_punctuation``, ``stop_words``,
        ``use_history``); None: ``BM25Ranker()``. Its ``candidates`` and ``type_weight``
        are not used, and its tokenizer must be named (``"word"`` or ``"char"``): the
        directory stores the parameters, not code.
    shards : int, default=1
        How many shards (contiguous parts of the collection).
    client : distributed.Client, str or None, default=None
        The cluster: a client, or a scheduler's address (a client is opened on it, and
        closed by :meth:`close`). None: a ``LocalCluster`` of ``min(shards, cores)``
        one-thread worker processes when ``shards > 1``, this process when ``shards=1``.
    directory : path or None, default=None
        Where the index is written (one subdirectory per shard); None: a temporary
        directory removed by :meth:`close`.
    verbose : bool, default=False
        Progress bars (tqdm) of the build.

    Attributes
    ----------
    directory_ : pathlib.Path
    n_documents_ : int
    offsets_ : int64 ndarray of shape (n_shards + 1,)
        Shard ``s`` holds the documents ``offsets_[s]`` to ``offsets_[s + 1] - 1``.
    ranker_ : BM25Ranker
        The query side: the template's parameters with the collection's vocabulary and
        statistics (``vocabulary_``, ``idf_``, ``n_documents_``, ``average_length_``).

    See Also
    --------
    BM25Ranker : the same scores from one index in one process.
    InvertedIndex : the index of each shard.

    References
    ----------
    Elasticsearch, search type ``dfs_query_then_fetch``: term statistics gathered from every
    shard before scoring.

    Examples
    --------
    >>> from irdialog import BM25Ranker
    >>> from irdialog.retrieval import ShardedIndex
    >>> docs = ["the cat sat on the mat", "dogs chase cats", "a cat and a dog", "stocks fell"]
    >>> with ShardedIndex(BM25Ranker(k1=1.2)).build(docs) as index:
    ...     ids, scores = index.top_k(["cat on a mat"], k=2)
    >>> ids
    array([[0, 2]])
    >>> model = BM25Ranker(candidates=docs, k1=1.2).fit(["hi"], [docs[0]])
    >>> bool((model.decision_function(["cat on a mat"])[0, [0, 2]] == scores).all())
    True
    """

    def __init__(self, ranker=None, *, shards=1, client=None, directory=None, verbose=False):
        self.ranker = ranker
        self.shards = shards
        self.client = client
        self.directory = directory
        self.verbose = verbose
        self._client = None
        self._finalizer = None

    # -- lifetime ---------------------------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Stop the cluster and close the client the index started (and remove its
        temporary directory); a client given as an object stays open, its workers no
        longer holding the shards."""
        dirs = getattr(self, "_dirs", None)
        if dirs and self._finalizer is not None and self._finalizer.alive:
            if self._client is None:
                _forget_shards(dirs)
            elif self._client is self.client and self._client.status == "running":
                with contextlib.suppress(OSError, TimeoutError):  # a cluster going down
                    self._client.run(_forget_shards, dirs)
        if self._finalizer is not None:
            self._finalizer()
        self._client = None

    def _connect(self, n_shards: int, temporary):
        """The Dask client (None: this process), started when needed."""
        cluster = client = None
        self._workers = None
        if isinstance(self.client, str) or (self.client is None and n_shards > 1):
            distributed = _distributed()
            if isinstance(self.client, str):
                client = distributed.Client(self.client)
            else:
                cluster = distributed.LocalCluster(
                    n_workers=min(n_shards, os.cpu_count() or 1), threads_per_worker=1,
                    processes=True, dashboard_address=None,
                )  # fmt: skip
                client = distributed.Client(cluster)
            self._client = client
        else:
            self._client = self.client
        self._finalizer = weakref.finalize(self, _shutdown, client, cluster, temporary)

    def _check_open(self):
        if self._finalizer is None or not self._finalizer.alive:
            raise RuntimeError("This ShardedIndex is closed (or not built): build or open it.")

    # -- build ------------------------------------------------------------------------------

    def _params(self) -> dict:
        template = BM25Ranker() if self.ranker is None else self.ranker
        if not isinstance(template, BM25Ranker):
            raise TypeError(f"ranker must be a BM25Ranker, got {type(template).__name__}.")
        template = clone(template).set_params(candidates=None)
        template._validate_params()
        params = {name: getattr(template, name) for name in PARAMETERS}
        if callable(params["tokenizer"]):
            raise TypeError(
                "A ShardedIndex stores its analyzer's parameters in its directory: the "
                'tokenizer must be "word" or "char", not a function.'
            )
        params["ngram_range"] = list(params["ngram_range"])
        if params["stop_words"] is not None:
            params["stop_words"] = sorted(params["stop_words"])
        return params

    def build(self, corpus) -> ShardedIndex:
        """Build the index of ``corpus`` and open it.

        Parameters
        ----------
        corpus : iterable of str, list of paths, or dask.bag.Bag
            The documents: texts; text files (``pathlib.Path`` objects, or ``os.PathLike``),
            one document a line, read by the workers; or a bag of texts, whose partitions
            are computed on the workers (repartitioned into ``shards``).

        Returns
        -------
        self : ShardedIndex
        """
        shards = self.shards
        if not isinstance(shards, Integral) or isinstance(shards, bool) or shards < 1:
            raise ValueError(f"shards must be a positive integer, got {self.shards!r}.")
        params = self._params()
        self.close()
        n_shards = int(self.shards)
        temporary = None
        if self.directory is None:
            temporary = directory = Path(tempfile.mkdtemp(prefix="irdialog-index-"))
        else:
            directory = Path(self.directory)
            directory.mkdir(parents=True, exist_ok=True)
        self._connect(n_shards, temporary)
        try:
            dirs = [str(directory / f"shard-{s:05d}") for s in range(n_shards)]
            counted = self._count(corpus, params, dirs)
            doc, ranker = self._statistics(counted, params, directory, dirs)
            self._run(_index_shard, [(d, str(directory)) for d in dirs], "indexing shards")
            offsets = np.cumsum([0] + [c["n_docs"] for c in counted])
            doc["shards"] = [
                {"path": Path(d).name, "offset": int(off), "n_docs": c["n_docs"]}
                for d, off, c in zip(dirs, offsets, counted)
            ]
            _write_json(directory / INDEX_FILE, doc)
            return self._attach(directory, doc, ranker)
        except BaseException:
            self.close()
            raise

    def _count(self, corpus, params, dirs) -> list[dict]:
        n = len(dirs)
        distributed = None if self._client is None else _distributed()
        bag = _as_bag(corpus, n, in_process=distributed is None)
        if distributed is None:  # one shard, here
            texts = bag if bag is not None else corpus
            texts = tqdm(texts, desc="counting", unit=" docs", disable=not self.verbose)
            return [_count_shard(texts, params, dirs[0], 0)]
        if bag is None:
            texts = list(corpus)
            bounds = [len(texts) * s // n for s in range(n + 1)]
            # Each part sent to one worker ahead of its task (not inside the task graph).
            parts = self._client.scatter(
                [texts[bounds[s] : bounds[s + 1]] for s in range(n)], hash=False
            )
            args = [(parts[s], params, dirs[s], s) for s in range(n)]
            return self._run(_count_shard, args, "counting shards", dirs=dirs)
        import dask

        parts = bag.to_delayed()
        count = dask.delayed(_count_shard)
        tasks = [count(p, params, d, s) for s, (p, d) in enumerate(zip(parts, dirs))]
        futures = self._client.compute(tasks)
        return self._gather(futures, "counting shards", dirs)

    def _statistics(self, counted, params, directory: Path, dirs) -> tuple[dict, BM25Ranker]:
        """Step 2: the collection's vocabulary (the shards' in order) and statistics."""
        vocabulary: dict[str, int] = {}
        dfs = []
        for c, d in zip(counted, dirs):
            remap = np.fromiter(
                (vocabulary.setdefault(t, len(vocabulary)) for t in c["terms"]),
                dtype=np.int64, count=len(c["terms"]),
            )  # fmt: skip
            np.save(Path(d) / "remap.npy", remap, allow_pickle=False)
            dfs.append((remap, c["df"]))
        df = np.zeros(len(vocabulary), dtype=np.int64)
        for remap, part in dfs:
            df[remap] += part  # a shard's terms are distinct
        n_docs = sum(c["n_docs"] for c in counted)
        if n_docs == 0:
            raise ValueError("The corpus holds no document.")
        buffer, ends = _terms_arrays(list(vocabulary))
        files = {f"{name}.npy": _write_array(directory, name, a)
                 for name, a in (("terms", buffer), ("term_ends", ends), ("df", df))}  # fmt: skip
        doc = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "ranker": params,
            "n_documents": n_docs,
            "total_length": float(sum(c["total_length"] for c in counted)),
            "n_terms": len(vocabulary),
            "files": files,
        }
        _write_json(directory / INDEX_FILE, doc)
        ranker = _ranker(params)
        ranker.vocabulary_ = vocabulary
        ranker._set_statistics(df, doc["n_documents"], doc["total_length"])
        return doc, ranker

    # -- open -------------------------------------------------------------------------------

    @classmethod
    def open(cls, directory, *, client=None, verbose=False) -> ShardedIndex:
        """Open an index written by :meth:`build`; every shard is checked (each file's
        size and SHA-256 against its manifest) and mapped by the worker that will search it.

        Parameters
        ----------
        directory : path
        client : distributed.Client, str or None, default=None
            As for the constructor: None runs one shard here, several on a
            ``LocalCluster`` that the index starts.
        verbose : bool, default=False

        Returns
        -------
        index : ShardedIndex

        Raises
        ------
        ShardFileError
            A file of the index missing, truncated or damaged (its path in the message).
        """
        directory = Path(directory)
        doc = _read_json(directory / INDEX_FILE, "sharded index")
        if doc.get("format") != FORMAT or doc.get("version") != FORMAT_VERSION:
            raise ShardFileError(f"{directory / INDEX_FILE}: not an index of this irdialog")
        if "shards" not in doc:
            raise ShardFileError(f"{directory / INDEX_FILE}: the build did not finish")
        try:
            arrays = _read_arrays(directory, doc["files"])
            ranker = _ranker(doc["ranker"])
            terms = _terms_list(arrays["terms"], arrays["term_ends"])
            ranker.vocabulary_ = {t: i for i, t in enumerate(terms)}
            ranker._set_statistics(
                np.asarray(arrays["df"]), doc["n_documents"], doc["total_length"]
            )
        except (KeyError, TypeError, IndexError) as err:
            raise ShardFileError(
                f"{directory / INDEX_FILE}: malformed ({type(err).__name__}: {err})"
            ) from None
        if not isinstance(doc["shards"], list) or not all(
            isinstance(s, dict) and {"path", "offset", "n_docs"} <= s.keys() for s in doc["shards"]
        ):
            raise ShardFileError(f"{directory / INDEX_FILE}: malformed (the list of shards)")
        index = cls(ranker, shards=len(doc["shards"]), client=client, directory=directory,
                    verbose=verbose)  # fmt: skip
        index._connect(len(doc["shards"]), None)
        try:
            return index._attach(directory, doc, ranker)
        except BaseException:
            index.close()
            raise

    def _attach(self, directory: Path, doc: dict, ranker: BM25Ranker) -> ShardedIndex:
        self.directory_ = directory
        self.ranker_ = ranker
        ranker._absent = ranker._absent_score()
        self.n_documents_ = int(doc["n_documents"])
        self.offsets_ = np.array([s["offset"] for s in doc["shards"]] + [self.n_documents_])
        self._dirs = [str(directory / s["path"]) for s in doc["shards"]]
        self._shard_docs = [int(s["n_docs"]) for s in doc["shards"]]
        self._run(_warm_shard, [(d,) for d in self._dirs], "opening shards")
        return self

    # -- search -----------------------------------------------------------------------------

    def top_k(self, queries, k: int = 10, *, allowed=None) -> tuple[np.ndarray, np.ndarray]:
        """The k best documents of each query and their BM25 scores, best first.

        Parameters
        ----------
        queries : sequence of Context or str
        k : int, default=10
        allowed : array-like or sequence of array-like, default=None
            A filter: the documents (global ids) each query may return, as a boolean
            mask of the ``n_documents_`` documents or an array of ids, for every query or
            one per query (:meth:`~irdialog.retrieval.InvertedIndex.top_k`). Each shard
            searches its part of it; the result is the exact top k of the allowed
            documents, and a query allowed fewer than k gets them all, ranked.

        Returns
        -------
        ids : int64 ndarray of shape (n_queries, min(k, ``n_documents_``))
            Global ids (positions in the collection); ties to the lower id. With
            ``allowed``, of shape (n_queries, min(k, m)), ``m`` the size of the largest
            filter, and -1 past the end of a smaller one.
        scores : float64 ndarray of the same shape
            Each document's score, as :meth:`BM25Ranker.decision_function` gives it
            (-inf where the id is -1).

        Raises
        ------
        ShardError
            When a shard could not be searched, after one retry: never a shorter list.
        """
        self._check_open()
        if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        k = min(int(k), self.n_documents_)
        _, counts = self.ranker_._queries(queries)
        absent = counts @ self.ranker_._absent
        Q = sp.csr_matrix(counts, dtype=np.float64)
        Q.sum_duplicates()
        allowed = check_allowed(allowed, Q.shape[0], self.n_documents_)
        shard_filters = [None] * len(self._dirs)
        if allowed is not None:
            k = min(k, int(np.diff(allowed.indptr).max(initial=0)))
            shard_filters = _shard_filters(allowed, self.offsets_)
        ids, scores = [], []
        for start in range(0, Q.shape[0], _QUERY_BLOCK):
            block = Q[start : start + _QUERY_BLOCK]
            filters = [
                f if f is None else f._replace(row=f.row[start : start + _QUERY_BLOCK])
                for f in shard_filters
            ]
            parts = self._scatter(block, k, filters)
            top, s = merge_top_k(parts, self.offsets_[:-1], k)
            ids.append(top)
            scores.append(s)
        return np.vstack(ids), np.vstack(scores) + absent[:, None]

    def _scatter(self, block, k, filters):
        args = [(d, block, k) if f is None else (d, block, k, f)
                for d, f in zip(self._dirs, filters)]  # fmt: skip
        if self._client is None:
            parts = [_search_shard(*a) for a in args]
        else:
            if block.data.nbytes + block.indices.nbytes > _INLINE_BYTES:
                [data] = self._client.scatter([block], broadcast=True, hash=False)
                args = [(a[0], data, *a[2:]) for a in args]
            parts = self._run(_search_shard, args, None, retries=1,
                              key="irdialog-search")  # fmt: skip
        for s, (top, _) in enumerate(parts):
            width = self._shard_docs[s]
            if filters[s] is not None:
                width = int(np.diff(filters[s].indptr).max(initial=0))
            want = (block.shape[0], min(k, width))
            if top.shape != want:
                raise ShardError(
                    f"shard {s} ({self._dirs[s]}) returned {top.shape} results, not {want}."
                )
        return parts

    # -- running ----------------------------------------------------------------------------

    def _run(self, function, args, desc, *, retries=0, key=None, dirs=None) -> list:
        """``function(*a)`` for each shard's ``a``: here, or on the workers (shard ``s``
        preferably on worker ``s`` mod n, so that it stays open there). ``dirs``: the
        shards' directories, for the errors (default: each ``a``'s first item)."""
        if self._client is None:
            return [function(*a) for a in args]
        if not getattr(self, "_workers", None):
            # A round trip to the scheduler: once, and again after a failure.
            self._workers = sorted(self._client.scheduler_info()["workers"])
        workers = self._workers
        names = [f"{key or function.__name__.strip('_')}-{s}-{uuid.uuid4().hex}"
                 for s in range(len(args))]  # fmt: skip
        futures = [
            self._client.submit(
                function, *a, key=names[s], pure=False,
                workers=[workers[s % len(workers)]] if workers else None,
                allow_other_workers=True,
            )
            for s, a in enumerate(args)
        ]  # fmt: skip
        return self._gather(
            futures,
            desc,
            [a[0] for a in args] if dirs is None else dirs,
            retries=retries,
            again=lambda s: self._client.submit(function, *args[s], pure=False),
        )

    def _gather(self, futures, desc, dirs, *, retries=0, again=None) -> list:
        distributed = _distributed()
        bar = tqdm(total=len(futures), desc=desc, unit=" shards",
                   disable=not self.verbose or desc is None)  # fmt: skip
        with bar:
            if bar.disable:
                distributed.wait(futures)
            else:
                for _ in distributed.as_completed(futures):
                    bar.update()
        results = [None] * len(futures)
        for attempt in range(retries + 1):
            failed = []
            for s, future in enumerate(futures):
                if future.status == "finished":
                    results[s] = future.result()
                    continue
                error = future.exception()
                if isinstance(error, (ValueError, TypeError)) or attempt == retries:
                    if isinstance(error, (ValueError, TypeError)):
                        raise error  # the data, not the cluster: a retry would fail again
                    raise ShardError(
                        f"shard {s} ({dirs[s]}) could not be processed: "
                        f"{type(error).__name__}: {error}"
                    ) from error
                failed.append(s)
                self._workers = None
            if not failed:
                break
            for s in failed:
                futures[s] = again(s)
            distributed.wait([futures[s] for s in failed])
        return results


def _strip_newline(line: str) -> str:
    line = line.removesuffix("\n")
    return line.removesuffix("\r")


def _read_files(paths):
    """The lines of text files (UTF-8, a byte-order mark dropped), as ``read_text`` of
    ``dask.bag`` gives them: only ``\\n`` ends a line."""
    for path in paths:
        with open(path, encoding="utf-8-sig", newline="\n") as f:
            yield from map(_strip_newline, f)


def _as_bag(corpus, n_shards: int, *, in_process: bool):
    """The corpus as a bag of ``n_shards`` partitions, or an iterable of texts here; None
    for a corpus of texts (split by the caller)."""
    if isinstance(corpus, str):
        raise TypeError(
            "corpus must be an iterable of texts, of paths (pathlib.Path) or a dask bag, "
            "got a str; give a text file as pathlib.Path."
        )
    if isinstance(corpus, os.PathLike):
        corpus = [corpus]
    files = None
    if (
        isinstance(corpus, (list, tuple))
        and corpus
        and all(isinstance(p, os.PathLike) for p in corpus)
    ):
        files = [os.fspath(p) for p in corpus]
        for p in files:
            if not os.path.isfile(p):
                raise FileNotFoundError(f"{p}: no such corpus file")
    is_bag = type(corpus).__module__.startswith("dask.bag")
    if in_process:
        if files is not None:
            return _read_files(files)
        if is_bag:
            return itertools.chain.from_iterable(
                p.compute(scheduler="sync") for p in corpus.to_delayed()
            )
        return None
    if files is None and not is_bag:
        return None
    import dask.bag as db

    if files is not None:
        corpus = db.read_text(files, encoding="utf-8-sig", linedelimiter="\n").map(_strip_newline)
    if corpus.npartitions != n_shards:
        corpus = corpus.repartition(npartitions=n_shards)
    return corpus
