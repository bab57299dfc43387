"""BEIR: a data set's corpus ranked for each test query, nDCG@10 and recall@100, as Thakur
et al. (2021) report them.

One data set of BEIR (``--dataset``, its folder name) as its zip unpacks
(``load_dialogs(..., format="beir")``) under ``beir/`` in the data home::

    beir/scifact/corpus.jsonl     # {"_id", "title", "text"} a line
    beir/scifact/queries.jsonl    # {"_id", "text"} a line
    beir/scifact/qrels/test.tsv   # query-id<TAB>corpus-id<TAB>score, a header line first

(each file plain or ``.gz``). The model holds the corpus (title and text of each document)
as its candidates; each judged test query ranks it, its 1,000 best documents are re-scored
as a pool (ties at their expected value) and judged with the graded qrels, a relevant
document beyond them a miss. No judgement enters the fit. BM25 takes k1 0.9, b 0.4, the
setting of Anserini's BEIR regressions; its tokens are not Lucene's (no stemming, no stop
words), so its figures are not theirs. Beside BM25's nDCG@10 stands the one of Thakur et
al. (2021, Table 2) for the data set, when the table has it.

Run (from the repository root)::

    irdialog bench beir --dataset scifact --model bm25 --data-home DIR

"""

from __future__ import annotations

from ._format_suite import dataset_fields, retrieval_suite
from ._suite import Suite

SUITE = Suite(
    **retrieval_suite(
        "beir",
        "BEIR retrieval, one data set's corpus ranked for its test queries: nDCG@10, recall@100",
        ("ndcg@10", "recall@100"),
        files=(
            "beir/{task}",
            "qrels/{split}.tsv",
            "BEIR {task} {split} (needs data: the data set's corpus, queries and qrels)",
        ),
        bm25=({"k1": 0.9, "b": 0.4}, "k1 0.9, b 0.4 as Anserini's BEIR regressions, no search"),
        task=None,
        split="test",
    ),
    **dataset_fields("beir", "the BEIR data set: its folder under beir/ (scifact, nfcorpus, ...)"),
)
