"""
Ranking your own JSON Lines dialogs
===================================

Your dialogs, one example per line of a JSON Lines file: the ``history`` (oldest first),
the user's ``query``, the gold ``response``, and optionally the ``candidates`` of this
example and the ``group`` (dialog) it belongs to. :func:`irdialog.datasets.load_dialogs`
reads such a file into the ``(X, y)`` of any ranker.

This example writes a small file of restaurant dialogs in the format, fits TF-IDF on it,
ranks each test example's own candidates and reads the ranks with :mod:`irdialog.metrics`.
The command line does the same with ``irdialog train --train``, ``irdialog evaluate`` and
``irdialog rank`` (see the user guide, "Your own data").
"""

# %%
# A file in the format. The history's plain strings alternate user and bot going back
# from the query.
import json
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from irdialog import TfidfRanker
from irdialog.datasets import load_dialogs
from irdialog.metrics import gold_ranks, hits_at_k, mean_reciprocal_rank

folder = Path(tempfile.mkdtemp())
cities = ["paris", "rome", "madrid", "london", "seoul", "lima"]
lines = []
for i, city in enumerate(cities * 3):
    ask = "which city would you like?"
    lines.append(
        {
            "history": ["hi", "hello, how can i help?"],
            "query": "i would like a table",
            "response": ask,
            "candidates": ["goodbye", f"api_call {city}"],
            "group": i,
        }
    )
    lines.append(
        {
            "history": ["hi", "hello, how can i help?", "i would like a table", ask],
            "query": f"in {city} please",
            "response": f"api_call {city}",
            "candidates": [ask, "goodbye", f"api_call {cities[(i + 1) % len(cities)]}"],
            "group": i,
        }
    )
path = folder / "dialogs.jsonl"
path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
print(path.read_text(encoding="utf-8").splitlines()[1])

# %%
# Read it, split it by dialog, fit.
data = load_dialogs(path)
train = data.groups < 12
X, y, lists = np.array(data.X, dtype=object), np.array(data.y, dtype=object), data.candidate_lists
model = TfidfRanker(use_history=False).fit(list(X[train]), list(y[train]))
print(f"{len(model.candidates_)} candidates learned from {train.sum()} examples")

# %%
# Rank each test example's own candidates: the scores have one column per candidate of the
# longest list, padded with -inf; the gold response is first in each list. The metrics count
# a tie at its expected value; a rank needs an order, so the histogram puts the gold after
# the candidates it ties with.
test = ~train
test_lists = [lists[i] for i in np.flatnonzero(test)]
scores = model.rank_candidates(list(X[test]), test_lists)
gold = np.zeros(len(test_lists), dtype=int)
ranks = gold_ranks(gold, scores, ties="pessimistic")
print(f"hits@1 {hits_at_k(gold, scores, k=1):.3f}, MRR {mean_reciprocal_rank(gold, scores):.3f}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.hist(ranks, bins=np.arange(0.5, scores.shape[1] + 1.5), rwidth=0.8)
ax.set_xlabel("rank of the gold response")
ax.set_ylabel("test examples")
ax.set_title("TF-IDF on the example's own candidates")
fig.tight_layout()
plt.show()
