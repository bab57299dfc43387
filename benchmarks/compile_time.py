"""The cost of numba compilation: a cold ``irdialog run`` against a warm one.

Runs ``irdialog run --quiet`` (dialog bAbI task 1, every ranker, bundled data) twice in fresh
processes sharing one new numba cache folder: cold (the cache empty: every kernel the run
uses is compiled and written) and warm (every kernel loaded from the cache). The cold run
records numba's compile events, so the compile time of each top-level kernel is measured
apart from the rest of the run.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.compile_time \\
        --output benchmarks/results/speed/compile-time.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks import finish_speed_result

# Run in the child: `irdialog run --quiet` with numba's compile events recorded.
_CHILD = r"""
import json, sys, time
from numba.core import event
recorder = event.RecordingListener()
event.register("numba:compile", recorder)
start = time.perf_counter()
from irdialog.cli import main
main(["run", "--quiet"])
wall = time.perf_counter() - start
stack, kernels = [], {}
for ts, e in recorder.buffer:
    if e.is_start:
        d = e.data.get("dispatcher")
        stack.append((f"{d.py_func.__module__}.{d.py_func.__name__}" if d else "?", ts))
    else:
        name, t0 = stack.pop()
        if not stack:  # top-level compilations only (they include the functions they call)
            kernels[name] = kernels.get(name, 0.0) + ts - t0
print(json.dumps({"wall_seconds": wall, "compile_seconds": kernels}))
"""


def run_once(cache_dir: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    )
    record = json.loads(out.stdout.strip().splitlines()[-1])
    record["process_seconds"] = time.perf_counter() - start
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = run_once(cache)
        warm = run_once(cache)
    finish_speed_result(
        "compile-time",
        {
            "cold": cold,
            "warm": warm,
            "cold_over_warm": cold["process_seconds"] / warm["process_seconds"],
        },
        argv=argv,
        output=args.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
