"""Scoring per-example candidate lists (answer selection): ``rank_candidates`` against the
pair path and against a scikit-learn pipeline.

An answer-selection workload ranks, for each question, a pool of about two hundred
answers drawn from a collection of tens of thousands. ``rank_candidates`` encodes each
distinct question and answer once and scores the pairs by gathering their rows
(``RankerMixin._pair_scorer``); the pair path (``RankerMixin._scores_by_pairs``, still
the path of the models whose score depends on the pair) encodes both texts of every pair.

The workload is generated (``make_workload``): ``--queries`` questions (2,000), each with a
pool of 201 to 210 answers drawn from ``--texts`` distinct answers (27,000) of about 78
words, words drawn from a Zipf vocabulary; a question holds a few words of its one right
answer and a few frequent words. It is written in two scripts: words separated by spaces
(the models' defaults), and invented characters written without spaces (one to three
characters a word), which every model reads as characters and their bigrams
(``tokenizer="char", ngram_range=(1, 2)``). Timed in one process on one thread,
alternated ``--repeat`` times (best of each kept), for TF-IDF, BM25, supervised embeddings
and MemN2N (both fitted for one epoch: a speed run, not a result):

- ``before``: the pair path on every pair;
- ``new``: ``rank_candidates``, whose scores are checked equal to the pair path's; its first
  call on the fitted model is timed alone before (``first_call_seconds``): BM25 encodes its
  candidates in it, once, and gathers their rows from then on;
- ``sklearn`` (TF-IDF and BM25 rows): scikit-learn's ``TfidfVectorizer`` fitted beforehand
  on the answers (``analyzer="char", ngram_range=(1, 2)`` for the second script),
  transforming the distinct answers and the questions, then one sparse product per pool
  (given as indices into the distinct answers).

With ``--insuranceqa DIR`` (``answers.json.gz``, ``train.json.gz``, ``valid.json.gz`` of
InsuranceQA v2, English), the same on its valid split: 2,000 questions, each pool its right
answers and negatives; TF-IDF and BM25 are fitted with the 27,413 answers as candidates on
the training questions and their first right answer, and P@1 of each pool ranking is
reported (a hit when the best-scored candidate is a right answer; a tie between a right
and a wrong answer counts as a miss).

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python -m benchmarks.candidate_lists_speed \\
        --output benchmarks/results/speed/candidate-lists-speed.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from threadpoolctl import threadpool_limits

from benchmarks import (
    SpeedBenchmark,
    alternate,
    best_times,
    finish_speed_result,
    invented_words,
    per_row_ratios,
)
from irdialog import BM25Ranker, MemN2NRanker, SupervisedEmbeddingRanker, TfidfRanker
from irdialog.base import check_contexts

SCRIPTS = ("spaces", "no-spaces")
MODELS = ("tfidf", "bm25", "se", "memn2n")


def make_workload(script, *, n_texts=27_000, n_queries=2_000, words_per_text=78,
                  vocabulary=30_000, pool=(201, 210), seed=0):  # fmt: skip
    """Answers, questions and pools of the shape of InsuranceQA's valid split.

    Returns
    -------
    texts : list of str, the distinct answers
    queries : list of str
    pools : list of int64 arrays, indices into ``texts``; the right answer is ``gold[i]``
    gold : int64 array
    """
    rng = np.random.default_rng(seed)
    words = invented_words(rng, vocabulary, script)
    p = 1.0 / np.arange(1, vocabulary + 1) ** 1.07  # Zipf
    p /= p.sum()
    sep = " " if script == "spaces" else ""
    lengths = np.clip(rng.normal(words_per_text, 25, n_texts).round(), 10, 250).astype(int)
    flat = rng.choice(vocabulary, int(lengths.sum()), p=p)
    token_ids = np.split(flat, np.cumsum(lengths)[:-1])
    texts = [sep.join(words[ids]) for ids in token_ids]
    gold = rng.integers(0, n_texts, n_queries)
    queries, pools = [], []
    for g in gold:
        own = rng.choice(token_ids[g], rng.integers(2, 6))
        common = rng.choice(vocabulary, rng.integers(1, 5), p=p)
        queries.append(sep.join(words[np.concatenate([own, common])]))
        others = rng.choice(n_texts, rng.integers(*pool, endpoint=True) + 5, replace=False)
        others = others[others != g][: rng.integers(pool[0], pool[1] + 1) - 1]
        pools.append(rng.permutation(np.append(others, g)))
    return texts, queries, pools, gold


def read_insuranceqa(directory):
    """InsuranceQA's answers, training questions and valid pools, as ``make_workload``
    gives them, with the right answers of each valid question (a set of indices)."""
    directory = Path(directory)
    paths = [directory / f"{name}.json.gz" for name in ("answers", "train", "valid")]
    answers, train, valid = (json.loads(gzip.open(p, "rt", encoding="utf-8").read()) for p in paths)
    ids = list(answers)
    row = {a: i for i, a in enumerate(ids)}
    texts = [answers[a]["en"] for a in ids]
    queries, pools, right = [], [], []
    for q in valid.values():
        queries.append(q["en"])
        pools.append(np.array([row[a] for a in q["answers"] + q["negatives"]], dtype=np.int64))
        right.append({row[a] for a in q["answers"]})
    train_X = [q["en"] for q in train.values()]
    train_y = [texts[row[q["answers"][0]]] for q in train.values()]
    return texts, queries, pools, right, (train_X, train_y), paths


def precision_at_1(scores: np.ndarray, pools, right) -> float:
    """P@1 of pool rankings, ties counted against: a hit only when a right answer scores
    strictly above every wrong one."""
    hits = 0
    for s, pool, good in zip(scores, pools, right):
        s = s[: len(pool)]
        is_right = np.fromiter((a in good for a in pool), bool, len(pool))
        hits += (
            bool(is_right.any() and (~is_right).any()) and s[is_right].max() > s[~is_right].max()
        )
    return 100.0 * hits / len(pools)


def build(model: str, script: str, texts):
    """The model of a row: TF-IDF and BM25 with the answers as candidates, the learned
    models on their defaults for one epoch; characters and bigrams without spaces."""
    text = {} if script == "spaces" else {"tokenizer": "char", "ngram_range": (1, 2)}
    if model == "tfidf":
        return TfidfRanker(candidates=texts, **text)
    if model == "bm25":
        return BM25Ranker(candidates=texts, **text)
    if model == "se":
        return SupervisedEmbeddingRanker(epochs=1, random_state=0, **text)
    return MemN2NRanker(epochs=1, random_state=0, **text)


def sklearn_pipeline(vectorizer, texts, queries, pools):
    """Scores of each pool by scikit-learn: the distinct answers and the questions
    transformed, one sparse product per pool."""
    A = vectorizer.transform(texts).tocsr()
    Q = vectorizer.transform(queries).tocsr()
    return [(A[pool] @ Q[i].T).toarray().ravel() for i, pool in enumerate(pools)]


def pair_path(model, X, lists):
    """``rank_candidates``'s scores by the pair path: ``_score_pairs`` on every pair."""
    X = check_contexts(X)
    flat = np.asarray([t for cands in lists for t in cands], dtype=object)
    owner = np.repeat(np.arange(len(X)), [len(c) for c in lists])
    return model._scores_by_pairs(X, owner, flat)


def _flat(scores) -> np.ndarray:
    return np.concatenate([s[np.isfinite(s)] for s in scores])


def bench_workload(name, script, texts, queries, pools, right, fit_data, models, repeat):
    lists = [[texts[j] for j in pool] for pool in pools]
    rows = []
    for model_name in models:
        model = build(model_name, script, texts).fit(*fit_data)
        model.rank_candidates(queries[:2], lists[:2])  # compile outside the timing
        start = time.perf_counter()
        model.rank_candidates(queries, lists)
        first_call = time.perf_counter() - start
        work = {
            "before": lambda model=model: pair_path(model, queries, lists),
            "new": lambda model=model: model.rank_candidates(queries, lists),
        }
        if model_name in ("tfidf", "bm25"):
            text = {} if script == "spaces" else {"analyzer": "char", "ngram_range": (1, 2)}
            vectorizer = TfidfVectorizer(**text).fit(texts)
            work["sklearn"] = lambda v=vectorizer: sklearn_pipeline(v, texts, queries, pools)
        wall, cpu, last = alternate(work, repeat)
        new = last["new"]
        row = {
            "workload": name,
            "script": script,
            "model": model_name,
            **best_times(wall, cpu),
            "first_call_seconds": first_call,
            "equal_to_pair_path": bool(np.array_equal(_flat(new), last["before"])),
            "max_abs_difference": float(np.abs(_flat(new) - last["before"]).max()),
            "p_at_1": precision_at_1(new, pools, right),
        }
        row["speedup_vs_before"] = row["seconds"]["before"] / row["seconds"]["new"]
        if "sklearn" in work:
            row["speedup_vs_sklearn"] = row["seconds"]["sklearn"] / row["seconds"]["new"]
            row["p_at_1_sklearn"] = precision_at_1(last["sklearn"], pools, right)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "times"}), file=sys.stderr)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--texts", type=int, default=27_000)
    parser.add_argument("--scripts", nargs="*", choices=SCRIPTS, default=list(SCRIPTS),
                        help="generated workloads to time (none: only --insuranceqa)")  # fmt: skip
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--insuranceqa", default=None, metavar="DIR",
                        help="also time InsuranceQA's valid split (insuranceqa-en)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    rows, files = [], []
    with threadpool_limits(1):
        for script in args.scripts:
            texts, queries, pools, gold = make_workload(
                script, n_texts=args.texts, n_queries=args.queries
            )
            right = [{g} for g in gold]
            fit_data = (queries, [texts[g] for g in gold])
            rows += bench_workload(
                "generated", script, texts, queries, pools, right, fit_data, args.models,
                args.repeat,
            )  # fmt: skip
        if args.insuranceqa:
            texts, queries, pools, right, fit_data, files = read_insuranceqa(args.insuranceqa)
            rows += bench_workload(
                "insuranceqa-valid", "spaces", texts, queries, pools, right, fit_data,
                args.models, args.repeat,
            )  # fmt: skip
    finish_speed_result(
        "candidate-lists-speed",
        {
            "n_queries": args.queries,
            "n_texts": args.texts,
            "repeat": args.repeat,
            "load_average_before": list(load_before),
            "load_average_after": list(os.getloadavg()),
            "rows": rows,
        },
        argv=argv,
        seeds=[0],
        files=files,
        output=args.output,
    )
    return 0


def _table(result: dict) -> list[str]:
    names = {"tfidf": "TfidfRanker", "bm25": "BM25Ranker", "se": "SupervisedEmbeddingRanker",
             "memn2n": "MemN2NRanker"}  # fmt: skip
    lines = [
        f"`rank_candidates` on {result['n_queries']:,} questions, each with a pool of about "
        "200 answers, one thread; the pair path, `rank_candidates` and scikit-learn's "
        f"TfidfVectorizer pipeline alternated (best of {result['repeat']}). P@1 counts a tie "
        "between a right and a wrong answer as a miss. The first call on a fitted model, timed "
        "alone, also encodes BM25's candidates (once):",
        "",
        "| workload | script | model | pair path s | rank_candidates s | first call s "
        "| speed-up | scikit-learn s | scikit-learn / ours | same scores | P@1 (scikit-learn) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|",
    ]
    for r in result["rows"]:
        s = r["seconds"]
        sk = r.get("speedup_vs_sklearn")
        sklearn = "| | |" if sk is None else f"| {s['sklearn']:.2f} | {sk:.1f}x |"
        same = "yes" if r["equal_to_pair_path"] else f"NO ({r['max_abs_difference']:.1e})"
        p1 = f"{r['p_at_1']:.1f}"
        if "p_at_1_sklearn" in r:
            p1 += f" ({r['p_at_1_sklearn']:.1f})"
        first = r.get("first_call_seconds")
        first = "" if first is None else f"{first:.2f}"
        lines.append(
            f"| {r['workload']} | {r['script']} | {names[r['model']]} | {s['before']:.1f} "
            f"| {s['new']:.2f} | {first} | {r['speedup_vs_before']:.0f}x {sklearn} {same} "
            f"| {p1} |"
        )
    return lines


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=per_row_ratios(
        lambda row: f"{row['workload']} {row['script']} {row['model']}",
        ("speedup_vs_before", "speedup_vs_sklearn"),
    ),
)


if __name__ == "__main__":
    sys.exit(main())
