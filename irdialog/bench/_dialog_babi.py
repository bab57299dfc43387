"""Dialog bAbI suite (Bordes et al. 2017, Table 2): per-response and per-dialog accuracy.

For each task, a model is fitted on trn for every point of its grid (or with its preset,
``irdialog/data/presets/dialog-babi-<model>.json``), the point with the best dev accuracy is
kept and scored on tst and tst-OOV. With ``heldout=True`` only dev is scored (the test
files are never loaded): with ``overrides`` this is how presets are tuned
(``irdialog bench dialog-babi --heldout --set NAME=VALUE``).

The supervised-embedding presets are written by :func:`search_dialog_babi` (``irdialog
bench dialog-babi --model se|se-type|se-bigrams --search``), on the dev sets only:

1. ``use_history``, ``embedding_dim`` and ``n_negatives`` are the paper's own dev choices
   per task (Bordes et al. 2016, Table 8: :data:`TABLE8`).
2. ``se``: a grid of learning rate x margin (x ``normalize_input`` for whole-conversation
   inputs, see :func:`se_search_grid`); each point is trained on trn with early stopping on
   dev (hits@1 after every epoch, patience 20, or ``--patience``) at seed 0, and the point
   with the best dev accuracy wins (ties: the first grid point). Its epoch count is then
   chosen on dev too: with ``--seeds N`` the chosen point is also trained at seeds 1..N-1
   and ``epochs`` is the epoch of the best mean dev accuracy over the N seeds (on the
   epochs every seed ran; ties: the earliest), so that it suits the seeds the bench reports
   rather than seed 0.
3. ``se-bigrams`` searches the same grid as ``se``, with bigrams. ``se-type`` starts from
   the ``se`` preset of the task (its learning rate, margin and input scaling) and searches
   only what it adds: the match-type variant (``"match"``, contexts annotated by a
   ``MatchTypeFeaturizer``; also ``"type"``, the paper's "type regardless of a match", for
   inputs without history) and the type set (the paper's 7 KB types, or all types
   including restaurant names).

A preset fitted with its recorded ``epochs`` and no early stopping reproduces the chosen
model bit for bit (the seed fixes the initialisation, the example order and the negatives;
validation draws no random numbers). Each task's search takes up to about 10 minutes on one
core (``NUMBA_NUM_THREADS=1``); split the longest, those of task 5, with ``--points``. The
MemN2N presets were tuned by hand on dev (``--heldout --set``), as their file says.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..datasets import load_dialog_babi
from ..embed import MemN2NRanker, QRNRanker, SupervisedEmbeddingRanker
from ..features import MatchTypeFeaturizer
from ..metrics import response_accuracy
from ..pipeline import RankingPipeline
from ..retrieval import BM25Ranker, NearestNeighborRanker, RuleBasedRanker, TfidfRanker
from ._harness import reseed, round_metric
from ._paper import paper_table
from ._presets import load_presets
from ._runner import check_model_and_tasks
from ._suite import ModelSpec, Selection, Suite, long_rows, markdown_table, spread
from ._summary import best_of, by_seed, cite, load_result, others, seed_counts, seed_spread

SUITE_NAME = "dialog-babi"
DIALOG_BABI_ROWS = [(t, "tst") for t in range(1, 6)] + [(t, "tst-OOV") for t in range(1, 6)]
DIALOG_BABI_ROWS.append((6, "tst"))

# Bordes et al. 2017, Table 8 (the paper's dev choices): input, dimension, negatives.
TABLE8 = {
    1: dict(use_history=True, embedding_dim=32, n_negatives=100),
    2: dict(use_history=False, embedding_dim=128, n_negatives=100),
    3: dict(use_history=False, embedding_dim=128, n_negatives=1000),
    4: dict(use_history=False, embedding_dim=128, n_negatives=1000),
    5: dict(use_history=True, embedding_dim=32, n_negatives=100),
    6: dict(use_history=False, embedding_dim=128, n_negatives=100),
}
# The early-stopping budget of the search, by use_history: long inputs learn more slowly.
MAX_EPOCHS = {True: 300, False: 150}
PATIENCE = 20
SE_SEARCH_NOTES = [
    "Chosen on the dev split only (tests scored only after each choice): the grid point at "
    "seed 0, its epochs on the mean dev curve of the seeds of the search command (--seeds).",
    "use_history, embedding_dim and n_negatives are the paper's Table 8 choices; se and "
    "se-bigrams search learning rate x margin (x normalize_input, unit-norm input bags, for "
    "whole-conversation inputs) with early stopping on dev (patience 20), epochs = the best "
    "dev epoch; se-type starts from the se preset and searches the match-type variant and the "
    "type set ('paper': the 7 KB types; 'all': those and restaurant names).",
    "A preset fitted with its epochs and no early stopping reproduces the searched model bit "
    "for bit.",
]


def _tfidf(data, **params):
    return TfidfRanker(candidates=data.candidates, **params)


def _kb_types(kb, types: str) -> list[str]:
    """The entity types of ``kb``: "paper" for the paper's seven, "all" for those and
    restaurant names (R_name)."""
    return [t for t in sorted(set(kb.values())) if types == "all" or t != "R_name"]


def _with_match_type(data, ranker, types: str, **marks):
    """``ranker`` behind a MatchTypeFeaturizer over the task's KB (``types``: see
    :func:`_kb_types`; ``marks``: the featurizer's ``dialog_state`` and ``kb_ranks``)."""
    featurizer = MatchTypeFeaturizer(data.kb, types=_kb_types(data.kb, types), **marks)
    return RankingPipeline([("match_type", featurizer), ("ranker", ranker)])


def _typed(build, types: str, **marks):
    """``build`` behind a MatchTypeFeaturizer (:func:`_with_match_type`)."""
    return lambda data, **params: _with_match_type(data, build(data, **params), types, **marks)


_tfidf_type = _typed(_tfidf, "paper")


def _bm25(data, **params):
    # Lucene's BM25 (bm25s's default), fixed rather than searched.
    return BM25Ranker(candidates=data.candidates, **{"method": "lucene", **params})


_bm25_type = _typed(_bm25, "paper")


# BM25's grid: fixed before any test split was scored, small on purpose (18 points; 36 with
# match type), each task's point chosen on dev like TF-IDF's.
_BM25_GRID = {"use_history": [True, False], "k1": [0.5, 1.2, 2.0], "b": [0.25, 0.75, 1.0]}


def _nn(data, **params):
    return NearestNeighborRanker(candidates=data.candidates, **params)


def _rule_based(data, **params):
    return RuleBasedRanker(kb=data.kb, candidates=data.candidates, **params)


def _memn2n(data, **params):
    return MemN2NRanker(candidates=data.candidates, random_state=0, **params)


# Every KB type: the setting the presets were chosen with.
_memn2n_type = _typed(_memn2n, "all")
# memn2n-type with the entities also marked by the dialog state (not in the paper)
_memn2n_state = _typed(_memn2n, "all", dialog_state=True)
# memn2n-state with the options also marked by the rank of their rating (not in the paper)
_memn2n_state_rank = _typed(_memn2n, "all", dialog_state=True, kb_ranks=True)


def _qrn(data, **params):
    return QRNRanker(candidates=data.candidates, random_state=0, **params)


_qrn_type = _typed(_qrn, "all")  # every KB type, as memn2n-type
_qrn_state_rank = _typed(_qrn, "all", dialog_state=True, kb_ranks=True)  # not in the paper


def _se(data, types=None, **params):
    """Supervised embeddings; ``types`` (with ``match_type``): the type set of the match
    types, None for none. ``match_type="type"`` types candidate words itself, from the KB."""
    if params.get("match_type") == "type":
        keep = set(_kb_types(data.kb, types))
        kb = {entity: t for entity, t in data.kb.items() if t in keep}
        return SupervisedEmbeddingRanker(
            candidates=data.candidates, random_state=0, kb=kb, **params
        )
    ranker = SupervisedEmbeddingRanker(candidates=data.candidates, random_state=0, **params)
    return ranker if types is None else _with_match_type(data, ranker, types)


def se_search_grid(model: str):
    """The grid :func:`search_dialog_babi` searches for a supervised-embedding model:
    ``grid(task, presets)`` gives the points of one task (``se-type`` starts from the ``se``
    preset in ``presets``).

    Examples
    --------
    >>> from irdialog.bench._dialog_babi import se_search_grid
    >>> len(se_search_grid("se")(1, {})), len(se_search_grid("se")(2, {}))
    (6, 4)
    """

    def grid(task, presets) -> list[dict]:
        t8 = TABLE8[task]
        if model == "se-bigrams":
            return [dict(point, ngram_range=(1, 2)) for point in se_search_grid("se")(task, {})]
        if model == "se-type":
            if task not in presets:
                raise ValueError(
                    f"se-type starts from the se preset of task {task}: search se first"
                )
            base = {k: v for k, v in presets[task].params.items() if k != "epochs"}
            modes = ("match",) if t8["use_history"] else ("match", "type")
            return [dict(base, match_type=m, types=ts) for m in modes for ts in ("paper", "all")]
        margins = (0.1, 1.0)
        if not t8["use_history"]:
            return [dict(t8, learning_rate=lr, margin=m) for lr in (0.01, 0.05) for m in margins]
        # Whole conversations: raw counts (the paper's bags; larger steps diverge) or
        # unit-norm bags, which take 10-50 times larger steps and converge much faster.
        raw = [dict(t8, learning_rate=0.01, margin=m) for m in margins]
        unit = [
            dict(t8, normalize_input=True, learning_rate=lr, margin=m)
            for lr in (0.1, 0.5)
            for m in margins
        ]
        return raw + unit

    return grid


def _se_spec(paper_column, variant):
    return ModelSpec(paper_column, _se, Selection.preset(variant, search=se_search_grid(variant)))


DIALOG_BABI_MODELS: dict[str, ModelSpec] = {
    "tfidf": ModelSpec("tfidf", _tfidf, Selection.dev_grid({"use_history": [True, False]})),
    "tfidf-type": ModelSpec(
        "tfidf_type",
        _tfidf_type,
        Selection.dev_grid({"use_history": [True, False], "type_weight": [1.0, 3.0]}),
    ),
    # Beyond the paper (no column of Table 2): Okapi BM25 instead of the TF-IDF cosine.
    "bm25": ModelSpec(None, _bm25, Selection.dev_grid(_BM25_GRID)),
    "bm25-type": ModelSpec(
        None, _bm25_type, Selection.dev_grid({**_BM25_GRID, "type_weight": [1.0, 3.0]})
    ),
    "nn": ModelSpec(
        "nearest_neighbor", _nn, Selection.dev_grid({"similarity": ["overlap", "jaccard"]})
    ),
    "rule-based": ModelSpec("rule_based", _rule_based, Selection.dev_grid()),
    "se": _se_spec("supervised_embeddings", "se"),
    "se-type": _se_spec("se_match_type", "se-type"),
    "se-bigrams": _se_spec("se_bigrams", "se-bigrams"),
    # Presets tuned by hand on dev (--heldout --set); the two columns differ on task 4 only.
    "memn2n": ModelSpec("memn2n", _memn2n, Selection.preset("memn2n")),
    "memn2n-type": ModelSpec("memn2n_match_type", _memn2n_type, Selection.preset("memn2n-type")),
    # Seo et al. (2017): QRN 51.1 on task 6; one preset per task serves both columns.
    "qrn": ModelSpec(None, _qrn, Selection.preset("qrn")),
    "qrn-type": ModelSpec(None, _qrn_type, Selection.preset("qrn")),
    "qrn-state-rank": ModelSpec(None, _qrn_state_rank, Selection.preset("qrn")),
    # Beyond Table 2: MemN2N's presets with the gated hops of Liu & Perez (2017).
    "gmemn2n": ModelSpec(None, _memn2n, Selection.preset("gmemn2n")),
    "gmemn2n-type": ModelSpec(None, _memn2n_type, Selection.preset("gmemn2n")),
    # Beyond the paper: memn2n-type's presets, its entities marked by the dialog state too.
    "memn2n-state": ModelSpec(None, _memn2n_state, Selection.preset("memn2n-type")),
    # ... and the options marked by the rank of their numeric KB facts (the rating) too.
    "memn2n-state-rank": ModelSpec(None, _memn2n_state_rank, Selection.preset("memn2n-type")),
}


def _evaluate(model, data, ties="expected") -> dict:
    accuracy = response_accuracy(model, data.X, data.y, data.groups, ties=ties)
    return {
        "per_response": 100.0 * accuracy.per_response,
        "per_dialog": 100.0 * accuracy.per_dialog,
        "n": len(data.y),
    }


def _load(task, split, data_home):
    return load_dialog_babi(task, split, data_home=data_home)


def _paper(task, split, column) -> dict:
    """The paper's per-response and per-dialog accuracy of ``column`` for a row."""
    table = {(int(r["task"]), r["split"]): r for r in paper_table("dialog_babi_table2.csv")}
    ref = table.get((task, split))
    if not ref:
        return {}
    return {"per_response": float(ref[column]), "per_dialog": float(ref[f"{column}_dialog"])}


def compile_ahead_jobs(models, task: int = 1, data_home=None, seed: int = 0, n_rows: int = 200):
    """The jobs of :class:`irdialog._compile_ahead.CompileAhead` for a run of ``models``:
    each model with a preset (the numba ones), built as the bench builds it for ``task``,
    with the first ``n_rows`` training rows, so that its fit compiles the kernels (and the
    argument types) of the real one.

    Examples
    --------
    >>> sorted(compile_ahead_jobs(["tfidf", "se", "memn2n"]))
    ['memn2n', 'se']
    """
    train = load_dialog_babi(task, "trn", data_home=data_home)
    X, y = train.X[:n_rows], train.y[:n_rows]
    jobs = {}
    for model in models:
        spec = DIALOG_BABI_MODELS[model]
        if spec.selection.kind == "preset":
            [params] = spec.selection.points(SUITE_NAME, task)
            jobs[model] = (reseed(spec.build(train, **params), seed), X, y)
    return jobs


def train_dialog_babi(model: str, task: int, data_home=None, seed: int = 0, overrides=None):
    """The model :func:`bench_dialog_babi` scores for one task, fitted the same way.

    The model is built from its preset (or each point of its grid), fitted on the trn split
    and, for a grid, the point with the best dev accuracy kept: exactly the model behind
    the bench's row, ready to save (``irdialog train``) or to talk to (``irdialog chat``).

    Parameters
    ----------
    model : str
        A key of ``DIALOG_BABI_MODELS``.
    task : int
        1-6.
    data_home : path-like, default=None
    seed : int, default=0
    overrides : dict, default=None
        Parameters set on top of the preset or every grid point.

    Returns
    -------
    fitted : estimator
    chosen : dict
        ``{"task", "params", "selection"}`` as in the bench's ``chosen``.

    Examples
    --------
    >>> from irdialog.bench import train_dialog_babi
    >>> model, chosen = train_dialog_babi("tfidf", task=1)
    >>> chosen["params"], chosen["selection"]["dev_per_response"]
    ({'use_history': False}, 5.96)
    """
    return SUITE.train(model, task, data_home=data_home, seed=seed, overrides=overrides)


def bench_dialog_babi(
    model: str,
    tasks=(1, 2, 3, 4, 5, 6),
    data_home=None,
    progress: bool = True,
    seed: int = 0,
    heldout: bool = False,
    overrides: dict | None = None,
    ties: str = "expected",
) -> dict:
    """Reproduce a model's column of dialog bAbI Table 2 (Bordes et al. 2017), one seed.

    For each task: fit on trn with every point of the model's grid (or its preset), keep
    the point with the best dev per-response accuracy, refit nothing (the chosen model is
    the one fitted on trn) and score tst and tst-OOV. Every data file is loaded before the
    first fit, so a missing file fails at once.

    Parameters
    ----------
    model : str
        A key of ``DIALOG_BABI_MODELS``.
    tasks : sequence of int, default=(1, 2, 3, 4, 5, 6)
    data_home : path-like, default=None
        See :func:`irdialog.datasets.get_data_home` (None: the bundled data).
    progress : bool, default=True
    seed : int, default=0
        The ``random_state`` of the models.
    heldout : bool, default=False
        Score the dev split only (rows of split ``"dev"``, no paper values); the test files
        are not loaded.
    overrides : dict, default=None
        Parameters set on top of every grid point or preset (for tuning, with ``heldout``).
    ties : {"expected", "index", "pessimistic"}, default="expected"
        How a gold response tied at the top counts, on dev (the choice of a grid point) and
        on test (see :func:`irdialog.metrics.response_accuracy`): at its expected value
        under a random order of the tied candidates, as ``predict`` orders them (the
        candidate file's order), or as a miss.

    Returns
    -------
    run : dict
        ``{"suite", "model", "options", "chosen", "rows", "seconds"}``; rows ``{"task",
        "split", "n", "per_response", "per_dialog", "paper_per_response",
        "paper_per_dialog"}`` in percent (the paper's None on held-out rows and for the
        models beyond the paper, ``bm25`` and ``bm25-type``); ``chosen`` one ``{"task",
        "params", "selection"}`` per task, ``selection`` holding the dev accuracy of the
        chosen point. Use
        :func:`run_suite` for several seeds and the provenance record.

    Examples
    --------
    >>> from irdialog.bench import bench_dialog_babi, format_result
    >>> run = bench_dialog_babi("tfidf", tasks=[1], progress=False)
    >>> print(format_result(run))
    task  split      metric               n    tfidf (ours)     paper   diff
    1     tst        per_response      5936             5.6       5.6   -0.0
    1     tst        per_dialog        5936             0.0       0.0   +0.0
    1     tst-OOV    per_response      6020             5.8       5.8   +0.0
    1     tst-OOV    per_dialog        6020             0.0       0.0   +0.0
    """
    return SUITE.run(
        model, tasks=tasks, data_home=data_home, progress=progress, seed=seed,
        heldout=heldout, overrides=overrides, ties=ties,
    )  # fmt: skip


def _dev_curve(spec, point, train, dev, seed=0, patience=None) -> list[float]:
    """Dev accuracy in % after each epoch of one search point trained on trn at ``seed``,
    with early stopping on dev (``patience`` epochs, default :data:`PATIENCE`)."""
    model = reseed(spec.build(train, **point), seed)
    ranker = model[-1] if isinstance(model, RankingPipeline) else model
    ranker.set_params(
        epochs=MAX_EPOCHS[point["use_history"]],
        early_stopping=True,
        n_iter_no_change=PATIENCE if patience is None else patience,
    )
    X_train, X_dev = train.X, dev.X
    if ranker is not model:  # the contexts annotated as the bench's pipeline does
        X_train, X_dev = model[:-1].fit_transform(X_train), model[:-1].transform(X_dev)
    ranker.fit(X_train, train.y, X_val=X_dev, y_val=dev.y)
    return [100.0 * score for score in ranker.validation_scores_]


def best_mean_epoch(curves) -> tuple[int, list[float]]:
    """The epoch (from 1) of the best mean of several seeds' dev curves, over the epochs
    every curve has (ties: the earliest), and each seed's score at it.

    Examples
    --------
    >>> from irdialog.bench._dialog_babi import best_mean_epoch
    >>> best_mean_epoch([[40.0, 57.0, 57.0, 50.0], [38.0, 47.0, 57.0]])
    (3, [57.0, 57.0])
    """
    length = min(len(curve) for curve in curves)
    mean = np.mean([curve[:length] for curve in curves], axis=0)
    epoch = int(np.argmax(mean))
    return epoch + 1, [curve[epoch] for curve in curves]


def search_dialog_babi(model: str, tasks=(1, 2, 3, 4, 5, 6), data_home=None, progress=True,
                       points=None, seeds: int = 1, patience=None) -> list[dict]:  # fmt: skip
    """Each task's best point of a supervised-embedding model's search grid on dev (the
    protocol of the module docstring; the test files are never loaded).

    Parameters
    ----------
    model : {"se", "se-type", "se-bigrams"}
    tasks : sequence of int, default=(1, 2, 3, 4, 5, 6)
    data_home : path-like, default=None
    progress : bool, default=True
        A line per grid point.
    points : sequence of int, default=None
        Search only these points of each task's grid (numbered from 0), to split a long
        search in parts.
    seeds : int, default=1
        The chosen point's ``epochs`` is the best epoch of the mean dev curve of seeds
        0..seeds-1 (:func:`best_mean_epoch`); the grid is searched at seed 0.
    patience : int, default=None
        Early-stopping patience, in epochs, of every dev curve of the search; None: 20
        (:data:`PATIENCE`). A longer one lets a seed that sits on a plateau for a while
        reach the epoch where the others already are (the mean curve only has the epochs
        every seed ran).

    Returns
    -------
    chosen : list of dict
        ``{"task", "params", "selection": {"dev_per_response", "dev_per_response_by_seed",
        "grid"}}`` per task, ``dev_per_response`` the mean over the seeds at the chosen
        ``epochs``; ready for :func:`irdialog.bench.write_presets`.

    Examples
    --------
    Each point trains for up to hundreds of epochs, so this example is not run:

    >>> from irdialog.bench import search_dialog_babi
    >>> [entry] = search_dialog_babi("se", tasks=[1], points=[0])  # doctest: +SKIP
    >>> sorted(entry["params"])  # doctest: +SKIP
    ['embedding_dim', 'epochs', 'learning_rate', 'margin', 'n_negatives', 'use_history']
    """
    tasks = check_model_and_tasks(SUITE, model, tasks)
    if patience is not None and (not isinstance(patience, int) or patience < 1):
        raise ValueError(f"patience must be a positive number of epochs, got {patience!r}")
    spec = DIALOG_BABI_MODELS[model]
    if not spec.selection.searchable:
        raise ValueError(
            f"dialog-babi model {model!r} has no grid to search; tune it with --heldout --set"
        )
    presets = load_presets(SUITE_NAME, "se")  # se-type starts from the se preset
    chosen = []
    for task in tasks:
        train = load_dialog_babi(task, "trn", data_home=data_home)
        dev = load_dialog_babi(task, "dev", data_home=data_home)
        best, grid = None, []
        for number, point in enumerate(spec.selection.grid(task, presets)):
            if points is not None and number not in points:
                continue
            try:
                curve = _dev_curve(spec, point, train, dev, patience=patience)
            except FloatingPointError as err:  # a diverging point loses, the others go on
                tqdm.write(f"task {task} #{number} {point}: {err}", nolock=not progress)
                continue
            dev_acc, epoch = max(curve), int(np.argmax(curve)) + 1
            grid.append({**point, "dev_per_response": round_metric(dev_acc), "epoch": epoch})
            if progress:
                tqdm.write(
                    f"task {task} #{number} {point}: dev {dev_acc:.2f} at epoch {epoch}/"
                    f"{len(curve)}"
                )
            if best is None or dev_acc > best[0]:
                best = (dev_acc, point, curve)
        if best is None:
            raise ValueError(f"no point of the {model} grid of task {task} trained")
        _, point, curve = best
        curves = [curve] + [
            _dev_curve(spec, point, train, dev, seed, patience) for seed in range(1, seeds)
        ]
        epochs, by_seed = best_mean_epoch(curves)
        if progress and seeds > 1:
            tqdm.write(f"task {task}: epochs {epochs} on the mean of {seeds} seeds' dev curves")
        chosen.append(
            {
                "task": task,
                "params": dict(point, epochs=epochs),
                "selection": {
                    "dev_per_response": round_metric(statistics.fmean(by_seed)),
                    "dev_per_response_by_seed": [round_metric(v) for v in by_seed],
                    "grid": grid,
                },
            }
        )
    return chosen


def _cells(result) -> list[dict]:
    """``{metric: Row}`` of each (task, split) of a result, in its order."""
    cells: list[dict] = []
    for row in long_rows(result):
        if not cells or row.metric in cells[-1]:  # a metric seen again: the next cell
            cells.append({})
        cells[-1][row.metric] = row
    return cells


def markdown(results) -> list[str]:
    """The Table 2 layout: a row per task and split, per file ours (per-dialog in brackets)
    and the paper's; ``**short**`` where ours, at the precision shown, is below it."""
    header = ["task", "split", "n"]
    for _name, r in results:
        header += [f"{r['model']} (ours)", "paper"]
    cells = [_cells(r) for _, r in results]
    body = []
    for i, first in enumerate(cells[0]):
        row = first["per_response"]
        line = [str(row.task), row.split, str(row.n)]
        for cell in cells:
            response, dialog = cell[i]["per_response"], cell[i]["per_dialog"]
            ours = f"{spread(response)} ({spread(dialog)})"
            paper = ""  # a model beyond the paper (BM25) has no paper value
            if response.paper is not None:
                if round(response.value, 1) < response.paper:
                    ours += " **short**"
                paper = f"{response.paper:.1f} ({dialog.paper:.1f})"
            line += [ours, paper]
        body.append(line)
    return markdown_table(header, body)


# The summary table: (result file, label) per row.
SUMMARY_ROWS = (
    ("dialog-babi-rule-based", "rule-based bot"),
    ("dialog-babi-tfidf", "TF-IDF"),
    ("dialog-babi-tfidf-type", "TF-IDF + match type"),
    ("dialog-babi-nn", "nearest neighbour"),
    ("dialog-babi-se", "supervised embeddings"),
    ("dialog-babi-se-type", "supervised embeddings + match type (Table 10)"),
    ("dialog-babi-se-bigrams", "supervised embeddings + bigrams (Table 10)"),
    ("dialog-babi-memn2n", "MemN2N"),
    ("dialog-babi-memn2n-type", "MemN2N + match type"),
    ("dialog-babi-gmemn2n", "gated MemN2N (not in the paper)"),
    ("dialog-babi-gmemn2n-type", "gated MemN2N + match type (not in the paper)"),
    ("dialog-babi-memn2n-state", "MemN2N + match type + dialog state (not in the paper)"),
    (
        "dialog-babi-memn2n-state-rank",
        "MemN2N + match type + dialog state + KB ranks (not in the paper)",
    ),
    ("dialog-babi-qrn", "QRN (not in the paper)"),
    ("dialog-babi-qrn-type", "QRN + match type (not in the paper)"),
    (
        "dialog-babi-qrn-state-rank",
        "QRN + match type + dialog state + KB ranks (not in the paper)",
    ),
    ("dialog-babi-bm25", "BM25 (not in the paper)"),
    ("dialog-babi-bm25-type", "BM25 + match type (not in the paper)"),
)


def summary_table(results_dir: Path, table: list[dict]) -> list[str]:
    """The summary of Table 2 that opens BENCHMARKS.md: each model's mean over the tasks of
    each column, the paper's, and the best published (:mod:`irdialog.bench._summary`)."""
    groups = (  # (column, its cell in best_published.csv, its rows)
        ("tasks 1-5", "tasks 1-5", lambda r: r["split"] == "tst" and r["task"] != 6),
        ("tasks 1-5 OOV", "OOV", lambda r: r["split"] == "tst-OOV"),
        ("task 6", "task 6", lambda r: r["task"] == 6),
    )
    header = ["model", "seeds"]
    for label, _, _ in groups:
        header += [f"{label} (ours)", "paper"]
    header.append("rows under the paper")
    body = []
    for name, label in SUMMARY_ROWS:
        result = load_result(results_dir, name, "dialog-babi")
        line = [label, seed_counts([result])]
        for _, _, keep in groups:
            rows = [r for r in result["rows"] if keep(r)]
            seeds = zip(*(by_seed(r, "per_response") for r in rows))
            per_seed = [statistics.fmean(values) for values in seeds]
            papers = [r["paper_per_response"] for r in rows]
            paper = "—" if None in papers else f"{statistics.fmean(papers):.1f}"
            line += [seed_spread(per_seed, 1), paper]
        compared = [r for r in result["rows"] if r["paper_per_response"] is not None]
        under = sum(round(r["per_response"], 1) < r["paper_per_response"] for r in compared)
        line.append(f"{under} of {len(compared)}" if compared else "—")
        body.append(line)
    best = ["**best published**", ""]
    for _, cell, _ in groups:
        found = best_of("dialog-babi", cell, table)
        best += ["—" if found is None else cite(found), ""]
    body.append(best + [""])
    notes = [
        "",
        "Test per-response accuracy in %, the mean over the tasks of each column (the paper's "
        "figure: the mean of its per-task figures); ± the sample standard deviation over "
        "seeds. Rows under the paper: the task rows (of 11) where ours, rounded as the "
        "paper's, is lower. Other published figures on task 6: "
        + others("dialog-babi", "task 6", table)
        + ".",
    ]
    return markdown_table(header, body) + notes


def _search_arguments(parser) -> None:
    parser.add_argument(
        "--patience", type=int, default=None, metavar="P",
        help="with --search: the early-stopping patience, in epochs, of every dev curve of "
        f"the search (default: {PATIENCE})",
    )  # fmt: skip


SUITE = Suite(
    name=SUITE_NAME,
    help="dialog bAbI Table 2 (11 rows)",
    models=DIALOG_BABI_MODELS,
    table=markdown,
    load=_load,
    score=_evaluate,
    ties=True,
    metrics=("per_response", "per_dialog"),
    train_split="trn",
    scored=("tst", "tst-OOV"),
    cells=tuple(DIALOG_BABI_ROWS),
    paper=_paper,
    title="dialog bAbI",
    summary=summary_table,
    metric="per_response",
    tasks=tuple(range(1, 7)),
    heldout="score dev instead of test; the test files are not loaded",
    overrides="override a hyper-parameter of the presets or grid (repeatable; for tuning)",
    search=search_dialog_babi,
    search_notes=lambda model: SE_SEARCH_NOTES,
    search_arguments=_search_arguments,
    search_options=lambda args: {} if args.patience is None else {"patience": args.patience},
    plot_label=lambda row: f"T{row.task}" + ("\nOOV" if row.split == "tst-OOV" else ""),
    metric_names={
        "per_response": "per-response accuracy (%)",
        "per_dialog": "per-dialog accuracy (%)",
    },
    full_scale=True,
)
