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

A worker reads a text file's byte range a line at a time, counts a block of documents at a
time into files (step 1), and turns them term-major and scores them a block of postings at
a time through maps of the shard's files (step 3): its memory holds blocks and arrays of a
value a document or a term, never the shard's postings.

A query is encoded once by the client, scattered to the shards, each shard returns its
exact top k and the scores of those documents (:meth:`InvertedIndex.scores_at`), and the
client merges them, ties to the lower global id. A shard's impacts, and a document's score,
are bit for bit those of one index, so the merged ranking is the one index's.

Workers receive paths, never index arrays: a shard is memory-mapped from its directory by
the worker that searches it and kept open there.

The index changes as Lucene's does, by new segments (or, under a size bound, documents
appended to the shard of the additions before, as a merge policy would merge small segments)
and tombstones, with one difference: its statistics are always those of the documents it holds,
so that every score equals a rebuild's. A shard keeps each posting's term count and each
document's length beside its impacts; a change updates the collection's statistics (an
addition counts only the new documents, a deletion reads the postings of the deleted ones),
then every shard is scored again from its counts (:func:`bm25_impacts`, one pass over its
postings, on its worker; no text is read again) and written as a new directory, its
unchanged arrays hard-linked. The index file names the directories and statistics files of
one generation; a change writes the next and replaces that file in one rename, so an
interrupted change leaves the index as it was. A deleted document stays in its shard until a
compaction, and the shard keeps the list of its deleted documents beside its arrays: its
search skips them (the kernels' ``deleted`` mask), so each shard returns the exact top k of
its documents left and the merge is that of an index without them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import tempfile
import threading
import uuid
import weakref
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from numbers import Real
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from tqdm.auto import tqdm

from .._digest import file_sha256
from .._held import held
from .._threads import n_threads
from ..base import check_positive_int
from ._bm25 import METHODS, BM25Ranker, length_norm
from ._bm25_kernels import TermCounts, bm25_impacts, marked_postings
from ._index import InvertedIndex, check_allowed, count_tokens

FORMAT = "irdialog-sharded-index"
# 2: shards keep their term counts and document lengths, so that the index can change
# (1 still opens, for search only); 3: shards keep their deleted documents (2 opens, and
# searches once its deletions are compacted). An add appended to the last shard changes no
# layout: each shard still holds one contiguous range of ids.
FORMAT_VERSION = 3
_READABLE_VERSIONS = (1, 2, 3)
INDEX_FILE = "index.json"
MANIFEST = "manifest.json"
# The template's parameters that the index keeps (the analyzer and the scoring); the
# candidates are the corpus, and match types need annotated contexts.
PARAMETERS = ("use_history", "method", "k1", "b", "delta", "tokenizer", "ngram_range",
              "drop_punctuation", "stop_words")  # fmt: skip
# Queries sent to the shards at a time by top_k.
_QUERY_BLOCK = 4096
# A block of queries up to this size travels inside each shard's task; a larger one is
# sent once, as a task of its own that the shards' tasks read (see irdialog._held).
_INLINE_BYTES = 1 << 18
# A shard's term counts between the steps of a build (or of an addition).
_COUNTS = ("counts_data.bin", "counts_indices.bin", "counts_indptr.npy", "counts_lengths.npy",
           "counts_df.npy")  # fmt: skip
# Documents counted at a time in step 1, and postings turned term-major or scored at a time
# in step 3 (and when a shard is scored again): a worker's memory holds these blocks and the
# shard's per-document and per-term arrays, never the shard's postings.
_COUNT_BLOCK = 1 << 18
_POSTING_BLOCK = 1 << 24
_SHARD_ARRAYS = ("indptr", "docs", "impacts", "term_max")
# What a shard keeps beside its impacts to be scored again with new statistics: each
# posting's term count, each document's length.
_CHANGE_ARRAYS = ("tfs", "lengths")
# A shard with deleted documents: their ids in the shard (int64, increasing).
_DELETED = "deleted"
# The directories an index writes: its shards, and the statistics of a generation.
_GENERATED = re.compile(r"shard-\d{5}(-g\d{5})?|g\d{5}")


class ShardFileError(ValueError):
    """A file of a sharded index that is missing, truncated or damaged (named in the
    message)."""


class ShardError(RuntimeError):
    """A shard that could not be searched (its worker lost, again after a retry)."""


# -- files -----------------------------------------------------------------------------------


def _write_array(directory: Path, name: str, a: np.ndarray) -> dict:
    """``a`` as ``directory/name.npy`` (written beside it, then renamed into place); its
    manifest entry."""
    path = directory / f"{name}.npy"
    part = directory / f".{name}.{uuid.uuid4().hex}.npy"
    np.save(part, np.ascontiguousarray(a), allow_pickle=False)
    os.replace(part, path)
    return _entry(path)


def _entry(path: Path) -> dict:
    """The manifest entry of an array file: its size and SHA-256."""
    return {"bytes": path.stat().st_size, "sha256": file_sha256(path)}


def _new_file(directory: Path, name: str, dtype, n: int) -> Path:
    """A new array file of ``n`` items (zeros), beside the place of ``name`` (where
    :func:`_place` puts it once written), to be filled through maps (:func:`_part`)."""
    part = directory / f".{name}.{uuid.uuid4().hex}.npy"
    if n:
        np.lib.format.open_memmap(part, mode="w+", dtype=dtype, shape=(n,))  # a sparse file
    else:
        np.save(part, np.zeros(0, dtype), allow_pickle=False)
    return part


def _place(path: Path, directory: Path, name: str, entry=None) -> dict:
    """The array file ``path`` as ``directory/name.npy``; its manifest entry (``entry``
    where the writer has it)."""
    target = directory / f"{name}.npy"
    if path != target:
        os.replace(path, target)
    return entry if entry is not None else _entry(target)


def _part(a, lo: int, hi: int, dtype) -> np.ndarray:
    """Items ``lo`` to ``hi - 1`` of ``a``, an array or an array file (mapped for this
    block only, so that a process's memory holds a block of a shard, not the shard)."""
    if hi <= lo:
        return np.zeros(0, dtype)
    if isinstance(a, Path):
        a = np.load(a, mmap_mode="r", allow_pickle=False)
    return np.ascontiguousarray(a[lo:hi], dtype=dtype)


def _blocks(indptr: np.ndarray):
    """Ranges of rows of a CSR ``indptr`` holding about ``_POSTING_BLOCK`` entries each (a
    longer row alone)."""
    cuts = np.searchsorted(indptr, np.arange(_POSTING_BLOCK, indptr[-1], _POSTING_BLOCK),
                           side="right") - 1  # fmt: skip
    bounds = np.unique(np.concatenate([[0], cuts, [len(indptr) - 1]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


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
        if checksum and file_sha256(path) != entry["sha256"]:
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
    """Step 1: the shard's term counts, kept in ``directory`` for step 3 (each document's
    terms in the shard's vocabulary, counted ``_COUNT_BLOCK`` documents at a time and
    appended to files); returns its statistics (vocabulary, document frequencies,
    documents, total length)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    analyzer = _ranker(params)._analyzer()
    texts = _checked_texts(texts, shard)
    vocabulary: dict[str, int] = {}
    indptr, lengths, df = [np.zeros(1, np.int64)], [np.zeros(0)], np.zeros(0, np.int64)
    with open(directory / _COUNTS[0], "wb") as data, open(directory / _COUNTS[1], "wb") as terms:
        while block := list(itertools.islice(texts, _COUNT_BLOCK)):
            counts, block_lengths = count_tokens(map(analyzer, block), vocabulary, grow=True)
            counts.data.astype(np.float32, copy=False).tofile(data)
            counts.indices.astype(np.int32, copy=False).tofile(terms)
            indptr.append(counts.indptr[1:].astype(np.int64) + indptr[-1][-1])
            lengths.append(block_lengths)
            df = np.pad(df, (0, len(vocabulary) - len(df)))
            df += np.bincount(counts.indices, minlength=len(vocabulary))
    lengths = np.concatenate(lengths)
    np.save(directory / _COUNTS[2], np.concatenate(indptr), allow_pickle=False)
    np.save(directory / _COUNTS[3], lengths, allow_pickle=False)
    np.save(directory / _COUNTS[4], df, allow_pickle=False)  # each term's postings in step 3
    return {
        "terms": list(vocabulary),
        "df": df,
        "n_docs": len(lengths),
        "total_length": float(lengths.sum()),
    }


def _statistics_ranker(spec: dict) -> BM25Ranker:
    """A ranker holding the collection's statistics (no vocabulary): what scores a shard.
    ``spec``: the ranker's parameters, the path of the document frequencies, the number of
    documents and their total length."""
    ranker = _ranker(spec["ranker"])
    df = np.load(spec["df"], mmap_mode="r", allow_pickle=False)
    ranker._set_statistics(np.asarray(df), spec["n_documents"], spec["total_length"])
    return ranker


def _whole(a: np.ndarray) -> bool:
    """Whether every value of ``a`` is a whole number at least 0."""
    return bool((a >= 0).all() and (a == np.rint(a)).all())


def _length_codes(lengths, dead, average_length: float, b: float):
    """Each document's code into the table of the length normalisations of the distinct
    lengths, ``1 - b + b |d| / avgdl``, as :func:`bm25_impacts` reads them; the documents
    marked in ``dead`` code the table's last entry, -1. A code is a byte where the lengths
    are whole numbers below 255 (as passages' are), two below 65,535, else four."""
    lengths = np.asarray(lengths, dtype=np.float64)
    top = float(lengths.max()) if len(lengths) else 0.0
    blocks = range(0, len(lengths), _COUNT_BLOCK)  # checked a block at a time: no temporaries
    whole = all(_whole(lengths[i : i + _COUNT_BLOCK]) for i in blocks)  # of the shard's size
    if whole and top < 2**16 - 1:
        values = np.arange(top + 1)  # code n: length n
        codes = lengths.astype(np.uint8 if top < 2**8 - 1 else np.uint16)
    else:
        values, codes = np.unique(lengths, return_inverse=True)
        codes = codes.astype(np.uint32)
    ratio = values / average_length if average_length > 0 else np.ones_like(values)
    norms = np.append(length_norm(ratio, b), -1.0)
    if dead is not None:
        codes[dead] = len(norms) - 1
    return codes, norms


def _posting_impacts(ranker, indptr, docs, tfs, lengths, dead=None, path=None):
    """Each posting's impact (float32) with the ranker's statistics, and each term's
    largest; the postings of the documents marked in ``dead`` score 0. The values of
    :meth:`BM25Ranker._term_scores`, bit for bit (:func:`bm25_impacts`).

    ``docs`` and ``tfs`` are arrays or array files, read a block of terms at a time. With
    ``path``, the impacts are written there as an array file, a block at a time, and its
    manifest entry is returned in their place: a thread writes and hashes each block while
    the next is scored, into the other of two buffers."""
    indptr = np.asarray(indptr, dtype=np.int64)
    n = int(indptr[-1])
    blocks = _blocks(indptr)
    term_max = np.zeros(len(indptr) - 1, dtype=np.float32)
    codes, norms = _length_codes(lengths, dead, float(ranker.average_length_), float(ranker.b))
    scoring = (METHODS.index(ranker.method), float(ranker.k1), float(ranker.delta))

    def score(t0, t1, out):
        lo, hi = indptr[t0], indptr[t1]
        counts = TermCounts(indptr[t0 : t1 + 1] - lo, _part(docs, lo, hi, np.int32),
                            _part(tfs, lo, hi, np.float32))  # fmt: skip
        bm25_impacts(counts, codes, norms, ranker.idf_[t0:t1], *scoring, out, term_max[t0:t1])

    if path is None:
        impacts = np.empty(n, dtype=np.float32)
        for t0, t1 in blocks:
            score(t0, t1, impacts[indptr[t0] : indptr[t1]])
        return impacts, term_max
    largest = max((int(indptr[t1] - indptr[t0]) for t0, t1 in blocks), default=0)
    buffers = [np.empty(largest, dtype=np.float32) for _ in range(2)]
    digest = hashlib.sha256()
    header = io.BytesIO()  # as np.save writes it
    np.lib.format.write_array_header_1_0(header, {
        "descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
        "fortran_order": False, "shape": (n,)})  # fmt: skip

    def write(data):
        f.write(data)
        digest.update(data)

    with open(path, "wb") as f, ThreadPoolExecutor(max_workers=1) as writer:
        pending = [writer.submit(write, header.getvalue()), None]
        for i, (t0, t1) in enumerate(blocks):
            if pending[i % 2] is not None:
                pending[i % 2].result()  # its buffer written
            block = buffers[i % 2][: indptr[t1] - indptr[t0]]
            score(t0, t1, block)
            pending[i % 2] = writer.submit(write, memoryview(block).cast("B"))
        for job in pending:
            if job is not None:
                job.result()
        size = f.tell()
    return {"bytes": size, "sha256": digest.hexdigest()}, term_max


def _link_array(source: Path, directory: Path, name: str, entry: dict) -> dict:
    """``source/name.npy`` into ``directory`` (a hard link, or a copy where links fail);
    its manifest entry, unchanged."""
    path = directory / f"{name}.npy"
    with contextlib.suppress(FileNotFoundError):  # a task run again
        path.unlink()
    try:
        os.link(source / f"{name}.npy", path)
    except OSError:
        shutil.copyfile(source / f"{name}.npy", path)
    return dict(entry)


def _write_shard(directory: Path, ranker, postings, lengths, *, dead=None, links=None) -> dict:
    """A shard's arrays and manifest: ``postings`` (indptr, docs, tfs) over the terms of
    ``ranker``, scored with its statistics, and the documents marked in ``dead`` kept as
    the shard's deleted ones; the arrays named in ``links`` (name: (source directory,
    manifest entry)) linked from the source rather than written."""
    indptr, docs, tfs = postings
    impacts = directory / f".impacts.{uuid.uuid4().hex}.npy"
    written, term_max = _posting_impacts(ranker, indptr, docs, tfs, lengths, dead, path=impacts)
    arrays = {"indptr": indptr, "docs": docs, "impacts": impacts, "term_max": term_max,
              "tfs": tfs, "lengths": lengths}  # fmt: skip
    if dead is not None:
        arrays[_DELETED] = np.flatnonzero(dead).astype(np.int64)
    links = links or {}
    files = {}
    for name, a in arrays.items():
        if name in links:
            files[f"{name}.npy"] = _link_array(links[name][0], directory, name, links[name][1])
        elif isinstance(a, Path):
            files[f"{name}.npy"] = _place(
                a, directory, name, written if name == "impacts" else None
            )
        else:
            files[f"{name}.npy"] = _write_array(directory, name, a)
    manifest = {"format": FORMAT, "n_docs": len(lengths), "n_terms": len(indptr) - 1,
                "files": files}  # fmt: skip
    _write_json(directory / MANIFEST, manifest)
    return manifest


def _term_major(counts: sp.csr_matrix):
    """(indptr int64, docs int32, tfs float32) of a (documents, terms) count matrix."""
    P = counts.T.tocsr()
    P.sort_indices()
    return (np.ascontiguousarray(P.indptr, dtype=np.int64),
            np.ascontiguousarray(P.indices, dtype=np.int32),
            np.ascontiguousarray(P.data, dtype=np.float32))  # fmt: skip


def _counts(directory: Path) -> tuple:
    """The documents counted into ``directory`` (step 1): their terms' counts (float32)
    and ids in the shard's vocabulary (int32), mapped, by document (int64 ``indptr``);
    their lengths; ``remap``, the shard's terms in the collection's vocabulary."""
    flat = [np.memmap(directory / name, dtype=dtype, mode="r")
            if (directory / name).stat().st_size else np.zeros(0, dtype)
            for name, dtype in zip(_COUNTS[:2], (np.float32, np.int32))]  # fmt: skip
    indptr, lengths, remap = (np.load(directory / name)
                              for name in (*_COUNTS[2:4], "remap.npy"))  # fmt: skip
    return *flat, indptr, lengths, remap


def _counted(directory: Path, n_terms: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """The documents counted into ``directory`` (step 1), as (document, term) counts over
    the collection's ``n_terms`` terms, and their lengths."""
    data, terms, indptr, lengths, remap = _counts(directory)
    counts = sp.csr_matrix((np.asarray(data), remap[terms].astype(np.int32), indptr),
                           shape=(len(lengths), n_terms))  # fmt: skip
    return counts, lengths


def _term_major_files(directory: Path, n_terms: int) -> tuple:
    """The documents counted into ``directory`` (step 1) as :func:`_term_major` gives them,
    the postings written to the array files ``docs`` and ``tfs`` of the directory a block
    of documents at a time: (indptr, the two files, to be put in place by
    :func:`_write_shard`). A block's postings of a term follow the blocks' before."""
    data, terms, doc_ptr, _, remap = _counts(directory)
    per_term = np.zeros(n_terms, dtype=np.int64)
    per_term[remap] = np.load(directory / _COUNTS[4])  # a term's documents: its postings
    indptr = np.concatenate([[0], np.cumsum(per_term)])
    files = [_new_file(directory, name, dtype, int(indptr[-1]))
             for name, dtype in (("docs", np.int32), ("tfs", np.float32))]  # fmt: skip
    cursor = indptr[:-1].copy()
    for d0, d1 in _blocks(doc_ptr):
        lo, hi = doc_ptr[d0], doc_ptr[d1]
        block = sp.csr_matrix(
            (np.asarray(data[lo:hi]), remap[terms[lo:hi]], doc_ptr[d0 : d1 + 1] - lo),
            shape=(d1 - d0, n_terms),
        ).T.tocsr()
        block.sort_indices()
        per_term = np.diff(block.indptr)
        at = np.arange(block.nnz) + np.repeat(cursor - block.indptr[:-1], per_term)
        for path, values in zip(files, (block.indices + d0, block.data)):
            mapped = np.load(path, mmap_mode="r+")
            mapped[at] = values
            del mapped  # written through, and let go
        cursor += per_term
    return indptr, *files


def _index_shard(directory: str, spec: dict) -> dict:
    """Step 3: the shard's impacts with the collection's statistics, written as arrays
    with their manifest; returns the manifest."""
    directory = Path(directory)
    ranker = _statistics_ranker(spec)
    postings = _term_major_files(directory, len(ranker.idf_))
    lengths = np.load(directory / _COUNTS[3])
    manifest = _write_shard(directory, ranker, postings, lengths)
    for name in (*_COUNTS, "remap.npy"):
        (directory / name).unlink()
    return manifest


def _shard_arrays(directory: Path) -> tuple[dict, dict]:
    """A shard's manifest and arrays (memory-mapped, sizes checked), to be changed."""
    manifest = _read_json(directory / MANIFEST, "shard of an index")
    if not {f"{name}.npy" for name in _CHANGE_ARRAYS} <= set(manifest.get("files", ())):
        raise ShardFileError(
            f"{directory / MANIFEST}: the shard keeps no term counts (an index of an earlier "
            "format); rebuild it to change it"
        )
    return manifest, _read_arrays(directory, manifest["files"], checksum=False)


def _dead_mask(n_docs: int, dead) -> np.ndarray:
    mask = np.zeros(n_docs, dtype=bool)
    mask[np.asarray(dead, dtype=np.int64)] = True
    return mask


def _rescore_shard(source: str, target: str, spec: dict, dead) -> dict:
    """Shard ``source`` written again as ``target``, scored with the statistics of
    ``spec`` (over a vocabulary that may have grown); its documents ``dead`` (its own
    ids) score 0. Its documents, counts and lengths are linked, not copied."""
    source, target = Path(source), Path(target)
    manifest, a = _shard_arrays(source)
    ranker = _statistics_ranker(spec)
    target.mkdir(parents=True, exist_ok=True)
    files = manifest["files"]
    links = {name: (source, files[f"{name}.npy"]) for name in ("docs", *_CHANGE_ARRAYS)}
    indptr = np.asarray(a["indptr"])
    grown = len(ranker.idf_) - (len(indptr) - 1)
    if grown:
        indptr = np.concatenate([indptr, np.full(grown, indptr[-1], dtype=np.int64)])
    else:
        links["indptr"] = (source, files["indptr.npy"])
    dead = _dead_mask(manifest["n_docs"], dead) if len(dead) else None
    return _write_shard(target, ranker, (indptr, a["docs"], a["tfs"]), a["lengths"],
                        dead=dead, links=links)  # fmt: skip


def _append_shard(source: str, target: str, spec: dict, dead, counts: str) -> dict:
    """Shard ``source`` with the documents counted in ``counts`` (the term counts of step 1
    and their ``remap`` into the collection's vocabulary) after its own, written as
    ``target`` and scored with the statistics of ``spec``; its documents ``dead`` (its own
    ids) score 0. The new documents' ids in the shard follow its own, so each term's
    postings are the shard's, then the new ones: the two lists are interleaved term by
    term (no sort), as an index of the shard's documents and the new ones would hold them."""
    source, target, counts = Path(source), Path(target), Path(counts)
    manifest, a = _shard_arrays(source)
    ranker = _statistics_ranker(spec)
    n_terms, n_own = len(ranker.idf_), int(manifest["n_docs"])
    added, lengths = _counted(counts, n_terms)
    new_indptr, new_docs, new_tfs = _term_major(added)
    own_indptr = np.asarray(a["indptr"], dtype=np.int64)
    own_indptr = np.concatenate(
        [own_indptr, np.full(n_terms + 1 - len(own_indptr), own_indptr[-1], dtype=np.int64)]
    )
    indptr = own_indptr + new_indptr
    # Posting j of term t goes to j + (the postings of terms before t of the other list).
    own_at = np.arange(own_indptr[-1]) + np.repeat(new_indptr[:-1], np.diff(own_indptr))
    new_at = np.arange(new_indptr[-1]) + np.repeat(own_indptr[1:], np.diff(new_indptr))
    docs = np.empty(indptr[-1], dtype=np.int32)
    tfs = np.empty(indptr[-1], dtype=np.float32)
    docs[own_at], docs[new_at] = a["docs"], new_docs + n_own
    tfs[own_at], tfs[new_at] = a["tfs"], new_tfs
    lengths = np.concatenate([np.asarray(a["lengths"]), lengths])
    target.mkdir(parents=True, exist_ok=True)
    dead = _dead_mask(len(lengths), dead) if len(dead) else None
    return _write_shard(target, ranker, (indptr, docs, tfs), lengths, dead=dead)


def _deleted_counts(directory: str, dead):
    """What deleting the documents ``dead`` (the shard's ids) takes from the collection's
    statistics: the terms they hold, how many of them hold each, their total length."""
    manifest, a = _shard_arrays(Path(directory))
    mask = _dead_mask(manifest["n_docs"], dead)
    bits = np.packbits(mask, bitorder="little")
    indptr = np.asarray(a["indptr"], dtype=np.int64)
    per_term = np.zeros(len(indptr) - 1, dtype=np.int64)
    for t0, t1 in _blocks(indptr):
        lo, hi = indptr[t0], indptr[t1]
        docs = _part(a["docs"], lo, hi, np.int32)
        marked_postings(indptr[t0 : t1 + 1] - lo, docs, bits, per_term[t0:t1])
    terms = np.flatnonzero(per_term)
    return terms, per_term[terms], float(np.asarray(a["lengths"])[mask].sum())


def _compact_shard(target: str, parts, spec: dict) -> dict:
    """A shard of the live documents of other shards: ``parts`` lists (source, first,
    stop, dead), the documents ``first`` to ``stop - 1`` of shard ``source`` but ``dead``;
    scored with the statistics of ``spec``."""
    ranker = _statistics_ranker(spec)
    n_terms = len(ranker.idf_)
    blocks, lengths = [], []
    for source, first, stop, dead in parts:
        manifest, a = _shard_arrays(Path(source))
        indptr = np.asarray(a["indptr"])
        P = sp.csr_matrix((a["tfs"], a["docs"], indptr),
                          shape=(len(indptr) - 1, manifest["n_docs"]))  # fmt: skip
        rows = np.arange(first, stop)
        rows = rows[~_dead_mask(manifest["n_docs"], dead)[rows]]
        block = P.T.tocsr()[rows]
        blocks.append(sp.csr_matrix((block.data, block.indices, block.indptr),
                                    shape=(len(rows), n_terms)))  # fmt: skip
        lengths.append(np.asarray(a["lengths"])[rows])
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    counts = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, n_terms))
    lengths = np.concatenate(lengths) if lengths else np.zeros(0)
    return _write_shard(target, ranker, _term_major(counts), lengths)


def _change_shard(kind: str, *args) -> dict:
    """One shard's part of a change of the index: ``kind`` "index" (a new shard), "rescore",
    "append" or "compact"."""
    work = {"index": _index_shard, "rescore": _rescore_shard, "append": _append_shard,
            "compact": _compact_shard}  # fmt: skip
    manifest = work[kind](*args)
    # Opened here, where it was written and will be searched (its sizes checked): the
    # change needs no round of opening after it.
    _open_shard(args[1] if kind in ("rescore", "append") else args[0], checksum=False)
    return manifest


def _file(doc: dict, stem: str) -> str:
    """The name, in the index directory, of the statistics file ``stem`` of ``doc``."""
    [name] = [name for name in doc["files"] if Path(name).stem == stem]
    return name


def _append_terms(directory: Path, files: dict, stats: Path, new_terms: list) -> dict:
    """``files`` with the vocabulary's files replaced by ones that end with ``new_terms``."""
    buffer = np.load(directory / _file({"files": files}, "terms"), allow_pickle=False)
    ends = np.load(directory / _file({"files": files}, "term_ends"), allow_pickle=False)
    more, more_ends = _terms_arrays(new_terms)
    end = ends[-1] if len(ends) else 0
    files = {n: e for n, e in files.items() if Path(n).stem not in ("terms", "term_ends")}
    files[f"{stats.name}/terms.npy"] = _write_array(stats, "terms", np.concatenate([buffer, more]))
    files[f"{stats.name}/term_ends.npy"] = _write_array(
        stats, "term_ends", np.concatenate([ends, more_ends + end])
    )
    return files


def _remove_unnamed(directory: Path, old: dict, new: dict) -> None:
    """The shards and statistics files that ``old`` names and ``new`` does not."""
    keep = {s["path"] for s in new["shards"]}
    for entry in old["shards"]:
        if entry["path"] not in keep:
            shutil.rmtree(directory / entry["path"], ignore_errors=True)
    for name in set(old["files"]) - set(new["files"]):
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()
        with contextlib.suppress(OSError):  # a generation's directory, once empty
            if Path(name).parent != Path("."):
                (directory / name).parent.rmdir()


def _remove_stale(directory: Path, doc: dict) -> None:
    """The shards and generations of statistics of an earlier index in ``directory`` that
    ``doc`` does not name (a build over a changed index)."""
    named = {s["path"] for s in doc["shards"]} | {Path(n).parts[0] for n in doc["files"]}
    for path in directory.iterdir():
        if path.is_dir() and path.name not in named and _GENERATED.fullmatch(path.name):
            shutil.rmtree(path, ignore_errors=True)


class _Shard(NamedTuple):
    """A shard open in this process: its index, and the mask of its deleted documents
    (None: none)."""

    index: InvertedIndex
    deleted: np.ndarray | None


# The shards this process has open, by directory: (the stat of their files, the shard).
_OPEN: dict[str, tuple[tuple, _Shard]] = {}
_OPEN_LOCK = threading.Lock()


def _stat(directory: Path) -> tuple:
    """What tells that a shard's files have changed: each one's size, time and inode."""
    out = []
    for name in (MANIFEST, *(f"{a}.npy" for a in (*_SHARD_ARRAYS, _DELETED))):
        try:
            st = (directory / name).stat()
        except FileNotFoundError:
            st = None
        out.append(None if st is None else (st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(out)


def _open_shard(directory: str, *, verify: bool = False, checksum: bool = True) -> _Shard:
    """The shard of ``directory``, memory-mapped, its files checked against its manifest
    (sizes, and SHA-256 unless ``checksum`` is false) when this process first opens it,
    when any of them has changed since (so that a file cut short is never read through a
    map), or with ``verify``."""
    directory = Path(directory)
    path = directory / MANIFEST
    with _OPEN_LOCK:
        key = _stat(directory)
        held = _OPEN.get(str(directory))
        if held is not None and held[0] == key and not verify:
            return held[1]
        _OPEN.pop(str(directory), None)
        manifest = _read_json(path, "shard of an index")
        files = set(manifest.get("files", ()))
        query = {f"{name}.npy" for name in _SHARD_ARRAYS}
        changeable = query | {f"{name}.npy" for name in _CHANGE_ARRAYS}
        if manifest.get("format") != FORMAT or files not in (
            query,
            changeable,
            changeable | {f"{_DELETED}.npy"},
        ):
            raise ShardFileError(f"{path}: not the manifest of a shard of an index")
        try:
            a = _read_arrays(directory, manifest["files"], checksum=checksum or verify)
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
        deleted = None
        if _DELETED in a:
            ids = np.asarray(a[_DELETED])
            if ids.ndim != 1 or (len(ids) and (ids.min() < 0 or ids.max() >= index.n_docs)):
                raise ShardFileError(f"{path}: its deleted documents are not its own (damaged)")
            deleted = np.zeros(index.n_docs, dtype=bool)
            deleted[ids] = True
        shard = _Shard(index, deleted)
        _OPEN[str(directory)] = (key, shard)
        return shard


def _forget_shards(dirs) -> None:
    """Unmap the shards of ``dirs`` in this process (an index closed)."""
    with _OPEN_LOCK:
        for d in dirs:
            _OPEN.pop(str(d), None)


def _warm_shard(directory: str, verify: bool = True) -> int:
    return _open_shard(directory, verify=verify, checksum=verify).index.n_docs


def _search_shard(directory: str, queries: sp.csr_matrix, k: int, allowed=None, n_jobs=None):
    """A shard's exact top k of the queries among its documents not deleted (its own ids)
    and their scores, ranked on ``n_jobs`` threads; under a filter (``allowed``,
    :class:`~irdialog.retrieval._kernels.Allowed` in the shard's ids), -1 with score -inf
    past the end of a query's allowed documents left."""
    index, deleted = _open_shard(directory)
    if index.n_docs == 0:
        return np.empty((queries.shape[0], 0), np.int64), np.empty((queries.shape[0], 0))
    queries = index._queries(queries)
    top = index._top_k(queries, k, n_jobs=n_jobs, allowed=allowed, deleted=deleted)
    if allowed is None:
        return top, index.scores_at(queries, top)
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


def _check_growth(growth) -> float:
    """``max_shard_growth``, checked: a real number, 0 or more (infinity allowed)."""
    if not isinstance(growth, Real) or isinstance(growth, bool) or np.isnan(growth) or growth < 0:
        raise ValueError(
            f"max_shard_growth must be a real number >= 0 (inf: always append, 0: never), "
            f"got {growth!r}."
        )
    return float(growth)


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
    max_shard_growth : float, default=1.1
        The merge policy of :meth:`add`. Additions make a shard of their own, as Lucene
        writes a new segment: new documents are appended to the last shard when additions
        made it and it then holds at most ``max_shard_growth`` times the mean size of the
        index's shards (deleted documents included), and past it they make a new shard. An
        addition thus never rewrites a shard that :meth:`build` or :meth:`compact` wrote
        (the cost of appending is that of rewriting the shard appended to), and the
        additions' shards fill up to about the mean before the next starts. 0: every add
        makes a new shard; ``inf``: always the additions' last shard. :meth:`compact`
        evens the shards out again.

    The index changes in place: :meth:`add` puts new documents in a new shard or at the
    end of the shard of the additions before (``max_shard_growth``), :meth:`delete` marks
    documents deleted (each shard keeps the list of its own, and its search skips them;
    their postings stay until :meth:`compact`), and after each the collection's statistics
    are those of the documents left: the document count, the mean length, and every
    document frequency (so the idf of every word is recomputed over them), every shard
    scored again with them.
    The top k (ids and scores, to float32 rounding) is then that of an index built from the
    documents left, ids mapped; ids are stable until :meth:`compact` renumbers them.

    Attributes
    ----------
    directory_ : pathlib.Path
    n_documents_ : int
        The documents searched (not deleted).
    offsets_ : int64 ndarray of shape (n_shards + 1,)
        Shard ``s`` holds the documents ``offsets_[s]`` to ``offsets_[s + 1] - 1``
        (deleted ones included).
    deleted_ : int64 ndarray
        The ids of the deleted documents, increasing.
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
    Lucene's segments, deletes and merges (``IndexWriter``): an index changed by new
    segments and tombstones.

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

    Changed, it ranks as a rebuild of the documents left:

    >>> with ShardedIndex().build(docs) as index:
    ...     index.add(["a mat for the cat"]).tolist()
    ...     index.delete([0])
    ...     ids, scores = index.top_k(["cat on a mat"], k=2)
    [4]
    >>> ids
    array([[4, 2]])
    >>> left = [docs[1], docs[2], docs[3], "a mat for the cat"]
    >>> with ShardedIndex().build(left) as rebuilt:
    ...     rebuilt.top_k(["cat on a mat"], k=2)[0]
    array([[3, 1]])
    """

    def __init__(self, ranker=None, *, shards=1, client=None, directory=None, verbose=False,
                 max_shard_growth=1.1):  # fmt: skip
        self.ranker = ranker
        self.shards = shards
        self.client = client
        self.directory = directory
        self.verbose = verbose
        self.max_shard_growth = max_shard_growth
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
        n_shards = check_positive_int(self.shards, "shards")
        _check_growth(self.max_shard_growth)
        params = self._params()
        self.close()
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
            spec = self._spec(doc, directory)
            self._run(_index_shard, [(d, spec) for d in dirs], "indexing shards")
            offsets = np.cumsum([0] + [c["n_docs"] for c in counted])
            doc["n_shards"] = n_shards
            doc["shards"] = [
                {"path": Path(d).name, "offset": int(off), "n_docs": c["n_docs"]}
                for d, off, c in zip(dirs, offsets, counted)
            ]
            _write_json(directory / INDEX_FILE, doc)
            _remove_stale(directory, doc)
            return self._attach(directory, doc, ranker, verify=False)  # hashed as written
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
        if isinstance(bag, list):  # byte ranges of files
            args = [(part, params, dirs[s], s) for s, part in enumerate(bag)]
            return self._run(_count_shard, args, "counting shards", dirs=dirs)
        if bag is None:
            texts = list(corpus)
            bounds = [len(texts) * s // n for s in range(n + 1)]
            # Each part sent once, as a task of its own (see irdialog._held), not in each retry.
            parts = [held(self._client, texts[bounds[s] : bounds[s + 1]]) for s in range(n)]
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
    def open(cls, directory, *, client=None, verify=True, verbose=False,
             max_shard_growth=1.1) -> ShardedIndex:  # fmt: skip
        """Open an index written by :meth:`build`; every shard is checked (each file's
        size, and with ``verify`` its SHA-256, against its manifest) and mapped by the
        worker that will search it.

        Parameters
        ----------
        directory : path
        client : distributed.Client, str or None, default=None
            As for the constructor: None runs one shard here, several on a
            ``LocalCluster`` that the index starts.
        verify : bool, default=True
            Hash every file (SHA-256, about a second per 1.5 GB here) to find a file
            damaged in place; without it, only what a file's size and the arrays' shapes
            reveal (a file cut short or grown) is refused.
        verbose : bool, default=False
        max_shard_growth : float, default=1.1
            The merge policy of :meth:`add`, as for the constructor.

        Returns
        -------
        index : ShardedIndex

        Raises
        ------
        ShardFileError
            A file of the index missing, truncated or damaged (its path in the message).
        """
        _check_growth(max_shard_growth)
        directory = Path(directory)
        doc = _read_json(directory / INDEX_FILE, "sharded index")
        if doc.get("format") != FORMAT or doc.get("version") not in _READABLE_VERSIONS:
            raise ShardFileError(f"{directory / INDEX_FILE}: not an index of this irdialog")
        if "shards" not in doc:
            raise ShardFileError(f"{directory / INDEX_FILE}: the build did not finish")
        try:
            arrays = _read_arrays(directory, doc["files"], checksum=verify)
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
        shards = doc.get("n_shards", len(doc["shards"]))
        index = cls(ranker, shards=shards, client=client, directory=directory, verbose=verbose,
                    max_shard_growth=max_shard_growth)  # fmt: skip
        index._connect(shards, None)
        try:
            return index._attach(
                directory, doc, ranker, deleted=arrays.get("deleted"), verify=verify
            )
        except BaseException:
            index.close()
            raise

    def _attach(self, directory: Path, doc: dict, ranker: BM25Ranker, *, deleted=None,
                verify=True, warm=True) -> ShardedIndex:  # fmt: skip
        """The index of ``doc`` as this object's state, its shards opened by the workers
        with ``warm`` (their files hashed with ``verify``, else their sizes checked)."""
        self.directory_ = directory
        self.ranker_ = ranker
        ranker._absent = ranker._absent_score()
        self.n_documents_ = int(doc["n_documents"])
        self._dirs = [str(directory / s["path"]) for s in doc["shards"]]
        sizes = [int(s["n_docs"]) for s in doc["shards"]]
        offsets = [s["offset"] for s in doc["shards"]]
        self.offsets_ = np.array([*offsets, offsets[-1] + sizes[-1]], dtype=np.int64)
        self.deleted_ = np.zeros(0, np.int64) if deleted is None else np.array(deleted, np.int64)
        # What each shard's search returns at most: its documents not deleted.
        self._shard_live = [n - len(self._dead(s)) for s, n in enumerate(sizes)]
        self._doc = doc
        if warm:
            self._run(_warm_shard, [(d, verify) for d in self._dirs], "opening shards")
        return self

    # -- change -----------------------------------------------------------------------------

    @staticmethod
    def _spec(doc: dict, directory: Path) -> dict:
        """What a worker needs to score a shard with the statistics of ``doc``."""
        return {"ranker": doc["ranker"], "df": str(directory / _file(doc, "df")),
                "n_documents": doc["n_documents"], "total_length": doc["total_length"]}  # fmt: skip

    def _check_changeable(self) -> None:
        self._check_open()
        if self._doc.get("version", 1) < 2:
            raise ValueError(
                f"{self.directory_}: an index of an earlier format keeps no term counts; "
                "rebuild it to add or delete documents."
            )

    def add(self, documents) -> np.ndarray:
        """Add documents, as a new shard or to the shard of the additions before; returns
        their ids.

        The new documents are counted (on a worker), their terms join the vocabulary and
        their counts the collection's statistics. When additions made the last shard and
        it stays under the bound of ``max_shard_growth`` with them, they are appended to
        it, indexed again from the term counts it keeps and theirs; otherwise they are
        indexed as a new shard. Every other shard is scored again with the new statistics,
        from its term counts (no text is read again), each on its worker. The change is
        committed by one atomic rename of the index file: an index interrupted midway opens
        as before it.

        Only ever the last shard: the new ids follow every id given so far, so appended
        there they keep each shard one contiguous range of ids (an offset and a size in
        the index file, its format unchanged, and the ids of its postings those of a shard
        built from its documents). A shard of the build is never appended to, since that
        would rewrite all its postings; the bound keeps the additions' shard from growing
        far past the mean, and :meth:`compact` evens the shards out.

        Parameters
        ----------
        documents : iterable of str, list of paths, or dask.bag.Bag
            As the corpus of :meth:`build`.

        Returns
        -------
        ids : int64 ndarray
            The new documents' ids: they follow every id given so far.
        """
        self._check_changeable()
        growth = _check_growth(self.max_shard_growth)
        directory, doc = self.directory_, self._doc
        generation = doc.get("generation", 0) + 1
        # The new documents' counts: the new shard's directory, or read by the append.
        target = directory / f"shard-{len(self._dirs):05d}-g{generation:05d}"
        first = int(self.offsets_[-1])
        try:
            [counted] = self._count(documents, doc["ranker"], [str(target)])
            if counted["n_docs"] == 0:
                shutil.rmtree(target, ignore_errors=True)
                return np.zeros(0, np.int64)
            vocabulary = self.ranker_.vocabulary_
            new_terms = [t for t in counted["terms"] if t not in vocabulary]
            added = {t: len(vocabulary) + j for j, t in enumerate(new_terms)}
            remap = np.fromiter((vocabulary.get(t, added.get(t)) for t in counted["terms"]),
                                dtype=np.int64, count=len(counted["terms"]))  # fmt: skip
            np.save(target / "remap.npy", remap, allow_pickle=False)
            df = np.zeros(len(vocabulary) + len(new_terms), np.int64)
            df[: len(vocabulary)] = np.load(directory / _file(doc, "df"), allow_pickle=False)
            df[remap] += counted["df"]
            stats = directory / f"g{generation:05d}"
            stats.mkdir(exist_ok=True)
            files = {name: e for name, e in doc["files"].items() if Path(name).stem != "df"}
            files[f"{stats.name}/df.npy"] = _write_array(stats, "df", df)
            if new_terms:
                files = _append_terms(directory, files, stats, new_terms)
            new = {
                **doc,
                "version": FORMAT_VERSION,
                "generation": generation,
                "n_documents": doc["n_documents"] + counted["n_docs"],
                "total_length": doc["total_length"] + counted["total_length"],
                "n_terms": len(df),
                "files": files,
            }
            append = self._appends(counted["n_docs"], growth)
            self._rescore(new, generation, None, index=target, append=append)
            if append:
                shutil.rmtree(target)
        except BaseException:
            self._discard(generation)
            raise
        if append:
            new["shards"][-1]["n_docs"] += counted["n_docs"]
        else:
            new["shards"].append(
                {"path": target.name, "offset": first, "n_docs": counted["n_docs"], "added": True}
            )
        for t in new_terms:
            vocabulary[t] = len(vocabulary)
        self._commit(new, df, self.deleted_)
        return np.arange(first, first + counted["n_docs"], dtype=np.int64)

    def _appends(self, n_new: int, growth: float) -> bool:
        """Whether ``n_new`` documents added go to the last shard: whether additions made
        it, and it then holds at most ``growth`` times the mean size of the index's shards
        (deleted documents included: their postings are walked until a compaction)."""
        if not self._doc["shards"][-1].get("added", False):
            return False
        n_shards = len(self._dirs)
        last = int(self.offsets_[-1] - self.offsets_[-2])
        return last + n_new <= growth * (int(self.offsets_[-1]) + n_new) / n_shards

    def delete(self, ids) -> None:
        """Delete documents by id.

        Their postings stay in their shards until :meth:`compact`, scoring 0, and each
        shard keeps the list of its deleted documents, which its search skips; the
        statistics (document count, document frequencies, mean length) become those of the
        documents left, so that every score is that of an index rebuilt from them. Every
        shard is scored again with them.

        Parameters
        ----------
        ids : sequence of int
            Ids as :meth:`top_k` returns them, of documents not deleted yet.
        """
        self._check_changeable()
        ids = np.asarray(ids)
        if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise TypeError(f"ids must be a 1-D sequence of integers, got {ids!r:.80}.")
        ids = np.unique(ids.astype(np.int64))
        n_ids = int(self.offsets_[-1])
        if ids.size and (ids[0] < 0 or ids[-1] >= n_ids):
            bad = ids[(ids < 0) | (ids >= n_ids)]
            raise ValueError(f"ids must be in [0, {n_ids}), got {bad[:5].tolist()}.")
        again = np.intersect1d(ids, self.deleted_)
        if again.size:
            raise ValueError(f"Documents already deleted: {again[:5].tolist()}.")
        if not ids.size:
            return
        deleted = np.union1d(self.deleted_, ids)
        if len(deleted) == n_ids:
            raise ValueError("Deleting every document leaves no index; build a new one.")
        directory, doc = self.directory_, self._doc
        generation = doc.get("generation", 0) + 1
        shard = np.searchsorted(self.offsets_, ids, side="right") - 1
        touched = np.unique(shard)
        try:
            counts = self._run(
                _deleted_counts,
                [(self._dirs[s], ids[shard == s] - self.offsets_[s]) for s in touched],
                None,
                retries=1,
            )
            df = np.array(np.load(directory / _file(doc, "df"), allow_pickle=False))
            for terms, n, _ in counts:
                df[terms] -= n
            stats = directory / f"g{generation:05d}"
            stats.mkdir(exist_ok=True)
            files = {name: e for name, e in doc["files"].items()
                     if Path(name).stem not in ("df", "deleted")}  # fmt: skip
            files[f"{stats.name}/df.npy"] = _write_array(stats, "df", df)
            files[f"{stats.name}/deleted.npy"] = _write_array(stats, "deleted", deleted)
            new = {
                **doc,
                "version": FORMAT_VERSION,
                "generation": generation,
                "n_documents": doc["n_documents"] - len(ids),
                "total_length": doc["total_length"] - sum(c[2] for c in counts),
                "files": files,
            }
            self._rescore(new, generation, deleted)
        except BaseException:
            self._discard(generation)
            raise
        self._commit(new, df, deleted)

    def compact(self) -> np.ndarray:
        """Rewrite the index as ``shards`` shards of the documents not deleted, as a
        build of them would (the vocabulary kept); ids are renumbered from 0.

        Returns
        -------
        kept : int64 ndarray
            The ids before, of the documents now numbered 0, 1, ...
        """
        self._check_changeable()
        directory, doc = self.directory_, self._doc
        generation = doc.get("generation", 0) + 1
        n_ids = int(self.offsets_[-1])
        live = np.ones(n_ids, dtype=bool)
        live[self.deleted_] = False
        kept = np.flatnonzero(live)
        n_shards = max(1, int(self.shards))
        bounds = [len(kept) * t // n_shards for t in range(n_shards + 1)]
        tasks, targets = [], []
        for t in range(n_shards):
            target = str(directory / f"shard-{t:05d}-g{generation:05d}")
            parts = []
            if bounds[t] < bounds[t + 1]:
                lo, hi = int(kept[bounds[t]]), int(kept[bounds[t + 1] - 1]) + 1
                for s, d in enumerate(self._dirs):
                    a, b = max(lo, self.offsets_[s]), min(hi, self.offsets_[s + 1])
                    if a < b:
                        dead = self.deleted_[(self.deleted_ >= a) & (self.deleted_ < b)]
                        off = self.offsets_[s]
                        parts.append((d, int(a - off), int(b - off), dead - off))
            targets.append(target)
            tasks.append(("compact", target, parts, self._spec(doc, directory)))
        try:
            self._run(_change_shard, tasks, "compacting shards", dirs=targets, retries=1,
                      key="irdialog-change")  # fmt: skip
        except BaseException:
            self._discard(generation)
            raise
        new = {
            **doc,
            "version": FORMAT_VERSION,
            "generation": generation,
            "files": {n: e for n, e in doc["files"].items() if Path(n).stem != "deleted"},
            "shards": [
                {
                    "path": Path(target).name,
                    "offset": bounds[t],
                    "n_docs": bounds[t + 1] - bounds[t],
                }
                for t, target in enumerate(targets)
            ],
        }
        df = np.load(directory / _file(doc, "df"), allow_pickle=False)
        self._commit(new, df, None)
        return kept

    def _rescore(self, new: dict, generation: int, deleted, index=None, append=False) -> None:
        """Score every shard again under the statistics of the index file ``new``, each into
        its shard of ``generation`` with the deleted documents ``deleted`` (None:
        ``deleted_``), and index the counted documents of the shard directory ``index``:
        beside them, or with ``append`` after the last shard's own; ``new["shards"]`` then
        names the shards scored again."""
        directory, spec = self.directory_, self._spec(new, self.directory_)
        targets = [str(directory / f"shard-{s:05d}-g{generation:05d}")
                   for s in range(len(self._dirs))]  # fmt: skip
        tasks = [("rescore", d, t, spec, self._dead(s, deleted))
                 for s, (d, t) in enumerate(zip(self._dirs, targets))]  # fmt: skip
        dirs = list(targets)
        if index is not None and append:
            tasks[-1] = ("append", *tasks[-1][1:], str(index))
        elif index is not None:
            tasks.append(("index", str(index), spec))
            dirs.append(str(index))
        self._run(_change_shard, tasks, "scoring shards", dirs=dirs, retries=1,
                  key="irdialog-change")  # fmt: skip
        new["shards"] = [{**entry, "path": Path(t).name}
                         for entry, t in zip(self._doc["shards"], targets)]  # fmt: skip

    def _dead(self, s: int, deleted=None) -> np.ndarray:
        """The deleted documents (default: ``deleted_``) of shard ``s``, by their ids in it."""
        lo, hi = self.offsets_[s], self.offsets_[s + 1]
        d = self.deleted_ if deleted is None else deleted
        return d[(d >= lo) & (d < hi)] - lo

    def _commit(self, new: dict, df: np.ndarray, deleted) -> None:
        """Make ``new`` the index: its file replaces the old one in one rename; then the
        shards and files that it no longer names are removed."""
        directory, old, old_dirs = self.directory_, self._doc, self._dirs
        _write_json(directory / INDEX_FILE, new)
        ranker = self.ranker_
        ranker._set_statistics(np.asarray(df), new["n_documents"], new["total_length"])
        if self._client is None:
            _forget_shards(old_dirs)
        else:
            with contextlib.suppress(OSError, TimeoutError):
                self._client.run(_forget_shards, old_dirs)
        self._attach(directory, new, ranker, deleted=deleted, warm=False)  # opened as written
        _remove_unnamed(directory, old, new)

    def _discard(self, generation: int) -> None:
        """Remove what a change that failed had written (the index file still names the
        generation before)."""
        for path in self.directory_.glob(f"*g{generation:05d}"):
            shutil.rmtree(path, ignore_errors=True)

    # -- search -----------------------------------------------------------------------------

    def top_k(
        self, queries, k: int = 10, *, allowed=None, n_jobs=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k best documents of each query and their BM25 scores, best first.

        Parameters
        ----------
        queries : sequence of Context or str
        k : int, default=10
        allowed : array-like or sequence of array-like, default=None
            A filter: the documents (global ids) each query may return, as a boolean
            mask over ``offsets_[-1]`` ids (deleted ones included) or an array of ids,
            for every query or one per query
            (:meth:`~irdialog.retrieval.InvertedIndex.top_k`). Each shard searches its
            part of it, skipping its deleted documents; the result is the exact top k of
            the allowed documents not deleted, and a query allowed fewer than k gets them
            all, ranked.
        n_jobs : int, default=None
            Threads each shard's search runs on: in this process for an index without a
            client, on its worker otherwise (a worker with fewer threads than that still
            runs them). None means 1, -1 every core. The result does not depend on it.

        Returns
        -------
        ids : int64 ndarray of shape (n_queries, min(k, ``n_documents_``))
            Global ids (positions in the collection); ties to the lower id. With
            ``allowed``, of shape (n_queries, min(k, m)), ``m`` the most documents not
            deleted that a query is allowed, and -1 past the end of a smaller filter.
        scores : float64 ndarray of the same shape
            Each document's score, as :meth:`BM25Ranker.decision_function` gives it
            (-inf where the id is -1).

        Raises
        ------
        ShardError
            When a shard could not be searched, after one retry: never a shorter list.
        """
        self._check_open()
        check_positive_int(k, "k")
        n_threads(n_jobs)  # a bad n_jobs named here, before any shard is asked
        if len(self.deleted_) and self._doc.get("version", 1) < 3:
            raise ValueError(
                f"{self.directory_}: an index of an earlier format whose shards keep no list "
                "of their deleted documents; compact it (ShardedIndex.compact, or `irdialog "
                "index compact DIR`) to search it."
            )
        k = min(int(k), self.n_documents_)
        _, counts = self.ranker_._queries(queries)
        absent = counts @ self.ranker_._absent
        Q = sp.csr_matrix(counts, dtype=np.float64)
        Q.sum_duplicates()
        allowed = check_allowed(allowed, Q.shape[0], int(self.offsets_[-1]))
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
            parts = self._scatter(block, k, filters, n_jobs)
            top, s = merge_top_k(parts, self.offsets_[:-1], k)
            ids.append(top)
            scores.append(s)
        ids, scores = np.vstack(ids), np.vstack(scores) + absent[:, None]
        if allowed is not None:  # as wide as the most allowed documents not deleted
            width = int((ids >= 0).sum(axis=1).max(initial=0))
            ids, scores = ids[:, :width], scores[:, :width]
        return ids, scores

    def _scatter(self, block, k, filters, n_jobs):
        args = [(d, block, k, f, n_jobs) for d, f in zip(self._dirs, filters)]
        if self._client is None:
            parts = [_search_shard(*a) for a in args]
        else:
            if block.data.nbytes + block.indices.nbytes > _INLINE_BYTES:
                data = held(self._client, block)
                args = [(a[0], data, *a[2:]) for a in args]
            parts = self._run(_search_shard, args, None, retries=1,
                              key="irdialog-search")  # fmt: skip
        for s, (top, _) in enumerate(parts):
            width = self._shard_live[s]
            if filters[s] is not None:
                width = min(width, int(np.diff(filters[s].indptr).max(initial=0)))
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
    """The lines of text files (UTF-8, a byte-order mark dropped): only ``\\n`` ends a
    line."""
    for path in paths:
        with open(path, encoding="utf-8-sig", newline="\n") as f:
            yield from map(_strip_newline, f)


def _splits(paths, n: int) -> list[list[tuple[str, int, int]]]:
    """The files cut into ``n`` parts of about equal bytes, in order: each a list of byte
    ranges (path, start, stop). A line belongs to the range its first byte is in."""
    sizes = [os.path.getsize(p) for p in paths]
    total = sum(sizes)
    cuts = [total * s // n for s in range(n + 1)]
    parts = []
    for s in range(n):
        ranges = []
        for path, size, offset in zip(paths, sizes, itertools.accumulate([0, *sizes])):
            lo, hi = max(cuts[s], offset), min(cuts[s + 1], offset + size)
            if lo < hi:
                ranges.append((path, lo - offset, hi - offset))
        parts.append(ranges)
    return parts


class _FileRanges:
    """The lines of byte ranges of text files (:func:`_splits`), read where they are
    iterated, a line at a time: a worker given one reads its part of the corpus from the
    file system and never holds it."""

    def __init__(self, ranges):
        self.ranges = ranges

    def __iter__(self):
        for path, start, stop in self.ranges:
            with open(path, "rb") as f:
                if start:  # to the start of the first line that begins in the range
                    f.seek(start - 1)
                    start += len(f.readline()) - 1
                at = start
                while at < stop and (line := f.readline()):
                    try:
                        text = line.decode("utf-8-sig" if at == 0 else "utf-8")
                    except UnicodeDecodeError as err:
                        raise ValueError(f"{path}: byte {at + err.start}: not UTF-8") from None
                    at += len(line)
                    yield _strip_newline(text)


def _as_bag(corpus, n_shards: int, *, in_process: bool):
    """The corpus as a bag of ``n_shards`` partitions (files: a list of ``n_shards``
    :class:`_FileRanges`), or an iterable of texts here; None for a corpus of texts (split
    by the caller)."""
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
    if files is not None:
        # Byte ranges of about a shard each: each worker reads its own part of the files a
        # line at a time, rather than one reading them all and sending half away.
        return [_FileRanges(ranges) for ranges in _splits(files, n_shards)]
    if not is_bag:
        return None
    if corpus.npartitions != n_shards:
        corpus = corpus.repartition(npartitions=n_shards)
    return corpus
