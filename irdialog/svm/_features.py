"""Hashed pairwise features of stories: g(x, f) and g(f_i, f_j) of the bAbI structured SVM.

:class:`PairwiseFeaturizer` learns what it needs from the training stories (a vocabulary
in first-appearance order and the stopwords, by document frequency) and turns contexts
into the packed arrays of :mod:`irdialog.svm._kernels`. Its :meth:`~PairwiseFeaturizer.transform`
gives the joint feature vector Psi(x, o) of a question and a tuple of facts, the vector a
structured SVM scores, as a sparse matrix over ``n_features`` hashed indices.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._babi_qa_heuristics import answer_parts
from .._compat import Interval, StrOptions, _fit_context
from ..base import check_contexts
from ..text import TOKENIZERS, Analyzer, context_texts, learn_case_folding
from . import _kernels
from ._kernels import StoryBatch

# link_df="auto": the supporting facts of all but this fraction of the training questions
# stay chained to their question ...
REACH_TOLERANCE = 0.005
# ... and only words in at least this fraction of the sentences may stop linking.
MIN_NONLINKING_DF = 0.01
# Sentences are cut to their first MAX_SENTENCE_TOKENS tokens when encoded: the features of
# a sentence pair grow with the square of its length, and so do the kernels' buffers.
MAX_SENTENCE_TOKENS = 48


def gold_tuples(
    supporting,
    n_samples: int,
    max_facts: int,
    history_lengths,
    *,
    name: str = "supporting",
    truncate: bool = True,
) -> np.ndarray:
    """Supporting facts as an (n_samples, 3) int array, ``-1`` for empty slots.

    A question with more than ``max_facts`` supporting facts keeps its last ``max_facts``
    (in the given order, which for bAbI is the reasoning order), or is an error when
    ``truncate`` is False. ``name`` is the argument named in the error messages.
    """
    if len(supporting) != n_samples:
        raise ValueError(f"X has {n_samples} contexts but {name} has {len(supporting)} entries.")
    out = np.full((n_samples, 3), -1, dtype=np.int64)
    for i, facts in enumerate(supporting):
        if isinstance(facts, (str, bytes)) or not hasattr(facts, "__iter__"):
            raise TypeError(
                f"{name}[{i}] must be a sequence of ints (positions into the history of "
                f"X[{i}]), got {type(facts).__name__} ({facts!r:.60}); {name} holds one "
                f"sequence per context, e.g. [(0,), (2, 1)]."
            )
        facts = list(facts)
        if not truncate and len(facts) > max_facts:
            raise ValueError(f"{name}[{i}] has more than max_facts={max_facts} facts.")
        for f in facts:
            if isinstance(f, bool) or not isinstance(f, (Integral, np.integer)):
                raise TypeError(f"{name}[{i}] must hold ints, got {f!r}.")
            if not 0 <= f < history_lengths[i]:
                raise ValueError(
                    f"{name}[{i}] = {tuple(facts)} names a fact outside the history of "
                    f"X[{i}], which has {history_lengths[i]} turns."
                )
        if len(set(facts)) != len(facts):
            raise ValueError(f"{name}[{i}] = {tuple(facts)} repeats a fact.")
        kept = facts[-max_facts:] if facts else []
        out[i, : len(kept)] = kept
    return out


def _check_answers(answers) -> list[str]:
    """Answers as a list of str; a single str would be read as its characters."""
    if isinstance(answers, str):
        raise TypeError(
            f"answers must be a sequence of str, got a single str ({answers!r:.60}); "
            "wrap it in a list."
        )
    answers = list(answers)
    for i, a in enumerate(answers):
        if not isinstance(a, str):
            raise TypeError(f"answers[{i}] must be a str, got {type(a).__name__} ({a!r:.60}).")
    return answers


class PairwiseFeaturizer(BaseEstimator):
    """Hashed indicator features of a question and a tuple of its story's facts.

    The joint feature vector of a question x and an ordered tuple o = (o1, o2, o3) of facts
    (or empty slots) is the sum of pairwise feature vectors: g_k(x, f_ok) for each slot k and
    g_kl(f_ok, f_ol) for each pair of slots, every feature tagged with its slot(s):

    - word pairs: one indicator per (word of one sentence, word of the other), and per
      pair of content words with the fact word's position (between two facts, content
      words only, with both positions);
    - pair distance and order: the number of facts between the two sentences, signed, in
      buckets (exact up to 8, then one per doubling); for the question, how far back the
      fact is;
    - shared content words: their identity, their positions in both sentences (a word
      repeated in the other sentence counts at its first position there), counted from the
      starts and again from the ends, their count (where a name of two words, as a Hindi
      place name, shifts the words after it, the positions from the end stay put);
    - recency of a shared content word w: for each word t of the fact, how many *later*
      facts of the story hold both w and t (0, 1, 2, 3+), and, between two facts, whether
      a fact in between holds both; so "the last fact about Mary with *to* in it" is one
      learned feature, in any language;
    - the empty fact: one indicator per slot (pair).

    Content words are the words that are not stopwords; stopwords are learned from the
    training sentences by document frequency, never from a word list. A separate set of
    words is learned for the search's pruning: the words that do not *link* two sentences
    (see ``link_df``).

    Parameters
    ----------
    n_features : int, default=2**20
        The number of hashed feature indices (the length of the weight vectors).
    max_df : float in (0, 1], default=0.5
        Stopwords are the words occurring in more than this fraction of the distinct
        training sentences (stories' facts and questions).
    link_df : "auto" or float in (0, 1], default="auto"
        Words occurring in more than this fraction of the sentences do not link two
        sentences in the search's pruning. ``"auto"`` with supporting facts:
        taking the words most frequent first (down to 1% of the sentences), every word that
        can stop linking while the supporting facts of at least 99.5% of the training
        questions stay chained to their question (each fact sharing a linking word with the
        question or with an earlier supporting fact); without supporting facts,
        ``max_df``.
    max_facts : {1, 2, 3}, default=3
        The number of slots of a tuple.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (for scripts without spaces), or a callable from str to a list of str.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Word -> id, in order of first appearance in the training sentences and answers.
    document_frequency_ : ndarray of float
        The fraction of distinct training sentences holding each word, by id.
    stopwords_ : list of str
        The learned stopwords, most frequent first.
    nonlinking_ : list of str
        The words that link no sentences in the pruning, most frequent first (not
        necessarily the stopwords: a frequent word may be the only link of two facts).
    case_folding_ : dict of str to str
        Capitals lower-cased otherwise than by ``str.lower``, learned from the training texts
        (:func:`irdialog.text.learn_case_folding`; empty for natural languages).

    See Also
    --------
    StructuredSVMQA : the structured SVM that scores these features.

    References
    ----------
    Weston et al. (2016). Towards AI-Complete Question Answering: A Set of Prerequisite Toy
    Tasks. ICLR. Appendix B (the structured SVM's pairwise features).

    Examples
    --------
    >>> from irdialog.base import Context, Turn
    >>> from irdialog.svm import PairwiseFeaturizer
    >>> facts = ["Mary went to the kitchen.", "John went to the garden.", "Mary got the milk."]
    >>> story = Context(history=tuple(Turn("kb", f) for f in facts), query="Where is the milk?")
    >>> feat = PairwiseFeaturizer(n_features=2**16, max_df=0.5).fit([story])
    >>> feat.stopwords_  # in more than half of the 4 sentences
    ['the', '.']
    >>> psi = feat.transform([story, story], [(2,), (2, 0)])  # Psi(x, o) for two tuples
    >>> psi.shape, bool(psi[1].sum() > psi[0].sum())
    ((2, 65536), True)
    """

    _parameter_constraints = {
        "n_features": [Interval(Integral, 1, _kernels.MAX_FEATURES, closed="both")],
        "max_df": [Interval(Real, 0, 1, closed="right")],
        "link_df": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="right")],
        "max_facts": [Interval(Integral, 1, 3, closed="both")],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    }

    def __init__(
        self,
        *,
        n_features=2**20,
        max_df=0.5,
        link_df="auto",
        max_facts=3,
        tokenizer="word",
    ):
        self.n_features = n_features
        self.max_df = max_df
        self.link_df = link_df
        self.max_facts = max_facts
        self.tokenizer = tokenizer

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, supporting=None, answers=()):
        """Learn the vocabulary and the stopwords.

        Parameters
        ----------
        X : sequence of Context or str
        supporting : sequence of sequences of int, default=None
            The supporting facts of each question (positions in its history); only used
            by ``link_df="auto"``.
        answers : sequence of str, default=()
            Answers whose words join the vocabulary (so that unseen-in-story answers are
            known words).

        Returns
        -------
        self : PairwiseFeaturizer
        """
        X = check_contexts(X)
        answers = _check_answers(answers)
        gold = None
        if self.link_df == "auto" and supporting is not None:  # only "auto" uses them
            gold = gold_tuples(supporting, len(X), self.max_facts, [len(c.history) for c in X])
        return self._fit(X, gold, answers)

    def _fit(self, X, gold, answers):
        """:meth:`fit` on checked contexts and answers, with the supporting facts already
        as :func:`gold_tuples` (or None), which :class:`StructuredSVMQA` computes once."""
        self.case_folding_ = learn_case_folding(context_texts(X, answers))
        analyzer = Analyzer(tokenizer=self.tokenizer, case_folding=self.case_folding_)
        tokens_of = analyzer.tokens
        texts = dict.fromkeys(s for ctx in X for s in (*(t.text for t in ctx.history), ctx.query))
        vocab: dict[str, int] = {}
        counts: list[int] = []
        for text in texts:
            toks = tokens_of(text)
            for tok in toks:
                if tok not in vocab:
                    vocab[tok] = len(vocab)
                    counts.append(0)
            for tok in set(toks):
                counts[vocab[tok]] += 1
        for ans in answers:
            for tok in answer_parts(ans, analyzer):
                if tok not in vocab:
                    vocab[tok] = len(vocab)
                    counts.append(0)
        self.vocabulary_ = vocab
        self.document_frequency_ = np.asarray(counts, dtype=np.float64) / max(len(texts), 1)
        # Most frequent first; ties in first-appearance order (a stable sort).
        by_df = np.argsort(-self.document_frequency_, kind="stable")
        words = list(vocab)
        n_stop = int(np.sum(self.document_frequency_ > self.max_df))
        stop = [int(i) for i in by_df[:n_stop]]
        if self.link_df == "auto" and gold is not None:
            nonlinking = self._learn_nonlinking(X, gold, by_df, tokens_of)
        else:
            limit = self.max_df if self.link_df == "auto" else self.link_df
            nonlinking = [int(i) for i in by_df if self.document_frequency_[i] > limit]
        nonlinking = set(nonlinking)
        self.stopwords_ = [words[i] for i in stop]
        self.nonlinking_ = [words[i] for i in by_df if int(i) in nonlinking]
        return self

    def _learn_nonlinking(self, X, gold, by_df, tokens_of) -> list[int]:
        """Greedily, most frequent first, the words that can stop linking sentences while
        the supporting facts of 99.5% of the training questions stay chained to their
        question (each fact sharing a linking word with the question or an earlier one)."""
        vocab = self.vocabulary_
        questions = []
        for ctx, g in zip(X, gold):
            facts = [f for f in g if f >= 0]
            if facts:
                sets = [tokens_of(ctx.query)] + [tokens_of(ctx.history[f].text) for f in facts]
                questions.append([{vocab[t] for t in s} for s in sets])
        chosen: set[int] = set()
        if not questions:
            return sorted(chosen)
        by_word: dict[int, list[int]] = {}
        for qi, sets in enumerate(questions):
            for word in set().union(*sets):
                by_word.setdefault(word, []).append(qi)
        ok = [_chained(sets) for sets in questions]
        lost = len(questions) - sum(ok)  # questions whose facts never chain
        allowed = lost + int(REACH_TOLERANCE * len(questions))
        for word in by_df:
            word = int(word)
            if self.document_frequency_[word] < MIN_NONLINKING_DF:
                break
            if word in chosen:
                continue
            chosen.add(word)
            changed = [
                qi
                for qi in by_word.get(word, ())
                if ok[qi] and not _chained([s - chosen for s in questions[qi]])
            ]
            if lost + len(changed) > allowed:
                chosen.discard(word)
                continue
            lost += len(changed)
            for qi in changed:
                ok[qi] = False
        return sorted(chosen)

    # ------------------------------------------------------------------ encoding

    def encode(self, X, answers=()) -> StoryBatch:
        """Pack contexts (and candidate answers) for the kernels.

        Words unseen in ``fit`` get fresh ids, shared within the batch, so that they still
        match each other; they are content and linking words. Sentences are cut to their
        first 48 tokens. The batch carries this featurizer's ``n_features`` and
        ``max_facts``, the feature space the kernels hash it into.

        Returns
        -------
        batch : StoryBatch
            The record of :mod:`irdialog.svm._kernels`.
        """
        check_is_fitted(self)
        X = check_contexts(X)
        answers = _check_answers(answers)
        vocab = self.vocabulary_
        n_known = len(vocab)
        extra: dict[str, int] = {}

        def ids(tokens):
            out = []
            for t in tokens:
                i = vocab.get(t)
                if i is None:
                    i = extra.setdefault(t, n_known + len(extra))
                out.append(i)
            return out

        analyzer = Analyzer(tokenizer=self.tokenizer, case_folding=self.case_folding_)
        tokens_of = analyzer.tokens
        cache: dict[str, list[int]] = {}

        def sentence_ids(text):
            got = cache.get(text)
            if got is None:
                got = cache[text] = ids(tokens_of(text)[:MAX_SENTENCE_TOKENS])
            return got

        tok: list[int] = []
        lengths: list[int] = []
        qsent = [0]
        for ctx in X:
            for turn in ctx.history:
                s = sentence_ids(turn.text)
                tok.extend(s)
                lengths.append(len(s))
            s = sentence_ids(ctx.query)
            tok.extend(s)
            lengths.append(len(s))
            qsent.append(len(lengths))
        answer_tok: list[int] = []
        answer_ptr = [0]
        for ans in answers:
            answer_tok.extend(ids(answer_parts(ans, analyzer)))
            answer_ptr.append(len(answer_tok))
        lengths_arr = np.asarray(lengths, dtype=np.int64)
        sent = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths_arr, out=sent[1:])
        qsent_arr = np.asarray(qsent, dtype=np.int64)
        # Story statistics for fact sentences only (a question's sentence gets none).
        is_fact = np.ones(len(lengths), dtype=bool)
        is_fact[qsent_arr[1:] - 1] = False
        sizes = np.where(is_fact, lengths_arr**2, 0)
        stat_ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(sizes, out=stat_ptr[1:])
        n_ids = max(n_known + len(extra), 1)
        content = np.ones(n_ids, dtype=np.bool_)
        content[np.asarray([vocab[w] for w in self.stopwords_], dtype=np.int64)] = False
        link = np.ones(n_ids, dtype=np.bool_)
        link[np.asarray([vocab[w] for w in self.nonlinking_], dtype=np.int64)] = False
        batch = StoryBatch(
            tok=np.asarray(tok, dtype=np.int64),
            sent=sent,
            qsent=qsent_arr,
            later=np.zeros(stat_ptr[-1], dtype=np.int32),
            near=np.zeros(2 * stat_ptr[-1], dtype=np.int32),
            stat_ptr=stat_ptr,
            content=content,
            link=link,
            n_known=n_known,
            answer_tok=np.asarray(answer_tok, dtype=np.int64),
            answer_ptr=np.asarray(answer_ptr, dtype=np.int64),
            n_features=int(self.n_features),
            max_facts=int(self.max_facts),
        )
        _kernels.batch_story_stats(batch)  # fills later and near
        return batch

    def transform(self, X, tuples) -> sp.csr_matrix:
        """The joint feature vectors Psi(x, o) of each context and its tuple of facts.

        Parameters
        ----------
        X : sequence of Context or str
        tuples : sequence of sequences of int
            For each context, up to ``max_facts`` distinct positions into its history (the
            slots in order; missing slots are the empty fact).

        Returns
        -------
        Psi : sparse matrix of shape (n_samples, n_features)
            Feature counts (float64).
        """
        check_is_fitted(self)
        X = check_contexts(X)
        lengths = [len(c.history) for c in X]
        o = gold_tuples(tuples, len(X), self.max_facts, lengths, name="tuples", truncate=False)
        batch = self.encode(X)
        buf = np.empty(_kernels.feature_buffer_size(batch), dtype=np.int64)
        indptr, indices = _kernels.batch_tuple_features(o, batch, buf)
        data = np.ones(len(indices), dtype=np.float64)
        psi = sp.csr_matrix((data, indices, indptr), shape=(len(X), self.n_features))
        psi.sum_duplicates()
        return psi


def _chained(sets) -> bool:
    """Does each token set after the first (the question) share a token with an earlier
    one?"""
    return all(any(sets[k] & sets[j] for j in range(k)) for k in range(1, len(sets)))
