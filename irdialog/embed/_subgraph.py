"""Subgraph embeddings: question answering by embeddings of the answers' knowledge-base subgraphs.

The model of Bordes, Chopra & Weston (2014, sections 3.1-3.3), the QA baseline of Dodge et
al. (2016, section 3.4 and Table 6): a question q and a candidate answer a (a node of the
knowledge base) score ``S(q, a) = f(q)^T g(a)``. ``f(q)`` sums the input embeddings of the
question's words (an entity named in the question is one of its words); ``g(a)`` sums the
answer embeddings of the answer's features, each a separate dictionary entry:

- the answer entity itself;
- the path: the relation types (with their direction) that join an entity of the question
  to the answer, one hop;
- the subgraph: the entities and the relation types connected to the answer, each weighted
  ``1 / degree`` so that a neighbourhood counts as much as one feature whatever its size.

The path features depend on the question: they are the match-type words of the supervised
embeddings' margin-ranking kernel (:func:`irdialog.embed._kernels.se_sgd_epoch`), which
trains the model against sampled negative candidates; scoring adds them with
:func:`irdialog.embed._kernels.se_add_match_scores`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context
from ..base import RankerMixin, check_contexts, resolve_candidates
from ..text import TOKENIZERS, Analyzer, LabelIndex, Vocabulary
from . import _kernels
from ._training import (
    TRAINING_CONSTRAINTS,
    VALIDATION_BLOCK,
    GoldFitMixin,
    TrainingMixin,
    aligned_copy,
    table_problem,
    train_tables,
)

# The kernel keeps one bit per path type in an int64 mask (as it does for entity types).
_MAX_PATH_TYPES = 62


def _check_kb(kb) -> list[tuple[str, str, tuple[str, ...]]]:
    """The triples of ``kb`` as (subject, relation, objects), objects a tuple of str."""
    out = []
    for i, triple in enumerate(kb):
        if isinstance(triple, str) or len(triple) != 3:
            raise ValueError(
                f"kb[{i}] must be a (subject, relation, objects) triple, got {triple!r:.80}."
            )
        subject, relation, objects = triple
        objects = tuple(objects) if isinstance(objects, (list, tuple)) else (objects,)
        if not all(isinstance(v, str) for v in (subject, relation, *objects)):
            raise TypeError(
                f"kb[{i}]: subject, relation and objects must be str, got {triple!r:.80}."
            )
        out.append((subject, relation, objects))
    return out


class SubgraphEmbeddingRanker(GoldFitMixin, TrainingMixin, RankerMixin, BaseEstimator):
    """Question answering with subgraph embeddings: ``S(q, a) = f(q)^T g(a)``.

    The candidates are nodes of a knowledge base ``kb`` (triples ``(subject, relation,
    objects)``). ``f(q)`` sums the input embeddings (U) of the question's words; ``g(a)``
    sums the answer embeddings (V) of the candidate's features: the entity itself, the
    relation types (and their direction) of the KB edges that join an entity of the question
    to it (its path, one hop), and its neighbourhood (the entities and relation types of its
    edges, weighted ``1 / degree``). An entity of the question is a token of the input that
    names a node: multi-word names are found once an
    :class:`~irdialog.entities.EntityParser` has made them one token (wrap the model in an
    :class:`~irdialog.entities.EntitySymbolRanker`, and give it the KB over the entity
    symbols). Training visits the examples in a random order each epoch and takes a step
    on the margin ranking loss ``max(0, margin - S(q, a) + S(q, a'))`` averaged over
    ``n_negatives`` candidates a' drawn uniformly, with the kernel of the supervised
    embeddings (:func:`irdialog.embed._kernels.se_sgd_epoch`; the path features are its
    match-type words).

    Parameters
    ----------
    kb : sequence of (str, str, str or sequence of str) or None, default=None
        The knowledge base: ``(subject, relation, objects)`` triples (e.g. the ``triples``
        of :func:`irdialog.datasets.load_movie_kb`). Names are compared after the
        tokenizer (lower-cased tokens). None: no KB, the answer is its entity alone.
    candidates : sequence of str or None, default=None
        The candidate answers, the columns of ``decision_function``. None: the distinct
        answers seen in ``fit``.
    embedding_dim : int, default=50
        Dimension of the embeddings (the paper's 64; Dodge et al.'s 50).
    learning_rate : float, default=0.01
        Step size of SGD, or the base step size of Adagrad.
    margin : float, default=0.1
        The margin of the ranking loss (the paper's 0.1).
    n_negatives : int, default=100
        Negative candidates drawn per example and epoch.
    epochs : int, default=10
        Passes over the training data (the most, with early stopping).
    use_history : bool, default=True
        Input = the whole conversation or the last user utterance only.
    tokenizer : {"word", "char"} or callable, default="word"
        How texts and names are split into tokens (:class:`irdialog.text.Analyzer`).
    optimizer : {"sgd", "adagrad"}, default="adagrad"
        Plain SGD with a constant step, or the row-wise Adagrad of the paper (section 3.3).
    init_std : float, default=0.1
        Standard deviation of the normal initialisation of the embeddings.
    early_stopping : bool, default=False
        Score hits@1 on validation data after each epoch, stop when it has not improved
        for ``n_iter_no_change`` epochs, and keep the embeddings of the best epoch.
    validation_fraction : float, default=0.1
        See ``early_stopping``.
    n_iter_no_change : int, default=10
        See ``early_stopping``.
    warm_start : bool, default=False
        Let ``fit`` continue from the fitted embeddings, for ``epochs`` more epochs; the
        vocabulary and the KB features of the first fit stay.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation, the example order and the negative sampling.
    verbose : bool, default=False
        Show a progress bar over epochs.

    Attributes
    ----------
    candidates_ : ndarray of str
        The candidate answers, the columns of ``decision_function``.
    vocabulary_ : irdialog.text.Vocabulary
        The words of the training inputs (other words are dropped).
    node_index_ : dict of str to int
        The KB nodes, the candidates and the training answers (by their tokens joined by
        spaces), numbered.
    relations_ : list of str
        The relation types; path type ``2 r`` follows relation r from the answer (the
        answer is the subject), ``2 r + 1`` against it.
    node_bags_ : sparse matrix of shape (n_nodes, n_features)
        The answer features of every node: its entity row, then (weighted) its neighbour
        entities and relation types, over the rows of ``answer_embeddings_``.
    path_matrix_ : sparse matrix of shape (n_path_types * n_nodes, n_nodes)
        Row ``t * n_nodes + b``: the nodes joined to node b by path type t.
    candidate_nodes_ : ndarray of int64
        The node of each candidate.
    input_embeddings_ : ndarray of shape (n_words, embedding_dim)
        U (row 0, the nil word, stays zero).
    answer_embeddings_ : ndarray of shape (n_features, embedding_dim)
        V: row 0 nil, then the entity rows, the neighbour-entity rows, the
        neighbour-relation rows and the path rows, by node and path type.
    n_iter_, loss_curve_, validation_scores_, best_validation_score_, best_epoch_
        The fitted curves of the training core (see
        :class:`~irdialog.embed.SupervisedEmbeddingRanker`).

    See Also
    --------
    SupervisedEmbeddingRanker : the same loss over bags of words of the answers.
    irdialog.entities.EntitySymbolRanker : ranks the entities of a dictionary as symbols.

    References
    ----------
    Bordes, Chopra & Weston (2014). Question Answering with Subgraph Embeddings. EMNLP.
    Sections 3.1-3.3.
    Dodge et al. (2016). Evaluating Prerequisite Qualities for Learning End-to-End Dialog
    Systems. ICLR. Section 3.4, Table 6.

    Examples
    --------
    Questions on the restaurants of the dialog bAbI knowledge base bundled with irdialog
    (lines ``1 name relation<TAB>value``):

    >>> import gzip, pathlib, irdialog
    >>> from irdialog import SubgraphEmbeddingRanker
    >>> path = pathlib.Path(irdialog.__file__).parent / "data/dialog-babi/dialog-babi-kb-all.txt.gz"
    >>> with gzip.open(path, "rt") as f:
    ...     lines = f.read().splitlines()[:84]
    >>> kb = []
    >>> for line in lines:
    ...     _, name, fact = line.split(" ", 2)
    ...     kb.append((name, *fact.split("\\t")))
    >>> kb[0]
    ('resto_seoul_cheap_korean_1stars', 'R_cuisine', 'korean')
    >>> facts = {(name, relation): value for name, relation, value in kb}
    >>> names = list(dict.fromkeys(name for name, _, _ in kb))
    >>> X = [f"what food does {n} serve" for n in names] + [f"where is {n}" for n in names]
    >>> y = [facts[n, "R_cuisine"] for n in names] + [facts[n, "R_location"] for n in names]
    >>> model = SubgraphEmbeddingRanker(
    ...     kb=kb, embedding_dim=16, n_negatives=5, epochs=40, learning_rate=0.1,
    ...     random_state=0).fit(X[::2], y[::2])
    >>> model.predict(["where is resto_seoul_cheap_korean_1stars"]).tolist()
    ['seoul']
    """

    _parameter_constraints = {
        "kb": ["array-like", None],
        "candidates": ["array-like", None],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "n_negatives": [Interval(Integral, 1, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "use_history": ["boolean"],
        "tokenizer": [callable, StrOptions(set(TOKENIZERS))],
        "optimizer": [StrOptions({"sgd", "adagrad"})],
        "init_std": [Interval(Real, 0, None, closed="neither")],
        **TRAINING_CONSTRAINTS,
    }
    _warm_start_fixed = ("embedding_dim", "use_history", "tokenizer")
    _split_texts = True  # the vocabulary is the training part's

    def __init__(
        self, *, kb=None, candidates=None, embedding_dim=50, learning_rate=0.01, margin=0.1,
        n_negatives=100, epochs=10, use_history=True, tokenizer="word", optimizer="adagrad",
        init_std=0.1, early_stopping=False, validation_fraction=0.1, n_iter_no_change=10,
        warm_start=False, random_state=None, verbose=False,
    ):  # fmt: skip
        self.kb = kb
        self.candidates = candidates
        self.embedding_dim = embedding_dim
        self.learning_rate = learning_rate
        self.margin = margin
        self.n_negatives = n_negatives
        self.epochs = epochs
        self.use_history = use_history
        self.tokenizer = tokenizer
        self.optimizer = optimizer
        self.init_std = init_std
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ the KB features

    def _key(self, name: str, analyzer: Analyzer) -> str:
        return " ".join(analyzer.tokens(name))

    def _build_graph(self, triples, answers, analyzer) -> None:
        """The nodes, their answer features and the path matrix (see Attributes)."""
        keys = [self._key(c, analyzer) for c in self.candidates_]
        keys += [self._key(a, analyzer) for a in answers]
        relations: dict[str, int] = {}
        edges = []
        for subject, relation, objects in triples:
            s = self._key(subject, analyzer)
            r = relations.setdefault(relation, len(relations))
            keys.append(s)
            for obj in objects:
                o = self._key(obj, analyzer)
                keys.append(o)
                edges.append((s, r, o))
        if 2 * len(relations) > _MAX_PATH_TYPES:
            raise ValueError(
                f"kb has {len(relations)} relation types; at most {_MAX_PATH_TYPES // 2} are "
                "supported."
            )
        self.node_index_ = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        self.relations_ = list(relations)
        n_nodes, n_types = len(self.node_index_), 2 * len(relations)
        index = self.node_index_
        # directed edges (answer a, neighbour b, path type t), both ways of each triple
        s = np.fromiter((index[e[0]] for e in edges), np.int64, len(edges))
        o = np.fromiter((index[e[2]] for e in edges), np.int64, len(edges))
        r = np.fromiter((e[1] for e in edges), np.int64, len(edges))
        a, b, t = np.r_[s, o], np.r_[o, s], np.r_[2 * r, 2 * r + 1]
        degree = np.bincount(a, minlength=n_nodes).astype(np.float32)
        weight = 1.0 / degree[a] if len(a) else np.zeros(0, np.float32)
        nodes = np.arange(n_nodes)
        rows = np.r_[nodes, a, a]
        cols = np.r_[1 + nodes, 1 + n_nodes + b, 1 + 2 * n_nodes + t]
        data = np.r_[np.ones(n_nodes, np.float32), weight, weight].astype(np.float32)
        n_features = 1 + 2 * n_nodes + 2 * n_types
        self.node_bags_ = sp.csr_matrix((data, (rows, cols)), shape=(n_nodes, n_features))
        self.node_bags_.sum_duplicates()
        self.path_matrix_ = sp.csr_matrix(
            (np.ones(len(a), np.float32), (t * n_nodes + b, a)), shape=(n_types * n_nodes, n_nodes)
        )
        self.path_matrix_.sum_duplicates()
        self.path_matrix_.data[:] = 1.0
        self.candidate_nodes_ = np.fromiter(
            (index[k] for k in keys[: len(self.candidates_)]), np.int64, len(self.candidates_)
        )

    def _n_types(self) -> int:
        return 2 * len(self.relations_)

    def _path_rows(self) -> np.ndarray:
        """The row of ``answer_embeddings_`` of each path type."""
        n_nodes = len(self.node_index_)
        return 1 + 2 * n_nodes + self._n_types() + np.arange(self._n_types(), dtype=np.int64)

    # ------------------------------------------------------------------ the questions

    def _analyzer(self) -> Analyzer:
        return Analyzer(tokenizer=self.tokenizer)

    def _texts(self, ctx) -> list[str]:
        if not self.use_history:
            return [ctx.query]
        return [t.text for t in ctx.history] + [ctx.query]

    def _questions(self, X, analyzer):
        """Input bags over ``vocabulary_`` and the question entities (CSR indptr, nodes)."""
        vocab, index = self.vocabulary_.index_, self.node_index_
        indptr, ids, e_indptr, e_nodes = [0], [], [0], []
        for ctx in X:
            tokens = [w for text in self._texts(ctx) for w in analyzer.tokens(text)]
            ids.extend(vocab[w] for w in tokens if w in vocab)
            indptr.append(len(ids))
            e_nodes.extend(dict.fromkeys(index[w] for w in tokens if w in index))
            e_indptr.append(len(e_nodes))
        bags = sp.csr_matrix(
            (np.ones(len(ids), np.float32), np.asarray(ids, np.int64), indptr),
            shape=(len(X), len(self.vocabulary_)),
        )
        bags.sum_duplicates()
        return bags, np.asarray(e_indptr, np.int64), np.asarray(e_nodes, np.int64)

    def _path_matches(self, e_indptr, e_nodes):
        """(indptr, candidate, path type) of the candidates each question's entities join,
        as a CSR table over the questions (the layout of ``se_add_match_scores``)."""
        n_q, n_nodes = len(e_indptr) - 1, len(self.node_index_)
        column = np.full(n_nodes, -1, np.int64)
        column[self.candidate_nodes_] = np.arange(len(self.candidate_nodes_))
        entities = sp.csr_matrix(
            (np.ones(len(e_nodes), np.float32), e_nodes, e_indptr), shape=(n_q, n_nodes)
        )
        rows, cols, types = [], [], []
        for t in range(self._n_types()):
            joined = (entities @ self.path_matrix_[t * n_nodes : (t + 1) * n_nodes]).tocoo()
            cand = column[joined.col]
            keep = cand >= 0
            rows.append(joined.row[keep].astype(np.int64))
            cols.append(cand[keep])
            types.append(np.full(int(keep.sum()), t, np.int64))
        rows, cols, types = (
            np.concatenate(v) if v else np.zeros(0, np.int64) for v in (rows, cols, types)
        )
        order = np.argsort(rows, kind="stable")
        indptr = np.zeros(n_q + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=n_q), out=indptr[1:])
        return indptr, cols[order], types[order]

    def _scores(self, x_bags, e_indptr, e_nodes, U, V) -> np.ndarray:
        E_x = np.asarray(x_bags @ U, dtype=np.float64)
        C = np.asarray(self.node_bags_[self.candidate_nodes_] @ V, dtype=np.float64)
        scores = E_x @ C.T
        if self._n_types():
            type_scores = np.ascontiguousarray(E_x @ V[self._path_rows()].T)
            _kernels.se_add_match_scores(
                scores, *self._path_matches(e_indptr, e_nodes), type_scores
            )
        return scores

    # ------------------------------------------------------------------ fit

    def _problem(self, X, y, rng, analyzer, learn):
        """The arrays of :func:`~irdialog.embed._kernels.se_sgd_epoch`; with ``learn``,
        the vocabulary and the KB features are fitted first."""
        if learn:
            triples = [] if self.kb is None else _check_kb(self.kb)
            self.candidates_ = resolve_candidates(self.candidates, y)
            self._build_graph(triples, list(dict.fromkeys(y)), analyzer)
            texts = dict.fromkeys(text for ctx in X for text in self._texts(ctx))
            self.vocabulary_ = Vocabulary().fit([analyzer.tokens(text) for text in texts])
        labels = LabelIndex(self.candidates_)
        gold = labels.encode(y, unknown="extend")
        index = self.node_index_
        # answers never seen as nodes (a warm start on new answers) have no features
        table = np.fromiter(
            (index.get(self._key(r, analyzer), -1) for r in labels.labels_), np.int64
        )
        empty = sp.csr_matrix((1, self.node_bags_.shape[1]), dtype=np.float32)
        bags = sp.vstack([self.node_bags_, empty], format="csr")
        r_bags = bags[table]  # -1: the empty last row
        paths = sp.vstack(
            [self.path_matrix_.T.tocsr(), sp.csr_matrix((1, self.path_matrix_.shape[0]))],
            format="csr",
        )[table]
        x_bags, e_indptr, e_nodes = self._questions(X, analyzer)
        n_types, n_nodes = self._n_types(), len(index)
        # each question entity b marks its pairs (t, b) with bit t, for every path type t
        counts = np.diff(e_indptr) * n_types
        e_words = (np.arange(n_types)[None, :] * n_nodes + e_nodes[:, None]).ravel()
        e_types = np.tile(np.arange(n_types, dtype=np.int64), len(e_nodes))
        e_ptr = np.zeros(len(X) + 1, np.int64)
        np.cumsum(counts, out=e_ptr[1:])
        entities = e_ptr, e_words, e_types
        return table_problem(
            rng, x_bags, gold, r_bags, len(self.candidates_), entities, paths,
            self._path_rows(), n_types * n_nodes,
        )  # fmt: skip

    def _init_params(self, rng, continuing):
        dim = self.embedding_dim
        if continuing:
            U, V = self.input_embeddings_, self.answer_embeddings_
        else:
            U = rng.normal(0.0, self.init_std, size=(len(self.vocabulary_), dim))
            V = rng.normal(0.0, self.init_std, size=(self.node_bags_.shape[1], dim))
            U[0] = V[0] = 0.0  # the nil rows
        return _kernels.SEParams(
            aligned_copy(U), aligned_copy(V),
            np.zeros(len(U), np.float32), np.zeros(len(V), np.float32),
        )  # fmt: skip

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, groups=None, *, X_val=None, y_val=None):
        """Learn the embeddings from questions X and their answers y.

        Parameters
        ----------
        X : sequence of Context or str
        y : sequence of str
            The answers (nodes of ``kb``, or other candidates).
        groups : array-like of shape (n_samples,), default=None
            Dialog ids: with early stopping and no ``X_val``, the validation split takes
            whole groups.
        X_val, y_val : sequence of Context or str, sequence of str, default=None
            Validation data, scored after each epoch (hits@1).

        Returns
        -------
        self
        """
        return self._fit_path(X, y, groups=groups, X_val=X_val, y_val=y_val)

    def _fit(self, fit):
        X, y, X_val, y_val = fit.X, fit.y, fit.X_val, fit.y_val
        rng, continuing = fit.random_state, fit.continuing
        analyzer = self._analyzer()
        problem = self._problem(X, y, rng, analyzer, learn=not continuing)
        params = self._init_params(rng, continuing)
        val = None
        if X_val is not None:
            gold_val = LabelIndex(self.candidates_).encode(y_val, name="y_val")
            x_val, e_ptr, e_nodes = self._questions(X_val, analyzer)
            val = (x_val, e_ptr, e_nodes, gold_val)
        stats = np.zeros(2, dtype=np.float64)
        settings = _kernels.SESettings(
            self.n_negatives, self.learning_rate, self.margin, self.optimizer == "adagrad"
        )
        n = len(X)

        def step(epoch):
            order = rng.permutation(n).astype(np.int64)
            p = problem
            loss = _kernels.se_sgd_epoch(
                params, p["x"], p["gold"], p["r"], p["n_candidates"], p["matches"], order,
                settings, p["state"], stats,
            )  # fmt: skip
            return loss / n, {}

        def validate():
            x_val, e_ptr, e_nodes, gold_val = val
            hits = 0
            for start in range(0, len(gold_val), VALIDATION_BLOCK):
                sl = slice(start, start + VALIDATION_BLOCK)
                lo, hi = e_ptr[sl.start], e_ptr[min(sl.start + VALIDATION_BLOCK, len(gold_val))]
                scores = self._scores(
                    x_val[sl], e_ptr[sl.start : sl.start + VALIDATION_BLOCK + 1] - lo,
                    e_nodes[lo:hi], params.U, params.V,
                )  # fmt: skip
                hits += int(np.sum(np.argmax(scores, axis=1) == gold_val[sl]))
            return hits / len(gold_val), 0.0

        U, V = train_tables(
            self, params, step, validate if val is not None else None,
            n_epochs=1 if fit.incremental else self.epochs, continuing=continuing,
            desc="subgraph embeddings", advice=f"learning_rate (now {self.learning_rate})",
        )  # fmt: skip
        self.input_embeddings_ = np.ascontiguousarray(U)
        self.answer_embeddings_ = np.ascontiguousarray(V)
        return self

    # ------------------------------------------------------------------ scoring

    def decision_function(self, X) -> np.ndarray:
        """``S(q, a)`` of every candidate a for each question q.

        Parameters
        ----------
        X : sequence of Context or str

        Returns
        -------
        scores : ndarray of shape (n_samples, n_candidates)
        """
        check_is_fitted(self)
        X = check_contexts(X)
        x_bags, e_indptr, e_nodes = self._questions(X, self._analyzer())
        return self._scores(
            x_bags, e_indptr, e_nodes, self.input_embeddings_, self.answer_embeddings_
        )

    def _score_pairs(self, X, responses) -> np.ndarray:
        # A response that is no node of the fit scores 0.
        analyzer = self._analyzer()
        x_bags, e_indptr, e_nodes = self._questions(check_contexts(X), analyzer)
        E_x = np.asarray(x_bags @ self.input_embeddings_, dtype=np.float64)
        nodes = [self.node_index_.get(self._key(r, analyzer), -1) for r in responses]
        V = self.answer_embeddings_
        path_scores = E_x @ V[self._path_rows()].T
        n_nodes = len(self.node_index_)
        scores = np.zeros(len(X))
        for i, a in enumerate(nodes):
            if a < 0:
                continue
            scores[i] = float(E_x[i] @ (self.node_bags_[a] @ V).ravel())
            for b in e_nodes[e_indptr[i] : e_indptr[i + 1]]:
                for t in range(self._n_types()):
                    if self.path_matrix_[t * n_nodes + b, a]:
                        scores[i] += path_scores[i, t]
        return scores
