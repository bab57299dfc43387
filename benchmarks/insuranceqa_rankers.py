"""Learned rankers against BM25 on InsuranceQA (English): answer selection in pools.

Each validation question is ranked against its pool (its right answers and the 200 wrong
answers retrieved for it, which share its words) with ``rank_candidates``. Printed per
model: P@1 and MRR with ties counted against the model (a right answer tied with a wrong
one ranks after it), P@1 at its expected value under a random tie-break, MAP (ties
against the model), and the seconds of the fit and of ranking the pools, on one thread:
wall-clock and the process's CPU time (the fairer figure on a shared machine).
Every choice is made on the train and valid splits; the test split is not read.

The data (GPL-3.0) are read from ``--data-home``, never bundled: ``insuranceqa-en/``
holding ``answers.json.gz`` (``{id: {"en": text}}``) and ``train.json.gz`` /
``valid.json.gz`` (``{qid: {"en": question, "answers": [ids], "negatives": [ids]}}``).

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python -m benchmarks.insuranceqa_rankers --data-home DIR [--models bm25,ltr]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np

from irdialog import BM25Ranker, SupervisedEmbeddingRanker, TfidfRanker
from irdialog.ensemble import FusionRanker, LearningToRankRanker
from irdialog.metrics import gold_ranks

SE = dict(embedding_dim=64, epochs=10, random_state=0)
# With pools of hard negatives a larger margin pays (valid P@1 of se-pools: margin 0.01,
# the default, 12.35; 0.1, 14.10)
SE_POOLS = dict(SE, margin=0.1)


# -- data -------------------------------------------------------------------------------------


def _read(path: Path) -> dict:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path} not found: --data-home must hold insuranceqa-en/ with answers.json.gz, "
            "train.json.gz and valid.json.gz."
        ) from None
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a gzipped JSON file ({err}).") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of records, got {type(data).__name__}.")
    return data


def read_split(home: Path, split: str, answers: dict) -> dict:
    """Questions, right answers (texts) and pools (right answers first) of one split."""
    path = home / f"{split}.json.gz"
    X, right, pools = [], [], []
    for qid, q in _read(path).items():
        try:
            text, ids, negatives = q["en"], list(q["answers"]), list(q["negatives"])
            rights = [answers[i] for i in ids]
            wrong = [answers[i] for i in dict.fromkeys(negatives) if i not in set(ids)]
        except (KeyError, TypeError) as err:
            raise ValueError(f"{path}, question {qid!r}: missing or unknown {err}.") from None
        X.append(text)
        right.append(rights)
        pools.append(rights + wrong)
    return {"X": X, "right": right, "pools": pools}


def read_insuranceqa(data_home) -> tuple[dict, dict, dict]:
    home = Path(data_home or os.environ.get("IRDIALOG_DATA", ".")) / "insuranceqa-en"
    path = home / "answers.json.gz"
    answers = {}
    for aid, a in _read(path).items():
        if not isinstance(a, dict) or not isinstance(a.get("en"), str):
            raise ValueError(f"{path}, answer {aid!r}: expected {{'en': text}}, got {a!r:.60}.")
        answers[aid] = a["en"]
    return answers, read_split(home, "train", answers), read_split(home, "valid", answers)


# -- metrics ----------------------------------------------------------------------------------


def pool_metrics(scores: np.ndarray, n_right: list[int]) -> dict:
    """P@1 and MRR (ties against the model, from irdialog.metrics), P@1 at its expected
    value under a random tie-break, and MAP with ties against the model; in percent."""
    gold = [list(range(n)) for n in n_right]
    ranks = gold_ranks(gold, scores, ties="pessimistic")
    expected, ap = [], []
    for s, n in zip(scores, n_right):
        s = s[np.isfinite(s)]
        right, wrong = s[:n], s[n:]
        top = right.max()
        ahead, tied = int((wrong > top).sum()), int((wrong == top).sum())
        expected.append(0.0 if ahead else (right == top).sum() / ((right == top).sum() + tied))
        # each right answer after every wrong answer and every other right answer it ties
        r = np.sort([1 + (wrong >= v).sum() + (right > v).sum() + (right == v).sum() - 1
                     for v in right])  # fmt: skip
        ap.append(np.mean(np.arange(1, n + 1) / r))
    return {
        "P@1": 100 * float(np.mean(ranks == 1)),
        "P@1 expected": 100 * float(np.mean(expected)),
        "MAP": 100 * float(np.mean(ap)),
        "MRR": 100 * float(np.mean(1 / ranks)),
    }


# -- models -----------------------------------------------------------------------------------


def _pairs(train):
    rows = [(x, a) for x, rights in zip(train["X"], train["right"]) for a in rights]
    return [x for x, _ in rows], [a for _, a in rows]


def _negative_lists(train):
    return [
        pool[len(rights) :] for pool, rights in zip(train["pools"], train["right"]) for _ in rights
    ]


def _fit_pairs(model):
    def fit(train, corpus):
        return model.fit(*_pairs(train))

    return fit


def _fit_se_pools(params):
    def fit(train, corpus):
        X, y = _pairs(train)
        return SupervisedEmbeddingRanker(**params).fit(X, y, negative_lists=_negative_lists(train))

    return fit


def _fit_ltr(**params):
    def fit(train, corpus):
        model = LearningToRankRanker(**params)
        return model.fit(train["X"], train["right"], candidate_lists=train["pools"])

    return fit


def _fit_fusion(method):
    def fit(train, corpus):
        model = FusionRanker(
            [
                ("bm25", BM25Ranker(candidates=corpus)),
                ("se", SupervisedEmbeddingRanker(**SE_POOLS)),
            ],
            method=method,
        )
        return model.fit(train["X"], train["right"], candidate_lists=train["pools"])

    return fit


# name -> fit(train, corpus of every answer text) -> a fitted ranker
MODELS = {
    "tfidf": _fit_pairs(TfidfRanker()),
    "bm25": lambda train, corpus: BM25Ranker(candidates=corpus).fit(*_pairs(train)),
    "se": _fit_pairs(SupervisedEmbeddingRanker(**SE)),
    "se-bm25": _fit_pairs(SupervisedEmbeddingRanker(**SE, negatives="bm25")),
    "se-pools": _fit_se_pools(SE),
    "se-pools-m0.1": _fit_se_pools(SE_POOLS),
    "fusion-rrf": _fit_fusion("rrf"),
    "fusion-linear": _fit_fusion("linear"),
    "ltr": _fit_ltr(random_state=0),
    "ltr-50neg": _fit_ltr(max_negatives=50, random_state=0),
    "ltr+se": _fit_ltr(
        rankers=[("se", SupervisedEmbeddingRanker(**SE_POOLS))], max_negatives=50, random_state=0
    ),
    "ltr+se-cv3": _fit_ltr(
        rankers=[("se", SupervisedEmbeddingRanker(**SE_POOLS))],
        cv=3,
        max_negatives=50,
        random_state=0,
    ),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA")
    ap.add_argument("--models", default="bm25,ltr", help=f"comma-separated, of {list(MODELS)}")
    ap.add_argument(
        "--train-questions", type=int, default=None, help="the first N train questions only"
    )
    args = ap.parse_args(argv)
    names = args.models.split(",")
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown models {unknown}; choose from {list(MODELS)}")
    answers, train, valid = read_insuranceqa(args.data_home)
    if args.train_questions:
        train = {k: v[: args.train_questions] for k, v in train.items()}
    corpus = list(dict.fromkeys(answers.values()))
    n_right = [len(r) for r in valid["right"]]
    print(
        f"InsuranceQA valid: {len(valid['X'])} questions, pools of "
        f"{min(map(len, valid['pools']))}-{max(map(len, valid['pools']))}; train "
        f"{len(train['X'])} questions"
    )
    print(
        f"{'model':<16}{'P@1':>7}{'P@1 exp':>9}{'MAP':>7}{'MRR':>7}{'fit s':>8}{'rank s':>8}"
        f"{'fit cpu':>9}{'rank cpu':>9}"
    )
    for name in names:
        start, cpu_start = time.perf_counter(), time.process_time()
        model = MODELS[name](train, corpus)
        fitted, cpu_fitted = time.perf_counter(), time.process_time()
        scores = model.rank_candidates(valid["X"], valid["pools"])
        ranked, cpu_ranked = time.perf_counter(), time.process_time()
        m = pool_metrics(scores, n_right)
        print(
            f"{name:<16}{m['P@1']:>7.2f}{m['P@1 expected']:>9.2f}{m['MAP']:>7.2f}"
            f"{m['MRR']:>7.2f}{fitted - start:>8.1f}{ranked - fitted:>8.1f}"
            f"{cpu_fitted - cpu_start:>9.1f}{cpu_ranked - cpu_fitted:>9.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
