"""The speed runs, searches, evidence and data generators behind BENCHMARKS.md.

Run from the repository root as ``python -m benchmarks.<module> --help``. The paper suites
themselves are ``irdialog bench`` (the harness ``irdialog.bench``), which these modules
import; each takes ``--data-home`` (default: ``$IRDIALOG_DATA``, then the bundled samples).

- ``speed``, ``speed_memn2n``: kernel speed next to numpy's float32 matmul, same process;
- ``search_supervised_embedding``: the dev search that wrote the supervised-embedding
  presets (``irdialog/data/presets/dialog-babi-se*.json``);
- ``movie_dialog_learning_curve``, ``movie_dialog_coverage``, ``tfidf_type_task4_dev``:
  evidence for the shortfalls reported in BENCHMARKS.md;
- ``make_shuffled_babi``, ``make_ubuntu_corpus``: data sets the suites run on.
- ``gallery``: the pictures of ``irdialog.plot`` in ``docs/gallery/`` and ``docs/gallery.md``.
- ``retrieval_speed``, ``pool_speed``, ``movie_memn2n_epoch``, ``compile_time``: the scale
  benchmarks, written to ``benchmarks/results/speed/`` by :func:`finish_speed_result`.
"""

from __future__ import annotations

import json
import sys


def finish_speed_result(name, fields, *, argv, files=(), seeds=(), data_home=None, output=None):
    """The JSON of a speed benchmark: ``{"benchmark": name, **fields, "provenance"}``,
    printed as its BENCHMARKS.md table and written to ``output`` (when given)."""
    from irdialog.bench import provenance
    from irdialog.bench._speed_tables import SPEED_TABLES

    module = name.replace("-", "_")
    result = {
        "benchmark": name,
        **fields,
        "provenance": provenance(
            command=["python", "-m", f"benchmarks.{module}", *(argv or sys.argv[1:])],
            seeds=seeds,
            files=files,
            data_home=data_home,
        ),
    }
    print("\n".join(SPEED_TABLES[name](result)))
    if output:
        with open(output, "w") as fh:
            json.dump(result, fh, indent=1)
    return result
