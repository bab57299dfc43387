"""What produced a benchmark result: code, libraries, command, seeds, date and data.

A result without the code and library versions behind it cannot be re-created; every JSON
the bench writes carries a ``provenance`` record built here.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .. import __version__

# The libraries whose versions can move a number.
LIBRARIES = ("numpy", "scipy", "numba", "scikit-learn", "joblib", "threadpoolctl")
_CHUNK = 1 << 20


def sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def git_commit(directory: Path | None = None) -> dict | None:
    """The commit of the git checkout holding ``directory`` (default: this package), and
    whether the code under ``directory`` has uncommitted changes (result files written
    elsewhere in the checkout do not count); None outside a checkout."""
    directory = Path(__file__).resolve().parent.parent if directory is None else Path(directory)

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=directory, capture_output=True, text=True, timeout=30
        )

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None
        status = git("status", "--porcelain", "--untracked-files=no", "--", ".")
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def library_versions() -> dict[str, str | None]:
    """Python's version and the installed version of each library of ``LIBRARIES``."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def data_record(files, data_home: Path | None) -> list[dict]:
    """Each file's path (relative to ``data_home`` when under it), size and SHA-256."""
    out = []
    for path in files:
        path = Path(path).resolve()
        shown = path
        if data_home is not None:
            try:
                shown = path.relative_to(Path(data_home).resolve())
            except ValueError:
                pass
        out.append({"path": shown.as_posix(), "bytes": path.stat().st_size, "sha256": sha256(path)})
    return out


def cpu_description() -> str:
    """``", <CPU model>, <cores> cores[, AVX-512]"`` where the OS says (Linux's
    /proc/cpuinfo), else ``""``: speed ratios and floating-point results can differ between
    machines, so a result names the one it was measured on."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    model = next((ln.split(":", 1)[1].strip() for ln in info.splitlines()
                  if ln.startswith("model name")), "")  # fmt: skip
    flags = next((ln.split(":", 1)[1].split() for ln in info.splitlines()
                  if ln.startswith("flags")), [])  # fmt: skip
    avx512 = ", AVX-512" if "avx512f" in flags else ""
    return f", {model or 'unknown CPU'}, {os.cpu_count()} cores{avx512}"


def provenance(*, command, seeds, files, data_home=None) -> dict:
    """The provenance record of a result.

    Parameters
    ----------
    command : sequence of str or None
        The command line that produced the result (None: this process's ``sys.argv``).
    seeds : sequence of int
        The seeds the result was averaged over.
    files : sequence of path-like
        The data files read (see :func:`irdialog.datasets.record_data_files`).
    data_home : path-like, default=None
        The data home the file paths are shown relative to.

    Returns
    -------
    record : dict
        ``{"irdialog", "git", "libraries", "platform", "command", "seeds", "date", "data"}``.

    Examples
    --------
    >>> from irdialog.bench import provenance
    >>> record = provenance(command=["irdialog", "run"], seeds=[0], files=[])
    >>> sorted(record)
    ['command', 'data', 'date', 'git', 'irdialog', 'libraries', 'platform', 'seeds']
    >>> record["command"]
    'irdialog run'
    """
    command = sys.argv if command is None else command
    home = None if data_home is None else Path(data_home)
    return {
        "irdialog": __version__,
        "git": git_commit(),
        "libraries": library_versions(),
        "platform": f"{platform.system()} {platform.machine()}{cpu_description()}",
        "command": shlex.join(str(c) for c in command),
        "seeds": [int(s) for s in seeds],
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "data": data_record(files, home),
    }
