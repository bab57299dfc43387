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

from benchmarks import SpeedBenchmark, finish_speed_result

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


def _table(result: dict) -> list[str]:
    cold, warm = result["cold"], result["warm"]
    one_core = result.get("cold_without_helper")

    def row(label, run, ratio):
        compiled = sum(run["compile_seconds"].values())
        cpu = f"{run['cpu_seconds']:.1f}" if "cpu_seconds" in run else ""
        return f"| {label} | {run['process_seconds']:.1f} | {ratio:.2f} | {cpu} | {compiled:.1f} |"

    lines = [
        "| `irdialog run --quiet` | wall s | / warm | CPU s (with the helper) "
        "| numba compiling in the main process, s |",
        "|---|---:|---:|---:|---:|",
    ]
    if one_core is not None:
        label = "cold, compile-ahead helper off (`IRDIALOG_COMPILE_AHEAD=0`)"
        lines.append(row(label, one_core, result["cold_without_helper_over_warm"]))
    lines += [
        row("cold (empty numba cache)", cold, result["cold_over_warm"]),
        row("warm (cache filled by the cold run)", warm, 1.0),
        "",
        "Compile time of the top-level kernels compiled in the main process (each with what it "
        f"calls), cold{', helper off' if one_core is not None else ''}:",
        "",
        "| kernel | s |",
        "|---|---:|",
    ]
    first = one_core if one_core is not None else cold
    for name, seconds in sorted(first["compile_seconds"].items(), key=lambda kv: -kv[1]):
        lines.append(f"| `{name.removeprefix('irdialog.')}` | {seconds:.1f} |")
    return lines


def _ratios(r):
    return {k: r[k] for k in ("cold_over_warm", "cold_without_helper_over_warm") if k in r}


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(table=_table, ratios=_ratios)


if __name__ == "__main__":
    sys.exit(main())
