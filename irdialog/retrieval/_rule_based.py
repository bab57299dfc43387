"""The rule-based restaurant bot of dialog bAbI: a dialog-state tracker and template rules."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import StrOptions, _fit_context
from ..base import RankerMixin, check_contexts, check_responses, resolve_candidates
from ..features import check_kb
from ..text import TOKENIZERS, Analyzer

# How far a lookup backs off: each level drops part of the state from the key (see _keys).
_N_LEVELS = 5


@dataclass(frozen=True, slots=True)
class DialogState:
    """What the bot knows after a context: the slots the user filled, the API results, the
    restaurants the bot already proposed, and the last bot turn.

    ``results`` maps each restaurant of the API results to its attributes (relation ->
    value), in the order they were listed; ``options`` lists the restaurants not yet
    proposed, best rating first.
    """

    slots: dict
    results: dict
    proposed: tuple
    options: tuple
    last_bot: tuple

    @property
    def current(self):
        """The restaurant under discussion: the last one proposed, else the best result."""
        if self.proposed:
            return self.proposed[-1]
        return self.options[0] if self.options else None


def _rating(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("-inf")  # unrated results go last


class RuleBasedRanker(RankerMixin, BaseEstimator):
    """The rule-based bot of dialog bAbI: it tracks the dialog state and answers by rule.

    The state, read from each context, holds the slots the user has filled (entities of
    the slot types, the last mention winning), the API results shown so far (``kb`` turns
    ``restaurant relation value``), the restaurants the bot has proposed and its last turn.
    Answers are templates over that state: a placeholder stands for a slot value (the API
    call), the next option (the best-rated result not yet proposed) or an attribute of the
    restaurant under discussion (its phone number or address).

    The paper's rules are hand-written in English. Here the rules are the state tracker and
    the template filling above, and the surface forms come from data: every entity word is
    recognised through ``kb`` (so unseen, out-of-vocabulary entities work), and which
    template answers which state (a table keyed by the delexicalised query, the last bot
    turn, the missing slots and whether results and options remain) is read off the
    training dialogs. No phrase of any language is written in the code. An unseen state
    backs off to a coarser key, down to the most frequent template; the first template
    that can be filled in and is among the candidates wins.

    Parameters
    ----------
    kb : dict of str to str or None, default=None
        Entity word -> entity type (the ``kb`` of
        :func:`~irdialog.datasets.load_dialog_babi`). None: no entities, so the bot is a
        lookup table of whole utterances.
    candidates : sequence of str or None, default=None
        The fixed candidate set. None: the distinct responses seen in ``fit``.
    slots : tuple of str, default=("R_cuisine", "R_location", "R_number", "R_price")
        The entity types the user fills, in the order the bot asks for them.
    name_type : str, default="R_name"
        The entity type of restaurant names.
    rating : str, default="R_rating"
        The relation whose (numeric) value orders the options, highest first.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`); an entity of
        ``kb`` is recognised when it is one token, and a template is a token sequence.

    Attributes
    ----------
    candidates_ : ndarray of str
    entity_types_ : dict of str to str
        ``kb`` with lower-cased entities, as the tokenizer lower-cases words.
    policy_ : list of dict
        One table per back-off level: key -> ``Counter`` of templates (token tuples whose
        placeholders are ``(source, type)`` pairs).
    n_templates_ : int
        The distinct templates seen in training.

    See Also
    --------
    NearestNeighborRanker : the other non-learned baseline of the paper.

    References
    ----------
    Bordes, Boureau & Weston (2017). Learning End-to-End Goal-Oriented Dialog. ICLR.
    Section 4.1 (Rule-based systems).

    Examples
    --------
    >>> from irdialog import RuleBasedRanker
    >>> from irdialog.base import Context, Turn
    >>> kb = {"paris": "R_location", "rome": "R_location"}
    >>> X = [Context(query="hi"),
    ...      Context(history=(Turn("user", "hi"), Turn("bot", "hello")), query="in paris")]
    >>> y = ["hello", "api_call paris"]
    >>> cands = ["hello", "api_call paris", "api_call rome"]
    >>> bot = RuleBasedRanker(kb=kb, candidates=cands, slots=("R_location",)).fit(X, y)
    >>> new = Context(history=(Turn("user", "hi"), Turn("bot", "hello")), query="in rome")
    >>> bot.predict([new])[0]
    'api_call rome'
    """

    _parameter_constraints = {
        "kb": [dict, None],
        "candidates": ["array-like", None],
        "slots": [tuple, list],
        "name_type": [str],
        "rating": [str],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    }

    def __init__(
        self,
        *,
        kb=None,
        candidates=None,
        slots=("R_cuisine", "R_location", "R_number", "R_price"),
        name_type="R_name",
        rating="R_rating",
        tokenizer="word",
    ):
        self.kb = kb
        self.candidates = candidates
        self.slots = slots
        self.name_type = name_type
        self.rating = rating
        self.tokenizer = tokenizer

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Read the templates of the training responses and the states they answer.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            The gold bot utterances.

        Returns
        -------
        self : RuleBasedRanker
        """
        X = check_contexts(X)
        y = check_responses(y, len(X))
        for i, t in enumerate(self.slots):
            if not isinstance(t, str):
                raise TypeError(f"slots[{i}] must be a str, got {type(t).__name__} ({t!r:.60}).")
        self.candidates_ = resolve_candidates(self.candidates, y)
        self.entity_types_ = check_kb(self.kb) if self.kb is not None else {}
        self._analyzer = Analyzer(tokenizer=self.tokenizer)
        policy = [defaultdict(Counter) for _ in range(_N_LEVELS)]
        for context, response in zip(X, y):
            state = self._state(context)
            template = self._template(self._analyzer.tokens(response), state)
            for level, key in enumerate(self._keys(context, state)):
                policy[level][key][template] += 1
        self.policy_ = [dict(table) for table in policy]
        self.n_templates_ = len(policy[-1][()])
        self._index_candidates()
        return self

    def _index_candidates(self):
        # Realised templates are token tuples; the first candidate of each tuple answers it.
        self._candidate_index = {}
        for i, c in enumerate(self.candidates_):
            self._candidate_index.setdefault(self._analyzer.tokens(c), i)

    def __getstate__(self):
        # The analyzer's caches and the candidate index are rebuilt on load.
        state = dict(self.__dict__)
        state.pop("_analyzer", None)
        state.pop("_candidate_index", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if hasattr(self, "candidates_"):
            self._analyzer = Analyzer(tokenizer=self.tokenizer)
            self._index_candidates()

    # --- the state tracker -------------------------------------------------------------

    def _fill_slots(self, slots: dict, tokens) -> None:
        for w in tokens:
            t = self.entity_types_.get(w)
            if t in self.slots:
                slots[t] = w  # the last mention wins: users change their minds

    def _state(self, context) -> DialogState:
        types, tokens = self.entity_types_, self._analyzer.tokens
        slots: dict = {}
        results: dict = {}
        proposed: dict = {}  # ordered set
        last_bot: tuple = ()
        for turn in context.history:
            words = tokens(turn.text)
            if turn.speaker == "user":
                self._fill_slots(slots, words)
            elif turn.speaker == "kb":
                # An API result: "restaurant relation value".
                if len(words) == 3 and types.get(words[0]) == self.name_type:
                    results.setdefault(words[0], {})[words[1]] = words[2]
            else:
                last_bot = words
                proposed.update((w, None) for w in words if types.get(w) == self.name_type)
        self._fill_slots(slots, tokens(context.query))
        rating = self.rating.lower()
        options = sorted(
            (name for name in results if name not in proposed),
            key=lambda name: -_rating(results[name].get(rating)),
        )  # a stable sort: equal ratings keep the order of the results
        return DialogState(slots, results, tuple(proposed), tuple(options), last_bot)

    def _delexicalise(self, tokens) -> tuple:
        types = self.entity_types_
        return tuple((types[w],) if w in types else w for w in tokens)

    def _keys(self, context, state: DialogState) -> list[tuple]:
        """The policy keys of a state, most specific first."""
        query = self._delexicalise(self._analyzer.tokens(context.query))
        last_bot = self._delexicalise(state.last_bot)
        missing = tuple(t for t in self.slots if t not in state.slots)
        progress = (missing, bool(state.results), bool(state.options))
        return [
            (query, last_bot, *progress),
            (frozenset(query), last_bot, *progress),  # the same words in another order
            (last_bot, *progress),
            (last_bot,),
            (),
        ]

    # --- templates -----------------------------------------------------------------------

    def _value(self, source: str, entity_type: str, state: DialogState):
        """The word a placeholder stands for in a state, or None."""
        if source == "slot":
            return state.slots.get(entity_type)
        if source == "option":
            return state.options[0] if state.options else None
        current = state.current
        if current is None:
            return None
        if entity_type == self.name_type:
            return current
        return state.results.get(current, {}).get(entity_type.lower())

    def _template(self, tokens, state: DialogState) -> tuple:
        """The response with each entity the state explains replaced by a placeholder
        ``(source, type)``; other words stay literal."""
        out = []
        for w in tokens:
            t = self.entity_types_.get(w)
            placeholder = w
            if t is not None:
                for source in ("slot", "option", "current"):
                    if self._value(source, t, state) == w:
                        placeholder = (source, t)
                        break
            out.append(placeholder)
        return tuple(out)

    def _realise(self, template: tuple, state: DialogState):
        out = []
        for token in template:
            if isinstance(token, tuple):
                token = self._value(*token, state)
                if token is None:
                    return None
            out.append(token)
        return tuple(out)

    def _scored_templates(self, level, key, cache):
        """The templates of a policy key with their scores, split into the literal ones
        (already responses) and those with placeholders; memoised in ``cache``, since the
        coarse keys recur in nearly every context."""
        got = cache.get((level, key))
        if got is None:
            literal, open_ = [], []
            table = self.policy_[level].get(key, {})
            total = sum(table.values()) + 1
            for template, count in table.items():
                score = _N_LEVELS - level + count / total
                if any(isinstance(t, tuple) for t in template):
                    open_.append((template, score))
                else:
                    literal.append((template, score))
            got = cache[level, key] = (literal, open_)
        return got

    def _response_scores(self, context, cache) -> dict:
        """Score of each response (token tuple) the rules can give to a context.

        A template found at back-off level ``l`` scores ``_N_LEVELS - l`` plus its share of
        the key's training answers, so a more specific key always wins; a response no
        template gives is absent (score 0).
        """
        state = self._state(context)
        scores: dict = {}
        for level, key in enumerate(self._keys(context, state)):
            literal, open_ = self._scored_templates(level, key, cache)
            filled = [(self._realise(t, state), score) for t, score in open_]
            for response, score in literal + filled:
                if response is not None and score > scores.get(response, 0.0):
                    scores[response] = score
        return scores

    def decision_function(self, X) -> np.ndarray:
        """Rule scores of each candidate for each context.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
            0 for a candidate no rule gives; otherwise higher for the rules of more
            specific states and, among them, for the templates seen more often.
        """
        check_is_fitted(self)
        X = check_contexts(X)
        out = np.zeros((len(X), len(self.candidates_)))
        cache: dict = {}
        for i, context in enumerate(X):
            for response, score in self._response_scores(context, cache).items():
                j = self._candidate_index.get(response)
                if j is not None:
                    out[i, j] = score
        return out

    def _score_pairs(self, X, responses) -> np.ndarray:
        X = check_contexts(X)
        tokens = self._analyzer.tokens
        cache: dict = {}
        return np.array(
            [self._response_scores(x, cache).get(tokens(r), 0.0) for x, r in zip(X, responses)]
        )
