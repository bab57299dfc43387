"""A BM25 index larger than one process's share of memory: ``--documents`` generated passages
in ``--shards`` shards, built by a ``LocalCluster`` of ``--workers`` one-thread worker
processes and memory-mapped; the peak memory of each shard's work, of each worker and of
this process, against a quarter of the index; the index's size; query speed.

The corpus (the generator of :mod:`benchmarks.sharded_index`: Zipf words over
``--vocabulary``, 10 to 60 a passage, seed 0) is one text file. Each shard's worker reads its
byte range of it a line at a time, counts a block of documents at a time and writes its
postings term-major and its impacts a block at a time through maps, so that no process holds
a shard. The peak resident memory of every task (the kernel's high-water mark of the worker
process, ``VmHWM``, reset as the task starts and read as it ends: with one thread a worker,
the task's own) is recorded by shard and step (``count``: reading and counting; ``index``:
postings, impacts and writing), beside each worker's peak over the build and this process's.
Resident memory counts the pages of the index files a process has mapped and touched, as
the kernel does.

Queries: ``--queries`` generated queries (2 to 6 words), top 10, scattered to the shards,
twice (the first round reads the index from disk where the page cache cannot hold it).

Before it starts, the script checks that the disk holds the corpus, the counts between the
steps and the index (760 bytes a passage at worst) and stops with the arithmetic
when it does not.

Usage::

    python -m benchmarks.index_size --documents 100000000 --shards 4 --workers 2 \\
        --directory /work/big --output benchmarks/results/speed/index-size.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":  # one thread a process, before numpy loads its BLAS (not on import)
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

from benchmarks import SpeedBenchmark, finish_speed_result  # noqa: E402
from benchmarks.sharded_index import make_queries, write_corpus  # noqa: E402

# Bytes a passage of the generated corpus can take at once, measured at 8.4M passages: its
# text (163), its counts between the build's steps (232: 8 a posting) and its index (358).
_PEAK_BYTES_PER_PASSAGE = 760


def _reset_peak() -> None:
    """Reset this process's resident high-water mark (Linux 4.0 and later)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_bytes() -> int:
    """This process's resident high-water mark since the last reset."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _task_peaks():
    """A worker plugin that records each task's peak resident memory on a one-thread
    worker, by task key (``dask_worker.irdialog_task_peaks``)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class TaskPeaks(WorkerPlugin):
        name = "irdialog-task-peaks"

        def setup(self, worker):
            self.peaks = worker.irdialog_task_peaks = {}

        def transition(self, key, start, finish, **kwargs):
            if finish == "executing":
                _reset_peak()
            elif start == "executing":
                self.peaks[str(key)] = _peak_bytes()

    return TaskPeaks()


def _worker_state(dask_worker):
    from irdialog.retrieval._sharded import _OPEN

    tasks = dict(dask_worker.irdialog_task_peaks)
    # Each task resets the high-water mark: the worker's is the largest since the first.
    return {"task_peaks": tasks, "peak": max([_peak_bytes(), *tasks.values()]),
            "shards": sorted(Path(d).name for d in _OPEN)}  # fmt: skip


def _step(key: str) -> tuple[str, int] | None:
    """(step, shard) of a task key of ShardedIndex's build (``count_shard-3-…``)."""
    for name, step in (("count_shard-", "count"), ("index_shard-", "index")):
        if key.startswith(name):
            return step, int(key[len(name) :].split("-")[0])
    return None


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000_000)
    parser.add_argument("--vocabulary", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--directory", default=None, help="where the corpus and index go (default: a temporary one)"
    )
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    from irdialog.retrieval import ShardedIndex

    base = Path(args.directory or tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    need, free = args.documents * _PEAK_BYTES_PER_PASSAGE, shutil.disk_usage(base).free
    if need > free:
        raise SystemExit(
            f"{base}: {free / 1e9:.1f} GB free; {args.documents:,} passages take about "
            f"{need / 1e9:.1f} GB at the build's peak ({_PEAK_BYTES_PER_PASSAGE} bytes each); "
            f"at most {free // _PEAK_BYTES_PER_PASSAGE:,} fit."
        )
    queries = make_queries(args.queries, args.vocabulary)
    work = Path(tempfile.mkdtemp(prefix="irdialog-size-bench-", dir=base))
    try:
        corpus = work / "corpus.txt"
        t = time.perf_counter()
        write_corpus(corpus, args.documents, args.vocabulary)
        generate = time.perf_counter() - t
        print(f"{args.documents:,} passages ({corpus.stat().st_size / 2**30:.1f} GiB) written "
              f"in {generate:.0f} s", file=sys.stderr)  # fmt: skip
        # No memory limit: Dask would pause a worker past a share of this machine's memory,
        # which counts the index's mapped pages.
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit=0)  # fmt: skip
        with cluster, Client(cluster) as client:
            client.run(lambda: __import__("irdialog.retrieval._kernels"))
            # register_plugin since distributed 2023.9
            register = getattr(client, "register_plugin", None) or client.register_worker_plugin
            register(_task_peaks())
            client.run(_reset_peak)
            _reset_peak()
            index = ShardedIndex(shards=args.shards, client=client, directory=work / "index")
            t = time.perf_counter()
            index.build([corpus])
            build = time.perf_counter() - t
            print(f"built in {build:.0f} s", file=sys.stderr)
            workers = client.run(_worker_state)
            client_peak = _peak_bytes()
            files = sorted((work / "index").rglob("*.npy"))
            index_bytes = sum(p.stat().st_size for p in files)
            shard_bytes = [sum(p.stat().st_size for p in Path(d).glob("*.npy"))
                           for d in index._dirs]  # fmt: skip
            rounds = []
            for _ in range(2):
                t = time.perf_counter()
                index.top_k(queries, 10)
                rounds.append(len(queries) / (time.perf_counter() - t))
            index.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    steps = {}
    for state in workers.values():
        for key, peak in state["task_peaks"].items():
            if (found := _step(key)) is not None:
                step, shard = found
                steps.setdefault(shard, {})[step] = max(peak, steps.get(shard, {}).get(step, 0))
    quarter = index_bytes / 4
    fields = {
        "n_documents": args.documents,
        "vocabulary": args.vocabulary,
        "shards": args.shards,
        "workers": args.workers,
        "n_queries": len(queries),
        "generate_seconds": round(generate, 1),
        "build_seconds": round(build, 1),
        "index_bytes": index_bytes,
        "shard_bytes": shard_bytes,
        "shard_peak_bytes": [steps.get(s, {}) for s in range(len(shard_bytes))],
        "worker_peak_bytes": {
            f"worker {i}": {"peak": w["peak"], "shards": w["shards"]}
            for i, w in enumerate(workers.values())
        },  # fmt: skip
        "client_peak_bytes": client_peak,
        "largest_peak_over_quarter": round(
            max([client_peak, *(w["peak"] for w in workers.values())]) / quarter, 3
        ),
        "queries_per_second": {"first": round(rounds[0], 1), "second": round(rounds[1], 1)},
    }
    return finish_speed_result(
        "index-size", fields, argv=sys.argv[1:] if argv is None else argv, output=args.output
    )


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f}"


def _table(result: dict) -> list[str]:
    lines = [
        f"BM25 over {result['n_documents']:,} generated passages in {result['shards']} shards, "
        f"built by {result['workers']} one-thread worker processes in "
        f"{result['build_seconds']:,.0f} s; the index {_gib(result['index_bytes'])} GiB on disk, "
        f"memory-mapped (a quarter: {_gib(result['index_bytes'] / 4)} GiB):",
        "",
        "| shard | on disk (GiB) | peak memory, counting (GiB) | peak memory, indexing (GiB) |",
        "|---|---:|---:|---:|",
    ]
    for shard, (size, peaks) in enumerate(zip(result["shard_bytes"], result["shard_peak_bytes"])):
        lines.append(
            f"| {shard} | {_gib(size)} | {_gib(peaks.get('count', 0))} "
            f"| {_gib(peaks.get('index', 0))} |"
        )
    workers = ", ".join(
        f"{w}: {_gib(v['peak'])} GiB" for w, v in result["worker_peak_bytes"].items()
    )
    q = result["queries_per_second"]
    lines += [
        "",
        f"Peak memory of each worker over the build: {workers}; of the client: "
        f"{_gib(result['client_peak_bytes'])} GiB. The largest is "
        f"{result['largest_peak_over_quarter']:.2f} of a quarter of the index.",
        f"Top 10 of {result['n_queries']:,} queries: {q['first']:,.1f} queries/s (first round), "
        f"{q['second']:,.1f} (second).",
    ]
    return lines


def _ratios(result: dict) -> dict:
    """The largest process's peak memory against a quarter of the index (a re-run must keep
    it; the times depend on the machine)."""
    return {"largest peak memory / a quarter of the index": result["largest_peak_over_quarter"]}


SPEED = SpeedBenchmark(table=_table, ratios=_ratios)


if __name__ == "__main__":
    main()
