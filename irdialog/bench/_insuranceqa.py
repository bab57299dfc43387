"""InsuranceQA answer selection: each question's pool of answers ranked, MAP, MRR and P@1.

Beyond the reproduced papers: the English InsuranceQA (Feng et al. 2015, version 2) as the
data home stores it, ``insuranceqa-en/`` with ``answers.json.gz`` and the questions of
``train.json.gz``, ``valid.json.gz`` and, when present, ``test.json.gz``, each question with
its right answers and a pool of wrong ones (read by ``load_dialogs(..., format=
"pools-by-id")``). A model is fitted on the training questions, with the answers of the
training pools as its candidates (the statistics of TF-IDF and BM25), and ranks each
evaluation question's pool with ``rank_candidates``: the test split when the data home has
one, else valid. Ties count at their expected value; every question has a right answer.

Run (from the repository root)::

    irdialog bench insuranceqa --model bm25 --data-home DIR

"""

from __future__ import annotations

from functools import partial

from ..datasets._base import find_data_file
from ..embed import MemN2NRanker, SupervisedEmbeddingRanker
from ..ensemble import LearningToRankRanker, SeedEnsembleRanker
from ..ensemble._pools import negatives_parameter
from ..features import MatchTypeFeaturizer, rarity_kb
from ..pipeline import make_ranking_pipeline
from ..retrieval import BM25Ranker, TfidfRanker
from ._format_suite import NO_SEARCH, load_pools, score_pools, with_candidates
from ._suite import ModelSpec, Selection, Suite, markdown_table, spread

SUITE_NAME = "insuranceqa"
# The metrics of the answer-selection papers (Tan et al. 2016; Rao et al. 2016), in %.
INSURANCEQA_METRICS = ("map", "mrr", "p@1")
_FOLDER = "insuranceqa-en"
_VALID = (
    "the configuration of benchmarks/insuranceqa_rankers.py with the best valid P@1 "
    "(benchmarks/NOTES.md, InsuranceQA)"
)
# Supervised embeddings that take each question's own pool as its negatives; a margin of
# 0.1 beat the default 0.01 on valid (P@1 14.1 against 12.4).
_SE_POOLS = {"embedding_dim": 64, "epochs": 10, "margin": 0.1}
# The same with wider embeddings: 128 dimensions gave a valid P@1 of 15.7, 256 gave 16.0.
_SE_WIDE = {**_SE_POOLS, "embedding_dim": 256}
# The same started from the PPMI+SVD vectors of the training text: on the first 3,000
# training questions (64 dimensions) a valid P@1 of 11.2 against 8.9 from normal draws.
_SE_PPMI = {**_SE_WIDE, "init": "ppmi-svd"}
# The wide embeddings with match types by rarity (rarity_kb: 16 steps of the idf of the
# training answers' words). The type rows step at every example: at the step of 0.01 the loss
# grew tenfold an epoch (valid P@1 2.75); 0.005 gave 17.20, 0.0025 14.40.
_SE_RARITY = {**_SE_WIDE, "n_types": 16, "learning_rate": 0.005}
# MemN2N with each question's wrong answers as its negatives: on the first 1,000 training
# questions and 500 valid pools, a P@1 of 7.2 against 2.8 with random ones (a learning rate
# of 0.01 chosen over 0.001).
_MEMN2N_POOLS = {"embedding_dim": 64, "optimizer": "lazy_adam", "learning_rate": 0.01,
                 "epochs": 20}  # fmt: skip


def _ltr_se(*, char_bm25=False, se_seeds=1, **params):
    """Learning to rank over lexical features and the pool-trained supervised embeddings'
    scores, cross-fitted over 3 folds of the training questions; with ``char_bm25``, BM25
    over character bigrams and trigrams as one more ranker's score (a word shares its
    pieces with its inflections and misspellings, which whole words miss); with
    ``se_seeds`` > 1, the embeddings fitted from that many random starts, fused."""
    se = SupervisedEmbeddingRanker(**_SE_POOLS)
    if se_seeds > 1:
        se = SeedEnsembleRanker(se, n_seeds=se_seeds, random_state=0)
    rankers = [("se", se)]
    if char_bm25:
        rankers.append(("bm25-char", BM25Ranker(tokenizer="char", ngram_range=(2, 3))))
    return LearningToRankRanker(rankers=rankers, **params)


def _se_rarity(train, *, n_types, **params):
    """Supervised embeddings with the match-type words of :func:`~irdialog.features.rarity_kb`
    over the training answers: a candidate's type word of a rarity when it shares a word of
    that rarity with the question."""
    return make_ranking_pipeline(
        MatchTypeFeaturizer(rarity_kb(train.candidates, n_types)),
        SupervisedEmbeddingRanker(candidates=train.candidates, match_type="match", **params),
    )


def _se_rarity_seeds(train, *, n_seeds, **params):
    """:func:`_se_rarity` from ``n_seeds`` random starts, each member's scores standardised
    over each pool and summed (:class:`~irdialog.ensemble.SeedEnsembleRanker`)."""
    return SeedEnsembleRanker(
        _se_rarity(train, **params), n_seeds=n_seeds, candidates=train.candidates, random_state=0
    )


def _on_pools(model, params) -> ModelSpec:
    """``model`` with ``params``, each question's wrong answers its negatives."""
    return ModelSpec(
        None, with_candidates(model), Selection.fixed(params, _VALID), extra={"fit": "negatives"}
    )


# How a model learns from the training pools (ModelSpec.extra["fit"]): "pairs", one
# (question, right answer) example per right answer; "negatives", the same with the pool's
# wrong answers as the negatives of each; "pools", whole questions with their pools.
INSURANCEQA_MODELS: dict[str, ModelSpec] = {
    "bm25": ModelSpec(
        None, with_candidates(BM25Ranker), Selection.fixed({"method": "lucene"}, NO_SEARCH)
    ),
    "tfidf": ModelSpec(None, with_candidates(TfidfRanker), Selection.fixed({}, NO_SEARCH)),
    "se-pools": _on_pools(SupervisedEmbeddingRanker, _SE_POOLS),
    "se-pools-wide": _on_pools(SupervisedEmbeddingRanker, _SE_WIDE),
    "se-pools-ppmi": _on_pools(SupervisedEmbeddingRanker, _SE_PPMI),
    "se-pools-rarity": ModelSpec(
        None, _se_rarity, Selection.fixed(_SE_RARITY, _VALID), extra={"fit": "negatives"}
    ),
    # Three starts of se-pools-rarity: on valid (seeds 0, 1, 2 by hand) one gave 17.20, two
    # fused 19.50, three 21.45 (benchmarks/NOTES.md).
    "se-rarity-x3": ModelSpec(
        None,
        _se_rarity_seeds,
        Selection.fixed({**_SE_RARITY, "n_seeds": 3}, _VALID),
        extra={"fit": "pools"},
    ),
    "memn2n-pools": _on_pools(MemN2NRanker, _MEMN2N_POOLS),
    "ltr": ModelSpec(
        None,
        with_candidates(LearningToRankRanker),
        Selection.fixed({}, NO_SEARCH),
        extra={"fit": "pools"},
    ),
    "ltr-se": ModelSpec(
        None,
        with_candidates(_ltr_se),
        Selection.fixed({"cv": 3, "max_negatives": 50}, _VALID),
        extra={"fit": "pools"},
    ),
    "ltr-se-char": ModelSpec(
        None,
        with_candidates(partial(_ltr_se, char_bm25=True)),
        Selection.fixed({"cv": 3, "max_negatives": 50}, _VALID),
        extra={"fit": "pools"},
    ),
    # the embeddings from three random starts: on valid 42.35 against 40.90
    "ltr-se-char-x3": ModelSpec(
        None,
        with_candidates(partial(_ltr_se, char_bm25=True, se_seeds=3)),
        Selection.fixed({"cv": 3, "max_negatives": 50}, _VALID),
        extra={"fit": "pools"},
    ),
}


_HOW = {
    "pairs": "one example per right answer",
    "negatives": "one example per right answer, the wrong answers of its pool as negatives",
    "pools": "each question with its pool",
}


def _split_file(split: str, data_home):
    return find_data_file(data_home, [f"{_FOLDER}/{split}.json"], f"InsuranceQA {split}")


def _scored(data_home) -> list[str]:
    """The evaluation split, ``test`` when the data home holds its questions, else
    ``valid``; its file and the training file found before either is read."""
    try:
        _split_file("test", data_home)
        split = "test"
    except FileNotFoundError:
        split = "valid"
    _split_file("train", data_home)
    _split_file(split, data_home)
    return [split]


def _in_data_home(path) -> str:
    return f"{_FOLDER}/{path.name}"


def _load(task, split, data_home):
    """One split's questions and pools (:func:`~irdialog.bench._format_suite.load_pools`);
    the training split's (question, right answer) pairs also each with its pool's wrong
    answers."""
    data = load_pools(_split_file(split, data_home), "pools-by-id", split)
    if split == "train":
        data.negatives = []
        for rights, pool in zip(data.y, data.candidate_lists):
            rights = [rights] if isinstance(rights, str) else rights
            right_set = set(rights)
            data.negatives += [[a for a in pool if a not in right_set]] * len(rights)
    return data


def _fit(ranker, train, spec) -> None:
    how = spec.extra.get("fit", "pairs")
    if how == "pools":
        ranker.fit(train.X, train.y, candidate_lists=train.candidate_lists)
    elif how == "negatives":
        # a pipeline routes the argument to its ranker, its last step
        key = negatives_parameter(ranker)
        ranker.fit(train.pairs, train.pair_answers, **{key: train.negatives})
    else:
        ranker.fit(train.pairs, train.pair_answers)


def _protocol(spec, ranker, data) -> str:
    train = data["train"]
    [evaluation] = [v for k, v in data.items() if k != "train"]
    how = spec.extra.get("fit", "pairs")
    return (
        f"{type(ranker).__name__} fitted on the {len(train.X)} questions of "
        f"{_in_data_home(train.path)} ({len(train.pairs)} right answers; {_HOW[how]}), its "
        f"candidates the {len(train.candidates)} answers of their pools; the pool of each of "
        f"the {len(evaluation.X)} questions of {_in_data_home(evaluation.path)} ranked with "
        f"rank_candidates, ties at their expected value; {spec.selection.note}."
    )


def markdown(results) -> list[str]:
    """A row per result: the model, the split, MAP, MRR, P@1 (%) and the time."""
    header = ["model", "split", "MAP", "MRR", "P@1", "time (s)"]
    body = []
    for _name, r in results:
        values = {row.metric: row for row in SUITE.rows(r)}
        split = next(iter(values.values())).split if values else ""
        cells = [spread(values[m]) if m in values else "" for m in INSURANCEQA_METRICS]
        body.append([r["model"], split, *cells, f"{r['seconds']:.0f}"])
    return markdown_table(header, body)


SUITE = Suite(
    name=SUITE_NAME,
    help="InsuranceQA answer selection, MAP, MRR and P@1 of each question's pool",
    models=INSURANCEQA_MODELS,
    table=markdown,
    load=_load,
    score=score_pools(INSURANCEQA_METRICS),
    metrics=INSURANCEQA_METRICS,
    layout="long",
    dev_split=None,
    scored=_scored,
    fit=_fit,
    protocol=_protocol,
    task_name="en",
    plot_label=lambda row: row.metric,
)
