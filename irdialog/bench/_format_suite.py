"""The declaration of a suite over a public corpus in one of the field's formats: response
selection with a pool per context (Douban, E-commerce, Ubuntu v1, DSTC7 track 1) or
retrieval against one corpus (BEIR, MS MARCO passage).

A suite module (``_douban.py``, ``_beir.py``, ...) states its corpus, its files and its
metrics, and declares ``SUITE = tsv_suite(...)`` (a multi-turn TSV corpus), ``SUITE =
Suite(**pool_suite(...))`` or ``SUITE = Suite(**retrieval_suite(...))``; what they share is
here:

- pools: a model is fitted on the training split's (context, right response) pairs, its
  candidates the responses of the training pools, and ranks each pool of the scored split
  with ``rank_candidates``;
- retrieval: a model holds the corpus as its candidates and ranks it for each query; the
  ``depth`` best documents (Anserini's 1000) are scored again as a pool, so that ties count
  at their expected value, and the metrics read the judgements of those documents, a
  relevant one beyond the depth counting in recall and the ideal DCG;
- the published classical figures, from ``irdialog/data/reference/format_suites.csv``,
  beside ours in every table, each with its source.

Every metric counts a tie at its expected value under a random order; a pool with no right
response is left out of the average (``no_answer="skip"``, as the Douban and E-commerce
evaluation scripts do).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from sklearn.utils import Bunch

from ..datasets import load_dialogs
from ..datasets._base import find_data_file
from ..metrics import get_ranking_metric
from ..retrieval import BM25Ranker, TfidfRanker
from ._paper import paper_table
from ._runner import run_declared
from ._suite import ModelSpec, Selection, Suite, markdown_table, number, spread

REFERENCE = "format_suites.csv"
_BLOCK = 256  # contexts scored at a time
DEPTH = 1000  # documents of a retrieval run re-scored and judged (Anserini's --hits)
NO_SEARCH = "no hyper-parameter search: the estimator's defaults"
_OVERRIDES = "a hyper-parameter of the model over its fixed value (the run records it)"


def published(suite: str, task, method) -> dict:
    """``{metric: {source: figure}}`` of ``method``'s published rows for ``task`` of
    ``suite`` (empty: none).

    Examples
    --------
    >>> from irdialog.bench._format_suite import published
    >>> published("msmarco", "passage", "bm25")
    {'mrr@10': {'anserini_msmarco_passage': 18.7}}
    >>> published("douban", "douban", "tfidf")
    {}
    """
    out: dict = {}
    for row in paper_table(REFERENCE):
        if (row["suite"], row["task"], row["method"]) == (suite, str(task), method):
            out.setdefault(row["metric"], {})[row["source"]] = float(row["value"])
    return out


def data_file(data_home, folders, names, what: str):
    """The first of ``names`` in the first of ``folders`` of the data home that holds one;
    a FileNotFoundError naming ``what`` (the corpus and split) and every path looked at
    when none is there."""
    return find_data_file(data_home, [f"{d}/{n}" for d in folders for n in names], what)


def _tsv_split(folders, corpus: str, needs: str, task, split: str, data_home) -> Bunch:
    what = f"{corpus} {split} (needs data: {needs})"
    path = data_file(data_home, folders, [f"{split}.txt"], what)
    return load_pools(path, "multiturn-tsv", split)


def _as_list(rights) -> list:
    return [rights] if isinstance(rights, str) else list(rights or [])


# ------------------------------------------------------------------ pools


def load_pools(path, fmt: str, split: str, train_split: str = "train", **load) -> Bunch:
    """One split's contexts and pools (``load_dialogs(path, format=fmt, **load)``); the
    training split also as (context, right response) pairs and the distinct responses of
    its pools (``candidates``)."""
    data = load_dialogs(path, format=fmt, **load)
    data.path = path
    if "candidate_lists" not in data:
        raise ValueError(f"{path}: the examples have no candidate pools to rank")
    if split == train_split:
        data.pairs, data.pair_answers = [], []
        for x, rights in zip(data.X, data.y):
            for right in _as_list(rights):
                data.pairs.append(x)
                data.pair_answers.append(right)
        if not data.pairs:
            raise ValueError(f"{path}: no context has a right response to learn from")
        data.candidates = list(dict.fromkeys(r for pool in data.candidate_lists for r in pool))
    return data


def fit_pairs(model, train, spec) -> None:
    """Fit on the training pairs, one (context, right response) example each."""
    model.fit(train.pairs, train.pair_answers)


def with_candidates(build):
    """A model of a pool suite: ``build`` with the responses of the training pools as its
    candidates."""
    return lambda train, **params: build(candidates=train.candidates, **params)


def score_pools(metrics):
    """``score(model, data)`` of a pool suite: each metric of ``metrics`` (%) over the
    pools of ``data``, ranked ``_BLOCK`` contexts at a time; ``n`` the contexts scored (a
    context with no right response is left out).

    Examples
    --------
    >>> from sklearn.utils import Bunch
    >>> from irdialog import TfidfRanker
    >>> from irdialog.bench._format_suite import score_pools
    >>> model = TfidfRanker().fit(["red wine", "blue sky"], ["a red one", "the sky"])
    >>> data = Bunch(X=["red please", "sky", "anything"],
    ...              y=[["a red one", "red too"], "the sky", []],
    ...              candidate_lists=[["a red one", "the sky", "red too"],
    ...                               ["a red one", "the sky"], ["the sky", "a red one"]])
    >>> score_pools(["map", "p@1", "r2@1"])(model, data)
    {'map': 100.0, 'p@1': 100.0, 'r2@1': 100.0, 'n': 2}
    """

    def score(model, data) -> dict:
        judged = {m: get_ranking_metric(m, no_answer="skip") for m in metrics}
        values = {m: [] for m in metrics}
        for lo in range(0, len(data.X), _BLOCK):
            pools = data.candidate_lists[lo : lo + _BLOCK]
            scores = model.rank_candidates(data.X[lo : lo + _BLOCK], pools)
            gold = [
                [pool.index(r) for r in _as_list(rights)]
                for pool, rights in zip(pools, data.y[lo : lo + _BLOCK])
            ]
            for m, metric in judged.items():
                values[m].extend(metric.per_example(gold, scores))
        n = sum(1 for rights in data.y if _as_list(rights))
        return {**{m: 100.0 * judged[m].average(values[m]) for m in metrics}, "n": n}

    return score


def _pool_protocol(spec, model, data) -> str:
    [train_name] = [k for k, v in data.items() if hasattr(v, "pairs")]
    train = data[train_name]
    scored = [v for k, v in data.items() if k != train_name]
    evaluation = scored[-1] if scored else train
    skipped = sum(1 for rights in evaluation.y if not _as_list(rights))
    return (
        f"{type(model).__name__} fitted on the {len(train.pairs)} (context, right response) "
        f"pairs of {train.path.name}, its candidates the {len(train.candidates)} responses of "
        f"their pools; each pool of the {len(evaluation.X)} contexts of {evaluation.path.name} "
        f"ranked with rank_candidates, ties at their expected value ({skipped} with no right "
        f"response left out); {spec.selection.note}."
    )


# ------------------------------------------------------------------ retrieval


def load_retrieval(path, fmt: str) -> Bunch:
    """A retrieval split (``load_dialogs(path, format=fmt)``: BEIR, MS MARCO)."""
    data = load_dialogs(path, format=fmt)
    data.path = path
    return data


def fit_corpus(model, data, spec) -> None:
    """Index the corpus: the model's candidates are its documents. ``fit`` takes one
    response per context; with the candidates given, neither TF-IDF nor BM25 reads them,
    and no judgement enters the fit (TF-IDF's IDF also counts the queries' texts)."""
    model.fit(data.X, [data.documents[0]] * len(data.X))


def corpus_model(build):
    """A model of a retrieval suite: ``build`` with the corpus as its candidates."""
    return lambda data, **params: build(candidates=data.documents, **params)


def graded_gains(grades: dict, texts: dict, place: dict) -> tuple[dict, int]:
    """A query's judgements ``grades`` (``{document id: grade}``) as ``{candidate index:
    grade}``: a document found among the candidates by its text (``texts``, the index of
    a text in ``place``; a text several documents share keeps the highest grade), a
    relevant one that is not a candidate under a negative key (it counts in recall and the
    ideal DCG); and how many relevant documents are not candidates."""
    gains, outside = {}, 0
    for doc, grade in grades.items():
        j = place.get(texts[doc])
        if j is not None:
            gains[j] = max(gains.get(j, 0), grade)
        elif grade > 0:
            outside += 1
            gains[-outside] = grade
    return gains, outside


def score_retrieval(metrics, depth: int = DEPTH):
    """``score(model, data)`` of a retrieval suite: each metric (%) over the judged
    queries, the ``depth`` best documents of each re-scored as its pool."""

    def score(model, data) -> dict:
        judged = {m: get_ranking_metric(m, no_answer="skip") for m in metrics}
        values = {m: [] for m in metrics}
        texts = dict(zip(data.document_ids, data.documents))
        candidates = model.candidates_
        for lo in range(0, len(data.X), _BLOCK):
            X = data.X[lo : lo + _BLOCK]
            top = model.rank(X, k=depth)
            pools = [[candidates[j] for j in row] for row in top]
            scores = model.rank_candidates(X, pools)
            gold = [
                graded_gains(grades, texts, {text: j for j, text in enumerate(pool)})[0]
                for pool, grades in zip(pools, data.relevance[lo : lo + _BLOCK])
            ]
            for m, metric in judged.items():
                values[m].extend(metric.per_example(gold, scores))
        return {**{m: 100.0 * judged[m].average(values[m]) for m in metrics}, "n": len(data.X)}

    return score


def _retrieval_protocol(spec, model, data) -> str:
    [evaluation] = data.values()
    return (
        f"{type(model).__name__} over the {len(model.candidates_)} distinct documents of the "
        f"corpus; each of the {len(evaluation.X)} judged queries of {evaluation.path.name} "
        f"ranks the corpus, its {DEPTH} best re-scored with rank_candidates (ties at their "
        f"expected value) and judged, a relevant document beyond them a miss; no judgement "
        f"enters the fit; {spec.selection.note}."
    )


# ------------------------------------------------------------------ declarations


def _paper(suite: str):
    def paper(task, split, column) -> dict:
        return published(suite, task, column)

    return paper


def _table(suite: str, metrics):
    """``table(results)``: a row per (result, task), ours then the published figure of
    each metric with its source."""

    def table(results) -> list[str]:
        from ._registry import SUITES

        header = ["model", "task", "split", *metrics, "published", "time (s)"]
        body = []
        for _name, r in results:
            by_task: dict = {}
            for row in SUITES[suite].rows(r):
                by_task.setdefault((row.task, row.split), {})[row.metric] = row
            for (task, split), rows in by_task.items():
                cells = [spread(rows[m]) if m in rows else "" for m in metrics]
                papers = [
                    f"{m} {number(v)} ({source})"
                    for m in metrics
                    if m in rows and isinstance(rows[m].paper, dict)
                    for source, v in rows[m].paper.items()
                ]
                body.append([r["model"], str(task), split, *cells, "; ".join(papers),
                             f"{r['seconds']:.0f}"])  # fmt: skip
        return markdown_table(header, body)

    return table


def pool_suite(name: str, help: str, models: dict, load, metrics, *, task, scored=("test",)):
    """The fields of a pool suite's ``Suite``: fitted on ``train``, ``scored`` splits
    ranked pool by pool (``load(task, split, data_home)``), ``metrics`` in %."""
    return _long_suite(name, help, models, load, metrics, task, score=score_pools(metrics),
                       scored=scored, fit=fit_pairs, protocol=_pool_protocol)  # fmt: skip


def tsv_suite(name: str, help: str, *, folders, corpus: str, needs: str, metrics, task,
              models=None) -> Suite:  # fmt: skip
    """The pool suite of a multi-turn TSV corpus (Ubuntu v1, Douban, E-commerce): a split is
    ``<split>.txt`` in the first of ``folders`` of the data home that holds one
    (:func:`load_pools`); ``corpus`` and ``needs`` name the corpus and what to get when it
    is missing; ``models``: :data:`POOL_MODELS` by default."""
    load = partial(_tsv_split, folders, corpus, needs)
    return Suite(**pool_suite(name, help, models or POOL_MODELS, load, metrics, task=task))


def retrieval_suite(name: str, help: str, metrics, *, files, bm25, task, split: str, **fields):
    """The fields of a retrieval suite's ``Suite``: the corpus indexed by TF-IDF or BM25
    (``bm25``: its parameters and the note saying where they come from), the queries of
    ``split`` ranked against it and judged. ``files``: ``(folder, qrels, what)``, the
    folder of the data home holding a data set, its qrels file of a split, read with
    ``load_dialogs(..., format=name)``, and what a missing file means, each formatted with
    the ``task`` and ``split``.

    Examples
    --------
    >>> from irdialog.bench._format_suite import retrieval_suite
    >>> fields = retrieval_suite(
    ...     "msmarco", "MS MARCO", ["mrr@10"], task="passage", split="dev.small",
    ...     files=("msmarco-passage", "qrels.{split}.tsv", "MS MARCO {split} (needs data)"),
    ...     bm25=({"k1": 0.82, "b": 0.68}, "Anserini's setting"),
    ... )
    >>> sorted(fields["models"]), fields["scored"]
    (['bm25', 'tfidf'], ('dev.small',))
    """
    params, note = bm25
    models = classical_models(corpus_model(TfidfRanker), corpus_model(BM25Ranker), params, note)

    def load(task, split, data_home):
        folder, qrels, what = (f.format(task=task, split=split) for f in files)
        return load_retrieval(data_file(data_home, [folder], [qrels], what), name)

    return _long_suite(name, help, models, load, metrics, task,
                       score=score_retrieval(metrics), train_split=split, scored=(split,),
                       fit=fit_corpus, protocol=_retrieval_protocol, **fields)  # fmt: skip


def _long_suite(name: str, help: str, models: dict, load, metrics, task, **fields) -> dict:
    """The fields every suite of this module shares (a row per metric, the published
    figures of ``name``), and ``fields``."""
    return dict(
        name=name,
        help=help,
        models=models,
        table=_table(name, metrics),
        load=load,
        metrics=tuple(metrics),
        layout="long",
        dev_split=None,
        paper=_paper(name),
        task_name=task,
        plot_label=lambda row: row.metric,
        overrides=_OVERRIDES,
        **fields,
    )


def classical_models(tfidf, bm25, bm25_params=None, bm25_note=NO_SEARCH) -> dict:
    """``{"tfidf": ..., "bm25": ...}`` ModelSpecs of a suite: TF-IDF (published column
    ``"tfidf"``) and Lucene's BM25 (``"bm25"``), built by ``tfidf``/``bm25`` from the
    split the suite fits on."""
    params = {"method": "lucene", **(bm25_params or {})}
    return {
        "tfidf": ModelSpec("tfidf", tfidf, Selection.fixed({}, NO_SEARCH)),
        "bm25": ModelSpec("bm25", bm25, Selection.fixed(params, bm25_note)),
    }


# The models of a pool suite: TF-IDF and BM25 over the responses of the training pools.
POOL_MODELS = classical_models(with_candidates(TfidfRanker), with_candidates(BM25Ranker))


def dataset_fields(suite: str, help: str, *, default=None, choices=None, scored=None) -> dict:
    """The ``arguments``, ``options`` and ``run`` of a suite over several data sets of one
    release (BEIR's, DSTC7's): ``--dataset NAME`` (required without a ``default``), the
    rows' task; ``scored(dataset, data_home)``: the splits a run scores (None: the
    suite's)."""

    def arguments(parser) -> None:
        parser.add_argument(
            "--dataset", default=default, required=default is None, choices=choices, help=help
        )

    def options(args) -> dict:
        return {"dataset": args.dataset}

    def run(model, *, dataset=default, **kwargs) -> dict:
        from ._registry import SUITES

        if not dataset:
            raise ValueError(f"{suite}: name a data set (--dataset)")
        fields = {"task_name": dataset}
        if scored is not None:
            fields["scored"] = partial(scored, dataset)
        result = run_declared(replace(SUITES[suite], **fields), model, **kwargs)
        result["options"]["dataset"] = dataset
        return result

    return {"arguments": arguments, "options": options, "run": run}
