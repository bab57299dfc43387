"""Save and load fitted models without pickle: one ``.npz`` file of arrays and JSON.

``joblib.dump``/``joblib.load`` work on every irdialog model, but loading a pickle runs
whatever code the file names: never load one from someone you do not trust. :func:`save`
writes a model as plain data instead, and :func:`load` rebuilds it without ever calling
pickle:

- numpy arrays go into the ``.npz`` archive (read back with ``allow_pickle=False``); arrays
  of Python objects (the candidate strings) and numpy scalars are stored as JSON values;
- scipy.sparse matrices by their component arrays (``data``, ``indices``, ``indptr``);
- ``None``, bool, int, float, str, list, tuple, dict (any hashable keys), set, frozenset and
  ``collections.Counter`` as JSON;
- dataclasses (:class:`irdialog.base.Context`, ``Turn``), named tuples and other objects
  (estimators, vocabularies, nested estimators) by their class path and attributes, but
  those the class names in ``_transient_attributes`` (state it derives again when needed);
- functions and classes by their qualified name (a class that has since moved is found
  at its new place, :data:`MOVED`).

On load, every class and function is looked up by its module and name, and refused unless
it is defined in irdialog, scikit-learn, numpy or scipy.sparse (:data:`ALLOWED_MODULES`);
objects are rebuilt with ``cls.__new__`` and their attributes, so no ``__init__``,
``__setstate__`` or ``__reduce__`` of the file's choice runs. A file that is not such a
model, or has been altered into something else, raises :class:`ModelFileError`.

Memory-mapped loading: a large model (a search index of millions of documents) opens in
the time it takes to read its JSON part (vocabulary, candidate strings), whatever the size
of its arrays, and the processes that open it share one copy of them in memory, when its
arrays are mapped from the file instead of read: save it with ``compress=False`` (the
arrays are stored, not deflated, so the file is larger) and load it with
``mmap_mode="r"``. Each array is then a read-only :class:`numpy.memmap` on the file, whose
pages the operating system reads when they are first used and keeps in its page cache for
every process. :func:`save` writes the new file beside the old one and renames it into
place, so re-saving a model never pulls a file out from under the processes that map it.

Examples
--------
>>> import pathlib, tempfile
>>> import numpy as np
>>> from irdialog import TfidfRanker
>>> from irdialog.persist import load, save
>>> model = TfidfRanker().fit(["hi", "book a table"], ["hello there", "a table for how many?"])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tfidf.npz"
>>> save(model, path)
>>> load(path).predict(["a table please"])[0]
'a table for how many?'

Memory-mapped, from a file saved uncompressed:

>>> save(model, path, compress=False)
>>> load(path, mmap_mode="r").predict(["a table please"])[0]
'a table for how many?'
>>> save({"weights": np.arange(6.0).reshape(2, 3)}, path, compress=False)
>>> weights = load(path, mmap_mode="r")["weights"]
>>> type(weights).__name__, weights.flags.writeable, float(weights.sum())
('memmap', False, 15.0)
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import importlib
import json
import math
import os
import secrets
import struct
import time
import types
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import __version__

__all__ = ["ALLOWED_MODULES", "ModelFileError", "load", "save"]

FORMAT = "irdialog-model"
FORMAT_VERSION = 2  # 2: texts as one UTF-8 buffer, vocabularies as arrays (1 still loads)
_READABLE_VERSIONS = (1, 2)
# Dicts of str -> int with at least this many entries are stored as two arrays (format 2).
_TABLE_MIN = 64
_HEADER = "__irdialog__"  # the JSON document, stored as a uint8 array of its UTF-8 bytes

# The modules whose classes and functions a model file may name (a module or its submodules).
ALLOWED_MODULES = ("irdialog", "sklearn", "numpy", "scipy.sparse")

_SPARSE_FORMATS = {"csr", "csc", "coo", "bsr"}

# Classes that have moved since files were saved: the path an older file names -> the path of
# the class now, so that those files still load.
MOVED = {
    "irdialog.features:EntityParser": "irdialog.entities._parser:EntityParser",
    "irdialog.embed._entity_symbol:EntitySymbolRanker": (
        "irdialog.entities._symbol_ranker:EntitySymbolRanker"
    ),
    "irdialog.embed._svd:SVDRecommender": "irdialog.entities._svd:SVDRecommender",
}


class ModelFileError(ValueError):
    """A file that :func:`load` cannot or will not read as an irdialog model."""


def _allowed(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in ALLOWED_MODULES)


def _path_of(obj) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


# --------------------------------------------------------------------------- saving


class _Writer:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self.memo: dict[int, int] = {}  # id(obj) -> reference number, for shared objects
        self.keep: list = []  # keeps memoised objects alive (ids stay unique)
        self.texts: dict[tuple[bytes, bytes], dict] = {}  # text buffers already stored

    def array(self, a: np.ndarray) -> dict:
        if a.dtype.hasobject and a.size and all(type(v) is str for v in a.flat):
            # Texts (a million candidates): one UTF-8 buffer and the end of each text in
            # characters, which load in a fraction of the time of as many JSON strings.
            flat = a.ravel().tolist()
            ends = np.cumsum(np.fromiter(map(len, flat), dtype=np.int64, count=len(flat)))
            joined = "\x00".join(flat)
            # Texts free of NUL are split on it at load (a C loop); others are sliced.
            sep = joined.count("\x00") == len(flat) - 1
            data = (joined if sep else "".join(flat)).encode("utf-8", "surrogatepass")
            # The same texts twice (a ranker's ``candidates`` and ``candidates_``) are stored
            # once, and decoded once at load.
            key = (data, ends.tobytes())
            if key not in self.texts:
                self.texts[key] = {
                    "__strarray__": self.array(np.frombuffer(data, dtype=np.uint8)),
                    "ends": self.array(ends),
                    "nul_separated": sep,
                }
            return {**self.texts[key], "shape": list(a.shape)}
        if a.dtype.hasobject:
            return {
                "__objarray__": [self.encode(v) for v in a.ravel().tolist()],
                "shape": list(a.shape),
            }
        key = f"a{len(self.arrays)}"
        self.arrays[key] = a
        return {"__array__": key}

    def encode(self, obj, where: str = "model"):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and type(obj) is int:
            return obj
        if type(obj) is float:
            return obj if np.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, np.generic):
            return {"__scalar__": obj.dtype.str, "value": self.encode(obj.item(), where)}
        if isinstance(obj, np.dtype):
            return {"__dtype__": obj.str}
        if isinstance(obj, type):
            if not _allowed(obj.__module__) and obj.__module__ != "builtins":
                raise TypeError(f"cannot save {where}: the class {_path_of(obj)} is not allowed")
            return {"__class__": _path_of(obj)}
        if _is_function(obj):
            if not (obj.__module__ or "").startswith("irdialog") or "<" in obj.__qualname__:
                raise TypeError(
                    f"cannot save {where}: the function {_path_of(obj)} is not an irdialog function"
                )
            return {"__function__": _path_of(obj)}
        if isinstance(obj, np.ndarray):
            return self.array(obj)
        ref = self.memo.get(id(obj))
        if ref is not None:
            return {"__ref__": ref}
        number = len(self.memo)
        self.memo[id(obj)] = number
        self.keep.append(obj)
        body = self._compound(obj, where)
        return {"__id__": number, **body}

    def _compound(self, obj, where: str) -> dict:
        if sp.issparse(obj):
            fmt = obj.format
            if fmt not in _SPARSE_FORMATS:
                obj, fmt = obj.tocsr(), "csr"
            parts = ("row", "col", "data") if fmt == "coo" else ("data", "indices", "indptr")
            return {
                "__sparse__": _path_of(type(obj)),
                "shape": list(obj.shape),
                **{p: self.array(np.asarray(getattr(obj, p))) for p in parts},
            }
        if type(obj) is collections.Counter:
            return {"__counter__": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if type(obj) is list and len(obj) >= _TABLE_MIN and all(type(v) is str for v in obj):
            texts = np.empty(len(obj), dtype=object)
            texts[:] = obj
            return {"__strlist__": self.array(texts)}  # documents: one buffer, not JSON
        if type(obj) in (list, tuple, set, frozenset):
            items = [self.encode(v, where) for v in obj]
            return {f"__{type(obj).__name__}__": items}
        if type(obj) is dict:
            if len(obj) >= _TABLE_MIN and all(
                type(k) is str and type(v) is int for k, v in obj.items()
            ):
                # A vocabulary (word -> index): its words as one text array, its indices as
                # an int64 array, which load many times faster than a JSON object.
                keys = np.empty(len(obj), dtype=object)
                keys[:] = list(obj)
                values = np.fromiter(obj.values(), dtype=np.int64, count=len(obj))
                return {"__strintdict__": self.array(keys), "values": self.array(values)}
            if all(type(k) is str for k in obj):
                return {"__dict__": {k: self.encode(v, f"{where}[{k!r}]") for k, v in obj.items()}}
            return {"__items__": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        cls = type(obj)
        if not _allowed(cls.__module__):
            raise TypeError(
                f"cannot save {where}: it holds a {_path_of(cls)}, which is not an irdialog, "
                "scikit-learn, numpy or scipy.sparse object; use joblib.dump for such models"
            )
        if isinstance(obj, tuple) and hasattr(cls, "_fields"):  # a named tuple
            return {"__object__": _path_of(cls), "tuple": [self.encode(v, where) for v in obj]}
        if dataclasses.is_dataclass(obj):
            state = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        elif hasattr(obj, "__dict__"):
            # Derived state the class rebuilds when it needs it is not stored.
            transient = getattr(cls, "_transient_attributes", ())
            state = {k: v for k, v in vars(obj).items() if k not in transient}
        else:
            raise TypeError(f"cannot save {where}: {_path_of(cls)} has no attributes to store")
        if isinstance(obj, dict):  # a dict subclass such as sklearn.utils.Bunch
            items = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
            return {"__object__": _path_of(cls), "items": items, "state": {}}
        return {
            "__object__": _path_of(cls),
            "state": {k: self.encode(v, f"{where}.{k}") for k, v in state.items()},
        }


def _is_function(obj) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType))


# Where an array's data starts in a file saved with compress=False: a multiple of this many
# bytes (the .npy header is padded to 64 bytes by numpy), so that mapped arrays are aligned.
_ALIGN = 64
# The zip extra field that pads a local file header to that alignment (the one Android's
# zipalign writes: the alignment as uint16, then zero bytes). Readers skip unknown fields.
_PADDING_FIELD = 0xD935


def _padding(header_end: int) -> bytes:
    """An extra field that moves a member's data from ``header_end`` to the next multiple
    of ``_ALIGN``."""
    size = -header_end % _ALIGN
    while size < 6:  # the field's id, length and alignment take 6 bytes
        size += _ALIGN
    return struct.pack("<HHH", _PADDING_FIELD, size - 4, _ALIGN) + bytes(size - 6)


def _write_stored(f, arrays: dict[str, np.ndarray]) -> None:
    """What ``np.savez`` writes (members stored, zip64 headers), with each member's data
    aligned to ``_ALIGN`` bytes in the file."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, a in arrays.items():
            info = zipfile.ZipInfo(key + ".npy", date_time=time.localtime()[:6])
            info.compress_type = zipfile.ZIP_STORED
            # The local header: 30 bytes, the name, then the extra field: ours, and the
            # 20-byte zip64 field that zipfile adds with force_zip64 (as numpy does, so that
            # members may pass 4 GiB).
            info.extra = _padding(f.tell() + 30 + len(info.filename.encode("utf-8")) + 20)
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(a), allow_pickle=False)


def save(model, path, *, compress: bool = True) -> None:
    """Write a fitted (or unfitted) model to ``path`` as arrays and JSON, without pickle.

    The file is written beside ``path`` and renamed into place, so ``path`` is never left
    half written, and processes that have the previous file memory-mapped keep reading it.

    Parameters
    ----------
    model : estimator
        Any irdialog model or pipeline (scikit-learn, numpy and scipy.sparse objects inside
        it are stored too).
    path : str or os.PathLike
        The file to write (conventionally ``*.npz``; numpy adds no suffix here).
    compress : bool, default=True
        Deflate the arrays (``np.savez_compressed``). With False they are stored as they
        are (as ``np.savez`` writes them, each aligned to 64 bytes in the file): the file is
        larger (about twice, for a TF-IDF index), but ``load(path, mmap_mode="r")`` can
        then map its arrays instead of reading them, which is what a large index needs to
        open at once and to be shared by processes. Either kind of file is read by
        :func:`load` and by ``np.load``.

    Raises
    ------
    TypeError
        When the model holds something that cannot be stored as data: an object or
        function from outside irdialog, scikit-learn, numpy and scipy.sparse (a lambda,
        a user's own analyzer function). Nothing is dropped silently, and no file is
        written.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> from irdialog.persist import save
    >>> save(FunctionTransformer(len), pathlib.Path(tempfile.mkdtemp()) / "m.npz")
    Traceback (most recent call last):
    ...
    TypeError: cannot save model.func: the function builtins:len is not an irdialog function
    """
    writer = _Writer()
    doc = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "irdialog": __version__,
        "model": writer.encode(model),
    }
    header = np.frombuffer(json.dumps(doc).encode("utf-8"), dtype=np.uint8)
    arrays = {_HEADER: header, **writer.arrays}
    # A new file renamed over the old one, never the old one rewritten in place: truncating a
    # file that a process has mapped makes its next read of a page of it crash (SIGBUS).
    target = os.path.realpath(path)  # through a symbolic link: replace the file it names
    directory, name = os.path.split(target)
    temporary = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
    try:
        try:
            f = open(temporary, "xb")
        except OSError as err:  # a missing or read-only directory: name the file asked for
            raise type(err)(err.errno, err.strerror, os.fspath(path)) from None
        with f:
            if compress:
                np.savez_compressed(f, **arrays)
            else:
                _write_stored(f, arrays)
        with contextlib.suppress(OSError):  # an existing file's permissions carry over
            os.chmod(temporary, os.stat(target).st_mode & 0o777)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


# --------------------------------------------------------------------------- loading


def _resolve(path: str, *, kind: str):
    """The class or function named ``module:qualname``, if the allowlist permits it."""
    if not isinstance(path, str) or ":" not in path:
        raise ModelFileError(f"malformed {kind} name {path!r}")
    path = MOVED.get(path, path)
    module, _, qualname = path.partition(":")
    if module == "builtins" and kind == "class":
        obj = getattr(__import__("builtins"), qualname, None)
        if obj in (int, float, str, bool, complex, list, tuple, dict, set, frozenset, object):
            return obj
        raise ModelFileError(f"refusing to load the class {path}: not in the allowlist")
    allowed = module.startswith("irdialog") if kind == "function" else _allowed(module)
    # ``__main__`` modules run a program when imported (``irdialog.__main__`` runs the CLI).
    if not allowed or "<" in qualname or "__main__" in module.split("."):
        raise ModelFileError(
            f"refusing to load the {kind} {path}: only irdialog, scikit-learn, numpy and "
            "scipy.sparse names are allowed"
        )
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise ModelFileError(f"the {kind} {path} does not exist in this installation") from err
    # What the name resolves to must itself be defined in an allowed module (``irdialog.persist.os``
    # would otherwise reach any module irdialog imports).
    own = getattr(obj, "__module__", None) or ""
    if kind == "function":
        ok = _is_function(obj) and own.startswith("irdialog")
    else:
        ok = isinstance(obj, type) and _allowed(own)
    if not ok:
        raise ModelFileError(f"refusing to load the {kind} {path}: it is not an allowed {kind}")
    return obj


# mmap_mode values: numpy's names for the read-only and the copy-on-write map.
_MMAP_MODES = {"r": "r", "readonly": "r", "c": "c", "copyonwrite": "c"}
_LOCAL_HEADER = b"PK\x03\x04"  # a zip member's local file header starts so


def _mmap_mode(mmap_mode):
    if mmap_mode is None:
        return None
    if mmap_mode in ("r+", "w+", "readwrite", "write"):
        raise ValueError(
            f"mmap_mode={mmap_mode!r} would write to the model file; use 'r' (read-only) "
            "or 'c' (copy-on-write)"
        )
    if not isinstance(mmap_mode, str) or mmap_mode not in _MMAP_MODES:
        raise ValueError(f"mmap_mode must be None, 'r' or 'c', got {mmap_mode!r}")
    return _MMAP_MODES[mmap_mode]


class _Members:
    """The arrays of an open archive, as ``archive[key]``: read, or with ``mode`` mapped
    from ``file`` (the open model file) where they are stored uncompressed."""

    def __init__(self, archive, file, mode: str | None, name: str):
        self.archive = archive
        self.name = name
        self.files = archive.files
        self.file = file
        self.mode = mode
        self.size = os.fstat(file.fileno()).st_size

    def __getitem__(self, key: str) -> np.ndarray:
        mapped = self._map(key) if self.mode is not None else None
        return self.archive[key] if mapped is None else mapped

    def _map(self, key: str) -> np.memmap | None:
        """The member ``key`` as a map on the file, or None when it is to be read instead:
        compressed, of object dtype, empty, or in a .npy format version numpy has no public
        header reader for (3.0)."""
        try:
            info = self.archive.zip.getinfo(key + ".npy")
        except KeyError:
            return None
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:  # 0x1: encrypted
            return None
        if info.compress_size != info.file_size:
            raise ModelFileError(f"{self.name}: the array {key!r} is damaged (inconsistent sizes)")
        # The member's data follows its local header: 30 bytes, then its name and its extra
        # field, of the lengths this header gives; these may differ from the central
        # directory's copy (numpy's files have a zip64 extra field here only).
        f = self.file
        f.seek(info.header_offset)
        local = f.read(30)
        if len(local) < 30 or local[:4] != _LOCAL_HEADER:
            raise ModelFileError(f"{self.name}: the array {key!r} is damaged (no local header)")
        name_length, extra_length = struct.unpack_from("<HH", local, 26)
        start = info.header_offset + 30 + name_length + extra_length
        end = start + info.compress_size
        if end > self.size:
            raise ModelFileError(
                f"{self.name}: the array {key!r} runs past the end of the file (truncated?)"
            )
        f.seek(start)
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                return None
        except ValueError as err:
            raise ModelFileError(
                f"{self.name}: the array {key!r} has a damaged header ({err})"
            ) from None
        if dtype.hasobject:
            return None  # numpy refuses it (allow_pickle=False) with a clear message
        offset = f.tell()
        if any(n < 0 for n in shape):
            raise ModelFileError(f"{self.name}: the array {key!r} has a negative shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize
        if offset + nbytes > end:
            raise ModelFileError(
                f"{self.name}: the array {key!r} is damaged: its shape {shape} of {dtype} "
                "runs past the end of its data"
            )
        if nbytes == 0:
            return None  # nothing to map (and mmap cannot map 0 bytes)
        order = "F" if fortran_order else "C"
        # The map keeps its own handle on the file: closing ``f`` leaves it valid.
        return np.memmap(f, dtype=dtype, mode=self.mode, offset=offset, shape=shape, order=order)


class _Reader:
    def __init__(self, archive):
        self.archive = archive
        self.memo: dict[int, object] = {}
        self.texts: dict[tuple, list] = {}  # decoded text buffers, by their members

    def array(self, spec) -> np.ndarray:
        if not isinstance(spec, dict):
            raise ModelFileError("malformed array entry")
        if "__objarray__" in spec:
            items = [self.decode(v) for v in spec["__objarray__"]]
            out = np.empty(len(items), dtype=object)
            out[:] = items
            return out.reshape(spec["shape"])
        if "__strarray__" in spec:
            return self._texts(spec)
        key = spec.get("__array__")
        if key not in self.archive.files or key == _HEADER:
            raise ModelFileError(f"the array {key!r} is missing from the file")
        return self.archive[key]

    def _texts(self, spec) -> np.ndarray:
        key = (json.dumps(spec.get("__strarray__")), json.dumps(spec.get("ends")))
        items = self.texts.get(key)
        if items is None:
            items = self.texts[key] = self._decode_texts(spec)
        shape = spec.get("shape")
        if not isinstance(shape, list) or int(np.prod(shape)) != len(items):
            raise ModelFileError("malformed model file: an array of texts does not add up")
        return np.fromiter(items, dtype=object, count=len(items)).reshape(shape)

    def _decode_texts(self, spec) -> list[str]:
        text = bytes(self.array(spec["__strarray__"])).decode("utf-8", "surrogatepass")
        ends = np.asarray(self.array(spec.get("ends")))
        n = len(ends)
        if spec.get("nul_separated"):
            items = text.split("\x00") if n else []
            ok = len(items) == n and (not n or int(ends[-1]) == len(text) - (n - 1))
        else:
            starts = np.concatenate([[0], ends[:-1]]) if n else ends
            ok = ends.dtype.kind in "iu" and (not n or (ends[-1] == len(text) and
                                                       (np.diff(starts) >= 0).all()))  # fmt: skip
            items = [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())] if ok else []
        if not ok or ends.ndim != 1:
            raise ModelFileError("malformed model file: an array of texts does not add up")
        return items

    def decode(self, value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            raise ModelFileError("malformed model file: a bare list")
        if not isinstance(value, dict):
            raise ModelFileError(f"malformed model file: unexpected {type(value).__name__}")
        if "__ref__" in value:
            try:
                return self.memo[value["__ref__"]]
            except (KeyError, TypeError):
                raise ModelFileError("malformed model file: a dangling reference") from None
        if "__float__" in value:
            return float(value["__float__"])  # inf, -inf, nan
        if "__scalar__" in value:
            return np.dtype(value["__scalar__"]).type(self.decode(value["value"]))
        if "__dtype__" in value:
            return np.dtype(value["__dtype__"])
        if "__class__" in value:
            return _resolve(value["__class__"], kind="class")
        if "__array__" in value or "__objarray__" in value or "__strarray__" in value:
            return self.array(value)
        number = value.get("__id__")
        if "__list__" in value:
            out = self._remember(number, [])
            out.extend(self.decode(v) for v in value["__list__"])
            return out
        for key, make in (("__tuple__", tuple), ("__set__", set), ("__frozenset__", frozenset)):
            if key in value:
                return self._remember(number, make(self.decode(v) for v in value[key]))
        if "__strlist__" in value:
            return self._remember(number, self.array(value["__strlist__"]).tolist())
        if "__strintdict__" in value:
            keys = self.array(value["__strintdict__"])
            values = np.asarray(self.array(value["values"]))
            if keys.ndim != 1 or values.shape != keys.shape or values.dtype.kind != "i":
                raise ModelFileError("malformed model file: a vocabulary does not add up")
            return self._remember(number, dict(zip(keys.tolist(), values.tolist())))
        if "__dict__" in value:
            out = self._remember(number, {})
            out.update((k, self.decode(v)) for k, v in value["__dict__"].items())
            return out
        if "__items__" in value or "__counter__" in value:
            out = self._remember(number, {} if "__items__" in value else collections.Counter())
            for k, v in value.get("__items__", value.get("__counter__")):
                out[self.decode(k)] = self.decode(v)
            return out
        if "__sparse__" in value:
            cls = _resolve(value["__sparse__"], kind="class")
            # scipy.sparse.sparray is scipy >= 1.11
            if not issubclass(cls, (sp.spmatrix, getattr(sp, "sparray", sp.spmatrix))):
                raise ModelFileError(f"{value['__sparse__']} is not a sparse matrix class")
            shape = tuple(value["shape"])
            if "row" in value:
                parts = (self.array(value["data"]), (self.array(value["row"]),
                                                     self.array(value["col"])))  # fmt: skip
            else:
                parts = tuple(self.array(value[p]) for p in ("data", "indices", "indptr"))
            # With mapped parts (load's mmap_mode), the matrix's ``data`` is a view on the map
            # (an ndarray whose base is the memmap), never a copy; but scipy picks one index
            # dtype for ``indices`` and ``indptr`` and casts both to it, copying what it casts:
            # a spmatrix (csr_matrix...) takes int64 index arrays down to int32 when their
            # values fit, and a sparray brings int32 with int64 up to int64. The matrices
            # sklearn builds hold int32 index arrays, which stay mapped.
            return self._remember(number, cls(parts, shape=shape))
        if "__function__" in value:
            return _resolve(value["__function__"], kind="function")
        if "__object__" in value:
            return self._object(number, value)
        raise ModelFileError(f"malformed model file: unknown entry {sorted(value)[:3]}")

    def _remember(self, number, obj):
        if number is not None:
            self.memo[number] = obj
        return obj

    def _object(self, number, value):
        cls = _resolve(value["__object__"], kind="class")
        if "tuple" in value:  # a named tuple
            if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise ModelFileError(f"{value['__object__']} is not a named tuple")
            return self._remember(number, cls(*[self.decode(v) for v in value["tuple"]]))
        state = value.get("state")
        if not isinstance(state, dict):
            raise ModelFileError(f"malformed model file: no state for {value['__object__']}")
        if dataclasses.is_dataclass(cls):
            fields = {k: self.decode(v) for k, v in state.items()}
            obj = object.__new__(cls)
            for k, v in fields.items():  # frozen or slotted dataclasses too
                object.__setattr__(obj, k, v)
            return self._remember(number, obj)
        obj = self._remember(number, cls.__new__(cls))
        if isinstance(obj, dict):
            for k, v in value.get("items", []):
                obj[self.decode(k)] = self.decode(v)
        obj.__dict__.update((k, self.decode(v)) for k, v in state.items())
        return obj


def load(path, *, mmap_mode=None):
    """Read a model written by :func:`save`; never runs pickle.

    Parameters
    ----------
    path : str or os.PathLike
    mmap_mode : {None, "r", "c"}, default=None
        With ``"r"``, each array of the model that the file stores uncompressed (a file
        written with ``save(..., compress=False)``) is a read-only :class:`numpy.memmap` on
        the file (or an ndarray whose base is one) instead of a copy in memory: loading reads
        only the file's header, and processes that load the same file share its pages. With
        ``"c"`` (copy-on-write) the arrays can be written to, in memory only. The file is
        never written through the map (so ``"r+"`` and ``"w+"`` are refused). Arrays that are
        compressed (every array of a file saved with the default ``compress=True``), empty,
        or of object dtype are read as without ``mmap_mode``, which then has no effect on
        them; the model's JSON header is always read. A mapped array's CRC-32 is not checked
        (that would read every page of it), and it reads the file as it is at any time: do not
        rewrite a mapped file in place (:func:`save` does not: it replaces the file).

    Returns
    -------
    model : estimator

    Raises
    ------
    ModelFileError
        When the file is not an irdialog model file, is damaged or truncated, has been
        altered, or names a class or function outside :data:`ALLOWED_MODULES`.
    ValueError
        For an ``mmap_mode`` other than None, ``"r"`` and ``"c"``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.persist import load
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "notes.npz"
    >>> _ = path.write_text("not a model")
    >>> load(path)
    Traceback (most recent call last):
    ...
    irdialog.persist.ModelFileError: notes.npz is not an irdialog model file (not an npz archive)
    >>> load(path, mmap_mode="r+")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: mmap_mode='r+' would write to the model file; use 'r' (read-only) or 'c' ...
    """
    mode = _mmap_mode(mmap_mode)
    path = Path(path)
    name = path.name
    with contextlib.ExitStack() as stack:
        # One open file for numpy's reading and for the maps, so that both see the same file
        # even when save() replaces it meanwhile.
        try:
            f = stack.enter_context(open(path, "rb"))
            archive = np.load(f, allow_pickle=False)
        except FileNotFoundError:
            raise
        except zipfile.BadZipFile as err:  # a zip file's start without its end
            raise ModelFileError(f"{name}: damaged or truncated model file ({err})") from None
        except (OSError, EOFError, ValueError):
            archive = None  # numpy refuses what could only be read as a pickle
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ModelFileError(f"{name} is not an irdialog model file (not an npz archive)")
        try:
            with archive:
                if _HEADER not in archive.files:
                    raise ModelFileError(f"{name} is not an irdialog model file (no header)")
                try:
                    doc = json.loads(archive[_HEADER].tobytes().decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as err:
                    raise ModelFileError(f"{name}: the header is not valid JSON ({err})") from None
                if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                    raise ModelFileError(f"{name} is not an irdialog model file (wrong format)")
                if doc.get("version") not in _READABLE_VERSIONS:
                    raise ModelFileError(
                        f"{name}: model file version {doc.get('version')!r}; this irdialog reads "
                        f"versions {', '.join(map(str, _READABLE_VERSIONS))}"
                    )
                return _Reader(_Members(archive, f, mode, name)).decode(doc.get("model"))
        except ModelFileError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError) as err:
            raise ModelFileError(f"{name}: damaged model file ({err})") from None
        except (ValueError, TypeError, KeyError, AttributeError, IndexError) as err:
            raise ModelFileError(
                f"{name}: malformed model file ({type(err).__name__}: {err})"
            ) from None
