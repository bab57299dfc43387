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
"""
