"""The SHA-256 of a file, read a block at a time."""

from __future__ import annotations

import hashlib
from pathlib import Path

_BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()
