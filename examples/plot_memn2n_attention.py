"""
Where MemN2N looks: attention over the dialog
=============================================

An end-to-end memory network (:class:`~irdialog.MemN2NRanker`) keeps each turn of the
dialog in memory and, hop by hop, attends to the turns that matter for the next response.
:func:`irdialog.plot.plot_attention` draws that attention as the tables of the dialog bAbI
paper (appendix B) do: one row per turn, one column per hop.

The model trains for a few epochs on part of the bundled task 1, with early stopping on
held-out dialogs, so that the example runs in seconds: the picture shows how to read the
model, not its accuracy after full training.
"""

# %%
import matplotlib.pyplot as plt

from irdialog import MemN2NRanker
from irdialog.datasets import load_dialog_babi
from irdialog.plot import plot_attention, plot_learning_curve

train = load_dialog_babi(task=1, split="trn")
test = load_dialog_babi(task=1, split="tst")
n = 2000  # the first dialogs of the training file
model = MemN2NRanker(
    candidates=train.candidates,
    hops=2,
    embedding_dim=32,
    epochs=6,
    early_stopping=True,
    random_state=0,
)
model.fit(train.X[:n], train.y[:n], groups=train.groups[:n])  # held-out share: whole dialogs
print(f"test hits@1 after {model.n_iter_} epochs: {model.score(test.X, test.y):.3f}")

# %%
# The API call at the end of a dialog needs the cuisine, the city, the party size and the
# price range the user gave earlier: the attention shows which turns each hop reads.
api_call = next(i for i, y in enumerate(test.y) if y.startswith("api_call"))
context, answer = test.X[api_call], test.y[api_call]
print("gold:", answer, "| predicted:", model.predict([context])[0])
ax = plot_attention(model, context, y=answer)
plt.show()

# %%
# The learning curve: training loss and accuracy per epoch, and hits@1 on the held-out
# dialogs, with the best epoch marked (``loss_curve_``, ``train_accuracy_curve_``,
# ``validation_scores_``).
ax = plot_learning_curve(model)
plt.show()
