"""What produced a benchmark result: code, libraries, command, seeds, date and data.

A result without the code and library versions behind it cannot be re-created; every JSON
the bench writes carries a ``provenance`` record built here.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import resource
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .. import __version__
from .._digest import file_sha256

# The libraries whose versions can move a number.
LIBRARIES = ("numpy", "scipy", "numba", "scikit-learn", "joblib", "threadpoolctl")
# The environment variables that choose the floating-point code a run executes: OpenBLAS's
# kernels and numpy's SIMD loops (both picked per CPU unless these name them), numba's target;
# then the thread counts of the BLAS and of numba, which split its sums and set a speed
# figure's threads.
NUMERIC_VARIABLES = (
    "OPENBLAS_CORETYPE",
    "NPY_DISABLE_CPU_FEATURES",
    "NUMBA_CPU_NAME",
    "NUMBA_CPU_FEATURES",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)


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


def blas_kernels() -> str | None:
    """The kernels of the BLAS that numpy and scipy (hence numba's ``np.dot``) call, as
    threadpoolctl reports them (``"openblas Haswell"``, ``"openblas SkylakeX"``), the
    distinct ones joined by ``"; "``; None when none is loaded.

    OpenBLAS picks its matrix-product kernels for the CPU it starts on, and kernels of
    another width sum in another order: a seeded fit that calls BLAS repeats bit for bit
    only where the same kernels run. ``OPENBLAS_CORETYPE=Haswell`` selects the AVX2 ones on
    any x86-64 CPU that has AVX2 and FMA.

    Examples
    --------
    >>> from irdialog.bench._provenance import blas_kernels
    >>> blas_kernels()  # doctest: +SKIP
    'openblas Haswell'
    """
    import numpy  # noqa: F401  loaded, so that threadpoolctl sees their BLAS
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    kinds = [
        f"{info.get('internal_api')} {info.get('architecture')}".strip()
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    return "; ".join(dict.fromkeys(kinds)) or None


def numpy_simd() -> str:
    """The SIMD targets numpy dispatches its loops to on this CPU (``"X86_V3"`` for AVX2,
    ``"X86_V3 X86_V4 ..."`` with AVX-512): float32 ``exp``, ``tanh`` and others have one
    implementation per target, which may differ in the last bit."""
    try:  # numpy 2
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1
        from numpy.core import _multiarray_umath as umath
    dispatch = getattr(umath, "__cpu_dispatch__", [])
    features = getattr(umath, "__cpu_features__", {})
    return " ".join(t for t in dispatch if features.get(t)) or "baseline"


def numba_simd() -> str:
    """The widest SIMD instructions numba compiles for: ``"AVX-512"``, ``"AVX2"`` or
    ``"SSE"``. Numba targets the host CPU's features unless ``NUMBA_CPU_FEATURES`` names
    others (``NUMBA_CPU_NAME`` alone keeps the host's features). Its kernels give the same
    bits on any of these, except the dot products of supervised embeddings, which are
    summed in SIMD lanes (fast-math ``reassoc``): their last bits follow the vector width."""
    import llvmlite.binding as llvm
    from numba.core import config

    features = config.CPU_FEATURES
    if features is None:
        features = llvm.get_host_cpu_features().flatten()
    return _simd_level(features)


def _simd_level(features: str) -> str:
    on = {f[1:] for f in features.split(",") if f.startswith("+")}
    return "AVX-512" if "avx512f" in on else "AVX2" if "avx2" in on else "SSE"


def numerics() -> dict:
    """What chooses the floating-point code of a run: the BLAS kernels
    (:func:`blas_kernels`), numpy's SIMD targets (:func:`numpy_simd`), numba's
    (:func:`numba_simd`) and the :data:`NUMERIC_VARIABLES` that are set. Two runs of a
    seeded model with the same three compute the same bits."""
    env = {name: os.environ[name] for name in NUMERIC_VARIABLES if name in os.environ}
    return {
        "blas": blas_kernels(),
        "numpy_simd": numpy_simd(),
        "numba_simd": numba_simd(),
        "environment": env,
    }


def recorded_numba_simd(provenance: dict) -> str | None:
    """:func:`numba_simd` of a recorded run. A result made before it was recorded ran numba
    on its host's features (no ``NUMBA_CPU_FEATURES`` then): its platform's ``AVX-512``
    mark (:func:`cpu_description`) tells; None when the platform names no CPU."""
    numerics = provenance.get("numerics") or {}
    if numerics.get("numba_simd"):
        return numerics["numba_simd"]
    features = (numerics.get("environment") or {}).get("NUMBA_CPU_FEATURES")
    if features is not None:
        return _simd_level(features)
    platform = provenance.get("platform") or ""
    if "AVX-512" in platform:
        return "AVX-512"
    return "AVX2" if " cores" in platform else None


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
        out.append(
            {"path": shown.as_posix(), "bytes": path.stat().st_size, "sha256": file_sha256(path)}
        )
    return out


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB.

    On Linux this is ``VmHWM`` of ``/proc/self/status``, the peak of this process's own
    memory: ``ru_maxrss`` is kept across ``exec``, so a process started by a larger one
    would report its parent's peak. Elsewhere, ``ru_maxrss``."""
    with contextlib.suppress(OSError):
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10  # kB
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB


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
        ``{"irdialog", "git", "libraries", "platform", "numerics", "command", "seeds",
        "date", "data"}``.

    Examples
    --------
    >>> from irdialog.bench import provenance
    >>> record = provenance(command=["irdialog", "run"], seeds=[0], files=[])
    >>> sorted(record)
    ['command', 'data', 'date', 'git', 'irdialog', 'libraries', 'numerics', 'platform', 'seeds']
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
        "numerics": numerics(),
        "command": shlex.join(str(c) for c in command),
        "seeds": [int(s) for s in seeds],
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "data": data_record(files, home),
    }
