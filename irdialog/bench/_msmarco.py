"""MS MARCO passage ranking: the 8.8M passages ranked for each query of the small dev set,
MRR@10, beside Anserini's BM25 (k1 0.82, b 0.68: 18.7).

The passage collection as Microsoft releases it (``load_dialogs(..., format="msmarco")``)
in the data home::

    msmarco-passage/collection.tsv          # pid<TAB>passage
    msmarco-passage/queries.dev.small.tsv   # qid<TAB>query (6,980 queries)
    msmarco-passage/qrels.dev.small.tsv     # qid 0 pid 1 (TREC qrels)

(each file plain or ``.gz``). The model holds the collection as its candidates; each judged
query ranks it, its 1,000 best passages are re-scored as a pool (ties at their expected
value) and judged, a relevant passage beyond them a miss. No judgement enters the fit.
BM25 takes Anserini's k1 0.82, b 0.68; its tokens are not Lucene's (no stemming, no stop
words), so the gap to 18.7 measures that difference too.

Run (from the repository root)::

    irdialog bench msmarco --model bm25 --data-home DIR

"""

from __future__ import annotations

from ._format_suite import retrieval_suite
from ._suite import Suite

SUITE = Suite(
    **retrieval_suite(
        "msmarco",
        "MS MARCO passage retrieval, the small dev set: MRR@10",
        ("mrr@10",),
        files=(
            "msmarco-passage",
            "qrels.{split}.tsv",
            "MS MARCO passage {split} (needs data: collection.tsv, queries and qrels)",
        ),
        bm25=(
            {"k1": 0.82, "b": 0.68},
            "k1 0.82, b 0.68, Anserini's setting tuned on MS MARCO passage, no search",
        ),
        task="passage",
        split="dev.small",
    )
)
