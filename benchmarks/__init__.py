"""The speed runs, evidence and data generators behind BENCHMARKS.md and benchmarks/NOTES.md.

Run from the repository root as ``python -m benchmarks.<module> --help``. The paper suites
themselves, and the searches that write their presets, are ``irdialog bench`` (the harness
``irdialog.bench``), which these modules import; each takes ``--data-home`` (default:
``$IRDIALOG_DATA``, then the bundled samples). A speed benchmark ends in
:func:`finish_speed_result` (provenance, table, JSON in ``benchmarks/results/speed/``), and
times each comparison with a reference (numpy's matmul, a peer library) in turn with
:func:`alternate`, and declares at its top level what ``irdialog bench report`` and
``irdialog bench reproduce`` read of its results, ``SPEED = SpeedBenchmark(...)``: they
find the script by the command its result records. Every module, what it makes and where
that is shown ("B": BENCHMARKS.md, "N": benchmarks/NOTES.md):

Speed (``results/speed/<name>.json``):

- ``retrieval_speed``: BM25 and TF-IDF against bm25s and rank_bm25 (``retrieval-speed``; B,
  "Sparse retrieval").
- ``pool_speed``: embedding models ranking a million candidates, against faiss
  (``pool-speed``; B, "Embedding models against a million candidates").
- ``training_peers``: supervised embeddings and MemN2N against StarSpace and PyTorch
  (``training-peers``; B, "Training against StarSpace and PyTorch").
- ``training_time_to_accuracy``: supervised embeddings against StarSpace over budgets of
  epochs (``training-time-to-accuracy``; B, same section).
- ``recurrent_speed``: an epoch of the LSTM and RNN against PyTorch (``recurrent-speed-epyc``,
  ``recurrent-speed``; B, "Recurrent models against PyTorch", and N).
- ``speed``, ``speed_memn2n``: supervised embeddings' and MemN2N's training against numpy's
  matmul (``speed``, ``speed-memn2n``; N, "Training speed").
- ``training_threads``: fits on two threads against one (``training-threads-recurrent``,
  ``-memn2n``, ``-se``, ``-memnn``, ``-svm``, ``-qrn``; N, "Training on two threads").
- ``threads_seed_spread``: seeds of the same workloads with ``n_jobs`` 1 and 2, and whether
  the two-thread mean lies inside the one-thread range (printed; N, "Training on two
  threads").
- ``memory_training_time``: MemN2N, the gated MemN2N and QRN on bAbI QA
  (``memory-training-time``; N, "Training time of the memory models").
- ``movie_memn2n_epoch``: where an epoch of the Movie Dialog MemN2N goes, by optimizer
  (``movie-memn2n-epoch``; N, "MemN2N on Movie Dialog").
- ``compile_time``: ``irdialog run --all`` with a cold and a warm numba cache
  (``compile-time``; N, "Compile time").
- ``candidate_lists_speed``: ``rank_candidates`` over answer-selection pools (generated, in
  two scripts, and InsuranceQA with ``--insuranceqa``) against the pair path and a
  scikit-learn pipeline (``candidate-lists-speed``; B, "Speed").
- ``sharded_index``: building and querying a BM25 index in shards on local Dask workers
  against one process (printed; B, "Speed").
- ``index_changes``: adding and deleting 1% of a BM25 index's documents against a full
  build, and queries after the change against a rebuilt index (printed; B, "Speed").
- ``index_size``: a BM25 index of 100M passages in shards on local Dask workers, each
  shard's peak memory against a quarter of the index (``index-size``; N, "An index larger
  than memory").
- ``filtered_queries``: BM25 queries under a filter (``allowed=``) against the same queries
  unfiltered and bm25s's ``weight_mask`` (``filtered-queries``; not yet on a page).
- ``insuranceqa_rankers``: every learned ranker and lever on InsuranceQA valid (printed; B,
  "InsuranceQA").
- ``insuranceqa_word_vectors``: supervised embeddings on InsuranceQA valid started from
  word2vec vectors of the training text (gensim, the ``bench-gensim`` extra) against normal
  draws and PPMI+SVD (printed; not yet on a page).

Evidence for a figure or a shortfall (printed, no result file):

- ``dialog_babi_ties``: the dialog bAbI answers decided by a tie, and the accuracy with ties
  counted against the model (N, the supervised-embedding, MemN2N and QRN sections).
- ``dialog_state_dev``: dev and renamed-dev evidence for the dialog-state and KB-rank marks
  (N, "MemN2N with the dialog state").
- ``tfidf_type_task4_dev``: every TF-IDF + match type variant on task 4 dev (N, "IR
  baselines").
- ``rule_based_coverage``: the rule-based bot on task 6 by kind of response (N, "IR
  baselines").
- ``movie_dialog_learning_curve``, ``movie_dialog_coverage``: held-out score against the
  data used, and how much of test dev covers (N, "Movie Dialog").
- ``ubuntu_cooccurrence_probe``: the topic signal a counting probe finds in a generated
  Ubuntu corpus (N, "Ubuntu: dual encoders").
- ``cluster_fit_dev``: supervised embeddings or the dual encoder fitted over a dask bag on
  local Dask workers (iterative parameter mixing) against one process, dialog bAbI dev
  accuracy and wall time (printed; not yet on a page).
- ``cluster_fit_ubuntu``: the dual encoder fitted over a dask bag on local Dask workers
  against one process, valid R@1 of 10 and wall time on an Ubuntu-layout corpus (printed;
  not yet on a page).
- ``fastmath_error``: the worst errors of the fast float32 exp, sigmoid and tanh over every
  input (the accuracy stated in ``irdialog/embed/_fastmath.py``).

Data sets and pictures:

- ``make_shuffled_babi``, ``make_hindi_babi``: the shuffled and Hindi-like bAbI QA copies
  (the ``-shuffled`` and ``-hn-synth`` results; B and N, "bAbI QA in other languages").
- ``make_ubuntu_corpus``: generated Ubuntu v2-format corpora (the ``ubuntu-synthetic-*``
  results and the retrieval speed's ``ubuntu`` corpus).
- ``make_nospace_dialog_babi``: dialog bAbI task 1 written without spaces, to run the
  ``tokenizer="char"`` path on it (its docstring gives the commands; no page shows a result).
- ``gallery``: the pictures of ``irdialog.plot`` in ``docs/gallery/`` and ``docs/gallery.md``.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class SpeedBenchmark:
    """What a speed script declares of its results (``SPEED = SpeedBenchmark(...)`` at its
    top level), read by ``irdialog bench report`` and ``irdialog bench reproduce``.

    ``table(result)``: the lines of its Markdown table (printed by
    :func:`finish_speed_result` too); ``ratios(result)``: ``{name: ratio}`` of sides timed
    in the same run, the figures a re-run must repeat (None: the results have none);
    ``peers``: the libraries (import names) beyond irdialog's dependencies it times
    irdialog against, and ``programs``: ``{option: program}`` for the options of its
    command naming a program it runs; without them a re-run is "not run (needs ...)".
    """

    table: Callable[[dict], list[str]]
    ratios: Callable[[dict], dict] | None = None
    peers: tuple = ()
    programs: dict = field(default_factory=dict)


def per_row_ratios(label, keys):
    """``ratios`` of a :class:`SpeedBenchmark`: the ``keys`` of every row, named by
    ``label(row)`` and the key."""

    def ratios(result):
        return {
            f"{label(row)} {key}": row[key]
            for row in result["rows"]
            for key in keys
            if row.get(key) is not None
        }

    return ratios


def over_irdialog(result, suffix=""):
    """``ratios`` of a peer comparison: each peer's time over irdialog's, per workload."""
    return {
        f"{row['workload']} {side} / irdialog{suffix}": ratio
        for row in result["rows"]
        for side, ratio in row["over_irdialog"].items()
        if side != "irdialog"
    }


def machine_cpu_seconds() -> float | None:
    """CPU seconds every process of the machine has run (Linux's /proc/stat; None
    elsewhere)."""
    try:
        with open("/proc/stat") as f:
            user, nice, system = (int(v) for v in f.readline().split()[1:4])
    except OSError:
        return None
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of the children it waited for (a
    peer run as a program)."""
    own = time.process_time()
    try:
        import resource

        children = resource.getrusage(resource.RUSAGE_CHILDREN)
    except ImportError:  # not on Windows
        return own
    return own + children.ru_utime + children.ru_stime


_STARTED = (time.perf_counter(), _own_cpu_seconds(), machine_cpu_seconds())


def machine_load() -> dict | None:
    """What the rest of the machine ran since this package was imported (the start of a
    speed run): ``{"wall_seconds", "others_cpu_seconds"}``, the CPU seconds of every other
    process. A speed figure is only as good as this is small. None where the OS does not
    say (Linux's /proc/stat)."""
    wall, own, machine = _STARTED
    now = machine_cpu_seconds()
    if machine is None or now is None:
        return None
    others = (now - machine) - (_own_cpu_seconds() - own)
    return {
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "others_cpu_seconds": round(max(others, 0.0), 1),
    }


def alternate(work: dict, repeat: int, *, warm_up: bool = False):
    """Call each function of ``work`` in turn, ``repeat`` rounds, so that a busy spell of a
    shared machine (or a drift of its clock speed) hits every side alike.

    Parameters
    ----------
    work : dict of str to callable
        The sides, called without arguments.
    repeat : int
    warm_up : bool, default=False
        Call each side once, untimed, first (compilation, caches, the allocator).

    Before each call the garbage collector runs, untimed (``gc.collect``), so that a
    collection of what earlier calls left does not land on whichever side comes next: a
    full collection after a fit's text encoding costs 0.1 s, two-thirds of a 10-epoch
    supervised-embedding fit, and fell on every other fit of one side.

    Returns
    -------
    wall, cpu : dict of str to list of float
        Every call's wall seconds (``time.perf_counter``) and CPU seconds of this process
        (``time.process_time``: with one thread per side, the work done whatever else runs).
    last : dict of str to object
        Each side's last return value.
    """
    if warm_up:
        for fn in work.values():
            fn()
    wall = {name: [] for name in work}
    cpu = {name: [] for name in work}
    last = {}
    for _ in range(repeat):
        for name, fn in work.items():
            gc.collect()
            c, t = time.process_time(), time.perf_counter()
            last[name] = fn()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    return wall, cpu, last


def best_times(wall: dict, cpu: dict) -> dict:
    """The timing fields of a row whose sides :func:`alternate` timed: each side's best
    wall and CPU seconds (``seconds``, ``cpu_seconds``) and every wall time (``times``).

    Examples
    --------
    >>> best_times({"ours": [0.5, 0.25]}, {"ours": [0.5, 0.5]})
    {'seconds': {'ours': 0.25}, 'cpu_seconds': {'ours': 0.5}, 'times': {'ours': [0.5, 0.25]}}
    """
    return {
        "seconds": {side: min(times) for side, times in wall.items()},
        "cpu_seconds": {side: min(times) for side, times in cpu.items()},
        "times": wall,
    }


def table_lines(caption: str, header: list[str], align: str, rows) -> list[str]:
    """The lines of a speed script's table: ``caption``, a blank line, then the Markdown
    table of the columns ``header``, aligned by ``align`` (a letter a column: ``l`` left,
    ``r`` right, ``c`` centred), and ``rows`` (each a list of its cells' text).

    Examples
    --------
    >>> table_lines("Best of 3:", ["side", "s"], "lr", [["ours", "1.5"]])
    ['Best of 3:', '', '| side | s |', '|---|---:|', '| ours | 1.5 |']
    """
    rules = {"l": "---", "r": "---:", "c": ":---:"}
    return [
        caption,
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(rules[a] for a in align) + "|",
        *("| " + " | ".join(cells) + " |" for cells in rows),
    ]


def finish_speed_result(
    name, fields, *, argv, files=(), seeds=(), data_home=None, output=None, libraries=None
):
    """The JSON of a speed benchmark: ``{"benchmark": name, **fields, "machine_load",
    "provenance"}`` (:func:`machine_load`), printed as its BENCHMARKS.md table (the
    ``SPEED`` declaration of ``benchmarks/<name>.py``, ``-`` written ``_``) and written to
    ``output`` (when given). ``libraries`` adds versions to the provenance's (a peer such
    as torch)."""
    from irdialog.bench import provenance

    module = name.replace("-", "_")
    record = provenance(
        command=["python", "-m", f"benchmarks.{module}", *(sys.argv[1:] if argv is None else argv)],
        seeds=seeds,
        files=files,
        data_home=data_home,
    )
    record["libraries"].update(libraries or {})
    load = machine_load()
    result = {"benchmark": name, **fields, "machine_load": load, "provenance": record}
    print("\n".join(importlib.import_module(f"{__name__}.{module}").SPEED.table(result)))
    if output:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def invented_words(rng, n_words: int, script: str) -> np.ndarray:
    """``n_words`` distinct invented words drawn with ``rng`` (a numpy ``Generator``): of
    lower-case Latin letters (``script="spaces"``, 2 to 9 letters), or of one to three
    characters of an alphabet of 3,000 CJK ideographs drawn from the U+4E00 block
    (``"no-spaces"``, a script written without spaces). Each draw's length is uniform, the
    draws repeating a word dropped (so at most 3,000 words of one character).

    Examples
    --------
    >>> words = invented_words(np.random.default_rng(0), 4, "no-spaces")
    >>> len(set(words)), all(1 <= len(w) <= 3 for w in words)
    (4, True)
    >>> all("\u4e00" <= c <= "\u9fff" for w in words for c in w)
    True
    """
    if script == "spaces":
        letters, lengths = np.array(list("abcdefghijklmnopqrstuvwxyz")), (2, 10)
    else:
        letters = np.array([chr(0x4E00 + i) for i in rng.permutation(20_000)[:3_000]])
        lengths = (1, 4)
    words: dict[str, None] = {}
    while len(words) < n_words:
        n = rng.integers(*lengths)
        words.setdefault("".join(rng.choice(letters, n)), None)
    return np.array(list(words), dtype=object)


def babi_workload(
    model: str, name: str, task: int, data_home=None, epochs=None, **overrides
) -> dict:
    """A training workload of :mod:`benchmarks.training_threads`: ``model`` of ``irdialog
    bench babi-qa`` at its preset for one task (``epochs`` capped when given, and the
    parameters ``overrides`` set), fitted as the suite fits it (with the supporting facts
    of the strongly supervised models) and scored as ``--heldout`` does: on the first
    share of the training stories, scored on the rest (the test file is never read)."""
    from irdialog.bench._babi_qa import BABI_QA_MODELS, SUITE_NAME, valid_split
    from irdialog.datasets import load_babi_qa
    from irdialog.metrics import per_response_accuracy

    spec = BABI_QA_MODELS[model]
    [point] = spec.selection.points(SUITE_NAME, task)
    params = {**point, **overrides, **({} if epochs is None else {"epochs": epochs})}
    train = load_babi_qa(task, "train", data_home=data_home)
    fit_rows, valid_rows = next(valid_split(train.groups, spec.selection.fraction).split())

    def rows(which):
        return [train.X[i] for i in which], [train.y[i] for i in which]

    (X, y), (Xv, yv) = rows(fit_rows), rows(valid_rows)
    # what else the model's fit takes (the supporting facts of the strongly supervised)
    given = spec.fit_params(train) if spec.fit_params else {}
    extra = {k: [v[i] for i in fit_rows] for k, v in given.items()}
    capped = "" if epochs is None else f", epochs capped at {epochs}"
    held = round(100 * spec.selection.fraction)
    return {
        "name": f"{name}, bAbI QA task {task}{capped}",
        "make": lambda n_jobs: _as_bench_builds(spec.build(**params), n_jobs),
        "fit": lambda est: est.fit(X, y, **extra),
        "score": lambda est: 100.0 * per_response_accuracy(yv, est.predict(Xv)),
        "metric": f"held-out accuracy % (the last {held}% of the training stories)",
    }


def dialog_babi_workload(model: str, name: str, task: int, data_home=None, epochs=None):
    """A training workload of :mod:`benchmarks.training_threads`: ``model`` of ``irdialog
    bench dialog-babi`` at its preset for one task (``epochs`` capped when given), fitted
    on trn and scored on dev (per-response accuracy)."""
    from irdialog.bench._dialog_babi import DIALOG_BABI_MODELS, SUITE_NAME
    from irdialog.datasets import load_dialog_babi
    from irdialog.metrics import per_response_accuracy

    spec = DIALOG_BABI_MODELS[model]
    [point] = spec.selection.points(SUITE_NAME, task)
    params = {**point, **({} if epochs is None else {"epochs": epochs})}
    train = load_dialog_babi(task, "trn", data_home=data_home)
    dev = load_dialog_babi(task, "dev", data_home=data_home)
    capped = "" if epochs is None else f", epochs capped at {epochs}"
    return {
        "name": f"{name}, dialog bAbI task {task}{capped}",
        "make": lambda n_jobs: _as_bench_builds(spec.build(train, **params), n_jobs),
        "fit": lambda est: est.fit(train.X, train.y),
        "score": lambda est: 100.0 * per_response_accuracy(dev.y, est.predict(dev.X)),
        "metric": "dev per-response accuracy %",
    }


def _as_bench_builds(estimator, n_jobs):
    """``estimator`` at seed 0 with every ``n_jobs`` (a pipeline's steps' too) set, as
    ``irdialog bench --threads`` sets them (:func:`irdialog.bench.reseed`)."""
    from irdialog.bench import fit_threads, reseed

    with fit_threads(n_jobs):
        return reseed(estimator, 0)


def same_weights(a, b) -> bool:
    """Whether two fitted models of :func:`cluster_fit_rows` (supervised embeddings or a
    dual encoder) hold the same weights, bit for bit."""
    if hasattr(a, "_all_params"):  # the dual encoder
        pa, pb = a._all_params(), b._all_params()
        return all(np.array_equal(pa[k], pb[k]) for k in pa)
    return np.array_equal(a.input_embeddings_, b.input_embeddings_) and np.array_equal(
        a.response_embeddings_, b.response_embeddings_
    )


def warm_up_cluster_models() -> None:
    """A tiny fit of each model :func:`cluster_fit_rows` runs, on each worker before the
    clock: the imports and the numba kernels loaded."""
    from irdialog import DualEncoderRanker, SupervisedEmbeddingRanker

    SupervisedEmbeddingRanker(epochs=1, random_state=0).fit(["a b", "c d"], ["x", "y"])
    DualEncoderRanker(hidden_size=2, embedding_dim=2, epochs=1, random_state=0).fit(
        ["a b", "c d"], ["x", "y"]
    )


def cluster_fit_rows(make, chunks, score, *, partitions, workers, bag_epochs):
    """The rows of :mod:`benchmarks.cluster_fit_dev` and :mod:`benchmarks.cluster_fit_ubuntu`:
    ``make(scale)`` (an estimator at ``scale`` times its epochs) fitted by ``fit_chunks`` over
    the list ``chunks`` in process, then over a bag of them in each count of ``partitions``
    on a ``LocalCluster`` of ``workers`` one-thread processes
    (:func:`warm_up_cluster_models` run on each before the clock), the bag fits at
    ``bag_epochs`` times the epochs. Each row: (label, ``score(model)``, wall seconds, and
    with one partition and as many epochs, :func:`same_weights` of the model and the
    in-process one, as a string). The load averages are printed around it."""
    import dask.bag as db
    import distributed

    print("load averages before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    start = time.perf_counter()
    ref = make(1.0).fit_chunks(chunks)
    rows = [(f"in process, {ref.n_iter_} epochs", score(ref), time.perf_counter() - start, "")]
    with (
        distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.run(warm_up_cluster_models)
        for n_parts in partitions:
            bag = db.from_sequence(chunks, npartitions=n_parts)
            start = time.perf_counter()
            model = make(bag_epochs).fit_chunks(bag, client=client)
            seconds = time.perf_counter() - start
            one = bag.npartitions == 1 and model.n_iter_ == ref.n_iter_
            label = f"{bag.npartitions} partitions, {workers} workers, {model.n_iter_} epochs"
            rows.append(
                (label, score(model), seconds, str(same_weights(model, ref)) if one else "")
            )
    print("load averages after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return rows
