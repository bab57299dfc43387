"""``irdialog bench``: the options of each suite's run (from its declaration), the run and
the ``--search`` of presets, and ``bench report``.

:func:`add_bench_parser` adds the ``bench`` command to the ``irdialog`` parser;
:func:`bench_parser` is a parser of ``irdialog bench SUITE ...`` alone, with which
``bench reproduce`` re-parses a recorded command.
"""

from __future__ import annotations

import argparse
import json
import shlex
from contextlib import nullcontext

from .._arguments import HelpFormatter, assignment, check_data_home, check_output, common_options
from .._arguments import show_progress as _progress
from ..plot import _plot_argument, plot_bench, save_plot
from ._harness import dask_cluster, run_suite
from ._presets import search_protocol, write_presets
from ._registry import SUITES, format_result
from ._report import update_markdown
from ._suite import positive_int

_FORMAT = {"formatter_class": HelpFormatter}


def _show(result) -> None:
    """The printed table of a result, each seed's chosen parameters, its protocol and the
    resources it used."""
    print(format_result(result))
    for run in result["runs"]:
        chosen = {str(c.get("task")): c["params"] for c in run["chosen"]}
        print(f"seed {run['seed']}, chosen: {json.dumps(chosen)}")
    if "protocol" in result:
        print(f"protocol: {result['protocol']}")
    if "resources" in result:
        print(f"resources: {json.dumps(result['resources'])}")


def _run_options(suite, args) -> dict:
    """The keywords of a suite's ``run`` from its command line (see ``Suite``)."""
    options = {"model": args.model}
    if suite.tasks is not None:
        options["task" if suite.one_task else "tasks"] = args.task if suite.one_task else args.tasks
    if suite.heldout and args.heldout:
        options["heldout"] = True
    if suite.overrides and args.set:
        options["overrides"] = dict(args.set)
    if getattr(args, "ties", None) is not None:  # set by bench reproduce (recorded_ties)
        options["ties"] = args.ties
    return {**options, **(suite.options(args) if suite.options else {})}


def _cmd_search(args) -> int:
    suite = SUITES[args.suite]
    output = check_output(args.presets_output)
    check_data_home(args.data_home)
    options = suite.options(args) if suite.options else {}
    if suite.search_options:
        options.update(suite.search_options(args))
    # The code's state is read before the search: a commit or an edit made while it runs
    # is not credited with its choices.
    protocol = search_protocol(args.suite, args.model)
    chosen = suite.search(
        args.model, args.tasks, data_home=args.data_home, progress=_progress(args),
        points=args.points, seeds=args.seeds, **options,
    )  # fmt: skip
    if output is not None:
        write_presets(
            output,
            suite=args.suite,
            model=args.model,
            search=shlex.join(["irdialog", *args.argv]),
            chosen=chosen,
            notes=suite.search_notes(args.model),
            protocol=protocol,
        )
    if not args.quiet:
        for entry in chosen:
            scores = {k: v for k, v in entry["selection"].items() if k != "grid"}
            print(f"task {entry['task']}: {json.dumps(entry['params'])}  {json.dumps(scores)}")
    return 0


def _cmd_bench(args) -> int:
    if getattr(args, "search", False):
        return _cmd_search(args)
    output = check_output(args.output)
    check_data_home(args.data_home)
    suite = SUITES[args.suite]
    n_jobs = args.n_jobs
    cluster = nullcontext()
    if args.scheduler:
        cluster = dask_cluster(args.scheduler)
        n_jobs = n_jobs or -1  # as many seeds at once as the cluster has workers
    with cluster:
        result = run_suite(
            suite.run,
            seeds=range(args.seeds),
            data_home=args.data_home,
            command=["irdialog", *args.argv],
            progress=_progress(args),
            n_jobs=n_jobs,
            threads=args.threads,
            **_run_options(suite, args),
        )
    if output is not None:
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.plot is not None:
        save_plot(args.plot, plot_bench, result)
    if not args.quiet:
        _show(result)
        print(f"{result['seconds']:.1f} s over {len(result['seeds'])} seed(s)")
    return 0


def _cmd_report(args) -> int:
    stale = []
    for markdown in args.markdown:
        changed = update_markdown(markdown, args.results, check=args.check)
        if args.check and changed:
            print(f"{markdown} is out of date with {args.results}: run irdialog bench report")
            stale.append(markdown)
        if not args.check:
            print(f"{markdown}: {'updated' if changed else 'already up to date'}")
    return 1 if stale else 0


def _suite_parser(p, suite) -> None:
    """The options of ``irdialog bench SUITE``, from the suite's declaration."""
    names = sorted(suite.models)
    p.add_argument(
        "--model", required=True, choices=names, metavar="MODEL",
        help=f"the model (column of the table): {', '.join(names)}",
    )  # fmt: skip
    if suite.tasks is not None and suite.one_task:
        # required unless the suite's own options stand for it (Movie Dialog's --joint)
        p.add_argument(
            "--task", type=int, choices=suite.tasks, required=suite.arguments is None,
            help="the task",
        )  # fmt: skip
    elif suite.tasks is not None:
        first, last = suite.tasks[0], suite.tasks[-1]
        p.add_argument(
            "--tasks", nargs="+", type=int, default=list(suite.tasks), choices=suite.tasks,
            metavar="TASK", help=f"the tasks to run, among {first}-{last}",
        )  # fmt: skip
    if suite.heldout:
        p.add_argument("--heldout", action="store_true", help=suite.heldout)
    if suite.overrides:
        p.add_argument(
            "--set", type=assignment, action="append", metavar="NAME=VALUE", help=suite.overrides
        )
    if suite.arguments:
        suite.arguments(p)
    if suite.search:
        searchable = sorted(m for m, spec in suite.models.items() if spec.selection.searchable)
        p.add_argument(
            "--search", action="store_true",
            help="choose each task's hyper-parameters on held-out data (the model's grid) "
            f"instead of running the bench; models with a grid: {', '.join(searchable)}",
        )  # fmt: skip
        p.add_argument(
            "--points", type=int, nargs="+", default=None, metavar="I",
            help="with --search: search only these points of each task's grid (numbered from "
            "0), to split a long search in parts",
        )  # fmt: skip
        p.add_argument(
            "--presets-output", metavar="FILE", help="with --search: write the chosen presets here"
        )
        if suite.search_arguments:
            suite.search_arguments(p)


def add_bench_parser(sub, common) -> argparse._SubParsersAction:
    """Add ``bench`` (each suite's run, and ``report``) to the subcommands ``sub`` of the
    ``irdialog`` parser, its runs taking the options of ``common``; the subcommands of
    ``bench``, to which more can be added."""
    fmt = _FORMAT
    bench = sub.add_parser(
        "bench",
        help="reproduce a paper table on the real data",
        description="Reproduce a column of a paper's table, hyper-parameters chosen on dev or "
        "validation data, never on test.",
        **fmt,
    )
    suites = bench.add_subparsers(dest="suite", required=True, metavar="SUITE")
    runs = argparse.ArgumentParser(add_help=False, parents=[common])
    runs.add_argument(
        "--seeds",
        type=positive_int,
        default=1,
        metavar="N",
        help="run with seeds 0..N-1 and report the mean and standard deviation (with "
        "--search: the seeds each choice averages, as the suite's search says)",
    )
    runs.add_argument(
        "--output", metavar="FILE", help="write the result, with its provenance, as JSON here"
    )
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
        help="run N seeds at once, each in a joblib worker process (default: one at a time; "
        "-1: all cores, or every worker of --scheduler); see also --threads",
    )
    runs.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="train each fit on N threads of its process (the estimators' n_jobs; default: "
        "one). A run uses about n-jobs x threads cores. The models that train on threads "
        "(their n_jobs docstring says so) may fit another model with another N",
    )
    runs.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the seeds on the Dask cluster of this scheduler (tcp://host:port); needs "
        "pip install 'irdialog[dask]'",
    )
    runs.set_defaults(func=_cmd_bench)

    for suite in SUITES.values():
        _suite_parser(suites.add_parser(suite.name, parents=[runs], help=suite.help, **fmt), suite)

    report = suites.add_parser(
        "report", help="render the result JSON files into BENCHMARKS.md and NOTES.md", **fmt
    )
    report.add_argument("--results", default="benchmarks/results", help="folder of JSON files")
    report.add_argument(
        "--markdown",
        nargs="+",
        default=["BENCHMARKS.md", "benchmarks/NOTES.md"],
        help="the files to update",
    )
    report.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if the file is out of date"
    )
    report.set_defaults(func=_cmd_report)
    return suites


def bench_parser() -> argparse.ArgumentParser:
    """A parser of ``irdialog bench ...`` alone (the arguments after ``irdialog``).

    Examples
    --------
    >>> from irdialog.bench._command import _cmd_bench, bench_parser
    >>> args = bench_parser().parse_args(["bench", "dialog-babi", "--model", "tfidf"])
    >>> args.func is _cmd_bench, args.tasks, args.seeds
    (True, [1, 2, 3, 4, 5, 6], 1)
    """
    parser = argparse.ArgumentParser(prog="irdialog", **_FORMAT)
    add_bench_parser(parser.add_subparsers(dest="command", metavar="COMMAND"), common_options())
    return parser
