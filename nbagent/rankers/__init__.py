"""ToolSearch rankers: one module each, registered by name in ``nbagent.search.RANKERS``.

The factories below import their ranker (and ``bm25s``, NumPy, the embedding model) only
when called, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbagent.search import Ranker


def bm25() -> Ranker:
    """Build the field-weighted BM25 ranker (:mod:`nbagent.rankers.bm25`)."""
    from nbagent.rankers.bm25 import BM25Ranker

    return BM25Ranker()


def semantic() -> Ranker:
    """Build the sentence-embedding ranker (:mod:`nbagent.rankers.semantic`)."""
    from nbagent.rankers.semantic import SemanticRanker

    return SemanticRanker()


def hybrid() -> Ranker:
    """Build the BM25 + embeddings ranker (:mod:`nbagent.rankers.hybrid`)."""
    from nbagent.rankers.hybrid import HybridRanker

    return HybridRanker()
