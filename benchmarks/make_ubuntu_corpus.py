"""Generate an Ubuntu Dialogue Corpus v2-format data set of the real corpus' size.

The only genuine Ubuntu data here is a 100-row sample, so the streaming path (loader, TF-IDF
fit, 1-in-10 evaluation) is shown on a synthetic corpus of the same shape: ``train.csv`` with
1M rows ``Context,Utterance,Label`` (half true responses, half random ones, like v2) and about
100M words, and ``valid.csv`` / ``test.csv`` with ``Context,Ground Truth Utterance,
Distractor_0..8``. Turns end with ``__eot__`` and utterances with ``__eou__``, as in v2.

The text is not language, but it has the statistics that matter to the code: a Zipf-shaped
vocabulary of a few hundred thousand word types (short frequent words, long rare ones), dialogs
of 2-10 turns, and a topic per dialog that the true response shares, so TF-IDF matching has a
signal to find (its recall here measures nothing about Ubuntu).

``--topics`` sets how many true dialogs share a topic (``train_rows / 2 / topics``: about 100
with the defaults). At about 100 a counting probe (``benchmarks.ubuntu_cooccurrence_probe``)
already finds the topics but the trained encoders, which start from random embeddings, do not;
at about 1,000 (``--train-rows 100000 --topics 50``) the LSTM dual encoder does after a few
epochs, and over the 1M rows with ``--topics 50`` (about 10,000) after one (BENCHMARKS.md,
"Recurrent models").

Run::

    python -m benchmarks.make_ubuntu_corpus --out /tmp/ubuntu-1m   # writes /tmp/ubuntu-1m/ubuntu/
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import numpy as np

CONSONANTS = "bcdfghjklmnprstvwz"
VOWELS = "aeiou"
SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]  # 90
PUNCTUATION = [".", ",", "?", "!", ":", "'s", "n't", "-", "/", "(", ")"]


def make_vocabulary(n_words: int) -> np.ndarray:
    """Distinct word strings, frequent (low index) words short: syllables of the index."""
    words = list(PUNCTUATION)
    base = len(SYLLABLES)
    i = 0
    while len(words) < n_words:
        n, parts = i, []
        while True:
            parts.append(SYLLABLES[n % base])
            n //= base
            if n == 0:
                break
        words.append("".join(parts))
        i += 1
    return np.asarray(words, dtype=object)


class Generator:
    """Draws dialogs: turns of utterances of words, each word from the dialog's topic with
    probability ``topic_share``, else from the Zipf-shaped background vocabulary."""

    def __init__(self, seed, n_words, n_topics, topic_size, topic_share, zipf_exponent):
        self.rng = np.random.default_rng(seed)
        self.words = make_vocabulary(n_words)
        p = 1.0 / np.arange(1, n_words + 1) ** zipf_exponent
        self.cdf = np.cumsum(p / p.sum())
        # Topic words: mid- and low-frequency words (not the top 1000).
        self.topics = self.rng.integers(1000, n_words, size=(n_topics, topic_size))
        self.topic_share = topic_share

    def _tokens(self, topics: np.ndarray, lengths: np.ndarray) -> list[str]:
        """One string of ``lengths[i]`` words from topic ``topics[i]`` per utterance."""
        total = int(lengths.sum())
        rng = self.rng
        ids = np.searchsorted(self.cdf, rng.random(total), side="right")
        ids = np.minimum(ids, len(self.words) - 1)
        owner = np.repeat(topics, lengths)
        from_topic = rng.random(total) < self.topic_share
        cols = rng.integers(0, self.topics.shape[1], size=total)
        ids[from_topic] = self.topics[owner[from_topic], cols[from_topic]]
        words = self.words[ids].tolist()
        out, start = [], 0
        for n in lengths.tolist():
            out.append(" ".join(words[start : start + n]))
            start += n
        return out

    def _utterance_lengths(self, n: int) -> np.ndarray:
        return 1 + self.rng.geometric(1 / 11.5, size=n)

    def contexts(self, topics: np.ndarray) -> list[str]:
        """``u __eou__ u __eou__ __eot__ ...`` contexts of 2-10 turns."""
        rng = self.rng
        n_turns = rng.integers(2, 9, size=len(topics))
        turn_owner = np.repeat(np.arange(len(topics)), n_turns)
        n_utts = 1 + rng.binomial(2, 0.2, size=len(turn_owner))
        utt_owner = np.repeat(turn_owner, n_utts)
        utts = self._tokens(topics[utt_owner], self._utterance_lengths(len(utt_owner)))
        out: list[list[str]] = [[] for _ in topics]
        k = 0
        for t, m in zip(turn_owner.tolist(), n_utts.tolist()):
            out[t].append(" __eou__ ".join(utts[k : k + m]) + " __eou__ __eot__")
            k += m
        return [" ".join(turns) for turns in out]

    def responses(self, topics: np.ndarray) -> list[str]:
        """One- or two-utterance responses, ``u __eou__ [u __eou__]``."""
        n_utts = 1 + self.rng.binomial(1, 0.3, size=len(topics))
        owner = np.repeat(np.arange(len(topics)), n_utts)
        utts = self._tokens(topics[owner], self._utterance_lengths(len(owner)))
        out: list[list[str]] = [[] for _ in topics]
        for i, u in zip(owner.tolist(), utts):
            out[i].append(u + " __eou__")
        return [" ".join(r) for r in out]


def write_split(path: Path, gen: Generator, n_rows: int, train: bool, block: int) -> int:
    """Write one CSV file; returns the number of words (``__eou__``/``__eot__`` excluded)."""
    n_topics = len(gen.topics)
    words = 0
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f, lineterminator="\n")  # quotes the fields holding commas
        if train:
            out.writerow(["Context", "Utterance", "Label"])
        else:
            out.writerow(
                ["Context", "Ground Truth Utterance", *(f"Distractor_{i}" for i in range(9))]
            )
        for start in range(0, n_rows, block):
            n = min(block, n_rows - start)
            topics = gen.rng.integers(0, n_topics, size=n)
            contexts = gen.contexts(topics)
            if train:
                label = (np.arange(start, start + n) % 2 == 0).astype(int)  # v2: 1, 0, 1, 0
                other = gen.rng.integers(0, n_topics, size=n)
                resp = gen.responses(np.where(label == 1, topics, other))
                rows = list(zip(contexts, resp, label.tolist()))
            else:
                cols = [gen.responses(topics)]
                cols += [gen.responses(gen.rng.integers(0, n_topics, size=n)) for _ in range(9)]
                rows = [(c, *rs) for c, rs in zip(contexts, zip(*cols))]
            for row in rows:
                text = " ".join(row[:2] if train else row)  # not the Label of a train row
                words += len(text.split()) - text.count("__eou__") - text.count("__eot__")
            out.writerows(rows)
    return words


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="data home to write (default: a temp dir)")
    parser.add_argument("--train-rows", type=int, default=1_000_000)
    parser.add_argument("--eval-rows", type=int, default=19_560, help="rows of valid and test")
    parser.add_argument("--words", type=int, default=400_000, help="vocabulary size")
    parser.add_argument("--topics", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block", type=int, default=10_000)
    args = parser.parse_args(argv)
    home = Path(args.out or tempfile.mkdtemp(prefix="ubuntu-synthetic-"))
    (home / "ubuntu").mkdir(parents=True, exist_ok=True)
    gen = Generator(
        args.seed, args.words, args.topics, topic_size=200, topic_share=0.3, zipf_exponent=1.05
    )
    start = time.perf_counter()
    for split, rows in (
        ("train", args.train_rows),
        ("valid", args.eval_rows),
        ("test", args.eval_rows),
    ):
        path = home / "ubuntu" / f"{split}.csv"
        n_words = write_split(path, gen, rows, split == "train", args.block)
        print(
            f"{path}: {rows} rows, {path.stat().st_size / 2**20:.0f} MiB, "
            f"{n_words / 1e6:.1f}M words",
            flush=True,
        )
    print(f"data home: {home}  ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
