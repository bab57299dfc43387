"""The bAbI QA heuristics shared by the story-QA models (MemNN, the structured SVM).

- :func:`answer_parts` splits an answer into its words at punctuation too, so that a list
  answer (``"football,apple"``, bAbI task 8; ``"north,west"``, task 19) gives each word;
- :func:`pseudo_supporting` is the distant supervision of stories without supporting facts:
  the latest story sentence holding a word of the answer, else one sharing a word with the
  question.

Both read text through :func:`irdialog.text.tokenize` and its punctuation policy
(:func:`irdialog.text.is_punctuation`).
"""

from __future__ import annotations

from collections.abc import Mapping

from .text import is_punctuation, tokenize


def _split_punctuation(token: str) -> list[str]:
    parts, cur = [], []
    for ch in token:
        if is_punctuation(ch):
            if cur:
                parts.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur))
    return parts


def answer_parts(answer: str, case_folding: Mapping[str, str] | None = None) -> list[str]:
    """The words of an answer, split at punctuation too: ``"north,west"`` -> both words.

    Examples
    --------
    >>> answer_parts("football,apple")
    ['football', 'apple']
    """
    return [
        p for tok in tokenize(answer, case_folding=case_folding) for p in _split_punctuation(tok)
    ]


def pseudo_supporting(X, y, stopwords=()) -> list[tuple[int, ...]]:
    """Distant supervision when no supporting facts are given: the latest history turn
    holding a word of the answer, else the latest sharing a word (not in ``stopwords``)
    with the query, else none.

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> story = (Turn("kb", "Mary went to the kitchen."), Turn("kb", "John went home."))
    >>> pseudo_supporting([Context(story, "Where is Mary?")], ["kitchen"])
    [(0,)]
    """
    stop = set(stopwords)
    out = []
    for ctx, answer in zip(X, y):
        parts = set(answer_parts(answer)) - stop
        query = set(answer_parts(ctx.query)) - stop
        chosen: tuple[int, ...] = ()
        for keys in (parts, query):
            for pos in range(len(ctx.history) - 1, -1, -1):
                if keys.intersection(answer_parts(ctx.history[pos].text)):
                    chosen = (pos,)
                    break
            if chosen:
                break
        out.append(chosen)
    return out
