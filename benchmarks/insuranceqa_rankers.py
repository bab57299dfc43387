"""Learned rankers against BM25 on InsuranceQA (English): answer selection in pools.

Each validation question is ranked against its pool (its right answers and the 200 wrong
answers retrieved for it, which share its words) with ``rank_candidates``. Printed per
model: P@1 and MRR with ties counted against the model (a right answer tied with a wrong
one ranks after it), P@1 at its expected value under a random tie-break, MAP (ties
against the model), and the seconds of the fit and of ranking the pools, on one thread:
wall-clock and the process's CPU time (the fairer figure on a shared machine).
Every choice is made on the train and valid splits; the test split is not read.

The data (GPL-3.0) are read from ``--data-home``, never bundled: ``insuranceqa-en/``
holding ``answers.json.gz`` (``{id: {"en": text}}``) and ``train.json.gz`` /
``valid.json.gz`` (``{qid: {"en": question, "answers": [ids], "negatives": [ids]}}``), read
by ``load_dialogs(..., format="pools-by-id")``. BM25's candidates are the answers of the
training pools, as in ``irdialog bench insuranceqa``.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python -m benchmarks.insuranceqa_rankers --data-home DIR [--models bm25,ltr]

``--no-spaces`` ranks a copy of the corpus written without spaces (built in memory, never
saved), for the models that read characters (``ltr+se-cv3-char3``) or subword units learned
from the training text (``ltr+se-cv3-bpe*``, and ``ltr+2se-cv3-char3+bpe2k+8k``: character
trigrams, with supervised embeddings and BM25 over byte-pair units as more features; and
``ltr+2se-cv3-uni2k-lex+8k+c33``, the pieces of SentencePiece's unigram model in place of the
byte-pair units, the lexical features reading them, BM25 over character trigrams beside).
A name ending in ``-x3`` fits its supervised embeddings from three random starts, fused.
``--invented-script`` ranks a copy written in an invented script without spaces, as Chinese
is (:func:`invented_script`): every word becomes one to three invented ideographs, the
frequent words the short ones; for it, besides the models above, ``ltr+se-cv3-char12`` and
``ltr+se-cv3-char13`` read characters and their bigrams (and trigrams) as a user of such a
script would, and ``ltr+2se-cv3-char12+bpe2k+8k`` adds to the first the byte-pair features of
``ltr+2se-cv3-char3+bpe2k+8k``. ``--script-seed`` draws another invented script (0 by
default).
"""

from __future__ import annotations

import argparse
import os
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from benchmarks import invented_words
from irdialog import (
    BM25Ranker,
    DualEncoderRanker,
    MemN2NRanker,
    SupervisedEmbeddingRanker,
    TfidfRanker,
)
from irdialog.base import Context
from irdialog.bench._insuranceqa import _SE_RARITY, _se_rarity
from irdialog.datasets import load_dialogs
from irdialog.ensemble import FusionRanker, LearningToRankRanker, SeedEnsembleRanker
from irdialog.metrics import gold_ranks
from irdialog.text import SubwordTokenizer, UnigramTokenizer, char_tokenize

SE = dict(embedding_dim=64, epochs=10, random_state=0)
# With pools of hard negatives a larger margin pays (valid P@1 of se-pools: margin 0.01,
# the default, 12.35; 0.1, 14.10)
SE_POOLS = dict(SE, margin=0.1)
# Text without spaces (--no-spaces): supervised embeddings over character trigrams, with a
# smaller step (bags five times longer than of words: the default step diverged)
SE_CHAR3 = dict(SE_POOLS, tokenizer="char", ngram_range=(3, 3), learning_rate=0.002)
SE_CHAR34 = dict(SE_CHAR3, ngram_range=(3, 4))
# The invented script (--invented-script): embeddings over characters and their bigrams
# (and trigrams), at the step of the trigrams. Valid P@1 on it (script seed 0), on the first
# 3,000 training questions: ltr+se-cv3-char3 22.60, ltr+2se-cv3-char3+bpe2k+8k 26.40,
# ltr+se-cv3-char13 32.65, ltr+se-cv3-char12 32.90, ltr+2se-cv3-char12+bpe2k+8k 33.55,
# the same with BM25 over 32,000 units too 33.75, or over character bigrams and trigrams
# (+c23) 34.30
SE_CHAR12 = dict(SE_CHAR3, ngram_range=(1, 2))
SE_CHAR13 = dict(SE_CHAR3, ngram_range=(1, 3))
# The dual encoder and MemN2N at a small scale (the first 1000 train questions), the same
# for random negatives, negatives mined by BM25 and the corpus's pools. MemN2N's step on
# the 500 first valid questions (P@1 random / pools): 0.001, 1.60 / 5.00; 0.01, 2.80 / 6.60.
# The dual encoder stays near chance at this scale (20 epochs at 0.003: 1.00 / 1.20).
DUAL = dict(hidden_size=64, embedding_dim=64, max_length=100, epochs=5, random_state=0)
MEMN2N = dict(embedding_dim=64, optimizer="lazy_adam", learning_rate=0.01, epochs=20,
              random_state=0)  # fmt: skip
# Learning to rank with embedding scores cross-fitted over 3 folds, 50 wrong answers a pool
LTR_CV3 = dict(cv=3, max_negatives=50, random_state=0)
_WHITE_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


# -- data -------------------------------------------------------------------------------------


def read_split(data_home, split: str) -> dict:
    """Questions, right answers (texts) and pools (right answers first) of one split, read
    by the package's ``pools-by-id`` loader."""
    home = Path(data_home or os.environ.get("IRDIALOG_DATA", ".")) / "insuranceqa-en"
    data = load_dialogs(home / f"{split}.json.gz", format="pools-by-id")
    right = [[r] if isinstance(r, str) else list(r) for r in data.y]
    return {"X": list(data.X), "right": right, "pools": [list(p) for p in data.candidate_lists]}


def read_insuranceqa(data_home) -> tuple[list, dict, dict]:
    """The answers of the training pools (the candidates of BM25 and its statistics, as
    ``irdialog bench insuranceqa`` has them), and the train and valid splits."""
    train, valid = read_split(data_home, "train"), read_split(data_home, "valid")
    return list(dict.fromkeys(a for pool in train["pools"] for a in pool)), train, valid


def _query(x) -> str:
    return x.query if isinstance(x, Context) else x


def rewritten(split: dict, rewrite) -> dict:
    """A split with ``rewrite`` (a function of a text) applied to its questions and
    answers; answers that become one text are merged, in each pool and list of right
    answers.

    Examples
    --------
    >>> split = {"X": ["how do i renew"], "right": [["online"]],
    ...          "pools": [["online", "on line", "by phone"]]}
    >>> rewritten(split, squeeze)["pools"]
    [['online', 'byphone']]
    """
    return {
        "X": [Context(query=rewrite(_query(x))) for x in split["X"]],
        "right": [list(dict.fromkeys(map(rewrite, rights))) for rights in split["right"]],
        "pools": [list(dict.fromkeys(map(rewrite, pool))) for pool in split["pools"]],
    }


def squeeze(text: str) -> str:
    """``text`` with every white space removed, as a language written without spaces
    between words would have it.

    Examples
    --------
    >>> squeeze("how do i  renew")
    'howdoirenew'
    """
    return _WHITE_SPACE.sub("", text)


def invented_script(texts, seed: int = 0, separator: str = ""):
    """The rewriting of a text into an invented script written without spaces, as Chinese
    is: each word (a ``\\w+`` run, lower-cased) becomes its invented word, one to three
    characters of 3,000 CJK ideographs (:func:`benchmarks.invented_words`, drawn with
    ``seed``), and punctuation is dropped. With ``separator=" "`` the invented words are
    written with spaces between them: the same script, to tell what the script costs a model
    from what the missing spaces cost.

    The words are those of ``texts``, each distinct text counted once; the most frequent
    get the shortest invented words (ties by the word), as in a real script. The counts
    read the texts only (the answer corpus and every question), never which answer is
    right. Distinct words get distinct invented words, so two texts differ after the
    rewriting unless they differ only by case and punctuation (or their concatenated
    invented words coincide, as a text without spaces can be segmented in several ways).

    Parameters
    ----------
    texts : iterable of str
    seed : int, default=0
    separator : str, default=""
        Written between the invented words.

    Returns
    -------
    rewrite : callable, str -> str
        Raises ``ValueError`` on a word not in ``texts``.

    Examples
    --------
    >>> rewrite = invented_script(["the cat sat", "the dog!", "The end."])
    >>> [rewrite(w) for w in ("the", "cat", "dog", "end", "sat")]
    ['饲', '杸', '懒稪', '骷耈', '鍺冔萌']
    >>> rewrite("The cat, the dog.")
    '饲杸饲懒稪'
    >>> invented_script(["the cat sat", "the dog!", "The end."], separator=" ")("The cat.")
    '饲 杸'
    >>> rewrite("the bird")
    Traceback (most recent call last):
    ...
    ValueError: the word 'bird' is not in the invented script
    """
    counts = Counter(w for text in dict.fromkeys(texts) for w in _WORD.findall(text.lower()))
    words = sorted(counts, key=lambda w: (-counts[w], w))
    codes = sorted(invented_words(np.random.default_rng(seed), len(words), "no-spaces"), key=len)
    code = dict(zip(words, codes))

    def rewrite(text: str) -> str:
        try:
            return separator.join(code[w] for w in _WORD.findall(text.lower()))
        except KeyError as e:
            raise ValueError(f"the word {e.args[0]!r} is not in the invented script") from None

    return rewrite


def char_trigrams(text: str) -> list[str]:
    """The overlapping character trigrams of a text (its characters when shorter): the
    tokens of the lexical features on text without spaces.

    Examples
    --------
    >>> char_trigrams("Renew")
    ['ren', 'ene', 'new']
    """
    chars = char_tokenize(text)
    return ["".join(chars[i : i + 3]) for i in range(len(chars) - 2)] or chars


# -- metrics ----------------------------------------------------------------------------------


def pool_metrics(scores: np.ndarray, n_right: list[int]) -> dict:
    """P@1 and MRR (ties against the model, from irdialog.metrics), P@1 at its expected
    value under a random tie-break, and MAP with ties against the model; in percent."""
    gold = [list(range(n)) for n in n_right]
    ranks = gold_ranks(gold, scores, ties="pessimistic")
    expected, ap = [], []
    for s, n in zip(scores, n_right):
        s = s[np.isfinite(s)]
        right, wrong = s[:n], s[n:]
        top = right.max()
        ahead, tied = int((wrong > top).sum()), int((wrong == top).sum())
        expected.append(0.0 if ahead else (right == top).sum() / ((right == top).sum() + tied))
        # each right answer after every wrong answer and every other right answer it ties
        r = np.sort([1 + (wrong >= v).sum() + (right > v).sum() + (right == v).sum() - 1
                     for v in right])  # fmt: skip
        ap.append(np.mean(np.arange(1, n + 1) / r))
    return {
        "P@1": 100 * float(np.mean(ranks == 1)),
        "P@1 expected": 100 * float(np.mean(expected)),
        "MAP": 100 * float(np.mean(ap)),
        "MRR": 100 * float(np.mean(1 / ranks)),
    }


# -- models -----------------------------------------------------------------------------------


def _pairs(train):
    rows = [(x, a) for x, rights in zip(train["X"], train["right"]) for a in rights]
    return [x for x, _ in rows], [a for _, a in rows]


def _negative_lists(train):
    return [
        pool[len(rights) :] for pool, rights in zip(train["pools"], train["right"]) for _ in rights
    ]


def _fit_pairs(model):
    def fit(train, corpus):
        return model.fit(*_pairs(train))

    return fit


def _fit_se_pools(params):
    return _fit_pools(SupervisedEmbeddingRanker, params)


def _fit_pools(model, params):
    """Fit ``model(**params)`` on the (question, right answer) pairs with each pair's pool
    of wrong answers as its ``negative_lists``."""

    def fit(train, corpus):
        X, y = _pairs(train)
        return model(**params).fit(X, y, negative_lists=_negative_lists(train))

    return fit


def _fit_ltr(se_seeds=1, **params):
    """Learning to rank with ``params``; with ``se_seeds`` > 1, each supervised-embedding
    ranker among its ``rankers`` fitted from that many random starts, fused
    (:class:`~irdialog.ensemble.SeedEnsembleRanker`)."""

    def fit(train, corpus):
        rankers = [
            (name, SeedEnsembleRanker(r, n_seeds=se_seeds, random_state=0))
            if se_seeds > 1 and isinstance(r, SupervisedEmbeddingRanker)
            else (name, r)
            for name, r in params.get("rankers", [])
        ]
        model = LearningToRankRanker(**{**params, **({"rankers": rankers} if rankers else {})})
        return model.fit(train["X"], train["right"], candidate_lists=train["pools"])

    return fit


def _fit_ltr_cv3(se_params, tokenizer="word", more=(), se_seeds=1):
    """``ltr+se-cv3`` and its variants: learning to rank with the scores of supervised
    embeddings (``se_params``, from ``se_seeds`` random starts) and of the (name, ranker)
    pairs of ``more`` as features (:data:`LTR_CV3`), the lexical features read with
    ``tokenizer``."""
    se = SupervisedEmbeddingRanker(**se_params)
    return _fit_ltr(rankers=[("se", se), *more], tokenizer=tokenizer, se_seeds=se_seeds, **LTR_CV3)


def _fit_se_rarity_seeds(n_seeds):
    """The linear fusion (scores standardised over each pool, summed) of the suite's
    ``se-pools-rarity`` fitted with the seeds ``0 .. n_seeds - 1``, each on the pools'
    wrong answers: supervised embeddings only, their seeds' errors averaged out."""

    def fit(train, corpus):
        train_ = Bunch(candidates=corpus)
        rankers = [
            (f"se{seed}", _se_rarity(train_, **dict(_SE_RARITY, random_state=seed)))
            for seed in range(n_seeds)
        ]
        model = FusionRanker(rankers, method="linear", candidates=corpus)
        return model.fit(train["X"], train["right"], candidate_lists=train["pools"])

    return fit


def _fit_fusion(method):
    def fit(train, corpus):
        model = FusionRanker(
            [
                ("bm25", BM25Ranker(candidates=corpus)),
                ("se", SupervisedEmbeddingRanker(**SE_POOLS)),
            ],
            method=method,
        )
        return model.fit(train["X"], train["right"], candidate_lists=train["pools"])

    return fit


def _training_texts(train, answers: str) -> list[str]:
    """The questions of the training split and its right answers (``"right"``) or every
    answer of its pools (``"pools"``): what a subword tokenizer learns from."""
    questions = [x.text() if isinstance(x, Context) else x for x in train["X"]]
    lists = train["right"] if answers == "right" else train["pools"]
    return questions + [a for answers in lists for a in answers]


def _fit_ltr_subwords(
    n_merges: int, answers: str = "right", se=SE_POOLS, char_ngrams=None, **params
):
    """``ltr+se-cv3`` with byte-pair units learned from the training text (questions and
    ``answers``) as the tokens of the lexical features and of the embeddings; with
    ``char_ngrams`` (an ngram_range), BM25 over character n-grams as one more feature."""

    def fit(train, corpus):
        tokenizer = SubwordTokenizer(n_merges).fit(_training_texts(train, answers))
        rankers = [("se", SupervisedEmbeddingRanker(**dict(se, tokenizer=tokenizer)))]
        if char_ngrams:
            rankers.append(("bm25-char", BM25Ranker(tokenizer="char", ngram_range=char_ngrams)))
        return _fit_ltr(rankers=rankers, tokenizer=tokenizer, **LTR_CV3, **params)(train, corpus)

    return fit


_UNITS = {"bpe": SubwordTokenizer, "unigram": UnigramTokenizer}


def _fit_ltr_char3_plus(
    n_merges=None,
    char_ngrams=None,
    se_units=False,
    bm25_merges=(),
    char_se=SE_CHAR3,
    char_tokenizer=char_trigrams,
    units="bpe",
    se_seeds=1,
):
    """``ltr+se-cv3-char3`` (or, with ``char_se`` and ``char_tokenizer``, another model of
    characters) with more rankers' scores as features: BM25 over subword units learned
    from the training questions and right answers (``n_merges`` of them; ``units``:
    byte-pair units, or the pieces of SentencePiece's unigram model), with ``se_units``
    supervised embeddings over them too, and BM25 over character n-grams (``char_ngrams``,
    an ngram_range), and BM25 over units of each of ``bm25_merges``. ``char_tokenizer=
    "units"`` reads the lexical features in the units of ``n_merges``; ``se_seeds`` as
    :func:`_fit_ltr`."""
    learn = _UNITS[units]

    def fit(train, corpus):
        rankers = [("se", SupervisedEmbeddingRanker(**char_se))] if char_se else []
        lexical = char_tokenizer
        if n_merges:
            tokenizer = learn(n_merges).fit(_training_texts(train, "right"))
            rankers.append((f"bm25-{units}", BM25Ranker(tokenizer=tokenizer)))
            if se_units:
                se = SupervisedEmbeddingRanker(**dict(SE_POOLS, tokenizer=tokenizer))
                rankers.append((f"se-{units}", se))
            if char_tokenizer == "units":
                lexical = tokenizer
        for n in bm25_merges:
            tokenizer = learn(n).fit(_training_texts(train, "right"))
            rankers.append((f"bm25-{units}{n}", BM25Ranker(tokenizer=tokenizer)))
        if char_ngrams:
            rankers.append(("bm25-char", BM25Ranker(tokenizer="char", ngram_range=char_ngrams)))
        return _fit_ltr(rankers=rankers, tokenizer=lexical, se_seeds=se_seeds, **LTR_CV3)(
            train, corpus
        )

    return fit


# name -> fit(train, corpus: the answers of the training pools) -> a fitted ranker
MODELS = {
    "tfidf": _fit_pairs(TfidfRanker()),
    "bm25": lambda train, corpus: BM25Ranker(candidates=corpus).fit(*_pairs(train)),
    "se": _fit_pairs(SupervisedEmbeddingRanker(**SE)),
    # every parameter at its default (the seed aside), on the (question, right answer) pairs
    "se-default": _fit_pairs(SupervisedEmbeddingRanker(random_state=0)),
    "memn2n-default": _fit_pairs(MemN2NRanker(random_state=0)),
    "dual-encoder-default": _fit_pairs(DualEncoderRanker(random_state=0)),
    "se-bm25": _fit_pairs(SupervisedEmbeddingRanker(**SE, negatives="bm25")),
    "dual-encoder": _fit_pairs(DualEncoderRanker(**DUAL)),
    "dual-encoder-bm25": _fit_pairs(DualEncoderRanker(**DUAL, negatives="bm25")),
    "dual-encoder-pools": _fit_pools(DualEncoderRanker, DUAL),
    "memn2n": _fit_pairs(MemN2NRanker(**MEMN2N)),
    "memn2n-bm25": _fit_pairs(MemN2NRanker(**MEMN2N, negatives="bm25")),
    "memn2n-pools": _fit_pools(MemN2NRanker, MEMN2N),
    "se-pools": _fit_se_pools(SE),
    "se-pools-m0.1": _fit_se_pools(SE_POOLS),
    "se-pools-d128": _fit_se_pools(dict(SE_POOLS, embedding_dim=128)),
    "se-pools-d256": _fit_se_pools(dict(SE_POOLS, embedding_dim=256)),
    # started from the PPMI+SVD vectors of the training text (init="ppmi-svd")
    "se-pools-ppmi": _fit_se_pools(dict(SE_POOLS, init="ppmi-svd")),
    "se-pools-d128-ppmi": _fit_se_pools(dict(SE_POOLS, embedding_dim=128, init="ppmi-svd")),
    "se-pools-d256-ppmi": _fit_se_pools(dict(SE_POOLS, embedding_dim=256, init="ppmi-svd")),
    "se-pools-bigrams": _fit_se_pools(dict(SE_POOLS, ngram_range=(1, 2))),
    "se-pools-ppmi-bigrams": _fit_se_pools(dict(SE_POOLS, init="ppmi-svd", ngram_range=(1, 2))),
    "se-rarity": _fit_se_rarity_seeds(1),
    # supervised embeddings alone, the rarity types, the seeds 0..n-1 fused (the suite's
    # se-rarity-x3 draws its members' seeds)
    "se-rarity-seeds01": _fit_se_rarity_seeds(2),
    "se-rarity-seeds012": _fit_se_rarity_seeds(3),
    "fusion-rrf": _fit_fusion("rrf"),
    "fusion-linear": _fit_fusion("linear"),
    "ltr": _fit_ltr(random_state=0),
    "ltr-50neg": _fit_ltr(max_negatives=50, random_state=0),
    "ltr+se": _fit_ltr(
        rankers=[("se", SupervisedEmbeddingRanker(**SE_POOLS))], max_negatives=50, random_state=0
    ),
    "ltr+se-cv3": _fit_ltr_cv3(SE_POOLS),
    # and BM25 over character bigrams and trigrams as one more ranker (ltr-se-char of the suite)
    "ltr+se-cv3+c23": _fit_ltr_cv3(
        SE_POOLS, more=[("bm25-char", BM25Ranker(tokenizer="char", ngram_range=(2, 3)))]
    ),
    # for --invented-script: characters in the lexical features, and in the embeddings
    # characters and their bigrams (char12), or characters, bigrams and trigrams (char13)
    "ltr+se-cv3-char12": _fit_ltr_cv3(SE_CHAR12, tokenizer="char"),
    "ltr+se-cv3-char13": _fit_ltr_cv3(SE_CHAR13, tokenizer="char"),
    # for --no-spaces: character trigrams in the lexical features and the embeddings
    "ltr+se-cv3-char3": _fit_ltr_cv3(SE_CHAR3, tokenizer=char_trigrams),
    # byte-pair units learned from the training questions and right answers (or every
    # answer of the training pools: -pools), for text with or without spaces
    "ltr+se-cv3-bpe2k": _fit_ltr_subwords(2000),
    "ltr+se-cv3-bpe8k": _fit_ltr_subwords(8000),
    "ltr+se-cv3-bpe16k": _fit_ltr_subwords(16000),
    "ltr+se-cv3-bpe32k": _fit_ltr_subwords(32000),
    "ltr+se-cv3-bpe8k-pools": _fit_ltr_subwords(8000, "pools"),
    "ltr+se-cv3-bpe16k-pools": _fit_ltr_subwords(16000, "pools"),
    "ltr+se-cv3-bpe8k+char24": _fit_ltr_subwords(8000, char_ngrams=(2, 4)),
    "ltr+se-cv3-char3+bpe2k": _fit_ltr_char3_plus(2000),
    "ltr+se-cv3-char3+bpe2k+c45": _fit_ltr_char3_plus(2000, (4, 5)),
    "ltr+se-cv3-char3+c45": _fit_ltr_char3_plus(None, (4, 5)),
    "ltr+2se-cv3-char3+bpe2k": _fit_ltr_char3_plus(2000, se_units=True),
    "ltr+2se-cv3-char3+bpe2k+8k": _fit_ltr_char3_plus(2000, se_units=True, bm25_merges=(8000,)),
    # and BM25 over character bigrams and trigrams, as English's ltr+se-cv3+c23
    "ltr+2se-cv3-char3+bpe2k+8k+c23": _fit_ltr_char3_plus(
        2000, char_ngrams=(2, 3), se_units=True, bm25_merges=(8000,)
    ),
    "ltr+2se-cv3-char12+bpe2k+8k": _fit_ltr_char3_plus(
        2000, se_units=True, bm25_merges=(8000,), char_se=SE_CHAR12, char_tokenizer="char"
    ),
    # and BM25 over character bigrams and trigrams, which hold the invented script's words of
    # two and three characters whole
    "ltr+2se-cv3-char12+bpe2k+8k+c23": _fit_ltr_char3_plus(
        2000,
        char_ngrams=(2, 3),
        se_units=True,
        bm25_merges=(8000,),
        char_se=SE_CHAR12,
        char_tokenizer="char",
    ),
    "ltr+se-cv3-bpe8k-lr005": _fit_ltr_subwords(8000, se=dict(SE_POOLS, learning_rate=0.005)),
    # SentencePiece's unigram pieces (UnigramTokenizer) in place of the byte-pair units: the
    # lexical features read character trigrams, or the 2,000 pieces (-uni2k-lex), and BM25
    # reads character trigrams (+c33) or bigrams and trigrams (+c23)
    "ltr+2se-cv3-char3+uni2k+8k": _fit_ltr_char3_plus(
        2000, se_units=True, bm25_merges=(8000,), units="unigram"
    ),
    "ltr+2se-cv3-uni2k-lex+8k+c33": _fit_ltr_char3_plus(
        2000, (3, 3), True, (8000,), char_tokenizer="units", units="unigram"
    ),
    # the supervised embeddings of the two above, each from three random starts, fused
    "ltr+se-cv3+c23-x3": _fit_ltr_cv3(
        SE_POOLS,
        more=[("bm25-char", BM25Ranker(tokenizer="char", ngram_range=(2, 3)))],
        se_seeds=3,
    ),
    "ltr+2se-cv3-uni2k-lex+8k+c33-x3": _fit_ltr_char3_plus(
        2000, (3, 3), True, (8000,), char_tokenizer="units", units="unigram", se_seeds=3
    ),
    "ltr+2se-cv3-char12+bpe2k+8k+c23-x3": _fit_ltr_char3_plus(
        2000, (2, 3), True, (8000,), SE_CHAR12, "char", se_seeds=3
    ),
    "ltr+2se-cv3-uni2k-lex+8k+c23": _fit_ltr_char3_plus(
        2000, (2, 3), True, (8000,), char_tokenizer="units", units="unigram"
    ),
    # supervised embeddings over character trigrams and 4-grams, or BM25 over 3-5-grams, in
    # place of trigrams (valid P@1 on the first 3,000 training questions: 34.10, 32.70,
    # against 33.10)
    "ltr+2se-cv3-char34-uni2k-lex+8k+c33": _fit_ltr_char3_plus(
        2000, (3, 3), True, (8000,), SE_CHAR34, "units", "unigram"
    ),
    "ltr+2se-cv3-char34-uni2k-lex+8k+c33-x3": _fit_ltr_char3_plus(
        2000, (3, 3), True, (8000,), SE_CHAR34, "units", "unigram", se_seeds=3
    ),
    "ltr+2se-cv3-uni2k-lex+8k+c35": _fit_ltr_char3_plus(
        2000, (3, 5), True, (8000,), char_tokenizer="units", units="unigram"
    ),
    # the invented script's 3,000 characters are pieces too: 2,000 and 8,000 more
    "ltr+2se-cv3-char12+uni5k+11k+c23": _fit_ltr_char3_plus(
        5000, (2, 3), True, (11000,), SE_CHAR12, "char", units="unigram"
    ),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA")
    ap.add_argument("--models", default="bm25,ltr", help=f"comma-separated, of {list(MODELS)}")
    ap.add_argument(
        "--train-questions", type=int, default=None, help="the first N train questions only"
    )
    ap.add_argument(
        "--valid-questions", type=int, default=None, help="the first N valid questions only"
    )
    script = ap.add_mutually_exclusive_group()
    script.add_argument(
        "--no-spaces",
        action="store_true",
        help="remove every white space from the questions and answers (built in memory)",
    )
    script.add_argument(
        "--invented-script",
        action="store_true",
        help="write every word in an invented script of CJK ideographs, without spaces "
        "(built in memory)",
    )
    ap.add_argument(
        "--script-spaces",
        action="store_true",
        help="with --invented-script, a space between the invented words",
    )
    ap.add_argument(
        "--script-seed",
        type=int,
        default=None,
        help="with --invented-script, the seed of its alphabet and words (default: 0)",
    )
    args = ap.parse_args(argv)
    if args.script_seed is not None and not args.invented_script:
        ap.error("--script-seed is the seed of --invented-script, which is not given")
    if args.script_spaces and not args.invented_script:
        ap.error("--script-spaces writes --invented-script with spaces; it is not given")
    names = args.models.split(",")
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown models {unknown}; choose from {list(MODELS)}")
    corpus, train, valid = read_insuranceqa(args.data_home)
    rewrite = squeeze if args.no_spaces else None
    if args.invented_script:
        # the words of every answer and every question, before any is left out
        answers = [a for split in (train, valid) for pool in split["pools"] for a in pool]
        questions = [_query(x) for split in (train, valid) for x in split["X"]]
        rewrite = invented_script(
            corpus + answers + questions, args.script_seed or 0, " " if args.script_spaces else ""
        )
    if args.train_questions:
        train = {k: v[: args.train_questions] for k, v in train.items()}
    if args.valid_questions:
        valid = {k: v[: args.valid_questions] for k, v in valid.items()}
    if rewrite:
        train, valid = rewritten(train, rewrite), rewritten(valid, rewrite)
        corpus = list(dict.fromkeys(map(rewrite, corpus)))
    n_right = [len(r) for r in valid["right"]]
    print(
        f"InsuranceQA valid: {len(valid['X'])} questions, pools of "
        f"{min(map(len, valid['pools']))}-{max(map(len, valid['pools']))}; train "
        f"{len(train['X'])} questions"
    )
    print(
        f"{'model':<16}{'P@1':>7}{'P@1 exp':>9}{'MAP':>7}{'MRR':>7}{'fit s':>8}{'rank s':>8}"
        f"{'fit cpu':>9}{'rank cpu':>9}"
    )
    for name in names:
        start, cpu_start = time.perf_counter(), time.process_time()
        model = MODELS[name](train, corpus)
        fitted, cpu_fitted = time.perf_counter(), time.process_time()
        scores = model.rank_candidates(valid["X"], valid["pools"])
        ranked, cpu_ranked = time.perf_counter(), time.process_time()
        m = pool_metrics(scores, n_right)
        print(
            f"{name:<16}{m['P@1']:>7.2f}{m['P@1 expected']:>9.2f}{m['MAP']:>7.2f}"
            f"{m['MRR']:>7.2f}{fitted - start:>8.1f}{ranked - fitted:>8.1f}"
            f"{cpu_fitted - cpu_start:>9.1f}{cpu_ranked - cpu_fitted:>9.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
