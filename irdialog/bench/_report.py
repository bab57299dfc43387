"""BENCHMARKS.md's result tables and benchmarks/NOTES.md's evidence, rendered from the JSON.

A Markdown file marks each generated block with the result files it shows::

    <!-- results: dialog-babi-tfidf dialog-babi-nn -->
    ... (written by this module; edits here are overwritten) ...
    <!-- end results -->

and :func:`update_markdown` rewrites every block from ``<results>/<name>.json``, so the
text and the JSON cannot disagree (``irdialog bench report --check`` fails when they do).
A ``results`` block's files are of one suite; its table is the one the suite declares
(``Suite.table``, the layout of its paper table, read from the results' long rows), with the
paper's value next to ours and, over several seeds, ours as mean ± standard deviation. A
``notes`` block (``<!-- notes: NAMES -->`` ... ``<!-- end notes -->``) holds what stands
under such a table on the evidence page: the seeds, times and chosen hyper-parameters of each
file and the code and library versions that produced it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..datasets._listing import number_ranges
from ._harness import recorded_ties
from ._presets import update_protocol
from ._registry import SUITES
from ._speed import speed_declaration
from ._summary import load_result, update_summaries

_BLOCK = re.compile(
    r"(<!-- (?P<kind>results|notes): (?P<names>[^>]*?) -->\n)(?P<body>.*?)"
    r"(<!-- end (?P=kind) -->)",
    re.DOTALL,
)


def _seeds(result: dict) -> str:
    seeds = result.get("seeds", [0])
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _task_label(tasks: list) -> str:
    if tasks == [None]:
        return ""
    return ("task " if len(tasks) == 1 else "tasks ") + number_ranges(tasks) + ": "


def _chosen(result: dict) -> str:
    """The hyper-parameters of the first seed, tasks with the same ones together, each with
    the held-out score of its choice; a note when other seeds chose other parameters."""
    runs = result["runs"]
    groups: dict[str, list] = {}
    for entry in runs[0]["chosen"]:
        groups.setdefault(json.dumps(entry["params"]), []).append(entry)
    parts = []
    for entries in groups.values():
        scores = []
        for e in entries:
            held = [
                f"{k} {v}"
                for k, v in e["selection"].items()
                if isinstance(v, (int, float)) and not k.startswith("n_")
            ]
            if held:
                scores.append(("" if e.get("task") is None else f"{e['task']}: ") + held[0])
        tasks = [e.get("task") for e in entries]
        text = _task_label(tasks) + (_params(entries[0]["params"]) or "defaults")
        parts.append(text + (f" (held-out {'; '.join(scores)})" if scores else ""))
    differ = any(
        [c["params"] for c in run["chosen"]] != [c["params"] for c in runs[0]["chosen"]]
        for run in runs[1:]
    )
    note = " Other seeds chose other points (the JSON's `runs`)." if differ else ""
    return "; ".join(parts) + "." + note


# How a file's rows count a gold answer tied at the top (its recorded_ties).
_TIE_RULES = {
    "expected": "a tie at its expected value",
    "index": "ties as the candidate file orders them",
    "pessimistic": "ties against the model",
}


def _footer(results: list[tuple[str, dict]]) -> list[str]:
    """A line per distinct (seeds, tie rule, choice), naming its files with their times."""
    alike: dict[str, list[str]] = {}
    for name, r in results:
        ties = recorded_ties(r)
        rule = "" if ties is None else f"; {_TIE_RULES[ties]}"
        alike.setdefault(f"{_seeds(r)}{rule}; chosen: {_chosen(r)}", []).append(
            f"`{name}.json` ({r['seconds']:.0f} s)"
        )
    lines = [""] + [f"- {', '.join(files)}: {what}" for what, files in alike.items()]
    return lines + _produced_by(results)


def _produced_by(results: list[tuple[str, dict]]) -> list[str]:
    lines = []
    versions = {}
    for name, r in results:
        p = r["provenance"]
        git = p.get("git") or {}
        commit = (git.get("commit") or "no checkout")[:10] + (
            " (dirty)" if git.get("dirty") else ""
        )
        libs = p["libraries"]
        text = (
            f"irdialog {p['irdialog']} at {commit}, Python {libs['python']}, numpy "
            f"{libs['numpy']}, scipy {libs['scipy']}, numba {libs['numba']}, scikit-learn "
            f"{libs['scikit-learn']}, {p['date'][:10]}"
        )
        versions.setdefault(text, []).append(f"`{name}`")
    lines.append("")
    produced = [
        text if len(versions) == 1 else f"{', '.join(names)}: {text}"
        for text, names in versions.items()
    ]
    lines.append(
        "Produced by " + "; ".join(produced) + ". Commands and data checksums: each JSON's "
        "`provenance`."
    )
    return lines


def _load_note(result: dict) -> str:
    """What the rest of the machine ran during a speed run, when its file records it."""
    load = result.get("machine_load")
    if not load:
        return ""
    share = load["others_cpu_seconds"] / max(load["wall_seconds"], 1e-9)
    return (
        f" (meanwhile the rest of the machine ran {load['others_cpu_seconds']:g} CPU seconds "
        f"in the run's {load['wall_seconds']:g} s: {share:.0%} of a core)"
    )


def render_block(names: list[str], results_dir, part: str = "results") -> str:
    """The Markdown of one block: the table of the named result files, or their notes.

    Parameters
    ----------
    names : list of str
        Result file names without ``.json`` (relative to ``results_dir``), all of one
        suite, or all speed benchmarks (``speed/<name>``, rendered by the table their
        script declares, :mod:`irdialog.bench._speed`).
    results_dir : path-like
        ``<repository>/benchmarks/results``.
    part : {"results", "notes"}, default="results"
        ``"results"``: the table (a speed table with its command); ``"notes"``: the seeds,
        times and choices of each file and the versions that produced it.

    Returns
    -------
    markdown : str
    """
    results = [(name, load_result(Path(results_dir), name)) for name in names]
    speed = all("benchmark" in r for _, r in results)
    if not speed and len({r.get("suite") for _, r in results}) != 1:
        suites = sorted({str(r.get("suite")) for _, r in results})
        raise ValueError(f"a results block shows one suite; {names} are of {suites}")
    if part == "notes":
        lines = _produced_by(results)[1:] if speed else _footer(results)[1:]
        return "\n".join(lines) + "\n"
    if speed:  # one table each
        lines = []
        for name, r in results:
            lines += speed_declaration(r, Path(results_dir).resolve().parents[1]).table(r)
            lines += ["", f"`{name}.json`: `{r['provenance']['command']}`{_load_note(r)}", ""]
        return "\n".join(lines[:-1]) + "\n"
    return "\n".join(SUITES[results[0][1]["suite"]].table(results)) + "\n"


def update_markdown(markdown, results_dir, check: bool = False) -> bool:
    """Re-render every results and notes block of ``markdown`` from ``results_dir``, every
    summary block (:mod:`irdialog.bench._summary`) and the presets' protocol records
    (:func:`irdialog.bench._presets.protocol_table`).

    Parameters
    ----------
    markdown : path-like
        The Markdown file (BENCHMARKS.md).
    results_dir : path-like
        The folder of the result JSON files.
    check : bool, default=False
        Write nothing; only report whether the file is out of date.

    Returns
    -------
    changed : bool
        Whether a block differed from its rendering (and, unless ``check``, was rewritten).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from irdialog.bench import SUITES, run_suite
    >>> from irdialog.bench._report import update_markdown
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> qa = SUITES["babi-qa"].run
    >>> result = run_suite(qa, model="ngram", tasks=[1], progress=False, command=[])
    >>> _ = (folder / "qa.json").write_text(json.dumps(result))
    >>> md = folder / "BENCH.md"
    >>> _ = md.write_text("# Results\\n<!-- results: qa -->\\n<!-- end results -->\\n")
    >>> update_markdown(md, folder), update_markdown(md, folder)
    (True, False)
    >>> print(md.read_text().splitlines()[4])
    | 1 | 60.0 | 36 |
    """
    path = Path(markdown)
    text = path.read_text(encoding="utf-8")

    def render(match):
        names = match.group("names").split()
        block = render_block(names, results_dir, part=match.group("kind"))
        return match.group(1) + block + match.group(5)

    new = update_protocol(update_summaries(_BLOCK.sub(render, text), results_dir))
    changed = new != text
    if changed and not check:
        path.write_text(new, encoding="utf-8")
    return changed
