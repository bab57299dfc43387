"""The suites of the field's formats (douban, ecommerce, ubuntu-v1, dstc7, beir, msmarco),
each run end to end through ``irdialog bench`` on a small corpus written here in its
release's layout; a data home without the corpus is a named error."""

import json
from pathlib import Path

import pytest

from irdialog.bench import SUITES, format_result
from irdialog.bench._format_suite import published
from irdialog.cli import main

_TOPICS = 30  # contexts of a split


def _topic(i: int) -> str:
    return f"t{i}x t{i}y"


def _tsv(path: Path, pools: list[list[tuple[int, str]]], contexts: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "\t".join([str(label), *turns, response])
        for turns, pool in zip(contexts, pools)
        for label, response in pool
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _multiturn(folder: Path, n_candidates: int, several=(), none=()) -> None:
    """train: one right and one wrong response per context; test: pools of
    ``n_candidates``, the right response first, two right in ``several``, none in ``none``
    (its right response replaced by a wrong one)."""
    turns = [["hello there", f"how about {_topic(i)}"] for i in range(_TOPICS)]
    train = [[(1, f"sure {_topic(i)}"), (0, f"sure {_topic((i + 1) % _TOPICS)}")]
             for i in range(_TOPICS)]  # fmt: skip
    _tsv(folder / "train.txt", train, turns)
    test = []
    for i in range(_TOPICS):
        wrong = [(0, f"sure {_topic((i + j) % _TOPICS)}") for j in range(1, n_candidates)]
        pool = [(1, f"sure {_topic(i)}"), *wrong]
        if i in several:
            pool[1] = (1, f"yes {_topic(i)}")
        if i in none:
            pool[0] = (0, f"sure {_topic((i + n_candidates) % _TOPICS)}")
        test.append(pool)
    _tsv(folder / "test.txt", test, turns)


def _dstc7(path: Path, n: int = 20, answers: Path | None = None) -> None:
    """Dialogs of ``n`` options, the first right; with ``answers``, the right ones are
    written there as the track releases a test's ground truth, not in the dialogs."""
    dialogs = []
    for i in range(_TOPICS):
        options = [{"candidate-id": f"c{i}-{j}", "utterance": f"try {_topic((i + j) % _TOPICS)}"}
                   for j in range(n)]  # fmt: skip
        dialogs.append({
            "example-id": i,
            "messages-so-far": [
                {"speaker": "participant_1", "utterance": f"my {_topic(i)} broke"},
                {"speaker": "participant_2", "utterance": "which version"},
                {"speaker": "participant_1", "utterance": f"the {_topic(i)} one"},
            ],
            "options-for-next": options,
            "options-for-correct-answers": [options[0]],
        })  # fmt: skip
    if answers is not None:
        lines = []
        for d in dialogs:
            [right] = d.pop("options-for-correct-answers")
            lines.append(f"{d['example-id']}\t{right['candidate-id']}\t{right['utterance']}\n")
        answers.write_text("".join(lines), encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dialogs, indent=1), encoding="utf-8")


def _beir(folder: Path) -> None:
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": f"d{i}", "title": f"about {_topic(i)}", "text": f"{_topic(i)} facts"}
              for i in range(_TOPICS)]  # fmt: skip
    queries = [{"_id": f"q{i}", "text": f"what is {_topic(i)}"} for i in range(_TOPICS)]
    for name, records in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    qrels = ["query-id\tcorpus-id\tscore"] + [f"q{i}\td{i}\t1" for i in range(_TOPICS)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")


def _msmarco(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "collection.tsv").write_text(
        "".join(f"{i}\tpassage on {_topic(i)}\n" for i in range(_TOPICS))
    )
    (folder / "queries.dev.small.tsv").write_text(
        "".join(f"{100 + i}\twhere is {_topic(i)}\n" for i in range(_TOPICS))
    )
    # query 100's judged passage is another topic's
    qrels = [f"{100 + i} 0 {i} 1" for i in range(1, _TOPICS)] + ["100 0 1 1"]
    (folder / "qrels.dev.small.tsv").write_text("\n".join(qrels) + "\n")


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "data"
    _multiturn(home / "douban", 10, several=(3, 4), none=(5,))
    _multiturn(home / "ecommerce", 10)
    _multiturn(home / "ubuntu-v1", 10)
    _dstc7(home / "dstc7" / "ubuntu_train_subtask_1.json")
    _dstc7(home / "dstc7" / "ubuntu_dev_subtask_1.json")
    _beir(home / "beir" / "scifact")
    _msmarco(home / "msmarco-passage")
    return home


def _bench(suite, model, home, tmp_path, *extra) -> dict:
    out = tmp_path / f"{suite}-{model}.json"
    argv = ["bench", suite, "--model", model, "--data-home", str(home), "--output", str(out)]
    assert main([*argv, "--quiet", *extra]) == 0
    return json.loads(out.read_text())


def _values(result) -> dict:
    return {(r["split"], r["metric"]): r["value"] for r in result["rows"]}


@pytest.mark.parametrize("model", ["tfidf", "bm25"])
def test_douban_skips_pools_with_no_right_answer(home, tmp_path, model):
    result = _bench("douban", model, home, tmp_path)
    assert result["suite"] == "douban" and result["model"] == model
    metrics = ["map", "mrr", "p@1", "r10@1", "r10@2", "r10@5"]
    assert [r["metric"] for r in result["rows"]] == metrics
    # 30 contexts, one with no right response left out; every right response shares the
    # context's topic words and no wrong one does
    assert {r["n"] for r in result["rows"]} == {_TOPICS - 1}
    values = _values(result)
    assert values["test", "map"] == values["test", "p@1"] == values["test", "mrr"] == 100.0
    # two contexts have two right responses: R10@1 finds one of the two
    r10_1 = 100 * (_TOPICS - 3 + 2 * 0.5) / (_TOPICS - 1)
    assert values["test", "r10@1"] == pytest.approx(r10_1, abs=0.01)
    assert values["test", "r10@2"] == 100.0
    assert "(1 with no right response left out)" in result["protocol"]
    assert all(r["paper"] is None for r in result["rows"])  # no verified figure


def test_ecommerce_runs_from_its_data_home(home, tmp_path):
    result = _bench("ecommerce", "tfidf", home, tmp_path)
    assert _values(result) == {("test", m): 100.0 for m in ("r10@1", "r10@2", "r10@5")}
    table = "\n".join(SUITES["ecommerce"].table([("ecommerce-tfidf", result)]))
    assert table.startswith("| model | task | split | r10@1 | r10@2 | r10@5 | published |")


def test_ubuntu_v1_puts_lowe_et_al_beside_ours(home, tmp_path):
    result = _bench("ubuntu-v1", "tfidf", home, tmp_path)
    rows = {r["metric"]: r for r in result["rows"]}
    assert list(rows) == ["r2@1", "r10@1", "r10@2", "r10@5"]
    assert rows["r10@1"]["paper"] == {"lowe2015_table4": 41.0}
    assert rows["r2@1"]["paper"] == {"lowe2015_table4": 65.9}
    assert rows["r10@1"]["value"] == 100.0
    printed = format_result(result)
    assert "lowe2015_table4 41.0" in printed
    table = "\n".join(SUITES["ubuntu-v1"].table([("ubuntu-v1-tfidf", result)]))
    assert "r10@1 41.0 (lowe2015_table4)" in table
    assert SUITES["ubuntu-v1"].models["dual-encoder"].paper == "dual-encoder"
    assert published("ubuntu-v1", "v1", "dual-encoder")["r10@1"] == {"lowe2015_table4": 60.4}


def test_ubuntu_v1_dual_encoder_runs_with_its_settings_overridden(home, tmp_path):
    tiny = ["epochs=1", "hidden_size=8", "embedding_dim=8", "max_length=20"]
    result = _bench("ubuntu-v1", "dual-encoder", home, tmp_path,
                    *[a for t in tiny for a in ("--set", t)])  # fmt: skip
    assert result["options"]["overrides"] == {
        "epochs": 1, "hidden_size": 8, "embedding_dim": 8, "max_length": 20,
    }  # fmt: skip
    [chosen] = result["runs"][0]["chosen"]
    assert chosen["params"]["cell"] == "lstm" and chosen["params"]["hidden_size"] == 8
    rows = {r["metric"]: r for r in result["rows"]}
    assert rows["r10@1"]["paper"] == {"lowe2015_table4": 60.4}
    assert all(0.0 <= r["value"] <= 100.0 for r in rows.values())


def test_dstc7_scores_dev_when_there_is_no_test(home, tmp_path):
    result = _bench("dstc7", "bm25", home, tmp_path)
    assert result["options"]["dataset"] == "ubuntu"
    assert {r["split"] for r in result["rows"]} == {"dev"}
    assert [r["metric"] for r in result["rows"]] == ["recall@1", "recall@10", "recall@50", "mrr"]
    assert {r["task"] for r in result["rows"]} == {"ubuntu"}
    assert _values(result)["dev", "recall@1"] == 100.0
    # a test file is scored once it is there
    _dstc7(home / "dstc7" / "ubuntu_test_subtask_1.json")
    result = _bench("dstc7", "bm25", home, tmp_path)
    assert {r["split"] for r in result["rows"]} == {"test"}


def test_dstc7_merges_the_released_ground_truth_of_test(home, tmp_path, capsys):
    folder = home / "dstc7"
    answers = folder / "ubuntu_responses_subtask_1.tsv"
    _dstc7(folder / "ubuntu_test_subtask_1.json", answers=answers)
    result = _bench("dstc7", "bm25", home, tmp_path)
    assert {r["split"] for r in result["rows"]} == {"test"}
    assert _values(result)["test", "recall@1"] == 100.0
    assert {r["n"] for r in result["rows"]} == {_TOPICS}
    # without its ground truth, the test file is a named error
    answers.unlink()
    argv = ["bench", "dstc7", "--model", "bm25", "--data-home", str(home), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "ubuntu_test_subtask_1.json: the test dialogs have no options-for-correct" in err
    assert "ubuntu_responses_subtask_1.tsv (example-id<TAB>candidate-id<TAB>utterance)" in err


def test_beir_ranks_the_corpus_of_the_named_data_set(home, tmp_path):
    result = _bench("beir", "bm25", home, tmp_path, "--dataset", "scifact")
    assert result["options"]["dataset"] == "scifact"
    assert [(r["task"], r["split"], r["metric"]) for r in result["rows"]] == [
        ("scifact", "test", "ndcg@10"), ("scifact", "test", "recall@100"),
    ]  # fmt: skip
    assert _values(result) == {("test", "ndcg@10"): 100.0, ("test", "recall@100"): 100.0}
    rows = {r["metric"]: r for r in result["rows"]}
    assert rows["ndcg@10"]["paper"] == {"thakur2021_table2": 66.5}
    assert rows["recall@100"]["paper"] is None  # Table 2 is nDCG@10 only
    table = "\n".join(SUITES["beir"].table([("beir-bm25", result)]))
    assert "ndcg@10 66.5 (thakur2021_table2)" in table
    assert "30 distinct documents" in result["protocol"]
    assert "\nscifact test       ndcg@10 " in format_result(result)  # the task column fits
    with pytest.raises(SystemExit):  # the data set is required
        main(["bench", "beir", "--model", "bm25", "--data-home", str(home)])


# The zero-shot data sets of BEIR (Thakur et al. 2021, Table 2) by their folder names in the
# release, CQADupStack (an average over 12 folders) aside, and the BM25 nDCG@10 of each.
_BEIR_BM25 = {
    "trec-covid": 65.6, "bioasq": 46.5, "nfcorpus": 32.5, "nq": 32.9, "hotpotqa": 60.3,
    "fiqa": 23.6, "signal1m": 33.0, "trec-news": 39.8, "robust04": 40.8, "arguana": 31.5,
    "webis-touche2020": 36.7, "quora": 78.9, "dbpedia-entity": 31.3, "scidocs": 15.8,
    "fever": 75.3, "climate-fever": 21.3, "scifact": 66.5,
}  # fmt: skip


def test_every_published_figure_names_a_described_source():
    from importlib import resources

    from irdialog.bench import paper_table

    text = resources.files("irdialog").joinpath("data", "reference", "format_suites.csv")
    described = {
        line.split(":")[0].removeprefix("# source ")
        for line in text.read_text("utf-8").splitlines()
        if line.startswith("# source ")
    }
    rows = paper_table("format_suites.csv")
    assert {r["source"] for r in rows} == described
    assert {r["suite"] for r in rows} <= set(SUITES)
    for r in rows:  # each metric is one its suite prints
        assert r["metric"] in SUITES[r["suite"]].metrics and 0 < float(r["value"]) < 100


@pytest.mark.parametrize("dataset", sorted(_BEIR_BM25))
def test_every_beir_data_set_has_its_published_bm25(dataset):
    assert published("beir", dataset, "bm25") == {
        "ndcg@10": {"thakur2021_table2": _BEIR_BM25[dataset]}
    }
    assert published("beir", dataset, "tfidf") == {}  # Table 2 has no TF-IDF


def test_tfidf_on_beir_has_no_published_figure(home, tmp_path):
    result = _bench("beir", "tfidf", home, tmp_path, "--dataset", "scifact")
    assert all(r["paper"] is None for r in result["rows"])


@pytest.mark.parametrize("model", ["tfidf", "bm25"])
def test_msmarco_puts_anserini_beside_ours(home, tmp_path, model):
    result = _bench("msmarco", model, home, tmp_path)
    [row] = result["rows"]
    assert (row["task"], row["split"], row["metric"], row["n"]) == (
        "passage", "dev.small", "mrr@10", _TOPICS
    )  # fmt: skip
    # every query finds its passage first but query 100, whose judged passage shares no
    # word with it: tied at 0 with the 28 other such passages behind passage 0, it is at
    # ranks 2-30 with equal chance
    tied = sum(1 / rank for rank in range(2, 11)) / (_TOPICS - 1)
    assert row["value"] == pytest.approx(100 * (_TOPICS - 1 + tied) / _TOPICS, abs=0.01)
    assert row["paper"] == ({"anserini_msmarco_passage": 18.7} if model == "bm25" else None)
    if model == "bm25":
        assert result["runs"][0]["chosen"][0]["params"] == {
            "method": "lucene", "k1": 0.82, "b": 0.68,
        }  # fmt: skip
        table = "\n".join(SUITES["msmarco"].table([("msmarco-bm25", result)]))
        assert "mrr@10 18.7 (anserini_msmarco_passage)" in table


@pytest.mark.parametrize(
    ("suite", "extra", "named"),
    [
        ("douban", [], "Douban train (needs data"),
        ("ecommerce", [], "E-commerce train (needs data"),
        ("ubuntu-v1", [], "Ubuntu v1 train (needs data"),
        ("dstc7", ["--dataset", "advising"], "DSTC7 track 1 advising train (needs data"),
        ("beir", ["--dataset", "nfcorpus"], "BEIR nfcorpus test (needs data"),
        ("msmarco", [], "MS MARCO passage dev.small (needs data"),
    ],
)
def test_a_data_home_without_the_corpus_is_a_named_error(tmp_path, capsys, suite, extra, named):
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = ["bench", suite, "--model", "bm25", "--data-home", str(empty), "--quiet", *extra]
    assert main(argv) == 2
    assert named in capsys.readouterr().err
    assert main([*argv[:4], "--data-home", str(tmp_path / "nowhere"), "--quiet", *extra]) == 2
    assert "does not exist" in capsys.readouterr().err
