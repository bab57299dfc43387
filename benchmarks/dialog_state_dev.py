"""Dev evidence for the dialog-state and KB-rank marks of the match-type featurizer
(BENCHMARKS.md).

MemN2N + match type at its bench preset, without marks, with ``dialog_state`` and with
``dialog_state`` and ``kb_ranks``, scored on the dev dialogs of a dialog bAbI task and on a
simulated OOV copy of them (test never read)::

    python -m benchmarks.dialog_state_dev --data-home DIR [--task 5]

The OOV copy renames every cuisine, location, restaurant name, phone and address of the KB
to a word no training text holds (``"zq"`` and the entity's letters reversed), in the dev
dialogs, their answers, the KB and a renamed copy of every candidate, as the real tst-OOV
sets bring entities unseen in training. Both models rank the candidates and their renamed
copies. Errors are counted by the kind of gold answer, with every exact tie at the top
counted against the model (``predict`` would break it by the candidates' order).
"""

from __future__ import annotations

import argparse
import collections

import numpy as np

from irdialog.base import Context, Turn
from irdialog.bench._dialog_babi import DIALOG_BABI_MODELS, SUITE_NAME, _kb_types, _memn2n
from irdialog.datasets import load_dialog_babi
from irdialog.features import MatchTypeFeaturizer
from irdialog.pipeline import RankingPipeline

# The entity types the real OOV test sets renew; the others (numbers, prices, ratings) stay.
RENAMED_TYPES = ("R_address", "R_cuisine", "R_location", "R_name", "R_phone")
# The marks compared: the featurizer's options.
MARKS = {
    "none": {},
    "dialog state": {"dialog_state": True},
    "dialog state + KB ranks": {"dialog_state": True, "kb_ranks": True},
}
KINDS = (("api_call", "api_call"), ("option", "what do you think of this option"),
         ("here it is", "here it is"))  # fmt: skip


def oov_copy(dialogs, kb, candidates):
    """(contexts, answers, KB, candidates) of ``dialogs`` with the entities of
    :data:`RENAMED_TYPES` renamed to unseen words, the KB and candidates holding both."""
    renamed = {w: "zq" + w[::-1] for w, t in kb.items() if t in RENAMED_TYPES}

    def ren(text):
        return " ".join(renamed.get(w, w) for w in text.split(" "))

    X = [Context(tuple(Turn(t.speaker, ren(t.text)) for t in c.history), ren(c.query))
         for c in dialogs.X]  # fmt: skip
    y = [ren(r) for r in dialogs.y]
    kb_oov = {**kb, **{new: kb[old] for old, new in renamed.items()}}
    return X, y, kb_oov, list(dict.fromkeys([*candidates, *map(ren, candidates)]))


def right_and_tied(model, candidates, X, y) -> tuple[np.ndarray, np.ndarray]:
    """Per example: is the first top-scored candidate (``predict``'s answer) the gold one,
    and is the top score shared by more than one candidate (an exact tie)?"""
    scores = model.decision_function(X)
    tied = (scores == scores.max(axis=1)[:, None]).sum(axis=1) > 1
    right = np.asarray(candidates)[scores.argmax(axis=1)] == np.asarray(y)
    return right, tied


def kind(response: str) -> str:
    return next((name for name, start in KINDS if response.startswith(start)), "other")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    ap.add_argument("--task", type=int, default=5)
    args = ap.parse_args(argv)
    trn = load_dialog_babi(args.task, "trn", data_home=args.data_home)
    dev = load_dialog_babi(args.task, "dev", data_home=args.data_home)
    kb = {w.lower(): t for w, t in trn.kb.items()}
    X_oov, y_oov, kb_oov, candidates = oov_copy(dev, kb, trn.candidates)
    [point] = DIALOG_BABI_MODELS["memn2n-type"].selection.points(SUITE_NAME, args.task)
    print("| marks | split | accuracy %, ties against | errors by gold answer (ties) |")
    print("|---|---|---:|---|")
    for name, marks in MARKS.items():
        featurizer = MatchTypeFeaturizer(kb_oov, types=_kb_types(kb_oov, "all"), **marks)
        ranker = _memn2n(trn, **point).set_params(candidates=candidates)
        model = RankingPipeline([("match_type", featurizer), ("ranker", ranker)])
        model.fit(trn.X, trn.y)
        for split, X, y in (("dev", dev.X, dev.y), ("dev, OOV copy", X_oov, y_oov)):
            right, tied = right_and_tied(model, ranker.candidates_, X, y)
            total, wrong, ties = collections.Counter(), collections.Counter(), collections.Counter()
            for gold, ok, tie in zip(y, right & ~tied, tied):
                total[kind(gold)] += 1
                wrong[kind(gold)] += not ok
                ties[kind(gold)] += tie
            errors = ", ".join(f"{k} {wrong[k]}/{total[k]} ({ties[k]})" for k in total)
            accuracy = 100 * np.mean(right & ~tied)
            print(f"| {name} | {split} | {accuracy:.2f} | {errors} |", flush=True)


if __name__ == "__main__":
    main()
