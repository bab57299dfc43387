"""Kernels pass the arrays that travel together as records (namedtuples), not as long
argument lists: no numba kernel of irdialog takes more than MAX_ARGS positional arguments."""

import importlib
import inspect
import pkgutil

from numba.core.registry import CPUDispatcher

import irdialog

MAX_ARGS = 12


def _kernels():
    for info in pkgutil.walk_packages(irdialog.__path__, "irdialog."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", obj.py_func


def _positional(func):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in kinds for p in inspect.signature(func).parameters.values())


def test_the_kernels_are_found():
    names = {name for name, _ in _kernels()}
    assert "irdialog.embed._memn2n_kernels.forward_batch" in names
    assert "irdialog.embed._optim.adam" in names
    assert "irdialog.retrieval._kernels.maxscore_top_k" in names


def test_no_kernel_takes_more_than_twelve_positional_arguments():
    long = {name: n for name, f in _kernels() if (n := _positional(f)) > MAX_ARGS}
    assert not long, f"pass records (namedtuples of arrays) instead: {long}"
