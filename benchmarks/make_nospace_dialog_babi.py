"""Write a copy of dialog bAbI task 1 written without spaces, as Chinese or Thai are written.

Every utterance of task 1's trn, dev, tst and tst-OOV files and of the candidate file loses its
spaces ("can you book a table" -> "canyoubookatable"); the format markers stay as they are
(the line number and the space after it, the tab between the user and the bot utterance,
blank lines between dialogs), so ``load_dialog_babi(1, split, data_home=OUT)`` reads the
copy, and the knowledge base is copied unchanged. A model that splits words at spaces sees
each utterance as one word; one given ``tokenizer="char"`` (or ``list``) reads characters,
as it would read a script without spaces:

    python -m benchmarks.make_nospace_dialog_babi --data-home DIR --output /tmp/dialog-babi-nospace
    python -m irdialog bench dialog-babi --model tfidf --tasks 1 \\
        --data-home /tmp/dialog-babi-nospace --set tokenizer=char

reads ``<data-home>/dialog-babi/`` and writes ``<output>/dialog-babi/`` with the same names.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from irdialog.datasets import get_data_home

SPLITS = ("trn", "dev", "tst", "tst-OOV")
TASK1 = [f"dialog-babi-task1-API-calls-{split}.txt" for split in SPLITS]
CANDIDATES = "dialog-babi-candidates.txt"
KB = "dialog-babi-kb-all.txt"


def without_spaces(line: str) -> str:
    """One line of a dialog bAbI file with the spaces of its utterances removed: the ``ID``
    and the space after it, the tab and the line end are kept.

    Examples
    --------
    >>> without_spaces("3 i love italian food\\twhere should it be\\n")
    '3 iloveitalianfood\\twhereshoulditbe\\n'
    >>> without_spaces("\\n")
    '\\n'
    """
    body = line.rstrip("\r\n")
    end = line[len(body) :]
    if not body:
        return line
    number, sep, text = body.partition(" ")
    fields = [field.replace(" ", "") for field in text.split("\t")]
    return number + sep + "\t".join(fields) + end


def write_copy(data_home, output) -> list[Path]:
    """Write the copy; returns the files written."""
    src = get_data_home(data_home) / "dialog-babi"
    dest = Path(output) / "dialog-babi"
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name in [*TASK1, CANDIDATES]:
        with open(src / name, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        with open(dest / name, "w", encoding="utf-8", newline="") as f:
            f.writelines(map(without_spaces, lines))
        written.append(dest / name)
    shutil.copyfile(src / KB, dest / KB)
    written.append(dest / KB)
    return written


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None, help="holds dialog-babi/")
    parser.add_argument("--output", required=True, help="the copy goes to OUTPUT/dialog-babi/")
    args = parser.parse_args(argv)
    for path in write_copy(args.data_home, args.output):
        print(path)


if __name__ == "__main__":
    main()
