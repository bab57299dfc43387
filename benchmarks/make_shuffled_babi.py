"""Write a shuffled-letters copy of a bAbI QA language folder, as bAbI v1.2's ``shuffled/``.

Every letter of every file is mapped through a fixed random permutation. As in the real
release, lowercase and uppercase letters go through two different permutations
(``--case independent``, the default), so "Jason" at the start of a sentence and "jason"
inside a question become unrelated words; ``--case consistent`` maps an uppercase letter
where its lowercase one goes, uppercased. Digits, punctuation, tabs, spaces and line
structure are unchanged, and so are the file names, so that
``load_babi_qa(task, split, lang="shuffled", data_home=OUT)`` reads the copy:

    python -m benchmarks.make_shuffled_babi --data-home DIR --output /tmp/babi-shuffled
    irdialog bench babi-qa --model memn2n --lang shuffled --data-home /tmp/babi-shuffled

reads ``<data-home>/babi-qa/en/qa*_*.txt[.gz]`` and writes
``<output>/babi-qa/shuffled/`` with the same names (gzip kept). The permutation is drawn
from ``--seed`` and printed.
"""

from __future__ import annotations

import argparse
import gzip
import string
from pathlib import Path

import numpy as np

from irdialog.datasets import get_data_home

CASES = ("independent", "consistent")


def letter_permutation(seed=0, case="independent") -> dict[str, str]:
    """A random bijection of the ASCII letters: lowercase and uppercase letters through two
    permutations (``"independent"``, as bAbI v1.2's shuffled release), or uppercase letters
    following their lowercase ones (``"consistent"``)."""
    if case not in CASES:
        raise ValueError(f"case must be one of {CASES}, got {case!r}")
    lower = string.ascii_lowercase
    rng = np.random.default_rng(seed)
    image = "".join(rng.permutation(list(lower)))
    upper = image.upper() if case == "consistent" else "".join(rng.permutation(list(lower.upper())))
    return dict(zip(lower + lower.upper(), image + upper))


def shuffle_letters(text: str, mapping: dict[str, str]) -> str:
    """``text`` with each letter replaced by its image under ``mapping``; anything else kept."""
    return text.translate(str.maketrans(mapping))


def _read(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
            return f.read()
    return path.read_bytes().decode("utf-8")  # newlines kept as they are


def _write(path: Path, text: str) -> None:
    if path.suffix == ".gz":
        # mtime=0: the same input gives byte-identical output
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text.encode("utf-8"))
    else:
        path.write_bytes(text.encode("utf-8"))


def rewrite_babi_folder(data_home, output, src_lang, lang, rewrite) -> list[Path]:
    """Write ``rewrite(text)`` of each ``<data_home>/babi-qa/<src_lang>/qa*`` file to
    ``<output>/babi-qa/<lang>/`` under the same name; returns the files written. A
    ``ValueError`` of ``rewrite`` is raised again with the file's name."""
    src = get_data_home(data_home) / "babi-qa" / src_lang
    files = sorted(p for p in src.glob("qa*_*.txt*") if p.suffix in (".txt", ".gz"))
    if not files:
        raise FileNotFoundError(f"no bAbI QA files qa*_*.txt[.gz] in {src}")
    dest = Path(output) / "babi-qa" / lang
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for path in files:
        try:
            text = rewrite(_read(path))
        except ValueError as e:
            raise ValueError(f"{path.name}: {e}") from None
        _write(dest / path.name, text)
        written.append(dest / path.name)
    return written


def make_shuffled(
    data_home, output, src_lang="en", lang="shuffled", seed=0, case="independent"
) -> list[Path]:
    """Copy ``<data_home>/babi-qa/<src_lang>/qa*`` to ``<output>/babi-qa/<lang>/`` with the
    letters shuffled; returns the files written."""
    mapping = letter_permutation(seed, case)
    return rewrite_babi_folder(
        data_home, output, src_lang, lang, lambda text: shuffle_letters(text, mapping)
    )


def copy_arguments(description: str, lang: str) -> argparse.ArgumentParser:
    """The options of a script that writes a bAbI QA copy in another language with
    :func:`rewrite_babi_folder`: ``--data-home``, ``--output``, ``--src-lang``, and
    ``--lang`` (default ``lang``)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data-home", help="source data home (default: $IRDIALOG_DATA, then bundled)")
    ap.add_argument("--output", required=True, help="data home to write babi-qa/<lang>/ into")
    ap.add_argument("--src-lang", default="en")
    ap.add_argument("--lang", default=lang)
    return ap


def main(argv=None):
    ap = copy_arguments(__doc__.splitlines()[0], "shuffled")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--case",
        choices=CASES,
        default="independent",
        help="independent: upper- and lowercase letters through different permutations, as "
        "the real release; consistent: an uppercase letter follows its lowercase one",
    )
    args = ap.parse_args(argv)
    written = make_shuffled(
        args.data_home, args.output, args.src_lang, args.lang, args.seed, args.case
    )
    mapping = letter_permutation(args.seed, args.case)
    print(f"{len(written)} files written to {written[0].parent}")
    lower = string.ascii_lowercase
    print(f"letters: {lower} -> {''.join(mapping[c] for c in lower)}")
    upper = lower.upper()
    print(f"letters: {upper} -> {''.join(mapping[c] for c in upper)}")


if __name__ == "__main__":
    main()
