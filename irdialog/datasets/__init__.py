"""Loaders for the data sets of the reproduced papers, on a common ``(X, y, groups)`` shape.

Every dialog or QA loader returns a :class:`sklearn.utils.Bunch` whose ``X`` is a list of
:class:`irdialog.base.Context` (previous turns, oldest first, and the query) and ``y`` the
gold responses; dialog and story ids come as ``groups`` for GroupKFold. Files are looked up
in one data home: the ``data_home`` argument, else the ``IRDIALOG_DATA`` environment
variable, else the small real samples bundled with the package (dialog bAbI task 1 with
its candidates and KB, bAbI QA task 1 in English). See :func:`get_data_home`.
A project's own dialogs (JSON Lines, Ubuntu-layout CSV/TSV, dialog bAbI files from any
path, DataFrames) and the field's formats (multi-turn TSV, DSTC7, ParlAI, BEIR, MS MARCO,
pools by answer id) load with :func:`load_dialogs` into the same shape, and
:func:`write_dialogs` writes JSON Lines.

Malformed input raises :class:`DataFormatError` (a ``ValueError``) naming the file, the
line and what was expected; a missing file raises ``FileNotFoundError`` naming the data
set, task, split and the paths looked at.
"""

from ._babi_qa import load_babi_qa
from ._base import DataFormatError, get_data_home, list_datasets, record_data_files
from ._dialog_babi import load_dialog_babi
from ._dialogs import load_dialogs, write_dialogs
from ._movie_dialog import (
    load_movie_dialog,
    load_movie_entities,
    load_movie_kb,
    load_reddit_candidates,
)
from ._movielens import load_movielens_ratings
from ._ubuntu import iter_ubuntu, load_ubuntu

__all__ = [
    "DataFormatError",
    "get_data_home",
    "iter_ubuntu",
    "list_datasets",
    "load_babi_qa",
    "load_dialog_babi",
    "load_dialogs",
    "load_movie_dialog",
    "load_movie_entities",
    "load_movie_kb",
    "load_movielens_ratings",
    "load_reddit_candidates",
    "load_ubuntu",
    "record_data_files",
    "write_dialogs",
]
