"""How many dialog bAbI answers are decided by an exact tie at the top (BENCHMARKS.md).

``predict`` takes the first of the candidates with the top score, in the candidate file's
order. Candidates whose words the model never saw (the OOV sets' restaurants) can score
exactly alike. The file lists the responses in the order the dialogs first use them, and a
dialog proposes its restaurants best rated first, so of two restaurants first proposed in
the same dialog the better rated comes first. This prints, for a bench model at seed 0, its
accuracy, the answers tied at the top, and the accuracy with every tie counted against the
model::

    python -m benchmarks.dialog_babi_ties --data-home DIR --model memn2n-state [--task 5]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.dialog_state_dev import kind, right_and_tied
from irdialog.bench import train_dialog_babi
from irdialog.datasets import load_dialog_babi


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    ap.add_argument("--model", default="memn2n-state")
    ap.add_argument("--task", type=int, default=5)
    args = ap.parse_args(argv)
    model, _ = train_dialog_babi(args.model, args.task, data_home=args.data_home, seed=0)
    ranker = model[-1] if hasattr(model, "steps") else model
    print("| model | split | accuracy in the file's order, % | tied at the top (right) "
          "| ties counted against, % | proposals right (by a tie) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    for split in ("tst", "tst-OOV"):
        data = load_dialog_babi(args.task, split, data_home=args.data_home)
        right, tied = right_and_tied(model, ranker.candidates_, data.X, data.y)
        proposal = np.array([kind(r) == "option" for r in data.y])
        print(
            f"| {args.model} | {split} | {100 * right.mean():.2f} "
            f"| {tied.sum()} ({np.sum(tied & right)}) | {100 * np.mean(right & ~tied):.2f} "
            f"| {np.sum(proposal & right)} of {proposal.sum()} "
            f"({np.sum(proposal & right & tied)}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
