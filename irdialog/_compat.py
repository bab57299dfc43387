"""The private scikit-learn helpers irdialog uses, imported in one place.

A scikit-learn upgrade that moves them breaks this file only, with an ImportError that
names the scikit-learn versions irdialog is known to work with.
"""

import sklearn

# The lowest scikit-learn irdialog supports (pyproject.toml's bound): estimator tags
# (``__sklearn_tags__``), ``_fit_context`` and the parameter constraints as used here.
MIN_SKLEARN = "1.6"


def _private_import_error(name: str, err: Exception) -> ImportError:
    return ImportError(
        f"irdialog needs scikit-learn >= {MIN_SKLEARN} (found {sklearn.__version__}): "
        f"{name} could not be imported ({err}). Install a supported version, for example "
        f"pip install 'scikit-learn>={MIN_SKLEARN}'; if this is a newer scikit-learn that "
        "moved the helper, please report it."
    )


try:
    from sklearn.base import _fit_context
except ImportError as err:  # pragma: no cover - depends on the installed scikit-learn
    raise _private_import_error("sklearn.base._fit_context", err) from err
try:
    from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
except ImportError as err:  # pragma: no cover
    raise _private_import_error("sklearn.utils._param_validation", err) from err

try:
    from sklearn.utils.metaestimators import _BaseComposition
except ImportError as err:  # pragma: no cover
    raise _private_import_error("sklearn.utils.metaestimators._BaseComposition", err) from err

__all__ = [
    "MIN_SKLEARN",
    "HasMethods",
    "Interval",
    "StrOptions",
    "_BaseComposition",
    "_fit_context",
]


def pretty_print_like_estimators(repr_method) -> None:
    """Let scikit-learn's pretty printer lay out objects whose ``__repr__`` is
    ``repr_method`` over several lines, as it does for ``BaseEstimator.__repr__``
    (its dispatch table is keyed by the repr function). Without that private printer
    (another scikit-learn), such objects keep their one-line repr."""
    try:
        from sklearn.utils._pprint import _EstimatorPrettyPrinter

        _EstimatorPrettyPrinter._dispatch[repr_method] = _EstimatorPrettyPrinter._pprint_estimator
    except (ImportError, AttributeError):  # pragma: no cover - a cosmetic fallback
        pass
