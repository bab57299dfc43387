"""The ``irdialog`` command: run, bench, train, evaluate, rank, chat, datasets.

Examples
--------
::

    irdialog                                       # help
    irdialog run                                   # five rankers on bundled dialog bAbI task 1
    irdialog bench dialog-babi --model tfidf --data-home DATA --output tfidf.json
    irdialog bench dialog-babi --model se --seeds 5 --data-home DATA
    irdialog bench report                          # BENCHMARKS.md and NOTES.md from the JSON files
    irdialog bench reproduce 'babi-qa-*' --max-seconds 600   # re-run committed results
    irdialog train --suite dialog-babi --task 1 --model memn2n --save memn2n.npz
    irdialog chat memn2n.npz --top 3
    irdialog train --train mine.jsonl --valid dev.jsonl --model bm25 --save bm25.npz
    irdialog evaluate bm25.npz test.jsonl --metrics hits@1,hits@10,mrr
    irdialog rank bm25.npz test.jsonl -k 10 --output ranks.jsonl
    irdialog index build passages.txt --shards 4 --save passages.index
    irdialog rank passages.index queries.txt -k 10 --output ranks.jsonl
    irdialog index add passages.index more.txt       # then: index delete DIR IDS, index compact DIR
    irdialog datasets --data-home DATA
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import joblib
import numpy as np
from tqdm.auto import tqdm

from . import __version__
from ._arguments import HelpFormatter, check_output, common_options
from ._arguments import assignment as _assignment
from ._arguments import check_data_home as _check_data_home
from ._arguments import show_progress as _progress
from ._compile_ahead import CompileAhead
from ._compile_notice import announce_compilation
from .base import _top_k
from .bench import SUITES, bench_dialog_babi, fit_threads
from .bench._command import add_bench_parser
from .bench._dialog_babi import compile_ahead_jobs
from .bench._format_suite import graded_gains
from .bench._own_data import OWN_DATA_MODELS, grid_help, grid_points
from .bench._reproduce import add_reproduce_parser
from .bench._suite import positive_int
from .datasets import list_datasets, load_dialogs
from .datasets._base import DataFormatError, bundled_data_dir, get_data_home, read_lines
from .datasets._dialogs import FORMATS
from .datasets._listing import SOURCES, tasks_and_splits
from .metrics import get_ranking_metric, gold_indices
from .retrieval import BM25Ranker, ShardedIndex
from .retrieval._bm25 import METHODS as BM25_METHODS

DESCRIPTION = (
    "Classical response rankers for dialog and QA: reproduce the papers' tables (bench), "
    "train a model on a suite or on your own dialogs and use it (train, evaluate, rank, chat), "
    "see the data (datasets)."
)
# --save suffixes: joblib's pickle, or irdialog.persist's arrays + JSON (no pickle).
PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle")
SAFE_SUFFIXES = (".npz",)


# What `irdialog run` trains: one model of each family of Bordes et al. (2017, Table 2),
# and BM25, with the bench's presets or dev grids.
RUN_MODELS = ("rule-based", "tfidf", "bm25", "se", "memn2n-type")
# The models whose kernels the helper of CompileAhead compiles while this process runs,
# and compiles, the others: on a cold cache memn2n-type takes about 18 s of CPU time, the
# four others together about 14 s, so each core gets about half, and this process never
# waits behind a helper job it could have done itself.
RUN_AHEAD = ("memn2n-type",)


def _run_table(runs: list[dict]) -> list[str]:
    """The lines of ``irdialog run``'s table: per model, the per-response accuracy on the
    tst split next to the paper's (Table 2, task 1), and the seconds it took."""
    width = max(len("model"), *(len(run["model"]) for run in runs))
    lines = [f"{'model':<{width}}    ours   paper  seconds"]
    for run in runs:
        [row] = [row for row in run["rows"] if row["split"] == "tst"]
        paper = row["paper_per_response"]
        shown = "-" if paper is None else f"{paper:.1f}"
        ours, seconds = row["per_response"], run["seconds"]
        lines.append(f"{run['model']:<{width}}  {ours:6.1f}  {shown:>6}  {seconds:7.1f}")
    return lines


def _cmd_run(args) -> int:
    _check_data_home(args.data_home)
    models = list(SUITES["dialog-babi"].models) if args.all else list(RUN_MODELS)
    home = get_data_home(args.data_home)
    where = "the bundled data" if home.resolve() == bundled_data_dir().resolve() else home
    runs = []
    # A spare core compiles the numba models' kernels while this process runs the others.
    ahead = models if args.all else RUN_AHEAD
    with CompileAhead(compile_ahead_jobs(ahead, data_home=args.data_home)) as ahead:
        bar = tqdm(models, desc="irdialog run", unit="model", disable=not _progress(args))
        for model in bar:
            bar.set_postfix_str(model)
            ahead.wait(model)  # its kernels are in numba's cache now (or compiled below)
            runs.append(bench_dialog_babi(model, tasks=[1], data_home=args.data_home,
                                          progress=False))  # fmt: skip
        bar.close()
    if args.quiet:
        return 0
    print(f"irdialog {__version__}: dialog bAbI task 1 on {where}")
    print("per-response accuracy (%) on the test split; hyper-parameters chosen on dev;")
    print("paper: Bordes et al. (2017), Table 2\n")
    print("\n".join(_run_table(runs)))
    total = sum(run["seconds"] for run in runs)
    print(f"\n{len(runs)} models in {total:.0f} s; every model: irdialog run --all; all six "
          "tasks:\nirdialog bench dialog-babi --model MODEL --data-home DIR")  # fmt: skip
    return 0


def _cmd_datasets(args) -> int:
    home = get_data_home(args.data_home)
    if not home.is_dir():
        source = "--data-home" if args.data_home is not None else "$IRDIALOG_DATA"
        what = "is not a directory" if home.exists() else "does not exist"
        print(f"irdialog: warning: {source} {home} {what}", file=sys.stderr)
        return 1
    bundled = home.resolve() == bundled_data_dir().resolve()
    print(f"data home: {'the bundled samples' if bundled else home}")
    any_found = False
    for family, info in list_datasets(home).items():
        if info["found"]:
            any_found = True
            where = Path(info["path"]).relative_to(home).as_posix()
            print(f"{family:<14} {where}/")
            for line in tasks_and_splits(family, info["files"]):
                print(f"  {line}")
        else:
            print(f"{family:<14} not found")
        if family in SOURCES:
            source, licence = SOURCES[family]
            print(f"  get: {source}\n  licence: {licence}")
    if not any_found:
        print(f"irdialog: warning: no data set found in {home}", file=sys.stderr)
        return 1
    return 0


def _save_target(path) -> tuple[Path, str]:
    """``--save``, checked: the file to write and its format, by its suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in PICKLE_SUFFIXES + SAFE_SUFFIXES:
        raise ValueError(
            f"--save {path}: give a file name ending in .npz (arrays + JSON, safe to share) or "
            ".joblib (a pickle: load only your own)"
        )
    return check_output(path, option="--save"), "npz" if suffix in SAFE_SUFFIXES else "joblib"


def load_model(path):
    """A model saved by ``irdialog train`` (``.npz`` through :mod:`irdialog.persist`,
    anything else through ``joblib.load``)."""
    from .persist import load

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such model file")
    if path.suffix.lower() in SAFE_SUFFIXES:
        return load(path)
    try:
        return joblib.load(path)
    except Exception as err:  # a damaged or foreign pickle: any error of its loading
        raise ValueError(f"{path} could not be loaded with joblib ({err})") from None


def _save_model(model, output: Path, fmt: str) -> None:
    from .persist import save

    if fmt == "npz":
        try:
            save(model, output)
        except TypeError as err:
            raise ValueError(f"{err}; save it as .joblib instead") from None
    else:
        joblib.dump(model, output)


def _saved_to(output: Path, fmt: str) -> str:
    return f"saved to {output} ({'arrays + JSON' if fmt == 'npz' else 'joblib pickle'})"


def _cmd_train(args) -> int:
    if args.train is not None:
        return _cmd_train_own(args)
    if args.task is None:
        raise ValueError("give --task (a task of a bench suite) or --train FILE (your own data)")
    given = [f"--{n}" for n in ("valid", "candidates", "format") if getattr(args, n) is not None]
    if given:
        raise ValueError(f"{', '.join(given)} go with --train FILE, not with --task")
    output, fmt = _save_target(args.save)
    _check_data_home(args.data_home)
    suite = SUITES[args.suite]
    with fit_threads(args.threads):
        model, chosen = suite.train(
            args.model, args.task, data_home=args.data_home, seed=args.seed,
            overrides=dict(args.set or []),
        )  # fmt: skip
    _save_model(model, output, fmt)
    if not args.quiet:
        metric = suite.metric
        dev = chosen["selection"].get(f"{suite.dev_split}_{metric}")
        print(f"{args.suite} task {args.task} {args.model}: {json.dumps(chosen['params'])}")
        if dev is not None:
            name = suite.metric_names.get(metric, metric).removesuffix(" (%)")
            print(f"{suite.dev_split} {name}: {dev:.2f}%")
        print(_saved_to(output, fmt))
    return 0


# ----------------------------------------------------------------- your own data


# Contexts scored at a time by evaluate, rank and the search on --valid.
_EVAL_BLOCK = 1024


def _read_candidates(path) -> list[str]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--candidates {path}: no such file")
    candidates = [line.strip() for line in read_lines(path) if line.strip()]
    if not candidates:
        raise ValueError(f"--candidates {path}: no candidate (one response per line)")
    return candidates


def _positive(data):
    """(X, y) of the examples to learn from: the rows labelled 1 of an Ubuntu training
    file, every example otherwise, once for each of its right responses (none for an
    example with none)."""
    if "labels" not in data:
        pairs = [(x, r) for x, y in zip(data.X, data.y)
                 for r in ([y] if isinstance(y, str) else y)]  # fmt: skip
        if not pairs:
            raise ValueError(f"{data.filename}: no right response to train on")
        return [x for x, _ in pairs], [r for _, r in pairs]
    keep = np.flatnonzero(data.labels == 1)
    if not len(keep):
        raise ValueError(f"{data.filename}: no row labelled 1, so no response to train on")
    return [data.X[i] for i in keep], [data.y[i] for i in keep]


def _fit_own(spec, params: dict, data, candidates, args, progress: bool):
    """The model of one point, fitted on the training data: seeded with --seed, on
    --threads threads, with the model's own progress bar when it has one."""
    model = spec.build(**params, candidates=candidates)
    known = model.get_params()
    settings = {"random_state": args.seed, "n_jobs": args.threads, "verbose": progress}
    model.set_params(**{k: v for k, v in settings.items() if k in known and v is not None})
    if "labels" in data and spec.extra["rows"] == "all":
        return model.fit_chunks([(data.X, data.y)])
    return model.fit(*_positive(data))


def _scored_blocks(model, X, lists, progress: bool, desc: str):
    """``(start, scores)`` of each block of ``_EVAL_BLOCK`` contexts: each example's own
    candidates scored (``lists``, padded with -inf) or, without lists, the model's."""
    for start in tqdm(range(0, len(X), _EVAL_BLOCK), desc=desc, unit="block", disable=not progress):
        rows = slice(start, start + _EVAL_BLOCK)
        if lists is None:
            yield start, model.decision_function(X[rows])
        else:
            yield start, model.rank_candidates(X[rows], lists[rows])


def _graded(data, rows: slice, lookup: dict):
    """The gold of the queries ``rows`` of a retrieval set (BEIR, MS MARCO), each by
    :func:`graded_gains` against the model's candidates by text (``lookup``); and how many
    relevant documents are not candidates."""
    texts = dict(zip(data.document_ids, data.documents))
    gold, missing = [], 0
    for judged in data.relevance[rows]:
        gains, outside = graded_gains(judged, texts, lookup)
        gold.append(gains)
        missing += outside
    return gold, missing


def _right_answers(model, data, lists, rows: slice, metrics: dict, lookup=None):
    """The gold of the examples ``rows`` for :mod:`irdialog.metrics`: the places of each
    example's right responses in its own candidate list (``lists``), else their indices
    in the model's candidates (-1 for one that is not a candidate), or for a retrieval set
    (``lookup``: the model's candidates by text) the graded judgements; and how many right
    responses are not candidates."""
    if lookup is not None:
        return _graded(data, rows, lookup)
    answers = [[r] if isinstance(r, str) else list(r) for r in data.y[rows]]
    if lists is not None:
        short = max((m.n for m in metrics.values() if m.n is not None), default=0)
        for i, cands in enumerate(lists[rows]):
            if len(cands) < short:
                name = next(m.name for m in metrics.values() if (m.n or 0) > len(cands))
                raise ValueError(
                    f"{data.get('filename', 'data')}: example {rows.start + i + 1} has "
                    f"{len(cands)} candidates; {name} needs the first {short}"
                )
        return [[c.index(r) for r in a] for c, a in zip(lists[rows], answers)], 0
    flat = gold_indices([r for a in answers for r in a], model.candidates_)
    if all(len(a) == 1 for a in answers):
        return flat, int(np.count_nonzero(flat < 0))
    ends = np.cumsum([len(a) for a in answers])
    return np.split(flat, ends[:-1]), int(np.count_nonzero(flat < 0))


def _judge(model, data, metrics: dict, progress: bool, desc: str):
    """``(values, skipped, missing)``: each metric of ``metrics`` (name: RankingMetric)
    over the examples of ``data``, ranked among their own candidates when the file gives
    them, else among the model's; how many examples each metric left out (no right
    answer); how many right responses are not among the model's candidates (misses)."""
    lists = data.get("candidate_lists")
    for metric in metrics.values():
        if metric.n is not None and lists is None:
            raise ValueError(
                f"{metric.name} ranks the first {metric.n} candidates of each example: give "
                "them in the file (a 'candidates' list, or an Ubuntu evaluation file)"
            )
    per_example = {name: [] for name in metrics}
    missing = 0
    lookup = None
    if "relevance" in data and lists is None:
        lookup = {text: j for j, text in enumerate(model.candidates_)}
    for start, scores in _scored_blocks(model, data.X, lists, progress, desc):
        rows = slice(start, start + len(scores))
        gold, absent = _right_answers(model, data, lists, rows, metrics, lookup)
        missing += absent
        for name, metric in metrics.items():
            per_example[name].append(metric.per_example(gold, scores))
    values, skipped = {}, {}
    for name, metric in metrics.items():
        v = np.concatenate(per_example[name])
        skipped[name] = int(np.isnan(v).sum())
        values[name] = metric.average(v)
    return values, skipped, missing


def _cmd_train_own(args) -> int:
    if args.task is not None:
        raise ValueError("give either --task (a bench suite) or --train FILE, not both")
    if args.model not in OWN_DATA_MODELS:
        raise ValueError(f"unknown model {args.model!r} for --train; choose from "
                         f"{', '.join(OWN_DATA_MODELS)}")  # fmt: skip
    spec = OWN_DATA_MODELS[args.model]
    output, fmt = _save_target(args.save)
    overrides = dict(args.set or [])
    known = spec.build().get_params()
    if "candidates" in overrides:
        raise ValueError(
            "--set candidates: the candidates come from --candidates FILE (one response a "
            "line), else from the responses of --train"
        )
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise ValueError(
            f"--set: {args.model} has no hyper-parameter {', '.join(unknown)}; it has "
            f"{', '.join(sorted(set(known) - {'candidates'}))}"
        )
    say = (lambda *a, **k: None) if args.quiet else print
    train = load_dialogs(args.train, args.format)
    valid = load_dialogs(args.valid, args.format) if args.valid is not None else None
    if args.candidates is not None:
        candidates = _read_candidates(args.candidates)
    elif "documents" in train:  # retrieval (BEIR, MS MARCO): the corpus
        candidates = train.documents
    else:
        candidates = list(dict.fromkeys(_positive(train)[1]))
    points = [overrides] if overrides or valid is None else grid_points(spec)
    progress = _progress(args)
    best = None
    for point in tqdm(points, desc=f"train {args.model}", disable=not progress or len(points) < 2):
        # the model's own progress bar (epochs) when there is no bar over the points
        model = _fit_own(spec, point, train, candidates, args, progress and len(points) == 1)
        score = None
        if valid is not None:
            hits = {"hits@1": get_ranking_metric("hits@1")}
            score = _judge(model, valid, hits, False, "valid")[0]["hits@1"]
            if len(points) > 1:
                say(f"  {json.dumps(point)}: valid hits@1 {100 * score:.2f}%")
        if best is None or (score is not None and score > best[0]):
            best = (score, point, model)
    score, point, model = best
    _save_model(model, output, fmt)
    how = "kept the best on --valid" if len(points) > 1 else "no search"
    say(f"{args.model} ({type(model).__name__}): {json.dumps(point)} ({how}), "
        f"{len(model.candidates_)} candidates")  # fmt: skip
    if score is not None:
        say(f"valid hits@1: {100 * score:.2f}% ({len(valid.X)} examples)")
    say(_saved_to(output, fmt))
    return 0


def _load_ranker(path, method="rank_candidates"):
    model = load_model(path)
    if not hasattr(model, "candidates_") or not hasattr(model, method):
        raise ValueError(f"{path} does not hold a fitted ranker")
    return model


def _ranking_metrics(text: str, no_answer: str) -> dict:
    names = [m.strip().lower() for m in text.split(",") if m.strip()]
    if not names:
        raise ValueError("--metrics: name at least one metric (hits@K, mrr, map, ndcg@K, ...)")
    try:
        return {m: get_ranking_metric(m, no_answer=no_answer) for m in names}
    except ValueError as exc:
        raise ValueError(f"--metrics: {exc}") from None


def _default_metrics(data) -> str:
    """What the field reports for such data: nDCG@10, recall@100 and MRR@10 for retrieval
    (BEIR, Anserini's MS MARCO runs), MAP, MRR and P@1 for pools with several right
    answers (Douban, answer selection), hits@1, hits@10 and MRR otherwise."""
    if "relevance" in data:
        return "ndcg@10,recall@100,mrr@10"
    if any(r is not None and not isinstance(r, str) for r in data.y):
        return "map,mrr,p@1"
    return "hits@1,hits@10,mrr"


def _cmd_evaluate(args) -> int:
    model = _load_ranker(args.model_file)
    metrics = None if args.metrics is None else _ranking_metrics(args.metrics, args.no_answer)
    output = check_output(args.output)
    data = load_dialogs(args.file, args.format)
    if metrics is None:
        metrics = _ranking_metrics(_default_metrics(data), args.no_answer)
    values, skipped, missing = _judge(model, data, metrics, _progress(args), "evaluate")
    against = (
        "each example's candidates"
        if "candidate_lists" in data
        else f"the model's {len(model.candidates_)} candidates"
    )
    n = len(data.X)
    if output is not None:
        record = {"file": str(args.file), "n": n, "against": against, **values}
        output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    if not args.quiet:
        print(f"{args.file}: {n} examples, ranked against {against} (ties at their expected value)")
        if missing:
            print(f"{missing} right responses are not among the candidates (counted as misses)")
        for name, count in skipped.items():
            if count:
                print(
                    f"{name}: {count} examples with no right response among their candidates, "
                    "left out"
                )
        for name, value in values.items():
            fraction = name.startswith(("mrr", "map", "ndcg"))
            print(f"{name:<9} {value:.4f}" if fraction else f"{name:<9} {100 * value:6.2f}%")
    return 0


def _read_allowed(path: Path, position, n_queries: int, queries: str):
    """The filter of ``irdialog rank --allowed FILE``: a text file lists one id a line, the
    filter of every query (an int64 array of positions); a ``.jsonl`` file one JSON list of
    ids a line, the filter of each query in turn (a list of lists of positions).
    ``position(value, number, line, text)`` gives the positions of an id, ``value`` the
    stripped line of a text file (``text`` true) or an item of a JSON list, and raises
    :class:`DataFormatError` for one that names nothing. Blank lines of a text file are
    skipped."""
    if not path.is_file():
        raise FileNotFoundError(f"--allowed {path}: no such file")
    if not path.name.lower().removesuffix(".gz").endswith(".jsonl"):
        return _listed_positions(path, position)
    filters = []
    for number, line in enumerate(read_lines(path), 1):
        try:
            values = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(path, number, f"a JSON list of ids ({err.msg})") from None
        if not isinstance(values, list):
            raise DataFormatError(path, number, "a JSON list of ids (one line a query)", got=line)
        filters.append([p for v in values for p in position(v, number, line, False)])
    if len(filters) != n_queries:
        raise ValueError(
            f"--allowed {path}: {len(filters)} filters (one a line), but {queries} holds "
            f"{n_queries} queries"
        )
    return filters


def _listed_positions(path: Path, position) -> np.ndarray:
    """The positions of the ids a text file lists, one a line (blank lines skipped), by
    ``position`` as :func:`_read_allowed` takes it."""
    found = [p for number, line in enumerate(read_lines(path), 1) if line.strip()
             for p in position(line.strip(), number, line, True)]  # fmt: skip
    return np.array(found, dtype=np.int64)


def _candidate_positions(path: Path, candidates):
    """``position`` of :func:`_read_allowed` for a model: a candidate by its text."""
    where: dict[str, list[int]] = {}
    for j, c in enumerate(candidates):
        where.setdefault(str(c), []).append(j)

    def position(value, number, line, text):
        if not isinstance(value, str) or value not in where:
            raise DataFormatError(path, number, "a candidate of the model (its text)", got=line)
        return where[value]

    return position


def _document_positions(path: Path, ids: list | None, n_ids: int):
    """``position`` of :func:`_read_allowed` for an index: a document by its id as
    ``irdialog rank`` prints it (``ids``: the index's external ids; None: positions); on a
    line of a text file, JSON or else a string id, unquoted."""
    where = None if ids is None else {json.dumps(i): p for p, i in enumerate(ids)}

    def position(value, number, line, text):
        if text:
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass  # a string id, unquoted
        if where is not None:
            if json.dumps(value) not in where:
                raise DataFormatError(path, number, "ids of the index", got=line)
            return [where[json.dumps(value)]]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < n_ids:
            raise DataFormatError(path, number, f"document ids (integers in [0, {n_ids}))",
                                  got=line)  # fmt: skip
        return [value]

    return position


def _candidate_mask(allowed, rows: slice, n_candidates: int) -> np.ndarray:
    """The candidates that the queries ``rows`` may return under the filter ``allowed``
    (:func:`_read_allowed`): one row for them all, or one per query."""
    block = [allowed] if isinstance(allowed, np.ndarray) else allowed[rows]
    mask = np.zeros((len(block), n_candidates), dtype=bool)
    for i, f in enumerate(block):
        mask[i, f] = True
    return mask


def _cmd_rank(args) -> int:
    if Path(args.model_file).is_dir():
        return _cmd_rank_index(args)
    for flag, value in (("--scheduler", args.scheduler), ("--threads", args.threads)):
        if value is not None:
            raise ValueError(
                f"{flag} searches an index directory; {args.model_file} is a model file"
            )
    model = _load_ranker(args.model_file)
    output = check_output(args.output)
    data = load_dialogs(args.file, args.format, require_response=False)
    lists = data.get("candidate_lists")
    allowed = None
    if args.allowed is not None:
        if lists is not None:
            raise ValueError(
                f"--allowed filters the model's candidates, but {args.file} gives each "
                "example its own"
            )
        path = Path(args.allowed)
        position = _candidate_positions(path, model.candidates_)
        allowed = _read_allowed(path, position, len(data.X), args.file)
    lines = []
    for start, scores in _scored_blocks(model, data.X, lists, _progress(args), "rank"):
        if lists is None:
            pools = [model.candidates_] * scores.shape[0]
        else:
            pools = lists[start : start + len(scores)]
        if allowed is not None:
            rows = slice(start, start + len(scores))
            mask = _candidate_mask(allowed, rows, scores.shape[1])
            scores = np.where(mask, scores, -np.inf)
        top = _top_k(scores, args.k)
        for pool, order, row in zip(pools, top, scores):
            order = [j for j in order if row[j] > -np.inf]  # not the padding of a short list
            lines.append(json.dumps(
                {"responses": [str(pool[j]) for j in order],
                 "scores": [float(row[j]) for j in order]},
                ensure_ascii=False,
            ))  # fmt: skip
    return _write_rankings(lines, output, args)


# The external ids of a JSON Lines corpus, beside its index (a text corpus's ids are its
# line numbers).
INDEX_IDS = "ids.json"
# Queries ranked at a time by `irdialog rank INDEX_DIR` (a step of its progress bar).
_RANK_BLOCK = 1024


def _corpus_records(path: Path) -> tuple[list, list[str]]:
    """The ids and the texts of the lines of a JSON Lines corpus."""
    ids, texts = [], []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(path, number, f"a JSON object ({err})") from None
        if not isinstance(record, dict) or "text" not in record or "id" not in record:
            raise DataFormatError(path, number, 'a JSON object with "id" and "text"')
        if not isinstance(record["text"], str):
            raise DataFormatError(path, number, '"text" as a string')
        ids.append(record["id"])
        texts.append(record["text"])
    return ids, texts


def _report(args, message: str) -> int:
    """Print what an ``irdialog index`` command did, unless ``--quiet``; its exit status."""
    if not args.quiet:
        print(message)
    return 0


def _cmd_index_build(args) -> int:
    corpus = Path(args.corpus)
    if not corpus.is_file():
        raise FileNotFoundError(f"{corpus}: no such corpus file")
    save = Path(args.save)
    if save.exists() and not save.is_dir():
        raise ValueError(f"--save {save} is a file; give a directory")
    if save.is_dir() and any(save.iterdir()) and not (save / "index.json").is_file():
        raise ValueError(f"--save {save}: the directory holds other files than an index")
    ids, documents = None, [corpus]  # a text file: read by the workers, one document a line
    if corpus.suffix.lower() in (".jsonl", ".json"):
        ids, documents = _corpus_records(corpus)
        if len(set(map(json.dumps, ids))) != len(ids):
            raise ValueError(f"{corpus}: the ids are not unique")
    template = BM25Ranker(method=args.method, k1=args.k1, b=args.b, tokenizer=args.tokenizer)
    index = ShardedIndex(
        template, shards=args.shards, client=args.scheduler, directory=save,
        verbose=_progress(args),
    )  # fmt: skip
    with index:
        index.build(documents)
        n_docs, n_terms = index.n_documents_, len(index.ranker_.vocabulary_)
    if ids is not None:
        (save / INDEX_IDS).write_text(json.dumps(ids, ensure_ascii=False), encoding="utf-8")
    elif (save / INDEX_IDS).exists():
        (save / INDEX_IDS).unlink()  # from an earlier build of a JSON Lines corpus
    return _report(args, f"{n_docs} documents, {n_terms} terms, in {args.shards} shards: {save}")


def _index_directory(path: str) -> Path:
    directory = Path(path)
    if not (directory / "index.json").is_file():
        raise FileNotFoundError(f"{directory}: not an index directory (no index.json)")
    return directory


def _read_ids(directory: Path) -> list | None:
    """The external ids of an index's documents, by position (None: the positions)."""
    path = directory / INDEX_IDS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _write_ids(directory: Path, ids: list) -> None:
    part = directory / f".{INDEX_IDS}.part"
    part.write_text(json.dumps(ids, ensure_ascii=False), encoding="utf-8")
    part.replace(directory / INDEX_IDS)


def _cmd_index_add(args) -> int:
    directory = _index_directory(args.directory)
    corpus = Path(args.corpus)
    if not corpus.is_file():
        raise FileNotFoundError(f"{corpus}: no such corpus file")
    ids = _read_ids(directory)
    records = corpus.suffix.lower() in (".jsonl", ".json")
    if records:
        if ids is None:
            raise ValueError(
                f"{directory}: its documents are numbered by line (built from a text file); "
                "add a text file, one document a line"
            )
        new_ids, documents = _corpus_records(corpus)
        keys = set(map(json.dumps, ids))
        for number, i in enumerate(new_ids, 1):
            if json.dumps(i) in keys:
                raise ValueError(f"{corpus}: the id {i!r} (record {number}) is already used")
            keys.add(json.dumps(i))
    else:
        if ids is not None and not all(isinstance(i, int) for i in ids):
            raise ValueError(
                f"{directory}: its ids come from JSON Lines; add a .jsonl file with 'id' and 'text'"
            )
        documents = [corpus]  # read by a worker, one document a line
    with ShardedIndex.open(
        directory, client=args.scheduler, verbose=_progress(args),
        max_shard_growth=args.max_shard_growth,
    ) as index:  # fmt: skip
        added = index.add(documents)
        n_docs = index.n_documents_
    if records:
        _write_ids(directory, ids + new_ids)
    elif ids is not None:  # a compacted text corpus: the ids go on from the largest
        start = max(ids, default=-1) + 1
        _write_ids(directory, ids + list(range(start, start + len(added))))
    return _report(args, f"{len(added)} documents added: {n_docs} in {directory}")


def _cmd_index_delete(args) -> int:
    directory = _index_directory(args.directory)
    path = Path(args.ids)
    ids = _read_ids(directory)
    with ShardedIndex.open(directory, client=args.scheduler, verbose=_progress(args)) as index:
        found = _listed_positions(path, _document_positions(path, ids, int(index.offsets_[-1])))
        index.delete(found)
        n_docs = index.n_documents_
    return _report(
        args, f"{len(set(found.tolist()))} documents deleted: {n_docs} left in {directory}"
    )


def _cmd_index_compact(args) -> int:
    directory = _index_directory(args.directory)
    ids = _read_ids(directory)
    with ShardedIndex.open(directory, client=args.scheduler, verbose=_progress(args)) as index:
        kept = index.compact()
        n_shards = len(index.offsets_) - 1
    if ids is not None:
        _write_ids(directory, [ids[i] for i in kept.tolist()])
    elif len(kept) and kept[-1] != len(kept) - 1:  # renumbered: keep the ids given so far
        _write_ids(directory, kept.tolist())
    return _report(args, f"{len(kept)} documents in {n_shards} shards: {directory}")


def _cmd_rank_index(args) -> int:
    output = check_output(args.output)
    directory = Path(args.model_file)
    queries = read_lines(Path(args.file))
    ids = _read_ids(directory)
    lines = []
    with ShardedIndex.open(directory, client=args.scheduler) as index:
        allowed = None
        if args.allowed is not None:
            path = Path(args.allowed)
            position = _document_positions(path, ids, int(index.offsets_[-1]))
            allowed = _read_allowed(path, position, len(queries), args.file)
        blocks = range(0, len(queries), _RANK_BLOCK)
        for start in tqdm(blocks, desc="rank", unit=" blocks", disable=not _progress(args)):
            rows = slice(start, start + _RANK_BLOCK)
            block = allowed if allowed is None or isinstance(allowed, np.ndarray) else allowed[rows]
            top, scores = index.top_k(queries[rows], args.k, allowed=block, n_jobs=args.threads)
            for i, (row, values) in enumerate(zip(top.tolist(), scores.tolist()), start):
                n = sum(j >= 0 for j in row)  # not the padding of a short filter
                found = row[:n] if ids is None else [ids[j] for j in row[:n]]
                lines.append(json.dumps({"query": i, "ids": found, "scores": values[:n]},
                                        ensure_ascii=False))  # fmt: skip
    return _write_rankings(lines, output, args)


def _write_rankings(lines: list[str], output, args) -> int:
    """The JSON Lines of ``irdialog rank`` to ``--output``, or to standard output."""
    text = "".join(line + "\n" for line in lines)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        if not args.quiet:
            print(f"{len(lines)} rankings (top {args.k}) written to {output}")
    return 0


def _cmd_chat(args) -> int:
    from .chat import COMMANDS, chat

    model = _load_ranker(args.model_file, "rank")
    interactive = sys.stdin.isatty()
    if interactive:
        try:
            import readline  # noqa: F401  (line editing and history at the prompt)
        except ImportError:  # pragma: no cover - not on every platform
            pass
        commands = ", ".join(c.split()[0] for c in COMMANDS)
        print(f"irdialog chat: {type(model).__name__} with {len(model.candidates_)} "
              f"candidates; commands: {commands}; an empty line is <SILENCE>")  # fmt: skip
    chat(
        model, sys.stdin, sys.stdout, top=args.top, show_memory=not args.no_memory,
        prompt="you> " if interactive else None,
    )  # fmt: skip
    return 0


def build_parser() -> argparse.ArgumentParser:
    fmt = {"formatter_class": HelpFormatter}
    parser = argparse.ArgumentParser(prog="irdialog", description=DESCRIPTION, **fmt)
    parser.add_argument("--version", action="version", version=f"irdialog {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = common_options()

    def command(name, help, description, *parents, commands=sub):
        return commands.add_parser(
            name, parents=list(parents), help=help, description=description, **fmt
        )

    def quiet(subcommand):
        subcommand.add_argument(
            "--quiet", action="store_true", help="no progress bars or messages; errors only"
        )

    run = command(
        "run",
        "demo: train and evaluate five rankers on bundled dialog bAbI task 1 (<1 min)",
        "Train and evaluate the rule-based bot, TF-IDF, BM25, supervised "
        "embeddings and MemN2N with match type on task 1 of dialog bAbI (the bundled data), "
        "with the hyper-parameters the bench chose on dev, and print one table: each "
        "model's per-response test accuracy next to the paper's, and its seconds.",
        common,
    )
    run.add_argument(
        "--all", action="store_true", help="every dialog bAbI model of the bench (a few minutes)"
    )
    run.set_defaults(func=_cmd_run)

    suites = add_bench_parser(sub, common)
    add_reproduce_parser(suites)

    trainable = sorted(name for name, suite in SUITES.items() if suite.train is not None)
    train = command(
        "train",
        "train a model (a bench suite's, or on your own dialogs) and save it",
        "Two modes. With --task: train the model `irdialog bench` scores for one "
        "task (its preset, chosen beforehand on held-out data, or the best point of its grid "
        "on dev), on the train split, and save it (single-task models of dialog bAbI and "
        "bAbI QA). With --train FILE: train a model on your own dialogs (JSON Lines, "
        "Ubuntu-layout CSV/TSV, dialog bAbI, multi-turn TSV, DSTC7 JSON, ParlAI text, BEIR, "
        "MS MARCO or pools by answer id; see irdialog.datasets.load_dialogs); the candidate "
        "set is --candidates, else the corpus (BEIR, MS MARCO), else the training "
        "responses; with --valid and no --set, each point of the model's small grid is "
        "fitted and the one with the best "
        f"hits@1 on the valid file is kept ({grid_help()}). On an Ubuntu training file "
        "(with labels) tfidf and bm25 take their statistics from every row, the other models "
        "learn from the rows labelled 1. "
        "A .npz file holds arrays and JSON and loads without pickle (irdialog.persist.load); "
        "a .joblib file is a pickle (joblib.load): load only your own.",
        common,
    )
    train.add_argument(
        "--suite", choices=trainable, default="dialog-babi", help="with --task: the suite"
    )
    train.add_argument(
        "--task", type=int, default=None, metavar="TASK",
        help="the task of the suite (dialog bAbI: 1-6; bAbI QA: 1-20)",
    )  # fmt: skip
    train.add_argument("--train", metavar="FILE", help="your own training dialogs")
    train.add_argument(
        "--valid", metavar="FILE", help="with --train: validation dialogs to choose the grid point"
    )
    train.add_argument(
        "--candidates", metavar="FILE",
        help="with --train: the candidate responses, one per line (default: the distinct "
        "training responses)",
    )  # fmt: skip
    train.add_argument(
        "--format", choices=FORMATS, default=None,
        help="with --train: the format of the files (default: inferred from the directory "
        "layout, the first line or the suffix; see irdialog.datasets.load_dialogs)",
    )  # fmt: skip
    models = "; ".join(f"{name}: {', '.join(sorted(SUITES[name].models))}" for name in trainable)
    train.add_argument(
        "--model", required=True, metavar="MODEL",
        help=f"the model; with --task ({models}); with --train: {', '.join(OWN_DATA_MODELS)}",
    )  # fmt: skip
    train.add_argument(
        "--save", required=True, metavar="FILE",
        help="where to save the model: FILE.npz (arrays + JSON) or FILE.joblib (pickle)",
    )  # fmt: skip
    train.add_argument("--seed", type=int, default=0, help="the random_state of the model")
    train.add_argument(
        "--threads", type=int, default=None, metavar="N",
        help="train on N threads (the model's n_jobs; -1: every core); default: one",
    )  # fmt: skip
    train.add_argument(
        "--set", type=_assignment, action="append", metavar="NAME=VALUE",
        help="set a hyper-parameter (repeatable): over the preset with --task; with --train, "
        "no grid search then",
    )  # fmt: skip
    train.set_defaults(func=_cmd_train)

    judged = argparse.ArgumentParser(add_help=False)
    judged.add_argument("model_file", metavar="MODEL_FILE", help="a .npz or .joblib model file")
    judged.add_argument("file", metavar="FILE", help="dialogs, as for train --train")
    judged.add_argument(
        "--format", choices=FORMATS, default=None,
        help="the format of FILE (default: inferred from the directory layout, the first "
        "line or the suffix; see irdialog.datasets.load_dialogs)",
    )  # fmt: skip
    quiet(judged)
    evaluate = command(
        "evaluate",
        "score a saved model on dialogs",
        "Rank each example's candidates when FILE gives them (JSON Lines "
        "'candidates', Ubuntu evaluation files), else the model's candidate set (a right "
        "response that is not a candidate is a miss), and print the metrics. An example may "
        "have several right responses (JSON Lines 'responses'). Tied scores count at their "
        "expected value under a random order of the tied candidates.",
        judged,
    )
    evaluate.add_argument(
        "--metrics", default=None, metavar="M,M,...",
        help="default: ndcg@10,recall@100,mrr@10 for BEIR and MS MARCO; map,mrr,p@1 when "
        "an example has several right responses (or none); else hits@1,hits@10,mrr. "
        "Comma-separated, K and N positive integers: hits@K, p@1, mrr, mrr@K, map, "
        "ndcg@K, recall@K (the share of the right responses in the top K) and rN@K (recall@K "
        "among the first N candidates of each list, the Ubuntu and Douban R10@1, R2@1; needs "
        "each example's candidates)",
    )  # fmt: skip
    evaluate.add_argument(
        "--no-answer", choices=("skip", "miss"), default="skip",
        help="an example with no right response among its candidates: left out of the "
        "averages (skip, as the Douban and E-commerce evaluation), or counted as 0 (miss)",
    )  # fmt: skip
    evaluate.add_argument("--output", metavar="FILE", help="also write the metrics as JSON here")
    evaluate.set_defaults(func=_cmd_evaluate)

    rank = command(
        "rank",
        "the top-k responses of a saved model for dialogs",
        'For each example of FILE, in order, one JSON line {"responses": '
        '[...], "scores": [...]}: the k best of its own candidates when FILE gives them, '
        "else of the model's, best first (ties to the lower candidate index). JSON Lines "
        "examples need no 'response' here.",
        judged,
    )
    rank.add_argument(
        "-k", type=positive_int, default=10, metavar="K", help="how many responses per example"
    )
    rank.add_argument("--output", metavar="FILE", help="write here (default: standard output)")
    rank.add_argument(
        "--allowed", metavar="FILTER",
        help="rank only these documents of an index directory, or these candidates of a "
        "model: a text file of one id a line (as rank prints them; for a model, a "
        "candidate's text), the filter of every query; or a .jsonl file of one JSON list of "
        'ids (or texts) a line, line i the filter of query i (["d1", "d7"]). A query '
        "allowed fewer than K gets them all, ranked; an id that the index or the model does "
        "not hold is an error naming its line",
    )  # fmt: skip
    rank.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="with an index directory: search its shards on the Dask cluster of this "
        "scheduler (tcp://host:port); default: a local cluster (this process for one shard)",
    )  # fmt: skip
    rank.add_argument(
        "--threads", type=int, default=None, metavar="N",
        help="with an index directory: search each shard on N threads (here, or on its "
        "worker; -1: every core); default: one",
    )  # fmt: skip
    rank.set_defaults(func=_cmd_rank)

    index = command(
        "index",
        "build a BM25 index, in shards on Dask workers",
        "Index commands; `irdialog rank DIR QUERIES` searches an index directory.",
    )
    index_commands = index.add_subparsers(dest="index_command", metavar="COMMAND", required=True)
    build = command(
        "build",
        "index a corpus in shards",
        "Index CORPUS with BM25 in --shards shards, built on Dask workers with the "
        "statistics of the whole corpus, so that scores equal one index's. CORPUS: a text file "
        "of one document a line (id: the line number, from 0) or JSON Lines (.jsonl) with "
        "'id' and 'text'. Search it with `irdialog rank DIR QUERIES`.",
        commands=index_commands,
    )
    build.add_argument("corpus", metavar="CORPUS", help="the documents (.txt or .jsonl)")
    build.add_argument("--save", required=True, metavar="DIR", help="the index directory")
    build.add_argument("--shards", type=positive_int, default=1, metavar="N", help="shards")
    build.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="the Dask scheduler (tcp://host:port) whose workers build the shards; default: a "
        "local cluster (this process for one shard)",
    )  # fmt: skip
    build.add_argument("--method", choices=BM25_METHODS, default="lucene", help="BM25 variant")
    build.add_argument("--k1", type=float, default=1.5, help="term-frequency saturation")
    build.add_argument("--b", type=float, default=0.75, help="length normalisation")
    build.add_argument("--tokenizer", choices=("word", "char"), default="word", help="tokens")
    quiet(build)
    build.set_defaults(func=_cmd_index_build)

    def change_parser(name, help, description):
        change = command(name, help, description, commands=index_commands)
        change.add_argument("directory", metavar="DIR", help="the index directory")
        return change

    def change_options(command, func):
        command.add_argument(
            "--scheduler", metavar="ADDRESS",
            help="the Dask scheduler (tcp://host:port) whose workers hold the shards; "
            "default: a local cluster (this process for one shard)",
        )  # fmt: skip
        quiet(command)
        command.set_defaults(func=func)

    add = change_parser(
        "add", "add documents to an index",
        "Add the documents of FILE to the index DIR as a new shard, or at the end of the "
        "shard of earlier additions while that stays within --max-shard-growth times the "
        "mean shard size, the "
        "statistics (document count, frequencies, mean length) those of every document, so "
        "that scores equal a rebuild's. FILE: as CORPUS of `index build` (a text file for an "
        "index of a text file, whose new documents are numbered after the last; JSON Lines "
        "with new 'id's for one of JSON Lines).",
    )  # fmt: skip
    add.add_argument("corpus", metavar="FILE", help="the documents (.txt or .jsonl)")
    add.add_argument(
        "--max-shard-growth", type=float, default=1.1, metavar="X",
        help="append to the shard of earlier additions while it holds at most X times the "
        "mean shard size (0: always a new shard)",
    )  # fmt: skip
    change_options(add, _cmd_index_add)
    delete = change_parser(
        "delete", "delete documents from an index",
        "Delete the documents whose ids are listed in IDS (one a line, as `irdialog rank` "
        "gives them) from the index DIR; the statistics become those of the documents left. "
        "They stay on disk, never returned, until `index compact`.",
    )  # fmt: skip
    delete.add_argument("ids", metavar="IDS", help="a file of document ids, one a line")
    change_options(delete, _cmd_index_delete)
    compact = change_parser(
        "compact", "rewrite an index without its deleted documents",
        "Rewrite the index DIR in as many shards as it was built with, without its deleted "
        "documents; the documents keep their ids.",
    )  # fmt: skip
    change_options(compact, _cmd_index_compact)

    chat = command(
        "chat",
        "talk to a saved model",
        "Talk to a model saved by `irdialog train`: type an utterance, the bot "
        "answers with its best candidate; the conversation so far is the history of the next "
        "turn. Commands: /reset (new dialog), /kb TEXT (add an API result to the history), "
        "/quit, /help; an empty line is <SILENCE>. When standard input is not a terminal, "
        "one utterance is read per line and only the replies are printed.",
    )
    chat.add_argument("model_file", metavar="MODEL_FILE", help="a .npz or .joblib model file")
    chat.add_argument(
        "--top", type=positive_int, default=1, metavar="K",
        help="show the K best candidates (the answer and K-1 alternatives) with their scores",
    )  # fmt: skip
    chat.add_argument(
        "--no-memory", action="store_true",
        help="for MemN2N: do not show the memory each hop attended to most",
    )  # fmt: skip
    chat.set_defaults(func=_cmd_chat)

    datasets = command(
        "datasets",
        "list the data sets, tasks and splits found",
        "List the data sets found in the data home, with their tasks and splits, "
        "and where to get the corpora of the format suites, with their licence. Exit 1 when "
        "the data home does not exist or holds none.",
        common,
    )
    datasets.set_defaults(func=_cmd_datasets)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    args.argv = argv
    if not getattr(args, "quiet", False):
        announce_compilation()
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"irdialog: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # permissions, a full disk, a closed pipe
        print(f"irdialog: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("irdialog: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
