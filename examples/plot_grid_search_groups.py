"""
Grid search with groups: dialogs never straddle folds
=====================================================

The examples of one dialog share their history: a turn's context holds the turns before it.
A cross-validation that puts some turns of a dialog in the training folds and others in the
scoring fold scores the model on dialogs it has half seen. The dialog bAbI loader gives
each example's dialog as ``groups``; :class:`~sklearn.model_selection.GroupKFold` keeps
every dialog in one fold.

Here BM25's ``k1`` and ``b`` are searched on the bundled task 1 (training dialogs only),
scored by hits@1, and the folds are checked.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV, GroupKFold

from irdialog import BM25Ranker
from irdialog.datasets import load_dialog_babi
from irdialog.metrics import make_ranking_scorer

train = load_dialog_babi(task=1, split="trn")
cv = GroupKFold(n_splits=3)
for i, (fit_rows, score_rows) in enumerate(cv.split(train.X, train.y, train.groups)):
    shared = np.intersect1d(train.groups[fit_rows], train.groups[score_rows])
    print(
        f"fold {i}: {len(np.unique(train.groups[score_rows]))} dialogs scored, "
        f"{shared.size} also in training"
    )

# %%
# The search: every point is fitted on two folds and scored on the third.
grid = {"k1": [0.5, 1.2, 2.0], "b": [0.0, 0.5, 0.75, 1.0], "use_history": [False]}
search = GridSearchCV(
    BM25Ranker(candidates=train.candidates),
    grid,
    cv=cv,
    scoring=make_ranking_scorer("hits@1"),
)
search.fit(train.X, train.y, groups=train.groups)
print("best:", search.best_params_, f"hits@1 {search.best_score_:.3f}")

# %%
# The mean hits@1 over the folds, for each point of the grid.
scores = search.cv_results_["mean_test_score"].reshape(len(grid["k1"]), len(grid["b"]))
fig, ax = plt.subplots(figsize=(5, 3.5))
image = ax.imshow(scores, cmap="viridis", origin="lower")
ax.set_xticks(range(len(grid["b"])), grid["b"])
ax.set_yticks(range(len(grid["k1"])), grid["k1"])
ax.set_xlabel("b")
ax.set_ylabel("k1")
ax.set_title("BM25, hits@1 over 3 group folds")
fig.colorbar(image, ax=ax)
fig.tight_layout()
plt.show()
