"""Classical information retrieval: TF-IDF match, nearest neighbour, n-gram classifier, and the
hashing lookup of knowledge-base memories."""

from ._kb_memory import KBMemoryRetriever
from ._nearest_neighbor import NearestNeighborRanker
from ._ngram import NGramClassifier
from ._tfidf import TfidfRanker

__all__ = ["KBMemoryRetriever", "NGramClassifier", "NearestNeighborRanker", "TfidfRanker"]
