"""Sparse retrieval speed: TfidfRanker.rank (inverted index, running top k) against bm25s.

The corpus is the Movie Dialog knowledge base's unique sentences (~84k) as candidates, the
queries the 9,952 questions of Movie Dialog task 1's test split, as in issue 15. The large
corpus (``--scale 10``, ~840k) adds nine renamed copies of every sentence: in copy j each
word found in at most ``--rare-df`` sentences (the entities) becomes ``word~j``, so the
copies hold new entities that no query names, while the relation and other common words
get postings ten times as long, as a bigger knowledge base would.

Everything runs on one thread (numba, BLAS, bm25s's ``n_threads=1``), in one process,
after a warm-up (numba compilation is not timed). Timed:

- index: ``TfidfRanker(candidates=corpus).fit`` (tokenisation and TF-IDF of the corpus)
  against ``bm25s.tokenize`` + ``BM25().index``;
- queries: ``TfidfRanker.rank(queries, k=10)`` (from raw text) against
  ``bm25s.tokenize`` + ``retrieve(k=10, n_threads=1)``;
- rank_bm25's ``BM25Okapi.get_top_n`` on a sample of ``--rank-bm25-queries`` queries.

The top 10 of ``rank`` is checked against the dense path (``decision_function`` + the top
k of ``RankerMixin``) on ``--check-queries`` queries. The peers (bm25s, rank_bm25) are
benchmark-only: ``pip install "irdialog[peers]"``.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python -m benchmarks.retrieval_speed \\
        --data-home ../shared/data --scale 1 10 \\
        --output benchmarks/results/speed/retrieval-speed.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import finish_speed_result
from irdialog import TfidfRanker
from irdialog.base import _top_k
from irdialog.datasets import load_movie_dialog, load_movie_kb, record_data_files
from irdialog.text import tokenize


def grow(sentences: list[str], scale: int, rare_df: int) -> list[str]:
    """The corpus and ``scale - 1`` copies with their rare words (df <= rare_df) renamed."""
    if scale == 1:
        return sentences
    df = Counter(w for s in sentences for w in set(s.split()))
    out = list(sentences)
    for j in range(1, scale):
        out.extend(
            " ".join(f"{w}~{j}" if df[w] <= rare_df else w for w in s.split()) for s in sentences
        )
    return out


def _timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def bench_irdialog(corpus, queries, check_queries):
    model = TfidfRanker(candidates=corpus)
    _, index_s = _timed(lambda: model.fit(queries[:1], corpus[:1]))
    model.rank(queries[:2], k=10)  # compile (or load) the kernel outside the timing
    top, query_s = _timed(lambda: model.rank(queries, k=10))
    sample = queries[:check_queries]
    dense = np.vstack(
        [_top_k(model.decision_function(sample[i : i + 64]), 10) for i in range(0, len(sample), 64)]
    )
    return {
        "index_seconds": index_s,
        "queries_per_second": len(queries) / query_s,
        "same_top10_as_dense": bool((top[: len(sample)] == dense).all()),
        "checked_queries": len(sample),
        "n_candidates": len(model.candidates_),
        "postings_nnz": int(model.candidate_postings_.nnz),
    }


def _bm25s_tokens(texts):
    import bm25s

    # The same words as irdialog's tokenizer, so both index the same vocabulary.
    return bm25s.tokenize(texts, stopwords=None, show_progress=False, token_pattern=r"(?u)\S+")


def bench_bm25s(corpus, queries):
    import bm25s

    lowered = [" ".join(tokenize(s)) for s in corpus]
    retriever = bm25s.BM25()

    def index():
        retriever.index(_bm25s_tokens(lowered), show_progress=False)

    _, index_s = _timed(index)

    def search():
        q = _bm25s_tokens([" ".join(tokenize(s)) for s in queries])
        return retriever.retrieve(q, k=10, n_threads=1, show_progress=False)

    retriever.retrieve(_bm25s_tokens(queries[:2]), k=10, n_threads=1, show_progress=False)
    _, query_s = _timed(search)
    return {
        "version": bm25s.__version__,
        "index_seconds": index_s,
        "queries_per_second": len(queries) / query_s,
    }


def bench_rank_bm25(corpus, queries):
    from importlib.metadata import version

    from rank_bm25 import BM25Okapi

    docs = [tokenize(s) for s in corpus]
    model, index_s = _timed(lambda: BM25Okapi(docs))
    _, query_s = _timed(lambda: [model.get_top_n(tokenize(q), docs, n=10) for q in queries])
    return {
        "version": version("rank-bm25"),
        "index_seconds": index_s,
        "queries_per_second": len(queries) / query_s,
        "queries": len(queries),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--scale", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--rare-df", type=int, default=20)
    parser.add_argument("--check-queries", type=int, default=500)
    parser.add_argument("--rank-bm25-queries", type=int, default=50)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    with record_data_files() as files:
        kb = load_movie_kb(args.data_home)
        test = load_movie_dialog(1, "test", args.data_home)
    base = list(dict.fromkeys(kb.sentences))
    queries = [ctx.query for ctx in test.X]
    rows = []
    with threadpool_limits(1):
        for scale in args.scale:
            corpus = grow(base, scale, args.rare_df)
            row = {"scale": scale, "n_documents": len(corpus), "n_queries": len(queries)}
            row["irdialog"] = bench_irdialog(corpus, queries, args.check_queries)
            row["bm25s"] = bench_bm25s(corpus, queries)
            if args.rank_bm25_queries:
                row["rank_bm25"] = bench_rank_bm25(corpus, queries[: args.rank_bm25_queries])
            row["speedup_vs_bm25s"] = (
                row["irdialog"]["queries_per_second"] / row["bm25s"]["queries_per_second"]
            )
            rows.append(row)
            print(json.dumps(row, indent=1), file=sys.stderr)
    finish_speed_result(
        "retrieval-speed",
        {"rows": rows},
        argv=argv,
        seeds=[],
        files=files,
        data_home=args.data_home,
        output=args.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
