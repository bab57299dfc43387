"""irdialog.plot and the attention-to-turns helper: what the pictures show, on tiny fixtures."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY_KB, make_tiny_dialogs

from irdialog import (
    Context,
    MatchTypeFeaturizer,
    MemN2NRanker,
    MemNNQA,
    TfidfRanker,
    Turn,
    make_ranking_pipeline,
)
from irdialog.cli import main
from irdialog.embed._attention import EMPTY_SLOTS

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from irdialog.plot import (  # noqa: E402
    bench_series,
    check_plot_file,
    plot_attention,
    plot_bench,
    plot_learning_curve,
    save_plot,
)

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"

# A context whose turns are known by age: age 0 is the last turn, "for four please".
TURNS = (
    Turn("user", "good morning"),
    Turn("bot", "hello what can i help you with today"),
    Turn("user", "a table in paris please"),
    Turn("kb", "resto_1 R_phone resto_1_phone"),
    Turn("bot", "how many people would be in your party"),
    Turn("user", "for four please"),
)
CONTEXT = Context(TURNS, "<SILENCE>")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_dialogs()


@pytest.fixture(scope="module")
def memn2n(tiny):
    X, y, _ = tiny
    return MemN2NRanker(hops=2, embedding_dim=8, epochs=4, batch_size=4, random_state=0).fit(X, y)


def _ax():
    from matplotlib.figure import Figure

    return Figure().add_subplot()


def _bars(ax):
    """The bar series of ``ax`` (its containers also hold the error bars)."""
    from matplotlib.container import BarContainer

    return [c for c in ax.containers if isinstance(c, BarContainer)]


# --------------------------------------------------------------------------- attention_turns


def test_attention_turns_are_the_turns_in_dialog_order_with_weights_summing_to_one(memn2n):
    # the training histories are at most 6 turns long: CONTEXT fills every memory slot
    assert memn2n.memory_slots_ == len(TURNS)
    rows = memn2n.attention_turns(CONTEXT)
    assert [(r.time, r.speaker, r.text) for r in rows] == [
        (i + 1, t.speaker, t.text) for i, t in enumerate(TURNS)
    ]
    weights = np.array([r.weights for r in rows])
    assert weights.shape == (len(TURNS), 2)
    np.testing.assert_allclose(weights.sum(axis=0), 1.0, rtol=1e-5)
    by_age = memn2n.attention([CONTEXT])[0]
    for pos, row in enumerate(rows):  # time t is the memory of age len - t
        np.testing.assert_array_equal(row.weights, by_age[:, len(TURNS) - 1 - pos])
    assert rows[-1].text == "for four please"
    np.testing.assert_array_equal(rows[-1].weights, by_age[:, 0])


def test_empty_memory_slots_take_a_row_and_old_turns_none(memn2n, tiny):
    short = Context(TURNS[-2:], "<SILENCE>")  # 2 of the 6 slots used
    rows = memn2n.attention_turns(short)
    assert [r.text for r in rows] == [EMPTY_SLOTS, TURNS[-2].text, TURNS[-1].text]
    assert [r.time for r in rows] == [None, 1, 2]
    assert rows[0].weights.min() > 0  # empty slots do take part of the softmax
    np.testing.assert_allclose(np.sum([r.weights for r in rows], axis=0), 1.0, rtol=1e-5)

    X, y, _ = tiny
    small = MemN2NRanker(hops=1, embedding_dim=8, epochs=1, memory_size=3, pad_memory=False)
    rows = small.set_params(random_state=0).fit(X, y).attention_turns(CONTEXT)
    assert [(r.time, r.text) for r in rows] == [(i + 4, TURNS[i + 3].text) for i in range(3)]
    assert sum(float(r.weights[0]) for r in rows) == pytest.approx(1.0, rel=1e-5)
    assert memn2n.attention_turns("hi") == []


def test_pipeline_attention_turns_go_through_the_transforms(tiny):
    X, y, _ = tiny
    ranker = MemN2NRanker(hops=2, embedding_dim=8, epochs=2, random_state=0)
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), ranker).fit(X, y)
    got = pipe.attention_turns(CONTEXT)
    want = pipe[-1].attention_turns(pipe[0].transform([CONTEXT])[0])
    assert [r[:3] for r in got] == [r[:3] for r in want]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.weights, b.weights)
    assert not hasattr(make_ranking_pipeline(TfidfRanker()), "attention_turns")


def test_memnn_attention_turns_are_its_supporting_facts():
    story = (
        Turn("kb", "mary went to the kitchen"),
        Turn("kb", "john went to the garden"),
        Turn("kb", "mary went to the office"),
    )
    X = [Context(story, "where is mary"), Context(story, "where is john")] * 5
    y, facts = ["office", "garden"] * 5, [(2,), (1,)] * 5
    model = MemNNQA(hops=1, embedding_dim=8, epochs=20, random_state=0).fit(X, y, facts)
    found = model.predict_supporting(X[:2])
    for ctx, fact in zip(X[:2], found):
        rows = model.attention_turns(ctx)
        assert [r.text for r in rows] == [t.text for t in story]
        weights = np.array([r.weights for r in rows])
        assert weights.shape == (3, 1) and weights.sum() == 1.0
        assert int(np.argmax(weights[:, 0])) == fact[0]
    ax = plot_attention(model, X[0], ax=_ax())  # hard attention printed as 0 and 1
    assert [t.get_text() for t in ax.texts] == ["1" if i == found[0][0] else "0" for i in range(3)]


# --------------------------------------------------------------------------- plot_attention


def test_plot_attention_reads_like_the_papers_table(memn2n):
    ax = plot_attention(memn2n, CONTEXT, y="api_call paris", ax=_ax())
    labels = [t.get_text().rstrip() for t in ax.get_yticklabels()]
    rows = memn2n.attention_turns(CONTEXT)
    speakers = {"user": "User", "bot": "Bot", "kb": "KB"}
    for i, (label, turn) in enumerate(zip(labels, TURNS)):
        assert label.split()[:2] == [str(i + 1), speakers[turn.speaker]]
        assert label.endswith(turn.text)
    predicted = memn2n.predict([CONTEXT])[0]
    verdict = "[Correct]" if predicted == "api_call paris" else "[Incorrect]"
    assert [lb.strip() for lb in labels[len(TURNS) :]] == [
        "User input: <SILENCE>",
        "Correct answer: api_call paris",
        f"Predicted answer: {predicted} {verdict}",
    ]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Hop #1", "Hop #2"]
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == len(TURNS) * 2
    assert cells[:2] == [f"{w:.3f}".lstrip("0") for w in rows[0].weights]
    np.testing.assert_allclose(ax.images[0].get_array(), [r.weights for r in rows])


def test_plot_attention_cuts_long_texts_and_accepts_a_pipeline(tiny):
    X, y, _ = tiny
    pipe = make_ranking_pipeline(
        MatchTypeFeaturizer(TINY_KB), MemN2NRanker(hops=1, embedding_dim=8, epochs=1)
    ).fit(X, y)
    long = Context((Turn("user", "word " * 30),), "hi")
    ax = plot_attention(pipe, long, ax=_ax(), max_chars=20, annotate=False)
    labels = [t.get_text().rstrip() for t in ax.get_yticklabels()]
    assert labels[1].endswith("word word word word…") and len(labels[1].split("  ")[-1]) == 20
    assert len(ax.texts) == 0 and labels[-1].strip().startswith("Predicted answer: ")
    ax = plot_attention(pipe, "hi", ax=_ax())  # no history: no memory to draw
    assert len(ax.images) == 0
    assert [t.get_text().split(":")[0] for t in ax.get_yticklabels()] == [
        "     User input", "     Predicted answer",
    ]  # fmt: skip
    with pytest.raises(TypeError, match="attention_turns"):
        plot_attention(TfidfRanker().fit(X, y), X[0])


# --------------------------------------------------------------------------- learning curve


def test_plot_learning_curve_draws_the_history_attributes(tiny):
    X, y, groups = tiny
    model = MemN2NRanker(
        hops=1, embedding_dim=8, epochs=30, linear_start=2, early_stopping=True,
        n_iter_no_change=2, validation_fraction=0.34, random_state=0,
    ).fit(X, y, groups=groups)  # fmt: skip
    ax = plot_learning_curve(model, ax=_ax())
    [loss] = ax.get_lines()
    assert loss.get_ydata().tolist() == model.loss_curve_
    assert loss.get_xdata().tolist() == list(range(1, model.n_iter_ + 1))
    twin = next(a for a in ax.figure.axes if a is not ax)
    lines = {ln.get_label(): ln for ln in twin.get_lines()}
    assert lines["training accuracy (in epoch)"].get_ydata().tolist() == model.train_accuracy_curve_
    val = lines["validation score"]
    assert val.get_ydata().tolist() == model.validation_scores_
    # validated from the end of linear start: the last len(validation_scores_) epochs
    assert val.get_xdata()[0] == 3 and val.get_xdata()[-1] == model.n_iter_
    assert ax.get_title() == "MemN2NRanker: 32 epochs"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "training loss", "linear start", "training accuracy (in epoch)", "validation score",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="loss_curve_"):
        plot_learning_curve(TfidfRanker().fit(X, y))

    # an early stop after 5 epochs (the history attributes of such a fit)
    model.loss_curve_, model.train_accuracy_curve_ = model.loss_curve_[:5], [0.5] * 5
    model.validation_scores_, model.n_iter_ = [0.2, 0.8, 0.6], 5
    ax = plot_learning_curve(model, ax=_ax())
    assert ax.get_title() == "MemN2NRanker: 5 epochs (stopped early, of 32)"
    twin = next(a for a in ax.figure.axes if a is not ax)
    assert [t.get_text() for t in twin.texts] == ["best 0.800 (epoch 4)"]


# --------------------------------------------------------------------------- plot_bench


def test_plot_bench_dialog_babi_bars_per_task_with_seed_spread():
    result = json.loads((RESULTS / "dialog-babi-memn2n.json").read_text())
    ax = plot_bench(RESULTS / "dialog-babi-memn2n.json", ax=_ax())
    rows = result["rows"]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["T1", "T2", "T3", "T4", "T5"] + [f"T{t}\nOOV" for t in range(1, 6)] + ["T6"]
    ours, paper = _bars(ax)
    assert len(ours) == len(paper) == len(rows) == 11
    assert [b.get_height() for b in ours] == [r["per_response"] for r in rows]
    assert [b.get_height() for b in paper] == [r["paper_per_response"] for r in rows]
    assert ours.errorbar is not None  # 5 seeds: the standard deviation as error bars
    segments = ours.errorbar.lines[2][0].get_segments()
    spread = [seg[1][1] - seg[0][1] for seg in segments]
    np.testing.assert_allclose(spread, [2 * r["per_response_std"] for r in rows])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["memn2n (ours, 5 seeds ± sd)", "memn2n (paper)"]
    assert ax.get_ylabel() == "per-response accuracy (%)"

    ax = plot_bench(result, metric="per_dialog", ax=_ax())
    assert [b.get_height() for b in _bars(ax)[1]] == [r["paper_per_dialog"] for r in rows]


def test_plot_bench_other_suites():
    # bAbI QA, two models, the joint one with the paper's mean only; then the mean over tasks
    ax = plot_bench([RESULTS / "babi-qa-ngram.json", RESULTS / "babi-qa-memn2n-joint.json"],
                    ax=_ax())  # fmt: skip
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [str(t) for t in range(1, 21)] + ["mean"]
    ngram_ours, ngram_paper, joint_ours, joint_paper = _bars(ax)
    assert [len(c) for c in _bars(ax)] == [21] * 4
    ngram = json.loads((RESULTS / "babi-qa-ngram.json").read_text())
    assert [b.get_height() for b in ngram_paper] == [r["paper"] for r in ngram["rows"]] + [34.0]
    assert ngram_ours[-1].get_height() == ngram["summary"]["mean_accuracy"]
    assert ngram_paper.errorbar is None and joint_ours.errorbar is not None
    assert np.isnan([b.get_height() for b in joint_paper][:20]).all()
    assert joint_paper[-1].get_height() == 87.6  # Sukhbaatar et al.'s joint mean
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "ngram (ours)", "ngram (paper)", "memn2n joint (ours, 3 seeds ± sd)",
        "memn2n joint (paper)",
    ]  # fmt: skip

    # Movie Dialog: the task files of one model are one series
    files = [RESULTS / f"movie-dialog-memn2n-task{t}.json" for t in (1, 2, 3)]
    suite, metric, labels, series = bench_series(files)
    assert labels == [
        "task 1\nhits@1", "task 2\nhits@100", "task 3\nhits@10", "task 3\nhits@10\nresp. 1",
        "task 3\nhits@10\nresp. 2", "task 3\nhits@10\nresp. 3",
    ]  # fmt: skip
    assert [s["kind"] for s in series] == ["ours", "paper"]
    assert np.isnan(series[1]["values"][3])  # no paper figure per response

    # Ubuntu: a bar per paper that gives the figure
    ax = plot_bench(RESULTS / "ubuntu-sample-tfidf.json", ax=_ax())
    assert [t.get_text() for t in ax.get_xticklabels()] == ["r1@2", "r1@10", "r2@10", "r5@10"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["tfidf (ours)", "tfidf (paper: lowe2015_v1)", "tfidf (paper: dodge2016_v2)"]
    heights = [[b.get_height() for b in c] for c in _bars(ax)]
    assert heights[1][:3] == [65.9, 41.0, 54.5] and heights[2][1] == 48.81

    with pytest.raises(ValueError, match="one suite"):
        bench_series([RESULTS / "ubuntu-sample-tfidf.json", RESULTS / "babi-qa-ngram.json"])
    with pytest.raises(ValueError, match="no 'hits'"):
        bench_series(RESULTS / "babi-qa-ngram.json", metric="hits")


# --------------------------------------------------------------------------- files, CLI, extra


def test_save_plot_writes_a_png_without_pyplot(tmp_path):
    before = plt.get_fignums()
    out = save_plot(tmp_path / "b.png", plot_bench, RESULTS / "babi-qa-ngram.json")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plt.get_fignums() == before
    assert plot_bench(RESULTS / "babi-qa-ngram.json").figure.number in plt.get_fignums()
    with pytest.raises(ValueError, match="suffix"):
        check_plot_file(tmp_path / "b.doc")
    with pytest.raises(ValueError, match="does not exist"):
        check_plot_file(tmp_path / "nowhere" / "b.png")


def test_bench_plot_option_writes_the_picture(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)
    out = tmp_path / "tfidf.png"
    argv = ["bench", "dialog-babi", "--model", "tfidf", "--tasks", "1", "--plot", str(out)]
    assert main([*argv, "--quiet"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path, capsys, memn2n):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    message = r'needs matplotlib: pip install "irdialog\[plot\]"'
    for draw in (
        lambda: plot_bench(RESULTS / "babi-qa-ngram.json"),
        lambda: plot_attention(memn2n, CONTEXT),
        lambda: plot_learning_curve(memn2n),
    ):
        with pytest.raises(ImportError, match=message):
            draw()
    # the command line refuses before any training: no result file is written
    out = tmp_path / "r.json"
    argv = ["bench", "dialog-babi", "--model", "tfidf", "--tasks", "1", "--output", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--plot", str(tmp_path / "r.png")])
    assert exit_info.value.code == 2
    assert 'argument --plot: irdialog.plot needs matplotlib: pip install "irdialog[plot]"' in (
        capsys.readouterr().err
    )
    assert not out.exists()
