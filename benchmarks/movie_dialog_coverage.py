"""Evidence for the Movie Dialog gaps: how much of each test set the dev-as-train data covers.

For each task, over the test examples (trained on dev), and over the held-out 20% of dev used for
model selection (trained on the other 80%): the share whose gold answer entity (any of them) occurs
in the dev files (as an input or an answer entity), the share whose input entities all occur
there, the share where an input entity and a gold answer already appear together in a dev
example, and, with the KB memory of the MemN2N suite (KBMemoryRetriever with the suite's
settings), the share whose retrieved memories hold a gold answer (an upper bound for a model
reading only those memories).

Usage::

    python -m benchmarks.movie_dialog_coverage --data-home DIR
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.utils import Bunch

from irdialog.bench._movie_dialog import entity_candidates, heldout_split
from irdialog.datasets import load_movie_dialog, load_movie_kb
from irdialog.entities import EntityParser
from irdialog.retrieval import KBMemoryRetriever


def _subset(data, rows):
    return Bunch(X=[data.X[i] for i in rows], y=[data.y[i] for i in rows])


def coverage(task: int, dev, test, parser: EntityParser, retriever) -> dict:
    """Coverage of the examples of ``test`` by the training examples ``dev``."""

    def entities(ctx):
        texts = [ctx.query, *(t.text for t in ctx.history)]
        return {e for text in texts for e in parser.entity_ids(text)}

    seen, pairs = set(), set()
    for ctx, y in zip(dev.X, dev.y):
        answers, inputs = set(parser.entity_ids(y)), entities(ctx)
        seen |= inputs | answers
        pairs |= {(e, g) for e in inputs for g in answers}
    gold = [set(parser.entity_ids(y)) for y in test.y]
    inputs = [entities(ctx) for ctx in test.X]
    out = {
        "task": task,
        "n": len(test.X),
        "gold_entity_in_dev": float(np.mean([bool(g & seen) for g in gold])),
        "all_input_entities_in_dev": float(np.mean([i <= seen for i in inputs])),
        "gold_entity_in_input": float(np.mean([bool(g & i) for g, i in zip(gold, inputs)])),
        # some input entity was paired with a gold answer in a dev example: what a model
        # that only memorises dev associations (supervised embeddings) can get right
        "input_gold_pair_in_dev": float(
            np.mean([any((e, a) in pairs for e in i for a in g) for g, i in zip(gold, inputs)])
        ),
    }
    memories = retriever.transform(parser.transform(test.X))
    token = parser.entity_tokens_
    hit = [
        any(token[e] in t.text.split() for e in g for t in m.history if t.speaker == "kb")
        for g, m in zip(gold, memories)
    ]
    out["gold_entity_in_kb_memory"] = float(np.mean(hit))
    out["mean_kb_memories"] = retriever.n_retrieved_
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args(argv)
    kb = load_movie_kb(args.data_home).sentences
    parser = EntityParser(entity_candidates(args.data_home), min_count=1).fit(kb)
    retriever = KBMemoryRetriever(parser.transform_text(kb)).fit()
    for task in args.tasks:
        dev = load_movie_dialog(task, "dev", data_home=args.data_home)
        fit_idx, held_idx = heldout_split(dev.groups)
        fit, held = _subset(dev, fit_idx), _subset(dev, held_idx)
        test = load_movie_dialog(task, "test", data_home=args.data_home)
        for name, (train, evaluated) in {
            "dev->test": (dev, test),
            "dev-fit->heldout": (fit, held),
        }.items():
            row = coverage(task, train, evaluated, parser, retriever)
            cells = (f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
            print(name, " ".join(cells))


if __name__ == "__main__":
    main()
