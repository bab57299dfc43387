"""irdialog._compile_ahead: later models' kernels compiled in a helper process."""

from irdialog import TfidfRanker
from irdialog._compile_ahead import CompileAhead
from irdialog.bench._dialog_babi import compile_ahead_jobs


def test_jobs_run_in_order_and_failures_only_return_false():
    jobs = {
        "ok": (TfidfRanker(), ["hi there", "a table"], ["hello", "for how many?"]),
        "bad": (TfidfRanker(), [], []),  # fit raises: the caller compiles by itself
    }
    with CompileAhead(jobs, min_cpus=1) as ahead:
        assert ahead.wait("ok") is True
        assert ahead.wait("bad") is False
        assert ahead.wait("ok") is False  # each job is waited for once
        assert ahead.wait("never submitted") is False


def test_no_helper_when_disabled_or_short_of_cpus(monkeypatch):
    jobs = {"ok": (TfidfRanker(), ["hi"], ["hello"])}
    with CompileAhead(jobs, min_cpus=10**6) as ahead:
        assert ahead._pool is None and ahead.wait("ok") is False
    monkeypatch.setenv("IRDIALOG_COMPILE_AHEAD", "0")
    with CompileAhead(jobs, min_cpus=1) as ahead:
        assert ahead._pool is None and ahead.wait("ok") is False


def test_jobs_are_the_bench_models_on_a_few_rows():
    jobs = compile_ahead_jobs(["tfidf", "nn", "se-type", "memn2n-type"], n_rows=50)
    assert list(jobs) == ["se-type", "memn2n-type"]  # the preset (numba) models, in order
    for estimator, X, y in jobs.values():
        assert len(X) == len(y) == 50
        assert estimator.get_params()["ranker__random_state"] == 0
