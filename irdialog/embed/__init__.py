"""Embedding models: supervised embeddings, end-to-end memory networks, the strongly
supervised memory network, recurrent readers and dual encoders, query-reduction networks and
the subgraph embeddings of KB question answering; and the reader of the pretrained word
vectors they can start from."""

from ._memn2n import MemN2NRanker
from ._memnn import MemNNQA
from ._qrn import QRNRanker
from ._recurrent import DualEncoderRanker, RecurrentReader
from ._subgraph import SubgraphEmbeddingRanker
from ._supervised_embedding import SupervisedEmbeddingRanker
from ._word_vectors import load_word_vectors

__all__ = [
    "DualEncoderRanker",
    "MemN2NRanker",
    "MemNNQA",
    "RecurrentReader",
    "QRNRanker",
    "SubgraphEmbeddingRanker",
    "SupervisedEmbeddingRanker",
    "load_word_vectors",
]
