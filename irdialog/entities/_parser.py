"""The entity parser of the Movie Dialog paper (Dodge et al. 2016, appendix A).

Every known entity ("bruce willis", "die hard") becomes one dictionary symbol. The
normalised form of a name is :func:`entity_key`, its tokens: names with one key are one
entity, and every look-up of a name (the parser's own dictionary, the recommender's
candidates and items) goes through it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import Context, ContextTransformerMixin, Turn, check_contexts, check_responses
from ..text import TOKENIZERS, Analyzer

ENTITY_PREFIX = "ent:"


def entity_key(name: str, analyzer: Analyzer | None = None) -> tuple[str, ...]:
    """The normalised form of an entity name: its tokens (lower-cased, and by default words
    with edge punctuation split off). Names with one key are one entity.

    Parameters
    ----------
    name : str
    analyzer : irdialog.text.Analyzer, default=None
        The tokenizer of the parser (``EntityParser(tokenizer=...)``); None: ``Analyzer()``.

    Examples
    --------
    >>> entity_key("Die Hard 2") == entity_key("die hard 2")
    True
    >>> entity_key("Hi, Mom!")
    ('hi', ',', 'mom', '!')
    >>> entity_key("成龙", Analyzer(tokenizer="char"))
    ('成', '龙')
    """
    return (analyzer or Analyzer()).tokens(name)


class EntityParser(ContextTransformerMixin, BaseEstimator):
    """Rewrite texts over a dictionary of entities (single symbols) and frequent words.

    The text parser of the Movie Dialog paper: every known entity ("bruce willis",
    "die hard") is one dictionary symbol; the text is read left to right, lower-cased,
    taking at each position the longest n-gram of tokens that is an entity, else one
    word. Words (not entities) seen fewer than ``min_count`` times in ``fit`` are dropped.
    An entity becomes a token ``ent:<words joined by _>`` (``ent:die_hard``) that the
    ``"word"`` tokenizer keeps whole, so the rewritten contexts (tokens joined by spaces,
    whatever ``tokenizer`` split them) feed
    :class:`~irdialog.retrieval.TfidfRanker` or the embedding rankers unchanged and
    entities stay single symbols there too.

    Parameters
    ----------
    entities : sequence of str or None, default=None
        The entity names, e.g. :func:`irdialog.datasets.load_movie_entities`. Names are
        matched on their tokens (:func:`entity_key`), case-insensitively; names with the
        same tokens are one entity, spelled as the first of them. None: no entities (the
        parser only applies the frequency cut).
    min_count : int, default=5
        Words seen fewer times in ``fit`` are dropped from the rewritten texts. Entities
        are never dropped. 1 keeps every word seen in ``fit``; words never seen in ``fit``
        are always dropped.
    tokenizer : {"word", "char"} or callable, default="word"
        How names and texts are split into tokens (:class:`irdialog.text.Analyzer`):
        ``"word"``, the words and punctuation of a script that separates words by spaces;
        ``"char"``, characters (white space dropped), for scripts that do not (Chinese,
        Japanese, Thai); or a callable from str to a list of str.

    Attributes
    ----------
    entity_names_ : ndarray of str
        The entities, by id (first spelling of each distinct token sequence, in the order
        of ``entities``).
    entity_tokens_ : ndarray of str
        The token of each entity (``"ent:die_hard"``), by id; unique.
    entity_index_ : dict of tuple of str to int
        Token sequence (lower-cased) -> entity id.
    token_index_ : dict of str to int
        Entity token -> entity id (to map a predicted token back to its entity).
    vocabulary_ : dict of str to int
        The words kept (outside entities) -> their count in ``fit``.

    See Also
    --------
    irdialog.datasets.load_movie_entities : the Movie Dialog entity list.
    irdialog.SVDRecommender : the recommender over the entities of these texts.

    Notes
    -----
    Word counts are taken over each context's query and, when given, each gold response
    ``y``: in a dialog data set every utterance is once a query or once a response, while
    history turns repeat in every later context of their dialog.

    Matching uses a set of all prefixes of the entities' token sequences, so a position
    costs one dictionary look-up per token of the longest entity starting there (usually
    one), whatever the number of entities (75k for Movie Dialog).

    References
    ----------
    Dodge, Gane, Zhang, Bordes, Chopra, Miller, Szlam & Weston (2016). Evaluating
    Prerequisite Qualities for Learning End-to-End Dialog Systems. ICLR. Appendix A
    ("Dictionary").

    Examples
    --------
    >>> from irdialog.entities import EntityParser
    >>> parser = EntityParser(["Die Hard", "Die Hard 2", "Bruce Willis"], min_count=1)
    >>> parser = parser.fit(["who directed die hard 2 ?"])
    >>> parser.parse("Bruce Willis was in Die Hard 2?")
    ['ent:bruce_willis', 'ent:die_hard_2', '?']
    >>> parser.transform(["who starred in DIE HARD"])[0].query
    'who ent:die_hard'
    """

    _parameter_constraints = {
        "entities": "no_validation",  # a sequence of str, checked in fit (each position)
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    }

    def __init__(self, entities=None, *, min_count=5, tokenizer="word"):
        self.entities = entities
        self.min_count = min_count
        self.tokenizer = tokenizer

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or call, so each text is tokenised once."""
        return Analyzer(tokenizer=self.tokenizer)

    def _entity_names(self):
        if self.entities is None:
            return []
        if isinstance(self.entities, str):
            raise TypeError("entities must be a sequence of str, got a single str.")
        names = list(self.entities)
        for i, name in enumerate(names):
            if not isinstance(name, str):
                raise TypeError(f"entities[{i}] must be a str, got {type(name).__name__}.")
        return names

    def _build_entities(self, names, analyzer):
        # "word" tokens hold no edge punctuation (it is split off), so words joined by "_"
        # after "ent:" are always one token; punctuation-only tokens are left out.
        word = re.compile(r"\w")
        index: dict[tuple[str, ...], int] = {}
        spellings, tokens = [], []
        taken: set[str] = set()
        for name in names:
            key = entity_key(name, analyzer)
            if not key or key in index:
                continue
            slug = "_".join(t for t in key if word.search(t))
            token = f"{ENTITY_PREFIX}{slug}" if slug else f"{ENTITY_PREFIX}{len(spellings)}"
            k = 2
            while token in taken:  # "Hi, Mom!" and "Hi Mom": one slug, two entities
                token = f"{ENTITY_PREFIX}{slug}_{k}"
                k += 1
            taken.add(token)
            index[key] = len(spellings)
            spellings.append(name)
            tokens.append(token)
        self.entity_names_ = np.asarray(spellings, dtype=object)
        self.entity_tokens_ = np.asarray(tokens, dtype=object)
        self.entity_index_ = index
        self.token_index_ = {t: i for i, t in enumerate(tokens)}
        self._prefixes = {key[:n] for key in index for n in range(1, len(key) + 1)}

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Build the entity dictionary and count the words of ``X`` (and ``y``).

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str, default=None
            Gold responses; their words are counted too.

        Returns
        -------
        self : EntityParser
        """

        if isinstance(self.min_count, bool):  # an Integral, so the constraint lets it by
            raise ValueError(f"min_count must be a positive integer, got {self.min_count!r}.")
        names = self._entity_names()
        X = check_contexts(X)
        analyzer = self._analyzer()
        self._build_entities(names, analyzer)
        self.vocabulary_ = {}  # nothing dropped while counting
        texts = [ctx.query for ctx in X]
        if y is not None:
            texts.extend(check_responses(y, len(X)))
        counts = Counter(
            t for text in texts for t in self._segment(text, analyzer) if t not in self.token_index_
        )
        self.vocabulary_ = {w: c for w, c in sorted(counts.items()) if c >= self.min_count}
        return self

    # -- parsing --------------------------------------------------------------------------------

    def _segment(self, text: str, analyzer: Analyzer) -> list[str]:
        # Left to right, the longest entity starting at each position, else one word;
        # every word is kept (the frequency cut is applied by the callers).
        words = analyzer.tokens(text)
        prefixes, index, names = self._prefixes, self.entity_index_, self.entity_tokens_
        out: list[str] = []
        i, n = 0, len(words)
        while i < n:
            best, end, key, j = -1, i + 1, (), i
            while j < n:
                key = (*key, words[j])
                if key not in prefixes:
                    break
                j += 1
                found = index.get(key)
                if found is not None:
                    best, end = found, j
            out.append(words[i] if best < 0 else names[best])
            i = end
        return out

    def parse(self, text: str) -> list[str]:
        """The tokens of one text: entity tokens and the kept words, in order.

        Parameters
        ----------
        text : str

        Returns
        -------
        tokens : list of str
        """
        check_is_fitted(self)
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__} ({text!r:.60}).")
        return self._parse(text, self._analyzer())

    def _parse(self, text: str, analyzer: Analyzer) -> list[str]:
        vocab, entity = self.vocabulary_, self.token_index_
        return [t for t in self._segment(text, analyzer) if t in entity or t in vocab]

    def entity_ids(self, text: str) -> list[int]:
        """The ids of the entities of one text, in order (repeats included).

        Parameters
        ----------
        text : str

        Returns
        -------
        ids : list of int
            Indices into ``entity_names_``.

        Examples
        --------
        >>> from irdialog.entities import EntityParser
        >>> parser = EntityParser(["Heat", "Kids", "Fight Club"]).fit(["x"])
        >>> [str(parser.entity_names_[i]) for i in parser.entity_ids("I liked heat, FIGHT CLUB")]
        ['Heat', 'Fight Club']
        """
        check_is_fitted(self)
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__} ({text!r:.60}).")
        entity = self.token_index_
        return [entity[t] for t in self._segment(text, self._analyzer()) if t in entity]

    def transform_text(self, texts) -> list[str]:
        """Rewrite plain strings (e.g. candidate responses): their tokens joined by spaces.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        rewritten : list of str
        """
        check_is_fitted(self)
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, got a single str.")
        analyzer = self._analyzer()
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(t).__name__} ({t!r:.60}).")
        return [" ".join(self._parse(t, analyzer)) for t in texts]

    def transform(self, X) -> list[Context]:
        """Rewrite every turn and query of the contexts over the dictionary.

        Parameters
        ----------
        X : sequence of Context or str

        Returns
        -------
        contexts : list of Context
            The same speakers and ``entities`` annotations; each text replaced by its
            tokens (:meth:`parse`) joined by spaces.
        """
        check_is_fitted(self)

        cache: dict[str, str] = {}  # history turns recur in every later context of a dialog
        analyzer = self._analyzer()

        def rewrite(text: str) -> str:
            out = cache.get(text)
            if out is None:
                out = cache[text] = " ".join(self._parse(text, analyzer))
            return out

        return [
            replace(
                ctx,
                history=tuple(Turn(t.speaker, rewrite(t.text)) for t in ctx.history),
                query=rewrite(ctx.query),
            )
            for ctx in check_contexts(X)
        ]
