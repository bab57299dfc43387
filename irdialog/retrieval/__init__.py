"""Classical information-retrieval rankers: TF-IDF match and nearest neighbour."""

from ._nearest_neighbor import NearestNeighborRanker
from ._tfidf import TfidfRanker

__all__ = ["NearestNeighborRanker", "TfidfRanker"]
