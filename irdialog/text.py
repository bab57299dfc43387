"""Tokenizer, vocabulary and bag-of-words encodings shared by every model.

Nothing here knows a language: words are maximal runs of non-space characters, and
punctuation (any Unicode ``P*`` character) at the edge of a word is split off as a token of
its own, so ``"bathroom."`` gives ``["bathroom", "."]`` while ``"i'm"``, ``"north,west"`` and
``"resto_rome_cheap"`` stay whole. Lower-casing uses ``str.lower`` (a no-op for scripts
without case, such as Devanagari); combining marks are never split from their letters.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

NIL = "<nil>"
SPEAKER_TOKENS = {"user": "<speaker:user>", "bot": "<speaker:bot>", "kb": "<speaker:kb>"}


def _punctuation_class() -> str:
    # All Unicode punctuation of the Basic Multilingual Plane, as a regex character class body.
    chars = (chr(c) for c in range(min(sys.maxunicode, 0xFFFF) + 1))
    return "".join(re.escape(c) for c in chars if unicodedata.category(c).startswith("P"))


_P = _punctuation_class()
# A word: non-space, non-punctuation runs joined by inner punctuation ("i'm", "north,west");
# otherwise a single punctuation character.
_TOKEN_RE = re.compile(rf"[^\s{_P}]+(?:[{_P}]+[^\s{_P}]+)*|[{_P}]")


def tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split text into tokens, language-independently.

    Examples
    --------
    >>> tokenize("Where is Mary? She's in the bathroom.")
    ['where', 'is', 'mary', '?', "she's", 'in', 'the', 'bathroom', '.']
    >>> tokenize("api_call italian paris two cheap <SILENCE>")
    ['api_call', 'italian', 'paris', 'two', 'cheap', '<silence>']
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__} ({text!r:.60}).")
    if lowercase:
        text = text.lower()
    return _TOKEN_RE.findall(text)


def identity_analyzer(tokens: Sequence[str]) -> Sequence[str]:
    """Analyzer for scikit-learn vectorizers fed pre-tokenized documents (picklable)."""
    return tokens


@lru_cache(maxsize=1 << 18)
def _cached_tokens(text: str) -> tuple[str, ...]:
    # Turns recur in every later context of their dialog: tokenize each text once.
    return tuple(tokenize(text))


def context_tokens(context, use_history: bool = True) -> list[str]:
    """Tokens of a context: the whole conversation, oldest first, or the last utterance only.

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> context_tokens(Context(history=(Turn("user", "Hi!"),), query="a table"))
    ['hi', '!', 'a', 'table']
    """
    tokens: list[str] = []
    if use_history:
        for turn in context.history:
            tokens.extend(_cached_tokens(turn.text))
    tokens.extend(_cached_tokens(context.query))
    return tokens


def time_token(age: int) -> str:
    """The token of a memory's position, counted back from the query (0 = most recent)."""
    return f"<time:{age}>"


class Vocabulary:
    """A token <-> index map with the nil token at index 0.

    Unknown tokens are dropped when encoding (index 0 is the nil word, whose embedding
    models hold at zero), so an unseen word at prediction time contributes nothing.

    Parameters
    ----------
    min_count : int, default=1
        Tokens seen fewer times in ``fit`` are left out.
    extra_tokens : sequence of str, default=()
        Tokens always present (time, speaker or match-type words), after the nil token.

    Examples
    --------
    >>> v = Vocabulary().fit([["a", "b"], ["b", "c"]])
    >>> len(v), v["b"]
    (4, 2)
    >>> v.bags([["b", "b", "zzz"]]).toarray()
    array([[0., 0., 2., 0.]], dtype=float32)
    """

    def __init__(self, min_count: int = 1, extra_tokens: Sequence[str] = ()):
        self.min_count = min_count
        self.extra_tokens = tuple(extra_tokens)
        self.tokens_: list[str] = [NIL, *self.extra_tokens]
        self.index_: dict[str, int] = {t: i for i, t in enumerate(self.tokens_)}

    def fit(self, token_lists: Iterable[Sequence[str]]) -> Vocabulary:
        counts = Counter(t for tokens in token_lists for t in tokens)
        for tok in sorted(counts):  # sorted: the same data gives the same indices
            if counts[tok] >= self.min_count and tok not in self.index_:
                self.index_[tok] = len(self.tokens_)
                self.tokens_.append(tok)
        return self

    def __len__(self) -> int:
        return len(self.tokens_)

    def __getitem__(self, token: str) -> int:
        return self.index_[token]

    def __contains__(self, token: str) -> bool:
        return token in self.index_

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """Indices of the known tokens, unknown ones dropped."""
        idx = self.index_
        return np.fromiter((idx[t] for t in tokens if t in idx), dtype=np.int64)

    def bags(self, token_lists: Sequence[Sequence[str]], binary: bool = False) -> sp.csr_matrix:
        """Bag-of-words counts (or 0/1 with ``binary``) as a float32 CSR matrix."""
        indptr = [0]
        indices: list[int] = []
        idx = self.index_
        for tokens in token_lists:
            indices.extend(idx[t] for t in tokens if t in idx)
            indptr.append(len(indices))
        data = np.ones(len(indices), dtype=np.float32)
        m = sp.csr_matrix(
            (data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(indptr) - 1, len(self.tokens_)),
        )
        m.sum_duplicates()
        if binary:
            m.data[:] = 1.0
        return m
