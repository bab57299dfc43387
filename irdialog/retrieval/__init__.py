"""Classical information retrieval: TF-IDF match, nearest neighbour, n-gram classifier, the
rule-based bot, and the hashing lookup of knowledge-base memories."""

from ._kb_memory import KBMemoryRetriever
from ._nearest_neighbor import NearestNeighborRanker
from ._ngram import NGramClassifier
from ._rule_based import RuleBasedRanker
from ._tfidf import TfidfRanker

__all__ = [
    "KBMemoryRetriever",
    "NGramClassifier",
    "NearestNeighborRanker",
    "RuleBasedRanker",
    "TfidfRanker",
]
