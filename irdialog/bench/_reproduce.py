"""``irdialog bench reproduce``: re-run committed results from the current code and compare.

Each result JSON records the command that produced it (``provenance["command"]``). A re-run
parses that command again -- ``irdialog bench ...`` through the command line's own parser,
``python -m benchmarks.<name> ...`` from the repository root -- and runs it in a child
process of its own, so that the peak memory and CPU time it records are its own, with
``--output`` sent to a temporary file (and ``--data-home`` replaced when one is given), then
compares the new rows with the committed ones under the rule of the file's suite and model
(:data:`RULES`). Speed results compare the ratios between sides timed in the same run
(the ``ratios`` its script declares, :mod:`irdialog.bench._speed`), never absolute times,
within a factor that grows with the spread of the repeats the file records
(:func:`speed_rule`). A file whose peer library or program (its script's ``peers`` and
``programs``) or data this machine lacks is not run, and says what it needs: that is no
difference.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import importlib.util
import io
import json
import multiprocessing
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .._arguments import HelpFormatter, check_data_home
from ..datasets import get_data_home
from ._command import _cmd_bench, bench_parser
from ._harness import ID_KEYS, _is_metric, recorded_ties
from ._provenance import cpu_description, numerics, recorded_numba_simd
from ._registry import registered_modules
from ._speed import speed_declaration


@dataclass(frozen=True)
class Rule:
    """How a re-run's rows must match the committed ones.

    ``kind`` is ``"exact"`` (every row equal, key for key), ``"tolerance"`` (every metric
    within ``tolerance`` points, everything else equal), ``"spread"`` (every metric inside
    the range of the committed per-seed values, widened by ``tolerance``; a metric recorded
    for one seed only within ``single_seed`` points), or ``"ratio"`` (speed results: every
    ratio its script declares within a factor ``tolerance`` of the committed one).
    """

    kind: str
    tolerance: float = 0.0
    single_seed: float = 0.0
    note: str = ""

    def __str__(self) -> str:
        note = f", {self.note}" if self.note else ""
        if self.kind == "exact":
            return "exact" + note
        if self.kind == "tolerance":
            return f"within {self.tolerance:g} points"
        if self.kind == "spread":
            return f"inside the seed spread ±{self.tolerance:g}, one seed ±{self.single_seed:g}"
        return f"ratios within a factor {self.tolerance:.3g}{note}"


# The rule of each (suite, model), first match wins (shell patterns), with why. The rule
# is decided from what the model computes, never from how a re-run happened to come out.
RULES: tuple[tuple[str, str, Rule, str], ...] = (
    ("babi-qa", "ngram", Rule("tolerance", 0.5),
     "LogisticRegression (lbfgs) sums through OpenBLAS, whose kernels depend on the CPU "
     "(AVX2 or AVX-512): on another machine a few of a task's 1000 answers flip"),
    ("*", "tfidf*", Rule("exact"), "counts and idf weights, no random draw"),
    ("*", "bm25*", Rule("exact"), "counts and BM25 weights, no random draw"),
    ("*", "nn", Rule("exact"), "nearest neighbour by word overlap, no random draw"),
    ("*", "rule-based", Rule("exact"), "hand-written rules, no learning"),
    ("*", "struct-svm", Rule("exact"), "a convex problem solved in a fixed order"),
    ("*", "svd", Rule("exact"), "a truncated SVD of a fixed matrix with a fixed start"),
    ("*", "*", Rule("spread", tolerance=0.05, single_seed=1.0),
     "SGD in numba kernels from seeded weights (se, memn2n, memnn, lstm, rnn): the products "
     "they hand to BLAS, numpy's float32 exp and tanh, and the SIMD sums of supervised "
     "embeddings run code chosen for the CPU (AVX2 or AVX-512) that sums in another order, "
     "and training amplifies the last bits; with the same kernels (see same_numerics) a "
     "seeded run repeats exactly"),
)  # fmt: skip

# Speed results: their timings move with the machine and its load; the ratio of two sides
# timed in the same run (taking turns) cancels most of that, not all. A ratio may move by a
# factor 1.3 either way (another machine of the class), times the run-to-run spread the
# file records of its own repeats (:func:`recorded_spread`): a ratio is one draw of each
# side's time, and the committed draw and the re-run's can each fall anywhere in that
# spread. speed.json records the times of its five epochs, 0.0571-0.0742 s (a spread of
# 1.30), and its ratios moved by 1.32 and 1.34 on another machine of the class it was made
# on: inside 1.3 x 1.30 = 1.69, outside 1.3 alone. A file that records no repeats is given
# the largest spread the committed files record, speed.json's 1.30 (memory-training-time
# records 1.27, pool-speed 1.17).
SPEED_RULE = Rule("ratio", tolerance=1.3)
UNRECORDED_SPREAD = 1.3
# The keys under which a speed result records the times of its repeats: a list of times
# (``s_per_epoch_all``), or a dict of such lists by side (``times``, ``cpu_seconds``).
REPEAT_KEYS = ("s_per_epoch_all", "times", "cpu_seconds")
# A learned model re-run on the BLAS, numpy and numba kernels it was made with (same_numerics).
SAME_NUMERICS_RULE = Rule("exact", note="same BLAS, numpy and numba kernels")
_clock = time.perf_counter  # the budget's clock


def same_numerics(result: dict) -> bool:
    """Whether this process runs the floating-point code ``result`` was made with: the
    same BLAS kernels, numpy SIMD targets and numba SIMD level
    (:func:`~irdialog.bench._provenance.numerics`). What changes between machines is the
    kernels BLAS and numpy pick for the CPU, and the vector width numba compiles for, which
    ``OPENBLAS_CORETYPE``, ``NPY_DISABLE_CPU_FEATURES`` and ``NUMBA_CPU_NAME`` with
    ``NUMBA_CPU_FEATURES`` pin. A result that does not record the BLAS and numpy kernels
    (made before they were recorded) never counts as the same."""
    provenance = result.get("provenance") or {}
    recorded = provenance.get("numerics") or {}
    if not recorded.get("blas"):
        return False
    here = numerics()
    return all(recorded.get(key) == here[key] for key in ("blas", "numpy_simd")) and (
        recorded_numba_simd(provenance) == here["numba_simd"]
    )


def rule_for(result: dict) -> Rule:
    """The comparison rule of a committed result (see :data:`RULES`).

    Examples
    --------
    >>> from irdialog.bench._reproduce import rule_for
    >>> str(rule_for({"suite": "dialog-babi", "model": "tfidf-type"}))
    'exact'
    >>> str(rule_for({"suite": "babi-qa", "model": "memn2n"}))
    'inside the seed spread ±0.05, one seed ±1'
    >>> round(rule_for({"benchmark": "pool-speed"}).tolerance, 2)
    1.69
    """
    if "benchmark" in result:
        return speed_rule(result)
    for suite, model, rule, _why in RULES:
        if fnmatch.fnmatchcase(result["suite"], suite) and fnmatch.fnmatchcase(
            result["model"], model
        ):
            if rule.kind in ("spread", "tolerance") and same_numerics(result):
                return SAME_NUMERICS_RULE
            return rule
    raise ValueError(f"no comparison rule for {result['suite']} {result['model']}")


def _repeats(node, key=""):
    """The lists of repeated times under :data:`REPEAT_KEYS` anywhere in ``node``."""
    if isinstance(node, dict):
        for name, value in node.items():
            if name != "provenance":
                yield from _repeats(value, name if name in REPEAT_KEYS else key)
    elif isinstance(node, list):
        if key and len(node) > 1 and all(isinstance(v, (int, float)) for v in node):
            yield node
        else:
            for value in node:
                yield from _repeats(value, key)


def recorded_spread(result: dict) -> float | None:
    """The largest max/min of the times a speed result records of its repeats (see
    :data:`REPEAT_KEYS`), None when it records none.

    Examples
    --------
    >>> from irdialog.bench._reproduce import recorded_spread
    >>> recorded_spread({"rows": [{"times": {"ours": [1.0, 1.2], "peer": [2.0, 2.1]}}]})
    1.2
    >>> recorded_spread({"rows": [{"seconds": 3.0}]}) is None
    True
    """
    spreads = [max(times) / min(times) for times in _repeats(result) if min(times) > 0]
    return max(spreads, default=None)


def speed_rule(result: dict) -> Rule:
    """The rule of a speed result: its ratios within :data:`SPEED_RULE`'s factor times the
    spread of its repeats (:func:`recorded_spread`; :data:`UNRECORDED_SPREAD` when it
    records none).

    Examples
    --------
    >>> from irdialog.bench._reproduce import speed_rule
    >>> str(speed_rule({"benchmark": "speed", "rows": [{"s_per_epoch_all": [0.05, 0.06]}]}))
    'ratios within a factor 1.56, 1.3 x the spread of its repeats, 1.2'
    >>> str(speed_rule({"benchmark": "compile-time"}))
    'ratios within a factor 1.69, 1.3 x 1.3, the largest spread a committed file records'
    """
    spread = recorded_spread(result)
    factor = f"{SPEED_RULE.tolerance:g} x"
    if spread is None:
        spread, note = UNRECORDED_SPREAD, f"{factor} {UNRECORDED_SPREAD:g}, the largest spread"
        note += " a committed file records"
    else:
        note = f"{factor} the spread of its repeats, {spread:.3g}"
    return Rule("ratio", tolerance=SPEED_RULE.tolerance * spread, note=note)


# ---------------------------------------------------------------------------------------
# Comparison.


@dataclass(frozen=True)
class Difference:
    """The first difference found: the row (its id keys), the key, both values."""

    row: str
    key: str
    committed: object
    now: object

    def __str__(self) -> str:
        where = f"{self.row} " if self.row else ""
        return f"{where}{self.key}: committed {self.committed}, now {self.now}"


def _row_label(row: dict) -> str:
    parts = [f"{k} {row[k]}" for k in ("task", "split", "metric", "response") if k in row]
    return ", ".join(parts)


def _ids(row: dict) -> dict:
    return {k: row.get(k) for k in ID_KEYS if k in row}


def _close(key, committed, now, rule: Rule, row: dict) -> bool:
    if committed is None or now is None:
        return committed is now
    if rule.kind == "tolerance":
        return abs(now - committed) <= rule.tolerance + 1e-9
    by_seed = row.get(f"{key}_by_seed")
    if by_seed:  # spread: inside the committed seeds' range
        return min(by_seed) - rule.tolerance - 1e-9 <= now <= max(by_seed) + rule.tolerance + 1e-9
    return abs(now - committed) <= rule.single_seed + 1e-9


def compare_rows(committed: list[dict], now: list[dict], rule: Rule) -> Difference | None:
    """The first difference between committed rows and a re-run's under ``rule``, or None.

    Rows must have the same layout (ids and counts equal); ``exact`` compares every key,
    ``tolerance`` and ``spread`` compare the metrics (numbers that are not ids, counts or
    paper values; their ``_std`` and ``_by_seed`` companions are not compared) as stated
    in :class:`Rule` and every other key exactly.

    Examples
    --------
    >>> from irdialog.bench._reproduce import Rule, compare_rows
    >>> old = [{"task": 1, "n": 10, "accuracy": 60.0, "paper": 50.0}]
    >>> print(compare_rows(old, [{**old[0], "accuracy": 60.3}], Rule("exact")))
    task 1 accuracy: committed 60.0, now 60.3
    >>> compare_rows(old, [{**old[0], "accuracy": 60.3}], Rule("tolerance", 0.5)) is None
    True
    """
    if len(committed) != len(now):
        return Difference("", "rows", len(committed), len(now))
    for old, new in zip(committed, now):
        label = _row_label(old)
        if _ids(old) != _ids(new):
            return Difference(label, "row", _row_label(old), _row_label(new))
        if rule.kind == "exact":
            for key in [*old, *(k for k in new if k not in old)]:
                if old.get(key) != new.get(key):
                    return Difference(label, key, old.get(key), new.get(key))
            continue
        for key, value in old.items():
            if key.endswith(("_std", "_by_seed")):
                continue
            if key not in new:
                return Difference(label, key, value, "missing")
            if _is_metric(key, value) or _is_metric(key, new[key]):
                if not _close(key, value, new[key], rule, old):
                    return Difference(label, key, value, new[key])
            elif value != new[key]:
                return Difference(label, key, value, new[key])
    return None


def compare_ratios(
    committed: dict, now: dict, rule: Rule | None = None, root=None
) -> Difference | None:
    """The first ratio of a speed result (the ``ratios`` its script declares, see
    :mod:`irdialog.bench._speed`; ``root``: the repository) off by more than a factor
    ``rule.tolerance`` either way (default: the committed result's :func:`speed_rule`), or
    None.

    Examples
    --------
    >>> from irdialog.bench._reproduce import compare_ratios
    >>> old = {"benchmark": "compile-time", "cold_over_warm": 1.15,
    ...        "provenance": {"command": "python -m benchmarks.compile_time"}}
    >>> compare_ratios(old, {**old, "cold_over_warm": 1.3}) is None
    True
    >>> print(compare_ratios(old, {**old, "cold_over_warm": 2.0}))
    cold_over_warm: committed 1.15, now 2
    """
    extract = speed_declaration(committed, root).ratios
    if extract is None:
        raise ValueError(f"no ratios known for speed benchmark {committed['benchmark']!r}")
    rule = speed_rule(committed) if rule is None else rule
    old, new = extract(committed), extract(now)
    for key, value in old.items():
        if key not in new:
            return Difference("", key, _fmt(value), "missing")
        new_value = new[key]
        ok = value > 0 and new_value > 0
        if not ok or max(new_value / value, value / new_value) > rule.tolerance + 1e-9:
            return Difference("", key, _fmt(value), _fmt(new_value))
    return None


def _fmt(value) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def compare(committed: dict, now: dict, root=None) -> Difference | None:
    """The first difference between a committed result and its re-run, under its rule
    (``root``: the repository, whose scripts declare the ratios of speed results)."""
    rule = rule_for(committed)
    if rule.kind == "ratio":
        return compare_ratios(committed, now, rule, root)
    if now.get("seeds") != committed.get("seeds"):
        return Difference("", "seeds", committed.get("seeds"), now.get("seeds"))
    return compare_rows(committed["rows"], now["rows"], rule)


# ---------------------------------------------------------------------------------------
# Commands.


def override_options(argv: list[str], overrides: dict[str, str | None]) -> list[str]:
    """``argv`` with each ``--option VALUE`` (or ``--option=VALUE``) of ``overrides`` set to
    its value, appended when absent; a None value leaves that option as it is.

    Examples
    --------
    >>> from irdialog.bench._reproduce import override_options
    >>> override_options(["bench", "--output", "a.json", "--quiet"], {"--output": "b.json"})
    ['bench', '--output', 'b.json', '--quiet']
    >>> override_options(["bench", "--output=a.json"], {"--output": "b", "--data-home": "D"})
    ['bench', '--output=b', '--data-home', 'D']
    """
    out = list(argv)
    for option, value in overrides.items():
        if value is None:
            continue
        for i, arg in enumerate(out):
            if arg == option and i + 1 < len(out):
                out[i + 1] = str(value)
                break
            if arg.startswith(option + "="):
                out[i] = f"{option}={value}"
                break
        else:
            out += [option, str(value)]
    return out


def option_value(argv: list[str], option: str) -> str | None:
    """The value of ``--option VALUE`` (or ``--option=VALUE``) in ``argv``, else None."""
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(option + "="):
            return arg.split("=", 1)[1]
    return None


def bench_arguments(command: str, output, *, data_home=None, n_jobs=None):
    """The namespace of a recorded ``irdialog bench <suite> ...`` command, parsed by the
    command line's own parser, with ``--output`` (and ``--data-home`` when given)
    replaced, made quiet, without a plot or a Dask scheduler, and ``--n-jobs`` replaced
    when given. Its ``argv``, the command the re-run's result records, is the recorded
    one with only ``--output`` replaced: where this machine keeps the data, and how many
    seeds it ran at once, do not change the result.

    Raises
    ------
    ValueError
        When the command is not a bench run or no longer parses.
    """
    argv = shlex.split(command)
    if argv[:2] != ["irdialog", "bench"]:
        raise ValueError(f"not an irdialog bench command: {command}")
    recorded = override_options(argv[1:], {"--output": str(output)})
    argv = override_options(
        recorded, {"--data-home": None if data_home is None else str(data_home)}
    )
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            args = bench_parser().parse_args(argv)
    except SystemExit:
        reason = (stderr.getvalue().strip().splitlines() or ["?"])[-1]
        raise ValueError(f"the recorded command does not parse ({reason})") from None
    if getattr(args, "func", None) is not _cmd_bench or getattr(args, "search", False):
        raise ValueError(f"not a bench run: {command}")
    args.argv, args.quiet, args.plot, args.scheduler = recorded, True, None, None
    if n_jobs is not None:
        args.n_jobs = n_jobs
    return args


def script_command(command: str, output, *, data_home=None) -> list[str]:
    """The argv of a recorded ``python -m benchmarks.<name> ...`` command, run by this
    Python, with ``--output`` (and ``--data-home`` when given) replaced.

    Examples
    --------
    >>> import sys
    >>> from irdialog.bench._reproduce import script_command
    >>> argv = script_command("python -m benchmarks.pool_speed --dims 32 --output r.json", "t")
    >>> argv[0] == sys.executable, argv[1:]
    (True, ['-m', 'benchmarks.pool_speed', '--dims', '32', '--output', 't'])
    """
    argv = shlex.split(command)
    if len(argv) < 3 or argv[1] != "-m" or not argv[2].startswith("benchmarks."):
        raise ValueError(f"not a python -m benchmarks.<name> command: {command}")
    # --data-home only where the recorded command reads one: not every script takes it
    if data_home is None or option_value(argv, "--data-home") is None:
        data_home = None
    overrides = {"--output": str(output), "--data-home": data_home}
    return [sys.executable, *override_options(argv[1:], overrides)]


# irdialog's own modules: one of them missing is a failure, not a missing peer
_OWN_MODULES = ("irdialog", "benchmarks")


def missing_peer(result: dict, argv: list[str], root: Path) -> tuple[str, str] | None:
    """``(what, detail)`` of the first peer library or program a speed result needs that
    this machine lacks (the ``peers`` and ``programs`` its script declares), else None.

    Examples
    --------
    >>> from pathlib import Path
    >>> from irdialog.bench._reproduce import missing_peer
    >>> command = "python -m benchmarks.training_time_to_accuracy --starspace /no/starspace"
    >>> result = {"provenance": {"command": command}}
    >>> missing_peer(result, command.split()[1:], Path("."))
    ('StarSpace', 'no program /no/starspace')
    """
    declaration = speed_declaration(result, root)
    for module in declaration.peers:
        if importlib.util.find_spec(module) is None:
            return module, ""
    for option, program in declaration.programs.items():
        path = option_value(argv, option)
        if path is not None and not (root / path).is_file():
            return program, f"no program {path}"
    return None


def _missing_module(err: BaseException) -> str | None:
    """The library a failed run could not import, unless it is irdialog's own."""
    match = re.search(r"No module named '([\w.]+)'", str(err))
    if match is None or match.group(1).split(".")[0] in _OWN_MODULES:
        return None
    return match.group(1).split(".")[0]


# ---------------------------------------------------------------------------------------
# Selection, budget, running.


def result_files(results_dir, names=()) -> list[tuple[str, Path]]:
    """``(name, path)`` of the result files selected by ``names`` (file stems or shell
    patterns; a speed result also answers to ``speed/<stem>``), every file when none.

    Raises
    ------
    ValueError
        When a name selects no file.
    """
    results_dir = Path(results_dir)
    files = [(p.stem, p) for p in sorted(results_dir.glob("*.json"))]
    files += [(f"speed/{p.stem}", p) for p in sorted((results_dir / "speed").glob("*.json"))]
    if not names:
        return files
    chosen = []
    for pattern in names:
        hits = [
            (name, path)
            for name, path in files
            if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(path.stem, pattern)
        ]
        if not hits:
            raise ValueError(f"no result file in {results_dir} matches {pattern!r}")
        chosen += [hit for hit in hits if hit not in chosen]
    return sorted(chosen, key=files.index)


def recorded_seconds(result: dict) -> float | None:
    """How long a result took when it was made: its ``wall_seconds``, else ``seconds``, else
    (speed results) the whole run's wall time in its ``machine_load`` record, else the sum
    of the ``wall_seconds`` of its parts (compile-time's child processes), else None:
    unknown, over any budget.

    Examples
    --------
    >>> from irdialog.bench._reproduce import recorded_seconds
    >>> recorded_seconds({"seconds": 30.0, "wall_seconds": 16.0})
    16.0
    >>> recorded_seconds({"cold": {"wall_seconds": 2.0}, "warm": {"wall_seconds": 1.0}})
    3.0
    >>> recorded_seconds({"cold": {"wall_seconds": 2.0}, "machine_load": {"wall_seconds": 2.5}})
    2.5
    >>> recorded_seconds({"rows": [{"fit_seconds": 2.0}]}) is None
    True
    """
    for key in ("wall_seconds", "seconds"):
        if isinstance(result.get(key), (int, float)):
            return float(result[key])
    load = result.get("machine_load")
    if isinstance(load, dict) and isinstance(load.get("wall_seconds"), (int, float)):
        return float(load["wall_seconds"])
    parts = [
        value["wall_seconds"]
        for value in result.values()
        if isinstance(value, dict) and isinstance(value.get("wall_seconds"), (int, float))
    ]
    return float(sum(parts)) if parts else None


def _recorded_or_inf(path) -> float:
    seconds = recorded_seconds(json.loads(Path(path).read_text(encoding="utf-8")))
    return float("inf") if seconds is None else seconds


@dataclass
class Outcome:
    """One file's verdict: ``status`` is ``reproduced``, ``differ``, ``budget`` (not run:
    over the budget) or ``skipped`` (not run: what it ``needs``, a peer library, a program,
    data or a recorded command, is not here); neither ``budget`` nor ``skipped`` is a
    difference."""

    name: str
    status: str
    seconds: float | None = None
    detail: str = ""
    needs: str = "a recorded command"

    def line(self) -> str:
        verdict = {
            "reproduced": "reproduced",
            "differ": "differ",
            "budget": "not run (budget)",
            "skipped": f"not run (needs {self.needs})",
        }[self.status]
        time_ = "" if self.seconds is None else f"  {self.seconds:.1f} s"
        detail = f"  {self.detail}" if self.detail else ""
        return f"{self.name}  {verdict}{time_}{detail}"


def summary_line(outcomes: list[Outcome]) -> str:
    """``N reproduced, M differ, K not run (budget)``, and how many were not run for
    lack of what (``J not run (needs data, torch)``) when some were.

    Examples
    --------
    >>> from irdialog.bench._reproduce import Outcome, summary_line
    >>> summary_line([Outcome("a", "reproduced"), Outcome("b", "differ"),
    ...               Outcome("c", "budget"), Outcome("d", "reproduced")])
    '2 reproduced, 1 differ, 1 not run (budget)'
    >>> summary_line([Outcome("a", "reproduced"), Outcome("b", "skipped", needs="torch"),
    ...               Outcome("c", "skipped", needs="data"), Outcome("d", "skipped", needs="data")])
    '1 reproduced, 0 differ, 0 not run (budget), 3 not run (needs data, torch)'
    """
    count = {s: sum(o.status == s for o in outcomes) for s in ("reproduced", "differ", "budget")}
    line = (
        f"{count['reproduced']} reproduced, {count['differ']} differ, "
        f"{count['budget']} not run (budget)"
    )
    skipped = [o for o in outcomes if o.status == "skipped"]
    if skipped:
        needs = ", ".join(sorted({o.needs for o in skipped}))
        line += f", {len(skipped)} not run (needs {needs})"
    return line


def _missing_data(result: dict, home: Path | None) -> str | None:
    """The first recorded data file not found (relative paths under ``home``), else None."""
    for record in result["provenance"].get("data", []):
        path = Path(record["path"])
        if not path.is_absolute():
            if home is None:
                return None
            path = Path(home) / path
        if not path.is_file():
            return str(path)
    return None


def _data_note(committed: dict, now: dict) -> str:
    """A note when the re-run read data other than the committed run's."""
    old = {d["path"]: d["sha256"] for d in committed["provenance"].get("data", [])}
    new = {d["path"]: d["sha256"] for d in now.get("provenance", {}).get("data", [])}
    changed = sorted(p for p in old if p in new and new[p] != old[p])
    return f" (data differ: {', '.join(changed)})" if changed else ""


def _platform_note(committed: dict) -> str:
    """A note when a speed result was measured on another CPU than this one's."""
    recorded = committed["provenance"].get("platform", "")
    here = cpu_description()
    if "," in recorded and here and not recorded.endswith(here):
        return f" (committed on {recorded.split(', ', 1)[1]})"
    return ""


def run_bench_command(args) -> dict:
    """Run a parsed bench command in a fresh child process and return the result it wrote.

    A result records the peak memory and CPU time of the process that made it (Ubuntu's
    ``resources``), so each run gets a process of its own: run here, it would inherit the
    peaks of every file re-run before it. The child is spawned, not forked, so it starts as
    a recorded command does, with nothing of this process's memory or threads; it imports
    the modules of the suites registered from outside the package first."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
        child.submit(_run_with_suites, registered_modules(), args).result()
    return json.loads(Path(args.output).read_text(encoding="utf-8"))


def _run_with_suites(modules: list[str], args) -> int:
    for module in modules:  # each registers its suites as it is imported
        importlib.import_module(module)
    return args.func(args)


def run_script_command(argv: list[str], cwd: Path) -> dict:
    """Run a speed script in a child process from the repository root; its result."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise RuntimeError(last)
    return json.loads(Path(option_value(argv, "--output")).read_text(encoding="utf-8"))


def reproduce_one(
    name,
    path,
    *,
    tmp,
    data_home=None,
    n_jobs=None,
    remaining=None,
    root=None,
    update=False,
    run_bench=None,
    run_script=None,
) -> Outcome:
    """Re-run one committed result file and compare it (see :func:`reproduce`); with
    ``update``, the re-run writes its result over the committed file.

    ``root`` is the repository root the commands were recorded in (a relative recorded
    ``--data-home`` is read from there; speed scripts run there); default: the current
    directory. ``run_bench(args)`` and ``run_script(argv, cwd)`` run a parsed command and
    return its result (default: :func:`run_bench_command`, :func:`run_script_command`)."""
    root = Path.cwd() if root is None else Path(root)
    run_bench = run_bench or run_bench_command
    run_script = run_script or run_script_command
    committed = json.loads(Path(path).read_text(encoding="utf-8"))
    command = (committed.get("provenance") or {}).get("command")
    if not command:
        return Outcome(name, "skipped")
    output = Path(path) if update else Path(tmp) / f"{Path(path).stem}.json"
    speed = "benchmark" in committed
    try:
        if speed:
            argv = script_command(command, output, data_home=data_home)
            speed_declaration(committed, root)  # its script declares its ratios and needs
            home = option_value(argv, "--data-home")
            home = None if home is None else root / home  # an absolute home stays itself
        else:
            args = bench_arguments(command, output, data_home=data_home, n_jobs=n_jobs)
            args.ties = recorded_ties(committed)
            if args.data_home is not None:
                args.data_home = str(root / args.data_home)
            home = get_data_home(args.data_home)
        rule_for(committed)
    except ValueError as err:
        return Outcome(name, "differ", detail=f"cannot re-run: {err}")
    if speed:
        peer = missing_peer(committed, argv, root)
        if peer is not None:
            return Outcome(name, "skipped", detail=peer[1], needs=peer[0])
    missing = _missing_data(committed, None if home is None else Path(home))
    if missing is not None:
        return Outcome(name, "skipped", detail=f"not found: {missing}", needs="data")
    estimate = recorded_seconds(committed)
    if remaining is not None and (estimate is None or estimate > remaining):
        shown = "no time recorded" if estimate is None else f"recorded {estimate:.1f} s"
        return Outcome(name, "budget", detail=f"{shown}, {max(remaining, 0):.0f} s left")
    start = _clock()
    try:
        now = run_script(argv, root) if speed else run_bench(args)
    except Exception as err:  # any failure of the run is a failure to reproduce ...
        seconds = _clock() - start
        module = _missing_module(err)
        if module is not None:  # ... but a peer library this machine lacks
            return Outcome(name, "skipped", seconds, needs=module)
        return Outcome(name, "differ", seconds, f"run failed: {type(err).__name__}: {err}")
    seconds = _clock() - start
    difference = compare(committed, now, root)
    note = _data_note(committed, now) + (_platform_note(committed) if speed else "")
    rule = rule_for(committed)
    if difference is None:
        same = (
            rule.kind in ("tolerance", "spread")
            and compare_rows(committed["rows"], now["rows"], Rule("exact")) is None
        )
        shown = f"identical; rule: {rule}" if same else str(rule)
        return Outcome(name, "reproduced", seconds, f"({shown}){note}")
    return Outcome(name, "differ", seconds, f"{difference} ({rule}){note}")


def reproduce(
    results_dir,
    names=(),
    *,
    max_seconds=None,
    n_jobs=None,
    data_home=None,
    update=False,
    out=print,
    **runners,
) -> list[Outcome]:
    """Re-run the committed result files named (all when none) and compare each with its
    committed rows under its rule (:data:`RULES`, :data:`SPEED_RULE`).

    Parameters
    ----------
    results_dir : path-like
        The folder of the result JSON files (speed results under ``speed/``).
    names : sequence of str, default=()
        File stems or shell patterns (``babi-qa-*``, ``speed/pool-speed``).
    max_seconds : float, default=None
        A file runs only if its recorded time fits in what is left of this budget; the
        others are "not run (budget)". Under a budget the files run cheapest first (by
        recorded time), so that as many as possible fit.
    n_jobs : int, default=None
        Seeds run at once (None: as recorded).
    data_home : path-like, default=None
        Replaces the recorded ``--data-home``.
    update : bool, default=False
        Each re-run writes its result (and provenance: this commit) over the committed
        file, whatever the verdict; ``git diff`` then shows what moved.
    out : callable, default=print
        Receives one line per file, then the summary line.

    Returns
    -------
    outcomes : list of Outcome
    """
    files = result_files(results_dir, names)
    if max_seconds is not None:
        files = sorted(files, key=lambda file: _recorded_or_inf(file[1]))
    root = Path(results_dir).resolve().parents[1]  # <root>/benchmarks/results
    if data_home is not None:
        data_home = Path(data_home).resolve()
    common = dict(data_home=data_home, n_jobs=n_jobs, root=root, update=update, **runners)
    start = _clock()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="irdialog-reproduce-") as tmp:
        for name, path in files:
            remaining = None if max_seconds is None else max_seconds - (_clock() - start)
            outcome = reproduce_one(name, path, tmp=tmp, remaining=remaining, **common)
            outcomes.append(outcome)
            out(outcome.line())
    out(summary_line(outcomes))
    return outcomes


# ---------------------------------------------------------------------------------------
# The command.


def _cmd_reproduce(args) -> int:
    check_data_home(args.data_home)
    outcomes = reproduce(
        args.results,
        args.names,
        max_seconds=args.max_seconds,
        n_jobs=args.n_jobs,
        data_home=args.data_home,
        update=args.update,
        out=lambda line: print(line, flush=True),
    )
    return 1 if any(o.status == "differ" for o in outcomes) else 0


def add_reproduce_parser(suites) -> None:
    """Add ``reproduce`` to the subcommands of ``irdialog bench``."""
    again = suites.add_parser(
        "reproduce",
        help="re-run committed result files from the current code and compare them",
        description="Re-run each committed result file's recorded command (its provenance) "
        "from the current code, with --output sent to a temporary file, and compare the "
        "new rows with the committed ones: exactly for deterministic models, within the "
        "seed spread for seeded ones, speed results by their ratios. One line per file, "
        "then 'N reproduced, M differ, K not run (budget)', and 'J not run (needs torch, "
        "data)' for the files whose peer library, program or data this machine lacks. "
        "Exit 1 when a file differs (a file not run is no difference). "
        "Nothing committed is changed unless --update is given.",
        formatter_class=HelpFormatter,
    )
    again.add_argument(
        "names", nargs="*", metavar="NAME",
        help="result files by stem or shell pattern (dialog-babi-tfidf, 'babi-qa-*', "
        "speed/pool-speed); none: every file",
    )  # fmt: skip
    again.add_argument(
        "--max-seconds", type=float, default=None, metavar="S",
        help="a time budget: skip the files whose recorded time exceeds what is left of it",
    )  # fmt: skip
    again.add_argument(
        "--n-jobs", type=int, default=None, metavar="N",
        help="run N seeds of a file at once (default: as recorded)",
    )  # fmt: skip
    again.add_argument(
        "--data-home", default=None, metavar="DIR",
        help="read the data here instead of the recorded --data-home",
    )  # fmt: skip
    again.add_argument(
        "--update", action="store_true",
        help="write each re-run over its committed file (its provenance then names this "
        "commit); git diff shows what moved",
    )  # fmt: skip
    again.add_argument("--results", default="benchmarks/results", help="folder of JSON files")
    again.set_defaults(func=_cmd_reproduce)
