"""What the rule-based bot covers on dialog bAbI task 6 (DSTC2), by kind of gold response.

A gold response is classed by the KB entities it names: a restaurant's attribute (phone,
address, post code), else a restaurant (an option), else the user's slot values (the API
calls), else none (a fixed utterance). For each kind: its share of the turns and the bot's accuracy,
and how many turns were answered by an exactly matching state (back-off level 0)::

    python -m benchmarks.rule_based_coverage --data-home DIR --split tst
"""

import argparse
from collections import Counter

import numpy as np

from irdialog import RuleBasedRanker
from irdialog.datasets import load_dialog_babi
from irdialog.text import tokenize


def _kind(response: str, kb: dict, slots) -> str:
    types = {kb.get(w) for w in tokenize(response)} - {None}
    if types - set(slots) - {"R_name"}:
        return "gives a restaurant's attribute"
    if "R_name" in types:
        return "proposes a restaurant"
    if types:
        return "names slot values (API call, request)"
    return "fixed utterance"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    ap.add_argument("--task", type=int, default=6)
    ap.add_argument("--split", default="dev", choices=["dev", "tst", "tst-OOV"])
    args = ap.parse_args(argv)
    train = load_dialog_babi(args.task, "trn", data_home=args.data_home)
    test = load_dialog_babi(args.task, args.split, data_home=args.data_home)
    bot = RuleBasedRanker(kb=train.kb, candidates=train.candidates).fit(train.X, train.y)
    scores = bot.decision_function(test.X)
    best = scores.argmax(axis=1)
    right = bot.candidates_[best] == np.asarray(test.y, dtype=object)
    # The integer part of the best score is 5 minus the back-off level that answered.
    exact = np.floor(scores.max(axis=1)) == 5
    kb = {e.lower(): t for e, t in train.kb.items()}
    kinds = np.array([_kind(r, kb, bot.slots) for r in test.y])
    print(f"task {args.task} {args.split}: {len(right)} turns, accuracy {100 * right.mean():.1f}%")
    print(f"{'gold response':<44}{'share':>7}{'accuracy':>10}{'exact state':>13}")
    for kind, n in Counter(kinds).most_common():
        mask = kinds == kind
        print(
            f"{kind:<44}{100 * n / len(kinds):>6.1f}%{100 * right[mask].mean():>9.1f}%"
            f"{100 * exact[mask].mean():>12.1f}%"
        )


if __name__ == "__main__":
    main()
