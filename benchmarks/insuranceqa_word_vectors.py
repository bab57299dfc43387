"""Supervised embeddings on InsuranceQA started from pretrained word vectors: word2vec
vectors trained (by gensim) on the probe's own training text, against normal draws and the
PPMI+SVD vectors of ``init="ppmi-svd"``.

Each model is ``benchmarks.insuranceqa_rankers``' ``se-pools`` (64 dimensions, margin 0.1,
10 epochs, each question's wrong answers its negatives), fitted on the first
``--train-questions`` training questions and scored on every valid question's pool (P@1
and MRR with ties against the model, MAP). The vectors are skip-gram word2vec (window 5,
5 epochs, one worker, seed 0) over the same text the PPMI+SVD vectors count: those
questions and every answer of their pools, in the model's own tokens. ``w2v`` starts from
them as they are, ``w2v-rms`` scaled to the root mean square of the normal draws
(``init_std``, 0.1), ``w2v-frozen`` from the scaled ones with ``freeze_embeddings=True``
(no word the vectors hold then learns). The test split is not read.

Usage::

    pip install 'irdialog[bench-gensim]'
    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python -m benchmarks.insuranceqa_word_vectors --data-home DIR
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.insuranceqa_rankers import (
    SE_POOLS,
    _negative_lists,
    _pairs,
    pool_metrics,
    read_insuranceqa,
)
from irdialog import SupervisedEmbeddingRanker
from irdialog.base import Context

MODELS = ("normal", "ppmi-svd", "w2v", "w2v-rms", "w2v-frozen")


def word2vec_vectors(texts, analyzer, dim, seed=0) -> dict:
    """Skip-gram word2vec vectors (gensim) of the words of ``texts`` as ``analyzer`` gives
    them."""
    try:
        from gensim.models import Word2Vec
    except ImportError:
        raise ImportError(
            "this probe trains word2vec with gensim: pip install 'irdialog[bench-gensim]'"
        ) from None
    sentences = [list(analyzer.words(t)) for t in texts]
    model = Word2Vec(
        sentences, vector_size=dim, window=5, min_count=1, sg=1, epochs=5, workers=1, seed=seed
    )
    return {w: model.wv[w] for w in model.wv.index_to_key}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA")
    ap.add_argument("--train-questions", type=int, default=3000)
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {MODELS}")
    args = ap.parse_args(argv)
    _, train, valid = read_insuranceqa(args.data_home)
    train = {k: v[: args.train_questions] for k, v in train.items()}
    X, y = _pairs(train)
    negatives = _negative_lists(train)
    questions = [x.query if isinstance(x, Context) else x for x in train["X"]]
    texts = questions + list(dict.fromkeys(a for pool in train["pools"] for a in pool))
    start = time.perf_counter()
    analyzer = SupervisedEmbeddingRanker()._analyzer()
    vectors = word2vec_vectors(texts, analyzer, SE_POOLS["embedding_dim"])
    rms = float(np.sqrt(np.mean(np.square(np.stack(list(vectors.values()))))))
    scaled = {w: v * np.float32(0.1 / rms) for w, v in vectors.items()}
    print(
        f"word2vec: {len(vectors)} words in {time.perf_counter() - start:.0f} s, root mean "
        f"square {rms:.3f}; train {len(train['X'])} questions ({len(X)} pairs), valid "
        f"{len(valid['X'])} questions"
    )
    configs = {
        "normal": {},
        "ppmi-svd": {"init": "ppmi-svd"},
        "w2v": {"initial_embeddings": vectors},
        "w2v-rms": {"initial_embeddings": scaled},
        "w2v-frozen": {"initial_embeddings": scaled, "freeze_embeddings": True},
    }
    n_right = [len(r) for r in valid["right"]]
    print(f"{'model':<12}{'P@1':>7}{'MAP':>7}{'MRR':>7}{'fit s':>7}")
    for name in args.models.split(","):
        start = time.perf_counter()
        model = SupervisedEmbeddingRanker(**SE_POOLS, **configs[name])
        model.fit(X, y, negative_lists=negatives)
        fit_s = time.perf_counter() - start
        m = pool_metrics(model.rank_candidates(valid["X"], valid["pools"]), n_right)
        row = f"{name:<12}{m['P@1']:>7.2f}{m['MAP']:>7.2f}{m['MRR']:>7.2f}{fit_s:>7.0f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
