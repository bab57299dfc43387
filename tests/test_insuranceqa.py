"""The insuranceqa bench suite, on pools written here (the real data is GPL: never copied)."""

import gzip
import json

import pytest

from irdialog.bench import SUITES, format_result, run_suite


def _home(tmp_path, test=False):
    folder = tmp_path / "insuranceqa-en"
    folder.mkdir()

    def write(name, value):
        (folder / name).write_bytes(gzip.compress(json.dumps(value).encode()))

    texts = ["cancel by phone", "pay the premium monthly", "renew the policy online",
             "a deductible is paid first", "claims take a week"]  # fmt: skip
    write("answers.json.gz", {str(i): {"en": t} for i, t in enumerate(texts)})
    write("train.json.gz", {
        "0": {"en": "how to cancel", "answers": ["0"], "negatives": ["1", "2", "3", "4"]},
        "1": {"en": "when do i pay the premium", "answers": ["1"], "negatives": ["0", "2"]},
    })  # fmt: skip
    # valid: "renew" is right and ranks first; "claims" ties with the other wrong ones
    write("valid.json.gz", {
        "0": {"en": "can i renew online", "answers": ["2"], "negatives": ["0", "1"]},
        "1": {"en": "what about claims", "answers": ["4", "3"], "negatives": ["0"]},
    })  # fmt: skip
    if test:
        write("test.json.gz", {"0": {"en": "cancel", "answers": ["0"], "negatives": ["1"]}})
    return tmp_path


def test_suite_reports_map_mrr_p1_on_valid(tmp_path):
    run = SUITES["insuranceqa"].run("bm25", data_home=_home(tmp_path), progress=False)
    values = {row["metric"]: row["value"] for row in run["rows"]}
    assert {row["split"] for row in run["rows"]} == {"valid"}
    assert all(row["n"] == 2 for row in run["rows"])
    # question 1: "claims take a week" is the only candidate sharing a word with the query
    assert values["p@1"] == pytest.approx(100.0)
    assert values["mrr"] == pytest.approx(100.0)
    assert 50.0 < values["map"] < 100.0  # its second right answer is not first
    assert "insuranceqa-en/train.json.gz" in run["protocol"]


def test_suite_scores_test_when_the_data_home_has_it(tmp_path):
    run = SUITES["insuranceqa"].run("tfidf", data_home=_home(tmp_path, test=True), progress=False)
    assert {row["split"] for row in run["rows"]} == {"test"}
    assert run["rows"][0]["n"] == 1


def test_suite_is_registered_and_runs_through_the_harness(tmp_path):
    suite = SUITES["insuranceqa"]
    assert set(suite.models) == {
        "bm25",
        "tfidf",
        "se-pools",
        "se-pools-wide",
        "se-pools-ppmi",
        "se-pools-rarity",
        "se-rarity-x3",
        "memn2n-pools",
        "ltr",
        "ltr-se",
        "ltr-se-char",
        "ltr-se-char-x3",
    }
    result = run_suite(
        suite.run, model="bm25", seeds=[0], data_home=_home(tmp_path), progress=False
    )
    assert "map" in format_result(result)
    assert any(line.startswith("| bm25 | valid |") for line in suite.table([("f", result)]))
    with pytest.raises(ValueError, match="unknown insuranceqa model"):
        SUITES["insuranceqa"].run("memn2n", data_home=tmp_path, progress=False)


@pytest.mark.parametrize(
    "model, how",
    [
        ("se-pools", "wrong answers of its pool as negatives"),
        ("se-pools-wide", "wrong answers of its pool as negatives"),
        ("se-pools-rarity", "wrong answers of its pool as negatives"),
        ("se-rarity-x3", "each question with its pool"),
        ("memn2n-pools", "wrong answers of its pool as negatives"),
        ("ltr", "its pool"),
    ],
)
def test_learned_models_learn_from_the_training_pools(tmp_path, model, how):
    pytest.importorskip("lightgbm")
    run = SUITES["insuranceqa"].run(model, data_home=_home(tmp_path), progress=False)
    assert how in run["protocol"]
    assert all(0 <= row["value"] <= 100 for row in run["rows"])


@pytest.mark.slow
def test_insuranceqa_bm25_on_the_real_valid_split(data_home):
    run = SUITES["insuranceqa"].run("bm25", data_home=data_home, progress=False)
    values = {row["metric"]: row["value"] for row in run["rows"]}
    assert run["rows"][0]["n"] == 2000
    assert 0 < values["p@1"] <= values["mrr"] <= 100


@pytest.mark.slow
def test_the_best_model_beats_bm25_on_the_real_valid_split(data_home):
    """ltr-se-char, fitted on every training question (a few minutes on one core), against
    BM25."""
    pytest.importorskip("lightgbm")
    if not (data_home / "insuranceqa-en").is_dir():
        pytest.skip("insuranceqa-en not found")

    def p_at_1(model):
        run = SUITES["insuranceqa"].run(model, data_home=data_home, progress=False)
        return next(row["value"] for row in run["rows"] if row["metric"] == "p@1")

    assert p_at_1("ltr-se-char") > 1.5 * p_at_1("bm25")
