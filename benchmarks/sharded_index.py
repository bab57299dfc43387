"""BM25 in shards on Dask workers against one process: build time, queries per second, and
the scatter-gather overhead of a query.

A corpus of ``--documents`` generated passages (words drawn from a Zipf law over
``--vocabulary`` words, 10 to 60 a passage; seed 0) is written to a text file, one passage a
line, and indexed twice by :class:`irdialog.retrieval.ShardedIndex` with BM25Ranker's
defaults:

- ``1 process``: one shard, built and searched in this process (the single index);
- ``N workers``: ``--workers`` shards on a ``LocalCluster`` of that many one-thread worker
  processes, each reading its part of the file and writing its shard; the queries are
  scattered to the shards and their top 10 merged here;
- ``1 process, n_jobs=N``: the single index again, its queries ranked on ``N`` threads
  (as many as the workers: what the cluster is set against).

Timed: the build (reading, counting, global statistics, impacts, writing, opening), and
``--queries`` generated queries (2 to 6 words) ranked in one call (the best of ``--repeat``
rounds, the sides in turn); the overhead: the time of a one-query call on the cluster, of an
empty query (no term: no shard has work, so it is all scatter, gather and merge) and of the
same one-word queries in this process. Every side's top 10 is checked to be identical.
Threads (but the ``n_jobs`` side's): every BLAS and numba on one (``NUMBA_NUM_THREADS=1``,
set before the workers start). The machine's other load is recorded (``machine_load``): on a
shared machine the figures are indicative.

Usage::

    python -m benchmarks.sharded_index --documents 1000000 --workers 2 \\
        --output benchmarks/results/speed/sharded-index.json
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

_GENERATE_BLOCK = 10_000


def words(vocabulary: int) -> np.ndarray:
    return np.array([f"w{i}" for i in range(vocabulary)], dtype=object)


def zipf_p(vocabulary: int) -> np.ndarray:
    p = 1.0 / np.arange(1, vocabulary + 1) ** 1.05
    return p / p.sum()


def write_corpus(path: Path, n: int, vocabulary: int, seed: int = 0) -> None:
    """``n`` passages of Zipf words, one a line."""
    rng = np.random.default_rng(seed)
    vocab, p = words(vocabulary), zipf_p(vocabulary)
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, n, _GENERATE_BLOCK):
            m = min(_GENERATE_BLOCK, n - start)
            lengths = rng.integers(10, 61, size=m)
            drawn = vocab[rng.choice(vocabulary, size=int(lengths.sum()), p=p)]
            ends = np.cumsum(lengths)
            f.writelines(" ".join(drawn[e - n_w : e]) + "\n" for e, n_w in zip(ends, lengths))


def make_queries(n: int, vocabulary: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab, p = words(vocabulary), zipf_p(vocabulary)
    return [" ".join(vocab[rng.choice(vocabulary, size=rng.integers(2, 7), p=p)])
            for _ in range(n)]  # fmt: skip


def _latency(index, queries, repeat: int) -> float:
    """The median seconds of a one-query call over ``queries`` (each once, ``repeat`` times)."""
    times = []
    for _ in range(repeat):
        for q in queries:
            t = time.perf_counter()
            index.top_k([q], 10)
            times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--vocabulary", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    from irdialog.retrieval import ShardedIndex

    queries = make_queries(args.queries, args.vocabulary)
    probes = [f"w{i}" for i in range(0, 500, 10)]  # one-word queries, common to rare
    with tempfile.TemporaryDirectory(prefix="irdialog-sharded-bench-") as tmp:
        tmp = Path(tmp)
        corpus = tmp / "corpus.txt"
        t = time.perf_counter()
        write_corpus(corpus, args.documents, args.vocabulary)
        generate = time.perf_counter() - t
        print(f"{args.documents:,} passages ({corpus.stat().st_size / 2**20:.0f} MiB) "
              f"written in {generate:.1f} s", file=sys.stderr)  # fmt: skip
        sides = {}
        t = time.perf_counter()
        local = ShardedIndex(directory=tmp / "one").build([corpus])
        sides["1 process"] = {"index": local, "build_seconds": time.perf_counter() - t}
        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        with cluster, Client(cluster) as client:
            client.run(lambda: __import__("irdialog.retrieval._kernels"))  # imported, not timed
            t = time.perf_counter()
            sharded = ShardedIndex(shards=args.workers, client=client, directory=tmp / "shards")
            sharded.build([corpus])
            name = f"{args.workers} workers"
            sides[name] = {"index": sharded, "build_seconds": time.perf_counter() - t}
            # the same single index, its queries ranked on as many threads as workers
            threads = f"1 process, n_jobs={args.workers}"
            sides[threads] = {"index": local, "n_jobs": args.workers, "build_seconds": None}
            for side in sides.values():  # warm-up: numba's cached kernels loaded everywhere
                side["index"].top_k(queries[:100], 10)
            best = {s: np.inf for s in sides}
            ranked = {}
            for _ in range(args.repeat):
                for s, side in sides.items():
                    t = time.perf_counter()
                    ranked[s] = side["index"].top_k(queries, 10, n_jobs=side.get("n_jobs"))
                    best[s] = min(best[s], time.perf_counter() - t)
            same = all(
                np.array_equal(ranked[s][0], ranked["1 process"][0])
                and np.array_equal(ranked[s][1], ranked["1 process"][1])
                for s in sides
            )
            rows = []
            for s, side in sides.items():
                index, built = side["index"], side["build_seconds"]
                row = {"side": s, "shards": len(index.offsets_) - 1,
                       "build_seconds": None if built is None else round(built, 2),
                       "queries_per_second": round(len(queries) / best[s], 1)}  # fmt: skip
                if "n_jobs" not in side:  # one query is one thread's work
                    row["one_query_ms"] = round(1e3 * _latency(index, probes, args.repeat), 3)
                    row["empty_query_ms"] = round(1e3 * _latency(index, [""] * 20, args.repeat), 3)
                rows.append(row)
            overhead = rows[1]["one_query_ms"] - rows[0]["one_query_ms"]
            sharded.close()
        local.close()
    fields = {
        "n_documents": args.documents,
        "vocabulary": args.vocabulary,
        "n_queries": len(queries),
        "workers": args.workers,
        "generate_seconds": round(generate, 1),
        "identical_top_10": same,
        "scatter_gather_overhead_ms": round(overhead, 3),
        "rows": rows,
    }
    return finish_speed_result(
        "sharded-index", fields, argv=sys.argv[1:] if argv is None else argv, output=args.output
    )


def _table(result: dict) -> list[str]:
    lines = [
        f"BM25 over {result['n_documents']:,} generated passages, {result['n_queries']:,} "
        f"queries, top 10 (identical on every side: {result['identical_top_10']}):",
        "",
        "| side | shards | build (s) | queries/s | one query (ms) | empty query (ms) |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def cell(value, spec, absent="—"):
        return absent if value is None else format(value, spec)

    for r in result["rows"]:
        lines.append(
            f"| {r['side']} | {r['shards']} | {cell(r['build_seconds'], '.1f', 'the same index')} "
            f"| {r['queries_per_second']:,.0f} | {cell(r.get('one_query_ms'), '.2f')} "
            f"| {cell(r.get('empty_query_ms'), '.2f')} |"
        )
    lines += [
        "",
        f"Scatter-gather overhead per query: {result['scatter_gather_overhead_ms']:.2f} ms",
    ]
    return lines


def _ratios(result: dict) -> dict:
    """The sharded side against one process: queries a second (against one thread, and
    against as many threads as workers when the file has that side), and build speed."""
    one, sharded, *threads = result["rows"]
    ratios = {
        "queries a second, shards / one process": sharded["queries_per_second"]
        / one["queries_per_second"],
        "build speed, shards / one process": one["build_seconds"] / sharded["build_seconds"],
    }
    for row in threads:
        ratios[f"queries a second, shards / {row['side']}"] = (
            sharded["queries_per_second"] / row["queries_per_second"]
        )
    return ratios


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(table=_table, ratios=_ratios)


if __name__ == "__main__":
    main()
