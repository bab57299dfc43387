"""Ubuntu Dialogue Corpus suite: next-utterance ranking, R@1 of 2 and R@1, R@2, R@5 of 10.

Lowe et al. (2015, Table 4) and Dodge et al. (2016, Table 7), and BM25 beyond the papers.
TF-IDF, BM25 and supervised embeddings are fitted on the training file by streaming it in
chunks (:func:`irdialog.datasets.iter_ubuntu` into ``fit_chunks``), so the full 1M-row corpus
needs memory for one chunk plus the vocabulary (and, for the embeddings, the training set as
integer arrays); MemN2N holds its training rows in memory. Each test row's ground truth
and 9 distractors are scored with ``rank_candidates`` (the ground truth is column 0, a tie
counted at its expected value). The only genuine Ubuntu data here is a 100-row sample of the v2
corpus (``ubuntu-sample``): its numbers are a smoke test, not a reproduction.

Run (from the repository root)::

    # the 100-row genuine sample
    irdialog bench ubuntu --data-home DIR
    # the full-size streaming run on a generated v2-format corpus
    python -m benchmarks.make_ubuntu_corpus --out /tmp/ubuntu-1m
    irdialog bench ubuntu --data-home /tmp/ubuntu-1m --chunksize 50000

"""

from __future__ import annotations

import resource
import time
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..datasets import iter_ubuntu
from ..embed import DualEncoderRanker, MemN2NRanker, SupervisedEmbeddingRanker
from ..metrics import recall_at_k
from ..retrieval import BM25Ranker, TfidfRanker
from ._paper import paper_table
from ._provenance import peak_rss_mib
from ._suite import ModelSpec, Selection, Suite, markdown_table, positive_int, spread

SUITE_NAME = "ubuntu"
CHUNKSIZE = 10_000  # training and evaluation rows per chunk, by default

# (metric, k, n): "r1@2" is 1-in-2 R@1, "r5@10" is 1-in-10 R@5.
UBUNTU_METRICS = [("r1@2", 1, 2), ("r1@10", 1, 10), ("r2@10", 2, 10), ("r5@10", 5, 10)]
UBUNTU_METRIC_NAMES = [metric for metric, _, _ in UBUNTU_METRICS]
# A model's ``paper``: the rows (source, method) of irdialog/data/reference/ubuntu_tables.csv
# it is compared with, in %: Lowe et al. Table 4 (v1 corpus) and Dodge et al. Table 7 (v2;
# their "IR" was run by Lowe et al.; hits@1 of 10 only); none for a model beyond them.

_SOURCE_NAMES = {
    "lowe2015_v1": "Lowe et al. 2015, v1 corpus",
    "dodge2016_v2": "Dodge et al. 2016, v2 corpus",
}


def _paper(task, split, paper_rows) -> dict:
    """``{metric: {source: value}}`` of the papers' test rows ``paper_rows``, whatever the
    split scored."""
    rows = {(r["source"], r["method"], r["split"]): r for r in paper_table("ubuntu_tables.csv")}
    figures = {m: {} for m in UBUNTU_METRIC_NAMES}
    for source, method in paper_rows:
        row = rows[(source, method, "test")]
        for m in UBUNTU_METRIC_NAMES:
            if row[m.replace("@", "_of_")]:
                figures[m][source] = float(row[m.replace("@", "_of_")])
    return figures


# How a tie of the ground truth with distractors counts, in the protocol note.
_TIE_RULE = {
    "expected": "a tie at its expected value",
    "index": "ties to the ground truth",
    "pessimistic": "ties counted against the model",
}
# How a model's fixed parameters were chosen, where it is not the papers' setting: the
# protocol note of its rows and the "search" of its ``chosen``.
_NO_SEARCH = "no hyper-parameter search (use_history=True, as Lowe et al. match the whole context)"
_BM25_CHOICE = (
    "use_history, k1 and b chosen on the valid split of ubuntu-sample before test was "
    "scored (grid use_history True/False x k1 0.5/1.2/2.0 x b 0.25/0.75/1.0, method "
    "lucene; the highest R@1 of 10, ties to the higher R@2 of 10, R@5 of 10, R1@2 in "
    "turn, then the first point in that order), and used unchanged on every corpus"
)


def _build(estimator, train, **params):
    """``estimator(**params)``; an error naming a parameter it lacks (``--set``)."""
    known = estimator().get_params()
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(
            f"{estimator.__name__} has no hyper-parameter {', '.join(unknown)}; "
            f"it has {', '.join(sorted(known))}"
        )
    return estimator(**params)


def _model(estimator, params, paper=(), rows="positive", note=None):
    """An Ubuntu model: ``params`` fixed (no search: the sample has no room for one);
    ``rows``: what it learns from, every context and response ("all") or the rows labelled
    1 ("positive"), whose responses are then its candidates."""
    return ModelSpec(
        paper, partial(_build, estimator), Selection.fixed(params, note), extra={"rows": rows}
    )


# TF-IDF takes its statistics from every context and response; the embedding models learn
# from the rows labelled 1. MemN2N keeps the paper's learning rate and hops (appendix B:
# 0.001, 1 hop) with 32 dimensions instead of 256 for time.
UBUNTU_MODELS: dict[str, ModelSpec] = {
    "tfidf": _model(
        TfidfRanker, {"use_history": True}, [("lowe2015_v1", "tfidf"), ("dodge2016_v2", "ir")],
        rows="all",
    ),
    # Beyond the papers: Okapi BM25 (Lucene's, bm25s's default), its statistics streamed
    # from every response of the training file (fit_chunks). Its parameters are the best
    # of 18 points on the sample's valid split (R@1 of 10 32.0, next 30.0 at k1=1.2), fixed
    # before test was scored.
    "bm25": _model(
        BM25Ranker, {"method": "lucene", "use_history": True, "k1": 2.0, "b": 1.0},
        rows="all", note=_BM25_CHOICE,
    ),
    "se": _model(
        SupervisedEmbeddingRanker,
        {"use_history": True, "normalize_input": True, "learning_rate": 0.1, "margin": 0.1,
         "epochs": 20, "random_state": 0},
    ),
    "memn2n": _model(
        MemN2NRanker,
        {"hops": 1, "embedding_dim": 32, "learning_rate": 0.001, "memory_size": 20,
         "position_encoding": False, "epochs": 20, "random_state": 0},
        [("dodge2016_v2", "memn2n_1hop")],
    ),
    # Lowe et al. (sections 4.2-4.3): one encoder for context and response, sigma(c^T M r
    # + b), negatives sampled 1:1, Adam, clipping at 10; 100-dimensional embeddings learnt
    # from scratch (theirs: GloVe-initialised, 300). The LSTM has 200 units; the RNN 50,
    # with their orthogonal W_h and W_x in +-0.01, "critical for training the RNNs".
    "lstm-dual": _model(
        DualEncoderRanker,
        {"cell": "lstm", "hidden_size": 200, "embedding_dim": 100, "max_length": 160,
         "learning_rate": 0.001, "epochs": 10, "random_state": 0},
        [("lowe2015_v1", "lstm"), ("dodge2016_v2", "lstm")],
    ),
    "rnn-dual": _model(
        DualEncoderRanker,
        {"cell": "rnn", "hidden_size": 50, "weight_init": "orthogonal", "embedding_dim": 100,
         "max_length": 160, "learning_rate": 0.001, "epochs": 10, "random_state": 0},
        [("lowe2015_v1", "rnn"), ("dodge2016_v2", "rnn")],
    ),
}  # fmt: skip


def _positive_rows(chunks):
    """(X, y) of the rows labelled 1 of each training chunk; an error naming the file when
    it has none (a model trained on them would have nothing to learn from)."""
    n_positive, path = 0, None
    for chunk in chunks:
        path = chunk.filename
        keep = np.flatnonzero(chunk.labels == 1)
        n_positive += len(keep)
        if len(keep):  # a chunk of negatives only is skipped, not passed on empty
            yield [chunk.X[i] for i in keep], [chunk.y[i] for i in keep]
    if not n_positive:
        raise ValueError(f"{path}: no row labelled 1, so no response to train on.")


def cpu_seconds() -> float:
    """User + system CPU time of this process so far (wall time depends on machine load)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _in_data_home(path) -> str:
    """A corpus file as the data home lays it out (``ubuntu-sample/train.csv``): the same
    on every machine, whatever the home's own path."""
    path = Path(path)
    return f"{path.parent.name}/{path.name}"


def _load(task, split, data_home, chunksize=CHUNKSIZE) -> Bunch:
    """A split as its chunks (``chunks()`` reads them again at each call), the file looked
    up at once; an evaluation file's first row read too, so that a missing or malformed
    one fails before the (long) fit. ``fit`` and ``score`` note on it what they read."""
    iter_ubuntu(split, data_home=data_home, chunksize=chunksize)
    if split != "train":
        next(iter(iter_ubuntu(split, data_home=data_home, chunksize=1)), None)
    chunks = partial(iter_ubuntu, split, data_home=data_home, chunksize=chunksize)
    return Bunch(split=split, chunks=chunks, chunksize=chunksize)


def _fit(ranker, train, spec) -> None:
    """Fit on the training file by streaming (``fit_chunks``), or on its rows held in
    memory; ``train`` notes the rows read and the time and memory the fit took."""
    start = time.perf_counter()
    train.rows = 0

    def counted(chunks):
        for chunk in chunks:
            train.path = _in_data_home(chunk.filename)
            train.rows += len(chunk.X)
            yield chunk
        train.read = {"seconds": time.perf_counter() - start, "cpu": cpu_seconds()}

    stream = counted(train.chunks())
    if spec.extra["rows"] == "positive":
        stream = _positive_rows(stream)
    if hasattr(ranker, "fit_chunks"):
        ranker.fit_chunks(stream)
    else:
        X, y = [], []
        for X_chunk, y_chunk in stream:
            X.extend(X_chunk)
            y.extend(y_chunk)
        ranker.fit(X, y)
    train.fitted = {"seconds": time.perf_counter() - start, "cpu": cpu_seconds(),
                    "peak": peak_rss_mib()}  # fmt: skip


def _score(ranker, data, ties="expected") -> dict:
    """R@k of n (%) of each row's ground truth (column 0) among its candidates, ranked a
    chunk at a time with ``rank_candidates``; a metric of more candidates than the rows
    have is left out. ``data`` notes the file and the time scoring took."""
    start = time.perf_counter()
    scores = []
    for chunk in data.chunks():
        data.path = _in_data_home(chunk.filename)
        scores.append(ranker.rank_candidates(chunk.X, chunk.candidate_lists))
    width = max(s.shape[1] for s in scores)
    scores = np.vstack(
        [np.pad(s, ((0, 0), (0, width - s.shape[1])), constant_values=-np.inf) for s in scores]
    )
    data.seconds, data.n = time.perf_counter() - start, len(scores)
    figures = {
        metric: 100.0 * recall_at_k(scores, k, n, ties=ties)
        for metric, k, n in UBUNTU_METRICS
        if scores.shape[1] >= n
    }
    return {**figures, "n": len(scores)}


def _splits(data) -> tuple[Bunch, Bunch]:
    """The training split and the scored one of a run's data."""
    [evaluation] = [v for k, v in data.items() if k != "train"]
    return data["train"], evaluation


def _protocol(spec, ranker, data, ties) -> str:
    train, evaluation = _splits(data)
    learned = (
        f"every context and response of {train.path} ({train.rows} rows)"
        if spec.extra["rows"] == "all"
        else f"the rows labelled 1 of {train.path} ({train.rows} rows read)"
    )
    how = (
        f"read by streaming in chunks of {train.chunksize} rows (fit_chunks); "
        if hasattr(ranker, "fit_chunks")
        else "held in memory (fit); "
    )
    return (
        f"{type(ranker).__name__} fitted on {learned}, {how}{evaluation.split} rows from "
        f"{evaluation.path} scored with rank_candidates, ground truth in column 0, "
        f"{_TIE_RULE[ties]}; {spec.selection.note or _NO_SEARCH}."
    )


def _resources(spec, ranker, data) -> dict:
    """A run's ``resources`` (see :func:`bench_ubuntu`)."""
    train, evaluation = _splits(data)
    vectorizer = getattr(ranker, "vectorizer_", ranker)
    return {
        "fit_seconds": round(train.fitted["seconds"], 2),
        "fit_cpu_seconds": round(train.fitted["cpu"], 2),
        "read_seconds": round(train.read["seconds"], 2),
        "read_cpu_seconds": round(train.read["cpu"], 2),
        "cpu_seconds": round(cpu_seconds(), 2),
        "eval_seconds": round(evaluation.seconds, 2),
        "train_rows": train.rows,
        "eval_rows": evaluation.n,
        "vocabulary": len(vectorizer.vocabulary_),
        "peak_rss_mib_after_fit": round(train.fitted["peak"], 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }


def bench_ubuntu(
    model: str = "tfidf",
    data_home=None,
    progress: bool = True,
    chunksize: int = CHUNKSIZE,
    split: str = "test",
    seed: int = 0,
    overrides: dict | None = None,
    ties: str = "expected",
) -> dict:
    """Fit on the Ubuntu training file by streaming, report R@k on ``split``.

    Parameters
    ----------
    model : str, default="tfidf"
        A key of ``UBUNTU_MODELS``. A model with ``fit_chunks`` (TF-IDF, BM25, supervised
        embeddings) is fitted by streaming the training file; MemN2N holds its training
        rows in memory.
    data_home : path-like, default=None
        Holds ``ubuntu/`` (the full corpus) or ``ubuntu-sample/``.
    progress : bool, default=True
    chunksize : int, default=10000
        Rows per chunk, both when fitting and when scoring.
    split : {"test", "valid"}, default="test"
    seed : int, default=0
        The ``random_state`` of the model.
    overrides : dict, default=None
        Hyper-parameters replacing the model's preset ones (``--set NAME=VALUE``), e.g.
        ``{"epochs": 1}`` to time one epoch over the full corpus.
    ties : {"expected", "index", "pessimistic"}, default="expected"
        How the ground truth tied with distractors counts (``recall_at_k``'s ``ties``): at
        its expected value under a random order of the tied candidates, or against the
        model (``"index"`` would always give the ground truth, in column 0, the tie).

    Returns
    -------
    run : dict
        ``{"suite": "ubuntu", "model", "options", "chosen", "rows", "protocol", "resources",
        "seconds"}``; rows ``{"task", "split", "metric", "n", "paper", "value"}`` in
        percent; resources hold the fit and scoring wall times, the process CPU time (user +
        system, since start, imports included) at the end of the fit and at the end, the
        wall and CPU time until the last training chunk was read (for TF-IDF the whole fit;
        for the embedding models the reading and tokenising before their epochs), the rows
        and vocabulary seen and the peak RSS.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from irdialog.bench import bench_ubuntu
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "ubuntu").mkdir()
    >>> _ = (home / "ubuntu" / "train.csv").write_text(
    ...     "Context,Utterance,Label\\n"
    ...     "mount usb __eou__ __eot__,sudo mount usb __eou__,1\\n"
    ...     "no sound __eou__ __eot__,restart pulseaudio __eou__,1\\n")
    >>> _ = (home / "ubuntu" / "test.csv").write_text(
    ...     "Context,Ground Truth Utterance,Distractor_0\\n"
    ...     "mount usb __eou__ __eot__,sudo mount usb __eou__,restart pulseaudio __eou__\\n"
    ...     "pulseaudio mute __eou__ __eot__,restart pulseaudio __eou__,sudo mount usb __eou__\\n")
    >>> run = bench_ubuntu("tfidf", data_home=home, progress=False)
    >>> [(row["metric"], row["value"]) for row in run["rows"]]
    [('r1@2', 100.0)]
    """
    return SUITE.run(
        model, data_home=data_home, progress=progress, seed=seed, overrides=overrides,
        ties=ties, split=split, chunksize=chunksize,
    )  # fmt: skip


def markdown(results) -> list[str]:
    """A row per file (the data read, the split, R@k, peak memory and time), then a row per
    paper figure of the block's models, in the same columns, each once."""
    header = ["model", "data", "split", *UBUNTU_METRIC_NAMES, "peak RSS (MiB)", "time (s)"]
    body = []
    papers: dict[tuple[str, str], dict[str, float]] = {}
    for _name, r in results:
        rows = SUITE.rows(r)
        values = {row.metric: row for row in rows}
        for row in rows:
            for source, value in (row.paper or {}).items():
                papers.setdefault((r["model"], source), {})[row.metric] = value
        data = ", ".join(sorted({f["path"].split("/")[0] for f in r["provenance"]["data"]}))
        body.append(
            [
                r["model"],
                data,
                r["options"].get("split", "test"),
                *(spread(values[m]) if m in values else "" for m in UBUNTU_METRIC_NAMES),
                f"{r['resources']['peak_rss_mib']:,.0f}",
                f"{r['seconds']:.0f}",
            ]
        )
    for (model, source), figures in papers.items():
        cells = [f"*{figures[m]}*" if m in figures else "" for m in UBUNTU_METRIC_NAMES]
        body.append([model, f"*{_SOURCE_NAMES.get(source, source)}*", "", *cells, "", ""])
    return markdown_table(header, body)


def _arguments(parser) -> None:
    parser.add_argument(
        "--chunksize", type=positive_int, default=CHUNKSIZE, help="training rows per chunk"
    )
    parser.add_argument(
        "--split", choices=("test", "valid"), default="test", help="the split scored"
    )


def _bind(split="test", chunksize=CHUNKSIZE) -> dict:
    """The split scored (``--split``) and the rows per chunk (``--chunksize``)."""
    return {"scored": (split,), "load": partial(_load, chunksize=chunksize)}


SUITE = Suite(
    name=SUITE_NAME,
    help="Ubuntu next-utterance ranking, R@k of 2 and of 10",
    models=UBUNTU_MODELS,
    table=markdown,
    load=_load,
    score=_score,
    ties=True,
    metrics=tuple(UBUNTU_METRIC_NAMES),
    layout="long",
    dev_split=None,
    paper=_paper,
    fit=_fit,
    protocol=_protocol,
    resources=_resources,
    bind=_bind,
    task_name="ubuntu",
    overrides="override a hyper-parameter of the model's preset (repeatable), e.g. epochs=1",
    arguments=_arguments,
    options=lambda args: {"split": args.split, "chunksize": args.chunksize},
    plot_label=lambda row: row.metric + ("" if row.split == "test" else f"\n{row.split}"),
)
