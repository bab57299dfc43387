"""Match-type features of the dialog bAbI paper (Bordes et al. 2016, section 4.5).

Entities are the words a knowledge base types (cuisine, location, phone, ...). For each
type, a type word is added to a candidate's representation when one of the candidate's
words is an entity of that type that also appears in the input or memory. Because the
test is an exact match against the KB, entities never seen in training (the OOV test sets)
still match. With ``dialog_state``, entities are also marked by what the dialog did with
them (named by the bot, named last, a fact about the one named last): a type each. With
``kb_ranks``, the subject of a KB fact whose value is a number is marked by that value's
rank among the facts of its kind (the best rated restaurant, the second, ...).

The work is split in two so that every ranker can use it in a ``Pipeline``:

- :class:`MatchTypeFeaturizer` (a transformer) finds the typed entities of each context
  and returns the contexts with ``entities`` filled in;
- :func:`match_type_matrices` gives, per type, the sparse (contexts x candidates) matrix of
  matches, from those entities and the candidates' bags of words. Rankers call it.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._compat import StrOptions, _fit_context
from .base import Context, ContextTransformerMixin, check_contexts
from .text import TOKENIZERS, Analyzer, document_frequencies


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


def rarity_kb(texts, n_types: int = 16, *, tokenizer="word") -> dict[str, str]:
    """A knowledge base for match-type features on text that has none: every token of
    ``texts`` typed by its rarity.

    A token's rarity is its inverse document frequency over the ``n`` texts,
    ``log(n / df)``, from 0 (in every text) to ``log(n)`` (in one). The types are
    ``n_types`` equal steps of it (of ``[0, 1]`` for fewer than 3 texts, whose ``log(n)`` is
    under 1): ``"rarity:0"`` holds the commonest tokens,
    ``f"rarity:{n_types - 1}"`` those of a single text; a bucket may stay empty. Given to
    :class:`MatchTypeFeaturizer` in front of a ranker with ``match_type="match"``, a
    candidate gets the type word of a bucket when it shares a token of that bucket with the
    input: the ranker learns what a shared word of each rarity is worth, an exact-match
    signal weighted as BM25's idf weighs one, which holds for words it never saw in
    training. On InsuranceQA, supervised embeddings so given 16 buckets of the training
    answers' words went from a valid P@1 of 15.95 to 17.20, at half the step (the type
    words step at every example; ``benchmarks/NOTES.md``, InsuranceQA).

    Parameters
    ----------
    texts : iterable of str
        The documents the frequencies are counted over (e.g. the candidate responses).
    n_types : int, default=16
    tokenizer : {"word", "char"} or callable, default="word"
        As the :class:`MatchTypeFeaturizer` it is given to.

    Returns
    -------
    dict of str to str
        Token -> ``"rarity:<bucket>"``.

    Examples
    --------
    >>> from irdialog.features import rarity_kb
    >>> kb = rarity_kb(["the car is red", "the car", "the boat"], n_types=3)
    >>> kb["the"], kb["car"], kb["boat"]
    ('rarity:0', 'rarity:1', 'rarity:2')
    """
    if not isinstance(n_types, Integral) or isinstance(n_types, bool) or n_types < 1:
        raise ValueError(f"n_types must be a positive integer, got {n_types!r}.")
    if isinstance(texts, str):
        raise TypeError("texts must be an iterable of str, not one str.")
    analyzer = Analyzer(tokenizer=tokenizer)
    documents = [analyzer(text) for text in texts]
    df = document_frequencies(documents)
    if not df:
        raise ValueError("texts hold no token: rarity_kb needs the documents to count.")
    tokens = list(df)
    idf = -np.log(np.array([df[t] for t in tokens], dtype=np.float64))
    step = max(np.log(len(documents)), 1.0) / n_types
    buckets = np.minimum((idf / step).astype(np.int64), n_types - 1)
    return {t: f"rarity:{b}" for t, b in zip(tokens, buckets.tolist())}


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
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into the tokens looked up in ``kb``
        (:class:`irdialog.text.Analyzer`); an entity is found when it is one token.
    dialog_state : bool, default=False
        Also mark the entities of the history by the state of the dialog (not in the
        paper), each mark a type of its own: ``<type>:said`` for an entity a bot turn
        named, ``<type>:last`` for those of the last bot turn that named one, and
        ``<type>:linked`` for the entities of the KB facts (the ``"kb"`` turns, each a
        fact whose first entity is its subject) about the subject of a fact naming one of
        those. A ranker then learns, from the marks and not from the entity's own words,
        that an option already proposed is not proposed again, or that "here it is"
        gives the address of the restaurant just accepted: which holds for entities
        never seen in training too.
    kb_ranks : bool, default=False
        Also mark the subject of each KB fact of the history whose value is a number
        (``"resto_a R_rating 7"``) by the rank of that value among the history's facts
        with a value of the same type, largest first: ``<type>:<value type>#1`` for the
        largest, ``#2`` for the next, equal values sharing a rank (not in the paper). A
        fact's subject is its first entity; a number the KB does not type takes the
        fact's word before it (its relation, lower-cased) as its type.
        Together with ``dialog_state``, a ranker can learn to propose the best rated
        option not yet proposed, where the options' own words are unknown. A number is
        what :class:`float` reads, in any script's digits.

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

    With the dialog state, the entities the bot named and the facts about them are marked:

    >>> from irdialog.base import Context, Turn
    >>> kb = {"resto_a": "R_name", "resto_a_phone": "R_phone", "resto_b": "R_name"}
    >>> ctx = Context((Turn("kb", "resto_a R_phone resto_a_phone"),
    ...                Turn("bot", "what about resto_a")), "its phone please")
    >>> f = MatchTypeFeaturizer(kb, dialog_state=True).fit()
    >>> f.transform([ctx])[0].entities[2:]
    (('resto_a', 'R_name:said'), ('resto_a', 'R_name:last'), ('resto_a_phone', 'R_phone:linked'))

    With ``kb_ranks``, the subjects of numeric facts are marked by their value's rank:

    >>> kb = {"resto_a": "R_name", "resto_b": "R_name", "3": "R_rating", "7": "R_rating"}
    >>> ctx = Context((Turn("kb", "resto_a R_rating 3"), Turn("kb", "resto_b R_rating 7")), "")
    >>> MatchTypeFeaturizer(kb, kb_ranks=True).fit().transform([ctx])[0].entities[-2:]
    (('resto_b', 'R_name:R_rating#1'), ('resto_a', 'R_name:R_rating#2'))
    """

    _parameter_constraints = {
        "kb": [dict, None],  # None: the error below, which says what kb should be
        "types": ["array-like", None],
        "use_history": ["boolean"],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "dialog_state": ["boolean"],
        "kb_ranks": ["boolean"],
    }

    def __init__(
        self,
        kb=None,
        *,
        types=None,
        use_history=True,
        tokenizer="word",
        dialog_state=False,
        kb_ranks=False,
    ):
        self.kb = kb
        self.types = types
        self.use_history = use_history
        self.tokenizer = tokenizer
        self.dialog_state = dialog_state
        self.kb_ranks = kb_ranks

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
        analyzer = Analyzer(tokenizer=self.tokenizer)
        out = []
        for ctx in check_contexts(X):
            words = dict.fromkeys(analyzer.context_words(ctx, self.use_history))  # ordered set
            entities = tuple((w, kb[w]) for w in words if w in kb)
            if self.dialog_state:
                entities += _state_entities(ctx, analyzer, kb)
            if self.kb_ranks:
                entities += _rank_entities(ctx, analyzer, kb)
            out.append(replace(ctx, entities=entities))
        return out


# The dialog-state marks of an entity (``dialog_state``), added to its type.
SAID, LAST, LINKED = ":said", ":last", ":linked"


def _state_entities(ctx, analyzer, kb) -> tuple:
    """The entities of a context's history marked by the dialog state: ``type:said`` for
    each entity a bot turn named, ``type:last`` for those of the last bot turn that named
    one, ``type:linked`` for the entities of the KB facts about the same subject as a fact
    naming one of those (a KB turn is a fact, its first entity the subject)."""
    turns = [(t.speaker, [w for w in analyzer.words(t.text) if w in kb]) for t in ctx.history]
    facts = [ws for speaker, ws in turns if speaker == "kb" and ws]
    said = dict.fromkeys(w for speaker, ws in turns if speaker == "bot" for w in ws)
    last = dict.fromkeys(next((ws for sp, ws in reversed(turns) if sp == "bot" and ws), []))
    subjects = {ws[0] for ws in facts if any(w in last for w in ws)}
    linked = dict.fromkeys(w for ws in facts if ws[0] in subjects for w in ws if w not in last)
    return (
        tuple((w, kb[w] + SAID) for w in said)
        + tuple((w, kb[w] + LAST) for w in last)
        + tuple((w, kb[w] + LINKED) for w in linked)
    )


def _rank_entities(ctx, analyzer, kb) -> tuple:
    """The subjects of a context's numeric KB facts marked ``type:value_type#k``: the rank
    k of the fact's value among the history's values of that type, largest first. A fact's
    subject is its first KB entity; a number the KB does not type takes the word before it
    (the relation) as its type."""
    values: dict[str, dict[str, float]] = {}  # value type -> subject -> value
    for turn in ctx.history:
        if turn.speaker != "kb":
            continue
        words = analyzer.words(turn.text)
        at = next((i for i, w in enumerate(words) if w in kb), None)
        if at is None:
            continue
        for before, w in zip(words[at:], words[at + 1 :]):
            number = _number(w)
            if number is not None:
                values.setdefault(kb.get(w, before), {})[words[at]] = number
    out = []
    for value_type in sorted(values):
        by_subject = values[value_type]
        ranks = {v: k for k, v in enumerate(sorted(set(by_subject.values()), reverse=True), 1)}
        ordered = sorted(by_subject, key=lambda w: -by_subject[w])  # stable: first seen first
        out += [(w, f"{kb[w]}:{value_type}#{ranks[by_subject[w]]}") for w in ordered]
    return tuple(out)


def _number(word: str) -> float | None:
    try:
        number = float(word)
    except ValueError:
        return None
    return number if np.isfinite(number) else None


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
