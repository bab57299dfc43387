"""Ubuntu next-utterance ranking: the streaming loader, TF-IDF fitted chunk by chunk, R@k."""

import pickle

import numpy as np
import pytest

from irdialog import TfidfRanker
from irdialog.datasets import iter_ubuntu, load_ubuntu
from irdialog.metrics import recall_at_k

TRAIN = (
    "Context,Utterance,Label\n"
    "how do i mount a usb disk __eou__ __eot__ which ubuntu __eou__ __eot__ 22.04 __eou__ __eot__,"
    "sudo mount /dev/sdb1 /mnt __eou__,1\n"
    "my wifi is down __eou__ __eot__,reinstall grub __eou__,0\n"
    '"grub, after the update, fails __eou__ __eot__",reinstall grub from a live usb __eou__,1\n'
    "no sound __eou__ __eot__ pulseaudio __eou__ __eot__,restart pulseaudio __eou__,1\n"
    "how to mount an iso __eou__ __eot__,use mount -o loop __eou__,1\n"
)
TEST = (
    "Context,Ground Truth Utterance,Distractor_0,Distractor_1,Distractor_2\n"
    "my usb disk won't mount __eou__ __eot__,mount it with sudo mount __eou__,"
    "restart pulseaudio __eou__,hello __eou__,grub __eou__\n"
    "grub fails after update __eou__ __eot__,reinstall grub __eou__,"
    "use mount __eou__,thanks __eou__,pulseaudio __eou__\n"
)


@pytest.fixture
def ubuntu_home(tmp_path):
    (tmp_path / "ubuntu").mkdir()
    (tmp_path / "ubuntu" / "train.csv").write_text(TRAIN)
    (tmp_path / "ubuntu" / "test.csv").write_text(TEST)
    return tmp_path


def test_fit_chunks_equals_partial_fit_equals_fit(ubuntu_home):
    chunks = list(iter_ubuntu("train", data_home=ubuntu_home, chunksize=2))
    assert [len(c.X) for c in chunks] == [2, 2, 1]
    streamed = TfidfRanker().fit_chunks(iter_ubuntu("train", data_home=ubuntu_home, chunksize=2))
    partial = TfidfRanker()
    for c in chunks:
        partial.partial_fit(c.X, c.y)
    data = load_ubuntu("train", data_home=ubuntu_home)
    full = TfidfRanker().fit(data.X, data.y)  # the responses here are all distinct
    assert streamed.n_documents_ == partial.n_documents_ == 10
    for model in (streamed, partial):
        vocab = model.vectorizer_.vocabulary_
        assert vocab.keys() == full.vectorizer_.vocabulary_.keys()
        idf = {t: model.vectorizer_.idf_[i] for t, i in vocab.items()}
        ref = {t: full.vectorizer_.idf_[i] for t, i in full.vectorizer_.vocabulary_.items()}
        assert idf == pytest.approx(ref)
        test = load_ubuntu("test", data_home=ubuntu_home)
        np.testing.assert_allclose(
            model.rank_candidates(test.X, test.candidate_lists),
            full.rank_candidates(test.X, test.candidate_lists),
        )
        assert len(model.candidates_) == 0  # no candidate set is collected


def test_streamed_tfidf_ranks_the_true_response_first(ubuntu_home):
    model = TfidfRanker().fit_chunks(iter_ubuntu("train", data_home=ubuntu_home, chunksize=2))
    test = load_ubuntu("test", data_home=ubuntu_home)
    scores = model.rank_candidates(test.X, test.candidate_lists)
    assert scores.shape == (2, 4)
    assert recall_at_k(scores, 1, 4) == 1.0
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.rank_candidates(test.X, test.candidate_lists), scores)


def test_fit_chunks_reads_chunks_lazily(ubuntu_home):
    seen = []

    def chunks():
        for c in iter_ubuntu("train", data_home=ubuntu_home, chunksize=1):
            seen.append(len(c.X))
            yield (c.X, c.y)  # (X, y) pairs are accepted too

    model = TfidfRanker().fit_chunks(chunks())
    assert seen == [1] * 5 and model.n_documents_ == 10


def test_partial_fit_after_fit_starts_afresh_and_keeps_fixed_candidates():
    model = TfidfRanker(candidates=["reinstall grub", "restart pulseaudio"])
    model.fit(["a b c"] * 3, ["reinstall grub"] * 3)
    model.partial_fit(["grub fails"], None)
    assert model.n_documents_ == 1
    model.partial_fit(["no sound"], ["restart pulseaudio"])
    assert model.n_documents_ == 3
    assert model.predict(["grub fails again"])[0] == "reinstall grub"


def test_partial_fit_rejects_empty_vocabulary():
    with pytest.raises(ValueError, match="No token"):
        TfidfRanker().partial_fit(["", "   "])


@pytest.mark.slow
def test_ubuntu_sample_loader_and_tfidf_recall(data_home):
    train = load_ubuntu("train", data_home=data_home)
    assert len(train.X) == 100 and set(train.labels) == {0, 1}
    for split in ("valid", "test"):
        data = load_ubuntu(split, data_home=data_home)
        assert len(data.X) == 100
        assert all(len(c) == 10 and c[0] == g for c, g in zip(data.candidate_lists, data.y))
    model = TfidfRanker().fit_chunks(iter_ubuntu("train", data_home=data_home, chunksize=30))
    assert model.n_documents_ == 200
    test = load_ubuntu("test", data_home=data_home)
    scores = model.rank_candidates(test.X, test.candidate_lists)
    r = [recall_at_k(scores, k, n) for k, n in [(1, 2), (1, 10), (2, 10), (5, 10)]]
    assert r[1] <= r[2] <= r[3] and r[1] <= r[0]
    assert r[1] > 0.2  # chance is 0.1; TF-IDF found 42% on this sample


@pytest.mark.parametrize("model", ["tfidf", "bm25", "se", "memn2n"])
def test_bench_ubuntu_runs_every_model_through_rank_candidates(ubuntu_home, model):
    from irdialog.bench import bench_ubuntu

    result = bench_ubuntu(model, data_home=ubuntu_home, progress=False, chunksize=2)
    assert result["model"] == model
    values = {r["metric"]: r["value"] for r in result["rows"]}
    assert set(values) == {"r1@2"}  # the fixture's test rows have 4 candidates
    assert 0.0 <= values["r1@2"] <= 100.0
    assert result["resources"]["train_rows"] == 5
    streamed = "fit_chunks" in result["protocol"]
    assert streamed == (model != "memn2n")
    # the files as the data home lays them out, not this machine's path to it
    assert (
        "of ubuntu/train.csv (" in result["protocol"]
        and "from ubuntu/test.csv" in result["protocol"]
    )
    assert str(ubuntu_home) not in result["protocol"]


def test_bench_ubuntu_names_a_training_file_without_positive_rows(ubuntu_home):
    from irdialog.bench import bench_ubuntu

    train = ubuntu_home / "ubuntu" / "train.csv"
    train.write_text(TRAIN.replace(",1\n", ",0\n"))
    with pytest.raises(ValueError, match=f"{train}: no row labelled 1"):
        bench_ubuntu("se", data_home=ubuntu_home, progress=False)


def test_bench_ubuntu_skips_a_chunk_of_negatives_only(ubuntu_home):
    from irdialog.bench import bench_ubuntu

    # chunksize=1: the second training row (label 0) is a chunk with nothing to learn from
    result = bench_ubuntu("se", data_home=ubuntu_home, progress=False, chunksize=1)
    assert result["resources"]["train_rows"] == 5


def test_bench_ubuntu_overrides_replace_the_preset(ubuntu_home):
    from irdialog.bench import bench_ubuntu

    result = bench_ubuntu(
        "lstm-dual", data_home=ubuntu_home, progress=False, overrides={"epochs": 1}
    )
    assert result["chosen"][0]["params"]["epochs"] == 1
    assert result["options"]["overrides"] == {"epochs": 1}
    resources = result["resources"]
    assert 0 <= resources["read_seconds"] <= resources["fit_seconds"]
    with pytest.raises(ValueError, match="DualEncoderRanker has no hyper-parameter epoch;"):
        bench_ubuntu("lstm-dual", data_home=ubuntu_home, progress=False, overrides={"epoch": 1})
