"""How much of a generated Ubuntu corpus' topic signal is learnable from its true pairs.

A probe, not a model of the package: it counts which context words occur with which response
words in the training rows labelled 1 and scores a (context, candidate) pair by the mean, over
the candidate's words, of the summed positive pointwise mutual information with the context's
words. It needs no optimisation, so when it ranks well above TF-IDF and a trained model does
not, the model (its data hunger), not the corpus, is what fails. Memory grows with the number
of co-occurring word pairs: meant for the 10k- and 100k-row corpora, not the 1M one.

Run::

    python -m benchmarks.ubuntu_cooccurrence_probe --data-home /tmp/ubuntu-10k --split valid
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from irdialog.datasets import iter_ubuntu
from irdialog.metrics import recall_at_k


def _context_text(context) -> str:
    return " ".join([turn.text for turn in context.history] + [context.query])


def positive_pmi(contexts: list[str], responses: list[str]):
    """(vectorizer, PPMI matrix context word x response word) of the true pairs."""
    vectorizer = CountVectorizer(token_pattern=r"\S+", binary=True, lowercase=False)
    vectorizer.fit(contexts + responses)
    A = vectorizer.transform(contexts).astype(np.float64)
    B = vectorizer.transform(responses).astype(np.float64)
    n = A.shape[0]
    joint = (A.T @ B).tocoo()  # pairs seen together at least once
    p_context = np.asarray(A.sum(axis=0)).ravel() / n
    p_response = np.asarray(B.sum(axis=0)).ravel() / n
    pmi = np.log(joint.data / n / (p_context[joint.row] * p_response[joint.col]))
    keep = pmi > 0
    ppmi = sp.csr_matrix(
        (pmi[keep], (joint.row[keep], joint.col[keep])), shape=joint.shape, dtype=np.float64
    )
    return vectorizer, ppmi


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--split", default="valid", choices=["valid", "test"])
    args = parser.parse_args(argv)
    contexts, responses = [], []
    for chunk in iter_ubuntu("train", data_home=args.data_home):
        for i in np.flatnonzero(chunk.labels == 1):
            contexts.append(_context_text(chunk.X[i]))
            responses.append(chunk.y[i])
    vectorizer, ppmi = positive_pmi(contexts, responses)
    scores = []
    for chunk in iter_ubuntu(args.split, data_home=args.data_home):
        evidence = vectorizer.transform([_context_text(x) for x in chunk.X]) @ ppmi
        width = max(len(c) for c in chunk.candidate_lists)
        block = np.full((len(chunk.X), width), -np.inf)
        for j in range(width):
            rows = [i for i, c in enumerate(chunk.candidate_lists) if j < len(c)]
            cand = vectorizer.transform([chunk.candidate_lists[i][j] for i in rows])
            total = np.asarray(evidence[rows].multiply(cand).sum(axis=1)).ravel()
            block[rows, j] = total / np.maximum(np.asarray(cand.sum(axis=1)).ravel(), 1)
        scores.append(block)
    width = max(s.shape[1] for s in scores)
    padded = [np.pad(s, ((0, 0), (0, width - s.shape[1])), constant_values=-np.inf) for s in scores]
    scores = np.vstack(padded)
    print(
        f"{len(contexts)} true pairs; {args.split}: "
        + ", ".join(
            f"r{k}@{n} {100 * recall_at_k(scores, k, n):.1f}"
            for k, n in ((1, 2), (1, 10), (2, 10), (5, 10))
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
