"""Embedding models: supervised embeddings, end-to-end memory networks, recurrent
readers and dual encoders, the SVD recommender,
and the entity-symbol wrapper that ranks entities with them."""

from ._entity_symbol import EntitySymbolRanker
from ._memn2n import MemN2NRanker
from ._memnn import MemNNQA
from ._recurrent import DualEncoderRanker, RecurrentReader
from ._supervised_embedding import SupervisedEmbeddingRanker
from ._svd import SVDRecommender

__all__ = [
    "DualEncoderRanker",
    "EntitySymbolRanker",
    "MemN2NRanker",
    "MemNNQA",
    "RecurrentReader",
    "SVDRecommender",
    "SupervisedEmbeddingRanker",
]
