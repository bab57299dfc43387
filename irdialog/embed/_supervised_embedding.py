"""Supervised embeddings: bag-of-words embeddings trained for response ranking by a margin loss.

The model of Bordes, Boureau & Weston (2017, section 4.3) and Dodge et al. (2016, section
3.2): a candidate y is scored against the input x by ``f(x, y) = x^T U^T V y``, the inner
product of the summed word embeddings of both sides, and U, V are trained with the margin
ranking loss ``max(0, m - f(x, y) + f(x, y'))``, averaged over negatives y' sampled from
the candidates, or from a pool per example (hard negatives: mined by BM25, or an
answer-selection corpus's wrong answers). The SGD loop is
:func:`irdialog.embed._kernels.se_sgd_epoch`.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from .._compat import Interval, StrOptions, _fit_context
from .._threads import n_threads, numba_threads, threads_for_work
from ..base import (
    N_JOBS_CONSTRAINT,
    RankerMixin,
    check_contexts,
    inner_product_pairs,
    resolve_candidates,
)
from ..features import match_type_matrices, match_type_pairs, type_token
from ..text import (
    TOKENIZERS,
    Analyzer,
    EncodedContexts,
    LabelIndex,
    Vocabulary,
    check_ngram_range,
    encode_contexts,
)
from . import _hogwild_kernels, _kernels
from ._cooccurrence import ppmi_svd_vectors
from ._negatives import (
    MINED_NEGATIVES,
    bm25_pools,
    check_chunk_negatives,
    check_negative_lists,
    encode_pools,
)
from ._training import (
    TRAINING_CONSTRAINTS,
    VALIDATION_BLOCK,
    ChunkFitMixin,
    GoldFitMixin,
    TrainingMixin,
    aligned_copy,
    table_problem,
    train_tables,
)
from ._word_vectors import WORD_VECTOR_CONSTRAINTS, embedding_start


def _epoch_work(problem, n_examples: int, n_negatives: int) -> float:
    """The multiply-adds of an epoch's scoring over ``n_examples`` examples of the problem,
    as :meth:`SupervisedEmbeddingRanker._run_epoch` estimates it to choose its threads: an
    example embeds its input and scores its gold response and ``n_negatives`` others, at
    the mean bag sizes, ``embedding_dim`` multiply-adds per word."""
    x, r = problem["x"], problem["r"]
    x_words = x.indptr[-1] / max(len(x.indptr) - 1, 1)
    r_words = r.indptr[-1] / max(len(r.indptr) - 1, 1)
    dim = problem["params"].U.shape[1]
    return n_examples * dim * (x_words + (n_negatives + 1) * r_words)


class SupervisedEmbeddingRanker(
    GoldFitMixin, ChunkFitMixin, TrainingMixin, RankerMixin, BaseEstimator
):
    """Supervised embeddings: ``f(x, y) = x^T U^T V y`` trained with a margin ranking loss.

    The input x (the whole conversation, or the last user utterance) and each candidate y
    are bags of words (optionally of n-grams); the model sums their word embeddings,
    U for the input and V for the response (U = V with ``shared_embeddings``), and ranks
    the candidates by inner product. Training visits the examples in a random order each
    epoch and, for each, samples ``n_negatives`` candidates y' (uniformly, with
    replacement, never the gold one) and takes a step on the margin ranking loss
    ``max(0, margin - f(x, y) + f(x, y'))`` averaged over the sampled y' (the average,
    not the sum, so that ``learning_rate`` means the same for any ``n_negatives``). The
    numba kernel is :func:`irdialog.embed._kernels.se_sgd_epoch`.

    Match-type features (section 4.5 of the dialog bAbI paper, Table 10) come in two forms:

    - ``match_type="match"``: with contexts annotated by
      :class:`~irdialog.features.MatchTypeFeaturizer` (put it first in a ``Pipeline``), a
      candidate gets the type word of an entity type when it holds an entity of that type
      that the context mentions (:func:`~irdialog.features.match_type_matrices`), so its
      bag depends on the context. The input gets one type word per entity type it
      mentions: then ``U[type] . V[type]`` can learn "an input about a phone number likes
      a candidate sharing a phone number", which matched words the model has never seen
      (the OOV test sets) can still trigger.
    - ``match_type="type"``: the paper's variant for inputs without history: a candidate
      gets the type word of every ``kb`` entity type among its words, whatever the context
      says, and the input the type words of the ``kb`` entities among its own words. It
      needs ``kb`` (no Pipeline), and bags do not depend on the context.

    Parameters
    ----------
    candidates : sequence of str or None, default=None
        The fixed candidate set (e.g. the dialog bAbI candidate file): the columns of
        ``decision_function`` and the pool negatives are drawn from. None: the distinct
        responses seen in ``fit``.
    embedding_dim : int, default=32
        Dimension of the word embeddings.
    learning_rate : float, default=0.01
        Step size of SGD, or the base step size of Adagrad.
    margin : float, default=0.01
        The margin m of the ranking loss. The defaults of ``learning_rate``, ``margin``
        and ``n_negatives`` are the paper's most frequent choices (Table 8); on dialog
        bAbI, dev sets preferred margins of 0.1-1, and with ``normalize_input`` learning
        rates of 0.1-0.5 (``irdialog bench dialog-babi --model se --search``).
    n_negatives : int, default=100
        Negative candidates sampled per example and epoch.
    negatives : {"random", "bm25"} or callable, default="random"
        Where the negatives are drawn from. ``"random"``: the candidates, uniformly.
        ``"bm25"``: each example's pool of the ``MINED_NEGATIVES`` (100) candidates of
        highest BM25 score for its input (hard negatives: they share its words), mined
        once per fit over the model's own bags of words. A callable ``f(X, y)`` returns,
        for each example, the responses (str) its negatives are drawn from; the
        ``negative_lists`` argument of :meth:`fit` gives such pools directly. An example
        whose pool is empty draws from the candidates.
    epochs : int, default=10
        Passes over the training data (the most, with early stopping). Plain SGD with a
        small constant step needs many: 100-300 on dialog bAbI tasks 1 and 5.
    shared_embeddings : bool, default=False
        One dictionary (U = V) rather than two.
    use_history : bool, default=True
        Input = the whole conversation (history and last utterance concatenated) or the
        last user utterance only.
    normalize_input : bool, default=False
        Scale each input bag of words to unit L2 norm. The ranking of the candidates for
        a given input does not change (all its scores scale alike), but training is
        better conditioned: an SGD step moves the input embedding by the same amount
        whatever the input's length, where with raw counts it grows with the squared
        counts of a long conversation, and large learning rates diverge.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        The n-grams that make the bags; ``(1, 2)`` adds bigrams as in Table 10. N-grams
        never span two utterances.
    tokenizer : {"word", "char"} or callable, default="word"
        How a text is split into tokens (:class:`irdialog.text.Analyzer`): words,
        characters (scripts without spaces; with ``ngram_range``, character n-grams), or
        a callable from str to a list of str.
    match_type : {"match", "type"} or None, default=None
        Match-type features, see above. None: none, even if the contexts are annotated.
    kb : dict of str to str or None, default=None
        Entity word -> entity type, for ``match_type="type"`` (e.g. the ``kb`` of
        :func:`irdialog.datasets.load_dialog_babi` without the ``R_name`` entries for the
        paper's 7 types). Ignored otherwise.
    optimizer : {"sgd", "adagrad"}, default="sgd"
        ``"sgd"``: plain SGD with a constant step, as in the paper. ``"adagrad"``: the
        row-wise Adagrad of StarSpace (Wu et al. 2018): each word row keeps one
        accumulator of its mean squared gradient coordinate, and its step is
        ``learning_rate / sqrt(accumulator)``; robust to the step size and to the number
        of violating negatives, at the cost of a square root per updated row.
    init_std : float, default=0.1
        Standard deviation of the normal initialisation of the embeddings.
    init : {"normal", "ppmi-svd"}, default="normal"
        Where the embeddings start. ``"normal"``: normal draws of standard deviation
        ``init_std``. ``"ppmi-svd"``: the count-based word vectors of the training text
        (:func:`~irdialog.embed._cooccurrence.ppmi_svd_vectors`: the positive PMI of the
        words within 5 positions of each other in the training inputs and in the responses
        the fit knows, candidates and negative pools included, reduced by a truncated SVD to
        ``embedding_dim`` columns and scaled to a root mean square of ``init_std``), the
        same in U and V, so that the model starts by matching words that occur together;
        the words without a vector (and the columns past the vocabulary's size) start from
        normal draws. ``fit`` only (not ``fit_chunks``). With ``initial_embeddings``,
        the words the pretrained vectors hold start from those, the others from these.
    initial_embeddings : str, path-like or dict of str to array-like, default=None
        Pretrained word vectors the embeddings start from: a word2vec (text or binary),
        GloVe or fastText ``.vec`` file, or a dict ``{word: vector}``
        (:func:`~irdialog.embed.load_word_vectors`; read in ``fit``, only the model's
        words kept, nothing downloaded). The words of ``vocabulary_`` the vectors hold
        start at their vectors, as they are (unscaled), in U and in V; the other words
        start as without them (the same random draws). The vectors' dimension must be
        ``embedding_dim``; words are matched as the tokenizer gives them.
    freeze_embeddings : bool, default=False
        Keep the rows taken from ``initial_embeddings``, in U and in V, as they are
        during training; the words the vectors lack (type words included) still learn.
        Exact with either ``optimizer``. The embeddings are this model's only weights:
        with vectors for most of its words, it then learns next to nothing.
    early_stopping : bool, default=False
        Score hits@1 on validation data after each epoch, stop when it has not improved
        for ``n_iter_no_change`` epochs, and keep the parameters of the best epoch. The
        validation data are ``X_val, y_val`` of ``fit`` if given, else
        ``validation_fraction`` of the training examples, drawn with ``random_state``:
        whole dialogs when ``groups`` is passed to ``fit``, else single examples (as
        every gradient-trained model of irdialog; see Notes).
    validation_fraction : float, default=0.1
        See ``early_stopping``.
    n_iter_no_change : int, default=10
        See ``early_stopping``. The default is that of
        :class:`~irdialog.embed.MemN2NRanker` (see Notes).
    warm_start : bool, default=False
        Let ``fit`` continue from the fitted embeddings instead of starting anew, for
        ``epochs`` more epochs (with a fresh Adagrad accumulator). The vocabulary, the
        candidates and the match types of the first fit stay: words they do not know are
        dropped. ``embedding_dim``, ``shared_embeddings``, ``use_history``,
        ``ngram_range`` and ``match_type`` must not change in between.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation, the example order and the negative sampling; a given
        seed gives bit-for-bit identical models on a given machine when training runs on
        one thread (see ``n_jobs``).
    n_jobs : int or None, default=None
        Threads of the training epochs and of the BLAS matrix products that score
        candidates in ``decision_function`` (None: one thread for training and the BLAS
        setting left alone; -1: all cores). With more than one, an epoch's examples are
        cut into one contiguous shard per thread, and the threads step the shared
        embeddings at once without locks (Hogwild, as StarSpace and fastText train): a
        seed then gives a model that lands inside the spread of the seeds of one thread
        but does not repeat bit for bit. An epoch takes only the threads its work pays
        for: one per 2**20 multiply-adds of its scoring (examples x ``embedding_dim`` x
        (words of an input + (``n_negatives`` + 1) x words of a response), at the mean
        bag sizes), at most ``n_jobs`` and numba's thread count (``NUMBA_NUM_THREADS``);
        an epoch with less than twice that work runs on one thread, exactly as with
        ``n_jobs=1`` (about 290 examples of dialog bAbI task 1 at
        ``embedding_dim=32, n_negatives=100``).
    verbose : bool, default=False
        Show a progress bar over epochs with the mean loss (and validation hits@1).

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate responses, the columns of ``decision_function``.
    vocabulary_ : irdialog.text.Vocabulary
        The words (n-grams, type words) of the training inputs and gold responses; other
        words are dropped, so an unknown word contributes nothing.
    types_ : list of str
        Entity types with a type word (empty without match-type features).
    input_embeddings_ : ndarray of shape (n_words, embedding_dim)
        U, one row per word of ``vocabulary_`` (row 0, the nil word, stays zero).
    response_embeddings_ : ndarray of shape (n_words, embedding_dim)
        V; the same array as ``input_embeddings_`` with ``shared_embeddings``.
    candidate_bags_ : sparse matrix of shape (n_candidates, n_words)
        The candidates' bags of words over ``vocabulary_``.
    match_vocabulary_ : dict of str to int
        Column of each candidate word in ``candidate_match_bags_`` (``match_type="match"``;
        column 0 is the nil word of :class:`~irdialog.text.Vocabulary`); empty otherwise.
    candidate_match_bags_ : sparse matrix or None
        0/1 bags of the candidates' words, every word kept, so that entities never seen in
        training still match (``match_type="match"``).
    n_iter_ : int
        Epochs run (over every ``fit`` continued with ``warm_start`` and every
        ``partial_fit``).
    loss_curve_ : list of float
        Mean hinge loss per example of each epoch.
    validation_scores_ : list of float or None
        Validation hits@1 after each validated epoch, when there were validation data.
    best_validation_score_ : float or None
        The best validation score of the last fit.
    best_epoch_ : int
        The epoch (counted from 1, an index into ``loss_curve_`` plus one) whose
        embeddings the model holds: the best validated one with early stopping, else the
        last.

    See Also
    --------
    TfidfRanker : the unlearned matching baseline.
    irdialog.features.MatchTypeFeaturizer : annotates contexts for ``match_type="match"``.

    Notes
    -----
    Training runs the core shared by the gradient-trained models
    (:mod:`irdialog.embed._training`: validation split, early stopping, divergence check,
    progress bar, ``warm_start``, ``partial_fit``, Ctrl-C), and they name their parameters
    alike: the standard deviation of the initialisation is ``init_std``, and
    ``n_iter_no_change`` defaults to 10 as in MemN2N. Without ``X_val`` and ``groups``, early
    stopping draws the held-out examples at random, as the other models do.

    A ``KeyboardInterrupt`` (Ctrl-C) during ``fit`` ends the training with a warning and
    leaves a fitted model: the embeddings of the best validated epoch, or the last ones.
    A loss that is not finite raises ``FloatingPointError``; a last epoch's loss above the
    first's and more than 10 times the smallest warns (``ConvergenceWarning``): the step is
    too large for some rows (match-type words, stepped at every example, are the first), and
    ``learning_rate`` should fall.

    References
    ----------
    Bordes, Boureau & Weston (2017). Learning End-to-End Goal-Oriented Dialog. ICLR.
    Sections 4.3 and 4.5, appendix C (Table 8) and D (Table 10).
    Dodge et al. (2016). Evaluating Prerequisite Qualities for Learning End-to-End Dialog
    Systems. ICLR. Section 3.2 and appendix A (one or two dictionaries).
    Wu et al. (2018). StarSpace: Embed All The Things! AAAI (row-wise Adagrad).

    Examples
    --------
    >>> from irdialog.embed import SupervisedEmbeddingRanker
    >>> X = ["i want italian food", "where is it", "in paris please", "book it"]
    >>> y = ["api_call italian", "it is in paris", "ok paris", "done"]
    >>> model = SupervisedEmbeddingRanker(
    ...     embedding_dim=16, n_negatives=3, epochs=40, learning_rate=0.1, margin=0.5,
    ...     random_state=0).fit(X, y)
    >>> model.predict(["italian food please", "paris please"]).tolist()
    ['api_call italian', 'ok paris']
    >>> model.decision_function(X).shape
    (4, 4)
    """

    _parameter_constraints = {
        "candidates": ["array-like", None],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "n_negatives": [Interval(Integral, 1, None, closed="left")],
        "negatives": [StrOptions({"random", "bm25"}), callable],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "shared_embeddings": ["boolean"],
        "use_history": ["boolean"],
        "normalize_input": ["boolean"],
        "ngram_range": [tuple],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "match_type": [StrOptions({"match", "type"}), None],
        "kb": [dict, None],
        "optimizer": [StrOptions({"sgd", "adagrad"})],
        "init_std": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"normal", "ppmi-svd"})],
        **WORD_VECTOR_CONSTRAINTS,
        **TRAINING_CONSTRAINTS,
        "n_jobs": N_JOBS_CONSTRAINT,
    }
    _warm_start_fixed = (
        "embedding_dim", "shared_embeddings", "use_history", "ngram_range", "match_type",
    )  # fmt: skip
    _split_texts = True  # the vocabulary is the training part's

    def __init__(
        self,
        *,
        candidates=None,
        embedding_dim=32,
        learning_rate=0.01,
        margin=0.01,
        n_negatives=100,
        negatives="random",
        epochs=10,
        shared_embeddings=False,
        use_history=True,
        normalize_input=False,
        ngram_range=(1, 1),
        tokenizer="word",
        match_type=None,
        kb=None,
        optimizer="sgd",
        init_std=0.1,
        init="normal",
        initial_embeddings=None,
        freeze_embeddings=False,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        warm_start=False,
        random_state=None,
        n_jobs=None,
        verbose=False,
    ):
        self.candidates = candidates
        self.embedding_dim = embedding_dim
        self.learning_rate = learning_rate
        self.margin = margin
        self.n_negatives = n_negatives
        self.negatives = negatives
        self.epochs = epochs
        self.shared_embeddings = shared_embeddings
        self.use_history = use_history
        self.normalize_input = normalize_input
        self.ngram_range = ngram_range
        self.tokenizer = tokenizer
        self.match_type = match_type
        self.kb = kb
        self.optimizer = optimizer
        self.init_std = init_std
        self.init = init
        self.initial_embeddings = initial_embeddings
        self.freeze_embeddings = freeze_embeddings
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ encoding

    def _check_params(self):
        check_ngram_range(self.ngram_range)
        if self.match_type == "type" and not self.kb:
            raise ValueError(
                "match_type='type' types candidate words with a knowledge base: pass kb, a "
                "non-empty dict entity -> type."
            )

    def _analyzer(self) -> Analyzer:
        """A fresh analyzer: one per fit or scoring call, so each text is tokenised once.
        Its words are the n-grams of ``ngram_range``, never across two utterances."""
        return Analyzer(tokenizer=self.tokenizer, ngram_range=self.ngram_range)

    def _kb_types(self, text: str, analyzer: Analyzer) -> list[str]:
        # Types of the kb entities among the (unigram) words of a text, in type order.
        kb = self._kb_lower_
        found = {kb[w] for w in analyzer.tokens(text) if w in kb}
        return [t for t in self.types_ if t in found]

    def _texts(self, ctx) -> list[str]:
        """The utterances that make the input: the history (if used) and the query."""
        if not self.use_history:
            return [ctx.query]
        return [t.text for t in ctx.history] + [ctx.query]

    def _input_type_tokens(self, ctx, analyzer: Analyzer) -> list[str]:
        if self.match_type == "match":
            found = {t for _, t in ctx.entities}
        elif self.match_type == "type":
            found = {t for text in self._texts(ctx) for t in self._kb_types(text, analyzer)}
        else:
            return []
        return [type_token(t) for t in self.types_ if t in found]

    def _input_tokens(self, ctx, analyzer=None) -> list[str]:
        """The words of one input (the bag :meth:`_input_bags` counts), type words last."""
        analyzer = analyzer or self._analyzer()
        tokens = [w for text in self._texts(ctx) for w in analyzer.words(text)]
        return tokens + self._input_type_tokens(ctx, analyzer)

    def _response_tokens(self, text: str, analyzer=None) -> list[str]:
        analyzer = analyzer or self._analyzer()
        tokens = list(analyzer.words(text))
        if self.match_type == "type":
            tokens.extend(type_token(t) for t in self._kb_types(text, analyzer))
        return tokens

    def _encode(self, X, analyzer: Analyzer, *, entities: bool = False) -> EncodedContexts:
        """The inputs' utterances over ``vocabulary_`` (unknown words dropped), each distinct
        utterance once; with ``entities``, the typed entities among the candidate words
        (``match_type="match"``)."""
        match = entities and self.match_type == "match"
        return encode_contexts(
            X,
            analyzer.words,
            self.vocabulary_.index_,
            unknown="drop",
            max_history=None if self.use_history else 0,
            entity_types=self.types_ if match else (),
            entity_words=self.match_vocabulary_ if match else None,
        )

    def _bags(self, X, enc: EncodedContexts, analyzer: Analyzer) -> sp.csr_matrix:
        """Input bags of the encoded contexts ``enc`` of X: word counts plus type words."""
        indptr, ids = enc.context_words()
        shape = (len(X), len(self.vocabulary_))
        if self.match_type is None:
            m = sp.csr_matrix((np.ones(len(ids), np.float32), ids, indptr), shape=shape)
        else:  # the type words of each input after its words
            index = self.vocabulary_.index_
            types = [
                [index[t] for t in self._input_type_tokens(ctx, analyzer) if t in index]
                for ctx in X
            ]
            n_types = [len(t) for t in types]
            rows = np.arange(len(X), dtype=np.int64)
            rows = np.concatenate([np.repeat(rows, np.diff(indptr)), np.repeat(rows, n_types)])
            cols = np.concatenate([ids, np.fromiter((v for t in types for v in t), np.int64)])
            m = sp.coo_matrix((np.ones(len(cols), np.float32), (rows, cols)), shape=shape).tocsr()
        return self._finish_input_bags(m)

    def _input_bags(self, X, analyzer=None) -> sp.csr_matrix:
        """Input bags of words over ``vocabulary_`` (counts, unknown words dropped).

        Same as ``vocabulary_.bags([self._input_tokens(c) for c in X])``, but each distinct
        utterance is encoded once: the turns of a dialog recur in all its later contexts.
        """
        analyzer = analyzer or self._analyzer()
        return self._bags(X, self._encode(X, analyzer), analyzer)

    def _finish_input_bags(self, m: sp.csr_matrix) -> sp.csr_matrix:
        """Counts from repeated indices, scaled to unit norm with ``normalize_input``."""
        m.sum_duplicates()
        if self.normalize_input:
            norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1), dtype=np.float64).ravel())
            norms[norms == 0] = 1.0  # empty inputs stay empty
            m.data /= np.repeat(norms, np.diff(m.indptr)).astype(np.float32)
        return m

    def _response_bags(self, responses, analyzer=None) -> sp.csr_matrix:
        analyzer = analyzer or self._analyzer()
        return self.vocabulary_.bags([self._response_tokens(r, analyzer) for r in responses])

    def _type_rows(self) -> np.ndarray:
        """Embedding row of each type word added per context (match_type='match' only)."""
        if self.match_type != "match":
            return np.zeros(0, dtype=np.int64)
        return np.array([self.vocabulary_[type_token(t)] for t in self.types_], dtype=np.int64)

    # ------------------------------------------------------------------ fit

    def _training_problem(self, X, y, rng, analyzer=None, negative_lists=None):
        """Fit the vocabulary and return every array the SGD kernel reads, as a dict.

        Sets ``candidates_``, ``types_``, ``vocabulary_`` and the match-type word index.
        ``analyzer`` (default: a fresh one) tokenises every text of X and y once.
        The benchmarks call this to time the kernel alone.
        """
        self._check_params()
        self.candidates_ = resolve_candidates(self.candidates, y)
        if self.match_type == "match":
            self.types_ = sorted({t for ctx in X for _, t in ctx.entities})
            if not self.types_:
                warnings.warn(
                    "match_type='match' but no training context carries entities: put a "
                    "MatchTypeFeaturizer before the ranker in a Pipeline. Fitting without "
                    "match-type words.",
                    UserWarning,
                    stacklevel=6,
                )
        elif self.match_type == "type":
            self._kb_lower_ = {str(e).lower(): str(t) for e, t in self.kb.items()}
            self.types_ = sorted(set(self._kb_lower_.values()))
        else:
            self.types_ = []
        if len(self.types_) > 62:
            raise ValueError(f"At most 62 entity types are supported, got {len(self.types_)}.")
        # the caller of fit: past fit, _fit_path, _fit, this method and _fit_context's wrapper
        analyzer = analyzer or self._analyzer()
        return self._encoded_problem(
            X, y, rng, analyzer, stacklevel=7, learn=True, negative_lists=negative_lists
        )

    def _encoded_problem(self, X, y, rng, analyzer, stacklevel, learn=False, negative_lists=None):
        """The kernel's arrays of X and y over the candidates and the vocabulary, which
        ``learn`` fits to them first; with ``negative_lists``, each example's pool."""
        # Response table: the candidates, then gold responses outside the candidate set
        # (trained on as positives, never drawn as negatives), then the responses of the
        # negative pools outside both.
        labels = LabelIndex(self.candidates_)
        gold = labels.encode(y, unknown="extend")
        pools = None
        if negative_lists is not None:
            pools = encode_pools(negative_lists, labels, gold)
        table = labels.labels_
        self._warn_without_negatives(gold, stacklevel=stacklevel)

        # The vocabulary: the words of the training inputs (each distinct utterance once)
        # and of the gold responses, then the type words.
        response_tokens = [self._response_tokens(r, analyzer) for r in table]
        init_vectors = None
        if learn:
            texts = dict.fromkeys(text for ctx in X for text in self._texts(ctx))
            self.vocabulary_ = Vocabulary(extra_tokens=[type_token(t) for t in self.types_])
            self.vocabulary_.fit(
                [analyzer.words(text) for text in texts]
                + [response_tokens[g] for g in np.unique(gold)]
            )
            if self.init == "ppmi-svd":
                distinct = dict.fromkeys([*texts, *table])  # each text once
                init_vectors = self._ppmi_svd_vectors(distinct, analyzer, rng)
        r_bags, m_bags = self._response_arrays(table, response_tokens, analyzer)
        enc = self._encode(X, analyzer, entities=True)
        entities = (enc.eptr, enc.eword.astype(np.int64), enc.etype.astype(np.int64))
        return self._problem(
            self._bags(X, enc, analyzer), r_bags, m_bags, gold, rng, entities, pools,
            init_vectors,
        )  # fmt: skip

    def _ppmi_svd_vectors(self, texts, analyzer, rng) -> np.ndarray:
        """The ``init="ppmi-svd"`` vectors of the words of ``vocabulary_``, from the word
        sequences of the distinct ``texts`` (words outside the vocabulary keep their
        place in the window)."""
        index = self.vocabulary_.index_
        sequences = [
            np.array([index.get(w, -1) for w in analyzer.sequence(t)], np.int64) for t in texts
        ]
        seed = int(rng.randint(0, 2**31 - 1))
        return ppmi_svd_vectors(
            sequences, len(self.vocabulary_), self.embedding_dim, scale=self.init_std,
            random_state=seed,
        )  # fmt: skip

    def _warn_without_negatives(self, gold, stacklevel):
        """Warn when examples have no negative to draw: the candidates other than their
        gold response (``gold`` indexes the response table, candidates first)."""
        n_cand = len(self.candidates_)
        no_negative = int(np.count_nonzero(n_cand - (gold < n_cand) == 0))
        if no_negative:
            warnings.warn(
                f"{no_negative} of {len(gold)} training examples have no candidate other than "
                f"their gold response to draw a negative from ({n_cand} candidates): they "
                "train nothing. Pass at least 2 candidates.",
                UserWarning,
                stacklevel=stacklevel + 1,
            )

    def _response_arrays(self, table, response_tokens, analyzer):
        """Bags of the response table (candidates first) over ``vocabulary_``, and 0/1 bags
        of all their words for ``match_type="match"``; sets ``candidate_bags_``,
        ``match_vocabulary_`` and ``candidate_match_bags_``."""
        r_bags = self.vocabulary_.bags(response_tokens)
        self.candidate_bags_ = r_bags[: len(self.candidates_)]
        if self.match_type == "match" and self.types_:
            table_words = [analyzer.tokens(r) for r in table]
            words = Vocabulary().fit(table_words)
            self.match_vocabulary_ = words.index_
            m_bags = words.bags(table_words, binary=True)
            self.candidate_match_bags_ = m_bags[: len(self.candidates_)]
        else:
            self.match_vocabulary_ = {}
            self.candidate_match_bags_ = None
            m_bags = sp.csr_matrix((len(table), 0), dtype=np.float32)
        return r_bags, m_bags

    def _problem(
        self, x_bags, r_bags, m_bags, gold, rng, entities=None, pools=None, init_vectors=None
    ):
        """The kernel's arrays from the input bags, the response table's bags (from
        :meth:`_response_arrays`), the gold indices into the table, the entities
        (indptr, word, type) of the inputs (None without match types), the negative
        pools (None: drawn from the candidates, or mined with ``negatives="bm25"``) and
        the starting vectors of ``init="ppmi-svd"`` (their zero rows: none), over which
        those of ``initial_embeddings`` go, frozen with ``freeze_embeddings``."""
        if entities is None:  # no contexts, no match types: no entities
            empty = np.zeros(0, np.int64)
            entities = np.zeros(x_bags.shape[0] + 1, np.int64), empty, empty
        n_words, dim = len(self.vocabulary_), self.embedding_dim
        starts = []
        if init_vectors is not None:
            rows = np.flatnonzero(np.any(init_vectors != 0, axis=1))
            starts.append((rows, init_vectors[rows].astype(np.float32)))
        pretrained = embedding_start(self, self.vocabulary_.index_)
        if pretrained is not None:
            starts.append(pretrained)

        def table():
            W = rng.normal(0.0, self.init_std, size=(n_words, dim)).astype(np.float32)
            for rows, vectors in starts:
                W[rows, : vectors.shape[1]] = vectors
            W[0] = 0.0  # the nil word
            return aligned_copy(W)

        U = table()
        V = U if self.shared_embeddings else table()
        GU = np.zeros(n_words, dtype=np.float32)
        GV = GU if self.shared_embeddings else np.zeros(n_words, dtype=np.float32)
        if self.freeze_embeddings:  # an infinite accumulator freezes a row (the kernel's rule)
            GU[pretrained[0]] = np.inf
            GV[pretrained[0]] = np.inf
        if pools is None and self.negatives == "bm25":
            pools = bm25_pools(x_bags, r_bags, gold, len(self.candidates_), MINED_NEGATIVES)
        params = _kernels.SEParams(U, V, GU, GV)
        problem = table_problem(
            rng, x_bags, gold, r_bags, len(self.candidates_), entities, m_bags,
            self._type_rows(), len(self.match_vocabulary_),
        )  # fmt: skip
        return dict(pools=pools, params=params, **problem)

    def _run_epoch(self, problem, order, stats):
        """One SGD epoch of :func:`~irdialog.embed._kernels.se_sgd_epoch` over the
        examples ``order`` of the problem of :meth:`_training_problem`; returns the summed
        loss. The benchmarks call this to time the kernel alone."""
        p = problem
        settings = _kernels.SESettings(
            self.n_negatives, self.learning_rate, self.margin, self.optimizer == "adagrad"
        )
        threads = threads_for_work(self.n_jobs, _epoch_work(p, len(order), self.n_negatives))
        if threads > 1:  # Hogwild: one shard of the examples per thread
            with numba_threads(threads):
                return _hogwild_kernels.se_hogwild_epoch(
                    p["params"], p["x"], p["gold"], p["r"], p["n_candidates"], p["matches"],
                    order, settings, p["state"], stats, threads, p.get("pools"),
                )  # fmt: skip
        return _kernels.se_sgd_epoch(
            p["params"], p["x"], p["gold"], p["r"], p["n_candidates"], p["matches"], order,
            settings, p["state"], stats, p.get("pools"),
        )  # fmt: skip

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None, *, X_val=None, y_val=None, negative_lists=None):
        """Learn the embeddings from contexts X and their gold responses y.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
        groups : array-like of shape (n_samples,), default=None
            Dialog or story ids: with early stopping and no ``X_val``, the validation
            split takes whole groups, drawn with ``random_state`` (without groups, single
            examples). Inside ``GridSearchCV``, request it through metadata routing:
            ``set_fit_request(groups=True)``.
        X_val, y_val : sequence of Context or str, sequence of str, default=None
            Validation data (e.g. the dev split): scored after each epoch into
            ``validation_scores_``, and used for early stopping when
            ``early_stopping=True``.
        negative_lists : sequence of sequences of str, default=None
            The responses each example draws its negatives from (an answer-selection
            pool less its right answers; the gold response is skipped if present),
            in place of the pools of ``negatives``. Responses outside ``candidates_``
            are drawn too, never scored as candidates. With ``early_stopping``, pass
            ``X_val``.

        Returns
        -------
        self
        """
        check_negative_lists(self, negative_lists)
        if negative_lists is not None:
            if self.early_stopping and X_val is None:
                raise ValueError(
                    "negative_lists with early_stopping needs X_val and y_val: the "
                    "validation split would separate the pools from their examples."
                )
        return self._fit_path(
            X, y, groups=groups, X_val=X_val, y_val=y_val, negative_lists=negative_lists
        )

    def _fit(self, fit, negative_lists=None):
        X, y, rng = fit.X, fit.y, fit.random_state
        if callable(self.negatives):
            negative_lists = self.negatives(X, y)
        analyzer = self._analyzer()  # every text of the fit is tokenised once, here
        if fit.continuing:  # the vocabulary and candidates of the fitted model
            # the caller of fit: past this method, _fit_path, fit and _fit_context's wrapper
            problem = self._encoded_problem(
                X, y, rng, analyzer, stacklevel=6, negative_lists=negative_lists
            )
            problem["params"].U[...] = self.input_embeddings_
            if not self.shared_embeddings:
                problem["params"].V[...] = self.response_embeddings_
        else:
            problem = self._training_problem(X, y, rng, analyzer, negative_lists)
        val = None
        if fit.X_val is not None:
            val = self._validation_data(fit.X_val, fit.y_val, analyzer)
        n_epochs = 1 if fit.incremental else self.epochs
        return self._train(problem, len(X), rng, val, fit.continuing, n_epochs)

    def _train(self, problem, n_examples, rng, val, continuing, n_epochs):
        """The SGD epochs (with validation and early stopping) and the fitted state: the
        per-epoch step, validation score and weights of the
        :class:`~irdialog.embed._training.Run` the training core drives."""
        stats = np.zeros(2, dtype=np.float64)
        params = problem["params"]

        def step(epoch):
            order = rng.permutation(n_examples).astype(np.int64)
            return self._run_epoch(problem, order, stats) / n_examples, {}

        def validate():
            return self._hits_at_1(params.U, params.V, val), 0.0

        U, V = train_tables(
            self, params, step, validate if val is not None else None,
            n_epochs=n_epochs, continuing=continuing, desc="supervised embeddings",
            advice=f"learning_rate (now {self.learning_rate}) or use optimizer='adagrad'",
        )  # fmt: skip
        # Fitted state as plain (unaligned is fine for scoring) arrays; V is U when shared.
        self.input_embeddings_ = np.ascontiguousarray(U)
        self.response_embeddings_ = (
            self.input_embeddings_ if self.shared_embeddings else np.ascontiguousarray(V)
        )
        return self

    def _chunk_encoder(self):
        """``fit_chunks``'s encoding (:class:`~irdialog.embed._training.ChunkFitMixin`):
        the inputs' words under provisional ids in order of first sight, the responses'
        tokens kept once each; then the vocabulary :meth:`fit` builds, the ids mapped onto
        it, and the pools of ``negatives="bm25"`` mined as :meth:`fit` mines them.
        Match-type features and a callable ``negatives`` need the contexts: fit only."""
        if self.match_type is not None:
            raise ValueError("fit_chunks does not support match_type; use fit.")
        if self.init != "normal":
            raise ValueError(f"fit_chunks does not support init={self.init!r}; use fit.")
        check_chunk_negatives(self)
        self._check_params()
        self.types_ = []
        fixed = None if self.candidates is None else resolve_candidates(self.candidates, None)
        labels = LabelIndex(() if fixed is None else fixed)
        words: dict[str, int] = {}  # word -> provisional id, in order of first sight
        response_tokens: dict[int, list[str]] = {}  # of the responses seen so far

        def encode(X, y):
            # Each distinct text of the chunk is tokenised once (a dialog's turns recur in
            # its later contexts, its responses in its later histories); only the word ids
            # and the tokens of the responses outlive the chunk.
            analyzer = self._analyzer()
            max_history = None if self.use_history else 0
            enc = encode_contexts(X, analyzer.words, words, unknown="add", max_history=max_history)
            indptr, ids = enc.context_words()
            codes = labels.encode(y, unknown="extend")
            for g, response in zip(codes.tolist(), y):
                if g not in response_tokens:
                    response_tokens[g] = self._response_tokens(response, analyzer)
            return indptr, ids, codes

        def finish(indptr, ids, gold, fit):
            table = labels.labels_
            self.candidates_ = np.asarray(table if fixed is None else fixed, dtype=object)
            # The vocabulary fit builds (sorted words), then provisional ids mapped onto it.
            self.vocabulary_ = Vocabulary().fit([list(words), *response_tokens.values()])
            index = self.vocabulary_.index_
            remap = np.array([index[w] for w in words], dtype=np.int64)
            n = len(indptr) - 1
            x_bags = self._finish_input_bags(
                sp.csr_matrix(
                    (np.ones(len(ids), np.float32), remap[ids], indptr),
                    shape=(n, len(self.vocabulary_)),
                )
            )
            # the caller of fit_chunks: past finish, fit_chunks and _fit_context's wrapper
            self._warn_without_negatives(gold, stacklevel=4)
            analyzer = self._analyzer()  # the candidates never seen as a gold response
            tokens = [
                response_tokens[j] if j in response_tokens else self._response_tokens(r, analyzer)
                for j, r in enumerate(table)
            ]
            r_bags, m_bags = self._response_arrays(table, tokens, analyzer)
            rng = fit.random_state
            problem = self._problem(x_bags, r_bags, m_bags, gold, rng)
            return self._train(problem, n, rng, None, False, self.epochs)

        return encode, finish

    # ------------------------------------------------------------------ scoring

    def _matches(self, X):
        """The (context, candidate) pairs that match, as a CSR table (indptr, candidate,
        type) over contexts (match_type='match'), or None."""
        if self.match_type != "match" or not self.types_:
            return None
        mats = match_type_matrices(
            X, self.candidate_match_bags_, self.match_vocabulary_, self.types_
        )
        coos = [m.tocoo() for m in mats]
        rows = np.concatenate([c.row for c in coos]).astype(np.int64)
        cols = np.concatenate([c.col for c in coos]).astype(np.int64)
        types = np.repeat(np.arange(len(coos), dtype=np.int64), [c.nnz for c in coos])
        order = np.argsort(rows, kind="stable")
        indptr = np.zeros(len(X) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(X)), out=indptr[1:])
        return indptr, cols[order], types[order]

    def _scores(self, E_x, C, V, matches) -> np.ndarray:
        """Scores of input embeddings E_x against candidate embeddings C, plus the
        match-type words of ``matches`` (from :meth:`_matches`)."""
        scores = E_x @ C.T
        if matches is not None:
            type_scores = np.ascontiguousarray(E_x @ V[self._type_rows()].T, dtype=scores.dtype)
            _kernels.se_add_match_scores(scores, *matches, type_scores)
        return scores

    def _validation_data(self, X_val, y_val, analyzer):
        """Validation blocks (input bags, matches, gold candidate index), encoded once."""
        gold = LabelIndex(self.candidates_).encode(y_val, name="y_val")  # -1: not a candidate
        x_bags = self._input_bags(X_val, analyzer)
        blocks = []
        for start in range(0, len(X_val), VALIDATION_BLOCK):
            sl = slice(start, start + VALIDATION_BLOCK)
            blocks.append((x_bags[sl], self._matches(X_val[sl]), gold[sl]))
        return blocks

    def _hits_at_1(self, U, V, blocks) -> float:
        C = np.asarray(self.candidate_bags_ @ V, dtype=np.float32)
        hits = n = 0
        for x_bags, matches, gold in blocks:
            scores = self._scores(x_bags @ U, C, V, matches)
            hits += int(np.sum(np.argmax(scores, axis=1) == gold))
            n += len(gold)
        return hits / n

    def _blas_threads(self):
        if self.n_jobs is None:
            return nullcontext()
        return threadpool_limits(limits=n_threads(self.n_jobs), user_api="blas")

    def decision_function(self, X) -> np.ndarray:
        """Score every candidate for each context: ``f(x, y) = (U^T x) . (V^T y)``.

        The candidates' embeddings are computed once per call; contexts are scored in
        blocks (``rank``, ``predict`` and ``score`` call this on bounded blocks).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        U, V = self.input_embeddings_, self.response_embeddings_
        C = np.asarray(self.candidate_bags_ @ V, dtype=np.float64)
        out = np.empty((len(X), len(self.candidates_)), dtype=np.float64)
        with self._blas_threads():
            for start in range(0, len(X), self._block_size):
                block = X[start : start + self._block_size]
                E_x = np.asarray(self._input_bags(block) @ U, dtype=np.float64)
                out[start : start + len(block)] = self._scores(E_x, C, V, self._matches(block))
        return out

    def _pool_embeddings(self, X, pool):
        if self.match_type == "match" and self.types_:
            return None  # the match-type words depend on the pair
        analyzer = self._analyzer()
        E_x = self._input_bags(X, analyzer) @ self.input_embeddings_
        return E_x, self._response_bags(pool, analyzer) @ self.response_embeddings_

    def _pair_scorer(self, X, texts):
        # The float64 products of _score_pairs are those of the pool embeddings, cast.
        embedded = self._pool_embeddings(X, texts)
        return None if embedded is None else inner_product_pairs(*embedded)

    def _rank_pool(self, X, pool, k):
        with self._blas_threads():
            return super()._rank_pool(X, pool, k)

    def _score_pairs(self, X, responses) -> np.ndarray:
        U, V = self.input_embeddings_, self.response_embeddings_
        analyzer = self._analyzer()
        E_x = np.asarray(self._input_bags(X, analyzer) @ U, dtype=np.float64)
        E_r = np.asarray(self._response_bags(responses, analyzer) @ V, dtype=np.float64)
        scores = np.einsum("ij,ij->i", E_x, E_r)
        if self.match_type == "match" and self.types_:
            # every response word, seen in training or not, can match an entity
            tokens = [analyzer.tokens(r) for r in responses]
            words = Vocabulary().fit(tokens)
            pairs = match_type_pairs(X, words.bags(tokens, binary=True), words.index_, self.types_)
            scores += np.einsum("ij,ij->i", pairs, E_x @ V[self._type_rows()].T)
        return scores
