"""Filtered BM25 queries: ``BM25Ranker.rank(..., allowed=mask)`` against the same queries
unfiltered, and against bm25s's ``weight_mask``.

A corpus of ``--documents`` generated passages (``benchmarks.sharded_index``'s: words drawn
from a Zipf law over ``--vocabulary`` words, 10 to 60 a passage; seed 0) is indexed by
``BM25Ranker(candidates=docs)`` and by bm25s (``BM25(backend="numba")``, the same variant:
method "lucene", k1 1.5, b 0.75; ``bm25s.tokenize`` reads the words as ours do). Filters:
for each ``--shares`` value, a random mask holding that share of the documents (seed 2), the
same for every query (bm25s's ``weight_mask`` takes one mask for all queries). Timed, from
the query texts, top ``-k``, one thread (``NUMBA_NUM_THREADS=1``, ``n_threads=1``), every
side in turn (``alternate``, the best of ``--repeat`` rounds):

- ``irdialog``: ``rank(queries, k)``, unfiltered, and ``rank(queries, k, allowed=mask)``;
- ``bm25s``: ``retrieve(tokenize(queries), k)``, unfiltered and with ``weight_mask=mask``.

Checked: our filtered top k equals the numpy reference (every allowed document's score from
``decision_function``, a stable sort) on ``--checked`` queries; and, with a filter of
``k // 2`` documents, how many returned ids each side has outside the filter (bm25s's mask
sets a masked document's score to 0 and can still return it; ours returns the allowed set
only, padded with -1).

Usage::

    NUMBA_NUM_THREADS=1 python -m benchmarks.filtered_queries --documents 1000000 \\
        --output benchmarks/results/speed/filtered-queries.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if __name__ == "__main__":  # one thread a process, before numpy loads its BLAS (not on import)
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from benchmarks import (  # noqa: E402
    SpeedBenchmark,
    alternate,
    best_times,
    finish_speed_result,
    per_row_ratios,
    table_lines,
)
from benchmarks.sharded_index import make_queries, words, zipf_p  # noqa: E402


def make_corpus(n: int, vocabulary: int, seed: int = 0) -> list[str]:
    """``n`` passages of Zipf words (``benchmarks.sharded_index``'s generator, in memory)."""
    rng = np.random.default_rng(seed)
    vocab, p = words(vocabulary), zipf_p(vocabulary)
    lengths = rng.integers(10, 61, size=n)
    drawn = vocab[rng.choice(vocabulary, size=int(lengths.sum()), p=p)]
    ends = np.cumsum(lengths)
    return [" ".join(drawn[e - n_w : e]) for e, n_w in zip(ends, lengths)]


def reference_top_k(scores: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """The k best allowed documents of each row, ties to the lower index (numpy)."""
    ids = np.flatnonzero(mask)
    order = np.argsort(-scores[:, ids], axis=1, kind="stable")[:, :k]
    return ids[order]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--vocabulary", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.01])
    parser.add_argument("--checked", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    import bm25s

    from irdialog import BM25Ranker

    load_before = os.getloadavg()
    t = time.perf_counter()
    docs = make_corpus(args.documents, args.vocabulary)
    queries = make_queries(args.queries, args.vocabulary)
    print(f"{len(docs):,} passages in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    t = time.perf_counter()
    model = BM25Ranker(candidates=docs).fit(["x"], [docs[0]])
    index_seconds = {"irdialog": time.perf_counter() - t}
    assert len(model.candidates_) == len(docs)  # no repeated passage: ids are positions
    t = time.perf_counter()
    retriever = bm25s.BM25(backend="numba")
    retriever.index(bm25s.tokenize(docs, show_progress=False), show_progress=False)
    index_seconds["bm25s"] = time.perf_counter() - t

    def bm25s_search(texts, mask=None):
        tokens = bm25s.tokenize(texts, show_progress=False)
        return retriever.retrieve(tokens, k=args.k, n_threads=1, show_progress=False,
                                  weight_mask=mask).documents  # fmt: skip

    rng = np.random.default_rng(2)
    rows = []
    for share in args.shares:
        mask = rng.random(len(docs)) < share
        weights = mask.astype(np.float32)
        work = {
            "irdialog": lambda: model.rank(queries, args.k),
            "irdialog filtered": lambda m=mask: model.rank(queries, args.k, allowed=m),
            "bm25s": lambda: bm25s_search(queries),
            "bm25s weight_mask": lambda w=weights: bm25s_search(queries, w),
        }
        # compile, caches: untimed
        model.rank(queries[:50], args.k, allowed=mask)
        model.rank(queries[:50], args.k)
        bm25s_search(queries[:50], weights)
        bm25s_search(queries[:50])
        wall, cpu, last = alternate(work, args.repeat)
        checked = queries[: args.checked]
        want = reference_top_k(model.decision_function(checked), mask, args.k)
        timed = best_times(wall, cpu)
        seconds = timed["seconds"]
        row = {
            "share": share,
            "n_allowed": int(mask.sum()),
            **timed,
            "queries_per_second": {side: len(queries) / s for side, s in seconds.items()},
            "filtered_over_unfiltered": seconds["irdialog filtered"] / seconds["irdialog"],
            "filtered_speedup_vs_bm25s_weight_mask": (
                seconds["bm25s weight_mask"] / seconds["irdialog filtered"]
            ),
            "equal_to_reference": bool(
                np.array_equal(last["irdialog filtered"][: len(checked)], want)
            ),
            "bm25s_outside_filter": int((~mask[last["bm25s weight_mask"][: len(checked)]]).sum()),
        }
        rows.append(row)
        print({k: v for k, v in row.items() if k != "times"}, file=sys.stderr)
    # A filter smaller than k: ours returns it whole and nothing else; bm25s fills with
    # masked documents at score 0.
    few = np.zeros(len(docs), dtype=bool)
    few[rng.choice(len(docs), max(1, args.k // 2), replace=False)] = True
    ours = model.rank(queries[: args.checked], args.k, allowed=few)
    theirs = bm25s_search(queries[: args.checked], few.astype(np.float32))
    small = {
        "n_allowed": int(few.sum()),
        "irdialog_width": int(ours.shape[1]),
        "irdialog_outside_filter": int(((ours >= 0) & ~few[np.maximum(ours, 0)]).sum()),
        "bm25s_outside_filter": int((~few[theirs]).sum()),
        "n_queries": len(ours),
    }
    fields = {
        "n_documents": len(docs),
        "vocabulary": args.vocabulary,
        "n_queries": len(queries),
        "k": args.k,
        "bm25s_version": bm25s.__version__,
        "index_seconds": index_seconds,
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
        "rows": rows,
        "filter_smaller_than_k": small,
    }
    return finish_speed_result(
        "filtered-queries", fields, argv=sys.argv[1:] if argv is None else argv, seeds=[0, 1, 2],
        output=args.output, libraries={"bm25s": bm25s.__version__},
    )  # fmt: skip


def _row(r: dict) -> list[str]:
    qps = r["queries_per_second"]
    return [
        f"{100 * r['share']:g}%",
        f"{r['n_allowed']:,}",
        *(f"{qps[side]:,.0f}" for side in ("irdialog", "irdialog filtered")),
        f"{r['filtered_over_unfiltered']:.2f}",
        *(f"{qps[side]:,.0f}" for side in ("bm25s", "bm25s weight_mask")),
        f"{r['filtered_speedup_vs_bm25s_weight_mask']:.1f}x",
        "yes" if r["equal_to_reference"] else "NO",
    ]


def _table(result: dict) -> list[str]:
    lines = table_lines(
        f"BM25 top {result['k']} over {result['n_documents']:,} generated passages, "
        f"{result['n_queries']:,} queries from text, one thread (bm25s "
        f"{result['bm25s_version']}, numba backend):",
        ["filter", "allowed", "irdialog q/s", "filtered q/s", "filtered / unfiltered time",
         "bm25s q/s", "bm25s weight_mask q/s", "ours / bm25s, filtered", "exact"],
        "lrrrrrrrl",
        map(_row, result["rows"]),
    )  # fmt: skip
    small = result["filter_smaller_than_k"]
    lines += [
        "",
        f"A filter of {small['n_allowed']} documents, k {result['k']}, {small['n_queries']} "
        f"queries: ids outside the filter returned, irdialog {small['irdialog_outside_filter']}, "
        f"bm25s {small['bm25s_outside_filter']}.",
    ]
    return lines


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=per_row_ratios(
        lambda row: f"filter {row['share']:g}",
        ("filtered_over_unfiltered", "filtered_speedup_vs_bm25s_weight_mask"),
    ),
    peers=("bm25s",),
)


if __name__ == "__main__":
    main()
