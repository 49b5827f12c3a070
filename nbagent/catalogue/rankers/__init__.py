"""ToolSearch rankers: one module each, registered by name in
``nbagent.catalogue.toolsearch.RANKERS``.

The factories below import their ranker (and NumPy, the embedding models) only
when called, so importing this package costs nothing; each first checks that the packages it
needs are installed and says how to install them if not. :func:`best_available` names the
ranker a kernel uses by default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbagent.catalogue.rankers.embedder import missing_packages, require_packages

if TYPE_CHECKING:
    from nbagent.catalogue.toolsearch import Ranker


def best_available() -> str:
    """Name the best measured ranker whose packages are installed.

    Returns:
        ``hybrid`` when the semantic extra and the MiniLM weights are installed, else
        ``keyword`` (checked without importing anything).
    """
    return "keyword" if missing_packages() else "hybrid"


def bm25() -> Ranker:
    """Build the field-weighted BM25 ranker (:mod:`nbagent.catalogue.rankers.bm25`)."""
    require_packages("bm25")
    from nbagent.catalogue.rankers.bm25 import BM25Ranker

    return BM25Ranker()


def semantic() -> Ranker:
    """Build the embeddings ranker: the hybrid one with no BM25 share (:mod:`.semantic`)."""
    require_packages("semantic")
    from nbagent.catalogue.rankers.hybrid import HybridRanker

    return HybridRanker(lexical_weight=0.0, name="semantic")


def hybrid() -> Ranker:
    """Build the BM25 + embeddings ranker (:mod:`nbagent.catalogue.rankers.hybrid`)."""
    require_packages("hybrid")
    from nbagent.catalogue.rankers.hybrid import HybridRanker

    return HybridRanker()
