"""E-commerce Dialogue Corpus: each test context's 10 candidates ranked, R10@1, R10@2 and
R10@5, as Zhang et al. (2018) evaluate them.

The corpus as Zhang et al. release it (the multi-turn TSV, ``load_dialogs(..., format=
"multiturn-tsv")``, one candidate a line, ``label<TAB>turn_1<TAB>...<TAB>response``, the
text segmented into words by spaces) in the data home::

    ecommerce/train.txt    # 1M lines: contexts with one right and one wrong response
    ecommerce/dev.txt      # (not read)
    ecommerce/test.txt     # 10,000 lines: 1,000 contexts of 10 candidates, one right

(``E_commerce/`` is read too; each file plain or ``.gz``.) A model is fitted on the
training (context, right response) pairs with the responses of the training pools as its
candidates, and ranks each test pool with ``rank_candidates``; ties count at their expected
value, and a context with no right response would be left out (``no_answer="skip"``).

Run (from the repository root)::

    irdialog bench ecommerce --model tfidf --data-home DIR

"""

from __future__ import annotations

from ._format_suite import tsv_suite

SUITE = tsv_suite(
    "ecommerce",
    "E-commerce Dialogue Corpus response selection: R10@1/2/5",
    folders=("ecommerce", "E_commerce"),
    corpus="E-commerce",
    needs="the E-commerce Dialogue Corpus",
    metrics=("r10@1", "r10@2", "r10@5"),
    task="ecommerce",
)
