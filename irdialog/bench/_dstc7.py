"""DSTC7 track 1, subtask 1: each context's 100 candidates ranked, recall@1, recall@10,
recall@50 and MRR, as Gunasekara et al. (2019) score the track.

The track's JSON (``load_dialogs(..., format="dstc7")``: ``messages-so-far``,
``options-for-next``, ``options-for-correct-answers``) in the data home, for the Ubuntu or
the Advising data set (``--dataset``, default ubuntu)::

    dstc7/ubuntu_train_subtask_1.json    # or advising.scenario-1.train.json
    dstc7/ubuntu_dev_subtask_1.json      # or advising.scenario-1.dev.json
    dstc7/ubuntu_test_subtask_1.json     # optional; its options-for-correct-answers given

The test split is scored when the data home holds it (with the right answers merged into
``options-for-correct-answers``), else dev; the rows say which. A model is fitted on the
training (context, right response) pairs with the options of the training dialogs as its
candidates, and ranks each pool with ``rank_candidates``; ties count at their expected
value.

Run (from the repository root)::

    irdialog bench dstc7 --model tfidf --data-home DIR

"""

from __future__ import annotations

from ..retrieval import BM25Ranker, TfidfRanker
from ._format_suite import (
    classical_models,
    data_file,
    dataset_fields,
    load_pools,
    pool_suite,
    with_candidates,
)
from ._suite import Suite

DSTC7_METRICS = ("recall@1", "recall@10", "recall@50", "mrr")
DSTC7_DATASETS = ("ubuntu", "advising")

DSTC7_MODELS = classical_models(with_candidates(TfidfRanker), with_candidates(BM25Ranker))


def _path(dataset: str, split: str, data_home):
    names = [f"{dataset}_{split}_subtask_1.json", f"{dataset}.scenario-1.{split}.json"]
    what = f"DSTC7 track 1 {dataset} {split} (needs data: the track's subtask 1 files)"
    return data_file(data_home, ["dstc7"], names, what)


def _scored(dataset: str, data_home) -> list[str]:
    """``test`` when the data home holds it, else ``dev``; the training file found first."""
    _path(dataset, "train", data_home)
    try:
        _path(dataset, "test", data_home)
    except FileNotFoundError:
        _path(dataset, "dev", data_home)
        return ["dev"]
    return ["test"]


def _load(task, split, data_home):
    return load_pools(_path(task, split, data_home), "dstc7", split)


SUITE = Suite(
    **pool_suite(
        "dstc7",
        "DSTC7 track 1 subtask 1 response selection: recall@1/10/50, MRR",
        DSTC7_MODELS,
        _load,
        DSTC7_METRICS,
        task="ubuntu",
    ),
    **dataset_fields(
        "dstc7",
        "the data set of the track",
        default="ubuntu",
        choices=DSTC7_DATASETS,
        scored=_scored,
    ),  # fmt: skip
)
