"""The private scikit-learn helpers irdialog uses, imported in one place.

A scikit-learn upgrade that moves them breaks this file only.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["Interval", "StrOptions", "_fit_context"]
