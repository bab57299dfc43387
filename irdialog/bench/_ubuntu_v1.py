"""Ubuntu Dialogue Corpus v1 in the multi-turn TSV: each test context's 10 candidates
ranked, R2@1 and R10@1, R10@2, R10@5, beside Lowe et al. (2015, Table 4).

The v1 corpus as Xu et al. release it, and Wu et al. (2017) after them (the multi-turn TSV,
``load_dialogs(..., format="multiturn-tsv")``, one candidate a line, ``label<TAB>turn_1<TAB>
...<TAB>response``, the right response first in each test pool) in the data home::

    ubuntu-v1/train.txt    # 1M lines: 500,000 contexts, one right and one wrong response
    ubuntu-v1/valid.txt    # (not read)
    ubuntu-v1/test.txt     # 500,000 lines: 50,000 contexts of 10 candidates

(``ubuntu_data/``, the release's own folder name, is read too; each file plain or
``.gz``.) R2@1 ranks the first 2 candidates of each pool, the right one and the first wrong
one. A model is fitted on the training (context, right response) pairs with the responses
of the training pools as its candidates, and ranks each test pool with ``rank_candidates``;
ties count at their expected value. ``dual-encoder`` is the LSTM dual encoder of Lowe et
al. with the ``lstm-dual`` settings of the ``ubuntu`` suite (hours on the full corpus).
This suite reads the TSV release; ``irdialog bench ubuntu`` reads the CSV of the v2 scripts.

Run (from the repository root)::

    irdialog bench ubuntu-v1 --model tfidf --data-home DIR

"""

from __future__ import annotations

from ..embed import DualEncoderRanker
from ._format_suite import POOL_MODELS, tsv_suite, with_candidates
from ._suite import ModelSpec, Selection
from ._ubuntu import UBUNTU_MODELS

_LSTM = UBUNTU_MODELS["lstm-dual"].selection

UBUNTU_V1_MODELS = {
    **POOL_MODELS,
    "dual-encoder": ModelSpec(
        "dual-encoder",
        with_candidates(DualEncoderRanker),
        Selection.fixed(
            _LSTM.params,
            "Lowe et al.'s LSTM dual encoder (the ubuntu suite's lstm-dual settings), no search",
        ),
    ),  # fmt: skip
}


SUITE = tsv_suite(
    "ubuntu-v1",
    "Ubuntu Dialogue Corpus v1 (multi-turn TSV) response selection: R2@1, R10@1/2/5",
    folders=("ubuntu-v1", "ubuntu_data"),
    corpus="Ubuntu v1",
    needs="the Ubuntu Dialogue Corpus v1, multi-turn TSV",
    metrics=("r2@1", "r10@1", "r10@2", "r10@5"),
    task="v1",
    models=UBUNTU_V1_MODELS,
)
