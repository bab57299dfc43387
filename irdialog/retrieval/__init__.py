"""Classical information-retrieval rankers: TF-IDF match, nearest neighbour, n-gram classifier."""

from ._nearest_neighbor import NearestNeighborRanker
from ._ngram import NGramClassifier
from ._tfidf import TfidfRanker

__all__ = ["NGramClassifier", "NearestNeighborRanker", "TfidfRanker"]
