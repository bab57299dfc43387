"""The generated Ubuntu-format corpus and the co-occurrence probe run on it."""

import numpy as np
from conftest import import_benchmark

from irdialog.datasets import iter_ubuntu

make_ubuntu_corpus = import_benchmark("make_ubuntu_corpus")
ubuntu_cooccurrence_probe = import_benchmark("ubuntu_cooccurrence_probe")


def test_generated_corpus_has_v2_shape_and_a_learnable_topic_signal(tmp_path, capsys):
    argv = ["--out", str(tmp_path), "--train-rows", "2000", "--eval-rows", "200",
            "--words", "3000", "--topics", "5"]  # fmt: skip
    assert make_ubuntu_corpus.main(argv) == 0
    train = next(iter(iter_ubuntu("train", data_home=tmp_path, chunksize=5000)))
    assert len(train.X) == 2000 and train.labels.tolist()[:4] == [1, 0, 1, 0]
    valid = next(iter(iter_ubuntu("valid", data_home=tmp_path, chunksize=5000)))
    assert len(valid.X) == 200 and {len(c) for c in valid.candidate_lists} == {10}

    assert ubuntu_cooccurrence_probe.main(["--data-home", str(tmp_path)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("1000 true pairs; valid:")
    r1_of_10 = float(line.split("r1@10 ")[1].split(",")[0])
    # 5 topics of 200 true dialogs each: counting finds the topic. Chance is 10; knowing the
    # topic gives about 36, as about 1.8 of the 9 distractors share it.
    assert r1_of_10 > 25, line


def test_cooccurrence_probe_keeps_only_positive_pmi():
    vectorizer, ppmi = ubuntu_cooccurrence_probe.positive_pmi(
        ["a b", "a c", "d e"], ["x", "x", "y"]
    )
    index = vectorizer.vocabulary_
    assert ppmi[index["a"], index["x"]] > 0 and ppmi[index["d"], index["y"]] > 0
    assert ppmi[index["d"], index["x"]] == 0  # never together
    assert np.all(ppmi.data > 0)
