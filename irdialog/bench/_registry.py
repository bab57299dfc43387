"""The one registry of the harness: every suite, the function that runs one seed of it, and
its models. The command line, the report and the tests all read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._babi_qa import BABI_QA_MODELS, bench_babi_qa, train_babi_qa
from ._dialog_babi import DIALOG_BABI_MODELS, bench_dialog_babi, train_dialog_babi
from ._movie_dialog import MOVIE_DIALOG_MODELS, bench_movie_dialog
from ._ubuntu import UBUNTU_MODELS, bench_ubuntu


@dataclass(frozen=True)
class Suite:
    """A paper table: ``run(model=..., seed=..., data_home=..., **options)`` gives one seed's
    rows; ``models`` maps each model name to how the suite builds it; ``train(model, task,
    data_home=..., seed=...)``, where the suite has it, gives ``(fitted model, chosen)``: the
    model behind one task's row (``irdialog train``)."""

    run: Callable[..., dict]
    models: dict
    train: Callable[..., tuple] | None = None


SUITES: dict[str, Suite] = {
    "dialog-babi": Suite(bench_dialog_babi, DIALOG_BABI_MODELS, train_dialog_babi),
    "babi-qa": Suite(bench_babi_qa, BABI_QA_MODELS, train_babi_qa),
    "movie-dialog": Suite(bench_movie_dialog, MOVIE_DIALOG_MODELS),
    "ubuntu": Suite(bench_ubuntu, UBUNTU_MODELS),
}
