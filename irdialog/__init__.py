"""irdialog: classical, CPU-only response ranking for dialog and question answering."""

from .base import Context, Turn
from .embed import (
    DualEncoderRanker,
    MemN2NRanker,
    MemNNQA,
    QRNRanker,
    RecurrentReader,
    SubgraphEmbeddingRanker,
    SupervisedEmbeddingRanker,
)
from .ensemble import FusionRanker, LearningToRankRanker, SeedEnsembleRanker
from .entities import EntityParser, EntitySymbolRanker, SVDRecommender
from .features import MatchTypeFeaturizer
from .pipeline import RankingPipeline, make_ranking_pipeline
from .retrieval import (
    BM25Ranker,
    KBMemoryRetriever,
    NearestNeighborRanker,
    NGramClassifier,
    RuleBasedRanker,
    TfidfRanker,
)
from .svm import StructuredSVMQA

__version__ = "0.1.0"

__all__ = [
    "BM25Ranker",
    "Context",
    "DualEncoderRanker",
    "EntityParser",
    "EntitySymbolRanker",
    "FusionRanker",
    "KBMemoryRetriever",
    "LearningToRankRanker",
    "MatchTypeFeaturizer",
    "MemN2NRanker",
    "MemNNQA",
    "NGramClassifier",
    "NearestNeighborRanker",
    "RankingPipeline",
    "RecurrentReader",
    "RuleBasedRanker",
    "SVDRecommender",
    "SeedEnsembleRanker",
    "StructuredSVMQA",
    "SubgraphEmbeddingRanker",
    "SupervisedEmbeddingRanker",
    "TfidfRanker",
    "Turn",
    "__version__",
    "make_ranking_pipeline",
    "QRNRanker",
]
