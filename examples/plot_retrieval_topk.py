"""
Retrieval: the exact top k from an inverted index
=================================================

:class:`~irdialog.BM25Ranker` and :class:`~irdialog.TfidfRanker` precompute each (word,
document) score once, in an :class:`~irdialog.retrieval.InvertedIndex`, and find the exact
top k of a query with MaxScore pruning: once k documents are held, words that cannot lift
a document past the k-th score are looked up only for the documents the other words make
promising.

Here BM25 indexes a pool of responses made from the bundled dialog bAbI task 1 (its
candidates, and the training responses with every restaurant name), ranks the test contexts,
checks the top 10 against a full sort of ``decision_function``, and saves the index to be
memory-mapped on load.
"""

# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from irdialog import BM25Ranker
from irdialog.datasets import load_dialog_babi
from irdialog.persist import load, save

train = load_dialog_babi(task=1, split="trn")
test = load_dialog_babi(task=1, split="tst")
pool = sorted(set(train.candidates) | set(train.y))
model = BM25Ranker(candidates=pool, use_history=False).fit(train.X, train.y)
index = model.index_
print(f"{index.n_docs} documents, {index.n_terms} terms, {index.n_postings} postings")

# %%
# The top 10 of every test context, and the same ranking from the full score matrix.
top = model.rank(test.X, k=10)
scores = model.decision_function(test.X[:500])
full = np.argsort(-scores, axis=1, kind="stable")[:, :10]
print("same top 10 as a full sort:", bool((top[:500] == full).all()))

# %%
# Where the gold response lands in the top 10.
gold = np.array([pool.index(r) for r in test.y])
position = np.array([list(row).index(g) + 1 if g in row else 11 for row, g in zip(top, gold)])
fig, ax = plt.subplots(figsize=(5, 3))
ax.hist(position, bins=np.arange(0.5, 12.5), rwidth=0.8)
ax.set_xticks(range(1, 12), [*map(str, range(1, 11)), ">10"])
ax.set_xlabel("position of the gold response (BM25, last utterance only)")
ax.set_ylabel("test contexts")
fig.tight_layout()
plt.show()

# %%
# Saved uncompressed, the index's arrays are memory-mapped on load instead of being read,
# and ranking on two threads gives the same top k.
path = Path(tempfile.mkdtemp()) / "bm25.npz"
save(model, path, compress=False)
mapped = load(path, mmap_mode="r")
print(
    "same ranking after load, on two threads:",
    bool((mapped.rank(test.X, k=10, n_jobs=2) == top).all()),
)
