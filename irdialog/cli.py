"""The ``irdialog`` command: run, bench, datasets.

Examples
--------
::

    irdialog run                                   # bundled dialog bAbI task 1, every ranker
    irdialog bench dialog-babi --model tfidf --data-home ../shared/data --output tfidf.json
    irdialog bench dialog-babi --model se --seeds 5 --data-home ../shared/data
    irdialog bench report                          # BENCHMARKS.md tables from the JSON files
    irdialog datasets
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import sys
from contextlib import nullcontext
from pathlib import Path

from . import __version__
from .bench import (
    SUITES,
    bench_dialog_babi,
    dask_cluster,
    format_qa_table,
    format_table,
    run_suite,
    search_babi_qa,
    write_presets,
)
from .bench._report import update_markdown
from .datasets import list_datasets
from .plot import _plot_argument, plot_bench, save_plot


def _progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _cmd_run(args) -> int:
    print(f"irdialog {__version__}: dialog bAbI task 1 on the bundled data (test split)")
    print("hyper-parameters chosen on the dev split; accuracy in %, per-dialog in brackets\n")
    for model in SUITES["dialog-babi"].models:
        run = bench_dialog_babi(
            model, tasks=[1], data_home=args.data_home, progress=_progress(args)
        )
        chosen = run["chosen"][0]
        print(format_table(run))
        print(f"chosen: {chosen['params']}  ({run['seconds']:.1f} s)\n")
    return 0


def check_output(path) -> Path | None:
    """The ``--output`` path, checked before any training: its folder must exist and be
    writable, and the path must not be a folder."""
    if path is None:
        return None
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"--output {path} is a directory; give a file name such as result.json")
    if not folder.is_dir():
        raise ValueError(f"--output {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"--output {path}: not writable")
    return path


def _check_data_home(data_home) -> None:
    if data_home is not None and not Path(data_home).is_dir():
        raise ValueError(f"--data-home {data_home} is not a directory")


def _print_movie(result) -> None:
    for row in result["rows"]:
        resp = f" response {row['response']}" if "response" in row else ""
        paper = "" if row["paper"] is None else f"  (paper {row['paper']})"
        std = f" ± {row['value_std']:.2f}" if "value_std" in row else ""
        value = f"{row['metric']}: {row['value']:.2f}{std}"
        print(f"task {row['task']}{resp} {value}{paper}  n={row['n']}")
    for run in result["runs"]:
        print(
            f"seed {run['seed']}, chosen on held-out dev: {json.dumps(run['chosen'][0]['params'])}"
        )
    print(f"protocol: {result['protocol']}")


def _print_ubuntu(result) -> None:
    for row in result["rows"]:
        ours = f"{row['split']} {row['metric']}: {row['value']:.2f}"
        print(f"{ours}  paper {row['paper']}  n={row['n']}")
    print(json.dumps(result["resources"]))


def _print_chosen(result) -> None:
    for run in result["runs"]:
        chosen = {c.get("task"): c["params"] for c in run["chosen"]}
        print(f"seed {run['seed']}, chosen per task: {json.dumps(chosen)}")


# Per suite of the registry: the options it takes from the command line, the printer.
_COMMAND_LINE = {
    "dialog-babi": (
        lambda a: {"model": a.model, "tasks": a.tasks, **_tuning(a)},
        lambda r: (print(format_table(r)), _print_chosen(r)),
    ),
    "babi-qa": (
        lambda a: {
            "model": a.model,
            "tasks": a.tasks,
            "lang": a.lang,
            "joint": a.joint,
            **_tuning(a),
        },  # fmt: skip
        lambda r: print(format_qa_table(r)),
    ),
    "movie-dialog": (
        lambda a: {
            "task": a.task,
            "model": a.model,
            "sweep": {"n_components": a.sweep_n_components} if a.sweep_n_components else None,
        },
        _print_movie,
    ),
    "ubuntu": (
        lambda a: {"model": a.model, "chunksize": a.chunksize, "split": a.split},
        _print_ubuntu,
    ),
}


def _tuning(args) -> dict:
    """The held-out mode and parameter overrides of a tuning run (``--heldout --set``)."""
    out = {}
    if args.heldout:
        out["heldout"] = True
    if args.set:
        out["overrides"] = dict(args.set)
    return out


def _cmd_search(args) -> int:
    output = check_output(args.presets_output)
    _check_data_home(args.data_home)
    chosen = search_babi_qa(
        args.model, args.tasks, lang=args.lang, data_home=args.data_home, progress=_progress(args)
    )
    if output is not None:
        write_presets(
            output,
            suite="babi-qa",
            model=args.model,
            search=shlex.join(["irdialog", *args.argv]),
            chosen=chosen,
            notes=[
                "Each task's best point of the grid by accuracy on the last 20% of the stories "
                "of its training file, the model fitted on the first 80% (test never loaded)."
            ],
        )
    if not args.quiet:
        for entry in chosen:
            score = entry["selection"]["valid_accuracy"]
            print(f"task {entry['task']}: {json.dumps(entry['params'])}  valid {score}")
    return 0


def _cmd_bench(args) -> int:
    if getattr(args, "search", False):
        return _cmd_search(args)
    output = check_output(args.output)
    _check_data_home(args.data_home)
    options, show = _COMMAND_LINE[args.suite]
    n_jobs = args.n_jobs
    cluster = nullcontext()
    if args.scheduler:
        cluster = dask_cluster(args.scheduler)
        n_jobs = n_jobs or -1  # as many seeds at once as the cluster has workers
    with cluster:
        result = run_suite(
            SUITES[args.suite].run,
            seeds=range(args.seeds),
            data_home=args.data_home,
            command=["irdialog", *args.argv],
            progress=_progress(args),
            n_jobs=n_jobs,
            **options(args),
        )
    if output is not None:
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.plot is not None:
        save_plot(args.plot, plot_bench, result)
    if not args.quiet:
        show(result)
        print(f"{result['seconds']:.1f} s over {len(result['seeds'])} seed(s)")
    return 0


def _cmd_report(args) -> int:
    changed = update_markdown(args.markdown, args.results, check=args.check)
    if args.check and changed:
        print(f"{args.markdown} is out of date with {args.results}: run irdialog bench report")
        return 1
    if not args.check:
        print(f"{args.markdown}: {'updated' if changed else 'already up to date'}")
    return 0


def _cmd_datasets(args) -> int:
    for family, info in list_datasets(args.data_home).items():
        status = f"found at {info['path']}" if info["found"] else "not found"
        print(f"{family:<16} {status}")
    return 0


def _assignment(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a bare word, e.g. optimizer=adam


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="irdialog", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"irdialog {__version__}")
    sub = parser.add_subparsers(dest="command")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-home",
        default=None,
        help="data directory with the layout of shared/data (default: $IRDIALOG_DATA, "
        "then the bundled samples)",
    )
    common.add_argument("--quiet", action="store_true", help="no progress bars or tables")

    run = sub.add_parser(
        "run",
        parents=[common],
        help="train and evaluate every ranker on bundled dialog bAbI task 1",
    )
    run.set_defaults(func=_cmd_run)

    bench = sub.add_parser("bench", help="reproduce a paper table on the real data")
    suites = bench.add_subparsers(dest="suite", required=True)
    runs = argparse.ArgumentParser(add_help=False, parents=[common])
    runs.add_argument(
        "--seeds",
        type=_positive_int,
        default=1,
        metavar="N",
        help="run with seeds 0..N-1 and report the mean and standard deviation (default: 1)",
    )
    runs.add_argument("--output", help="write the result, with its provenance, as JSON here")
    runs.add_argument(
        "--plot",
        type=_plot_argument,
        metavar="FILE.png",
        help="draw the result next to the paper's figures here (irdialog.plot.plot_bench); "
        'needs pip install "irdialog[plot]", checked before any training',
    )
    runs.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        metavar="N",
        help="run N seeds at once, in joblib workers (default: one at a time; -1: all cores, "
        "or every worker of --scheduler)",
    )
    runs.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the seeds on the Dask cluster of this scheduler (tcp://host:port); needs "
        "pip install 'irdialog[dask]'",
    )
    runs.set_defaults(func=_cmd_bench)

    tuning = argparse.ArgumentParser(add_help=False)
    tuning.add_argument(
        "--heldout",
        action="store_true",
        help="score held-out data instead of test (dialog bAbI: dev; bAbI QA: the last "
        "stories of each training file); the test files are not loaded",
    )
    tuning.add_argument(
        "--set",
        type=_assignment,
        action="append",
        metavar="NAME=VALUE",
        help="override a hyper-parameter of the presets or grid (repeatable; for tuning)",
    )

    dialog = suites.add_parser(
        "dialog-babi", parents=[runs, tuning], help="dialog bAbI Table 2 (11 rows)"
    )
    dialog.add_argument("--model", required=True, choices=sorted(SUITES["dialog-babi"].models))
    dialog.add_argument(
        "--tasks", nargs="+", type=int, default=[1, 2, 3, 4, 5, 6], choices=range(1, 7),
        metavar="TASK",
    )  # fmt: skip

    qa = suites.add_parser("babi-qa", parents=[runs, tuning], help="bAbI QA, 20 tasks (Table 3)")
    qa.add_argument("--model", required=True, choices=sorted(SUITES["babi-qa"].models))
    qa.add_argument(
        "--tasks", nargs="+", type=int, default=list(range(1, 21)), choices=range(1, 21),
        metavar="TASK",
    )  # fmt: skip
    qa.add_argument("--lang", default="en", help="language folder of babi-qa/ (en, hn, ...)")
    qa.add_argument("--joint", action="store_true", help="one model trained on all tasks")
    qa.add_argument(
        "--search",
        action="store_true",
        help="choose each task's hyper-parameters on its validation stories (the model's "
        "grid) instead of running the bench",
    )
    qa.add_argument("--presets-output", help="with --search: write the chosen presets here")

    movie = suites.add_parser(
        "movie-dialog", parents=[runs], help="Movie Dialog Table 6 (dev-as-train protocol)"
    )
    movie.add_argument("--task", type=int, choices=(1, 2, 3), required=True)
    movie.add_argument("--model", required=True, choices=sorted(SUITES["movie-dialog"].models))
    movie.add_argument(
        "--sweep-n-components",
        type=_positive_int,
        nargs="*",
        default=None,
        help="diagnostics only: held-out score of the chosen point at these n_components",
    )

    ubuntu = suites.add_parser(
        "ubuntu", parents=[runs], help="Ubuntu next-utterance ranking, R@k of 2 and of 10"
    )
    ubuntu.add_argument("--model", default="tfidf", choices=sorted(SUITES["ubuntu"].models))
    ubuntu.add_argument(
        "--chunksize", type=_positive_int, default=10_000, help="training rows per chunk"
    )
    ubuntu.add_argument("--split", choices=("test", "valid"), default="test")

    report = suites.add_parser(
        "report", help="render the result JSON files as the tables of BENCHMARKS.md"
    )
    report.add_argument("--results", default="benchmarks/results", help="folder of JSON files")
    report.add_argument("--markdown", default="BENCHMARKS.md", help="the file to update")
    report.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if the file is out of date"
    )
    report.set_defaults(func=_cmd_report)

    datasets = sub.add_parser(
        "datasets", parents=[common], help="list the data sets found, and where"
    )
    datasets.set_defaults(func=_cmd_datasets)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["run"])
    args.argv = argv
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"irdialog: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
