"""Sparse retrieval speed: BM25Ranker and TfidfRanker against bm25s and rank_bm25.

Corpora (``--corpora``), each de-duplicated once and given as the same list to every side:

- ``kb``: the Movie Dialog knowledge base's unique sentences (84,029);
- ``kb10``, ``kb100``: that KB grown ten- and a hundredfold: copy j of every sentence has
  each word found in at most ``--rare-df`` sentences (the entities) renamed ``word_j`` (one
  word to every tokenizer here, bm25s's ``\\w\\w+`` included), so
  the copies hold new entities that no query names while the relation and common words get
  postings ten or a hundred times as long, as a bigger knowledge base would;
- ``ubuntu``: the responses of the generated Ubuntu corpus (``python -m
  benchmarks.make_ubuntu_corpus --out DIR``, ``--ubuntu-home DIR``) and the true responses
  of its test split.

Queries: the 9,952 questions of Movie Dialog task 1's test split for the KB corpora (a hit:
a top-10 sentence holds one of the gold answers, case-insensitively), the contexts of the
Ubuntu test split for ``ubuntu`` (a hit: its true response is in the top 10).
``--max-queries`` caps their number on ``kb`` and ``kb10``, ``--large-queries`` (2,000) on
``kb100`` and ``ubuntu``.

Each side runs in a process of its own (so that its index time and peak memory are its own),
with BLAS on one thread:

- ``bm25``: ``BM25Ranker(candidates=docs)`` (method "lucene", k1 1.5, b 0.75: bm25s's
  defaults), ``rank(queries, k=10, n_jobs=...)`` from raw text;
- ``bm25-stop``: the same with ``stop_words=`` bm25s's English list, the one its tokenizer
  drops by default (BM25Ranker has no list built in);
- ``tfidf``: ``TfidfRanker(candidates=docs)``, the same calls;
- ``bm25s``: bm25s at its fastest documented setting, ``BM25(backend="numba")``, with its
  default tokenizer (``bm25s.tokenize``: lower case, ``\\w\\w+`` words, English stop words
  removed) inside the timed loop, ``retrieve(k=10, n_threads=...)``;
- ``rank_bm25``: ``BM25Okapi.get_top_n`` over irdialog's tokens, on ``--rank-bm25-queries``
  queries (it scores every document in numpy for every query).

Timed: the index (tokenising included) and the queries (tokenising included, after a
warm-up on 100 queries that compiles the numba kernels), for each ``--n-jobs`` (irdialog's
``n_jobs`` threads, bm25s's ``n_threads``), the settings alternated twice and the best time
of each kept. Peak memory: the process's peak resident memory
while indexing, less its resident memory before (``/proc/self/clear_refs``). For irdialog's
sides also: the top 10 checked against exhaustive scoring on every query, the share of the
query's postings scored (MaxScore for queries of up to 16 terms, a dense accumulator reading
every posting for longer ones), the kernel alone against exhaustive scoring, and for
``bm25`` the index saved (``irdialog.persist.save(compress=False)``) and loaded memory-mapped.

The peers are benchmark-only: ``pip install "irdialog[peers]"``.

Usage::

    python -m benchmarks.make_ubuntu_corpus --out /tmp/ubuntu-1m
    python -m benchmarks.retrieval_speed --data-home DIR --ubuntu-home /tmp/ubuntu-1m \\
        --corpora kb kb10 kb100 ubuntu --output benchmarks/results/speed/retrieval-speed.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks import SpeedBenchmark

SIDES = ("bm25", "bm25-stop", "tfidf", "bm25s", "rank_bm25")
SCALES = {"kb": 1, "kb10": 10, "kb100": 100}


# -- corpora ---------------------------------------------------------------------------------


_WORD = re.compile(r"\w+")


def grow(sentences: list[str], scale: int, rare_df: int) -> list[str]:
    """The corpus and ``scale - 1`` copies with their rare words (runs of word characters in
    at most ``rare_df`` sentences) renamed ``word_j`` in copy j."""
    if scale == 1:
        return sentences
    df = Counter(w for s in sentences for w in set(_WORD.findall(s)))
    out = list(sentences)
    for j in range(1, scale):
        suffix = f"_{j}"

        def rename(m, suffix=suffix):
            return m.group() + suffix if df[m.group()] <= rare_df else m.group()

        out.extend(_WORD.sub(rename, s) for s in sentences)
    return out


def load_corpus(name: str, args) -> tuple[list[str], list[str], list]:
    """(documents, queries, gold): gold[i] is a set of answer strings (KB) or the index of
    the true response (Ubuntu)."""
    if name in SCALES:
        from irdialog.datasets import load_movie_dialog, load_movie_kb

        kb = load_movie_kb(args.data_home)
        test = load_movie_dialog(1, "test", args.data_home)
        docs = list(
            dict.fromkeys(grow(list(dict.fromkeys(kb.sentences)), SCALES[name], args.rare_df))
        )
        queries = [ctx.query for ctx in test.X]
        gold = [{a.strip().lower() for a in answer.split(",")} for answer in test.y]
    elif name == "ubuntu":
        home = Path(args.ubuntu_home) / "ubuntu"
        csv.field_size_limit(1 << 24)
        with open(home / "train.csv", newline="", encoding="utf-8") as fh:
            docs = [row["Utterance"] for row in csv.DictReader(fh)]
        with open(home / "test.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        queries = [r["Context"] for r in rows]
        truths = [r["Ground Truth Utterance"] for r in rows]
        docs = list(dict.fromkeys(docs + truths))
        position = {d: i for i, d in enumerate(docs)}
        gold = [position[t] for t in truths]
    else:
        raise ValueError(f"unknown corpus {name!r}")
    cap = args.large_queries if name in ("kb100", "ubuntu") else args.max_queries
    n = min(len(queries), cap) if cap else len(queries)
    return docs, queries[:n], gold[:n]


def gold_in_top10(top, docs, gold) -> float:
    """Percent of queries with a hit in their top 10 (see the module docstring)."""
    hits = 0
    for row, g in zip(top, gold):
        if isinstance(g, set):
            hits += any(a in docs[d].lower() for d in row[:10] for a in g)
        else:
            hits += g in row[:10]
    return 100.0 * hits / len(gold)


# -- measuring ----------------------------------------------------------------------------------


def _rss_gib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # resets VmHWM, the peak resident set (Linux >= 4.0)


def _peak_gib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    raise RuntimeError("no VmHWM in /proc/self/status")


def _timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def _alternated(search, n_jobs_list, n_queries, out, rounds=2):
    """Time ``search(n_jobs)`` for every n_jobs, the settings alternated over ``rounds``
    rounds; the best time of each gives ``out["queries_per_second_<n_jobs>"]``."""
    best = {}
    for _ in range(rounds):
        for n_jobs in n_jobs_list:
            value, seconds = _timed(lambda n_jobs=n_jobs: search(n_jobs))
            best[n_jobs] = min(seconds, best.get(n_jobs, np.inf))
    for n_jobs, seconds in best.items():
        out[f"queries_per_second_{n_jobs}"] = n_queries / seconds
    return value


def _index_measured(build):
    _reset_peak()
    before = _rss_gib()
    value, seconds = _timed(build)
    return value, seconds, _peak_gib() - before


def run_irdialog(side, docs, queries, gold, n_jobs_list) -> dict:
    from irdialog import BM25Ranker, TfidfRanker

    if side == "tfidf":
        make = TfidfRanker
    elif side == "bm25-stop":
        from bm25s.stopwords import STOPWORDS_EN

        def make(candidates):
            return BM25Ranker(candidates=candidates, stop_words=STOPWORDS_EN)
    else:
        make = BM25Ranker
    model, index_s, index_gib = _index_measured(
        lambda: make(candidates=docs).fit(queries[:1], docs[:1])
    )
    out = {"index_seconds": index_s, "index_peak_gib": index_gib, "n_documents": len(docs)}
    assert len(model.candidates_) == len(docs), "the corpus was de-duplicated beforehand"
    model.rank(queries[:100], k=10)  # numba: load or compile the kernels

    def search(n_jobs):
        return model.rank(queries, k=10, n_jobs=n_jobs)  # tokenises every query

    top = _alternated(search, n_jobs_list, len(queries), out)
    out["gold_in_top10"] = gold_in_top10(top, docs, gold)
    # The kernel alone, pruned against exhaustive, on the encoded queries.
    if side != "tfidf":
        Q = model._queries(queries)[1]
    else:
        from irdialog.retrieval._tfidf import _unit_rows

        Q = _unit_rows(model._inputs(queries)[1])
    (pruned, stats), pruned_s = _timed(lambda: model.index_.top_k(Q, 10, return_stats=True))
    exhaustive, exhaustive_s = _timed(lambda: model.index_.top_k(Q, 10, algorithm="exhaustive"))
    out.update(
        same_top10_as_exhaustive=bool((pruned == exhaustive).all() and (pruned == top).all()),
        checked_queries=len(queries),
        postings_per_query=float(stats["postings"].mean()),
        scored_per_query=float(stats["scored"].mean()),
        scored_share=float(stats["scored"].sum() / max(1, stats["postings"].sum())),
        kernel_pruned_seconds=pruned_s,
        kernel_exhaustive_seconds=exhaustive_s,
        n_postings=model.index_.n_postings,
    )
    if side == "bm25":
        out.update(_save_and_load(model, queries[:1000], top[:1000]))
    return out


def _save_and_load(model, queries, expected) -> dict:
    from irdialog.persist import load, save

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bm25.npz"
        _, save_s = _timed(lambda: save(model, path, compress=False))
        loaded, load_s = _timed(lambda: load(path, mmap_mode="r"))
        top, first_s = _timed(lambda: loaded.rank(queries, k=10))
        return {
            "file_gib": path.stat().st_size / 2**30,
            "save_seconds": save_s,
            "load_seconds": load_s,
            "first_queries_after_load_seconds": first_s,
            "loaded_ranks_equal": bool((top == expected).all()),
            "memory_mapped": type(loaded.index_.docs).__name__,
        }


def run_bm25s(docs, queries, gold, n_jobs_list) -> dict:
    import bm25s

    retriever = bm25s.BM25(backend="numba")

    def index():
        retriever.index(bm25s.tokenize(docs, show_progress=False), show_progress=False)

    _, index_s, index_gib = _index_measured(index)
    out = {
        "version": bm25s.__version__,
        "index_seconds": index_s,
        "index_peak_gib": index_gib,
        "n_documents": len(docs),
        "setting": 'BM25(backend="numba"), bm25s.tokenize defaults',
    }

    def search(texts, n_threads):
        tokens = bm25s.tokenize(texts, show_progress=False)
        return retriever.retrieve(tokens, k=10, n_threads=n_threads, show_progress=False)

    for n_jobs in n_jobs_list:
        search(queries[:100], n_jobs)  # numba: compile
    top, _ = _alternated(lambda n_jobs: search(queries, n_jobs), n_jobs_list, len(queries), out)
    out["gold_in_top10"] = gold_in_top10(top, docs, gold)
    return out


def run_rank_bm25(docs, queries, gold, n_queries) -> dict:
    from importlib.metadata import version

    from rank_bm25 import BM25Okapi

    from irdialog.text import tokenize

    model, index_s, index_gib = _index_measured(lambda: BM25Okapi([tokenize(d) for d in docs]))
    sample = queries[:n_queries]

    def search():
        return [np.argsort(-model.get_scores(tokenize(q)), kind="stable")[:10] for q in sample]

    top, seconds = _timed(search)
    return {
        "version": version("rank-bm25"),
        "index_seconds": index_s,
        "index_peak_gib": index_gib,
        "queries_per_second_1": len(sample) / seconds,
        "queries": len(sample),
        "gold_in_top10_on_sample": gold_in_top10(top, docs, gold[: len(sample)]),
    }


def child(args) -> None:
    from threadpoolctl import threadpool_limits

    docs, queries, gold = load_corpus(args.child_corpus, args)
    with threadpool_limits(1):
        if args.child_side in ("bm25", "bm25-stop", "tfidf"):
            out = run_irdialog(args.child_side, docs, queries, gold, args.n_jobs)
        elif args.child_side == "bm25s":
            out = run_bm25s(docs, queries, gold, args.n_jobs)
        else:
            out = run_rank_bm25(docs, queries, gold, args.rank_bm25_queries)
    out["n_queries"] = len(queries)
    print(json.dumps(out))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--ubuntu-home", default=None)
    parser.add_argument("--corpora", nargs="+", default=["kb", "kb10"])
    parser.add_argument("--sides", nargs="+", default=list(SIDES), choices=SIDES)
    parser.add_argument("--rare-df", type=int, default=20)
    parser.add_argument("--max-queries", type=int, default=0, help="0: all")
    parser.add_argument(
        "--large-queries", type=int, default=2000, help="queries on kb100 and ubuntu (0: all)"
    )
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rank-bm25-queries", type=int, default=20)
    parser.add_argument("--rank-bm25-corpora", nargs="+", default=["kb", "kb10"])
    parser.add_argument("--output", default=None)
    parser.add_argument("--child-side", help=argparse.SUPPRESS)
    parser.add_argument("--child-corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_side:
        child(args)
        return 0

    from benchmarks import finish_speed_result
    from irdialog.datasets import record_data_files

    with record_data_files() as files:  # the files the children read, for the provenance
        if any(c in SCALES for c in args.corpora):
            from irdialog.datasets import load_movie_dialog, load_movie_kb

            load_movie_kb(args.data_home), load_movie_dialog(1, "test", args.data_home)
    rows = []
    passed = [a for a in (argv if argv is not None else sys.argv[1:])]
    for corpus in args.corpora:
        row = {"corpus": corpus}
        for side in args.sides:
            if side == "rank_bm25" and corpus not in args.rank_bm25_corpora:
                continue
            command = [
                sys.executable,
                "-m",
                "benchmarks.retrieval_speed",
                *passed,
                "--child-side",
                side,
                "--child-corpus",
                corpus,
            ]
            print(f"+ {corpus} {side}", file=sys.stderr, flush=True)
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                sys.stderr.write(done.stderr)
                raise SystemExit(f"{side} on {corpus} failed")
            row[side] = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps(row[side]), file=sys.stderr, flush=True)
        first = next(v for k, v in row.items() if k != "corpus")
        row["n_documents"], row["n_queries"] = first.get("n_documents"), first["n_queries"]
        rows.append(row)
    finish_speed_result(
        "retrieval-speed",
        {"n_jobs": args.n_jobs, "rare_df": args.rare_df, "rows": rows},
        argv=argv,
        seeds=[],
        files=files,
        data_home=args.data_home,
        output=args.output,
    )
    return 0


def _table(result: dict) -> list[str]:
    names = {
        "bm25": "BM25Ranker",
        "bm25-stop": "BM25Ranker, bm25s's stop words",
        "tfidf": "TfidfRanker",
        "bm25s": "bm25s (numba)",
    }
    jobs = result["n_jobs"]
    rows = result["rows"]

    def get(row, side, key, fmt="{:,.0f}"):
        value = row.get(side, {}).get(key)
        return "" if value is None else fmt.format(value)

    def ratio(row, side, key):
        ours, peer = row.get(side, {}).get(key), row.get("bm25s", {}).get(key)
        return "" if ours is None or peer is None else f"{ours / peer:.2f}x"

    head = "| corpus | documents | queries |"
    q1 = "queries_per_second_1"
    lines = [
        "Queries per second (tokenising included), one thread:",
        "",
        head + " BM25Ranker | TfidfRanker | bm25s (numba) | BM25Ranker / bm25s "
        "| TfidfRanker / bm25s | rank_bm25 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['n_documents']:,} | {r['n_queries']:,} "
            f"| {get(r, 'bm25', q1)} | {get(r, 'tfidf', q1)} | {get(r, 'bm25s', q1)} "
            f"| {ratio(r, 'bm25', q1)} | {ratio(r, 'tfidf', q1)} "
            f"| {get(r, 'rank_bm25', q1, '{:.1f}')} |"
        )
    for n in (j for j in jobs if j != 1):
        key = f"queries_per_second_{n}"
        lines += [
            "",
            f"{n} threads (irdialog `n_jobs={n}`, bm25s `n_threads={n}`): queries per "
            f"second, and over one thread:",
            "",
            "| corpus | BM25Ranker | TfidfRanker | bm25s (numba) | BM25Ranker / bm25s |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in rows:
            cells = []
            for side in ("bm25", "tfidf", "bm25s"):
                one, many = r.get(side, {}).get("queries_per_second_1"), r.get(side, {}).get(key)
                cells.append("" if many is None else f"{many:,.0f} ({many / one:.2f}x)")
            lines.append(f"| {r['corpus']} | {' | '.join(cells)} | {ratio(r, 'bm25', key)} |")
    lines += [
        "",
        "Gold answer in the top 10 (%), index time (s) and peak memory while indexing "
        "(GiB over the process before it):",
        "",
        "| corpus | gold in top 10: BM25Ranker / TfidfRanker / bm25s | index s: BM25Ranker "
        "/ TfidfRanker / bm25s | index GiB: BM25Ranker / TfidfRanker / bm25s |",
        "|---|---|---|---|",
    ]
    for r in rows:
        sides = ("bm25", "tfidf", "bm25s")
        lines.append(
            f"| {r['corpus']} | {' / '.join(get(r, s, 'gold_in_top10', '{:.1f}') for s in sides)} "
            f"| {' / '.join(get(r, s, 'index_seconds', '{:.1f}') for s in sides)} "
            f"| {' / '.join(get(r, s, 'index_peak_gib', '{:.2f}') for s in sides)} |"
        )
    lines += [
        "",
        "MaxScore against exhaustive scoring (the kernel alone, one thread, all the "
        "queries): postings per query, the share scored, kernel seconds:",
        "",
        "| corpus | model | postings / query | scored / query | share | pruned s "
        "| exhaustive s | same top 10 |",
        "|---|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        for side in ("bm25", "bm25-stop", "tfidf"):
            x = r.get(side)
            if x is None:
                continue
            lines.append(
                f"| {r['corpus']} | {names[side]} | {x['postings_per_query']:,.0f} "
                f"| {x['scored_per_query']:,.0f} | {100 * x['scored_share']:.1f}% "
                f"| {x['kernel_pruned_seconds']:.2f} | {x['kernel_exhaustive_seconds']:.2f} "
                f"| {'yes' if x['same_top10_as_exhaustive'] else 'NO'} ({x['checked_queries']:,}) |"
            )
    lines += [
        "",
        "BM25Ranker saved with `irdialog.persist.save(compress=False)` and loaded "
        'memory-mapped (`load(path, mmap_mode="r")`):',
        "",
        "| corpus | file GiB | save s | load s | first 1,000 queries after load s | same ranks |",
        "|---|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        x = r.get("bm25", {})
        if "load_seconds" in x:
            lines.append(
                f"| {r['corpus']} | {x['file_gib']:.2f} | {x['save_seconds']:.1f} "
                f"| {x['load_seconds']:.2f} | {x['first_queries_after_load_seconds']:.2f} "
                f"| {'yes' if x['loaded_ranks_equal'] else 'NO'} |"
            )
    return lines


def _ratios(r):
    out = {}
    for row in r["rows"]:
        for n in r.get("n_jobs", [1]):
            key = f"queries_per_second_{n}"
            peer = row.get("bm25s", {}).get(key)
            for side in ("bm25", "tfidf"):
                ours = row.get(side, {}).get(key)
                if ours is not None and peer:
                    out[f"{row['corpus']} {side} / bm25s at n_jobs={n}"] = ours / peer
    return out


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(table=_table, ratios=_ratios, peers=("bm25s", "rank_bm25"))


if __name__ == "__main__":
    sys.exit(main())
