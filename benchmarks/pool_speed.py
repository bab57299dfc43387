"""Ranking 10,000 contexts against a million candidates with a fitted embedding model.

``model.rank(X, k=10, candidates=pool)`` embeds the pool once and scores it block by block
with a running top k (``irdialog._topk``): memory is one block of scores, never the
10k x 1M matrix (40 GB in float32). This script fits a SupervisedEmbeddingRanker and a
MemN2NRanker on dialog bAbI task 5 (two epochs: a speed run, not a result), builds a pool of
``--pool`` responses (the 4,212 real candidates at random places among generated ones,
whose words are drawn from the candidates' word frequencies), and measures in one process,
on one thread:

- the whole ``rank`` call, and its two parts: embedding the pool (tokenising a million
  texts) and scoring (``inner_product_top_k`` on the same embeddings);
- against the scoring, alternated with it ``--repeats`` times (best of each kept): the
  same-shape products alone (every 512-context x 512-candidate block, one float32 product
  into one buffer, no top k), and the peer, faiss-cpu's exact ``IndexFlatIP.search`` on
  the same float32 embeddings (one OpenMP thread), whose top-10 sets are checked against
  ours (at 10,000 queries faiss takes its BLAS path; below 4,096 it scores pair by pair,
  several times slower here); the scoring's GFLOP/s is 2 x contexts x candidates x
  dimension per second;
- peak resident memory of the process (``VmHWM`` on Linux);
- hits@1 of the gold response in the pool, against hits@1 among the 4,212 candidates.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.pool_speed \\
        --data-home DIR --output benchmarks/results/speed/pool-speed.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import SpeedBenchmark, alternate, finish_speed_result, per_row_ratios
from irdialog import MemN2NRanker, SupervisedEmbeddingRanker
from irdialog._topk import MAX_BLOCK_ROWS, _block_shape, inner_product_top_k
from irdialog.bench._provenance import peak_rss_mib
from irdialog.datasets import load_dialog_babi, record_data_files
from irdialog.text import tokenize


def make_pool(candidates, size: int, seed: int = 0):
    """``size`` responses: the real candidates at random positions, the rest generated word
    by word from the candidates' word frequencies and lengths."""
    rng = np.random.default_rng(seed)
    counts = Counter(w for c in candidates for w in tokenize(c))
    words = np.array(list(counts), dtype=object)
    p = np.array(list(counts.values()), dtype=np.float64)
    p /= p.sum()
    lengths = rng.choice([len(tokenize(c)) for c in candidates], size - len(candidates))
    flat = rng.choice(words, int(lengths.sum()), p=p)
    cuts = np.cumsum(lengths)[:-1]
    pool = np.empty(size, dtype=object)
    real_at = np.sort(rng.choice(size, len(candidates), replace=False))
    generated = np.setdiff1d(np.arange(size), real_at)
    pool[generated] = [" ".join(ws) for ws in np.split(flat, cuts)]
    pool[real_at] = candidates
    return pool, real_at


def same_shape_products(U, V, k):
    """The products of inner_product_top_k alone: its blocks, into one buffer, no top k."""
    rows, cols = _block_shape(len(U), k)
    buffer = np.empty((rows, cols), dtype=np.float32)
    for r0 in range(0, len(U), rows):
        for c0 in range(0, len(V), cols):
            u, v = U[r0 : r0 + rows], V[c0 : c0 + cols]
            out = buffer if (len(u), len(v)) == buffer.shape else None
            np.dot(u, v.T, out=out)


def faiss_search(U, V, k):
    import faiss

    faiss.omp_set_num_threads(1)
    index = faiss.IndexFlatIP(U.shape[1])
    index.add(V)
    return index.search(U, k)[1]


def bench_model(name, model, X, y, pool, repeats):
    t = time.perf_counter()
    top = model.rank(X, k=10, candidates=pool)
    total = time.perf_counter() - t
    # The two parts of rank, timed apart on the same arrays.
    t = time.perf_counter()
    U, V = model._pool_embeddings(X, pool)
    embed_s = time.perf_counter() - t
    U = np.ascontiguousarray(U, dtype=np.float32)
    V = np.ascontiguousarray(V, dtype=np.float32)
    times, _, last = alternate(
        {
            "score": lambda: inner_product_top_k(U, V, 10),
            "matmul": lambda: same_shape_products(U, V, 10),
            "faiss": lambda: faiss_search(U, V, 10),
        },
        repeats,
    )
    ours, peer = last["score"], last["faiss"]
    score_s, matmul_s, faiss_s = (min(times[k]) for k in ("score", "matmul", "faiss"))
    flop = 2.0 * len(X) * len(pool) * U.shape[1]
    gold = np.asarray(y, dtype=object)
    in_pool = float(np.mean(pool[top[:, 0]] == gold))
    same_sets = np.mean([set(a) == set(b) for a, b in zip(ours, peer)])
    return {
        "model": name,
        "dim": int(U.shape[1]),
        "rank_seconds": total,
        "embed_pool_and_contexts_seconds": embed_s,
        "score_seconds": score_s,
        "score_gflops": flop / score_s / 1e9,
        "same_shape_matmul_seconds": matmul_s,
        "matmul_gflops": flop / matmul_s / 1e9,
        "share_of_matmul": matmul_s / score_s,
        "faiss_seconds": faiss_s,
        "speedup_vs_faiss": faiss_s / score_s,
        "same_top10_sets_as_faiss": float(100 * same_sets),
        "times": times,
        "same_top10_as_rank": bool((top == ours).all()),
        "hits@1_in_pool": 100 * in_pool,
        "hits@1_in_candidates": 100 * float(model.score(X, y)),
        "peak_rss_gib_after": peak_rss_mib() / 2**10,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--pool", type=int, default=1_000_000)
    parser.add_argument("--contexts", type=int, default=10_000)
    parser.add_argument("--dims", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    with record_data_files() as files:
        train = load_dialog_babi(task=5, split="trn", data_home=args.data_home)
        test = load_dialog_babi(task=5, split="tst", data_home=args.data_home)
    candidates = train.candidates
    X, y = test.X[: args.contexts], test.y[: args.contexts]
    pool, _ = make_pool(list(candidates), args.pool)
    rows = []
    import faiss

    with threadpool_limits(1):
        for dim in args.dims:
            models = {
                "se": SupervisedEmbeddingRanker(
                    candidates=candidates, embedding_dim=dim, epochs=2, random_state=0
                ),
                "memn2n": MemN2NRanker(
                    candidates=candidates, embedding_dim=dim, epochs=2, random_state=0
                ),
            }
            for name, model in models.items():
                model.fit(train.X, train.y)
                model.rank(X[:2], k=10, candidates=pool[:100])  # compile outside the timing
                row = bench_model(name, model, X, y, pool, args.repeats)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    finish_speed_result(
        "pool-speed",
        {
            "n_contexts": len(X),
            "n_pool": len(pool),
            "faiss": faiss.__version__,
            "block_rows": MAX_BLOCK_ROWS,
            "rows": rows,
        },
        argv=argv,
        seeds=[0],
        files=files,
        data_home=args.data_home,
        output=args.output,
    )
    return 0


def _table(result: dict) -> list[str]:
    lines = [
        f"{result['n_contexts']:,} contexts x {result['n_pool']:,} candidates, one thread; "
        "scoring, the same-shape products alone and faiss alternated (best of "
        f"{len(result['rows'][0]['times']['score'])}):",
        "",
        "| model | dim | rank s | embed s | score s | same-shape products s | share "
        f"| faiss-cpu {result['faiss']} IndexFlatIP s | faiss / ours | same top-10 sets "
        "| peak RSS GiB | hits@1 pool / candidates |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['model']} | {r['dim']} | {r['rank_seconds']:.1f} "
            f"| {r['embed_pool_and_contexts_seconds']:.1f} | {r['score_seconds']:.1f} "
            f"| {r['same_shape_matmul_seconds']:.1f} | {100 * r['share_of_matmul']:.0f}% "
            f"| {r['faiss_seconds']:.1f} | {r['speedup_vs_faiss']:.2f}x "
            f"| {r['same_top10_sets_as_faiss']:.1f}% | {r['peak_rss_gib_after']:.2f} "
            f"| {r['hits@1_in_pool']:.1f} / {r['hits@1_in_candidates']:.1f} |"
        )
    return lines


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=per_row_ratios(
        lambda row: f"{row['model']} d={row['dim']}", ("speedup_vs_faiss", "share_of_matmul")
    ),
    peers=("faiss",),
)


if __name__ == "__main__":
    sys.exit(main())
