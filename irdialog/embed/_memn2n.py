"""End-to-end memory network ranker (MemN2N) with hand-written numba forward/backward passes.

The model of Sukhbaatar et al. (2015) as used for goal-oriented dialog by Bordes, Boureau &
Weston (2017, section 4.4 and appendix A; match-type features in section 4.5) and for bAbI
QA: the history is a memory of bags of words (each with a speaker word and a time word),
the query is embedded, ``hops`` rounds of softmax attention read the memory, and each
candidate response is scored against the final controller state through its own
bag-of-words embedding. The kernels are in :mod:`irdialog.embed._memn2n_kernels`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from .._threads import n_threads, numba_threads, threads_for_work
from ..base import (
    N_JOBS_CONSTRAINT,
    RankerMixin,
    check_contexts,
    inner_product_pairs,
    resolve_candidates,
)
from ..features import match_type_pairs, type_token
from ..text import (
    SPEAKER_TOKENS,
    TOKENIZERS,
    Analyzer,
    EncodedContexts,
    LabelIndex,
    Vocabulary,
    _ragged,
    check_ngram_range,
    context_texts,
    encode_contexts,
    learn_case_folding,
    time_token,
)
from . import _memn2n_kernels as K
from ._attention import turn_attention
from ._memn2n_parallel_kernels import HogwildEpoch, hogwild_epoch, make_threads
from ._negatives import (
    MINED_NEGATIVES,
    bm25_pools,
    check_negative_lists,
    encode_pools,
    sequence_bags,
)
from ._training import (
    TRAINING_CONSTRAINTS,
    GoldFitMixin,
    Run,
    TrainingMixin,
)
from ._word_vectors import WORD_VECTOR_CONSTRAINTS, embedding_start

# cfg[GATE] of each value of the ``gate`` parameter.
_GATES = {None: K.NO_GATE, "global": K.GLOBAL_GATE, "hop": K.HOP_GATES}

# Adam's moment decay rates and epsilon (Kingma & Ba 2015 defaults).
_ADAM_BETAS = (0.9, 0.999)
_ADAM_EPS = 1e-8
# The parameters MemN2NRanker and QRNRanker share, validated alike.
_MEMORY_CONSTRAINTS = {
    "candidates": ["array-like", None],
    "embedding_dim": [Interval(numbers.Integral, 1, None, closed="left")],
    "memory_size": [Interval(numbers.Integral, 1, None, closed="left")],
    "position_encoding": ["boolean"],
    "drop_punctuation": ["boolean"],
    "ngram_range": [tuple],
    "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
    "match_type": ["boolean"],
    "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
    "anneal_every": [Interval(numbers.Integral, 1, None, closed="left")],
    "anneal_rate": [Interval(numbers.Real, 0, 1, closed="right")],
    "epochs": [Interval(numbers.Integral, 0, None, closed="left")],
    "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
    "max_grad_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "init_std": [Interval(numbers.Real, 0, None, closed="neither")],
    "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
    "n_jobs": N_JOBS_CONSTRAINT,
    **WORD_VECTOR_CONSTRAINTS,
    **TRAINING_CONSTRAINTS,
}


@dataclass(frozen=True, slots=True)
class _Encoded(EncodedContexts):
    """The encoded contexts (:func:`irdialog.text.encode_contexts`) and the time word of
    each memory: the arrays the kernels read (see _memn2n_kernels)."""

    mtime: np.ndarray

    def kernel_args(self, mtime=None):
        """The :class:`~irdialog.embed._memn2n_kernels.Contexts` record the kernels read,
        with the time words ``mtime`` (default: this encoding's)."""
        mtime = self.mtime if mtime is None else mtime
        return K.Contexts(
            self.sptr, self.stok, self.sspk, self.qsent, self.mptr, self.msent, mtime,
            self.eptr, self.eword, self.etype,
        )  # fmt: skip


def _drop_frozen_gradient(dE, frozen):
    """Zero the gradient of the frozen rows (``frozen``: (rows, values) or None) in every
    embedding matrix of ``dE``, before an update: they take no step, and add nothing to
    the clipping norm (but the weight decay QRN's update adds to their gradient)."""
    if frozen is not None:
        dE[:, frozen[0], :] = 0.0


def _restore_frozen(E, frozen):
    """Put the frozen rows back after an update (which weight decay moves them by)."""
    if frozen is not None:
        E[:, frozen[0], :] = frozen[1]


def serial_epoch(batch_step, batch_size):
    """``train_epoch(order, n_steps) -> (loss, correct)``: the mini-batches of
    ``batch_size`` over the examples ``order`` stepped one after another by
    ``batch_step(batch, n_steps)`` (``n_steps`` counting the updates from 1, for Adam's
    bias correction, from the ``n_steps`` before the epoch), their losses and correct
    answers summed."""

    def train_epoch(order, n_steps):
        loss, correct = 0.0, 0
        for start in range(0, len(order), batch_size):
            n_steps += 1
            b_loss, b_correct = batch_step(order[start : start + batch_size], n_steps)
            loss += b_loss
            correct += b_correct
        return loss, correct

    return train_epoch


class _MemoryRanker(GoldFitMixin, TrainingMixin, RankerMixin, BaseEstimator):
    """What the memory rankers on MemN2N's encoding share (:class:`MemN2NRanker` and
    :class:`~irdialog.embed.QRNRanker`): the encoding of texts, candidates and match types,
    the scoring of the final states against the candidates' embeddings, and the fit around
    the model's kernels (one epoch: a shuffle, then mini-batches of ``batch_size``).

    A model supplies its kernels' side: ``_weight_attrs``, the fitted attributes of its
    weights in the order its kernels take them; ``_desc``, the name of its progress bar;
    ``_w_mat``, the embedding matrix of the candidates; ``_init_weights(rng)``, new
    weights, the word embeddings first (n_matrices, n_words, embedding_dim), which
    ``initial_embeddings`` then overwrites; ``_epoch_steps(weights, data, y, rng,
    batch_threads, frozen)``, the training steps of a run, which hold the ``frozen`` rows
    (rows, values) of the word embeddings with :func:`_drop_frozen_gradient` and
    :func:`_restore_frozen`; and
    ``_states(weights, data, rows)``, the final states the candidates are scored against.
    The fit reads the parameters both models take, and ``linear_start`` (a model without
    linear start sets it to 0). A model whose ``_epoch_steps`` can share out a mini-batch
    among the fit's threads (its ``batch_threads`` argument) sets ``_batch_parts``.
    """

    _batch_parts = False

    # ------------------------------------------------------------------ encoding

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or scoring call, so each text is tokenised once."""
        return Analyzer(
            tokenizer=self.tokenizer,
            drop_punctuation=self.drop_punctuation,
            ngram_range=check_ngram_range(self.ngram_range),
            case_folding=self.case_folding_,
        )

    def _encode(self, X, analyzer=None) -> _Encoded:
        """Sentences (deduplicated), queries, memories, time words and entities of X."""
        index = self.vocabulary_.index_
        enc = encode_contexts(
            X,
            (analyzer or self._analyzer()).sequence,
            index,
            unknown="nil",  # unknown words stay as nil (index 0) so word positions are kept
            max_history=self.memory_size,
            speakers={s: index[tok] for s, tok in SPEAKER_TOKENS.items()},
            entity_types=self.types_,
            entity_words=self._cand_word_index_,
        )
        mptr = enc.mptr
        if self.temporal_encoding:
            # age of memory i of n (oldest first) is n - 1 - i
            ages = np.repeat(mptr[1:] - 1, np.diff(mptr)) - np.arange(mptr[-1])
            mtime = (self._time_base_ + ages).astype(np.int32)
        else:
            mtime = np.zeros(mptr[-1], dtype=np.int32)
        return _Encoded(**{f.name: getattr(enc, f.name) for f in fields(enc)}, mtime=mtime)

    _extra_tokens: tuple[str, ...] = ()  # a model's own special words (QRN: its start word)

    def _build_vocabulary(self, X, y, analyzer):
        extra = list(SPEAKER_TOKENS.values()) + list(self._extra_tokens)
        if self.temporal_encoding:
            extra += [time_token(a) for a in range(self.memory_size)]
        extra += [type_token(t) for t in self.types_]
        texts = {t.text for ctx in X for t in ctx.history}
        texts.update(ctx.query for ctx in X)
        tokens = {t: analyzer.sequence(t) for t in sorted(texts)}
        # J of the position encoding: the longest training sentence, plus one as in the
        # authors' code (where the time word takes the last position)
        self.sentence_length_ = 1 + max(len(t) for t in tokens.values())
        outputs = set(y) | (set(self.candidates_) if self.candidate_words else set())
        tokens.update((t, analyzer.sequence(t)) for t in sorted(outputs - texts))
        self.vocabulary_ = Vocabulary(extra_tokens=extra).fit(tokens.values())
        index = self.vocabulary_.index_
        self._time_base_ = index[time_token(0)] if self.temporal_encoding else 0
        self._type_tok_ = np.asarray([index[type_token(t)] for t in self.types_], dtype=np.int32)

    def _build_candidates(self, analyzer):
        arrays = self._candidate_arrays(self.candidates_, analyzer)
        self._cand_ptr_, self._cand_tok_, self._cand_w_ = arrays[:3]
        self._cand_word_index_, self._inv_ptr_, self._inv_cand_ = arrays[3:]

    def _candidate_arrays(self, texts, analyzer):
        """The candidate arrays of the response ``texts``: their bags over the vocabulary
        (indptr, word ids, counts), and every word of theirs (seen in training or not)
        for match types with the inverted index the kernels walk (word -> id, indptr,
        response rows)."""
        index = self.vocabulary_.index_
        cand_tokens = [analyzer.sequence(c) for c in texts]
        bags, weights = [], []
        for toks in cand_tokens:
            counts: dict[int, int] = {}
            for t in toks:
                v = index.get(t)
                if v is not None:
                    counts[v] = counts.get(v, 0) + 1
            bags.append(list(counts))
            weights.append(list(counts.values()))
        cand_ptr, cand_tok = _ragged(bags)
        cand_w = np.fromiter(
            (w for ws in weights for w in ws), dtype=np.float32, count=len(cand_tok)
        )
        # Every candidate word (seen in training or not) for match types: candidate lists
        # per word, the inverted index the kernels walk.
        word_index: dict[str, int] = {}
        postings: list[list[int]] = []
        for j, toks in enumerate(cand_tokens):
            for t in dict.fromkeys(toks):
                v = word_index.setdefault(t, len(postings))
                if v == len(postings):
                    postings.append([])
                postings[v].append(j)
        return (cand_ptr, cand_tok, cand_w, word_index, *_ragged(postings))

    # ------------------------------------------------------------------ training

    def _schedule(self, epoch):
        """(learning rate, softmax on) of an epoch counted from 0, linear start first."""
        if epoch < self.linear_start:
            return self.learning_rate / 2.0, False
        main = epoch - self.linear_start
        return self.learning_rate * self.anneal_rate ** (main // self.anneal_every), True

    def _evaluate(self, weights, data: _Encoded, y, rows):
        """(mean loss, accuracy) on the examples ``rows``, in blocks of contexts."""
        if len(rows) == 0:
            return 0.0, 0.0
        loss = 0.0
        correct = 0
        C = self._candidate_matrix(weights[0])
        for start in range(0, len(rows), self._block_size):
            block = rows[start : start + self._block_size]
            scores = self._scores(weights, data, block, C)
            logz = logsumexp(scores, axis=1)
            target = y[block]
            loss += float(np.sum(logz - scores[np.arange(len(block)), target]))
            correct += int(np.sum(scores.argmax(axis=1) == target))
        return loss / len(rows), correct / len(rows)

    def _start_run(
        self,
        data,
        y,
        train_rows,
        val_rows,
        seed,
        continuing,
        batch_threads=1,
        pretrained=None,
        pools=None,
    ):
        """One run (restart) from the seed ``seed``, or from the fitted weights when
        ``continuing``: the :class:`~irdialog.embed._training.Run` the training core
        drives. ``batch_threads``: how many threads may share out each mini-batch;
        ``pretrained``: the (rows, vectors) of ``initial_embeddings``, or None; ``pools``:
        the training softmax's (candidate arrays, pools, candidates) of
        :meth:`_training_pools`, or None."""
        rng = np.random.default_rng(seed)
        if continuing:
            weights = tuple(getattr(self, attr).copy() for attr in self._weight_attrs)
        else:
            weights = self._init_weights(rng)
            if pretrained is not None:
                weights[0][:, pretrained[0], :] = pretrained[1]
        frozen = None
        if self.freeze_embeddings:
            frozen = (pretrained[0], weights[0][:, pretrained[0], :].copy())
        y64 = y.astype(np.int64)
        if pools is None:
            epoch_steps = self._epoch_steps(weights, data, y64, rng, batch_threads, frozen)
        else:  # the models with hard negatives (MemN2N)
            epoch_steps = self._epoch_steps(
                weights, data, y64, rng, batch_threads, frozen, pools=pools
            )
        accs = []
        n_steps = 0  # updates so far, for Adam's bias correction

        def step(epoch):
            nonlocal n_steps
            order = rng.permutation(train_rows)
            loss, correct = epoch_steps(epoch)(order, n_steps)
            n_steps += -(-len(order) // self.batch_size)
            accs.append(correct / len(order))
            return loss / len(order), {"acc": f"{accs[-1]:.3f}"}

        def validate():
            vloss, vacc = self._evaluate(weights, data, y64, val_rows)
            return vacc, -vloss  # accuracy, ties broken by the lower loss

        def train_key(kept):  # restarts compared on a clean pass over the training set
            tloss, tacc = self._evaluate(kept, data, y64, train_rows)
            return tacc, -tloss

        return Run(
            step,
            weights=lambda: weights,
            snapshot=lambda: tuple(w.copy() for w in weights),
            validate=validate if len(val_rows) else None,
            curves={"train_accuracy_curve_": accs},
            train_key=train_key,
        )

    def _fit(self, fit, negative_lists=None):
        self._fit_weights(fit, negative_lists)
        return self

    def _fit_weights(self, fit, negative_lists=None):
        """The fit of :meth:`_fit`; returns the (rows, vectors) of ``initial_embeddings``
        (None without)."""
        X, y, continuing, incremental = fit.X, fit.y, fit.continuing, fit.incremental
        # every text of the fit is tokenised once, by this analyzer
        analyzer = self._analyzer() if continuing else self._learn_encoding(X, y)
        y_idx = LabelIndex(self.candidates_).encode(
            y,
            unknown="error",
            hint=f"{self._training_name} is trained to pick the gold response from the candidates.",
        )
        data = self._encode(X, analyzer)
        pretrained = embedding_start(self, self.vocabulary_.index_)
        pools = self._training_pools(X, y, data, y_idx, analyzer, negative_lists)

        train_rows, val_rows = self._split_rows(len(X), fit)
        n_runs = fit.runs(self.n_init)
        seeds = fit.seeds(n_runs)
        done = self.n_iter_ if continuing else 0
        n_epochs = 1 if incremental else max(self.linear_start - done, 0) + self.epochs
        # The per-batch products (batch x dim x n_candidates) are too small for threads to
        # pay: one BLAS thread is faster, by far on a busy machine (0.23 s instead of 4.6 s
        # per dialog bAbI task 1 epoch with two threads at load 5), and keeps the result
        # independent of the machine's thread count.
        n_jobs = n_threads(self.n_jobs)
        # Several restarts share out the threads (each run as alone); a single run shares
        # out each of its mini-batches, where the model can.
        batch_threads = n_jobs if n_runs == 1 and self._batch_parts else 1
        kept = self._train_epochs(
            lambda k: self._start_run(
                data,
                y_idx,
                train_rows,
                val_rows,
                seeds[k],
                continuing,
                batch_threads,
                pretrained,
                pools,
            ),
            n_epochs,
            continuing=continuing,
            desc=self._desc,
            advice=f"learning_rate (now {self.learning_rate}) or max_grad_norm",
            n_runs=n_runs,
            validate_from=self.linear_start,  # the epochs with the attention softmax
            blas_threads=1,
            n_jobs=n_jobs,
        )
        for attr, value in zip(self._weight_attrs, kept):
            setattr(self, attr, value)
        return pretrained

    def _training_pools(self, X, y, data, gold, analyzer, negative_lists):
        """What the training softmax of hard negatives reads, from ``negative_lists``
        or the model's ``negatives``: the candidate arrays
        (:class:`~irdialog.embed._memn2n_kernels.Candidates`) of the candidates and then
        the pools' responses outside them, the pools as rows of those arrays
        (:class:`~irdialog.embed._negatives.Pools`) and the number of candidates; None
        without pools (a model without ``negatives`` has none)."""
        negatives = getattr(self, "negatives", "random")
        if callable(negatives):
            negative_lists = negatives(X, y)
        n_cand = len(self.candidates_)
        if negative_lists is not None:
            labels = LabelIndex(self.candidates_)
            pools = encode_pools(negative_lists, labels, gold)
            if len(labels.labels_) == n_cand:
                # every pool empty: the full softmax of the fit without pools, bit for bit
                return (self._cand_arrays(), pools, n_cand) if len(pools.indices) else None
            # the candidates' words keep their ids in the inverted index (entities of the
            # contexts are encoded against it); a word of the pools' responses alone
            # gives them no match type
            ptr, tok, w, _, iptr, icand = self._candidate_arrays(labels.labels_, analyzer)
            return K.Candidates(ptr, tok, w, iptr, icand, self._type_tok_), pools, n_cand
        if negatives == "bm25":
            mined = self._mined_pools(data, gold)
            return (self._cand_arrays(), mined, n_cand) if len(mined.indices) else None
        return None

    def _mined_pools(self, data: _Encoded, gold):
        """The pools of ``negatives="bm25"``: per example, the ``MINED_NEGATIVES``
        candidates of highest BM25 score for the words it reads (its query and its
        memories), its gold response left out, over the candidates' bags."""
        n = len(data.qsent)
        sent = np.insert(data.msent, data.mptr[:-1], data.qsent)  # query, then memories
        lengths = np.diff(data.sptr)[sent]
        ends = np.cumsum(lengths)
        take = np.repeat(data.sptr[sent] - (ends - lengths), lengths) + np.arange(ends[-1])
        example = np.repeat(np.arange(n), 1 + np.diff(data.mptr))
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(example, weights=lengths, minlength=n).astype(np.int64), out=ptr[1:])
        n_words = len(self.vocabulary_)
        x_bags = sequence_bags(ptr, data.stok[take], n_words)
        r_bags = sp.csr_matrix(
            (self._cand_w_, self._cand_tok_, self._cand_ptr_),
            shape=(len(self.candidates_), n_words),
        )
        return bm25_pools(x_bags, r_bags, gold, len(self.candidates_), MINED_NEGATIVES)

    def _learn_encoding(self, X, y):
        """The candidates, entity types, case folding, vocabulary and memory of a new
        model, from its training data; returns the analyzer that tokenised them."""
        self.candidates_ = resolve_candidates(self.candidates, y)
        self.types_ = sorted({t for ctx in X for _, t in ctx.entities}) if self.match_type else []
        self.case_folding_ = learn_case_folding(context_texts(X, y))
        analyzer = self._analyzer()
        self._build_vocabulary(X, y, analyzer)
        self._build_candidates(analyzer)
        self.memory_slots_ = min(self.memory_size, max(len(ctx.history) for ctx in X))
        return analyzer

    # ------------------------------------------------------------------ scoring

    def _candidate_matrix(self, E):
        """Float64 candidate embeddings (the same sums as ``_score_pairs``)."""
        bags = sp.csr_matrix(
            (self._cand_w_, self._cand_tok_, self._cand_ptr_),
            shape=(len(self.candidates_), E.shape[1]),
        )
        return np.asarray(bags @ E[self._w_mat].astype(np.float64))

    def _cand_arrays(self):
        return K.Candidates(
            self._cand_ptr_, self._cand_tok_, self._cand_w_, self._inv_ptr_, self._inv_cand_,
            self._type_tok_,
        )  # fmt: skip

    def _scores(self, weights, data: _Encoded, rows, C=None):
        """Float64 scores of the examples ``rows`` under the weights against every
        candidate (whose embeddings ``C``, from :meth:`_candidate_matrix`, are computed
        when not given)."""
        E = weights[0]
        U = self._states(weights, data, rows).astype(np.float64)
        if C is None:
            C = self._candidate_matrix(E)
        scores = U @ C.T
        if len(self.types_):
            mark = np.full(scores.shape[1] * len(self.types_), -1, dtype=np.int64)
            K.add_match_types(
                scores, U, E, self._w_mat, self._type_tok_, data.eptr, data.eword, data.etype,
                self._inv_ptr_, self._inv_cand_, np.asarray(rows, np.int64), mark,
            )  # fmt: skip
        return scores

    def decision_function(self, X) -> np.ndarray:
        """Scores of every candidate for each context.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        data = self._encode(X)
        return self._scores(self._weights, data, np.arange(len(X)))

    def _score_pairs(self, X, responses) -> np.ndarray:
        check_is_fitted(self)
        X = check_contexts(X)
        analyzer = self._analyzer()
        data = self._encode(X, analyzer)
        E = self.embeddings_
        U = self._states(self._weights, data, np.arange(len(X))).astype(np.float64)
        tokens = [analyzer.sequence(r) for r in responses]
        bags = self.vocabulary_.bags(tokens)
        R = np.asarray(bags @ E[self._w_mat].astype(np.float64))
        if len(self.types_):
            # match_type_pairs needs the responses' words, seen in training or not
            words = Vocabulary().fit(tokens)
            matches = match_type_pairs(X, words.bags(tokens), words.index_, self.types_)
            R += matches @ E[self._w_mat, self._type_tok_].astype(np.float64)
        return np.einsum("ij,ij->i", U, R)


class MemN2NRanker(_MemoryRanker):
    """End-to-end memory network ranking candidate responses (MemN2N).

    Each previous turn of the conversation (or each story sentence) is a memory: the
    embedding of its words, plus a speaker word (user, bot, kb) and a time word (its age,
    0 for the most recent turn). The query (the last user utterance, or the question) is
    embedded into the controller state u, which reads the memory ``hops`` times with
    softmax attention. A candidate response scores ``u . (sum of its word embeddings)``;
    training minimises the softmax cross-entropy over all candidates with mini-batch SGD
    (or Adam), gradient-norm clipping and learning-rate annealing. Forward and backward
    passes are hand-written numba kernels. With pools of hard negatives (``negatives``,
    or ``negative_lists`` of :meth:`fit`), an example's softmax runs over its gold
    response and its pool's responses only: a sampled softmax over hard negatives.

    For bAbI QA the candidates are the answers seen in training: an answer such as
    ``"north,west"`` is one token, hence one candidate with its own embedding, exactly the
    answer vocabulary of the original model. By default, candidate words never seen in
    the training contexts or responses are dropped (see ``candidate_words``), so unseen
    entities count only through match-type features.

    With contexts annotated by :class:`~irdialog.features.MatchTypeFeaturizer` (put it
    before the ranker in a ``Pipeline``), a candidate also gets one type word per entity
    type it shares with the conversation (Bordes et al. 2017, section 4.5), which is what
    lets the model use entities it never saw in training.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set (e.g. the 4,212 dialog bAbI candidates). None: the distinct
        responses seen in ``fit``.
    hops : int, default=3
        Rounds of attention over the memory.
    embedding_dim : int, default=32
        Dimension of the word embeddings and of the controller state.
    memory_size : int, default=50
        The most recent turns kept as memories.
    weight_tying : {"adjacent", "layerwise"}, default="adjacent"
        ``"adjacent"``: the output embedding of a hop is the input embedding of the next,
        the query embedding is the first input embedding and the candidate embedding is
        the last output embedding (K + 1 matrices). ``"layerwise"``: one input and one
        output embedding shared by all hops, separate query and candidate embeddings and a
        learnt hop map H, ``u_{k+1} = H u_k + o_k`` (4 matrices and H).
    position_encoding : bool, default=True
        Weight the words of memories and query by their position in the sentence
        (Sukhbaatar et al., section 4.1) instead of a plain bag of words. The weights are
        those of the authors' code, ``l_kj = 1 + 4 (k - (d+1)/2)(j - (J+1)/2) / (d J)``
        with one J (the longest training sentence plus one) for all sentences: about twice
        the paper's ``(1 - j/J) - (k/d)(1 - 2j/J)``, and clearly better on bAbI QA tasks
        13 and 16 than the paper's form with J the sentence's own length.
    pad_memory : bool, default=True
        Give the memory a fixed number of slots, ``memory_size`` or the longest training
        history if shorter; the empty slots take part in the attention softmax as zero
        vectors (score 0), so a hop can attend to nothing. This is how the authors' code
        works, and it matters: bAbI QA tasks 6, 9 and 10 go from about 18% to 8% error.
    drop_punctuation : bool, default=True
        Drop tokens made only of punctuation (Unicode category P, any script), as the
        authors' bAbI code strips ``.`` and ``?``. Inner punctuation stays
        (``"north,west"`` is one word).
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The words of memories, query and candidates: their n-grams for ``min_n <= n <=
        max_n``, in sentence order (:meth:`irdialog.text.Analyzer.sequence`), so that
        position encoding weights each n-gram at its first token's place. ``(1, 2)`` gives
        multi-word names (a two-word place, "the box of chocolates") and the order of
        adjacent words embeddings of their own: the subject and object of a verb-final
        sentence stand next to each other, where the position weights of single words
        barely tell them apart (see benchmarks/NOTES.md, "bAbI QA in other languages").
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    candidate_words : bool, default=False
        Give an embedding to every word of the candidates, not only to the words of the
        training contexts and responses. A candidate word never seen in training then
        keeps a random embedding that training only pushes down; with adjacent tying it is
        also that word's output embedding in memory, which links a memory and a candidate
        holding the same unseen word. But training pushes every unseen word the same way
        (they only ever appear as wrong answers), so they end up alike and the link tells
        them apart only once ``unseen_std`` draws them afresh.
    unseen_std : float or None, default=None
        With ``candidate_words``: after training, the embeddings of the candidate words
        that no training text holds are drawn afresh from a normal distribution of this
        standard deviation, in every matrix. A memory and a candidate holding the same
        unseen word then match (a random vector against itself, about ``unseen_std**2 *
        embedding_dim``) while different unseen words stay nearly orthogonal. On dialog
        bAbI task 4 without match types (where none of the test phone numbers and
        addresses occurs in training) this is what lifts the model over the 56.7% of
        one that ignores unseen words (see benchmarks/NOTES.md). Too large a value swamps the
        trained words' scores; choose it on held-out data. Needs a fit from scratch (not
        ``warm_start`` or ``partial_fit``, whose earlier batches would count as unseen).
    temporal_encoding : bool, default=True
        Add a time word per memory age (section 4.1; the "time features" of Bordes et al.).
    linear_start : int, default=0
        Epochs trained first with the attention softmaxes removed (at half the learning
        rate), before the ``epochs`` epochs with them (section 4.2).
    random_noise : float, default=0.0
        Training-time random empty memories: up to ``ceil(random_noise * n_memories)``
        blank ages are inserted among an example's memories at each epoch, regularising
        the time words (section 4.2, "RN"; 0.1 in the paper).
    nonlinearity : {"relu"} or None, default=None
        Applied to the controller state after each hop.
    gate : {"global", "hop"} or None, default=None
        How a hop updates the controller state. None: ``u_{k+1} = u_k + o_k`` (``H u_k +
        o_k`` with ``"layerwise"`` tying), ``o_k`` the memory read. With a gate, the gated
        end-to-end memory network of Liu & Perez (2017): ``T_k = sigmoid(W_k u_k + b_k)``
        and ``u_{k+1} = o_k * T_k + u_k * (1 - T_k)`` elementwise, so that each dimension
        learns how much of the memory to take in; ``"global"`` shares one gate ``(W, b)``
        by all hops (the paper's best setting on bAbI), ``"hop"`` gives each hop its own.
        The gate replaces the hop map H of ``"layerwise"`` tying.
    match_type : bool, default=True
        Use the entities of annotated contexts as match-type features. Has no effect on
        contexts without ``entities``.
    negatives : {"random", "bm25"} or callable, default="random"
        What the training softmax of an example runs over besides its gold response.
        ``"random"``: every candidate (the full softmax). ``"bm25"``: the example's pool
        of the ``MINED_NEGATIVES`` (100) candidates of highest BM25 score for the words
        of its query and memories (hard negatives: they share its words), mined once per
        fit over the candidates' bags. A callable ``negatives(X, y)``: for each example,
        the responses (str) of its pool; the ``negative_lists`` argument of :meth:`fit`
        gives such pools directly. An example whose pool is empty runs the full softmax.
        With pools, a fit runs on one thread.
    optimizer : {"sgd", "adam", "lazy_adam"}, default="sgd"
        "sgd" and "lazy_adam" update only the embedding rows of each batch's words (and,
        in the answer matrix, the candidates' words); for SGD that is the same step as a
        full update. "lazy_adam" is Adam restricted to those rows (the moments of the
        other rows neither decay nor move them, as in TensorFlow's LazyAdam): with a
        large vocabulary (Movie Dialog) it saves most of the optimizer step, but it is a
        different optimizer from "adam", which updates every row at every step.
    learning_rate : float, default=0.01
        Step size on the loss summed over a mini-batch (as in the reference MemN2N code).
    anneal_every : int, default=25
        Multiply the learning rate by ``anneal_rate`` every this many epochs.
    anneal_rate : float, default=0.5
    epochs : int, default=100
        Epochs with the attention softmax (after the linear-start epochs).
    batch_size : int, default=32
    max_grad_norm : float or None, default=40.0
        Each embedding matrix's gradient (and H's) is rescaled to at most this norm.
    init_std : float, default=0.1
        Standard deviation of the normal initialisation (see Notes).
    initial_embeddings : str, path-like or dict of str to array-like, default=None
        Pretrained word vectors: a word2vec (text or binary), GloVe or fastText ``.vec``
        file or a dict ``{word: vector}``, read in ``fit`` by
        :func:`~irdialog.embed.load_word_vectors` (nothing is downloaded). A word of
        ``vocabulary_`` they hold starts at its vector, unscaled, in every matrix of
        ``embeddings_``; the others start from the normal draws they take without vectors,
        and so do all words with None. Their dimension must be ``embedding_dim``.
    freeze_embeddings : bool, default=False
        Keep the rows of the pretrained words as they are (their gradient is dropped
        before each update); the other rows and weights learn.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the training data, drawn with
        ``random_state`` (whole groups when ``groups`` is passed to ``fit``, else single
        examples), keep the weights of the epoch with the best validation accuracy and
        stop after ``n_iter_no_change`` epochs without improvement.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
        Patience of ``early_stopping``, in validated epochs (the same default as
        :class:`~irdialog.embed.SupervisedEmbeddingRanker`).
    warm_start : bool, default=False
        Let ``fit`` continue from the fitted weights instead of starting anew, for
        ``epochs`` more epochs (the learning-rate schedule goes on from ``n_iter_``; Adam's
        moments start afresh; no restarts). The vocabulary, candidates and memory of the
        first fit stay. The parameters that shape the weights or the encoding (``hops``,
        ``embedding_dim``, ``memory_size``, ``weight_tying``, ``position_encoding``,
        ``pad_memory``, ``drop_punctuation``, ``ngram_range``, ``candidate_words``,
        ``temporal_encoding``, ``match_type``) must not change in between.
    n_init : int, default=1
        Random restarts; the kept model has the lowest validation error with early
        stopping, else the lowest training error (ties: lower loss).
    n_jobs : int or None, default=None
        Threads of the fit (None: one; -1: every core). With ``n_init`` > 1, up to
        ``n_jobs`` restarts train side by side, each the same computation as alone: the
        fitted model is bit-for-bit that of ``n_jobs=1``. With ``n_init=1``, an epoch's
        mini-batches run on the threads at once (thread t takes batches t, t + k, ...),
        each updating the shared weights without locks, Hogwild, as StarSpace and
        fastText train: such a fit does not repeat bit for bit, and lands within the
        spread of the seeds of ``n_jobs=1``. An epoch takes only the threads its work pays
        for: one per 2**20 multiply-adds, estimated per batch as ``batch_size`` x
        ``embedding_dim`` x (3 x the candidates + 4 x ``hops`` x (the words and memories
        of an example)), at most ``n_jobs``, the batches and numba's thread count
        (``NUMBA_NUM_THREADS``); an epoch with less than twice that work runs on one
        thread, exactly as with ``n_jobs=1``. A fit whose softmax runs over pools (hard
        ``negatives``, or ``negative_lists``) trains a single run on one thread.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, shuffling and noise. A given seed gives bit-for-bit the same
        model (training runs with one BLAS thread, whatever the machine).
    verbose : bool, default=False
        Show a progress bar with the training loss and accuracy.

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate responses, the columns of ``decision_function``.
    vocabulary_ : irdialog.text.Vocabulary
        Words of the training contexts and responses, after the nil word, the speaker,
        time and type words.
    types_ : list of str
        Entity types used as match-type features (those seen in the training contexts).
    case_folding_ : dict of str to str
        Capitals lower-cased otherwise than by ``str.lower``, learned from the training texts
        (:func:`irdialog.text.learn_case_folding`; empty for natural languages).
    sentence_length_ : int
        J of the position encoding.
    memory_slots_ : int
        Memory slots (with ``pad_memory``).
    embeddings_ : ndarray of shape (n_matrices, n_words, embedding_dim), float32
        The embedding matrices (see ``weight_tying``); row 0, the nil word, is zero.
    hop_map_ : ndarray of shape (embedding_dim, embedding_dim), float32
        H (``"layerwise"`` without a gate); zeros and unused otherwise.
    gate_weights_ : ndarray of shape (n_gates, embedding_dim, embedding_dim + 1), float32
        The gates ``[W | b]`` (see ``gate``): one, one per hop, or none.
    loss_curve_ : list of float
        Mean training loss per epoch of the kept run.
    train_accuracy_curve_ : list of float
        Training accuracy per epoch (during the epoch's updates).
    validation_scores_ : list of float or None
        Validation accuracy per epoch after linear start (early stopping only).
    best_validation_score_ : float or None
        The best validation accuracy of the last fit (early stopping only).
    n_iter_ : int
        Epochs run by the kept run (over every ``fit`` continued with ``warm_start`` and
        every ``partial_fit``).
    best_epoch_ : int
        The epoch (counted from 1, linear start included) whose weights the model holds:
        the best validated one with early stopping, else the last.

    See Also
    --------
    irdialog.TfidfRanker, irdialog.NearestNeighborRanker

    Notes
    -----
    Training runs the core shared by the gradient-trained models
    (:mod:`irdialog.embed._training`: validation split, early stopping, restarts,
    divergence check, progress bar, thread limit, ``warm_start``, ``partial_fit``, Ctrl-C),
    and they name their parameters alike: the standard deviation of the initialisation is
    ``init_std``, and
    ``n_iter_no_change`` defaults to 10 as in
    :class:`~irdialog.embed.SupervisedEmbeddingRanker`. A ``KeyboardInterrupt`` (Ctrl-C)
    during ``fit`` ends the training with a warning and leaves a fitted model: the weights
    of the best validated epoch, or the last ones.

    References
    ----------
    Sukhbaatar, Szlam, Weston & Fergus (2015). End-To-End Memory Networks. NIPS.
    Bordes, Boureau & Weston (2017). Learning End-to-End Goal-Oriented Dialog. ICLR.
    Section 4.4, appendix A (memory, time and speaker features) and 4.5 (match type).
    Liu & Perez (2017). Gated End-to-End Memory Networks. EACL. Section 3 (the gate).

    Examples
    --------
    >>> from irdialog import Context, MemN2NRanker, Turn
    >>> X = [Context((Turn("kb", "mary went to the kitchen"),
    ...               Turn("kb", "john went to the garden")), "where is mary"),
    ...      Context((Turn("kb", "john went to the kitchen"),
    ...               Turn("kb", "mary went to the garden")), "where is mary")] * 10
    >>> y = ["kitchen", "garden"] * 10
    >>> model = MemN2NRanker(hops=1, embedding_dim=16, epochs=40, random_state=0).fit(X, y)
    >>> model.predict(X[:2]).tolist()
    ['kitchen', 'garden']
    >>> model.attention(X[:1]).shape  # (samples, hops, memory_size), by memory age
    (1, 1, 50)
    >>> [(row.text, round(float(row.weights[0]), 2)) for row in model.attention_turns(X[0])]
    [('mary went to the kitchen', 0.98), ('john went to the garden', 0.02)]
    """

    _batch_parts = True

    _parameter_constraints = {
        **_MEMORY_CONSTRAINTS,
        "hops": [Interval(numbers.Integral, 1, None, closed="left")],
        "weight_tying": [StrOptions({"adjacent", "layerwise"})],
        "pad_memory": ["boolean"],
        "candidate_words": ["boolean"],
        "unseen_std": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "temporal_encoding": ["boolean"],
        "linear_start": [Interval(numbers.Integral, 0, None, closed="left")],
        "random_noise": [Interval(numbers.Real, 0, None, closed="left")],
        "nonlinearity": [StrOptions({"relu"}), None],
        "gate": [StrOptions({"global", "hop"}), None],
        "negatives": [StrOptions({"random", "bm25"}), callable],
        "optimizer": [StrOptions({"sgd", "adam", "lazy_adam"})],
    }
    _warm_start_fixed = (
        "hops", "embedding_dim", "memory_size", "weight_tying", "position_encoding",
        "pad_memory", "drop_punctuation", "ngram_range", "candidate_words",
        "temporal_encoding", "match_type", "gate",
    )  # fmt: skip
    _weight_attrs = ("embeddings_", "hop_map_", "gate_weights_")
    _desc = "MemN2N"

    def __init__(
        self,
        *,
        candidates=None,
        hops=3,
        embedding_dim=32,
        memory_size=50,
        weight_tying="adjacent",
        position_encoding=True,
        pad_memory=True,
        drop_punctuation=True,
        ngram_range=(1, 1),
        tokenizer="word",
        candidate_words=False,
        unseen_std=None,
        temporal_encoding=True,
        linear_start=0,
        random_noise=0.0,
        nonlinearity=None,
        gate=None,
        match_type=True,
        negatives="random",
        optimizer="sgd",
        learning_rate=0.01,
        anneal_every=25,
        anneal_rate=0.5,
        epochs=100,
        batch_size=32,
        max_grad_norm=40.0,
        init_std=0.1,
        initial_embeddings=None,
        freeze_embeddings=False,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        warm_start=False,
        n_init=1,
        n_jobs=None,
        random_state=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.hops = hops
        self.embedding_dim = embedding_dim
        self.memory_size = memory_size
        self.weight_tying = weight_tying
        self.position_encoding = position_encoding
        self.pad_memory = pad_memory
        self.drop_punctuation = drop_punctuation
        self.ngram_range = ngram_range
        self.tokenizer = tokenizer
        self.candidate_words = candidate_words
        self.unseen_std = unseen_std
        self.temporal_encoding = temporal_encoding
        self.linear_start = linear_start
        self.random_noise = random_noise
        self.nonlinearity = nonlinearity
        self.gate = gate
        self.match_type = match_type
        self.negatives = negatives
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.anneal_every = anneal_every
        self.anneal_rate = anneal_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.max_grad_norm = max_grad_norm
        self.init_std = init_std
        self.initial_embeddings = initial_embeddings
        self.freeze_embeddings = freeze_embeddings
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.n_init = n_init
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ encoding

    def _cfg(self, softmax=True):
        cfg, _ = K.make_cfg(
            self.hops,
            self.weight_tying,
            self.sentence_length_ if self.position_encoding else 0,
            softmax,
            self.nonlinearity == "relu",
            self.memory_slots_ if self.pad_memory else 0,
            _GATES[self.gate],
        )
        return cfg

    # ------------------------------------------------------------------ training

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None, *, negative_lists=None):
        """Train on contexts X and their gold responses y.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            Each must be one of ``candidates`` when a fixed candidate set is given.
        groups : array-like of shape (n_samples,), default=None
            Dialog or story ids: with early stopping, the validation split takes whole
            groups.
        negative_lists : sequence of sequences of str, default=None
            The responses of each example's softmax besides its gold response (an
            answer-selection pool less its right answers; the gold response is skipped
            if present), in place of the pools of ``negatives``. Responses outside
            ``candidates_`` take part too (their words outside the vocabulary dropped),
            never scored as candidates. The validation scores rank every candidate.

        Returns
        -------
        self
        """
        check_negative_lists(self, negative_lists)
        return self._fit_path(X, y, groups=groups, negative_lists=negative_lists)

    def _fit(self, fit, negative_lists=None):
        if self.unseen_std is not None:
            if not self.candidate_words:
                raise ValueError(
                    "unseen_std draws the embeddings of candidate words never seen in "
                    "training: it needs candidate_words=True"
                )
            if fit.continuing or fit.incremental:
                raise ValueError(
                    "unseen_std needs a fit from scratch: with warm_start or partial_fit "
                    "the words of earlier fits would be drawn afresh; set unseen_std=None"
                )
        pretrained = self._fit_weights(fit, negative_lists)
        if self.unseen_std is not None:
            self._draw_unseen_words(fit.X, fit.y, fit.apart, pretrained)
        return self

    def _draw_unseen_words(self, X, y, rs, pretrained=None):
        """Draw the embeddings of the candidate words no training text holds (``unseen_std``),
        but those of ``initial_embeddings`` (``pretrained``: their (rows, vectors))."""
        analyzer = self._analyzer()
        seen = {tok for text in context_texts(X, y) for tok in analyzer.sequence(text)}
        index = self.vocabulary_.index_
        rows = sorted(
            {index[tok] for c in self.candidates_ for tok in analyzer.sequence(c) if tok in index}
            - {index[tok] for tok in seen if tok in index}
            - set(() if pretrained is None else pretrained[0].tolist())
        )
        E = self.embeddings_
        draw = rs.standard_normal((E.shape[0], len(rows), E.shape[2]))
        E[:, rows, :] = (draw * self.unseen_std).astype(np.float32)

    def _init_weights(self, rng):
        """New (E, H, G) drawn from ``rng``."""
        dim = self.embedding_dim
        V = len(self.vocabulary_)
        cfg = self._cfg(True)
        n_mat = K.make_cfg(self.hops, self.weight_tying, 0, True, False, 0)[1]
        n_gates = K.n_gates(cfg)
        E = (rng.standard_normal((n_mat, V, dim)) * self.init_std).astype(np.float32)
        E[:, 0, :] = 0.0
        if cfg[K.USE_H] != 0:
            H = (rng.standard_normal((dim, dim)) * self.init_std).astype(np.float32)
        else:
            H = np.zeros((dim, dim), dtype=np.float32)
        # the gates' weights drawn as the embeddings, their biases zero
        G = np.zeros((n_gates, dim, dim + 1), dtype=np.float32)
        if n_gates:
            W = rng.standard_normal((n_gates, dim, dim)) * self.init_std
            G[:, :, :dim] = W.astype(np.float32)
        return E, H, G

    def _epoch_steps(self, weights, data, y, rng, batch_threads=1, frozen=None, pools=None):
        """The training steps of a run on the weights (E, H, G), updated in place (but the
        ``frozen`` rows of E, see :class:`_MemoryRanker`):
        ``epoch_steps(epoch)`` sets up an epoch (after its shuffle: its learning rate,
        linear start, random noise drawn from ``rng``) and returns ``train_epoch(order,
        n_steps) -> (loss, correct)``, the gradient and update of each mini-batch.

        With ``batch_threads`` above 1, an epoch whose work pays for them
        (:func:`~irdialog._threads.threads_for_work` of :meth:`_batch_work` times its
        batches) runs its batches on that many threads at once, Hogwild
        (:func:`~irdialog.embed._memn2n_parallel_kernels.hogwild_epoch`).

        With ``pools`` (of :meth:`_training_pools`), each example's softmax runs over its
        gold response and its pool (:func:`~irdialog.embed._memn2n_kernels.
        pool_softmax_xent`), on one thread."""
        E, H, G = weights
        cfg_soft, cfg_lin = self._cfg(True), self._cfg(False)
        n_gates = K.n_gates(cfg_soft)
        use_h = cfg_soft[K.USE_H] != 0
        adam = self.optimizer in ("adam", "lazy_adam")
        # SGD moves only rows with a gradient anyway: its row-wise update is the same step.
        lazy = self.optimizer in ("sgd", "lazy_adam")
        w_mat = self._w_mat
        if adam:
            state = K.Moments(*(np.zeros_like(x) for x in (E, E, H, H, G, G)))
        else:
            e3, e2 = np.zeros((0, 0, 0), np.float32), np.zeros((0, 0), np.float32)
            state = K.Moments(e3, e3, e2, e2, e3, e3)
        max_norm = -1.0 if self.max_grad_norm is None else float(self.max_grad_norm)
        counts = np.diff(data.mptr)
        noisy = self.random_noise > 0 and self.temporal_encoding
        cands = self._cand_arrays() if pools is None else pools[0]
        sizes = (
            len(E), len(self.vocabulary_), self.embedding_dim, self.hops, self.batch_size,
            int(counts.max(initial=0)), len(cands.cptr) - 1, len(self.types_),
        )  # fmt: skip
        n_threads = 1
        if batch_threads > 1 and pools is None:  # the threads an epoch's work pays for
            n_batches = -(-len(data.qsent) // self.batch_size)
            n_threads = min(
                threads_for_work(batch_threads, self._batch_work(data) * n_batches), n_batches
            )
        if n_threads > 1:
            threads = make_threads(n_threads, *sizes, np.float32, n_gates)
            if frozen is None:
                frozen_rows = np.zeros(0, np.int64)
                frozen_values = np.zeros((len(E), 0, self.embedding_dim), np.float32)
            else:
                frozen_rows, frozen_values = np.asarray(frozen[0], np.int64), frozen[1]
        else:
            ws = K.Workspace(*sizes, np.float32, lazy, n_gates)
        pooled = () if pools is None else (K.SoftmaxPools(*pools[1], pools[2]),)
        # batch_rows reads the candidates' words as a set: each word once (a table with
        # the pools' responses repeats many)
        words = cands._replace(ctok=np.unique(cands.ctok))

        def epoch_steps(epoch):
            lr, softmax = self._schedule(epoch)
            cfg = cfg_soft if softmax else cfg_lin
            update = K.Update(adam, use_h, n_gates > 0, max_norm, lr, *_ADAM_BETAS, _ADAM_EPS)
            mtime = data.mtime
            if noisy:
                top = np.ceil(counts * self.random_noise).astype(np.int64)
                n_blank = rng.integers(0, top + 1)
                uniforms = rng.random(int((counts + n_blank).sum()))
                mtime = np.empty_like(data.mtime)
                K.random_ages(
                    data.mptr, n_blank, uniforms, self.memory_size, self._time_base_, mtime
                )
            arrays = data.kernel_args(mtime)

            if n_threads > 1:

                def train_epoch(order, n_steps):
                    # at most a thread per batch of the training rows (the bound above
                    # counted the validation rows too)
                    k = min(n_threads, -(-len(order) // self.batch_size))
                    epoch = HogwildEpoch(
                        order, self.batch_size, k, n_steps, lazy, words.ctok, frozen_rows,
                        frozen_values,
                    )  # fmt: skip
                    with numba_threads(k):
                        loss, correct = hogwild_epoch(
                            E, H, G, cfg, arrays, cands, y, threads, state, update, epoch
                        )
                    return float(loss), int(correct)

                return train_epoch

            def batch_step(batch, n_steps):
                if lazy:
                    ws.row_stamp += 2
                    n, n_w = K.batch_rows(
                        arrays, batch, words, ws.row_mark, ws.row_stamp, ws.rows, ws.w_rows
                    )
                    rows, w_rows = ws.rows[:n], ws.w_rows[:n_w]
                b_loss, b_correct = K.batch_loss_grad(
                    E, H, G, cfg, arrays, cands, y, batch, ws, *pooled
                )
                _drop_frozen_gradient(ws.dE, frozen)
                if lazy:
                    K.apply_update_rows(
                        E, H, G, ws.dE, ws.dH, ws.dG, rows, w_rows, w_mat, state, update, n_steps
                    )  # fmt: skip
                else:
                    K.apply_update(E, H, G, ws.dE, ws.dH, ws.dG, state, update, n_steps)
                _restore_frozen(E, frozen)
                return b_loss, b_correct

            return serial_epoch(batch_step, self.batch_size)

        return epoch_steps

    def _batch_work(self, data) -> float:
        """The multiply-adds of a mini-batch, as :meth:`_epoch_steps` estimates them to
        choose its threads: per example, ``embedding_dim`` times three products with each
        candidate (scores, and the gradients of the state and of the candidates) and, for
        each hop and its backward pass, four with each word and memory of the example, at
        their mean counts."""
        n = max(len(data.qsent), 1)
        memories = len(data.msent) / n
        words = (data.sptr[-1] / max(len(data.sptr) - 1, 1)) * (memories + 1)
        per_example = 3 * len(self.candidates_) + 4 * self.hops * (words + memories)
        return self.batch_size * self.embedding_dim * per_example

    # ------------------------------------------------------------------ scoring

    @property
    def _weights(self):
        """The fitted (E, H, G) the kernels read."""
        E, H = self.embeddings_, self.hop_map_
        G = getattr(self, "gate_weights_", None)  # models saved before the gates have none
        if G is None:
            G = np.zeros((0, E.shape[2], E.shape[2] + 1), dtype=E.dtype)
        return E, H, G

    def _states(self, weights, data: _Encoded, rows, attention=None):
        if attention is None:
            attention = np.zeros((0, 0, 0), dtype=np.float32)
        return K.forward_states(
            *weights, self._cfg(True), data.kernel_args(), np.asarray(rows, np.int64), attention
        )

    @property
    def _w_mat(self):
        return int(self._cfg()[K.W_MAT])

    def _pool_embeddings(self, X, pool):
        if len(self.types_):
            return None  # the match-type words depend on the pair
        analyzer = self._analyzer()
        E = self.embeddings_
        states = self._states(self._weights, self._encode(X, analyzer), np.arange(len(X)))
        bags = self.vocabulary_.bags([analyzer.sequence(r) for r in pool])
        return states, bags @ E[self._w_mat]

    def _pair_scorer(self, X, texts):
        # Here, not in _MemoryRanker: MemN2N's state of a context does not depend on the
        # contexts encoded with it, so each distinct context is encoded once; QRN's does
        # (in the last bits), and QRN keeps scoring the pairs.
        if len(self.types_):
            return None  # the match-type words depend on the pair
        analyzer = self._analyzer()
        data = self._encode(X, analyzer)
        U = self._states(self._weights, data, np.arange(len(X))).astype(np.float64)
        bags = self.vocabulary_.bags([analyzer.sequence(r) for r in texts])
        return inner_product_pairs(U, bags @ self.embeddings_[self._w_mat].astype(np.float64))

    def attention(self, X) -> np.ndarray:
        """Per-hop attention weights over the memories, by memory age.

        Returns
        -------
        weights : ndarray of shape (n_samples, hops, memory_size)
            ``weights[i, k, a]`` is the attention of hop k on the memory of age a, the
            turn ``X[i].history[-1 - a]``; zero where the history is shorter.
        """
        check_is_fitted(self)
        X = check_contexts(X)
        data = self._encode(X)
        out = np.zeros((len(X), self.hops, self.memory_size), dtype=np.float32)
        self._states(self._weights, data, np.arange(len(X)), out)
        return out

    def attention_turns(self, context) -> list:
        """The attention of each hop on each turn of one context, in dialog order.

        :meth:`attention` indexed by turn instead of memory age: one row per memory, oldest
        first, as the tables of Bordes et al. (2017, appendix B) print them. KB turns (API
        results, story facts) are memories like the others; turns older than the last
        ``memory_size`` are not in memory and have no row. With ``pad_memory``, a history
        shorter than ``memory_slots_`` leaves empty slots, which take part of the softmax:
        a first row, ``time=None`` and text ``"<empty memory slots>"``, holds their share,
        so that each hop's weights sum to one.

        Parameters
        ----------
        context : Context or str

        Returns
        -------
        rows : list of TurnAttention
            Named tuples ``(time, speaker, text, weights)``: the turn's position in the
            history from 1, its speaker, its text, and its weight for each hop (ndarray of
            shape (hops,)).

        See Also
        --------
        irdialog.plot.plot_attention : these rows as a picture.
        """
        check_is_fitted(self)
        [context] = check_contexts([context], name="context")
        by_age = self.attention([context])[0]
        return turn_attention(
            context,
            by_age,
            n_memories=self.memory_size,
            empty_slots=self.pad_memory and len(context.history) < self.memory_slots_,
        )
