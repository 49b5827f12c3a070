"""The semantic ranker: cosine similarity of sentence embeddings of the query and each tool.

A tool is embedded as one line of prose: its server, its name's words, search hint,
description and parameter names (:attr:`~nbagent.rankers.fields.ToolFields.text`). The query
is its terms joined by spaces. Vectors are cached per distinct tool text (in memory and, by
default, under ``~/.nbagent/embeddings``), so re-indexing after tools come or go embeds only
the new ones. A tool lacking a required (``+``) term, as a word, is dropped; only positive
similarities are returned; ties break by name.

The embedder is pluggable (:class:`~nbagent.rankers.embedder.Embedder`) and is loaded when
the first tools are indexed, not when the ranker is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nbagent.rankers.bm25 import top
from nbagent.rankers.embedder import DEFAULT_CACHE_DIR, Embedder, EmbeddingCache, default_embedder
from nbagent.rankers.fields import ToolFields, has_term
from nbagent.search import SearchHit, Term
from nbagent.tool import Tool

if TYPE_CHECKING:
    import numpy as np


class SemanticRanker:
    """Ranks tools by embedding similarity (see the module docstring).

    Args:
        embedder: The embedder; :func:`~nbagent.rankers.embedder.default_embedder` by default.
        cache_dir: Where to persist tool vectors; ``None`` keeps them in memory only.
    """

    name = "semantic"

    def __init__(
        self, embedder: Embedder | None = None, cache_dir: Path | None = DEFAULT_CACHE_DIR
    ) -> None:
        self._embedder = embedder
        self._cache_dir = cache_dir
        self._vectors: EmbeddingCache | None = None
        self._analysed: dict[int, tuple[Tool, ToolFields]] = {}
        self._names: list[str] = []
        self._vocabularies: list[frozenset[str]] = []
        self._matrix: np.ndarray | None = None

    @property
    def cache(self) -> EmbeddingCache:
        """The vector cache (loading the embedder on first use)."""
        if self._vectors is None:
            embedder = self._embedder or default_embedder()
            self._vectors = EmbeddingCache(embedder, self._cache_dir)
        return self._vectors

    @property
    def multilingual(self) -> bool:
        """Whether the embedder compares texts across languages (loads it on first use)."""
        return self.cache.embedder.multilingual

    def index(self, tools: Sequence[Tool]) -> None:
        """Embed the tools to search; texts embedded before come from the cache.

        Args:
            tools: The deferred tools.
        """
        analysed: dict[int, tuple[Tool, ToolFields]] = {}
        for tool in tools:
            cached = self._analysed.get(id(tool))
            analysed[id(tool)] = (
                cached if cached and cached[0] is tool else (tool, ToolFields.of(tool))
            )
        self._analysed = analysed
        docs = [analysed[id(tool)][1] for tool in tools]
        self._names = [doc.name for doc in docs]
        self._vocabularies = [doc.vocabulary for doc in docs]
        self._matrix = self.cache.vectors([doc.text for doc in docs]) if tools else None

    def scores(self, terms: Sequence[Term]) -> np.ndarray:
        """Return the cosine similarity of the query to every indexed tool.

        Args:
            terms: The query's terms.

        Returns:
            One similarity per tool, in indexing order (required terms not applied).
        """
        import numpy as np

        if self._matrix is None:
            return np.zeros(0, dtype=np.float32)
        query = self.cache.embedder.embed([" ".join(term.text for term in terms)])[0]
        return self._matrix @ query

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Rank the indexed tools by similarity to the query.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive similarity, best first, ties by name.
        """
        scores = self.scores(terms)
        for term in terms:
            if term.required:
                scores[[not has_term(vocabulary, term) for vocabulary in self._vocabularies]] = 0.0
        return [
            SearchHit(self._names[p], round(float(scores[p]), 3), (f"cosine {scores[p]:.3f}",))
            for p in top(scores, self._names, limit)
        ]
