"""Training speed of supervised embeddings and MemN2N next to their peers, on the real data.

    PYTHONPATH=. python -m benchmarks.training_peers \\
        --starspace ../peers/StarSpace/starspace \\
        --starspace-commit 8aee0a950aa607c023e5c91cff518bec335b5df5 \\
        --repeat 2 --data-home ../shared/data

(``python``: that of an environment holding torch too, see below.)

Each row trains the same model, of the same size, for the same epochs on the same
examples, on every side; the sides take turns (:func:`benchmarks.alternate`) for
``--repeat`` rounds and each keeps its best wall-clock fit. Beside each time is the side's
accuracy on the dev split (hits@1 over the task's candidates), so that equal work is
compared. Every side is timed at each of its thread counts: irdialog at ``n_jobs`` 1 (the
sequential fit) and 2 (Hogwild; ``--irdialog-threads``), BLAS held to one thread; the
peers at theirs. Each row also gives irdialog's lead over each peer (:func:`leads`): on
one training thread each, and each side at its fastest.

**Supervised embeddings** (dialog bAbI tasks 1 and 5, the dev split; the ``se`` preset of
``irdialog bench dialog-babi``: the whole conversation as input, unit-norm input bags,
dimension 32, 100 negatives, its learning rate and margin, two dictionaries; epochs capped
at ``--se-epochs``):

- irdialog: ``SupervisedEmbeddingRanker`` with the preset, at ``n_jobs`` 1 and 2.
- StarSpace (Wu et al. 2018, the C++ reference of the model family, Hogwild over threads):
  ``starspace train -trainMode 0 -fileFormat labelDoc`` on files written by
  :func:`write_starspace_files` (per line the input's words, each once, weighted by its
  count over the bag's L2 norm, a tab, then the response's words), with ``-useWeight true
  -p 0 -similarity dot`` (so the input is exactly our unit-norm bag and the response the
  plain sum), ``-shareEmb false`` (two dictionaries), ``-adagrad false`` (plain SGD),
  ``-batchSize 1``, ``-initRandSd`` our ``init_std``, ``-negSearchLimit`` and
  ``-maxNegSamples`` our ``n_negatives``, ``-norm 1e9`` (no norm cap) and our ``-dim``,
  ``-lr``, ``-margin``, ``-epoch``. What stays StarSpace's own: its learning rate decays
  linearly to zero over the epochs, its negatives are the responses of random training
  examples (ours: uniform over the candidate set), its step is averaged over the violating
  negatives (ours: over all of them), and a separate thread spins over the embeddings the
  whole time to cap their norms. ``-thread T`` runs ``max(T, 2) - 1`` training threads
  beside that thread, so ``-thread 1`` and ``-thread 2`` are the same single-trainer run
  and ``-thread 3`` is Hogwild on both cores. Its dev accuracy is computed from the
  embeddings of its saved model (:func:`read_starspace_model`), scored like ours.
- PyTorch: :func:`torch_se_run`, the same model and SGD step (per example, the mean hinge
  over the uniform negatives, sparse embedding gradients), at ``torch.set_num_threads(T)``
  for each T of ``--torch-threads``.

**MemN2N** (the bench's presets, one run each): dialog bAbI task 1 on its dev split (the
``memn2n`` preset of ``irdialog bench dialog-babi``: one hop, dimension 32, bags of words
with speaker and time words, 4,212 candidates, SGD, batch 32, 10 epochs) and bAbI QA task
1, its last 10% of training stories held out (the ``memn2n`` preset of ``irdialog bench
babi-qa``: 3 hops, dimension 20, adjacent tying, position and temporal encoding, 20
linear-start epochs, random noise, annealing, 100 epochs; one run instead of its ten
restarts). Task 5 of dialog bAbI is left out by default (``--memn2n-dialog-tasks``): one
PyTorch epoch of its 128-dimensional, 100-turn memories took about five minutes.

- irdialog: ``MemN2NRanker`` with the preset, at ``n_jobs`` 1 and 2.
- PyTorch: :func:`torch_memn2n_run`, the same network over the same encoded contexts
  (irdialog's vocabulary, position weights, speaker and time words, random empty memories,
  candidate bags: :func:`_memn2n_forward` gives the scores of our fitted network), the same
  schedule, clipping (per matrix) and batches of 32, at ``torch.set_num_threads(T)``.

Install the peers (never dependencies of irdialog):

- StarSpace: ``git clone https://github.com/facebookresearch/StarSpace``, Boost headers
  (``apt-get install libboost-dev``), ``make`` (its makefile, ``-O3``); pass the binary as
  ``--starspace``.
- PyTorch: ``pip install torch`` in a throw-away environment with irdialog's requirements
  and ``pip install --no-deps -e .``; run this script with that environment's python.

Writes ``benchmarks/results/speed/training-peers.json`` (with provenance, the peers'
versions and configurations, through :func:`benchmarks.finish_speed_result`) and prints
its table.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import tempfile
from collections import Counter
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from benchmarks import RESULTS, SpeedBenchmark, alternate, finish_speed_result, over_irdialog
from irdialog.base import check_contexts
from irdialog.datasets import load_babi_qa, load_dialog_babi, record_data_files

# The separator of a word and its weight in StarSpace's input files (-weightSep).
WEIGHT_SEP = ":"


# ------------------------------------------------------------------ supervised embeddings


def se_examples(est, X, y) -> list[tuple[dict, list[str]]]:
    """The examples ``est`` (an unfitted ``SupervisedEmbeddingRanker``) trains on, as words:
    per example the input bag ``{word: weight}`` (counts, scaled to unit L2 norm with
    ``normalize_input``) and the response's words."""
    analyzer = est._analyzer()
    out = []
    for ctx, response in zip(check_contexts(X), y):
        counts = Counter(est._input_tokens(ctx, analyzer))
        norm = np.sqrt(sum(c * c for c in counts.values())) if est.normalize_input else 1.0
        out.append(({w: c / norm for w, c in counts.items()}, est._response_tokens(response)))
    return out


def starspace_word(word: str) -> str:
    """``word`` as StarSpace reads it: its weight separator and ``%`` percent-encoded
    (``%3A``, ``%25``), which :func:`read_starspace_model` decodes; a word with a space,
    which no tokenizer here gives, is an error."""
    if not word.strip() or any(c.isspace() for c in word):
        raise ValueError(f"StarSpace cannot read the word {word!r} (a space)")
    return word.replace("%", "%25").replace(WEIGHT_SEP, "%3A")


def write_starspace_files(est, X, y, directory, name) -> Path:
    """Write the examples of :func:`se_examples` in StarSpace's ``labelDoc`` format with
    weights (``-useWeight true``): per line ``word:weight ...<TAB>word ...``.

    Returns
    -------
    path : pathlib.Path
        ``directory/name``.
    """
    path = Path(directory) / name
    with open(path, "w", encoding="utf-8") as f:
        for bag, response in se_examples(est, X, y):
            lhs = " ".join(f"{starspace_word(w)}{WEIGHT_SEP}{float(v)!r}" for w, v in bag.items())
            f.write(lhs + "\t" + " ".join(starspace_word(w) for w in response) + "\n")
    return path


def read_starspace_model(path):
    """The dictionary and the two embedding matrices of a model saved by ``starspace
    train`` with ``-shareEmb false``: ``(words, LHS, RHS)``."""
    data = Path(path).read_bytes()
    magic = b"STARSPACE-2018-2\0"
    if not data.startswith(magic):
        raise ValueError(f"{path} is not a StarSpace model file")
    pos = len(magic) + 9 * 4 + 3  # 9 ints, shareEmb, useWeight, weightSep
    share = data[len(magic) + 9 * 4]
    for _ in range(2):  # fileFormat, similarity
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + n
    pos += 4  # batchSize
    size, _, _, _ = struct.unpack_from("<iiiq", data, pos)
    pos += 20
    words = []
    for _ in range(size):
        end = data.index(b"\0", pos)
        words.append(unquote(data[pos:end].decode("utf-8")))  # see starspace_word
        pos = end + 1 + 8 + 1  # count int64, entry type int8
    mats = _read_ublas(data[pos:].decode("ascii"), 1 if share else 2)
    return words, mats[0], mats[-1]


def _read_ublas(text: str, n: int) -> list[np.ndarray]:
    """``n`` matrices in boost::numeric::ublas's text format, ``[r,c]((a,b),(c,d))``."""
    out, pos = [], 0
    for _ in range(n):
        start = text.index("[", pos)
        close = text.index("]", start)
        rows, cols = (int(v) for v in text[start + 1 : close].split(","))
        end = text.index("))", close) + 2
        body = text[close + 1 : end].replace("(", " ").replace(")", " ").replace(",", " ")
        out.append(np.array(body.split(), dtype=np.float32).reshape(rows, cols))
        pos = end
    return out


def bag_accuracy(lookup, U, V, examples, candidates, gold) -> float:
    """Hits@1 (%) of the bag model ``f(x, y) = (U^T x) . (V^T y)`` on ``examples`` (of
    :func:`se_examples`), ranking the bags of ``candidates`` (lists of words); ``lookup``
    maps a word to its row, words it lacks count for nothing; ``gold`` are the examples'
    candidate rows."""
    dim = U.shape[1]

    def embed(M, weighted):
        out = np.zeros((len(weighted), dim), np.float64)
        for i, bag in enumerate(weighted):
            for w, v in bag.items():
                if w in lookup:
                    out[i] += v * M[lookup[w]]
        return out

    C = embed(V, [Counter(c) for c in candidates])
    Q = embed(U, [bag for bag, _ in examples])
    return 100.0 * float(np.mean((Q @ C.T).argmax(axis=1) == np.asarray(gold)))


def _se_setting(task, data_home, epochs):
    from irdialog.bench._dialog_babi import DIALOG_BABI_MODELS, SUITE_NAME

    spec = DIALOG_BABI_MODELS["se"]
    [point] = spec.selection.points(SUITE_NAME, task)
    params = {**point, "epochs": epochs}
    trn = load_dialog_babi(task, "trn", data_home=data_home)
    dev = load_dialog_babi(task, "dev", data_home=data_home)
    return params, trn, dev, lambda n_jobs=1: spec.build(trn, **params, n_jobs=n_jobs)


def starspace_args(params) -> list[str]:
    """StarSpace's training options matching the ``SupervisedEmbeddingRanker``
    parameters ``params`` (see the module docstring)."""
    if params.get("shared_embeddings") or params.get("optimizer", "sgd") != "sgd":
        raise ValueError("the StarSpace run matches two dictionaries and plain SGD")
    return [
        "-trainMode", "0", "-fileFormat", "labelDoc", "-useWeight", "true",
        "-weightSep", WEIGHT_SEP, "-p", "0", "-similarity", "dot", "-loss", "hinge",
        "-shareEmb", "false", "-adagrad", "false", "-batchSize", "1",
        "-initRandSd", str(params.get("init_std", 0.1)), "-norm", "1e9",
        "-dim", str(params["embedding_dim"]), "-lr", str(params["learning_rate"]),
        "-margin", str(params["margin"]), "-epoch", str(params["epochs"]),
        "-negSearchLimit", str(params["n_negatives"]),
        "-maxNegSamples", str(params["n_negatives"]), "-minCount", "1",
    ]  # fmt: skip


def starspace_trainers(threads: int) -> int:
    """The training threads of ``starspace train -thread threads``: one thread of the
    count caps the embeddings' norms (see the module docstring)."""
    return max(threads, 2) - 1


def starspace_configuration(threads: int) -> str:
    """How ``starspace train -thread threads`` runs (see the module docstring)."""
    trainers = starspace_trainers(threads)
    return (
        f"StarSpace, {trainers} Hogwild training thread{'s' if trainers > 1 else ''} "
        "and its norm-capping thread, C++ -O3"
    )


def run_starspace(binary, train, model, params, threads) -> None:
    """``starspace train`` on the file ``train`` with the options of ``params``
    (:func:`starspace_args`) on ``threads`` threads, saving to ``model``."""
    cmd = [binary, "train", "-trainFile", str(train), "-model", str(model),
           *starspace_args(params), "-thread", str(threads)]  # fmt: skip
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def starspace_accuracy(model, accuracy) -> float:
    """``accuracy(lookup, U, V)`` of the StarSpace model saved at ``model``."""
    words, U, V = read_starspace_model(model)
    return accuracy({w: i for i, w in enumerate(words)}, U, V)


def torch_se_run(torch, examples, responses, gold, n_candidates, params, seed=0):
    """A function training the supervised-embedding model in PyTorch, epoch by epoch as
    ``SupervisedEmbeddingRanker`` does (see the module docstring), and returning
    ``(words, U, V)``. ``examples`` come from :func:`se_examples`, ``responses`` are word
    lists (the candidates first, then gold responses outside them), ``gold`` the example's
    response row."""
    nn = torch.nn
    words = {"": 0}
    for bag, response in examples:
        for w in [*bag, *response]:
            words.setdefault(w, len(words))
    dim, k = params["embedding_dim"], params["n_negatives"]
    rows = [[words[w] for w in r if w in words] or [0] for r in responses]
    pad = np.zeros((len(rows), max(map(len, rows))), np.int64)
    for i, r in enumerate(rows):
        pad[i, : len(r)] = r
    pad = torch.from_numpy(pad)
    xs = [
        (
            torch.tensor([words[w] for w in bag]),
            torch.tensor(list(bag.values()), dtype=torch.float32),
        )
        for bag, _ in examples
    ]
    gold = torch.as_tensor(np.asarray(gold, np.int64))
    margin, lr = params["margin"], params["learning_rate"]
    std = params.get("init_std", 0.1)

    def fit():
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        U = nn.Embedding(len(words), dim, padding_idx=0, sparse=True)
        V = nn.Embedding(len(words), dim, padding_idx=0, sparse=True)
        with torch.no_grad():
            for E in (U, V):
                E.weight.normal_(0.0, std, generator=gen)
                E.weight[0] = 0.0
        opt = torch.optim.SGD([U.weight, V.weight], lr=lr)
        for _ in range(params["epochs"]):
            for i in torch.randperm(len(xs), generator=gen).tolist():
                idx, w = xs[i]
                g = int(gold[i])
                inside = g < n_candidates
                neg = torch.randint(0, n_candidates - inside, (k,), generator=gen)
                if inside:
                    neg += neg >= g
                ex = (U(idx) * w[:, None]).sum(0)
                resp = V(pad[torch.cat([gold[i : i + 1], neg])]).sum(1)
                s = resp @ ex
                loss = torch.clamp(margin - s[0] + s[1:], min=0.0).mean()
                if loss.item() > 0:
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
        return words, U.weight.detach().numpy(), V.weight.detach().numpy()

    return fit


def se_rows(task, args, torch, starspace, workdir) -> list[dict]:
    """The timed supervised-embedding row of one dialog bAbI task (see the docstring)."""
    from irdialog.bench._dialog_babi import _evaluate

    params, trn, dev, make = _se_setting(task, args.data_home, args.se_epochs)
    cands = list(trn.candidates)
    examples = se_examples(make(), trn.X, trn.y)
    dev_examples = se_examples(make(), dev.X, dev.y)
    cand_words = [make()._response_tokens(c) for c in cands]
    position = {c: i for i, c in enumerate(cands)}
    extra = sorted(set(trn.y) - set(position))
    position.update((r, len(cands) + i) for i, r in enumerate(extra))
    responses = cand_words + [make()._response_tokens(r) for r in extra]
    gold = [position[r] for r in trn.y]
    dev_gold = [position[r] for r in dev.y]

    def accuracy(words, U, V):
        return bag_accuracy(words, U, V, dev_examples, cand_words, dev_gold)

    make().set_params(epochs=1).fit(trn.X, trn.y)  # compiles (or loads) the kernels
    sides = Sides()
    for t in args.irdialog_threads:
        ours = {}
        sides.add(
            _irdialog_side(t), t,
            lambda ours=ours, t=t: ours.update(model=make(t).fit(trn.X, trn.y)),
            lambda ours=ours: _evaluate(ours["model"], dev)["per_response"],
            f"SupervisedEmbeddingRanker, n_jobs={t} "
            f"({'sequential SGD' if t == 1 else 'Hogwild SGD'}), numba",
        )  # fmt: skip
    if torch is not None:
        fit = torch_se_run(torch, examples, responses, gold, len(cands), params)
        for t in args.torch_threads:
            result = {}
            sides.add(
                _torch_side(t), t, _torch_fit(torch, t, fit, result),
                lambda result=result: accuracy(*result["model"]),
                f"PyTorch {torch.__version__}, CPU, set_num_threads({t}), per-example SGD "
                "over sparse nn.Embedding gradients",
            )  # fmt: skip
    if starspace is not None:
        train = write_starspace_files(make(), trn.X, trn.y, workdir, f"se-task{task}-trn.txt")
        for t in args.starspace_threads:
            model = Path(workdir) / f"se-task{task}-t{t}"
            sides.add(
                f"starspace -thread {t}", starspace_trainers(t),
                lambda t=t, model=model: run_starspace(starspace, train, model, params, t),
                lambda model=model: starspace_accuracy(model, accuracy),
                starspace_configuration(t),
            )  # fmt: skip
    row = _timed_row(f"SE, dialog bAbI task {task}", params, sides, args.repeat,
                     len(trn.y), "dev per-response accuracy %")  # fmt: skip
    if starspace is not None:
        row["starspace_options"] = starspace_args(params)
    return [row]


# ------------------------------------------------------------------ MemN2N


def _memn2n_setting(suite, task, data_home, epochs):
    """``(workload, params, (X, y), (X_dev, y_dev), make, metric)`` of MemN2N on a task of
    ``suite``: the bench's preset (one run, ``epochs`` capped when given) and its dev data
    (bAbI QA: the last 10% of the training stories, as ``--heldout``)."""
    cap = {} if epochs is None else {"epochs": epochs}
    if suite == "babi-qa":
        from irdialog.bench._babi_qa import BABI_QA_MODELS, SUITE_NAME, valid_split

        spec = BABI_QA_MODELS["memn2n"]
        [point] = spec.selection.points(SUITE_NAME, task)
        params = {**point, "n_init": 1, **cap}
        train = load_babi_qa(task, "train", data_home=data_home)
        fit_rows, dev_rows = next(valid_split(train.groups, spec.selection.fraction).split())
        X = [train.X[i] for i in fit_rows]
        y = [train.y[i] for i in fit_rows]
        Xd = [train.X[i] for i in dev_rows]
        yd = [train.y[i] for i in dev_rows]
        metric = "held-out accuracy % (the last 10% of the training stories)"
        return (f"MemN2N, bAbI QA task {task}", params, (X, y), (Xd, yd),
                lambda n_jobs=1: spec.build(**params, n_jobs=n_jobs), metric)  # fmt: skip
    from irdialog.bench._dialog_babi import DIALOG_BABI_MODELS, SUITE_NAME

    spec = DIALOG_BABI_MODELS["memn2n"]
    [point] = spec.selection.points(SUITE_NAME, task)
    params = {**point, **cap}
    trn = load_dialog_babi(task, "trn", data_home=data_home)
    dev = load_dialog_babi(task, "dev", data_home=data_home)
    return (f"MemN2N, dialog bAbI task {task}", params, (trn.X, trn.y), (dev.X, dev.y),
            lambda n_jobs=1: spec.build(trn, **params, n_jobs=n_jobs),
            "dev per-response accuracy %")  # fmt: skip


def torch_memn2n_run(torch, est, X, y, seed=0):
    """A function training, in PyTorch, the MemN2N that ``est`` (an unfitted
    ``MemN2NRanker`` with adjacent tying and SGD) would train on X, y: the same
    encoding (``est``'s vocabulary, position weights, speaker and time words, random empty
    memories, candidate bags), network, schedule and batches, and returning its weights.
    Call :func:`torch_memn2n_accuracy` with them."""
    from irdialog.embed import _memn2n_kernels as K
    from irdialog.text import LabelIndex

    X = check_contexts(X)
    analyzer = est._learn_encoding(X, y)
    if est.weight_tying != "adjacent" or est.optimizer != "sgd" or est.types_:
        raise ValueError("the PyTorch MemN2N has adjacent tying, SGD and no match types")
    enc = est._encode(X, analyzer)
    target = torch.as_tensor(LabelIndex(est.candidates_).encode(y).astype(np.int64))
    t = _memn2n_tensors(torch, est, enc)
    hops, dim, n_words = est.hops, est.embedding_dim, len(est.vocabulary_)
    counts = np.diff(enc.mptr)

    def fit():
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        E = torch.randn(hops + 1, n_words, dim) * est.init_std
        E[:, 0] = 0.0
        E.requires_grad_(True)
        for epoch in range(est.linear_start + est.epochs):
            lr, softmax = est._schedule(epoch)
            ages = enc.mtime
            if est.random_noise > 0:
                n_blank = rng.integers(0, np.ceil(counts * est.random_noise).astype(np.int64) + 1)
                ages = np.empty_like(enc.mtime)
                uniforms = rng.random(int((counts + n_blank).sum()))
                K.random_ages(enc.mptr, n_blank, uniforms, est.memory_size, est._time_base_, ages)
            mtime = _slot_tensor(torch, enc.mptr, ages, t["slots"])
            order = torch.from_numpy(rng.permutation(len(target)))
            for batch in order.split(est.batch_size):
                scores = _memn2n_forward(torch, E, t, mtime, batch, hops, softmax)
                loss = torch.nn.functional.cross_entropy(scores, target[batch], reduction="sum")
                E.grad = None
                loss.backward()
                with torch.no_grad():
                    g = E.grad
                    norms = g.flatten(1).norm(dim=1)
                    scale = torch.clamp(est.max_grad_norm / (norms + 1e-12), max=1.0)
                    E -= lr * scale[:, None, None] * g
                    E[:, 0] = 0.0
        return E.detach()

    return fit


def torch_memn2n_accuracy(torch, est, E, X, y) -> float:
    """Accuracy (%) on X, y of the PyTorch MemN2N weights ``E`` of
    :func:`torch_memn2n_run` (whose ``est`` holds the encoding)."""
    from irdialog.text import LabelIndex

    enc = est._encode(check_contexts(X))
    t = _memn2n_tensors(torch, est, enc)
    mtime = _slot_tensor(torch, enc.mptr, enc.mtime, t["slots"])
    with torch.no_grad():
        scores = _memn2n_forward(torch, E, t, mtime, torch.arange(len(y)), est.hops, True)
    gold = LabelIndex(est.candidates_).encode(y, unknown="ignore")
    return 100.0 * float(np.mean(scores.argmax(1).numpy() == gold))


def _slot_tensor(torch, mptr, values, slots):
    """Per example, the values of its memories (the most recent ``slots``) in slots padded
    with 0: (n_examples, slots)."""
    out = np.zeros((len(mptr) - 1, slots), np.int64)
    for e in range(len(mptr) - 1):
        v = values[max(mptr[e], mptr[e + 1] - slots) : mptr[e + 1]]
        out[e, : len(v)] = v
    return torch.from_numpy(out)


def _memn2n_tensors(torch, est, enc) -> dict:
    """The padded token tensors of the encoded contexts ``enc``: query and memory words,
    speaker words, the position weights and the candidate bags."""
    dim = est.embedding_dim
    slots = est.memory_slots_
    lengths = np.diff(enc.sptr)
    width = max(int(lengths.max(initial=1)), 1)

    def words(sents):
        out = np.zeros((*sents.shape, width), np.int64)
        for idx in np.ndindex(*sents.shape):
            s = sents[idx]
            if s >= 0:
                out[idx][: lengths[s]] = enc.stok[enc.sptr[s] : enc.sptr[s + 1]]
        return out

    msent = np.full((len(enc.mptr) - 1, slots), -1, np.int64)
    for e in range(len(enc.mptr) - 1):
        s = enc.msent[max(enc.mptr[e], enc.mptr[e + 1] - slots) : enc.mptr[e + 1]]
        msent[e, : len(s)] = s
    speaker = np.where(msent >= 0, enc.sspk[np.maximum(msent, 0)], 0)
    # position weights l_kj of the authors' code (see _memn2n_kernels._pe_coef)
    if est.position_encoding:
        J = est.sentence_length_
        j = np.arange(width)[:, None] + 1.0
        k = np.arange(dim)[None, :] + 1.0
        pe = 1.0 + 4.0 * (k - (dim + 1) / 2.0) * (j - (J + 1) / 2.0) / (dim * J)
    else:
        pe = np.ones((width, dim))
    cptr, ctok, cw = est._cand_ptr_, est._cand_tok_, est._cand_w_
    n_cand = len(cptr) - 1
    cwidth = max(int(np.diff(cptr).max(initial=1)), 1)
    cand = np.zeros((n_cand, cwidth), np.int64)
    cand_w = np.zeros((n_cand, cwidth), np.float32)
    for j in range(n_cand):
        n = cptr[j + 1] - cptr[j]
        cand[j, :n] = ctok[cptr[j] : cptr[j + 1]]
        cand_w[j, :n] = cw[cptr[j] : cptr[j + 1]]
    return {
        "query": torch.from_numpy(words(np.asarray(enc.qsent))),
        "memory": torch.from_numpy(words(msent)),
        "speaker": torch.from_numpy(speaker),
        "pe": torch.from_numpy(pe.astype(np.float32)),
        "cand": torch.from_numpy(cand),
        "cand_w": torch.from_numpy(cand_w),
        "slots": slots,
    }


def _memn2n_forward(torch, E, t, mtime, batch, hops, softmax):
    """Candidate scores (len(batch), n_candidates) of the adjacent-tied MemN2N ``E``."""
    pe = t["pe"]
    u = (E[0][t["query"][batch]] * pe).sum(1)
    words, speaker, ages = t["memory"][batch], t["speaker"][batch], mtime[batch]
    mem = [(E[p][words] * pe).sum(2) + E[p][speaker] + E[p][ages] for p in range(hops + 1)]
    for hop in range(hops):
        z = torch.einsum("bmd,bd->bm", mem[hop], u)
        p = torch.softmax(z, dim=1) if softmax else z
        u = u + torch.einsum("bm,bmd->bd", p, mem[hop + 1])
    cand = (E[hops][t["cand"]] * t["cand_w"][..., None]).sum(1)
    return u @ cand.T


def memn2n_rows(suite, task, args, torch, epochs=None) -> list[dict]:
    """The timed MemN2N row of one task of ``suite`` (see the module docstring)."""
    from irdialog.metrics import per_response_accuracy

    workload, params, (X, y), (Xd, yd), make, metric = _memn2n_setting(
        suite, task, args.data_home, epochs
    )
    make().set_params(epochs=1, linear_start=0).fit(X, y)  # compiles (or loads) the kernels
    sides = Sides()
    for t in args.irdialog_threads:
        ours = {}
        sides.add(
            _irdialog_side(t), t,
            lambda ours=ours, t=t: ours.update(model=make(t).fit(X, y)),
            lambda ours=ours: 100.0 * per_response_accuracy(yd, ours["model"].predict(Xd)),
            f"MemN2NRanker, n_jobs={t} ("
            f"{'sequential mini-batch SGD' if t == 1 else 'Hogwild mini-batches'}, numba, "
            "BLAS 1 thread)",
        )  # fmt: skip
    if torch is not None:
        est = make()
        fit = torch_memn2n_run(torch, est, X, y)
        for t in args.torch_threads:
            result = {}
            sides.add(
                _torch_side(t), t, _torch_fit(torch, t, fit, result),
                lambda result=result: torch_memn2n_accuracy(torch, est, result["model"], Xd, yd),
                f"PyTorch {torch.__version__}, CPU, set_num_threads({t}), autograd, dense "
                "gradient",
            )  # fmt: skip
    return [_timed_row(workload, params, sides, args.repeat, len(y), metric)]


class Sides:
    """The sides of a timed row: per name, the fit to time, the score of what it fitted,
    its configuration and the threads it trains on."""

    def __init__(self):
        self.fits, self.scores, self.configs, self.threads = {}, {}, {}, {}

    def add(self, name, threads, fit, score, configuration):
        self.fits[name], self.scores[name] = fit, score
        self.configs[name], self.threads[name] = configuration, threads


def _irdialog_side(threads: int) -> str:
    return "irdialog" if threads == 1 else f"irdialog n_jobs={threads}"


def _torch_side(threads: int) -> str:
    return f"torch {threads} thread{'s' if threads > 1 else ''}"


def _torch_fit(torch, threads, fit, result):
    """A fit of a PyTorch side: ``fit()`` at ``threads`` threads, its model in ``result``."""

    def run():
        torch.set_num_threads(threads)
        result["model"] = fit()

    return run


def leads(seconds: dict, threads: dict) -> dict:
    """Per peer (``torch``, ``starspace``), its ``seconds`` over irdialog's on one training
    thread each, and its fastest over irdialog's fastest (every side at its best thread
    count). Sides are named by their side (``irdialog``, ``irdialog n_jobs=2``, ``torch 2
    threads``, ...) and ``threads`` gives each side's training threads. Above 1, irdialog
    is faster.

    Examples
    --------
    >>> leads({"irdialog": 2.0, "irdialog n_jobs=2": 1.0, "torch 1 thread": 8.0,
    ...        "torch 2 threads": 6.0}, {"irdialog": 1, "irdialog n_jobs=2": 2,
    ...        "torch 1 thread": 1, "torch 2 threads": 2})
    {'torch': {'one thread': 4.0, 'best': 6.0}}
    """
    fastest = min(s for side, s in seconds.items() if side.startswith("irdialog"))
    out = {}
    for peer in ("starspace", "torch"):
        theirs = [side for side in seconds if side.startswith(peer)]
        if not theirs:
            continue
        one = [side for side in theirs if threads[side] == 1]
        out[peer] = {
            "one thread": round(seconds[one[0]] / seconds["irdialog"], 2) if one else None,
            "best": round(min(seconds[side] for side in theirs) / fastest, 2),
        }
    return out


def _timed_row(workload, params, sides, repeat, n_examples, metric) -> dict:
    """Time ``sides`` (:class:`Sides`) in turn, ``repeat`` rounds; each side's best wall
    time, its ratio to irdialog's on one thread, its CPU seconds (all its threads; a
    subprocess's are not counted), its score and its training threads."""
    # no threadpool limit here: it would reach torch's own BLAS (irdialog's fits hold
    # theirs to one thread themselves)
    walls, cpus, _ = alternate(sides.fits, repeat)
    seconds = {name: min(w) for name, w in walls.items()}
    base = seconds["irdialog"]
    row = {
        "workload": workload,
        "params": params,
        "examples": n_examples,
        "metric": metric,
        "seconds": {name: round(s, 3) for name, s in seconds.items()},
        "cpu_seconds": {name: round(min(c), 3) for name, c in cpus.items()},
        # the side's time over irdialog's: above 1, irdialog is faster
        "over_irdialog": {name: round(s / base, 3) for name, s in seconds.items()},
        "configuration": sides.configs,
        "threads": sides.threads,
        "score": {name: round(float(fn()), 2) for name, fn in sides.scores.items()},
    }
    row["leads"] = leads(row["seconds"], sides.threads)
    print(row, flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starspace", default=None, help="the starspace binary")
    ap.add_argument("--starspace-commit", default=None, help="the commit it was built from")
    ap.add_argument("--se-tasks", type=int, nargs="*", default=[1, 5])
    ap.add_argument("--se-epochs", type=int, default=2)
    ap.add_argument("--memn2n-dialog-tasks", type=int, nargs="*", default=[1])
    ap.add_argument("--memn2n-dialog-epochs", type=int, default=None)
    ap.add_argument("--memn2n-tasks", type=int, nargs="*", default=[1])
    ap.add_argument("--memn2n-epochs", type=int, default=None)
    ap.add_argument("--irdialog-threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--torch-threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--starspace-threads", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--output", default=str(RESULTS / "speed" / "training-peers.json"))
    args = ap.parse_args(argv)
    torch = None
    libraries = {}
    if not args.no_torch:
        import torch

        torch.set_num_interop_threads(1)
        libraries["torch"] = metadata.version("torch")
    rows = []
    with record_data_files() as files, tempfile.TemporaryDirectory() as workdir:
        for task in args.se_tasks:
            rows += se_rows(task, args, torch, args.starspace, workdir)
        for task in args.memn2n_dialog_tasks:
            rows += memn2n_rows("dialog-babi", task, args, torch, args.memn2n_dialog_epochs)
        for task in args.memn2n_tasks:
            rows += memn2n_rows("babi-qa", task, args, torch, args.memn2n_epochs)
    peers = {}
    if args.starspace:
        peers["starspace"] = starspace_version(args.starspace, args.starspace_commit)
    fields = {"cores": os.cpu_count(), "repeat": args.repeat, "peers": peers, "rows": rows}
    finish_speed_result(
        "training-peers", fields, argv=argv, files=files, seeds=[0],
        data_home=args.data_home, output=args.output, libraries=libraries,
    )  # fmt: skip


def starspace_version(binary, commit=None) -> dict:
    """The StarSpace build: its binary and the git commit of its source tree (``commit``,
    else that of the git checkout holding the binary, if any)."""
    if commit is None:
        done = subprocess.run(
            ["git", "-C", str(Path(binary).parent), "rev-parse", "HEAD"],
            capture_output=True, text=True,
        )  # fmt: skip
        commit = done.stdout.strip() or None
    return {"binary": str(binary), "commit": commit, "build": "make (its makefile, -O3)"}


def _table(result: dict) -> list[str]:
    lines = [
        f"Whole training runs on a {result['cores']}-core machine: irdialog and each peer at "
        "the thread counts named (the same model and size, epochs, negatives and examples; "
        f"best wall time of {result['repeat']} fits per side, the sides taking turns), and "
        "each fitted model's accuracy. Above 1x, irdialog on one thread is faster:",
        "",
        "| workload | epochs | side | configuration | fit s | side / irdialog | metric "
        "| accuracy |",
        "|---|---:|---|---|---:|---:|---|---:|",
    ]
    for r in result["rows"]:
        epochs = r["params"]["epochs"] + r["params"].get("linear_start", 0)
        for side, seconds in r["seconds"].items():
            lines.append(
                f"| {r['workload']} | {epochs} | {side} | {r['configuration'][side]} "
                f"| {seconds:.2f} | {r['over_irdialog'][side]:.2f}x | {r['metric']} "
                f"| {r['score'][side]:.2f} |"
            )
    return lines + lead_table(result["rows"])


def lead_table(rows) -> list[str]:
    """The Markdown table of the ``leads`` of the ``rows`` that have them."""
    rows = [r for r in rows if r.get("leads")]
    if not rows:
        return []
    lines = [
        "",
        "irdialog's lead (the peer's time over irdialog's): on one training thread each, and "
        "each at its fastest thread count on the machine's cores:",
        "",
        "| workload | peer | one thread | fastest |",
        "|---|---|---:|---:|",
    ]
    for r in rows:
        for peer, lead in r["leads"].items():
            one = "" if lead["one thread"] is None else f"{lead['one thread']:.1f}x"
            lines.append(f"| {r['workload']} | {peer} | {one} | {lead['best']:.1f}x |")
    return lines


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table, ratios=over_irdialog, peers=("torch",), programs={"--starspace": "StarSpace"}
)


if __name__ == "__main__":
    main()
