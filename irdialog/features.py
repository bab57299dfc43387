"""Match-type features of the dialog bAbI paper (Bordes et al. 2016, section 4.5).

Entities are the words a knowledge base types (cuisine, location, phone, ...). For each
type, a type word is added to a candidate's representation when one of the candidate's
words is an entity of that type that also appears in the input or memory. Because the
test is an exact match against the KB, entities never seen in training (the OOV test sets)
still match.

The work is split in two so that every ranker can use it in a ``Pipeline``:

- :class:`MatchTypeFeaturizer` (a transformer) finds the typed entities of each context
  and returns the contexts with ``entities`` filled in;
- :func:`match_type_matrices` gives, per type, the sparse (contexts x candidates) matrix of
  matches, from those entities and the candidates' bags of words. Rankers call it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._compat import Interval, _fit_context
from .base import Context, ContextTransformerMixin, Turn, check_contexts
from .text import context_tokens, tokenize


def type_token(entity_type: str) -> str:
    """The vocabulary word standing for a KB entity type."""
    return f"<type:{entity_type}>"


def check_kb(kb) -> dict[str, str]:
    """Validate a knowledge base (entity word -> entity type) and return it with lower-cased
    entities, as the tokenizer lower-cases words.

    Examples
    --------
    >>> check_kb({"Paris": "R_location"})
    {'paris': 'R_location'}
    """
    for entity, entity_type in kb.items():
        if not isinstance(entity, str) or not isinstance(entity_type, str):
            raise TypeError(
                f"kb must map str entities to str types, got {entity!r:.60}: {entity_type!r:.60}."
            )
    return {e.lower(): t for e, t in kb.items()}


class MatchTypeFeaturizer(ContextTransformerMixin, BaseEstimator):
    """Annotate contexts with the knowledge-base entities they mention.

    Parameters
    ----------
    kb : dict of str to str
        Entity word -> entity type, e.g. the ``kb`` of
        :func:`irdialog.datasets.load_dialog_babi`. Matching is case-insensitive.
    types : sequence of str or None, default=None
        The entity types to use (None: every type of ``kb``).
    use_history : bool, default=True
        Look for entities in the whole conversation (input and memory), or in the last
        utterance only.

    Attributes
    ----------
    types_ : list of str
        The entity types in use, sorted.
    entity_types_ : dict of str to str
        Lower-cased entity -> type, restricted to ``types_``.

    References
    ----------
    Bordes, Boureau & Weston (2017). Learning End-to-End Goal-Oriented Dialog. ICLR.
    Section 4.5.

    Examples
    --------
    >>> from irdialog.features import MatchTypeFeaturizer
    >>> f = MatchTypeFeaturizer({"paris": "R_location", "cheap": "R_price"}).fit(["x"])
    >>> f.transform(["a cheap table in Paris"])[0].entities
    (('cheap', 'R_price'), ('paris', 'R_location'))
    """

    _parameter_constraints = {
        "kb": [dict, None],  # None: the error below, which says what kb should be
        "types": ["array-like", None],
        "use_history": ["boolean"],
    }

    def __init__(self, kb=None, *, types=None, use_history=True):
        self.kb = kb
        self.types = types
        self.use_history = use_history

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        """Check the knowledge base and keep the entities of the chosen types.

        Parameters
        ----------
        X : sequence of Context or str, default=None
            Checked (so that bad input fails here, as in any Pipeline step) but not
            learned from: the model is the KB. Like scikit-learn's text vectorizers, the
            featurizer takes text, so it has no ``n_features_in_``.
        y : ignored

        Returns
        -------
        self : MatchTypeFeaturizer
        """
        if X is not None:
            check_contexts(X)
        if not isinstance(self.kb, dict) or not self.kb:
            raise ValueError(
                "MatchTypeFeaturizer needs kb, a non-empty dict entity -> type "
                f"(got {type(self.kb).__name__})."
            )
        check_kb(self.kb)
        if self.types is not None:
            for i, t in enumerate(self.types):
                if not isinstance(t, str):
                    raise TypeError(
                        f"types[{i}] must be a str, got {type(t).__name__} ({t!r:.60})."
                    )
        kb_types = sorted(set(self.kb.values()))
        types = kb_types if self.types is None else sorted(set(self.types))
        unknown = set(types) - set(kb_types)
        if unknown:
            raise ValueError(f"types {sorted(unknown)} do not occur in kb (its types: {kb_types}).")
        self.types_ = types
        self.entity_types_ = {e.lower(): t for e, t in self.kb.items() if t in types}
        return self

    def transform(self, X) -> list[Context]:
        check_is_fitted(self)
        kb = self.entity_types_
        out = []
        for ctx in check_contexts(X):
            words = dict.fromkeys(context_tokens(ctx, self.use_history))  # ordered set
            entities = tuple((w, kb[w]) for w in words if w in kb)
            out.append(replace(ctx, entities=entities))
        return out


def _mentions(contexts, vocabulary, types) -> list[sp.csr_matrix]:
    # Per type, the (contexts x words) indicator of the typed entities each context mentions.
    type_index = {t: k for k, t in enumerate(types)}
    rows: list[list[int]] = [[] for _ in types]
    cols: list[list[int]] = [[] for _ in types]
    for i, ctx in enumerate(contexts):
        for word, entity_type in ctx.entities:
            k = type_index.get(entity_type)
            j = vocabulary.get(word)
            if k is not None and j is not None:
                rows[k].append(i)
                cols[k].append(j)
    shape = (len(contexts), len(vocabulary))
    return [
        sp.csr_matrix((np.ones(len(r), np.float32), (r, c)), shape=shape)
        for r, c in zip(rows, cols)
    ]


def match_type_matrices(
    contexts: list[Context],
    candidate_bags: sp.csr_matrix,
    vocabulary: dict[str, int],
    types: list[str],
) -> list[sp.csr_matrix]:
    """Per type, which candidates match an entity of that type found in each context.

    Parameters
    ----------
    contexts : list of Context
        Contexts annotated by :class:`MatchTypeFeaturizer` (``entities`` filled in).
    candidate_bags : sparse matrix of shape (n_candidates, n_words)
        The candidates' bags of words over ``vocabulary``.
    vocabulary : dict of str to int
        Column of each word in ``candidate_bags``. Entities outside it cannot occur in
        any candidate and are ignored.
    types : list of str
        Entity types, one output matrix each.

    Returns
    -------
    matches : list of sparse matrices of shape (n_contexts, n_candidates)
        ``matches[t][i, j] == 1`` when candidate j contains an entity of type ``types[t]``
        that context i mentions.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from irdialog.base import Context
    >>> ctx = [Context(query="in rome", entities=(("rome", "R_location"),))]
    >>> bags = sp.csr_matrix([[1, 0], [0, 1]])  # candidates "rome", "paris"
    >>> match_type_matrices(ctx, bags, {"rome": 0, "paris": 1}, ["R_location"])[0].toarray()
    array([[1., 0.]], dtype=float32)
    """
    present = (candidate_bags > 0).astype(np.float32).T.tocsr()  # words x candidates
    out = []
    for mentions in _mentions(contexts, vocabulary, types):
        m = (mentions @ present).tocsr()
        m.data[:] = 1.0
        out.append(m)
    return out


def match_type_pairs(
    contexts: list[Context],
    response_bags: sp.csr_matrix,
    vocabulary: dict[str, int],
    types: list[str],
) -> np.ndarray:
    """Match-type indicators of (context, response) pairs: row i pairs context i with
    response i. Returns a dense (n_pairs, n_types) 0/1 array; see match_type_matrices."""
    present = (response_bags > 0).astype(np.float32)
    out = np.zeros((len(contexts), len(types)), dtype=np.float32)
    for k, mentions in enumerate(_mentions(contexts, vocabulary, types)):
        out[:, k] = np.asarray(mentions.multiply(present).sum(axis=1)).ravel() > 0
    return out


# -- Movie Dialog entity parser (Dodge et al. 2016, appendix A) ---------------------------------

ENTITY_PREFIX = "ent:"


class EntityParser(ContextTransformerMixin, BaseEstimator):
    """Rewrite texts over a dictionary of entities (single symbols) and frequent words.

    The text parser of the Movie Dialog paper: every known entity ("bruce willis",
    "die hard") is one dictionary symbol; the text is read left to right, lower-cased,
    taking at each position the longest n-gram of tokens that is an entity, else one
    word. Words (not entities) seen fewer than ``min_count`` times in ``fit`` are dropped.
    An entity becomes a token ``ent:<words joined by _>`` (``ent:die_hard``) that
    :func:`irdialog.text.tokenize` keeps whole, so the rewritten contexts feed
    :class:`~irdialog.retrieval.TfidfRanker` or the embedding rankers unchanged and
    entities stay single symbols there too.

    Parameters
    ----------
    entities : sequence of str or None, default=None
        The entity names, e.g. :func:`irdialog.datasets.load_movie_entities`. Names are
        matched on their tokens (:func:`irdialog.text.tokenize`), case-insensitively; names
        with the same tokens are one entity, spelled as the first of them. None: no
        entities (the parser only applies the frequency cut).
    min_count : int, default=5
        Words seen fewer times in ``fit`` are dropped from the rewritten texts. Entities
        are never dropped. 1 keeps every word seen in ``fit``; words never seen in ``fit``
        are always dropped.

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
    >>> from irdialog.features import EntityParser
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
    }

    def __init__(self, entities=None, *, min_count=5):
        self.entities = entities
        self.min_count = min_count

    # -- fitting --------------------------------------------------------------------------------

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

    def _build_entities(self, names):

        # Words hold no edge punctuation (tokenize splits it off), so words joined by "_"
        # after "ent:" are always one token; punctuation-only tokens are left out.
        word = re.compile(r"\w")
        index: dict[tuple[str, ...], int] = {}
        spellings, tokens = [], []
        taken: set[str] = set()
        for name in names:
            key = tuple(tokenize(name))
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
        self._build_entities(names)
        self.vocabulary_ = {}  # nothing dropped while counting
        texts = [ctx.query for ctx in X]
        if y is not None:
            from .base import check_responses

            texts.extend(check_responses(y, len(X)))
        counts = Counter(
            t for text in texts for t in self._segment(text) if t not in self.token_index_
        )
        self.vocabulary_ = {w: c for w, c in sorted(counts.items()) if c >= self.min_count}
        return self

    # -- parsing --------------------------------------------------------------------------------

    def _segment(self, text: str) -> list[str]:
        # Left to right, the longest entity starting at each position, else one word;
        # every word is kept (the frequency cut is applied by the callers).

        words = tokenize(text)
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
        vocab, entity = self.vocabulary_, self.token_index_
        return [t for t in self._segment(text) if t in entity or t in vocab]

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
        >>> from irdialog.features import EntityParser
        >>> parser = EntityParser(["Heat", "Kids", "Fight Club"]).fit(["x"])
        >>> [str(parser.entity_names_[i]) for i in parser.entity_ids("I liked heat, FIGHT CLUB")]
        ['Heat', 'Fight Club']
        """
        check_is_fitted(self)
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__} ({text!r:.60}).")
        entity = self.token_index_
        return [entity[t] for t in self._segment(text) if t in entity]

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
        return [" ".join(self.parse(t)) for t in texts]

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

        def rewrite(text: str) -> str:
            out = cache.get(text)
            if out is None:
                out = cache[text] = " ".join(self.parse(text))
            return out

        return [
            replace(
                ctx,
                history=tuple(Turn(t.speaker, rewrite(t.text)) for t in ctx.history),
                query=rewrite(ctx.query),
            )
            for ctx in check_contexts(X)
        ]
