"""DSTC7 track 1, subtask 1: each context's 100 candidates ranked, recall@1, recall@10,
recall@50 and MRR, as Gunasekara et al. (2019) score the track.

The track's JSON (``load_dialogs(..., format="dstc7")``: ``messages-so-far``,
``options-for-next``, ``options-for-correct-answers``) in the data home, for the Ubuntu or
the Advising data set (``--dataset``, default ubuntu)::

    dstc7/ubuntu_train_subtask_1.json     # or advising.scenario-1.train.json
    dstc7/ubuntu_dev_subtask_1.json       # or advising.scenario-1.dev.json
    dstc7/ubuntu_test_subtask_1.json      # optional, and then its ground truth:
    dstc7/ubuntu_responses_subtask_1.tsv  # example-id<TAB>candidate-id<TAB>utterance

The test split is scored when the data home holds it, else dev; the rows say which. The
track releases the test's right answers apart (``ubuntu_responses_subtask_1.tsv`` for
Ubuntu); they are read as ``{dataset}_responses_subtask_1.tsv`` beside the test file, with
``load_dialogs(..., answers=...)``, and a test file whose dialogs carry their
``options-for-correct-answers`` needs none. A model is fitted on the training (context,
right response) pairs with the options of the training dialogs as its candidates, and
ranks each pool with ``rank_candidates``; ties count at their expected value.

Run (from the repository root)::

    irdialog bench dstc7 --model tfidf --data-home DIR

"""

from __future__ import annotations

from ._format_suite import POOL_MODELS, data_file, dataset_fields, load_pools, pool_suite
from ._suite import Suite

DSTC7_METRICS = ("recall@1", "recall@10", "recall@50", "mrr")
DSTC7_DATASETS = ("ubuntu", "advising")


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


def _answers(dataset: str, path):
    """The ground truth of the test file ``path``: ``{dataset}_responses_subtask_1.tsv``
    (or its ``.gz``) beside it, else None."""
    for name in (f"{dataset}_responses_subtask_1.tsv", f"{dataset}_responses_subtask_1.tsv.gz"):
        if (path.parent / name).is_file():
            return path.parent / name
    return None


def _load(task, split, data_home):
    path = _path(task, split, data_home)
    if split != "test":
        return load_pools(path, "dstc7", split)
    answers = _answers(task, path)
    if answers is not None:
        return load_pools(path, "dstc7", split, answers=answers)
    data = load_pools(path, "dstc7", split, require_response=False)
    if any(rights is None for rights in data.y):
        raise ValueError(
            f"{path}: the test dialogs have no options-for-correct-answers; put the track's "
            f"ground truth beside it as {task}_responses_subtask_1.tsv "
            "(example-id<TAB>candidate-id<TAB>utterance)"
        )
    return data


SUITE = Suite(
    **pool_suite(
        "dstc7",
        "DSTC7 track 1 subtask 1 response selection: recall@1/10/50, MRR",
        POOL_MODELS,
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
