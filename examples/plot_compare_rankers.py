"""
TF-IDF, BM25 and supervised embeddings on dialog bAbI
=====================================================

Three rankers of the dialog bAbI paper's family, fitted on the bundled task 1 (booking a
table: the bot asks for the missing slots, then issues an API call) and scored on its test
set by per-response accuracy (hits@1) and hits@10.

TF-IDF and BM25 need no training beyond counting words. The supervised embeddings learn
from the gold responses; here they train for three epochs on the first 2,000 training
examples so that the example runs in seconds. The figures show how to compare rankers, not
the results of the paper: those, with tuned hyper-parameters and several seeds, are in the
repository's BENCHMARKS.md.
"""

# %%
# The data: contexts, gold responses, and dialog bAbI's candidate set.
import matplotlib.pyplot as plt
import numpy as np

from irdialog import BM25Ranker, SupervisedEmbeddingRanker, TfidfRanker
from irdialog.datasets import load_dialog_babi
from irdialog.metrics import make_ranking_scorer

train = load_dialog_babi(task=1, split="trn")
test = load_dialog_babi(task=1, split="tst")
print(f"{len(train.X)} training, {len(test.X)} test examples; {len(train.candidates)} candidates")

# %%
# Fit each ranker and score it with the scorers of :mod:`irdialog.metrics`, the ones a
# ``GridSearchCV`` takes.
models = {
    "TF-IDF": TfidfRanker(candidates=train.candidates),
    "BM25": BM25Ranker(candidates=train.candidates),
    "supervised embeddings\n(3 epochs)": SupervisedEmbeddingRanker(
        candidates=train.candidates, epochs=3, random_state=0
    ),
}
hits1, hits10 = make_ranking_scorer("hits@1"), make_ranking_scorer("hits@10")
results = {}
for name, model in models.items():
    if isinstance(model, SupervisedEmbeddingRanker):
        model.fit(train.X[:2000], train.y[:2000])
    else:
        model.fit(train.X, train.y)
    results[name] = (hits1(model, test.X, test.y), hits10(model, test.X, test.y))
    one, ten = results[name]
    print(f"{name.splitlines()[0]:>22}: hits@1 {one:.3f}  hits@10 {ten:.3f}")

# %%
# The word-overlap rankers find the right reply when it repeats the user's words (the API
# call repeats the cuisine and the city) but not the bot's questions, which share no word
# with the user's turn; a learned model maps one to the other.
fig, ax = plt.subplots(figsize=(7, 3.5))
x = np.arange(len(results))
ax.bar(x - 0.2, [r[0] for r in results.values()], width=0.4, label="hits@1")
ax.bar(x + 0.2, [r[1] for r in results.values()], width=0.4, label="hits@10")
ax.set_xticks(x, list(results))
ax.set_ylim(0, 1)
ax.set_ylabel("share of test responses")
ax.set_title("Dialog bAbI task 1 (bundled sample), test set")
ax.legend()
fig.tight_layout()
plt.show()
