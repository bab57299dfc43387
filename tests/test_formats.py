"""The field's data formats of irdialog.datasets.load_dialogs: multi-turn TSV, DSTC7, ParlAI,
BEIR, MS MARCO and pools by answer id, each on small files written here, and through the
CLI's train, evaluate and rank."""

import gzip
import json

import numpy as np
import pytest

from irdialog import BM25Ranker
from irdialog.base import Context, Turn
from irdialog.cli import load_model, main
from irdialog.datasets import DataFormatError, load_dialogs
from irdialog.metrics import get_ranking_metric

# --------------------------------------------------------------------------- writers


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _refused(path, text, match, source=None, **options):
    """``path`` written with ``text``: loading ``source`` (``path`` when None) raises a
    DataFormatError matching ``match``."""
    _write(path, text)
    with pytest.raises(DataFormatError, match=match):
        load_dialogs(path if source is None else source, **options)


# Douban-like: words separated by spaces, one context with two right responses, one with none.
MULTITURN = (
    "1\t你好\t你 好 啊\t想 买 手机\t什么 牌子\n"
    "0\t你好\t你 好 啊\t想 买 手机\t明天 下雨\n"
    "1\t你好\t你 好 啊\t想 买 手机\t预算 多少\n"
    "0\tturn one\tquery two\tno way\n"
    "0\tturn one\tquery two\tmaybe\n"
    "1\thi\tbye\n"
)


def _dstc7(path, pools=True, answers=True):
    dialogs = [
        {"example-id": 1,
         "messages-so-far": [{"speaker": "participant_1", "utterance": "my wifi is down"},
                             {"speaker": "participant_2", "utterance": "which card?"},
                             {"speaker": "participant_1", "utterance": "an intel one"}],
         "options-for-next": [{"candidate-id": "a", "utterance": "try iwlwifi"},
                              {"candidate-id": "b", "utterance": "good morning"}],
         "options-for-correct-answers": [{"candidate-id": "a", "utterance": "try iwlwifi"}]},
        {"example-id": 2,
         "messages-so-far": [{"speaker": "student", "utterance": "which course?"}],
         "options-for-next": [{"candidate-id": "c", "utterance": "take eecs 280"},
                              {"candidate-id": "d", "utterance": "hello there"}],
         "options-for-correct-answers": []},
    ]  # fmt: skip
    for d in dialogs:
        if not pools:
            del d["options-for-next"]
            d["options-for-correct-answers"] = [{"candidate-id": "z", "utterance": "take it"}]
        if not answers:
            del d["options-for-correct-answers"]
    return _write(path, json.dumps(dialogs, indent=2))


PARLAI = (
    "text:your persona: i like cats.\\nyour persona: i live in paris.\\nhi , how are you?"
    "\tlabels:i am fine , i have a cat\tlabel_candidates:paris is big|i am fine , i have a cat"
    "|a \\| pipe\n"
    "text:what is its name?\tlabels:tom\tlabel_candidates:tom|jerry|rex"
    "\treward:0\tepisode_done:True\n"
    "text:your persona: i run.\\nhello\tlabels:hi|hey\tlabel_candidates:hi|hey|no"
    "\tepisode_done:True\n"
)


def _beir(root, split="test"):
    _write(root / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in [
        {"_id": "d1", "title": "Cats", "text": "cats purr and sleep"},
        {"_id": "d2", "title": "", "text": "dogs bark at night"},
        {"_id": "d3", "title": "Birds", "text": "birds sing in the morning"},
    ]))  # fmt: skip
    _write(root / "queries.jsonl", "".join(json.dumps(q) + "\n" for q in [
        {"_id": "q1", "text": "why do cats purr"}, {"_id": "q2", "text": "birds in the morning"},
        {"_id": "q3", "text": "unjudged"},
    ]))  # fmt: skip
    return _write(
        root / "qrels" / f"{split}.tsv",
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td3\t1\nq2\td1\t1\n",
    )


def _msmarco(root):
    _write(root / "collection.tsv", "0\tcats purr and sleep\n1\tdogs bark at night\n"
           "2\tbirds sing in the morning\n")  # fmt: skip
    _write(root / "queries.dev.small.tsv", "10\twhy do cats purr\n11\tbirds in the morning\n")
    return _write(root / "qrels.dev.small.tsv", "10 0 0 1\n11 0 2 1\n")


def _pools(root, lang="en"):
    _write(root / "answers.json.gz", json.dumps({
        "1": {lang: "you can cancel a policy at any time"}, "2": {lang: "life insurance pays out"},
        "3": {lang: "a deductible is what you pay first"}, "4": {lang: "cancel by phone"},
    }))  # fmt: skip
    return _write(root / "valid.json.gz", json.dumps({
        "0": {lang: "how do i cancel my policy?", "domain": "auto", "answers": ["1", "4"],
              "negatives": ["2", "3", "1"]},
        "1": {lang: "what is a deductible?", "domain": "auto", "answers": ["3"],
              "negatives": ["2"]},
    }))  # fmt: skip


# --------------------------------------------------------------------------- loading


def test_multiturn_tsv_pools_consecutive_lines(tmp_path):
    path = _write(tmp_path / "test.txt", MULTITURN)
    data = load_dialogs(path)
    assert data.format == "multiturn-tsv" and len(data.X) == 3
    assert data.X[0] == Context(
        history=(Turn("user", "你好"), Turn("bot", "你 好 啊")), query="想 买 手机"
    )
    assert data.y == [["什么 牌子", "预算 多少"], [], "bye"]
    assert data.candidate_lists[0] == ["什么 牌子", "明天 下雨", "预算 多少"]
    assert data.candidate_lists[1:] == [["no way", "maybe"], ["bye"]]
    assert data.X[2] == Context(query="hi")


@pytest.mark.parametrize(
    "line, expected",
    [("2\ta\tb", "label 0 or 1"), ("1\tonly", "at least one turn"), ("1\ta\t ", "non-empty")],
)
def test_multiturn_tsv_bad_line(tmp_path, line, expected):
    path = _write(tmp_path / "bad.tsv", "1\tq\tr\n" + line + "\n")
    with pytest.raises(DataFormatError, match=f"bad.tsv, line 2: expected .*{expected}"):
        load_dialogs(path, format="multiturn-tsv")


def test_dstc7_pools_right_answers_and_subtask_4(tmp_path):
    data = load_dialogs(_dstc7(tmp_path / "dev.json"))
    assert data.format == "dstc7"
    assert data.X[0].query == "an intel one"
    assert data.X[0].history == (Turn("user", "my wifi is down"), Turn("bot", "which card?"))
    assert data.y == ["try iwlwifi", []]  # none of the second pool is right
    assert data.candidate_lists == [
        ["try iwlwifi", "good morning"],
        ["take eecs 280", "hello there"],
    ]


def test_dstc7_shared_pool_and_answers_left_out(tmp_path):
    shared = load_dialogs(_dstc7(tmp_path / "sub2.json", pools=False))
    assert "candidate_lists" not in shared and shared.y == ["take it", "take it"]
    path = _dstc7(tmp_path / "test.json", answers=False)
    with pytest.raises(DataFormatError, match="test.json, line 2: expected 'options-for-correct"):
        load_dialogs(path)
    assert load_dialogs(path, require_response=False).y == [None, None]


def test_dstc7_test_file_takes_its_ground_truth_apart(tmp_path):
    path = _dstc7(tmp_path / "ubuntu_test_subtask_1.json", answers=False)
    # the track's ubuntu_responses_subtask_1.tsv: example-id, candidate-id, utterance;
    # example 2's answer is not in its pool (none right, as in subtask 4)
    answers = _write(tmp_path / "ubuntu_responses_subtask_1.tsv.gz",
                     "1\ta\ttry iwlwifi\n2\tq\ttake eecs 281\n")  # fmt: skip
    data = load_dialogs(path, format="dstc7", answers=answers)
    assert data.y == ["try iwlwifi", []]
    assert data.candidate_lists[0] == ["try iwlwifi", "good morning"]
    # a dialog with its own options-for-correct-answers keeps them
    own = load_dialogs(_dstc7(tmp_path / "dev.json"), format="dstc7", answers=answers)
    assert own.y == ["try iwlwifi", []]


def test_dstc7_ground_truth_errors(tmp_path):
    path = _dstc7(tmp_path / "test.json", answers=False)
    answers = _write(tmp_path / "answers.tsv", "1\ta\ttry iwlwifi\n")
    with pytest.raises(DataFormatError, match="test.json, line 29: expected an answer to "
                       "example-id 2 in .*answers.tsv"):  # fmt: skip
        load_dialogs(path, format="dstc7", answers=answers)
    _write(answers, "1\ta\ttry iwlwifi\n2 q take it\n")
    with pytest.raises(DataFormatError, match="answers.tsv, line 2: expected 'example-id<TAB>"):
        load_dialogs(path, format="dstc7", answers=answers)
    _write(answers, "\n")
    with pytest.raises(DataFormatError, match="answers.tsv: expected at least one answer line"):
        load_dialogs(path, format="dstc7", answers=answers)
    with pytest.raises(FileNotFoundError, match="nowhere.tsv: no such file"):
        load_dialogs(path, format="dstc7", answers=tmp_path / "nowhere.tsv")
    with pytest.raises(ValueError, match="answers= goes with format='dstc7', not 'jsonl'"):
        load_dialogs(path, format="jsonl", answers=answers)


def test_dstc7_bad_dialog_names_its_line(tmp_path):
    path = _write(tmp_path / "bad.json", '[\n {"messages-so-far": [{"speaker": "a", '
                  '"utterance": "x"}]},\n {"messages-so-far": []}\n]')  # fmt: skip
    with pytest.raises(DataFormatError, match="bad.json, line 3: expected at least one message"):
        load_dialogs(path, require_response=False)
    _write(path, '[\n {"messages-so-far": [}\n]')
    with pytest.raises(DataFormatError, match="bad.json, line 2: expected a JSON value"):
        load_dialogs(path)


def test_parlai_episodes_personas_and_escapes(tmp_path):
    data = load_dialogs(_write(tmp_path / "valid.txt", PARLAI))
    assert data.format == "parlai" and data.groups.tolist() == [0, 0, 1]
    first, second = data.X[0], data.X[1]
    assert first.history == (Turn("kb", "your persona: i like cats."),
                             Turn("kb", "your persona: i live in paris."))  # fmt: skip
    assert first.query == "hi , how are you?"
    assert second.history[2:] == (Turn("user", "hi , how are you?"),
                                  Turn("bot", "i am fine , i have a cat"))  # fmt: skip
    assert data.y == ["i am fine , i have a cat", "tom", ["hi", "hey"]]
    assert data.candidate_lists[0] == ["paris is big", "i am fine , i have a cat", "a | pipe"]
    assert data.X[2].history == (Turn("kb", "your persona: i run."),)  # a new episode


def test_parlai_bad_fields(tmp_path):
    path = _write(tmp_path / "bad.txt", "text:hi\tlabels:yo\nlabels:no text\n")
    with pytest.raises(DataFormatError, match="bad.txt, line 2: expected a 'text:' field"):
        load_dialogs(path, format="parlai")
    _write(path, "text:hi\tlabels:a||b\n")
    with pytest.raises(DataFormatError, match="line 1: expected 'labels' to hold non-empty"):
        load_dialogs(path, format="parlai")
    _write(path, "text:hi\tnot a field\n")
    with pytest.raises(DataFormatError, match="line 1: expected tab-separated 'key:value'"):
        load_dialogs(path, format="parlai")


def test_beir_directory_and_qrels_file(tmp_path):
    qrels = _beir(tmp_path / "scifact", split="dev")
    data = load_dialogs(qrels)
    assert data.format == "beir" and data.filename == str(qrels)
    assert data.query_ids == ["q1", "q2"] and data.X[0] == Context(query="why do cats purr")
    assert data.document_ids == ["d1", "d2", "d3"]
    assert data.documents == ["Cats\ncats purr and sleep", "dogs bark at night",
                              "Birds\nbirds sing in the morning"]  # fmt: skip
    assert data.relevance == [{"d1": 2, "d2": 0}, {"d3": 1, "d1": 1}]
    cats, birds = data.documents[0], data.documents[2]
    assert data.y == [cats, [birds, cats]]
    with pytest.raises(FileNotFoundError, match="test.tsv"):
        load_dialogs(tmp_path / "scifact")  # the directory means the test split
    _beir(tmp_path / "scifact")
    assert load_dialogs(tmp_path / "scifact").query_ids == ["q1", "q2"]
    # a ranker fitted on the corpus ranks it
    bm25 = BM25Ranker(candidates=data.documents).fit(data.documents, data.documents)
    assert list(bm25.predict(data.X)) == [data.documents[0], data.documents[2]]


def test_beir_bad_rows(tmp_path):
    qrels = _beir(tmp_path / "b")
    header = "query-id\tcorpus-id\tscore\n"
    _refused(qrels, header + "q1\td1\n", r"test.tsv, line 2: expected 'query-id<TAB>")
    _refused(qrels, header + "q1\td1\t1\nq9\td1\t1\n", "line 3: expected a query with id 'q9'")
    _refused(qrels, "q1\tdx\t1\n", "line 1: expected judged documents in the corpus")
    _refused(
        tmp_path / "b" / "corpus.jsonl", '{"_id": "d1"}\n',
        "corpus.jsonl, line 1: expected an object with", tmp_path / "b", format="beir",
    )  # fmt: skip


def test_msmarco_directory_and_bad_qrels(tmp_path):
    qrels = _msmarco(tmp_path / "msmarco")
    data = load_dialogs(tmp_path / "msmarco")
    assert data.format == "msmarco" and data.filename == str(qrels)
    assert data.query_ids == ["10", "11"] and data.document_ids == ["0", "1", "2"]
    assert data.y == ["cats purr and sleep", "birds sing in the morning"]
    assert data.relevance == [{"0": 1}, {"2": 1}]
    assert load_dialogs(qrels).query_ids == ["10", "11"]
    _write(qrels, "10 0 0 1\n11\t0\t2\n")
    with pytest.raises(DataFormatError, match="line 2: expected 'qid 0 pid relevance'"):
        load_dialogs(qrels)
    _write(qrels, "10 0 0 high\n")
    with pytest.raises(DataFormatError, match="line 1: expected an integer relevance grade"):
        load_dialogs(qrels)


def test_pools_by_id(tmp_path):
    questions = _pools(tmp_path / "iqa")
    for source in (questions, tmp_path / "iqa"):
        data = load_dialogs(source)
        assert data.format == "pools-by-id" and data.filename == str(questions)
        assert data.query_ids == ["0", "1"]
        assert data.X[0] == Context(query="how do i cancel my policy?")
        assert data.y == [["you can cancel a policy at any time", "cancel by phone"],
                          "a deductible is what you pay first"]  # fmt: skip
        assert data.candidate_lists[0] == [
            "you can cancel a policy at any time", "cancel by phone",
            "life insurance pays out", "a deductible is what you pay first",
        ]  # fmt: skip


def test_pools_by_id_language_and_bad_ids(tmp_path):
    questions = _pools(tmp_path / "iqa", lang="zh")
    assert load_dialogs(questions).X[1].query == "what is a deductible?"  # the only text key
    assert load_dialogs(questions, language="zh").y[1] == "a deductible is what you pay first"
    with pytest.raises(DataFormatError, match="expected the text language key 'en'"):
        load_dialogs(questions, language="en")
    with pytest.raises(ValueError, match="language= goes with format='pools-by-id'"):
        load_dialogs(tmp_path / "x.jsonl", language="en")
    _refused(
        questions, '{\n"0": {"en": "q", "answers": ["9"], "negatives": []}\n}',
        r"valid.json.gz, line 2: expected answer ids .*'9'",
    )  # fmt: skip
    _refused(
        questions, '{\n"0": {"en": "q", "answers": "1"}\n}',
        "line 2: expected question '0' to be an object",
    )  # fmt: skip


def test_formats_that_cannot_be_inferred_say_so(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="cannot infer the format of this directory"):
        load_dialogs(tmp_path / "empty")
    # an Ubuntu v2 TSV (a header) stays "tsv"; a bAbI-like .txt is not guessed
    _write(tmp_path / "u.tsv", "Context\tUtterance\tLabel\nhi __eou__ __eot__\tyo __eou__\t1\n")
    assert load_dialogs(tmp_path / "u.tsv").format == "tsv"
    _write(tmp_path / "d.txt", "1 hi\thello\n")
    with pytest.raises(ValueError, match="suffix '.txt'"):
        load_dialogs(tmp_path / "d.txt")


@pytest.mark.slow
def test_insuranceqa_as_pools_by_id(data_home):
    data = load_dialogs(data_home / "insuranceqa-en" / "valid.json.gz")
    assert data.format == "pools-by-id" and len(data.X) == 2000
    assert all(isinstance(r, (str, list)) for r in data.y)
    for rights, pool in zip(data.y, data.candidate_lists):
        rights = [rights] if isinstance(rights, str) else rights
        assert rights and set(rights) <= set(pool) and len(pool) > 100


# --------------------------------------------------------------------------- the CLI


def _cli(capsys, *argv):
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["multiturn-tsv", "dstc7", "parlai", "pools-by-id"])
def test_cli_trains_evaluates_and_ranks_each_pool_format(tmp_path, capsys, fmt):
    make = {
        "multiturn-tsv": lambda: _write(tmp_path / "data.txt", MULTITURN),
        "dstc7": lambda: _dstc7(tmp_path / "data.json"),
        "parlai": lambda: _write(tmp_path / "data.txt", PARLAI),
        "pools-by-id": lambda: _pools(tmp_path / "iqa"),
    }
    path = make[fmt]()
    model = tmp_path / "bm25.npz"
    _cli(capsys, "train", "--train", str(path), "--format", fmt, "--model", "bm25",
         "--set", "k1=1.2", "--save", str(model), "--quiet")  # fmt: skip
    metrics = tmp_path / "metrics.json"
    out = _cli(capsys, "evaluate", str(model), str(path), "--output", str(metrics))
    assert "ranked against each example's candidates" in out
    got = json.loads(metrics.read_text())
    assert {"map", "mrr", "p@1"} <= set(got)  # the default where right answers are several
    # the figures of irdialog.metrics on the model's scores of each pool
    data, ranker = load_dialogs(path), load_model(model)
    scores = ranker.rank_candidates(data.X, data.candidate_lists)
    gold = [[pool.index(r) for r in ([y] if isinstance(y, str) else y)]
            for pool, y in zip(data.candidate_lists, data.y)]  # fmt: skip
    for name in ("map", "mrr", "p@1"):
        assert got[name] == pytest.approx(get_ranking_metric(name)(gold, scores)), name
    out = _cli(capsys, "rank", str(model), str(path), "-k", "2")
    ranks = [json.loads(line) for line in out.splitlines()]
    assert len(ranks) == len(load_dialogs(path).X)
    assert all(len(r["responses"]) <= 2 for r in ranks)


@pytest.mark.parametrize("fmt", ["beir", "msmarco"])
def test_cli_ranks_a_corpus(tmp_path, capsys, fmt):
    (_beir if fmt == "beir" else _msmarco)(tmp_path / "corpus")
    model = tmp_path / "bm25.npz"
    _cli(capsys, "train", "--train", str(tmp_path / "corpus"), "--model", "bm25", "--set",
         "use_history=False", "--save", str(model), "--quiet")  # fmt: skip
    out = _cli(capsys, "evaluate", str(model), str(tmp_path / "corpus"))
    assert "ranked against the model's 3 candidates" in out
    lines = dict(line.split(None, 1) for line in out.splitlines()[1:])
    assert set(lines) == {"ndcg@10", "recall@100", "mrr@10"}
    assert float(lines["recall@100"].rstrip("%")) == 100.0
    out = _cli(capsys, "rank", str(model), str(tmp_path / "corpus"), "-k", "1")
    first = [json.loads(line)["responses"][0] for line in out.splitlines()]
    assert first[0].endswith("cats purr and sleep")


def test_cli_evaluates_graded_relevance_as_beir(tmp_path, capsys):
    # q1: d1 (grade 2) ranks first; q2: d3 first, then d1 (grade 1) tied at 0 with d2, so
    # half of its gain at rank 2 and half at rank 3: nDCG@10 of q2 is
    # (1 + (1/log2(3) + 1/log2(4)) / 2) / (1 + 1/log2(3)).
    _beir(tmp_path / "b")
    model = tmp_path / "bm25.npz"
    _cli(capsys, "train", "--train", str(tmp_path / "b"), "--model", "bm25", "--save",
         str(model), "--quiet")  # fmt: skip
    metrics = tmp_path / "m.json"
    _cli(capsys, "evaluate", str(model), str(tmp_path / "b"), "--output", str(metrics),
         "--metrics", "ndcg@10,recall@1,mrr@10,map")  # fmt: skip
    got = json.loads(metrics.read_text())
    q2 = (1 + (1 / np.log2(3) + 1 / np.log2(4)) / 2) / (1 + 1 / np.log2(3))
    assert got["ndcg@10"] == pytest.approx((1 + q2) / 2)
    assert got["recall@1"] == pytest.approx((1 + 1 / 2) / 2)
    assert got["mrr@10"] == pytest.approx(1.0)
    # a relevant document the model does not hold still counts (a miss)
    small = tmp_path / "small.npz"
    other = _write(tmp_path / "other" / "corpus.jsonl", json.dumps(
        {"_id": "d1", "title": "Cats", "text": "cats purr and sleep"}) + "\n")  # fmt: skip
    _write(other.parent / "queries.jsonl", json.dumps({"_id": "q1", "text": "cats"}) + "\n")
    _write(other.parent / "qrels" / "test.tsv", "q1\td1\t1\n")
    _cli(capsys, "train", "--train", str(other.parent), "--model", "bm25", "--save",
         str(small), "--quiet")  # fmt: skip
    out = _cli(capsys, "evaluate", str(small), str(tmp_path / "b"), "--metrics", "recall@10")
    assert "1 right responses are not among the candidates" in out  # d3 of q2
    assert "recall@10  75.00%" in out  # (1 + 1/2) / 2
