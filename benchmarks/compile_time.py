"""The cost of numba compilation: a cold ``irdialog run --all`` against a warm one.

Runs ``irdialog run --all --quiet`` (dialog bAbI task 1, every ranker, bundled data) in fresh
processes: cold (an empty numba cache: every kernel the run uses is compiled and written),
once with the compile-ahead helper process disabled (``IRDIALOG_COMPILE_AHEAD=0``: one core
does everything) and once with it (the default: a spare core compiles the numba models'
kernels while the run does the others), then warm (every kernel loaded from the cache the
last cold run filled). Each run records its wall time, the CPU time of its whole process
tree (the helper included) and numba's compile events in the main process, so the compile
time of each top-level kernel is measured apart from the rest of the run.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.compile_time \\
        --output benchmarks/results/speed/compile-time.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from benchmarks import finish_speed_result

# Run in the child: `irdialog run --all --quiet` with numba's compile events recorded.
_CHILD = r"""
import json, sys, time
from numba.core import event
recorder = event.RecordingListener()
event.register("numba:compile", recorder)
start = time.perf_counter()
from irdialog.cli import main
main(["run", "--all", "--quiet"])
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


def run_once(cache_dir: str, compile_ahead: bool = True) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    env["IRDIALOG_COMPILE_AHEAD"] = "1" if compile_ahead else "0"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = json.loads(out.stdout.strip().splitlines()[-1])
    record["process_seconds"] = wall
    record["cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold_one_core = run_once(cache, compile_ahead=False)
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = run_once(cache)
        warm = run_once(cache)
    finish_speed_result(
        "compile-time",
        {
            "cold_without_helper": cold_one_core,
            "cold": cold,
            "warm": warm,
            "cold_over_warm": cold["process_seconds"] / warm["process_seconds"],
            "cold_without_helper_over_warm": cold_one_core["process_seconds"]
            / warm["process_seconds"],
            "cpu_count": os.cpu_count(),
        },
        argv=argv,
        output=args.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
