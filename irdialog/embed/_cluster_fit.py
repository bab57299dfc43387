"""Streaming fits on a Dask cluster: ``fit_chunks`` over a ``dask.bag`` of chunks, trained by
iterative parameter mixing.

Iterative parameter mixing (McDonald, Hall & Mann 2010, section 3; the scheme of the cluster
ports of word2vec and fastText) trains one model from data split into parts: in each epoch
every part runs the model's own serial epoch from the current weights, and the weights are
then replaced by the mean of the parts' weights, weighted by the parts' numbers of examples.
Here a part is a partition of the bag:

1. each partition's chunks are encoded on its worker (each distinct text of a chunk
   tokenised once, as the in-process ``fit_chunks`` does) to provisional word ids and
   response codes; only its distinct words and responses travel to the client, which merges
   them in partition order into the vocabulary and candidates of the in-process
   ``fit_chunks`` over the concatenated chunks;
2. each partition maps its ids onto that vocabulary and keeps its training arrays on its
   worker;
3. each epoch, the client sends the current weights to the cluster once, each partition
   runs the model's serial epoch over its examples in the order its own random stream
   draws, and the client averages the returned arrays in partition order, summed in
   float64.

What every partition reads (the weights, the model, the response table) is sent as a task
of its own (:func:`irdialog._held.held`), not scattered, so that a lost worker costs only
its tasks: the cluster computes them again, and the model is the one of a fit without loss.

:class:`SupervisedEmbeddingRanker`: a partition's arrays are its input bags, gold
responses and the pools of ``negatives="bm25"`` (mined there); its epoch is
:meth:`SupervisedEmbeddingRanker._run_epoch`; the tables and the Adagrad accumulators are
averaged.

:class:`DualEncoderRanker`: a partition's arrays are its contexts' token ids and true
responses (and the pools of ``negatives="bm25"``, mined there), and every worker holds the
whole response table (token ids), from which a partition draws its negatives as the
in-process fit does; its epoch is the model's Adam
epoch (``_epoch_batches`` and ``_adam_epoch``). The weights and both Adam moments are
averaged; each partition counts its own Adam steps (the bias correction of its k-th step
is that of step k, as in a serial fit of its examples), so that partitions of unequal
sizes take the corrections of their own numbers of batches.

The k-th partition that holds examples draws from a random stream of its own (with the
supervised embeddings' kernel state) that the client carries from epoch to epoch: the first
continues the fit's random draws after the initial weights (as the in-process fit does),
the k-th (k > 0) starts from a seed derived from the fit's and k. The tasks are functions
of their inputs, so the model depends on the bag's partitions and ``random_state`` only,
not on the workers or the order the tasks run in (a partition without examples changes
nothing); one partition gives the in-process model bit for bit.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .._held import held
from ..base import resolve_candidates
from ..text import LabelIndex, Vocabulary, _ragged, encode_contexts
from . import _kernels
from . import _recurrent_kernels as K
from ._negatives import MINED_NEGATIVES, bm25_pools
from ._recurrent import QUERY_TOKEN, DualEncoderRanker, _mined_pools, _pair_table
from ._supervised_embedding import SupervisedEmbeddingRanker
from ._training import Fit, Run, aligned_copy, chunk_arrays, csr_arrays, train_tables
from ._word_vectors import embedding_start


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "fit_chunks over a dask bag trains on Dask's distributed: pip install 'irdialog[dask]'"
        ) from None
    return distributed


def _client(client):
    """The given client, else the default ``distributed`` client."""
    distributed = _distributed()
    if client is not None:
        if not isinstance(client, distributed.Client):
            raise TypeError(f"client must be a distributed.Client, got {type(client).__name__}.")
        return client
    try:
        return distributed.get_client()
    except ValueError:
        raise ValueError(
            "fit_chunks over a dask bag needs a distributed client: pass client=, or start "
            "one (distributed.Client(...)) before the fit."
        ) from None


# ------------------------------------------------------------------ the workers' tasks


def _partition_arrays(chunks, encode, p, id_dtype) -> dict:
    """The ``indptr``, ``ids`` and ``codes`` of partition ``p``'s chunks
    (:func:`~irdialog.embed._training.chunk_arrays`), an error in them naming the
    partition, and its ``gold`` response codes."""
    try:
        indptr, ids, codes = chunk_arrays(chunks, encode, id_dtype)
    except (TypeError, ValueError) as e:
        if type(e) not in (TypeError, ValueError):
            raise
        raise type(e)(f"bag partition {p}: {e}") from e
    return {"indptr": indptr, "ids": ids, "codes": codes, "gold": np.unique(codes)}


def _encode_partition(chunks, model, fixed, p):
    """Pass 1 on a worker: partition ``p``'s chunks as provisional word ids (in order of
    first sight in the partition) and response codes (``fixed`` candidates first, then the
    partition's other gold responses in order of first sight), the encoding of the
    in-process ``fit_chunks``."""
    max_history = None if model.use_history else 0
    labels = LabelIndex(() if fixed is None else fixed)
    words: dict[str, int] = {}

    def encode(X, y):
        words_of = model._analyzer().words  # one analyzer per chunk, as in-process
        enc = encode_contexts(X, words_of, words, unknown="add", max_history=max_history)
        return *enc.context_words(), labels.encode(y, unknown="extend")

    return {
        **_partition_arrays(chunks, encode, p, np.int64),
        "words": list(words),
        "responses": labels.labels_[0 if fixed is None else len(fixed) :],
    }


def _summary(encoded):
    """What of pass 1 travels to the client: the partition's words, its responses (beyond
    the fixed candidates, if any), and which of its response codes are gold."""
    return {k: encoded[k] for k in ("words", "responses", "gold")}


def _prepare_partition(encoded, word_remap, code_remap, shared):
    """Pass 2 on a worker: the partition's training arrays over the global vocabulary and
    response table (the rows the in-process fit builds for these examples)."""
    model, n_words = shared["model"], shared["n_words"]
    n = len(encoded["indptr"]) - 1
    ids = word_remap[encoded["ids"]]
    x_bags = model._finish_input_bags(
        sp.csr_matrix((np.ones(len(ids), np.float32), ids, encoded["indptr"]), shape=(n, n_words))
    )
    gold = code_remap[encoded["codes"]]
    pools = None
    if model.negatives == "bm25":
        pools = bm25_pools(x_bags, shared["r_bags"], gold, shared["n_candidates"], MINED_NEGATIVES)
    return {
        "n": n,
        "x": csr_arrays(x_bags),
        "gold": gold,
        "pools": pools,
        "matches": shared["matches"]._replace(e_indptr=np.zeros(n + 1, np.int64)),
        "in_candidates": int(np.count_nonzero(gold < shared["n_candidates"])),
    }


def _counts(prepared):
    return prepared["n"], prepared["in_candidates"]


def _tables(params, shared_embeddings):
    """The distinct arrays of :class:`~irdialog.embed._kernels.SEParams`."""
    if shared_embeddings:
        return params.U, params.GU
    return params.U, params.V, params.GU, params.GV


def _params(tables, shared_embeddings):
    """Writable :class:`~irdialog.embed._kernels.SEParams` of copies of ``tables``."""
    U, *rest = tables
    U = aligned_copy(U)
    if shared_embeddings:
        GU = np.array(rest[0], dtype=np.float32)
        return _kernels.SEParams(U, U, GU, GU)
    V, GU, GV = rest
    return _kernels.SEParams(U, aligned_copy(V), *(np.array(g, np.float32) for g in (GU, GV)))


def _partition_epoch(part, shared, tables, stream, state):
    """One epoch of partition ``part`` from ``tables``: the model's serial epoch over its
    examples in the order its ``stream`` draws. Returns the partition's tables, its stream
    and kernel state (advanced) and its summed loss; no input is changed."""
    model = shared["model"]
    stream, state = copy.deepcopy(stream), np.array(state, dtype=np.uint64)
    params = _params(tables, model.shared_embeddings)
    problem = {
        "pools": part["pools"],
        "params": params,
        "x": part["x"],
        "gold": part["gold"],
        "r": shared["r"],
        "n_candidates": shared["n_candidates"],
        "matches": part["matches"],
        "state": state,
    }
    order = stream.permutation(part["n"]).astype(np.int64)
    loss = model._run_epoch(problem, order, np.zeros(2, dtype=np.float64))
    return _tables(params, model.shared_embeddings), stream, state, loss


# ------------------------------------------------------------------ the client


def _merge(summaries, fixed):
    """The response table and gold responses of the concatenated chunks (candidates in
    order of first sight, or ``fixed`` first), the words of the inputs, and each
    partition's remap of its response codes onto the table."""
    labels = LabelIndex(() if fixed is None else fixed)
    n_fixed = len(labels)
    words: dict[str, None] = {}
    gold: set[int] = set()
    code_remaps = []
    for s in summaries:
        words.update(dict.fromkeys(s["words"]))
        remap = np.concatenate(
            [np.arange(n_fixed, dtype=np.int64), labels.encode(s["responses"], unknown="extend")]
        )
        gold.update(remap[s["gold"]].tolist())
        code_remaps.append(remap)
    return labels.labels_, words, sorted(gold), code_remaps


def _streams(rng, state, n_parts):
    """The (random stream, kernel state) of each of ``n_parts`` partitions: the first's
    the fit's own, the k-th's seeded from the fit's kernel state and k."""
    streams, states = [rng], [state]
    for k in range(1, n_parts):
        seed = np.random.SeedSequence(int(state[0]), spawn_key=(k,))
        stream = np.random.RandomState(np.random.MT19937(seed))
        streams.append(stream)
        states.append(np.array([stream.randint(0, 2**63, dtype=np.int64)], dtype=np.uint64))
    return streams, states


def _average(results, counts):
    """The tables of the partitions' ``results``, averaged with weights ``counts`` in
    partition order (float64 sums: with one partition, its tables exactly)."""
    total = float(sum(counts))
    averaged = []
    for k in range(len(results[0])):
        acc = np.zeros(results[0][k].shape, dtype=np.float64)
        for tables, n in zip(results, counts):
            acc += np.asarray(tables[k], dtype=np.float64) * n
        averaged.append(acc / total)
    return averaged


def fit_bag(model, bag, client=None):
    """``model.fit_chunks(bag)`` on the workers of a Dask client, by iterative parameter
    mixing (see the module docstring), for a :class:`SupervisedEmbeddingRanker` or a
    :class:`DualEncoderRanker`; returns the fitted model."""
    if isinstance(model, DualEncoderRanker):
        return fit_dual_bag(model, bag, _client(client))
    if not isinstance(model, SupervisedEmbeddingRanker):
        raise TypeError(
            f"{model._training_name}.fit_chunks takes an iterable of chunks, not a dask bag: "
            "only SupervisedEmbeddingRanker and DualEncoderRanker train on a cluster."
        )
    model._chunk_encoder()  # its checks of the parameters; sets types_
    client = _client(client)
    fixed = None if model.candidates is None else resolve_candidates(model.candidates, None)
    template = clone(model)

    # Pass 1: each partition's encoding stays on its worker; its words and responses travel.
    encoded, summaries = _encode_all(client, bag, _encode_partition, _summary, template, fixed)
    table, words, gold, code_remaps = _merge(summaries, fixed)

    # The vocabulary, candidates and initial tables of the in-process fit_chunks.
    analyzer = model._analyzer()
    tokens = [model._response_tokens(r, analyzer) for r in table]
    model.candidates_ = np.asarray(table if fixed is None else fixed, dtype=object)
    model.vocabulary_ = Vocabulary().fit([list(words), *(tokens[g] for g in gold)])
    index = model.vocabulary_.index_
    r_bags, m_bags = model._response_arrays(table, tokens, analyzer)
    rng, _ = model._random_states()
    n_words = len(model.vocabulary_)
    start = model._problem(  # the tables and kernel state, drawn as the in-process fit draws
        sp.csr_matrix((0, n_words), dtype=np.float32), r_bags, m_bags, np.zeros(0, np.int64), rng
    )
    shared = {
        "model": template,
        "n_words": n_words,
        "r": start["r"],
        "r_bags": r_bags if model.negatives == "bm25" else None,
        "n_candidates": start["n_candidates"],
        "matches": start["matches"],
    }
    shared_f = held(client, shared)

    # Pass 2: each partition's training arrays, kept on its worker.
    prepared = _prepare_all(
        client, _prepare_partition, encoded, summaries, code_remaps, index, np.int64, shared_f
    )
    del encoded
    counts = client.gather(client.map(_counts, prepared))
    n = sum(c for c, _ in counts)
    if n == 0:
        raise ValueError("chunks held no example: at least one is needed.")
    # The warning reads how many gold responses are candidates, not which: a stand-in of
    # the gold codes (0 for a candidate, past the candidates otherwise) counts the same.
    inside = sum(i for _, i in counts)
    # the caller of fit_chunks: past fit_bag, fit_chunks and _fit_context's wrapper
    model._warn_without_negatives(np.repeat([0, len(table)], [inside, n - inside]), stacklevel=4)
    live = [prepared[p] for p, (c, _) in enumerate(counts) if c]
    weights = [c for c, _ in counts if c]
    streams, states = _streams(rng, start["state"], len(live))  # of the k-th with examples
    params = start["params"]
    shared_embeddings = model.shared_embeddings

    def step(epoch):
        tables = _tables(params, shared_embeddings)
        results = _epochs(client, _partition_epoch, live, shared_f, tables, zip(streams, states))
        streams[:] = [r[1] for r in results]
        states[:] = [r[2] for r in results]
        for target, mean in zip(tables, _average([r[0] for r in results], weights)):
            target[...] = mean
        return float(sum(r[3] for r in results)) / n, {}

    U, V = train_tables(
        model, params, step, None, n_epochs=model.epochs, continuing=False,
        desc="supervised embeddings (dask)",
        advice=f"learning_rate (now {model.learning_rate}) or use optimizer='adagrad'",
    )  # fmt: skip
    model.input_embeddings_ = np.ascontiguousarray(U)
    model.response_embeddings_ = (
        model.input_embeddings_ if shared_embeddings else np.ascontiguousarray(V)
    )
    return model


# ------------------------------------------------------------------ the dual encoder
# The same scheme for :class:`DualEncoderRanker`: the epoch a partition runs is the model's
# own Adam epoch (``_epoch_batches`` and ``_adam_epoch``) over its contexts, with its
# negatives drawn from the whole response table, which every worker holds. The client
# averages the weights and Adam's two moments; each partition counts its own Adam steps.


def _encode_dual_partition(chunks, model, p):
    """Pass 1 on a worker: partition ``p``'s chunks encoded as the in-process
    ``fit_chunks`` encodes them (provisional word ids and response codes, in order of
    first sight in the partition)."""
    words: dict[str, int] = {QUERY_TOKEN: 0}
    table = LabelIndex()
    response_ids: dict[int, list[int]] = {}  # not sent: the client tokenises the table

    def encode(X, y):
        return model._encode_chunk(X, y, words, table, response_ids)

    return {
        **_partition_arrays(chunks, encode, p, np.int32),
        "words": list(words),
        "responses": table.labels_,
    }


def _prepare_dual_partition(encoded, word_remap, code_remap, shared):
    """Pass 2 on a worker: the partition's contexts over the global vocabulary and the
    whole response table (``shared["responses"]``, its (indptr, ids)), as the dual
    encoder's training arrays, with the pools of ``negatives="bm25"`` (an example's pool
    depends on it and the response table alone: those of the in-process fit)."""
    rptr, rtok = shared["responses"]
    cptr, ctok = encoded["indptr"], word_remap[encoded["ids"]]
    pairs = _pair_table(cptr, ctok, rptr, rtok, code_remap[encoded["codes"]], None)
    if shared["bm25"]:
        pairs["pools"] = _mined_pools(pairs, shared["max_len"])
    return pairs


def _n_contexts(pairs):
    return pairs["n_ctx"]


def _dual_partition_epoch(pairs, model, state, n_steps, rng):
    """One Adam epoch of a partition's contexts ``pairs`` from the ``state`` (weights,
    moments) after ``n_steps`` steps, its pairs and their order drawn from ``rng``.
    Returns the weights, the moments, the step count, the random stream (advanced), and
    the summed loss, correct predictions and pairs of the epoch; no input is changed."""
    weights, moments = state
    rng = copy.deepcopy(rng)
    params = {k: np.array(v, dtype=np.float32) for k, v in weights.items()}
    moments = {k: tuple(np.array(a, np.float32) for a in mv) for k, mv in moments.items()}
    batches = model._epoch_batches(pairs, np.arange(pairs["n_ctx"]), rng)
    loss, correct, seen, n_steps = model._adam_epoch(
        params, K.Grads(params), moments, n_steps, batches, model._hogwild(pairs, params)
    )
    return params, moments, n_steps, rng, loss, correct, seen


def _dual_streams(rng, n_parts):
    """The random streams of ``n_parts`` partitions: the first the fit's generator
    ``rng``, the k-th's seeded from ``rng``'s state (not advancing it) and k."""
    entropy = rng.bit_generator.state["state"]["state"]
    seeds = (np.random.SeedSequence(entropy, spawn_key=(k,)) for k in range(1, n_parts))
    return [rng, *(np.random.default_rng(seed) for seed in seeds)]


def _encode_all(client, bag, encode, summarize, *args):
    """Pass 1 of either model: ``encode(partition, *args, p)`` of each partition on a worker
    (kept there) and its ``summarize``d words and responses gathered, in partition order."""
    import dask

    delayed = dask.delayed(encode)
    encoded = client.compute([delayed(part, *args, p) for p, part in enumerate(bag.to_delayed())])
    return encoded, client.gather(client.map(summarize, encoded))


def _prepare_all(client, prepare, encoded, summaries, code_remaps, index, dtype, shared_f):
    """Pass 2 of either model: each partition's training arrays, made by ``prepare`` on its
    worker from its encoding, its words' ids in the merged vocabulary (``dtype``), its
    response codes' remapping and what every partition shares; kept there."""
    return [
        client.submit(
            prepare,
            encoded[p],
            np.array([index[w] for w in s["words"]], dtype=dtype),
            code_remaps[p],
            shared_f,
            pure=False,
        )
        for p, s in enumerate(summaries)
    ]


def _epochs(client, epoch, live, shared_f, state, own):
    """One epoch of each partition with examples, ``epoch(part, shared_f, state, *own)`` on
    its worker (``own``: each partition's own arguments), ``state`` sent to the cluster
    once (:func:`~irdialog._held.held`); the results in partition order."""
    state_f = held(client, state)
    futures = [
        client.submit(epoch, part, shared_f, state_f, *args, pure=False)
        for part, args in zip(live, own)
    ]
    return client.gather(futures)


def fit_dual_bag(model, bag, client):
    """``DualEncoderRanker.fit_chunks(bag)`` on the workers of a Dask client, by iterative
    parameter mixing of its Adam epochs (see the module docstring); returns the fitted
    model."""
    model._chunk_encoder()  # its checks of the parameters
    if model.freeze_embeddings:
        raise ValueError(
            "DualEncoderRanker: freeze_embeddings is not supported by fit_chunks on a dask "
            "bag; fit_chunks over an iterable of chunks supports it."
        )
    template = clone(model)

    encoded, summaries = _encode_all(client, bag, _encode_dual_partition, _summary, template)
    table, merged_words, _, code_remaps = _merge(summaries, None)
    model._chunk_vocabulary(merged_words, table)
    index = model.vocabulary_.index_
    analyzer = model._analyzer()
    responses = _ragged([[index[t] for t in analyzer.tokens(r)] for r in table])
    bm25 = model.negatives == "bm25"
    shared = {"responses": responses, "bm25": bm25, "max_len": model._max_len()}
    shared_f = held(client, shared)
    prepared = _prepare_all(
        client, _prepare_dual_partition, encoded, summaries, code_remaps, index, np.int32,
        shared_f,
    )  # fmt: skip
    del encoded
    counts = client.gather(client.map(_n_contexts, prepared))
    if sum(counts) == 0:
        raise ValueError("chunks held no example: at least one is needed.")
    live = [prepared[p] for p, c in enumerate(counts) if c]
    sizes = [c for c in counts if c]

    # the draws of the in-process fit: its generator, then the initial weights from it
    fit = Fit(None, None, None, None, None, *model._random_states(), False, False)
    _, _, rng = model._rows_and_generator(sum(counts), fit)
    pretrained = embedding_start(model, index)
    params = {
        k: np.ascontiguousarray(v, np.float32) for k, v in model._init_dual(rng, pretrained).items()
    }
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    streams = _dual_streams(rng, len(live))
    steps = [0] * len(live)
    accs = []
    model_f = held(client, template)

    def step(epoch):
        state = (params, moments)
        results = _epochs(client, _dual_partition_epoch, live, model_f, state, zip(steps, streams))
        steps[:] = [r[2] for r in results]
        streams[:] = [r[3] for r in results]
        for k in params:
            targets = (params[k], *moments[k])
            values = [(r[0][k], *r[1][k]) for r in results]
            for target, mean in zip(targets, _average(values, sizes)):
                target[...] = mean
        seen = sum(r[6] for r in results)
        accs.append(sum(r[5] for r in results) / max(seen, 1))
        return float(sum(r[4] for r in results)) / max(seen, 1), {"acc": f"{accs[-1]:.3f}"}

    run = Run(
        step,
        weights=lambda: params,
        snapshot=lambda: {k: v.copy() for k, v in params.items()},
        validate=None,
        curves={"train_accuracy_curve_": accs},
    )
    kept = model._train_epochs(
        lambda k: run, model.epochs, continuing=False, desc="DualEncoder (dask)",
        advice=f"learning_rate (now {model.learning_rate}) or clip_norm", blas_threads=1,
    )  # fmt: skip
    model._keep_params(kept)
    return model
