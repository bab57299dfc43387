"""``irdialog bench reproduce``: the comparison rules, the re-parsed commands, the budget and
the summary on hand-built result files; one real re-run (slow)."""

import copy
import json
import os
import shlex
from pathlib import Path

import numpy as np
import pytest

from irdialog.bench import SUITES, _reproduce
from irdialog.bench._command import _run_options
from irdialog.bench._harness import recorded_ties
from irdialog.bench._report import render_block
from irdialog.bench._reproduce import (
    RULES,
    Outcome,
    Rule,
    bench_arguments,
    compare,
    compare_ratios,
    compare_rows,
    override_options,
    recorded_seconds,
    reproduce,
    result_files,
    rule_for,
    run_bench_command,
    script_command,
    summary_line,
)
from irdialog.bench._speed import speed_declaration
from irdialog.cli import main

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

EXACT, TOLERANCE, SPREAD = Rule("exact"), Rule("tolerance", 0.5), Rule("spread", 0.05, 1.0)


def _row(task=1, **values):
    return {"task": task, "split": "tst", "n": 100, **values, "paper": 50.0}


# --- the rules -------------------------------------------------------------------------


def test_every_committed_result_has_a_rule_and_deterministic_models_are_exact():
    for path in [*RESULTS.glob("*.json"), *(RESULTS / "speed").glob("*.json")]:
        rule_for(json.loads(path.read_text()))  # raises when none applies
    assert rule_for({"suite": "dialog-babi", "model": "bm25-type"}).kind == "exact"
    assert rule_for({"suite": "movie-dialog", "model": "svd"}).kind == "exact"
    assert rule_for({"suite": "babi-qa", "model": "ngram"}) == Rule("tolerance", 0.5)
    assert rule_for({"suite": "ubuntu", "model": "lstm-dual"}).kind == "spread"
    assert all(why for *_, why in RULES)


def test_learned_models_are_exact_on_the_kernels_they_were_made_with(monkeypatch):
    here = {"blas": "openblas Haswell", "numpy_simd": "X86_V3", "numba_simd": "AVX2",
            "environment": {}}  # fmt: skip
    monkeypatch.setattr(_reproduce, "numerics", lambda: here)

    def made_with(platform="", **numerics):
        provenance = {"numerics": numerics, "platform": platform}
        return {"suite": "babi-qa", "model": "lstm", "provenance": provenance}

    exact = Rule("exact", note="same BLAS, numpy and numba kernels")
    assert rule_for(made_with(**here)) == exact
    ngram = {**made_with(**here), "model": "ngram"}
    assert rule_for(ngram).kind == "exact"
    other_blas = made_with(**{**here, "blas": "openblas SkylakeX"})
    other_simd = made_with(**{**here, "numpy_simd": "X86_V3 X86_V4"})
    other_numba = made_with(**{**here, "numba_simd": "AVX-512"})
    for result in (other_blas, other_simd, other_numba, made_with(),
                   {"suite": "babi-qa", "model": "lstm"}):  # fmt: skip
        assert rule_for(result).kind == "spread"
    assert rule_for({**other_blas, "model": "ngram"}) == Rule("tolerance", 0.5)
    # made before numba's target was recorded: on the host's features, which the
    # platform's AVX-512 mark tells, unless NUMBA_CPU_FEATURES pinned them
    legacy = {k: v for k, v in here.items() if k != "numba_simd"}
    assert rule_for(made_with("Linux x86_64, AMD EPYC, 2 cores", **legacy)) == exact
    on_avx512 = made_with("Linux x86_64, AMD EPYC, 2 cores, AVX-512", **legacy)
    assert rule_for(on_avx512).kind == "spread"
    pinned = {**legacy, "environment": {"NUMBA_CPU_FEATURES": "+avx2,+fma"}}
    assert rule_for(made_with("Linux x86_64, AMD EPYC, 2 cores, AVX-512", **pinned)) == exact
    assert rule_for(made_with("Linux x86_64", **legacy)).kind == "spread"


def test_numba_simd_follows_numba_cpu_features(monkeypatch):
    from numba.core import config

    from irdialog.bench._provenance import numba_simd

    for features, level in (("+avx2,+fma", "AVX2"), ("+avx512f,+avx2", "AVX-512"),
                            ("+sse4.2,-avx2", "SSE"), ("", "SSE")):  # fmt: skip
        monkeypatch.setattr(config, "CPU_FEATURES", features)
        assert numba_simd() == level
    monkeypatch.setattr(config, "CPU_FEATURES", None)  # the host's
    assert numba_simd() in ("AVX-512", "AVX2", "SSE")


def test_exact_rule_reports_the_first_differing_row():
    old = [_row(1, per_response=99.5), _row(2, per_response=80.0)]
    assert compare_rows(old, copy.deepcopy(old), EXACT) is None
    new = [_row(1, per_response=99.5), _row(2, per_response=80.01)]
    diff = compare_rows(old, new, EXACT)
    assert (diff.row, diff.key, diff.committed, diff.now) == (
        "task 2, split tst",
        "per_response",
        80.0,
        80.01,
    )
    assert str(diff) == "task 2, split tst per_response: committed 80.0, now 80.01"
    # a key only the re-run has, or a changed paper value, differs too
    assert compare_rows(old, [old[0], {**old[1], "extra": 1}], EXACT).key == "extra"
    assert compare_rows(old, [old[0], {**old[1], "paper": 51.0}], EXACT).key == "paper"


def test_tolerance_rule_allows_the_stated_points_and_nothing_more():
    old = [_row(1, accuracy=50.0), _row(2, accuracy=20.2)]
    assert compare_rows(old, [_row(1, accuracy=49.5), _row(2, accuracy=20.7)], TOLERANCE) is None
    diff = compare_rows(old, [_row(1, accuracy=50.0), _row(2, accuracy=20.8)], TOLERANCE)
    assert (diff.row, diff.committed, diff.now) == ("task 2, split tst", 20.2, 20.8)
    # counts and paper values are never within a tolerance
    assert compare_rows(old, [_row(1, accuracy=50.0), {**old[1], "n": 99}], TOLERANCE)
    assert compare_rows(old, [_row(1, accuracy=50.0), {**old[1], "paper": 50.1}], TOLERANCE)


def test_spread_rule_uses_the_committed_seeds_range_or_one_point_for_one_seed():
    seeded = _row(1, accuracy=97.27, accuracy_std=0.38, accuracy_by_seed=[97.1, 97.7, 97.0])
    assert compare_rows([seeded], [{**seeded, "accuracy": 97.74}], SPREAD) is None
    assert compare_rows([seeded], [{**seeded, "accuracy": 96.96}], SPREAD) is None
    diff = compare_rows([seeded], [{**seeded, "accuracy": 97.8}], SPREAD)
    assert (diff.key, diff.committed, diff.now) == ("accuracy", 97.27, 97.8)
    one = _row(1, value=4.93)
    assert compare_rows([one], [{**one, "value": 5.9}], SPREAD) is None
    assert compare_rows([one], [{**one, "value": 6.0}], SPREAD).now == 6.0
    # the spread of the re-run itself is not compared
    assert compare_rows([seeded], [{**seeded, "accuracy_std": 3.0}], SPREAD) is None


def test_rows_of_another_layout_differ_under_every_rule():
    old = [_row(1, accuracy=60.0), _row(2, accuracy=70.0)]
    for rule in (EXACT, TOLERANCE, SPREAD):
        assert compare_rows(old, old[:1], rule).key == "rows"
        assert compare_rows(old, [old[0], _row(3, accuracy=70.0)], rule).key == "row"


def test_a_re_run_over_other_seeds_differs():
    old = {"suite": "dialog-babi", "model": "tfidf", "seeds": [0], "rows": [_row(accuracy=1.0)]}
    assert compare(old, copy.deepcopy(old)) is None
    assert compare(old, {**old, "seeds": [0, 1]}).key == "seeds"


@pytest.mark.parametrize("path", sorted((RESULTS / "speed").glob("*.json")), ids=lambda p: p.stem)
def test_speed_results_compare_their_ratios_not_their_times(path):
    committed = json.loads(path.read_text())
    ratios = speed_declaration(committed, ROOT).ratios(committed)
    assert ratios and all(v > 0 for v in ratios.values())
    assert compare_ratios(committed, copy.deepcopy(committed)) is None
    # everything twice as slow (another machine, a loaded one): the same ratios
    slower = json.loads(json.dumps(committed), parse_float=float)
    _scale_times(slower, 2.0)
    assert compare_ratios(committed, slower) is None


def _scale_times(node, factor):
    for key, value in list(node.items()) if isinstance(node, dict) else enumerate(node):
        if isinstance(value, (dict, list)):
            _scale_times(value, factor)
        elif isinstance(value, float) and str(key).endswith(("seconds", "_s")):
            node[key] = value * factor
        elif isinstance(value, float) and str(key).startswith("queries_per_second"):
            node[key] = value / factor


def test_a_speed_ratio_is_judged_against_the_spread_its_file_records():
    committed = json.loads((RESULTS / "speed" / "speed.json").read_text())
    rule = rule_for(committed)
    epochs = committed["rows"][0]["s_per_epoch_all"]
    assert rule.tolerance == pytest.approx(1.3 * max(epochs) / min(epochs))
    assert 1.6 < rule.tolerance < 1.8
    now = copy.deepcopy(committed)
    for row in now["rows"]:  # as moved on another machine of its class
        row["ratio"] *= 1.32
        row["ratio_cpu_time"] /= 1.34
    assert compare(committed, now) is None
    now["rows"][1]["ratio"] *= 1.4  # 1.85 in all
    assert compare(committed, now).key == "task 3 ratio"
    # a file that records no repeats: the largest spread a committed file records
    spreads = [_reproduce.recorded_spread(json.loads(p.read_text()))
               for p in (RESULTS / "speed").glob("*.json")]  # fmt: skip
    assert _reproduce.UNRECORDED_SPREAD == pytest.approx(max(s for s in spreads if s), abs=0.01)


def test_a_speed_ratio_off_by_more_than_the_factor_differs():
    committed = json.loads((RESULTS / "speed" / "retrieval-speed.json").read_text())
    now = copy.deepcopy(committed)
    now["rows"][0]["bm25s"]["queries_per_second_1"] *= 1.2  # ratio 1/1.2: inside 1.3
    assert compare_ratios(committed, now) is None
    now["rows"][0]["bm25s"]["queries_per_second_1"] *= 1.5  # ratio 1/1.8: outside 1.69
    diff = compare_ratios(committed, now)
    assert diff.key == "kb bm25 / bm25s at n_jobs=1"
    assert compare(committed, now).key == diff.key
    command = {"command": "python -m benchmarks.compile_time"}
    old = {"benchmark": "compile-time", "cold_over_warm": 1.15, "provenance": command}
    assert compare_ratios(old, {"benchmark": "compile-time"}).now == "missing"


def test_a_speed_script_declares_its_table_ratios_and_peers_where_it_lives(
    tmp_path, monkeypatch, capsys
):
    """A new speed script, and nothing in the package: report renders its table, reproduce
    compares its ratios and says what it needs, all read from its SPEED declaration."""
    import sys

    from conftest import import_benchmark

    import_benchmark("speed")
    benchmarks = sys.modules["benchmarks"]
    scripts = tmp_path / "benchmarks"
    (scripts / "results" / "speed").mkdir(parents=True)
    (scripts / "toy_speed.py").write_text(
        "from benchmarks import SpeedBenchmark, per_row_ratios\n"
        "SPEED = SpeedBenchmark(\n"
        "    table=lambda r: [f\"| {row['n']} | {row['ratio']} |\" for row in r['rows']],\n"
        "    ratios=per_row_ratios(lambda row: f\"n={row['n']}\", ('ratio',)),\n"
        "    peers=('a_peer_nobody_has',),\n"
        ")\n"
    )
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(scripts)])
    monkeypatch.syspath_prepend(str(tmp_path))
    committed = {
        "benchmark": "toy-speed",
        "rows": [{"n": 10, "ratio": 2.0, "times": [1.0, 1.1]}],
        "provenance": {"command": "python -m benchmarks.toy_speed --output x.json"},
    }
    (scripts / "results" / "speed" / "toy-speed.json").write_text(json.dumps(committed))
    block = render_block(["speed/toy-speed"], scripts / "results")
    assert block.splitlines()[0] == "| 10 | 2.0 |"
    moved = copy.deepcopy(committed)
    moved["rows"][0]["ratio"] = 4.0
    assert compare_ratios(committed, moved, root=tmp_path).key == "n=10 ratio"
    assert compare_ratios(committed, copy.deepcopy(committed), root=tmp_path) is None
    argv = ["bench", "reproduce", "speed/toy-speed", "--results", str(scripts / "results")]
    assert main(argv) == 0
    assert "not run (needs a_peer_nobody_has)" in capsys.readouterr().out
    committed["provenance"]["command"] = "python -m benchmarks.no_such_script"
    with pytest.raises(ValueError, match="no script benchmarks.no_such_script"):
        speed_declaration(committed, tmp_path)


# --- the commands ----------------------------------------------------------------------


def test_a_recorded_command_is_re_parsed_with_its_output_sent_elsewhere(tmp_path):
    committed = json.loads((RESULTS / "dialog-babi-se.json").read_text())
    args = bench_arguments(committed["provenance"]["command"], tmp_path / "out.json")
    assert args.output == str(tmp_path / "out.json") and args.suite == "dialog-babi"
    assert (args.model, args.seeds, args.data_home) == ("se", 5, "../shared/data")
    assert args.quiet and args.plot is None and args.scheduler is None
    assert args.argv[args.argv.index("--output") + 1] == str(tmp_path / "out.json")
    moved = bench_arguments(
        "irdialog bench babi-qa --model memn2n --seeds 5 --n-jobs 2 --output x.json",
        "y.json",
        data_home="/data",
        n_jobs=1,
    )
    assert (moved.output, moved.data_home, moved.n_jobs, moved.seeds) == ("y.json", "/data", 1, 5)
    # the command the re-run records is the committed one, its output aside
    assert moved.argv == shlex.split(
        "bench babi-qa --model memn2n --seeds 5 --n-jobs 2 --output y.json"
    )
    # no --output recorded: one is added
    assert bench_arguments("irdialog bench ubuntu --model tfidf", "z.json").output == "z.json"


@pytest.mark.parametrize(
    "command, message",
    [
        ("irdialog bench ubuntu --chunksize 50000 --output x.json", "does not parse"),
        ("irdialog bench babi-qa --model ngram --search", "not a bench run"),
        ("irdialog bench report --check", "does not parse"),  # no --output to send elsewhere
        ("irdialog train --task 1 --model tfidf --save m.npz", "not an irdialog bench"),
    ],
)
def test_commands_that_cannot_be_re_run_say_why(command, message):
    with pytest.raises(ValueError, match=message):
        bench_arguments(command, "out.json")


def test_speed_script_commands_run_with_this_python_and_another_output():
    argv = script_command(
        "python -m benchmarks.pool_speed --data-home ../shared/data --output r.json",
        "/tmp/o.json",
        data_home="/data",
    )
    assert argv[1:] == [
        *("-m", "benchmarks.pool_speed"),
        *("--data-home", "/data", "--output", "/tmp/o.json"),
    ]
    assert script_command("python -m benchmarks.recurrent_speed", "o")[-2:] == ["--output", "o"]
    # a script that takes no --data-home is given none
    moved = script_command("python -m benchmarks.recurrent_speed", "o", data_home="/data")
    assert "--data-home" not in moved
    assert override_options(["a", "--output", "x"], {"--data-home": None}) == ["a", "--output", "x"]
    with pytest.raises(ValueError, match="benchmarks"):
        script_command("python benchmarks/pool_speed.py", "o")


# --- selection, budget, summary ---------------------------------------------------------


def _write(folder, name, *, seconds=10.0, rows=None, command=True, model="tfidf"):
    result = {
        "suite": "dialog-babi",
        "model": model,
        "seeds": [0],
        "rows": rows or [_row(1, per_response=99.0)],
        "seconds": seconds,
        "wall_seconds": seconds,
        "provenance": {
            "command": f"irdialog bench dialog-babi --model {model} --output {name}.json"
            if command
            else "",
            "seeds": [0],
            "data": [],
        },
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(result))
    return result


class _Clock:
    """The budget's clock, moved on by each fake run by its recorded time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def results(tmp_path, monkeypatch):
    folder = tmp_path / "benchmarks" / "results"
    (folder / "speed").mkdir(parents=True)
    clock = _Clock()
    monkeypatch.setattr(_reproduce, "_clock", clock)
    ran = []

    def fake_run(args):
        committed = json.loads((folder / Path(args.output).name).read_text())
        ran.append(Path(args.output).stem)
        clock.now += committed["seconds"]
        now = copy.deepcopy(committed)
        if Path(args.output).stem == "bad":
            now["rows"][0]["per_response"] = 98.0
        return now

    monkeypatch.setattr(_reproduce, "run_bench_command", fake_run)
    return folder, ran


def test_names_select_files_by_stem_or_pattern(tmp_path):
    for name in ("babi-qa-ngram", "babi-qa-memnn", "dialog-babi-nn"):
        _write(tmp_path, name)
    (tmp_path / "speed").mkdir()
    (tmp_path / "speed" / "pool-speed.json").write_text("{}")
    assert [n for n, _ in result_files(tmp_path)] == [
        "babi-qa-memnn",
        "babi-qa-ngram",
        "dialog-babi-nn",
        "speed/pool-speed",
    ]
    picked = result_files(tmp_path, ["dialog-babi-nn", "babi-qa-*", "pool-speed"])
    assert [n for n, _ in picked] == [
        "babi-qa-memnn",
        "babi-qa-ngram",
        "dialog-babi-nn",
        "speed/pool-speed",
    ]
    with pytest.raises(ValueError, match="movie"):
        result_files(tmp_path, ["movie-*"])


def test_the_budget_runs_the_cheapest_first_and_skips_what_would_overrun(results):
    folder, ran = results
    _write(folder, "a", seconds=40.0)  # third: 65 s left
    _write(folder, "b", seconds=50.0)  # 25 s left: skipped
    _write(folder, "c", seconds=30.0)  # second
    _write(folder, "d", seconds=5.0)  # first
    lines = []
    outcomes = reproduce(folder, max_seconds=100, out=lines.append)
    assert ran == ["d", "c", "a"]
    assert [o.status for o in outcomes] == ["reproduced", "reproduced", "reproduced", "budget"]
    assert lines[3] == "b  not run (budget)  recorded 50.0 s, 25 s left"
    assert lines[-1] == "3 reproduced, 0 differ, 1 not run (budget)"
    ran.clear()
    reproduce(folder, max_seconds=None, out=lines.append)  # no budget: everything runs
    assert ran == ["a", "b", "c", "d"]


def test_the_summary_counts_each_verdict_and_a_difference_shows_its_row(results):
    folder, ran = results
    _write(folder, "good")
    _write(folder, "bad")
    _write(folder, "long", seconds=1000.0)
    _write(folder, "old", command=False)
    lines = []
    outcomes = reproduce(folder, max_seconds=500, out=lines.append)
    assert ran == ["bad", "good"]
    assert lines[0] == (
        "bad  differ  10.0 s  task 1, split tst per_response: committed 99.0, now 98.0 (exact)"
    )
    assert lines[1] == "good  reproduced  10.0 s  (exact)"
    assert lines[2] == "old  not run (needs a recorded command)"
    assert lines[3] == "long  not run (budget)  recorded 1000.0 s, 480 s left"
    assert lines[-1] == (
        "1 reproduced, 1 differ, 1 not run (budget), 1 not run (needs a recorded command)"
    )
    assert summary_line(outcomes) == lines[-1]
    assert Outcome("x", "skipped", detail="why", needs="y").line() == "x  not run (needs y)  why"


def test_a_file_is_re_run_under_the_tie_rule_it_records_or_its_suite_had(results, monkeypatch):
    folder, _ = results
    rules = {}

    def run(args):
        rules[Path(args.output).stem] = args.ties
        return json.loads((folder / Path(args.output).name).read_text())

    monkeypatch.setattr(_reproduce, "run_bench_command", run)
    _write(folder, "unrecorded")
    recorded = _write(folder, "recorded")
    recorded["options"] = {"tasks": [1], "ties": "expected"}
    (folder / "recorded.json").write_text(json.dumps(recorded))
    reproduce(folder, out=lambda line: None)
    assert rules == {"unrecorded": "index", "recorded": "expected"}
    args = bench_arguments(recorded["provenance"]["command"], "out.json")
    args.ties = "index"
    assert _run_options(SUITES["dialog-babi"], args)["ties"] == "index"
    del args.ties  # a command line run: the suite's default rule
    assert "ties" not in _run_options(SUITES["dialog-babi"], args)


def test_missing_data_is_not_run_and_a_broken_run_differs(results, tmp_path):
    folder, _ = results
    result = _write(folder, "moved")
    result["provenance"]["data"] = [{"path": "dialog-babi/x.txt", "sha256": "0" * 64}]
    result["provenance"]["command"] += " --data-home /nowhere"
    (folder / "moved.json").write_text(json.dumps(result))
    _write(folder, "crash")
    lines = []

    def broken(args):
        if Path(args.output).stem == "crash":
            raise RuntimeError("out of memory")
        return {}

    reproduce(folder, out=lines.append, run_bench=broken)
    assert lines[0].startswith("crash  differ") and "RuntimeError: out of memory" in lines[0]
    assert lines[1] == "moved  not run (needs data)  not found: /nowhere/dialog-babi/x.txt"
    assert lines[-1] == "0 reproduced, 1 differ, 0 not run (budget), 1 not run (needs data)"


def _write_speed(folder, name, benchmark, command):
    result = {
        "benchmark": benchmark,
        "cold_over_warm": 1.5,
        "wall_seconds": 1.0,
        "provenance": {"command": command, "data": [], "platform": ""},
    }
    (folder / "speed" / f"{name}.json").write_text(json.dumps(result))
    return result


def test_what_this_machine_lacks_is_not_run_and_no_difference(results, monkeypatch, capsys):
    folder, _ = results
    _write(folder, "good")
    _write_speed(folder, "peer", "recurrent-speed", "python -m benchmarks.recurrent_speed")
    _write_speed(
        folder,
        "program",
        "training-time-to-accuracy",
        "python -m benchmarks.training_time_to_accuracy --starspace ../no/starspace",
    )
    _write_speed(folder, "late", "compile-time", "python -m benchmarks.compile_time")
    _write_speed(folder, "broken", "speed-memn2n", "python -m benchmarks.speed_memn2n")
    real_find_spec = _reproduce.importlib.util.find_spec
    monkeypatch.setattr(
        _reproduce.importlib.util,
        "find_spec",
        lambda name: None if name == "torch" else real_find_spec(name),
    )

    ran = []

    def script(argv, cwd):
        ran.append(argv[2])
        if argv[2] == "benchmarks.compile_time":  # a peer imported where the table says none
            raise RuntimeError("ModuleNotFoundError: No module named 'bm25s.tokenization'")
        raise RuntimeError("ModuleNotFoundError: No module named 'irdialog.gone'")

    assert main(["bench", "reproduce", "good", "speed/peer", "speed/program",
                 "--results", str(folder)]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "speed/peer  not run (needs torch)"
    assert lines[2] == "speed/program  not run (needs StarSpace)  no program ../no/starspace"
    assert lines[-1] == (
        "1 reproduced, 0 differ, 0 not run (budget), 2 not run (needs StarSpace, torch)"
    )
    lines = []
    outcomes = reproduce(folder, ["speed/late", "speed/broken"], out=lines.append,
                         run_script=script)  # fmt: skip
    assert ran == ["benchmarks.speed_memn2n", "benchmarks.compile_time"]
    assert [o.status for o in outcomes] == ["differ", "skipped"]
    assert "No module named 'irdialog.gone'" in lines[0]  # irdialog's own: a failure
    assert lines[1].startswith("speed/late  not run (needs bm25s)")
    assert lines[-1] == "0 reproduced, 1 differ, 0 not run (budget), 1 not run (needs bm25s)"


def _write_pid_and_peak(args):
    from irdialog.bench._provenance import peak_rss_mib

    Path(args.output).write_text(json.dumps({"pid": os.getpid(), "peak": peak_rss_mib()}))


def test_a_bench_command_runs_in_a_fresh_process_so_its_peak_memory_is_its_own(tmp_path):
    import argparse

    from irdialog.bench._provenance import peak_rss_mib

    ballast = np.ones(400 * 2**20 // 8)  # 400 MiB, written, so resident here
    args = argparse.Namespace(func=_write_pid_and_peak, output=str(tmp_path / "r.json"))
    child = run_bench_command(args)
    assert child["pid"] != os.getpid()
    assert peak_rss_mib() > 400 and child["peak"] < peak_rss_mib() - 300
    del ballast


def test_the_command_line_exits_1_when_a_file_differs(results, capsys):
    folder, _ = results
    _write(folder, "good")
    assert main(["bench", "reproduce", "--results", str(folder)]) == 0
    _write(folder, "bad")
    assert main(["bench", "reproduce", "good", "b*", "--results", str(folder)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 reproduced, 1 differ, 0 not run (budget)"
    assert main(["bench", "reproduce", "nothing", "--results", str(folder)]) == 2


def test_recorded_seconds_of_the_committed_files():
    assert recorded_seconds(json.loads((RESULTS / "dialog-babi-tfidf.json").read_text())) < 60
    compile_time = json.loads((RESULTS / "speed" / "compile-time.json").read_text())
    assert 60 < recorded_seconds(compile_time) < 600  # its three child processes


@pytest.mark.slow
def test_reproduce_re_runs_a_cheap_deterministic_result_exactly(data_home, capsys):
    code = main(["bench", "reproduce", "dialog-babi-tfidf", "--results", str(RESULTS),
                 "--data-home", str(data_home)])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("dialog-babi-tfidf  reproduced"), out
    assert out[-1] == "1 reproduced, 0 differ, 0 not run (budget)"
    assert code == 0


@pytest.mark.slow
def test_update_writes_the_re_run_over_the_committed_file(data_home, tmp_path, capsys):
    folder = tmp_path / "benchmarks" / "results"
    folder.mkdir(parents=True)
    committed = json.loads((RESULTS / "dialog-babi-nn.json").read_text())
    committed["provenance"]["date"] = "2000-01-01T00:00:00+00:00"
    (folder / "dialog-babi-nn.json").write_text(json.dumps(committed))
    code = main(["bench", "reproduce", "dialog-babi-nn", "--results", str(folder),
                 "--data-home", str(data_home), "--update"])  # fmt: skip
    assert code == 0, capsys.readouterr().out
    now = json.loads((folder / "dialog-babi-nn.json").read_text())
    assert now["rows"] == committed["rows"]
    assert now["provenance"]["date"] != committed["provenance"]["date"]
    assert now["provenance"]["numerics"]["blas"]
    assert "--output" in now["provenance"]["command"]


@pytest.mark.parametrize(
    "path",
    sorted(RESULTS.glob("*.json")),
    ids=lambda p: p.stem,
)
def test_every_recorded_bench_command_parses_to_the_options_it_ran_with(path):
    from irdialog.bench import SUITES
    from irdialog.bench._command import _run_options

    committed = json.loads(path.read_text())
    args = bench_arguments(committed["provenance"]["command"], "out.json")
    args.ties = recorded_ties(committed)  # as reproduce_one sets it
    options = _run_options(SUITES[args.suite], args)
    assert (args.suite, options.pop("model")) == (committed["suite"], committed["model"])
    recorded = {k: v for k, v in committed["options"].items() if v not in (None, {})}
    if args.ties is not None:  # a file that records no rule runs under its suite's
        recorded.setdefault("ties", args.ties)
    assert {k: v for k, v in options.items() if v is not None} == recorded


class _Parsed(Exception):
    """Raised by the patched parser once a script's arguments parsed."""


@pytest.mark.parametrize("path", sorted((RESULTS / "speed").glob("*.json")), ids=lambda p: p.stem)
def test_every_recorded_speed_command_parses_as_reproduce_runs_it(path, monkeypatch):
    import argparse
    import importlib

    committed = json.loads(path.read_text())
    argv = script_command(committed["provenance"]["command"], "out.json", data_home="/data")
    real_parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        raise _Parsed(real_parse(self, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.syspath_prepend(str(ROOT))
    module = importlib.import_module(argv[2])
    with pytest.raises(_Parsed) as parsed:
        module.main(argv[3:])  # a SystemExit (exit code 2) if the command no longer parses
    assert parsed.value.args[0].output == "out.json"
