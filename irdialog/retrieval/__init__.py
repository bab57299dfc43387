"""Classical information retrieval: one inverted index (:class:`InvertedIndex`) under TF-IDF
match, BM25 match and the hashing lookup of knowledge-base memories, and the BM25 index in
shards on Dask workers (:class:`ShardedIndex`); nearest neighbour, the n-gram classifier and
the rule-based bot."""

from ._bm25 import BM25Ranker
from ._index import InvertedIndex
from ._kb_memory import KBMemoryRetriever
from ._nearest_neighbor import NearestNeighborRanker
from ._ngram import NGramClassifier
from ._rule_based import RuleBasedRanker
from ._sharded import ShardedIndex
from ._tfidf import TfidfRanker

__all__ = [
    "BM25Ranker",
    "InvertedIndex",
    "KBMemoryRetriever",
    "NGramClassifier",
    "NearestNeighborRanker",
    "RuleBasedRanker",
    "ShardedIndex",
    "TfidfRanker",
]
