"""The bAbI QA heuristics shared by the story-QA models (MemNN, the structured SVM).

- :func:`answer_parts` splits an answer into its words at punctuation too, so that a list
  answer (``"football,apple"``, bAbI task 8; ``"north,west"``, task 19) gives each word;
- :func:`pseudo_supporting` is the distant supervision of stories without supporting facts:
  the latest story sentence holding a word of the answer, else one sharing a word with the
  question.

Both read text through the model's :class:`irdialog.text.Analyzer` (its tokenizer and case
folding) and the punctuation policy (:func:`irdialog.text.is_punctuation`).
"""

from __future__ import annotations

from .text import Analyzer, is_punctuation


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


def answer_parts(answer: str, analyzer: Analyzer | None = None) -> list[str]:
    """The words of an answer, split at punctuation too: ``"north,west"`` -> both words.

    Parameters
    ----------
    answer : str
    analyzer : Analyzer, default=None
        The model's analyzer (its tokens are split); None: ``Analyzer()``.

    Examples
    --------
    >>> answer_parts("football,apple")
    ['football', 'apple']
    """
    tokens = (analyzer or Analyzer()).tokens(answer)
    return [p for tok in tokens for p in _split_punctuation(tok)]


def pseudo_supporting(X, y, stopwords=(), analyzer=None) -> list[tuple[int, ...]]:
    """Distant supervision when no supporting facts are given: the latest history turn
    holding a word of the answer, else the latest sharing a word (not in ``stopwords``)
    with the query, else none. Texts are read by ``analyzer`` (None: ``Analyzer()``).

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> story = (Turn("kb", "Mary went to the kitchen."), Turn("kb", "John went home."))
    >>> pseudo_supporting([Context(story, "Where is Mary?")], ["kitchen"])
    [(0,)]
    """
    stop = set(stopwords)
    analyzer = analyzer or Analyzer()
    out = []
    for ctx, answer in zip(X, y):
        parts = set(answer_parts(answer, analyzer)) - stop
        query = set(answer_parts(ctx.query, analyzer)) - stop
        chosen: tuple[int, ...] = ()
        for keys in (parts, query):
            for pos in range(len(ctx.history) - 1, -1, -1):
                if keys.intersection(answer_parts(ctx.history[pos].text, analyzer)):
                    chosen = (pos,)
                    break
            if chosen:
                break
        out.append(chosen)
    return out
