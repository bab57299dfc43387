"""Embedding models: supervised embeddings, end-to-end memory networks, the strongly
supervised memory network, recurrent readers and dual encoders, query-reduction networks and
the subgraph embeddings of KB question answering."""

from ._memn2n import MemN2NRanker
from ._memnn import MemNNQA
from ._qrn import QRNRanker
from ._recurrent import DualEncoderRanker, RecurrentReader
from ._subgraph import SubgraphEmbeddingRanker
from ._supervised_embedding import SupervisedEmbeddingRanker

__all__ = [
    "DualEncoderRanker",
    "MemN2NRanker",
    "MemNNQA",
    "RecurrentReader",
    "QRNRanker",
    "SubgraphEmbeddingRanker",
    "SupervisedEmbeddingRanker",
]
