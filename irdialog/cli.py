"""The ``irdialog`` command: run, bench, datasets.

Examples
--------
::

    irdialog run                                   # bundled dialog bAbI task 1, every ranker
    irdialog bench dialog-babi --model tfidf --data-home ../shared/data --output tfidf.json
    irdialog datasets
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __version__
from .bench import (
    BABI_QA_MODELS,
    DIALOG_BABI_MODELS,
    MOVIE_DIALOG_MODELS,
    UBUNTU_MODELS,
    bench_babi_qa,
    bench_dialog_babi,
    bench_movie_dialog,
    bench_ubuntu,
    format_qa_table,
    format_table,
    with_paper,
)
from .datasets import list_datasets


def _progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _cmd_run(args) -> int:
    print(f"irdialog {__version__}: dialog bAbI task 1 on the bundled data (test split)")
    print("hyper-parameters chosen on the dev split; accuracy in %, per-dialog in brackets\n")
    for model in DIALOG_BABI_MODELS:
        result = bench_dialog_babi(
            model, tasks=[1], data_home=args.data_home, progress=_progress(args)
        )
        print(format_table(with_paper(result), model))
        print(f"chosen: {result['params'][1]}  ({result['seconds']:.1f} s)\n")
    return 0


def _write(result: dict, output) -> None:
    if output:
        Path(output).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def _cmd_bench_dialog_babi(args) -> int:
    result = bench_dialog_babi(
        args.model, tasks=args.tasks, data_home=args.data_home, progress=_progress(args)
    )
    _write(result, args.output)
    if not args.quiet:
        print(format_table(with_paper(result), args.model))
        print(f"chosen per task: {json.dumps(result['params'])}")
        print(f"{result['seconds']:.1f} s")
    return 0


def _cmd_bench_babi_qa(args) -> int:
    result = bench_babi_qa(
        args.model,
        tasks=args.tasks,
        lang=args.lang,
        joint=args.joint,
        data_home=args.data_home,
        progress=_progress(args),
    )
    _write(result, args.output)
    if not args.quiet:
        print(format_qa_table(result))
        print(f"{result['seconds']:.1f} s")
    return 0


def _cmd_bench_movie_dialog(args) -> int:
    sweep = {"n_components": args.sweep_n_components} if args.sweep_n_components else None
    result = bench_movie_dialog(
        args.task, args.model, args.data_home, progress=_progress(args), sweep=sweep
    )
    _write(result, args.output)
    if not args.quiet:
        for row in result["rows"]:
            resp = f" response {row['response']}" if "response" in row else ""
            paper = "" if row["paper"] is None else f"  (paper {row['paper']})"
            value = f"{row['metric']}: {row['value']:.2f}"
            print(f"task {row['task']}{resp} {value}{paper}  n={row['n']}")
        chosen = {p: v for p, v in result["params"][args.task].items() if p != "grid"}
        print(f"chosen on held-out dev: {json.dumps(chosen)}")
        print(f"protocol: {result['protocol']}")
        print(f"{result['seconds']:.1f} s")
    return 0


def _cmd_bench_ubuntu(args) -> int:
    result = bench_ubuntu(
        args.model, args.data_home, _progress(args), chunksize=args.chunksize, split=args.split
    )
    _write(result, args.output)
    if not args.quiet:
        for row in result["rows"]:
            ours = f"{row['split']} {row['metric']}: {row['value']:.2f}"
            print(f"{ours}  paper {row['paper']}  n={row['n']}")
        print(json.dumps(result["resources"]))
    return 0


def _cmd_datasets(args) -> int:
    for family, info in list_datasets(args.data_home).items():
        status = f"found at {info['path']}" if info["found"] else "not found"
        print(f"{family:<16} {status}")
    return 0


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
    dialog = suites.add_parser(
        "dialog-babi", parents=[common], help="dialog bAbI Table 2 (11 rows)"
    )
    dialog.add_argument("--model", required=True, choices=sorted(DIALOG_BABI_MODELS))
    dialog.add_argument(
        "--tasks",
        nargs="+",
        type=int,
        default=[1, 2, 3, 4, 5, 6],
        choices=range(1, 7),
        metavar="TASK",
    )
    dialog.add_argument("--output", help="write the result as JSON to this file")
    dialog.set_defaults(func=_cmd_bench_dialog_babi)

    qa = suites.add_parser("babi-qa", parents=[common], help="bAbI QA, 20 tasks (Table 3)")
    qa.add_argument("--model", required=True, choices=sorted(BABI_QA_MODELS))
    qa.add_argument(
        "--tasks",
        nargs="+",
        type=int,
        default=list(range(1, 21)),
        choices=range(1, 21),
        metavar="TASK",
    )
    qa.add_argument("--lang", default="en", help="language folder of babi-qa/ (en, hn, ...)")
    qa.add_argument("--joint", action="store_true", help="one model trained on all tasks")
    qa.add_argument("--output", help="write the result as JSON to this file")
    qa.set_defaults(func=_cmd_bench_babi_qa)

    movie = suites.add_parser(
        "movie-dialog", parents=[common], help="Movie Dialog Table 6 (dev-as-train protocol)"
    )
    movie.add_argument("--task", type=int, choices=(1, 2, 3), required=True)
    movie.add_argument("--model", required=True, choices=sorted(MOVIE_DIALOG_MODELS))
    movie.add_argument(
        "--sweep-n-components",
        type=int,
        nargs="*",
        default=None,
        help="diagnostics only: held-out score of the chosen point at these n_components",
    )
    movie.add_argument("--output", help="write the result as JSON to this file")
    movie.set_defaults(func=_cmd_bench_movie_dialog)

    ubuntu = suites.add_parser(
        "ubuntu", parents=[common], help="Ubuntu next-utterance ranking, R@k of 2 and of 10"
    )
    ubuntu.add_argument("--model", default="tfidf", choices=sorted(UBUNTU_MODELS))
    ubuntu.add_argument("--chunksize", type=int, default=10_000, help="training rows per chunk")
    ubuntu.add_argument("--split", choices=("test", "valid"), default="test")
    ubuntu.add_argument("--output", help="write the result as JSON to this file")
    ubuntu.set_defaults(func=_cmd_bench_ubuntu)

    datasets = sub.add_parser(
        "datasets", parents=[common], help="list the data sets found, and where"
    )
    datasets.set_defaults(func=_cmd_datasets)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["run"])
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"irdialog: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
