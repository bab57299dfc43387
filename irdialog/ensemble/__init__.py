"""Rankers over rankers: fusion of rankings or scores, and learning to rank over features
of a first stage's candidates.

- :class:`FusionRanker` combines rankers by reciprocal rank fusion or by a weighted sum of
  their standardised scores;
- :class:`LearningToRankRanker` re-ranks candidates with LightGBM's lambdarank over
  lexical features (BM25, TF-IDF, overlaps, lengths) and the scores of other rankers
  (the optional extra ``irdialog[ltr]``);
- :class:`SeedEnsembleRanker` fits one ranker from several random starts and fuses them.

This package sits above the model packages (it wraps rankers of ``retrieval`` and
``embed``); none of them imports it.
"""

from ._fusion import FusionRanker
from ._ltr import LearningToRankRanker
from ._seeds import SeedEnsembleRanker

__all__ = ["FusionRanker", "LearningToRankRanker", "SeedEnsembleRanker"]
