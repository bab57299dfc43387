"""What the subcommands of the ``irdialog`` command share: the checks of their path
arguments (before any training), ``NAME=VALUE`` hyper-parameters, whether to show progress
bars, and the help format."""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path


def show_progress(args) -> bool:
    """Whether to draw progress bars: not with ``--quiet``, and only on a terminal."""
    return not args.quiet and sys.stderr.isatty()


def check_output(path, option: str = "--output") -> Path | None:
    """The ``--output`` (or ``--save``) path, checked before any training: its folder must
    exist and be writable, and the path must not be a folder.

    Examples
    --------
    >>> from irdialog._arguments import check_output
    >>> check_output(None) is None
    True
    >>> check_output("no-such-folder/out.json")
    Traceback (most recent call last):
    ...
    ValueError: --output no-such-folder/out.json: the directory no-such-folder does not exist
    """
    if path is None:
        return None
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"{option} {path} is a directory; give a file name")
    if not folder.is_dir():
        raise ValueError(f"{option} {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{option} {path}: not writable")
    return path


def check_data_home(data_home) -> None:
    """Raise a ValueError naming ``--data-home`` when it is given and not a directory."""
    if data_home is not None and not Path(data_home).is_dir():
        what = "is not a directory" if Path(data_home).exists() else "does not exist"
        raise ValueError(f"--data-home {data_home} {what}")


def assignment(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` as ``(name, value)``, the value a Python literal or a bare word.

    Examples
    --------
    >>> from irdialog._arguments import assignment
    >>> assignment("hops=3"), assignment("optimizer=adam")
    (('hops', 3), ('optimizer', 'adam'))
    """
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a bare word, e.g. optimizer=adam


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Defaults shown (where an option has one worth showing), text wrapped as usual."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.default == argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


def common_options() -> argparse.ArgumentParser:
    """The parent parser of the subcommands that read data: ``--data-home`` and
    ``--quiet``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-home",
        default=None,
        metavar="DIR",
        help="data directory (dialog-babi/, babi-qa/<lang>/, movie-dialog/, ubuntu/, "
        "movielens-small/; see the README); default: $IRDIALOG_DATA, then the bundled samples",
    )
    common.add_argument(
        "--quiet", action="store_true", help="no progress bars or tables; errors only"
    )
    return common
