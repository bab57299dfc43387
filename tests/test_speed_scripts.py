"""The speed scripts of benchmarks/: one result writer with provenance, and references
timed in turn with the work they are compared with."""

import json
import sys

import numpy as np
import pytest
from conftest import import_benchmark

# benchmarks/ is a folder of the repository, not of the installed package, and the tests
# may run from another directory (.ci/min-versions does).
speed = import_benchmark("speed")
alternate = sys.modules["benchmarks"].alternate
finish_speed_result = sys.modules["benchmarks"].finish_speed_result


def test_alternate_takes_turns_and_times_every_call():
    calls = []
    work = {name: (lambda name=name: calls.append(name) or name) for name in "abc"}
    wall, cpu, last = alternate(work, 3, warm_up=True)
    assert calls == list("abc") * 4  # the warm-up round, then three timed rounds
    assert {k: len(v) for k, v in wall.items()} == {k: len(v) for k, v in cpu.items()} == {
        "a": 3, "b": 3, "c": 3,
    }  # fmt: skip
    assert last == {"a": "a", "b": "b", "c": "c"}
    assert all(t >= 0.0 for times in wall.values() for t in times)


def test_a_speed_run_writes_its_table_and_provenance(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)
    row = speed.bench_supervised_embedding(1, epochs=2, embedding_dim=8, n_negatives=10)
    assert len(row["s_per_epoch_all"]) == 2 and row["ratio"] > 0
    out = tmp_path / "speed" / "speed.json"
    result = finish_speed_result("speed", {"rows": [row]}, argv=["--output", str(out)],
                                 seeds=[0], output=out)  # fmt: skip
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert result["provenance"]["command"] == f"python -m benchmarks.speed --output {out}"
    load = result["machine_load"]  # what else ran meanwhile (Linux)
    assert load is None or (load["wall_seconds"] > 0 and load["others_cpu_seconds"] >= 0)
    table = capsys.readouterr().out.splitlines()
    assert table == speed.SPEED.table(result) and table[-1].startswith("| 1 | ")


def test_training_threads_times_each_n_jobs_in_turn_and_writes_its_table(
    tmp_path, monkeypatch, capsys
):
    from conftest import make_tiny_dialogs

    from irdialog import SupervisedEmbeddingRanker

    threads = import_benchmark("training_threads")
    X, y, _ = make_tiny_dialogs()
    built = []

    def make(n_jobs):
        built.append(n_jobs)
        return SupervisedEmbeddingRanker(embedding_dim=4, epochs=2, n_jobs=n_jobs)

    work = {"name": "SE, tiny", "make": make, "fit": lambda est: est.fit(X, y),
            "score": lambda est: 100 * est.score(X, y), "metric": "train accuracy %"}  # fmt: skip
    monkeypatch.setattr(
        threads, "workloads", lambda model, data_home=None, ubuntu_home=None: [work]
    )
    out = tmp_path / "training-threads.json"
    threads.main(["--models", "recurrent", "--repeat", "2", "--output", str(out)])
    assert built == [1, 2, 1, 2, 1, 2]  # a warm-up fit each, then the sides take turns
    result = json.loads(out.read_text())
    [row] = result["rows"]
    assert row["speedup"]["1"] == 1.0 and row["seconds"]["2"] > 0
    assert set(row["score"]) == {"1", "2"}
    table = capsys.readouterr().out.splitlines()
    expected = threads.SPEED.table(result)
    assert table[-len(expected) :] == expected
    assert table[-1].startswith("| SE, tiny | ")


def test_training_threads_gives_the_generated_corpus_to_the_workloads(monkeypatch):
    """``--ubuntu-home`` reaches the script's ``threads_workloads``, so that the JSON records
    a corpus a re-run finds again."""
    from types import SimpleNamespace

    threads = import_benchmark("training_threads")
    seen = []

    def threads_workloads(data_home=None, ubuntu_home=None):
        seen.append((data_home, ubuntu_home))
        return []

    monkeypatch.setattr(threads, "SCRIPTS", {"a": "a"})
    script = SimpleNamespace(threads_workloads=threads_workloads)
    monkeypatch.setattr(threads.importlib, "import_module", {"a": script}.__getitem__)
    threads.workloads("a", "data", ubuntu_home="/corpus")
    assert seen == [("data", "/corpus")]


def test_memn2n_threads_workloads_build_the_bench_presets_with_n_jobs(monkeypatch):
    """MemN2N's workloads: bAbI QA at the preset's 10 restarts (which the threads share)
    and at one run, dialog bAbI at one run (whose batches they share), each built for the
    n_jobs asked."""
    import irdialog.datasets as datasets

    # the bundled samples hold task 1 only: it stands in for the others
    for name in ("load_babi_qa", "load_dialog_babi"):
        real = getattr(datasets, name)
        monkeypatch.setattr(datasets, name, lambda task, *a, _real=real, **kw: _real(1, *a, **kw))
    speed = import_benchmark("speed_memn2n")
    works = speed.threads_workloads()
    assert [w["name"] for w in works] == [
        "MemN2NRanker (10 restarts), bAbI QA task 1",
        "MemN2NRanker (10 restarts), bAbI QA task 3",
        "MemN2NRanker (one run), bAbI QA task 1",
        "MemN2NRanker (one run), bAbI QA task 3",
        "MemN2NRanker (one run), dialog bAbI task 1",
        "MemN2NRanker (one run), dialog bAbI task 5, epochs capped at 3",
    ]
    built = [w["make"](2).get_params() for w in works]
    assert [p["n_jobs"] for p in built] == [2] * 6
    assert [p["n_init"] for p in built] == [10, 10, 1, 1, 1, 1]
    assert built[5]["epochs"] == 3 and built[5]["embedding_dim"] == 128
    # a pipeline's steps get the n_jobs too (MemN2N behind the match-type featurizer)
    from benchmarks import dialog_babi_workload

    typed = dialog_babi_workload("memn2n-type", "typed", 1)["make"](2)
    assert typed.get_params()["ranker__n_jobs"] == 2


def test_qrn_threads_workloads_build_one_run_and_the_preset_restarts(monkeypatch):
    """QRN's workloads: bAbI QA at one run (whose batches the threads share) and at the
    preset's 10 restarts (which the threads share), each built for the n_jobs asked."""
    import irdialog.datasets as datasets

    # the bundled samples hold task 1 only: it stands in for task 3
    real = datasets.load_babi_qa
    monkeypatch.setattr(
        datasets, "load_babi_qa", lambda task, *a, _real=real, **kw: _real(1, *a, **kw)
    )
    script = import_benchmark("memory_training_time")
    works = script.threads_workloads()
    assert [w["name"] for w in works] == [
        "QRNRanker (one run), bAbI QA task 1",
        "QRNRanker (one run), bAbI QA task 3",
        "QRNRanker (10 restarts), bAbI QA task 1",
        "QRNRanker (10 restarts), bAbI QA task 3",
    ]
    built = [w["make"](2).get_params() for w in works]
    assert [p["n_jobs"] for p in built] == [2, 2, 2, 2]
    assert [p["n_init"] for p in built] == [1, 1, 10, 10]
    assert built[1]["learning_rate"] == 0.02  # task 3's preset


def test_svm_threads_workloads_fit_the_preset_on_the_supporting_facts(monkeypatch):
    """The structured SVM's workloads: bAbI QA tasks 1 and 3 at the preset, built for the
    n_jobs asked, fitted with the supporting facts of the stories they fit on."""
    import irdialog.datasets as datasets

    # the bundled samples hold task 1 only: it stands in for task 3
    real = datasets.load_babi_qa
    monkeypatch.setattr(
        datasets, "load_babi_qa", lambda task, *a, _real=real, **kw: _real(1, *a, **kw)
    )
    threads = import_benchmark("training_threads")
    works = threads.workloads("svm")
    assert [w["name"] for w in works] == [
        "StructuredSVMQA, bAbI QA task 1",
        "StructuredSVMQA, bAbI QA task 3",
    ]
    model = works[0]["make"](2)
    assert model.get_params()["n_jobs"] == 2
    model.set_params(epochs=1, n_features=2**14)
    works[0]["fit"](model)
    assert not model.pseudo_supporting_  # the gold supporting facts, not distant ones
    assert works[0]["score"](model) > 50


def test_memory_training_time_fits_one_run_of_each_preset_in_turn(tmp_path, monkeypatch, capsys):
    from types import SimpleNamespace

    from conftest import make_where_is_stories

    from irdialog.bench._presets import Preset

    timing = import_benchmark("memory_training_time")
    X, y = make_where_is_stories(40)
    monkeypatch.setattr(timing, "load_babi_qa", lambda task, split, data_home=None:
                        SimpleNamespace(X=X, y=y))  # fmt: skip
    presets = {"memn2n": 10, "gmemn2n": 5, "qrn": 1}
    monkeypatch.setattr(timing, "load_presets", lambda suite, model: {
        2: Preset({"epochs": 2, "embedding_dim": 8, "n_init": presets[model]}, "fixed")
    })  # fmt: skip
    fitted = []
    real = timing.BABI_QA_MODELS
    monkeypatch.setattr(timing, "BABI_QA_MODELS", {
        name: SimpleNamespace(build=lambda name=name, **p: fitted.append((name, p))
                              or real[name].build(**p))
        for name in timing.MODELS
    })  # fmt: skip
    out = tmp_path / "speed" / "memory-training-time.json"
    assert timing.main(["--tasks", "2", "--repeat", "2", "--output", str(out)]) == 0
    # a warm-up round, then two timed rounds, the models in turn, each one run
    assert [name for name, _ in fitted] == list(timing.MODELS) * 3
    assert all(p["n_init"] == 1 and p["epochs"] == 2 for _, p in fitted)
    result = json.loads(out.read_text())
    row = result["rows"][0]
    assert row["restarts"] == presets and len(row["cpu_seconds"]["qrn"]) == 2
    assert row["seconds_per_run"]["qrn"] == min(row["cpu_seconds"]["qrn"])
    table = capsys.readouterr().out.splitlines()
    assert table == timing.SPEED.table(result)
    assert table[-1].startswith("| 2 | ") and table[-1].endswith("QRN 1 |")


def test_candidate_lists_speed_times_every_side_and_checks_the_scores(tmp_path, capsys):
    bench = import_benchmark("candidate_lists_speed")
    texts, queries, pools, gold = bench.make_workload("no-spaces", n_texts=400, n_queries=5)
    assert len(texts) == 400 and len(queries) == 5
    assert all(201 <= len(p) <= 210 and g in p and len(set(p)) == len(p)
               for p, g in zip(pools, gold))  # fmt: skip
    assert not any(" " in t for t in texts)  # written without spaces
    # P@1 counts a tie between a right and a wrong answer as a miss
    pool = [np.array([5, 6, 7])]
    assert bench.precision_at_1(np.array([[1.0, 1.0, -np.inf]]), pool, [{5}]) == 0.0
    assert bench.precision_at_1(np.array([[2.0, 1.0, 2.0]]), pool, [{5, 7}]) == 100.0
    out = tmp_path / "candidate-lists-speed.json"
    bench.main(["--queries", "6", "--texts", "300", "--scripts", "spaces", "--models", "tfidf",
                "se", "--repeat", "2", "--output", str(out)])  # fmt: skip
    result = json.loads(out.read_text())
    assert [r["model"] for r in result["rows"]] == ["tfidf", "se"]
    assert all(r["equal_to_pair_path"] and len(r["times"]["new"]) == 2 for r in result["rows"])
    assert set(result["rows"][0]["seconds"]) == {"before", "new", "sklearn"}
    table = capsys.readouterr().out.splitlines()
    assert table == bench.SPEED.table(result)
    assert table[-1].startswith("| generated | spaces | SupervisedEmbeddingRanker | ")


def test_filtered_queries_times_every_side_and_checks_the_filter(tmp_path, capsys):
    pytest.importorskip("bm25s")
    bench = import_benchmark("filtered_queries")
    scores = np.array([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 2.0, 1.0]])
    mask = np.array([True, False, True, True])
    np.testing.assert_array_equal(bench.reference_top_k(scores, mask, 2), [[2, 0], [2, 3]])
    out = tmp_path / "filtered-queries.json"
    bench.main(["--documents", "3000", "--vocabulary", "500", "--queries", "40",
                "--shares", "0.05", "--repeat", "2", "--checked", "20",
                "--output", str(out)])  # fmt: skip
    result = json.loads(out.read_text())
    [row] = result["rows"]
    assert row["equal_to_reference"] and set(row["times"]) == {
        "irdialog", "irdialog filtered", "bm25s", "bm25s weight_mask",
    }  # fmt: skip
    assert all(len(t) == 2 for t in row["times"].values())
    small = result["filter_smaller_than_k"]
    assert small["irdialog_outside_filter"] == 0 and small["irdialog_width"] == 5
    table = capsys.readouterr().out.splitlines()
    assert table == bench.SPEED.table(result)
