"""The gallery of irdialog.plot: docs/gallery/*.png and docs/gallery.md, in one command.

Fits a MemN2N on dialog bAbI (task 2 when its files are found, else the bundled task 1) for
the attention and learning-curve pictures, a strongly supervised MemNN on bAbI QA (task 2,
else the bundled task 1) for its supporting facts, and draws the committed results of
``benchmarks/results`` against the papers. A few epochs: pictures, not results (those are
in BENCHMARKS.md). Needs ``pip install "irdialog[plot]"``.

Usage, from the repository root::

    python -m benchmarks.gallery --data-home DIR
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from irdialog import MemN2NRanker, MemNNQA, __version__
from irdialog.bench import provenance
from irdialog.datasets import load_babi_qa, load_dialog_babi
from irdialog.plot import (
    check_plot_file,
    plot_attention,
    plot_bench,
    plot_learning_curve,
    save_plot,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

# (file, results, caption) of the bench pictures: committed results of one suite each.
BENCH = [
    (
        "bench-dialog-babi.png",
        ["dialog-babi-memn2n", "dialog-babi-memn2n-type"],
        "dialog bAbI (Table 2 of Bordes et al. 2017): per-response accuracy of MemN2N without "
        "and with match-type features, 5 seeds (error bars: standard deviation), against the "
        "paper's; T1-T5 test, then the OOV test sets, then T6 (DSTC2).",
    ),
    (
        "bench-babi-qa.png",
        ["babi-qa-memn2n", "babi-qa-memnn-am-ng-nl"],
        "bAbI QA (Weston et al. 2016, Table 3): accuracy per task and mean over the tasks of "
        "the weakly supervised MemN2N (5 seeds) and the strongly supervised MemNN with "
        "AM+NG+NL (3 seeds), against the paper's MemNN AM+NG+NL column and, for MemN2N, the "
        "mean of Sukhbaatar et al. (2015; the result file holds no per-task figure).",
    ),
    (
        "bench-movie-dialog.png",
        [f"movie-dialog-{m}-task{t}" for m in ("memn2n", "se") for t in (1, 2, 3)]
        + ["movie-dialog-svd-task2"],
        "Movie Dialog (Dodge et al. 2016, Table 6): hits@k of MemN2N, supervised embeddings "
        "and SVD per task (task 3 also per response of the dialog), trained on the dev files "
        "(BENCHMARKS.md says why), against the paper's.",
    ),
    (
        "bench-ubuntu.png",
        ["ubuntu-sample-tfidf", "ubuntu-sample-se", "ubuntu-sample-memn2n"],
        "Ubuntu next-utterance ranking on the 100-row sample (test split): R@k of TF-IDF, "
        "supervised embeddings and MemN2N against Lowe et al. (2015) and Dodge et al. (2016) "
        "on the full corpus: a smoke test of the pipeline, not a comparison.",
    ),
]


def _load_with_fallback(load, task, fallback, data_home):
    """``load(task)``, or ``load(fallback)`` from the bundled data when the files of
    ``task`` are missing; returns (task, data)."""
    try:
        return task, load(task, data_home)
    except FileNotFoundError as exc:
        print(f"{exc}\n-> task {fallback} of the bundled data instead", file=sys.stderr)
        return fallback, load(fallback, None)


def _attention_example(model, test):
    """The first test turn whose answer is an API call after an earlier one (the update of
    task 2; else any API call) that the model gets right (else the first such turn), as the
    paper's tables show right answers."""
    calls = [i for i, y in enumerate(test.y) if y.startswith("api_call")]
    updates = [i for i in calls if any(t.text.startswith("api_call") for t in test.X[i].history)]
    chosen = (updates or calls)[:200]
    right = model.predict([test.X[i] for i in chosen]) == [test.y[i] for i in chosen]
    return chosen[int(right.argmax())] if right.any() else chosen[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    ap.add_argument("--out", default=str(ROOT / "docs"), help="writes gallery/*.png, gallery.md")
    ap.add_argument("--epochs", type=int, default=20, help="MemN2N epochs (default: 20)")
    ap.add_argument("--dpi", type=int, default=100)
    args = ap.parse_args(argv)
    out = Path(args.out)
    images = out / "gallery"
    images.mkdir(parents=True, exist_ok=True)
    check_plot_file(images / "x.png")  # matplotlib is there, before any training
    command = shlex.join(["python", "-m", "benchmarks.gallery", *(argv or sys.argv[1:])])
    sections = []

    def save(name, plot, *plot_args, **kwargs):
        save_plot(images / name, plot, *plot_args, dpi=args.dpi, **kwargs)
        print(f"wrote {images / name}")
        return f"gallery/{name}"

    # MemN2N on dialog bAbI: attention and learning curve
    task, train = _load_with_fallback(
        lambda t, home: load_dialog_babi(t, "trn", data_home=home), 2, 1, args.data_home
    )
    home = args.data_home if task == 2 else None
    test = load_dialog_babi(task, "tst", data_home=home)
    model = MemN2NRanker(
        candidates=train.candidates, hops=3, embedding_dim=32, position_encoding=False,
        epochs=args.epochs, early_stopping=True, n_iter_no_change=5, random_state=0,
    ).fit(train.X, train.y, groups=train.groups)  # fmt: skip
    i = _attention_example(model, test)
    accuracy = model.score(test.X, test.y)
    fit = (
        f"`MemN2NRanker(hops=3, embedding_dim=32, position_encoding=False, "
        f"epochs={args.epochs}, early_stopping=True, n_iter_no_change=5, random_state=0)` "
        f"fitted on dialog bAbI task {task} (training dialogs, 10% held out for early "
        f"stopping); test per-response accuracy {100 * accuracy:.1f}%"
    )
    sections.append(
        (
            save("attention.png", plot_attention, model, test.X[i], y=test.y[i]),
            "`plot_attention(model, context, y=answer)`: the attention of each hop on each "
            f"turn of a test dialog of task {task}, read like the tables of Bordes et al. "
            f"(2017, appendix B): the first {'update of an ' if task == 2 else ''}API call "
            "that the model gets right. "
            f"{fit}. The first row is the share of the empty memory slots (the memory has a "
            "slot per turn of the longest training dialog).",
        )
    )
    sections.append(
        (
            save("learning-curve.png", plot_learning_curve, model),
            "`plot_learning_curve(model)`: `loss_curve_`, `train_accuracy_curve_` and "
            "`validation_scores_` of the same fit, with the best validation epoch marked.",
        )
    )

    # MemNN on bAbI QA: supporting facts as hard attention
    qa_task, qa_train = _load_with_fallback(
        lambda t, home: load_babi_qa(t, "train", data_home=home), 2, 1, args.data_home
    )
    qa_home = args.data_home if qa_task == 2 else None
    qa_test = load_babi_qa(qa_task, "test", data_home=qa_home)
    memnn = MemNNQA(hops=2, epochs=10, random_state=0)
    memnn.fit(qa_train.X, qa_train.y, qa_train.supporting)
    j = next(k for k, ctx in enumerate(qa_test.X) if len(ctx.history) >= 6)
    sections.append(
        (
            save("attention-memnn.png", plot_attention, memnn, qa_test.X[j], y=qa_test.y[j]),
            "`plot_attention` of a `MemNNQA(hops=2, epochs=10, random_state=0)` fitted with "
            f"the supporting facts of bAbI QA task {qa_task}: its attention is hard, 1 on "
            f"the fact each hop finds (test accuracy "
            f"{100 * memnn.score(qa_test.X, qa_test.y):.1f}%).",
        )
    )

    # Committed bench results against the papers
    for name, results, caption in BENCH:
        files = [RESULTS / f"{r}.json" for r in results]
        listed = ", ".join(f"`{r}.json`" for r in results)
        sections.append(
            (
                save(name, plot_bench, files),
                f"`plot_bench([...])` of {listed}: {caption}",
            )
        )

    record = provenance(command=command.split(), seeds=[0], files=[])
    git = record.get("git") or {}
    commit = (git.get("commit") or "no checkout")[:10] + (" (dirty)" if git.get("dirty") else "")
    lines = [
        "# Gallery",
        "",
        'The pictures of `irdialog.plot` (`pip install "irdialog[plot]"`), written by',
        "",
        "```bash",
        command,
        "```",
        "",
        f"(irdialog {__version__} at {commit}, matplotlib "
        f"{__import__('matplotlib').__version__}, {record['date'][:10]}). The models are "
        "fitted for a few epochs: pictures, not results; the results are in "
        "[BENCHMARKS.md](../BENCHMARKS.md). `irdialog bench <suite> ... --plot FILE.png` draws "
        "the result it has just produced as in the last pictures.",
        "",
    ]
    for path, caption in sections:
        lines += [f"![{Path(path).stem}]({path})", "", caption, ""]
    (out / "gallery.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out / 'gallery.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
