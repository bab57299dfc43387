"""The models of ``irdialog train --train FILE``, a project's own dialogs: each a
:class:`~irdialog.bench.ModelSpec` with the parameters it starts from and the small grid
searched on ``--valid`` (every point fitted, the best hits@1 kept), in the registry's
one format.

A model with ``extra["rows"] == "all"`` takes its statistics from every row of an Ubuntu
training file (with labels), as the ubuntu suite does (``fit_chunks``); the others learn
from the rows labelled 1.
"""

from __future__ import annotations

from itertools import product

from ..embed import MemN2NRanker, SupervisedEmbeddingRanker
from ..retrieval import BM25Ranker, NearestNeighborRanker, TfidfRanker
from ._suite import ModelSpec, Selection


def _model(estimator, defaults: dict, grid: dict, rows: str = "positive") -> ModelSpec:
    def build(**params):
        return estimator(**{**defaults, **params})

    build.__name__ = build.__qualname__ = estimator.__name__
    return ModelSpec(None, build, Selection.dev_grid(grid), extra={"rows": rows})


OWN_DATA_MODELS: dict[str, ModelSpec] = {
    "tfidf": _model(TfidfRanker, {}, {"use_history": [True, False]}, rows="all"),
    "bm25": _model(
        BM25Ranker, {"method": "lucene"}, {"use_history": [True, False], "k1": [1.2, 2.0]},
        rows="all",
    ),
    "nn": _model(NearestNeighborRanker, {}, {"similarity": ["overlap", "jaccard"]}),
    "se": _model(
        SupervisedEmbeddingRanker,
        {"normalize_input": True, "learning_rate": 0.1, "margin": 0.1, "epochs": 20},
        {"use_history": [True, False], "margin": [0.1, 1.0]},
    ),
    "memn2n": _model(MemN2NRanker, {"epochs": 50}, {"hops": [1, 3]}),
}  # fmt: skip


def grid_points(spec: ModelSpec) -> list[dict]:
    """The points of an own-data model's grid, the first parameter varying slowest.

    Examples
    --------
    >>> from irdialog.bench._own_data import OWN_DATA_MODELS, grid_points
    >>> grid_points(OWN_DATA_MODELS["bm25"])[:2]
    [{'use_history': True, 'k1': 1.2}, {'use_history': True, 'k1': 2.0}]
    """
    grid = spec.selection.grid
    return [dict(zip(grid, values)) for values in product(*grid.values())]


def grid_help() -> str:
    """The grids, as ``irdialog train --help`` says them.

    Examples
    --------
    >>> from irdialog.bench._own_data import grid_help
    >>> grid_help().split("; ")[0]
    'tfidf: use_history True/False'
    """

    def values(v):
        return "/".join(str(x) for x in v)

    return "; ".join(
        f"{name}: " + " x ".join(f"{k} {values(v)}" for k, v in spec.selection.grid.items())
        for name, spec in OWN_DATA_MODELS.items()
    )
