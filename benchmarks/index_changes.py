"""A BM25 index that changes: adding and deleting 1% of its documents against a full build,
and query speed after the change against an index rebuilt from the documents left.

A corpus of ``--documents`` generated passages (the generator of
:mod:`benchmarks.sharded_index`: Zipf words over ``--vocabulary``, 10 to 60 a passage,
seed 0) is indexed by :class:`irdialog.retrieval.ShardedIndex` with BM25Ranker's defaults,
in ``--workers`` shards (1: one shard in this process; more: a ``LocalCluster`` of that many
one-thread worker processes). Then, each timed:

- ``add``: ``--fraction`` of the corpus's size in new passages (seed 2), in a shard of their
  own (the merge policy of ``--max-shard-growth``, the default's, appends only to a shard
  that additions made), every other shard scored again with the new statistics;
- ``delete``: ``--fraction`` of the ids, drawn at random (seed 3), every shard scored again;
- ``rebuild``: a full build of the documents left (the reference);
- queries: ``--queries`` generated queries (2 to 6 words) ranked top 10 on the changed and
  on the rebuilt index, in turn, ``--repeat`` rounds (best of each); the two top 10s are
  checked to be equal (ids mapped, scores to float32 rounding);
- ``compact``: the changed index rewritten without its deleted documents;
- ``open``: the changed index opened with every file hashed (``verify=True``) and with
  sizes only, and the bytes hashed.

Threads: every BLAS and numba on one. The machine's other load is recorded
(``machine_load``): on a shared machine the figures are indicative. With one shard, the CPU
seconds of each step (this process's, all of its work) are recorded too: they do not depend
on what else the machine runs.

Usage::

    python -m benchmarks.index_changes --documents 1000000 --workers 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":  # one thread a process, before numpy loads its BLAS (not on import)
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from benchmarks import SpeedBenchmark, finish_speed_result  # noqa: E402
from benchmarks.sharded_index import make_queries, write_corpus  # noqa: E402

_CPU = {}  # the CPU seconds of this process in each step (with one shard, all its work)


def _timed(fn, step=None):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    if step is not None:
        _CPU[step] = time.process_time() - c
    return time.perf_counter() - t, out


def _index_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*.npy"))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--vocabulary", type=int, default=100_000)
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-shard-growth", type=float, default=1.1,
                        help="ShardedIndex's merge policy (0: every add a new shard)")  # fmt: skip
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    from irdialog.retrieval import ShardedIndex

    n_change = int(round(args.documents * args.fraction))
    queries = make_queries(args.queries, args.vocabulary)
    client = cluster = None
    if args.workers > 1:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        client.run(lambda: __import__("irdialog.retrieval._kernels"))  # imported, not timed
    try:
        with tempfile.TemporaryDirectory(prefix="irdialog-changes-bench-") as tmp:
            tmp = Path(tmp)
            corpus, more, left = tmp / "corpus.txt", tmp / "more.txt", tmp / "left.txt"
            write_corpus(corpus, args.documents, args.vocabulary)
            write_corpus(more, n_change, args.vocabulary, seed=2)
            shards = max(1, args.workers)

            def build(path, where):
                index = ShardedIndex(shards=shards, client=client, directory=tmp / where,
                                     max_shard_growth=args.max_shard_growth)  # fmt: skip
                return index.build([path])

            # A small build first: numba's cached kernels loaded everywhere, not timed.
            write_corpus(tmp / "warm.txt", 2_000, args.vocabulary, seed=9)
            warm = build(tmp / "warm.txt", "warm")
            warm.add([more])
            warm.delete([0])
            warm.close()

            seconds = {}
            seconds["build"], index = _timed(lambda: build(corpus, "changed"), "build")
            print(f"build {seconds['build']:.1f} s", file=sys.stderr)
            seconds["add"], _ = _timed(lambda: index.add([more]), "add")
            shards_after_add = len(index.offsets_) - 1
            rng = np.random.default_rng(3)
            gone = rng.choice(int(index.offsets_[-1]), size=n_change, replace=False)
            seconds["delete"], _ = _timed(lambda: index.delete(gone), "delete")
            print(f"add {seconds['add']:.2f} s, delete {seconds['delete']:.2f} s",
                  file=sys.stderr)  # fmt: skip
            live = np.setdiff1d(np.arange(int(index.offsets_[-1])), index.deleted_)
            with open(corpus, encoding="utf-8") as a, open(more, encoding="utf-8") as b:
                lines = a.readlines() + b.readlines()
            with open(left, "w", encoding="utf-8") as f:
                f.writelines(lines[i] for i in live)
            del lines
            seconds["rebuild"], rebuilt = _timed(lambda: build(left, "rebuilt"))

            sides = {"changed": index, "rebuilt": rebuilt}
            for side in sides.values():
                side.top_k(queries[:100], 10)
            best = {s: np.inf for s in sides}
            ranked = {}
            for _ in range(args.repeat):
                for s, side in sides.items():
                    t, ranked[s] = _timed(lambda side=side: side.top_k(queries, 10))
                    best[s] = min(best[s], t)
            same_ids = bool(np.array_equal(ranked["changed"][0], live[ranked["rebuilt"][0]]))
            score_error = float(np.max(np.abs(ranked["changed"][1] - ranked["rebuilt"][1])))
            rebuilt.close()

            seconds["compact"], _ = _timed(index.compact)
            n_bytes = _index_bytes(tmp / "changed")
            index.close()
            opened = {}
            for verify in (True, False):
                t, again = _timed(
                    lambda verify=verify: ShardedIndex.open(
                        tmp / "changed", client=client, verify=verify
                    )
                )
                opened[verify] = t
                again.close()
    finally:
        if client is not None:
            client.close()
            cluster.close()
    qps = {s: len(queries) / best[s] for s in sides}
    fields = {
        "n_documents": args.documents,
        "vocabulary": args.vocabulary,
        "changed_documents": n_change,
        "workers": args.workers,
        "max_shard_growth": args.max_shard_growth,
        "shards_after_add": shards_after_add,
        "n_queries": len(queries),
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
        "add_over_build": round(seconds["add"] / seconds["build"], 4),
        "delete_over_build": round(seconds["delete"] / seconds["build"], 4),
        "cpu_seconds": {k: round(v, 3) for k, v in _CPU.items()},
        "queries_per_second": {s: round(v, 1) for s, v in qps.items()},
        "changed_over_rebuilt_qps": round(qps["changed"] / qps["rebuilt"], 3),
        "identical_top_10_ids": same_ids,
        "largest_score_difference": score_error,
        "index_bytes": n_bytes,
        "open_seconds": {"sha256": round(opened[True], 3), "sizes": round(opened[False], 3)},
    }
    return finish_speed_result(
        "index-changes", fields, argv=sys.argv[1:] if argv is None else argv, output=args.output
    )


def _table(result: dict) -> list[str]:
    sec, qps = result["seconds"], result["queries_per_second"]
    n, workers = result["changed_documents"], result["workers"]
    where = "one process" if workers <= 1 else f"{workers} worker processes"
    cpu = result.get("cpu_seconds", {}) if workers <= 1 else {}
    added = ""
    if "shards_after_add" in result:
        added = (" (a new shard)" if result["shards_after_add"] > max(1, workers)
                 else " (to the last shard)")  # fmt: skip

    def _cpu(step, of=None):  # with one shard only: the workers' CPU is not counted here
        if step not in cpu:
            return ""
        return f"{cpu[step]:.2f}" if of is None else f"{100 * cpu[step] / cpu[of]:.1f}%"

    return [
        f"BM25 over {result['n_documents']:,} generated passages on {where}; {n:,} added, "
        f"then {n:,} deleted:",
        "",
        "| step | seconds | of a full build | CPU seconds here | of the build's |",
        "|---|---:|---:|---:|---:|",
        f"| full build | {sec['build']:.1f} | 100% | {_cpu('build')} | 100% |",
        f"| add{added} | {sec['add']:.2f} | {100 * result['add_over_build']:.1f}% | {_cpu('add')} "
        f"| {_cpu('add', 'build')} |",
        f"| delete | {sec['delete']:.2f} | {100 * result['delete_over_build']:.1f}% "
        f"| {_cpu('delete')} | {_cpu('delete', 'build')} |",
        f"| rebuild of the documents left | {sec['rebuild']:.1f} | "
        f"{100 * sec['rebuild'] / sec['build']:.0f}% | | |",
        f"| compact | {sec['compact']:.1f} | {100 * sec['compact'] / sec['build']:.0f}% | | |",
        "",
        f"Top 10 of {result['n_queries']:,} queries: {qps['changed']:,.0f} queries/s changed, "
        f"{qps['rebuilt']:,.0f} rebuilt ({result['changed_over_rebuilt_qps']:.2f}x); the same "
        f"ids: {result['identical_top_10_ids']}, largest score difference "
        f"{result['largest_score_difference']:.1e}. Opening {result['index_bytes'] / 2**20:,.0f} "
        f"MiB: {result['open_seconds']['sha256']:.2f} s hashing every file, "
        f"{result['open_seconds']['sizes']:.2f} s checking sizes.",
    ]


def _ratios(result: dict) -> dict:
    """The changes against a full build, and the changed index's queries against the
    rebuilt one's."""
    return {
        "add / full build": result["add_over_build"],
        "delete / full build": result["delete_over_build"],
        "queries a second, changed / rebuilt": result["changed_over_rebuilt_qps"],
    }


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(table=_table, ratios=_ratios)


if __name__ == "__main__":
    main()
