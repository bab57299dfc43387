"""irdialog: classical, CPU-only response ranking for dialog and question answering."""

from .base import Context, Turn
from .features import MatchTypeFeaturizer
from .retrieval import NearestNeighborRanker, TfidfRanker

__version__ = "0.1.0"

__all__ = [
    "Context",
    "MatchTypeFeaturizer",
    "NearestNeighborRanker",
    "TfidfRanker",
    "Turn",
    "__version__",
]
