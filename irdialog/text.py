"""The one path from text to arrays: tokenizer, Vocabulary, encoded contexts and labels.

Every model goes through this module, as scikit-learn's vectorizers share ``_VectorizerMixin``:

- :class:`Analyzer` turns each distinct text of a fit (or of a scoring call) into its tokens,
  then its n-grams, exactly once, with the one punctuation policy (:func:`is_punctuation`) and
  case folding; its tokenizer is a named one of :data:`TOKENIZERS` (:func:`tokenize`, words;
  :func:`char_tokenize`, characters) or any callable from str to a list of str, as the
  ``tokenizer`` parameter every text estimator takes;
- :class:`Vocabulary` maps tokens to indices (the nil token at 0);
- :func:`encode_contexts` turns contexts into :class:`EncodedContexts`, flat integer arrays
  with each distinct sentence encoded once, which the numba kernels read;
- :class:`LabelIndex` (and :func:`encode_labels`) maps gold responses to candidate indices.

Nothing here knows a language. The ``"word"`` tokenizer (:func:`tokenize`, every model's
default) reads words as maximal runs of non-space characters, and punctuation (any Unicode
``P*`` character) at the edge of a word is split off as a token of its own, so
``"bathroom."`` gives ``["bathroom", "."]`` while ``"i'm"``, ``"north,west"`` and
``"resto_rome_cheap"`` stay whole. Lower-casing uses ``str.lower`` (a no-op for scripts
without case, such as Devanagari); combining marks are never split from their letters. Where a
text's capitals do not pair with its small letters as Unicode says (bAbI's shuffled-letters
release permutes the two apart), :func:`learn_case_folding` learns the pairing from the words
seen both ways, and models pass it to their :class:`Analyzer` as ``case_folding``. Scripts
written without spaces between words (Chinese, Japanese, Thai) take the ``"char"`` tokenizer
(:func:`char_tokenize`: each character with its combining marks, white space dropped) and
character n-grams through ``ngram_range``, a :class:`SubwordTokenizer` (units learned from
the characters of the training texts by byte-pair encoding, for any script), a
:class:`UnigramTokenizer` (the most likely pieces of a unigram language model, learned by
SentencePiece), or a segmenter of their own as a callable.
"""

from __future__ import annotations

import heapq
import io
import numbers
import re
import sys
import unicodedata
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

NIL = "<nil>"
SPEAKER_TOKENS = {"user": "<speaker:user>", "bot": "<speaker:bot>", "kb": "<speaker:kb>"}


# All Unicode punctuation of the Basic Multilingual Plane: tokenize splits each off as a
# token of one character.
PUNCTUATION = frozenset(
    ch
    for ch in map(chr, range(min(sys.maxunicode, 0xFFFF) + 1))
    if unicodedata.category(ch).startswith("P")
)
_P = "".join(re.escape(c) for c in sorted(PUNCTUATION))  # as a regex character class body
# The combining marks (Unicode M*) of the Basic Multilingual Plane: char_tokenize keeps each
# with the character it follows (Thai vowel signs and tone marks, Devanagari matras).
_M = "".join(
    re.escape(ch)
    for ch in map(chr, range(min(sys.maxunicode, 0xFFFF) + 1))
    if unicodedata.category(ch).startswith("M")
)
# A character: one non-space character and the combining marks after it.
_CHAR_RE = re.compile(rf"[^\s{_M}][{_M}]*|[{_M}]+")
# A word: non-space, non-punctuation runs joined by inner punctuation ("i'm", "north,west");
# otherwise a single punctuation character.
_TOKEN_RE = re.compile(rf"[^\s{_P}]+(?:[{_P}]+[^\s{_P}]+)*|[{_P}]")
# The words learn_case_folding compares; its own scan, so a fit still tokenises each text once.
_WORD_RE = re.compile(r"\w+")
# Fewer words than this seen both ways against str.lower are taken for a coincidence.
_MIN_CASE_EVIDENCE = 2


def tokenize(
    text: str, lowercase: bool = True, case_folding: Mapping[str, str] | None = None
) -> list[str]:
    """Split text into tokens, language-independently.

    Parameters
    ----------
    text : str
    lowercase : bool, default=True
        Lower-case the text first (``str.lower``).
    case_folding : mapping of str to str, optional
        Capital letters to lower-case differently from ``str.lower``, as learned by
        :func:`learn_case_folding`; applied before ``str.lower``, only when ``lowercase``.

    Examples
    --------
    >>> tokenize("Where is Mary? She's in the bathroom.")
    ['where', 'is', 'mary', '?', "she's", 'in', 'the', 'bathroom', '.']
    >>> tokenize("api_call italian paris two cheap <SILENCE>")
    ['api_call', 'italian', 'paris', 'two', 'cheap', '<silence>']
    >>> tokenize("Qumit is tired.", case_folding={"Q": "s"})
    ['sumit', 'is', 'tired', '.']
    """
    return _TOKEN_RE.findall(_fold(text, lowercase, case_folding, "tokenize"))


def char_tokenize(
    text: str, lowercase: bool = True, case_folding: Mapping[str, str] | None = None
) -> list[str]:
    """Split text into characters, white space dropped: the tokenizer of scripts written
    without spaces between words (Chinese, Japanese, Thai), with ``ngram_range`` for
    character n-grams.

    A combining mark (Unicode ``M*``) stays with the character before it, so a Thai vowel
    sign or a Devanagari matra is never a token of its own. Parameters as :func:`tokenize`.

    Examples
    --------
    >>> char_tokenize("我想订 一张桌子")
    ['我', '想', '订', '一', '张', '桌', '子']
    >>> char_tokenize("Hi, you")
    ['h', 'i', ',', 'y', 'o', 'u']
    >>> char_tokenize("ที่นี่")  # two characters, each with its marks
    ['ที่', 'นี่']
    """
    return _CHAR_RE.findall(_fold(text, lowercase, case_folding, "char_tokenize"))


def _fold(text, lowercase, case_folding, caller) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{caller} expects a str, got {type(text).__name__} ({text!r:.60}).")
    if lowercase:
        if case_folding:
            text = text.translate(str.maketrans(dict(case_folding)))
        text = text.lower()
    return text


# The named tokenizers of the ``tokenizer`` parameter.
TOKENIZERS: dict[str, Callable[..., list[str]]] = {"word": tokenize, "char": char_tokenize}


def check_tokenizer(tokenizer) -> Callable[..., list[str]] | str:
    """``tokenizer`` when it is a named tokenizer or a callable, else a ValueError naming
    what is accepted: the check of every model with a ``tokenizer`` parameter (which also
    lists it in ``_parameter_constraints``).

    Examples
    --------
    >>> check_tokenizer("char")
    'char'
    >>> check_tokenizer("chars")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tokenizer must be one of 'char', 'word' or a callable ..., got 'chars'.
    """
    if callable(tokenizer) or (isinstance(tokenizer, str) and tokenizer in TOKENIZERS):
        return tokenizer
    names = ", ".join(repr(n) for n in sorted(TOKENIZERS))
    raise ValueError(
        f"tokenizer must be one of {names} or a callable from str to a list of str, "
        f"got {tokenizer!r:.60}."
    )


# Runs of characters between white space and punctuation: what SubwordTokenizer learns from
# (its units never span white space or punctuation).
_SEGMENT_RE = re.compile(rf"[^\s{_P}]+")
# A SubwordTokenizer forgets the texts it has segmented past this many.
_SEGMENT_MEMO = 1 << 18


class SubwordTokenizer:
    """Subword units learned from the characters of texts: a tokenizer for any script, with
    spaces between words or without.

    :meth:`fit` learns the units by byte-pair encoding (Sennrich et al. 2016): it starts from
    the characters of the texts (as :func:`char_tokenize` has them, each with its combining
    marks) and, ``n_merges`` times, joins into one unit the two adjacent units seen together
    most often (ties to the smaller pair of strings), never across white space or
    punctuation. Nothing in it knows a language or needs spaces: on a text written without
    them the units learned are frequent words, their stems and endings, and frequent
    phrases. Calling the fitted tokenizer splits a text by greedy longest match (as
    WordPiece does): at each place the longest unit learned that starts there, else one
    character; white space is dropped, and a punctuation character is a token of its own.

    Pass the fitted tokenizer as the ``tokenizer`` of any text estimator, which then reads
    the units as its words; it is saved with the model (:func:`irdialog.persist.save`).
    Fit it on the training texts only (contexts and candidates), never on the texts a
    model is evaluated on.

    Parameters
    ----------
    n_merges : int, default=8000
        The merges learned at most: about the number of units longer than a character.
    min_count : int, default=2
        Stop merging when no pair of adjacent units is seen this many times.
    lowercase : bool, default=True
        Learn from the lower-cased texts (``str.lower``), as an :class:`Analyzer` with its
        default ``lowercase=True`` hands them to its tokenizer.

    Attributes
    ----------
    units_ : list of str
        The units learned, of two characters or more, in the order they were first made.

    References
    ----------
    Sennrich, Haddow & Birch (2016). Neural Machine Translation of Rare Words with Subword
    Units. ACL, section 3.2.

    Examples
    --------
    >>> texts = ["我想订一张桌子", "我想订一家餐厅", "请问一张桌子几位", "我想订两张桌子"]
    >>> tokenizer = SubwordTokenizer(n_merges=5).fit(texts)
    >>> tokenizer.units_
    ['张桌', '张桌子', '想订', '我想订', '一张桌子']
    >>> tokenizer("我想订一张大桌子。")
    ['我想订', '一', '张', '大', '桌', '子', '。']
    >>> tokenizer("我想订两张桌子")
    ['我想订', '两', '张桌子']
    """

    def __init__(self, n_merges: int = 8000, *, min_count: int = 2, lowercase: bool = True):
        self.n_merges = n_merges
        self.min_count = min_count
        self.lowercase = lowercase

    def __repr__(self) -> str:
        return (
            f"SubwordTokenizer(n_merges={self.n_merges!r}, min_count={self.min_count!r}, "
            f"lowercase={self.lowercase!r})"
        )

    def fit(self, texts: Iterable[str]) -> SubwordTokenizer:
        """Learn the units from ``texts`` (each distinct text counted once).

        Parameters
        ----------
        texts : iterable of str
            The training texts: contexts and candidates.

        Returns
        -------
        self : SubwordTokenizer
        """
        _check_ints(self, n_merges=0, min_count=1)
        segments: Counter = Counter()
        for text in _distinct_texts(texts, self.lowercase):
            segments.update(_SEGMENT_RE.findall(text))
        self.units_ = _learn_units(segments, int(self.n_merges), int(self.min_count))
        _SEGMENTERS.pop(self, None)
        return self

    def __call__(self, text: str) -> list[str]:
        """The units of ``text``, by greedy longest match, white space dropped."""
        segmenter = _SEGMENTERS.get(self)
        if segmenter is None:
            if not hasattr(self, "units_"):
                raise NotFittedError(
                    "This SubwordTokenizer is not fitted yet: call fit(texts) on the training "
                    "texts before using it as a tokenizer."
                )
            segmenter = _SEGMENTERS[self] = _shared_segmenter(self.units_)
        return segmenter(text)


def _check_ints(tokenizer, **lowest: int) -> None:
    """Raise if a parameter of ``tokenizer`` named in ``lowest`` is not an int at least
    its value there."""
    for name, low in lowest.items():
        value = getattr(tokenizer, name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")


def _distinct_texts(texts: Iterable[str], lowercase: bool) -> Iterable[str]:
    """Each distinct text of ``texts`` once (lower-cased with ``lowercase``), raising on
    a single str or an item that is not a str: what a tokenizer learns from."""
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of str, got a single str.")
    for i, text in enumerate(dict.fromkeys(texts)):
        if not isinstance(text, str):
            raise TypeError(
                f"texts[{i}] (counting each distinct text once) must be a str, got "
                f"{type(text).__name__} ({text!r:.60})."
            )
        yield text.lower() if lowercase else text


def _learn_units(segments: Mapping[str, int], n_merges: int, min_count: int) -> list[str]:
    """Byte-pair encoding over the characters of ``segments`` (text -> count): the units
    made by at most ``n_merges`` merges of the most frequent adjacent pair.

    The segments are one linked list of symbols; each pair of symbols keeps its count and
    the places where it starts, so that a merge visits only the places of its pair, and
    the most frequent pair comes from a heap whose outdated entries are skipped.
    """
    chars = [_CHAR_RE.findall(s) for s in segments]
    names = sorted({c for units in chars for c in units})
    ids = {c: i for i, c in enumerate(names)}
    sym: list[int] = []  # the symbol at each place, -1 once merged into the place before
    nxt: list[int] = []  # the next place of the segment, -1 at its end
    prv: list[int] = []
    weight: list[int] = []  # the count of the segment of each place
    for units, count in zip(chars, segments.values()):
        start, n = len(sym), len(units)
        sym.extend(ids[c] for c in units)
        nxt.extend(range(start + 1, start + n + 1))
        nxt[-1] = -1
        prv.extend(range(start - 1, start + n - 1))
        prv[start] = -1
        weight.extend(repeat(count, n))
    counts: dict[tuple[int, int], int] = {}
    places: dict[tuple[int, int], list[int]] = {}
    for p, q in enumerate(nxt):
        if q >= 0:
            pair = (sym[p], sym[q])
            counts[pair] = counts.get(pair, 0) + weight[p]
            places.setdefault(pair, []).append(p)
    heap = [(-c, names[a], names[b], a, b) for (a, b), c in counts.items()]
    heapq.heapify(heap)
    units: dict[str, None] = {}
    merges = 0
    while heap and merges < n_merges:
        negative, _, _, a, b = heapq.heappop(heap)
        count = counts.get((a, b), 0)
        if count != -negative:  # outdated: its count has fallen since
            if count > 0:
                heapq.heappush(heap, (-count, names[a], names[b], a, b))
            continue
        if count < min_count:
            break
        merges += 1
        joined = names[a] + names[b]
        new = ids.get(joined)
        if new is None:
            new = ids[joined] = len(names)
            names.append(joined)
        units[joined] = None
        changed = set()
        for p in sorted(places.pop((a, b))):
            q = nxt[p]
            if sym[p] != a or q < 0 or sym[q] != b:
                continue  # merged away since this place was recorded
            w = weight[p]
            counts[a, b] -= w
            left, right = prv[p], nxt[q]
            if left >= 0:
                x = sym[left]
                counts[x, a] -= w
                counts[x, new] = counts.get((x, new), 0) + w
                places.setdefault((x, new), []).append(left)
                changed.add((x, new))
            if right >= 0:
                y = sym[right]
                counts[b, y] -= w
                counts[new, y] = counts.get((new, y), 0) + w
                places.setdefault((new, y), []).append(p)
                changed.add((new, y))
                prv[right] = p
            sym[p], sym[q], nxt[p] = new, -1, right
        del counts[a, b]
        for x, y in sorted(changed):
            if counts[x, y] > 0:
                heapq.heappush(heap, (-counts[x, y], names[x], names[y], x, y))
    return list(units)


class _Segmenter:
    """Greedy longest match of a text against units, each text's result remembered (as
    tuples of the one string object of each unit, so that remembered texts cost pointers)."""

    def __init__(self, units: Iterable[str]):
        self.trie: dict = {}  # unit character -> node; node[""]: the unit that ends there
        for unit in units:
            node = self.trie
            for c in _CHAR_RE.findall(unit):
                node = node.setdefault(c, {})
            node[""] = unit
        self.chars: dict[str, str] = {}  # one string object per character
        self.memo: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> list[str]:
        got = self.memo.get(text)
        if got is None:
            if not isinstance(text, str):
                raise TypeError(
                    f"SubwordTokenizer expects a str, got {type(text).__name__} ({text!r:.60})."
                )
            if len(self.memo) >= _SEGMENT_MEMO:
                self.memo.clear()
            got = self.memo[text] = tuple(self._split(text))
        return list(got)

    def _split(self, text: str) -> list[str]:
        trie, chars_seen, out = self.trie, self.chars, []
        for chunk in text.split():
            chars = _CHAR_RE.findall(chunk)
            i, n = 0, len(chars)
            while i < n:
                node, end, unit, j = trie, i + 1, None, i
                while j < n:
                    node = node.get(chars[j])
                    if node is None:
                        break
                    j += 1
                    if "" in node:
                        end, unit = j, node[""]
                if unit is None:
                    unit = chars_seen.setdefault(chars[i], chars[i])
                out.append(unit)
                i = end
        return out


# The segmenter of each fitted SubwordTokenizer, found on first use: kept beside the
# tokenizer rather than on it, so that a saved tokenizer holds only its units; and the
# segmenters of the last few sets of units, which the copies of a tokenizer share (a model
# clones its parameters, and each clone segments the same texts).
_SEGMENTERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SHARED: dict[tuple[str, ...], _Segmenter] = {}
_SHARED_MAX = 4


def _shared_segmenter(units: Sequence[str]) -> _Segmenter:
    key = tuple(units)
    segmenter = _SHARED.get(key)
    if segmenter is None:
        if len(_SHARED) >= _SHARED_MAX:
            del _SHARED[next(iter(_SHARED))]
        segmenter = _SHARED[key] = _Segmenter(key)
    return segmenter


class UnigramTokenizer:
    """Subword units of a unigram language model learned from texts by SentencePiece: a
    tokenizer for any script, with spaces between words or without.

    :meth:`fit` trains SentencePiece's unigram model (Kudo 2018) on the texts: from many
    candidate pieces it keeps the ``vocab_size`` that make the texts most likely, each piece
    with its probability. Calling the fitted tokenizer splits a text into its most likely
    pieces (Viterbi), where :class:`SubwordTokenizer` takes the longest unit at each place.
    On a text written without spaces the most likely split recovers more of its words: on
    InsuranceQA's English with its spaces removed, 57% of the pieces of 2,000 are whole
    words, against 40% of the byte-pair units (benchmarks/NOTES.md, "InsuranceQA").
    White space is dropped, a piece never crosses it nor a change of script (letters,
    digits, punctuation), and characters never seen in training are tokens of their own.

    It needs SentencePiece: ``pip install 'irdialog[subword]'``. The training runs on one
    thread, so a fit on the same texts gives the same pieces. Pass the fitted tokenizer as
    the ``tokenizer`` of any text estimator; it is saved with the model
    (:func:`irdialog.persist.save`). Fit it on the training texts only.

    Parameters
    ----------
    vocab_size : int, default=8000
        The pieces kept at most, each character of the texts and one piece for unknown
        characters included (a script of 3,000 characters needs more than 3,001); texts too
        small for so many give fewer.
    lowercase : bool, default=True
        Learn from the lower-cased texts (``str.lower``), as an :class:`Analyzer` with its
        default ``lowercase=True`` hands them to its tokenizer.
    max_piece_length : int, default=16
        The longest piece, in characters.

    Attributes
    ----------
    model_ : ndarray of uint8
        The trained SentencePiece model, serialized (its bytes, as an array, which
        :func:`irdialog.persist.save` stores as it stores weights).

    References
    ----------
    Kudo (2018). Subword Regularization: Improving Neural Network Translation Models with
    Multiple Subword Candidates. ACL. Kudo & Richardson (2018). SentencePiece. EMNLP.

    Examples
    --------
    >>> texts = ["我想订一张桌子", "我想订一家餐厅", "请问一张桌子几位", "我想订两张桌子",
    ...          "请问餐厅几点开门", "我想订一张四人桌子", "一家餐厅几位", "请问两张桌子"]
    >>> tokenizer = UnigramTokenizer(vocab_size=30).fit(texts)
    >>> tokenizer("我想订一张大桌子。")
    ['我想订一张', '大', '桌子', '。']
    >>> tokenizer("请问两张桌子")
    ['请问', '两张桌子']
    """

    def __init__(self, vocab_size: int = 8000, *, lowercase: bool = True, max_piece_length=16):
        self.vocab_size = vocab_size
        self.lowercase = lowercase
        self.max_piece_length = max_piece_length

    def __repr__(self) -> str:
        return (
            f"UnigramTokenizer(vocab_size={self.vocab_size!r}, lowercase={self.lowercase!r}, "
            f"max_piece_length={self.max_piece_length!r})"
        )

    def fit(self, texts: Iterable[str]) -> UnigramTokenizer:
        """Learn the pieces from ``texts`` (each distinct text counted once).

        Parameters
        ----------
        texts : iterable of str
            The training texts: contexts and candidates.

        Returns
        -------
        self : UnigramTokenizer
        """
        spm = _sentencepiece()
        _check_ints(self, vocab_size=1, max_piece_length=1)
        # SentencePiece reads one text a line
        lines = [
            t for t in (" ".join(t.split()) for t in _distinct_texts(texts, self.lowercase)) if t
        ]
        if not lines:
            raise ValueError("texts hold no character to learn pieces from.")
        # every character is a piece (white space too, as the mark of a word's start), and
        # so is "unknown"
        n_chars = len({_WORD_START if c == " " else c for line in lines for c in line})
        if n_chars + 1 > self.vocab_size:
            raise ValueError(
                f"vocab_size={self.vocab_size} cannot hold the {n_chars} distinct characters of "
                f"the texts (white space counted as one), each a piece of its own, and the "
                f"unknown piece: make it at least {n_chars + 1}, and larger by the pieces "
                f"longer than a character wanted."
            )
        model = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(lines),
                model_writer=model,
                model_type="unigram",
                vocab_size=int(self.vocab_size),
                hard_vocab_limit=False,  # fewer pieces when the texts hold fewer
                max_sentencepiece_length=int(self.max_piece_length),
                # SentencePiece's default, or more: it would leave out a longer text
                max_sentence_length=max([4192, *(len(t.encode("utf-8")) + 1 for t in lines)]),
                character_coverage=1.0,
                normalization_rule_name="identity",  # the pieces are the texts' own characters
                add_dummy_prefix=False,
                bos_id=-1,  # no sentence marks: the unknown piece is the one piece of no text
                eos_id=-1,
                num_threads=1,  # the same pieces on every run
                minloglevel=2,
            )
        except RuntimeError as err:
            raise ValueError(f"SentencePiece could not learn from these texts: {err}") from err
        self.model_ = np.frombuffer(model.getvalue(), dtype=np.uint8).copy()
        _PROCESSORS.pop(self, None)
        return self

    def __call__(self, text: str) -> list[str]:
        """The most likely pieces of ``text``, white space dropped."""
        processor = _PROCESSORS.get(self)
        if processor is None:
            if not hasattr(self, "model_"):
                raise NotFittedError(
                    "This UnigramTokenizer is not fitted yet: call fit(texts) on the training "
                    "texts before using it as a tokenizer."
                )
            processor = _PROCESSORS[self] = _PieceSplitter(_sentencepiece(), self.model_)
        if not isinstance(text, str):
            raise TypeError(
                f"UnigramTokenizer expects a str, got {type(text).__name__} ({text!r:.60})."
            )
        return processor(text.lower() if self.lowercase else text)


class _PieceSplitter:
    """A SentencePiece processor, with its pieces' word-start marks dropped and unknown
    characters (which SentencePiece joins into one piece) split apart."""

    def __init__(self, spm, model: np.ndarray):
        self.processor = spm.SentencePieceProcessor(model_proto=model.tobytes())
        self.pieces = {self.processor.id_to_piece(i) for i in range(len(self.processor))}

    def __call__(self, text: str) -> list[str]:
        out = []
        for piece in self.processor.encode(" ".join(text.split()), out_type=str):
            if piece in self.pieces:
                piece = piece.replace(_WORD_START, "")
                if piece:
                    out.append(piece)
            else:
                out.extend(_CHAR_RE.findall(piece.replace(_WORD_START, " ")))
        return out


_WORD_START = "\u2581"  # SentencePiece's mark of a piece that follows white space
_PROCESSORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _sentencepiece():
    try:
        import sentencepiece
    except ImportError:
        raise ImportError(
            "UnigramTokenizer needs SentencePiece: pip install 'irdialog[subword]' (or pip "
            "install 'sentencepiece>=0.2')."
        ) from None
    return sentencepiece


def learn_case_folding(texts: Iterable[str]) -> dict[str, str]:
    """How the capital letters of ``texts`` pair with small letters, when not as Unicode says.

    Evidence is a word seen both capitalised and not: ``"Xumit"`` at the start of a sentence
    and ``"sumit"`` inside a question pair ``X`` with ``s``. Unless at least two such words,
    and more of them than pair a capital with its ``str.lower``, go against ``str.lower``,
    nothing is learned (the empty mapping: ``str.lower`` alone is right), as in every natural
    language with case; one word is taken for a coincidence (English bAbI task 2 has
    ``"Where"`` and ``"there"``, and no ``"where"``). Otherwise (bAbI v1.2's ``shuffled/``
    release maps capitals and small letters through two unrelated permutations) each capital
    is mapped to the small letter most of its words pair it with; a capital without
    evidence, or with a tie, keeps ``str.lower``.

    Parameters
    ----------
    texts : iterable of str
        The texts of a fit: stories, questions and answers.

    Returns
    -------
    dict of str to str
        Capital -> small letter, for :func:`tokenize`'s ``case_folding``; empty when
        ``str.lower`` is right.

    Examples
    --------
    >>> learn_case_folding(["Mary went home.", "Where is mary?"])
    {}
    >>> learn_case_folding(["Where is the milk?", "John went there."])
    {}
    >>> learn_case_folding(["Qumit is tired.", "Where will sumit go?", "Kason is bored.",
    ...                     "Why did jason go?"])
    {'K': 'j', 'Q': 's'}
    """
    words: set[str] = set()
    for text in dict.fromkeys(texts):  # each distinct text once
        words.update(_WORD_RE.findall(text))
    smalls_before: dict[str, list[str]] = {}  # "umit" -> ["s"]: small letters seen before it
    for word in words:
        if word[0].islower():
            smalls_before.setdefault(word[1:], []).append(word[0])
    votes: dict[str, Counter] = {}
    for word in words:
        first, rest = word[0], word[1:]
        if len(rest) >= 2 and first.isupper() and rest in smalls_before:
            votes.setdefault(first, Counter()).update(smalls_before[rest])
    unicode_pairs = sum(v[cap.lower()] for cap, v in votes.items())
    other_pairs = sum(v.total() for v in votes.values()) - unicode_pairs
    if other_pairs < max(_MIN_CASE_EVIDENCE, unicode_pairs + 1):
        return {}
    folding = {}
    for cap, v in sorted(votes.items()):
        ranked = v.most_common(2)
        best, n = ranked[0]
        if best != cap.lower() and (len(ranked) == 1 or n > ranked[1][1]):
            folding[cap] = best
    return folding


def document_frequencies(documents) -> dict[str, float]:
    """The fraction of ``documents`` (each a sequence of tokens) each token occurs in.

    Parameters
    ----------
    documents : sequence of sequences of str
        The token lists to count over (e.g. each an :class:`Analyzer`'s output).

    Returns
    -------
    dict of str to float
        Token -> the fraction of the documents holding it at least once, the tokens in the
        order they first occur (an empty dict for no documents).

    Examples
    --------
    >>> document_frequencies([["a", "b", "a"], ["a"]])
    {'a': 1.0, 'b': 0.5}
    """
    # each document's distinct tokens in their order (a set's would follow the hash seed)
    counts = Counter(tok for tokens in documents for tok in dict.fromkeys(tokens))
    n = max(len(documents), 1)
    return {tok: c / n for tok, c in counts.items()}


def is_punctuation(token: str) -> bool:
    """Whether a token is made only of punctuation (Unicode category ``P*``, any script).

    The one punctuation policy of the package: :func:`tokenize` splits such characters off
    the edges of words, and models that drop punctuation drop exactly these tokens.

    Examples
    --------
    >>> [is_punctuation(t) for t in ["?", "।", "north,west", "$"]]
    [True, True, False, False]
    """
    if len(token) == 1:
        return token in PUNCTUATION or unicodedata.category(token).startswith("P")
    return all(unicodedata.category(ch).startswith("P") for ch in token)


def context_texts(X, y=()) -> Iterable[str]:
    """Every text of contexts (their turns, then their query) and of answers, in order: what
    :func:`learn_case_folding` learns from.

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> list(context_texts([Context((Turn("kb", "Mary left."),), "Where is mary?")], ["out"]))
    ['Mary left.', 'Where is mary?', 'out']
    """
    for ctx in X:
        for turn in ctx.history:
            yield turn.text
        yield ctx.query
    yield from y


def identity_analyzer(tokens: Sequence[str]) -> Sequence[str]:
    """Analyzer for scikit-learn vectorizers fed pre-tokenized documents (picklable)."""
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
        ids: list[int] = []
        get = self.index_.get
        for tokens in token_lists:
            ids.extend(map(get, tokens, repeat(-1, len(tokens))))  # unknown as -1, in C
            indptr.append(len(ids))
        indices = np.asarray(ids, dtype=np.int64)
        offsets = np.asarray(indptr, dtype=np.int64)
        known = indices >= 0
        if not known.all():
            offsets = np.concatenate([[0], np.cumsum(known)])[offsets]
            indices = indices[known]
        data = np.ones(len(indices), dtype=np.float32)
        m = sp.csr_matrix((data, indices, offsets), shape=(len(indptr) - 1, len(self.tokens_)))
        m.sum_duplicates()
        if binary:
            m.data[:] = 1.0
        return m


def check_ngram_range(ngram_range) -> tuple[int, int]:
    """``(min_n, max_n)`` as two ints, or a ValueError naming the value: the check of every
    model with an ``ngram_range`` parameter.

    Examples
    --------
    >>> check_ngram_range((1, 2))
    (1, 2)
    >>> check_ngram_range((2, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ngram_range must be a tuple (min_n, max_n) of integers ..., got (2, 1).
    """
    try:
        lo, hi = ngram_range
    except (TypeError, ValueError):
        lo = hi = None
    if not (
        all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (lo, hi))
        and 1 <= lo <= hi
    ):
        raise ValueError(
            "ngram_range must be a tuple (min_n, max_n) of integers with 1 <= min_n <= max_n, "
            f"got {ngram_range!r}."
        )
    return int(lo), int(hi)


class Analyzer:
    """Texts to tokens and n-grams, each distinct text analysed once.

    The one way a model turns text into tokens. A text is lower-cased (with
    ``case_folding``, then ``str.lower``), split by ``tokenizer``, stripped of the
    punctuation tokens (:func:`is_punctuation`) when ``drop_punctuation``; its words are the
    n-grams of its tokens (never across two texts). All of it is memoised on the instance:
    a model makes one analyzer per fit (or per scoring call) and passes it to every step
    that needs a text's tokens, so no text is tokenised twice, and nothing outlives the
    call. Calling the analyzer gives a text's words without memoising them, for texts read
    once (millions of candidates).

    Parameters
    ----------
    tokenizer : {"word", "char"} or callable, default="word"
        ``"word"``: :func:`tokenize` (words and edge punctuation, for scripts that separate
        words by spaces); ``"char"``: :func:`char_tokenize` (characters, white space
        dropped, for scripts that do not); a callable: ``str -> list of str``, given the
        lower-cased text.
    drop_punctuation : bool, default=False
        Drop the tokens made only of punctuation.
    stop_words : collection of str or None, default=None
        Tokens dropped (before the n-grams are made, as scikit-learn's vectorizers do).
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The n-grams that make the words; an n-gram is its tokens joined by a space.
    case_folding : mapping of str to str, optional
        Capitals to lower-case differently from ``str.lower`` (:func:`learn_case_folding`,
        which a model runs on the texts of its fit).
    lowercase : bool, default=True
        Lower-case the text before splitting it.

    Examples
    --------
    >>> a = Analyzer(drop_punctuation=True, ngram_range=(1, 2))
    >>> a.tokens("Where is Mary?")
    ('where', 'is', 'mary')
    >>> a.words("Where is Mary?")
    ('where', 'is', 'mary', 'where is', 'is mary')
    >>> a.sequence("Where is Mary?")
    ('where', 'where is', 'is', 'is mary', 'mary')
    >>> Analyzer(tokenizer="char", ngram_range=(2, 2)).words("两个人")
    ('两 个', '个 人')
    """

    def __init__(
        self,
        *,
        tokenizer="word",
        drop_punctuation: bool = False,
        stop_words: Iterable[str] | None = None,
        ngram_range: tuple[int, int] = (1, 1),
        case_folding: Mapping[str, str] | None = None,
        lowercase: bool = True,
    ):
        self.tokenizer = check_tokenizer(tokenizer)
        self.drop_punctuation = drop_punctuation
        self.stop_words = frozenset(stop_words or ())
        self.ngram_range = check_ngram_range(ngram_range)
        self.case_folding = case_folding
        self.lowercase = lowercase
        self._folding = str.maketrans(dict(case_folding)) if case_folding else None
        self._tokens: dict[str, tuple[str, ...]] = {}
        self._words: dict[str, tuple[str, ...]] = {}
        self._sequence: dict[str, tuple[str, ...]] = {}
        self._checked: set[str] = set()  # tokens whose punctuation is known
        self._punctuation: set[str] = set()  # those made of punctuation only

    def _call_tokenizer(self, text: str) -> list[str]:
        tokens = self.tokenizer(text)
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(
                f"tokenizer must return a list of str, got {tokens!r:.80} for {text!r:.60}."
            )
        return list(tokens)

    def _analyse(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"Analyzer expects a str, got {type(text).__name__} ({text!r:.60}).")
        if self.lowercase:
            if self._folding:
                text = text.translate(self._folding)
            text = text.lower()
        if self.tokenizer == "word":
            tokens = _TOKEN_RE.findall(text)
        elif self.tokenizer == "char":
            tokens = _CHAR_RE.findall(text)
        else:
            tokens = self._call_tokenizer(text)
        if self.drop_punctuation:
            tokens = self._drop_punctuation(tokens)
        if self.stop_words:
            tokens = [t for t in tokens if t not in self.stop_words]
        return tokens

    def _drop_punctuation(self, tokens: list[str]) -> list[str]:
        # is_punctuation once per distinct token of the call; a text without any keeps
        # its list (set operations in C, no Python step per token).
        unchecked = set(tokens).difference(self._checked)
        if unchecked:
            self._checked.update(unchecked)
            self._punctuation.update(t for t in unchecked if is_punctuation(t))
        if self._punctuation.isdisjoint(tokens):
            return tokens
        return [t for t in tokens if t not in self._punctuation]

    def __call__(self, text: str) -> list[str]:
        """The words of one text (as :meth:`words`), not memoised: for a text read once."""
        tokens = self._analyse(text)
        if self.ngram_range == (1, 1):
            return tokens
        return _ngrams(tokens, *self.ngram_range, in_sentence_order=False)

    def tokens(self, text: str) -> tuple[str, ...]:
        """The tokens of one text."""
        got = self._tokens.get(text)
        if got is None:
            got = self._tokens[text] = tuple(self._analyse(text))
        return got

    def words(self, text: str) -> tuple[str, ...]:
        """The n-grams of one text's tokens, shortest first (its tokens for ``(1, 1)``)."""
        return self._ngrams(text, self._words, in_sentence_order=False)

    def sequence(self, text: str) -> tuple[str, ...]:
        """The n-grams of one text in sentence order: at each token, those that start there,
        shortest first (its tokens for ``(1, 1)``). This is the word sequence a position
        encoding weights, which puts each n-gram at the place of its first token."""
        return self._ngrams(text, self._sequence, in_sentence_order=True)

    def context_words(self, context, use_history: bool = True) -> list[str]:
        """The words of a context: those of each history turn, oldest first, then those of
        the query; or the query's only.

        Examples
        --------
        >>> from irdialog.base import Context, Turn
        >>> Analyzer().context_words(Context(history=(Turn("user", "Hi!"),), query="a table"))
        ['hi', '!', 'a', 'table']
        """
        words: list[str] = []
        if use_history:
            for turn in context.history:
                words.extend(self.words(turn.text))
        words.extend(self.words(context.query))
        return words

    def _ngrams(self, text, cache, in_sentence_order):
        if self.ngram_range == (1, 1):
            return self.tokens(text)
        got = cache.get(text)
        if got is None:
            grams = _ngrams(self.tokens(text), *self.ngram_range, in_sentence_order)
            got = cache[text] = tuple(grams)
        return got


def _ngrams(tokens, lo: int, hi: int, in_sentence_order: bool) -> list[str]:
    # Shortest first, or at each token those that start there, shortest first.
    m = len(tokens)
    if in_sentence_order:
        spans = ((i, n) for i in range(m) for n in range(lo, min(hi, m - i) + 1))
        return [" ".join(tokens[i : i + n]) for i, n in spans]
    grams = []
    for n in range(lo, hi + 1):  # the n-grams as the tokens zipped with their shifts (in C)
        grams.extend(tokens if n == 1 else map(" ".join, zip(*(tokens[k:] for k in range(n)))))
    return grams


def _ragged(lists: Sequence[Sequence[int]], dtype=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate integer lists into (indptr int64, data)."""
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=ptr[1:])
    data = np.fromiter((v for x in lists for v in x), dtype=dtype, count=int(ptr[-1]))
    return ptr, data


@dataclass(frozen=True, slots=True)
class EncodedContexts:
    """Contexts as flat integer arrays, each distinct sentence encoded once.

    The turns of a dialog recur in all its later contexts: a sentence (a text, with its
    speaker when speakers are encoded) is stored once and contexts point at it. Every
    attribute is a plain C-contiguous ndarray, as the numba kernels read them.

    Attributes
    ----------
    sptr : ndarray of int64, shape (n_sentences + 1,)
        The word ids of sentence s are ``stok[sptr[s] : sptr[s + 1]]``.
    stok : ndarray of int32
        Word ids of the sentences, in text order.
    sspk : ndarray of int32, shape (n_sentences,)
        The speaker word of each sentence (0 for a query, or without speakers).
    qsent : ndarray of int64, shape (n_contexts,)
        The sentence of each context's query.
    mptr : ndarray of int64, shape (n_contexts + 1,)
        The history sentences of context i are ``msent[mptr[i] : mptr[i + 1]]``, oldest first.
    msent : ndarray of int64
    eptr : ndarray of int64, shape (n_contexts + 1,)
        The typed entities of context i are ``eword[eptr[i] : eptr[i + 1]]`` (word ids) with
        types ``etype[...]`` (indices into the entity types); each pair once.
    eword, etype : ndarray of int32
    """

    sptr: np.ndarray
    stok: np.ndarray
    sspk: np.ndarray
    qsent: np.ndarray
    mptr: np.ndarray
    msent: np.ndarray
    eptr: np.ndarray
    eword: np.ndarray
    etype: np.ndarray

    def __len__(self) -> int:
        return len(self.qsent)

    def context_words(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr int64, word ids int64) of each context: its history, then its query.

        Examples
        --------
        >>> from irdialog.base import Context, Turn
        >>> X = [Context((Turn("user", "a b"),), "c"), Context(query="a")]
        >>> encode_contexts(X, tokenize, {"a": 1, "b": 2, "c": 3}).context_words()
        (array([0, 3, 4]), array([1, 2, 3, 1]))
        """
        n = len(self.qsent)
        cptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.diff(self.mptr) + 1, out=cptr[1:])
        sents = np.empty(cptr[-1], dtype=np.int64)
        is_query = np.zeros(len(sents), dtype=bool)
        is_query[cptr[1:] - 1] = True
        sents[is_query] = self.qsent
        sents[~is_query] = self.msent
        lengths = np.diff(self.sptr)[sents]
        ends = np.zeros(len(sents) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ends[1:])
        offsets = np.arange(ends[-1], dtype=np.int64) - np.repeat(ends[:-1], lengths)
        ids = self.stok[np.repeat(self.sptr[sents], lengths) + offsets].astype(np.int64)
        return ends[cptr], ids


def encode_contexts(
    X: Sequence,
    words: Callable[[str], Sequence[str]],
    index: dict[str, int],
    *,
    unknown: str = "drop",
    max_history: int | None = None,
    speakers: Mapping[str, int] | None = None,
    entity_types: Sequence[str] = (),
    entity_words: Mapping[str, int] | None = None,
) -> EncodedContexts:
    """Encode contexts into :class:`EncodedContexts`, each distinct sentence once.

    Parameters
    ----------
    X : sequence of Context
        Checked contexts (:func:`irdialog.base.check_contexts`).
    words : callable
        A text's words, e.g. the ``tokens`` or ``words`` of an :class:`Analyzer`.
    index : dict of str to int
        Word -> id, e.g. a :class:`Vocabulary`'s ``index_``.
    unknown : {"drop", "nil", "add"}, default="drop"
        A word missing from ``index`` is dropped, encoded as the nil word 0 (so that word
        positions are kept), or added to ``index`` with the next id.
    max_history : int or None, default=None
        Keep only the last ``max_history`` turns of each history (0: none); None: all.
    speakers : mapping of str to int or None, default=None
        Speaker -> id of its speaker word. Given, a sentence is a (speaker, text) pair and
        ``sspk`` holds its speaker word (0 for queries); None: a sentence is a text.
    entity_types : sequence of str, default=()
        The entity types to encode (``etype`` indexes them); empty: no entities.
    entity_words : mapping of str to int or None, default=None
        Entity word -> id; entities whose type or word is missing are left out.

    Returns
    -------
    EncodedContexts

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> X = [Context((Turn("user", "hi"), Turn("bot", "hello")), "hi"), Context(query="hi")]
    >>> enc = encode_contexts(X, tokenize, {"hi": 1, "hello": 2}, unknown="nil")
    >>> enc.qsent.tolist(), enc.msent.tolist(), enc.stok.tolist()
    ([0, 0], [0, 1], [1, 2])
    """
    if unknown == "drop":

        def ids(tokens):
            return [index[t] for t in tokens if t in index]

    elif unknown == "nil":

        def ids(tokens):
            return [index.get(t, 0) for t in tokens]

    elif unknown == "add":

        def ids(tokens):
            return [index.setdefault(t, len(index)) for t in tokens]

    else:
        raise ValueError(f"unknown must be 'drop', 'nil' or 'add', got {unknown!r}.")
    sent_id: dict = {}
    sent_words: list[list[int]] = []
    sent_spk: list[int] = []

    def sentence(speaker, text):
        key = text if speakers is None else (speaker, text)
        s = sent_id.get(key)
        if s is None:
            s = sent_id[key] = len(sent_words)
            sent_words.append(ids(words(text)))
            sent_spk.append(speakers[speaker] if speaker and speakers is not None else 0)
        return s

    n = len(X)
    qsent = np.empty(n, dtype=np.int64)
    mem_lists: list[list[int]] = []
    ent_words: list[list[int]] = []
    ent_types: list[list[int]] = []
    type_index = {t: k for k, t in enumerate(entity_types)}
    entity_words = {} if entity_words is None else entity_words
    for i, ctx in enumerate(X):
        qsent[i] = sentence("", ctx.query)
        if max_history is None:
            hist = ctx.history
        else:
            hist = ctx.history[-max_history:] if max_history > 0 else ()
        mem_lists.append([sentence(t.speaker, t.text) for t in hist])
        e_words, e_types = [], []
        if type_index:
            for w, t in dict.fromkeys(ctx.entities):
                k = type_index.get(t)
                v = entity_words.get(w)
                if k is not None and v is not None:
                    e_words.append(v)
                    e_types.append(k)
        ent_words.append(e_words)
        ent_types.append(e_types)
    sptr, stok = _ragged(sent_words)
    mptr, msent = _ragged(mem_lists, np.int64)
    eptr, eword = _ragged(ent_words)
    _, etype = _ragged(ent_types)
    return EncodedContexts(
        sptr=sptr,
        stok=stok,
        sspk=np.asarray(sent_spk, dtype=np.int32),
        qsent=qsent,
        mptr=mptr,
        msent=msent,
        eptr=eptr,
        eword=eword,
        etype=etype,
    )


_UNKNOWN_LABELS = ("ignore", "error", "extend")


class LabelIndex:
    """Labels (response strings) <-> indices: the given labels in their order, then any
    label added by ``encode(..., unknown="extend")``.

    The one home of label encoding (as scikit-learn's ``LabelEncoder``, but keeping the
    given order, since candidate sets are ordered): models encode gold responses with it,
    and :func:`irdialog.metrics.gold_indices` is :func:`encode_labels`.

    Parameters
    ----------
    labels : sequence of str, default=()
        E.g. a fitted model's ``candidates_``. A label listed twice maps to its first index.

    Attributes
    ----------
    labels_ : list of str
        The labels, given ones first; ``labels_[i]`` is the label of index i.
    index_ : dict of str to int
        Label -> its (first) index.

    Examples
    --------
    >>> table = LabelIndex(["hello", "ok"])
    >>> table.encode(["ok", "bye", "hello"]).tolist()
    [1, -1, 0]
    >>> table.encode(["ok", "bye", "bye"], unknown="extend").tolist(), table.labels_
    ([1, 2, 2], ['hello', 'ok', 'bye'])
    """

    def __init__(self, labels: Iterable[str] = ()):
        if isinstance(labels, str):
            raise TypeError("labels must be a sequence of responses, got a single str.")
        self.labels_: list[str] = list(labels)
        self.index_: dict[str, int] = {}
        for i, label in enumerate(self.labels_):
            self.index_.setdefault(label, i)  # a duplicate keeps its first index

    def __len__(self) -> int:
        return len(self.labels_)

    def encode(self, y, *, unknown: str = "ignore", name: str = "y", hint: str = "") -> np.ndarray:
        """The index of each label of ``y``, as int64.

        Parameters
        ----------
        y : sequence of str
        unknown : {"ignore", "error", "extend"}, default="ignore"
            A label that is not in the index maps to -1, raises a ValueError, or is added
            at the end (in order of first appearance).
        name : str, default="y"
            The name of ``y`` in error messages.
        hint : str, default=""
            Appended to error messages (what the caller expects of ``y``).

        Returns
        -------
        codes : ndarray of int64 of shape (len(y),)
        """
        if unknown not in _UNKNOWN_LABELS:
            raise ValueError(f"unknown must be one of {_UNKNOWN_LABELS}, got {unknown!r}.")
        if isinstance(y, str):
            raise TypeError(f"{name} must be a sequence of responses, got a single str.")
        y = list(y)
        index = self.index_
        try:
            if unknown == "extend":
                for label in y:
                    if label not in index:
                        index[label] = len(self.labels_)
                        self.labels_.append(label)
                return np.fromiter((index[r] for r in y), dtype=np.int64, count=len(y))
            codes = np.fromiter((index.get(r, -1) for r in y), dtype=np.int64, count=len(y))
        except TypeError:
            i = next(i for i, r in enumerate(y) if not _hashable(r))
            raise TypeError(
                f"{name}[{i}] must be a response string, got {type(y[i]).__name__} "
                f"({y[i]!r:.60}).{' ' + hint if hint else ''}"
            ) from None
        if unknown == "error" and (codes < 0).any():
            missing = list(dict.fromkeys(r for r, c in zip(y, codes) if c < 0))
            raise ValueError(
                f"{len(missing)} distinct response(s) of {name} are not among the candidates "
                f"({len(self.labels_)} of them), e.g. {missing[0]!r:.80}."
                f"{' ' + hint if hint else ''}"
            )
        return codes


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def encode_labels(
    y, labels, *, unknown: str = "ignore", name: str = "y", hint: str = ""
) -> np.ndarray:
    """Map labels to their indices into ``labels``; ``-1`` for an absent one.

    ``LabelIndex(labels).encode(y, ...)``, see :class:`LabelIndex`.

    Examples
    --------
    >>> encode_labels(["ok", "bye", "hello"], ["hello", "api_call rome", "ok"])
    array([ 2, -1,  0])
    >>> encode_labels(["bye"], ["hello"], unknown="error")
    Traceback (most recent call last):
    ...
    ValueError: 1 distinct response(s) of y are not among the candidates (1 of them), e.g. 'bye'.
    """
    return LabelIndex(labels).encode(y, unknown=unknown, name=name, hint=hint)
