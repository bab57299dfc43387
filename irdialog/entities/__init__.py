"""Models over a dictionary of entities: the Movie Dialog setting (Dodge et al. 2016).

Every entity handling of the package lives here, over one normalisation of entity names
(:func:`entity_key`):

- :class:`EntityParser` rewrites texts so that each known entity is one symbol (longest
  match), and drops rare words;
- :class:`EntitySymbolRanker` wraps any ranker (supervised embeddings, MemN2N, a recurrent
  reader) to rank the entity symbols, with the knowledge-base memory of
  :class:`~irdialog.retrieval.KBMemoryRetriever` as its long-term memory;
- :class:`SVDRecommender` is the collaborative-filtering baseline over the same entities.

This package sits above the model packages (it wraps their rankers and the retrieval
memory); none of them imports it.
"""

from ._parser import ENTITY_PREFIX, EntityParser, entity_key
from ._svd import SVDRecommender
from ._symbol_ranker import EntitySymbolRanker

__all__ = [
    "ENTITY_PREFIX",
    "EntityParser",
    "EntitySymbolRanker",
    "SVDRecommender",
    "entity_key",
]
