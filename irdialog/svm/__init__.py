"""Structured SVM for bAbI QA and its hashed pairwise features."""

from ._features import PairwiseFeaturizer
from ._structured_svm import StructuredSVMQA

__all__ = ["PairwiseFeaturizer", "StructuredSVMQA"]
