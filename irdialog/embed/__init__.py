"""Embedding models: supervised embeddings, end-to-end memory networks, the SVD recommender."""

from ._memn2n import MemN2NRanker
from ._supervised_embedding import SupervisedEmbeddingRanker
from ._svd import SVDRecommender

__all__ = ["MemN2NRanker", "SVDRecommender", "SupervisedEmbeddingRanker"]
