"""Evidence for the Movie Dialog gaps: how much of each test set the dev-as-train data covers.

For each task, over the test examples: the share whose gold answer entity (any of them) occurs
in the dev files (as an input or an answer entity), the share whose input entities all occur
there, the share where an input entity and a gold answer already appear together in a dev
example, and, with the KB memory of the MemN2N suite (KBMemoryRetriever with the suite's
settings), the share whose retrieved memories hold a gold answer (an upper bound for a model
reading only those memories).

Usage::

    python benchmarks/movie_dialog_coverage.py --data-home ../shared/data
"""

from __future__ import annotations

import argparse

import numpy as np

from irdialog.bench._movie_dialog import entity_candidates
from irdialog.datasets import load_movie_dialog, load_movie_kb
from irdialog.features import EntityParser
from irdialog.retrieval import KBMemoryRetriever


def coverage(task: int, data_home, parser: EntityParser, retriever) -> dict:
    dev = load_movie_dialog(task, "dev", data_home=data_home)
    test = load_movie_dialog(task, "test", data_home=data_home)

    def entities(ctx):
        texts = [ctx.query, *(t.text for t in ctx.history)]
        return {e for text in texts for e in parser.entity_ids(text)}

    seen, pairs = set(), set()
    for ctx, y in zip(dev.X, dev.y):
        answers = set(parser.entity_ids(y))
        seen |= entities(ctx) | answers
        pairs |= {(e, g) for e in entities(ctx) for g in answers}
    gold = [set(parser.entity_ids(y)) for y in test.y]
    inputs = [entities(ctx) for ctx in test.X]
    out = {
        "task": task,
        "n_test": len(test.X),
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
        row = coverage(task, args.data_home, parser, retriever)
        print(
            " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
        )


if __name__ == "__main__":
    main()
