"""Douban Conversation Corpus: each test context's 10 candidates ranked, MAP, MRR, P@1 and
R10@1, R10@2, R10@5, as Wu et al. (2017) evaluate them.

The corpus as Wu et al. release it (the multi-turn TSV, ``load_dialogs(..., format=
"multiturn-tsv")``, one candidate a line, ``label<TAB>turn_1<TAB>...<TAB>response``, the
text segmented into words by spaces) in the data home::

    douban/train.txt    # 1M lines: 500,000 contexts, one right and one wrong response each
    douban/dev.txt      # (not read)
    douban/test.txt     # 10,000 lines: 1,000 contexts of 10 candidates

(``DoubanConversaionCorpus/``, the release's own folder name, is read too; each file plain
or ``.gz``.) A test context may have several right responses or none; as in the authors'
evaluation script, one with none is left out of every average (``no_answer="skip"``), and
``n`` counts the contexts scored. A model is fitted on the training (context, right
response) pairs with the responses of the training pools as its candidates, and ranks each
test pool with ``rank_candidates``; ties count at their expected value.

Run (from the repository root)::

    irdialog bench douban --model tfidf --data-home DIR

"""

from __future__ import annotations

from ._format_suite import tsv_suite

SUITE = tsv_suite(
    "douban",
    "Douban Conversation Corpus response selection: MAP, MRR, P@1, R10@1/2/5",
    folders=("douban", "DoubanConversaionCorpus"),
    corpus="Douban",
    needs="the Douban Conversation Corpus",
    metrics=("map", "mrr", "p@1", "r10@1", "r10@2", "r10@5"),
    task="douban",
)
