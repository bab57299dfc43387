"""The private scikit-learn helpers irdialog uses, imported in one place.

A scikit-learn upgrade that moves them breaks this file only.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["Interval", "StrOptions", "_fit_context"]


def pretty_print_like_estimators(repr_method) -> None:
    """Let scikit-learn's pretty printer lay out objects whose ``__repr__`` is
    ``repr_method`` over several lines, as it does for ``BaseEstimator.__repr__``
    (its dispatch table is keyed by the repr function)."""
    from sklearn.utils._pprint import _EstimatorPrettyPrinter

    _EstimatorPrettyPrinter._dispatch[repr_method] = _EstimatorPrettyPrinter._pprint_estimator
