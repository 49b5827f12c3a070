"""The hybrid ranker: a convex combination of normalised BM25 and embedding similarity.

For each tool, ``score = LEXICAL_WEIGHT * bm25 / max(bm25) + (1 - LEXICAL_WEIGHT) * cosine``,
where ``bm25`` is the field-weighted BM25 score (:mod:`nbagent.rankers.bm25`) divided by the
best score of the query (so the top lexical match gets 1 and a tool with no shared word 0),
and ``cosine`` the sentence-embedding similarity (:mod:`nbagent.rankers.semantic`), negative
values counted as 0. The weight was fitted on the dev splits (``benchmarks/fit_weights.py``).
When every query term is Chinese or Japanese and the embedder is not multilingual (the
default model knows English only), the similarity says nothing and the score is the
normalised BM25 alone.
A tool lacking a required (``+``) term is dropped; zero scores are never returned; ties break
by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbagent.rankers.bm25 import BM25Ranker, top
from nbagent.rankers.semantic import SemanticRanker
from nbagent.search import SearchHit, Term
from nbagent.tool import Tool

LEXICAL_WEIGHT = 0.15
"""The share of the normalised BM25 score in the combined score (fitted on the dev splits)."""


class HybridRanker:
    """BM25 and embeddings, fused by a weighted sum (see the module docstring).

    Args:
        lexical: The BM25 ranker; a default one if not given.
        semantic: The embedding ranker; a default one if not given.
        lexical_weight: The share of BM25 in the combination, from 0 to 1.

    Attributes:
        lexical: The BM25 ranker.
        semantic: The embedding ranker.
        lexical_weight: The share of BM25 in the combination.
    """

    name = "hybrid"

    def __init__(
        self,
        lexical: BM25Ranker | None = None,
        semantic: SemanticRanker | None = None,
        lexical_weight: float = LEXICAL_WEIGHT,
    ) -> None:
        self.lexical = lexical or BM25Ranker()
        self.semantic = semantic or SemanticRanker()
        self.lexical_weight = lexical_weight
        self._names: list[str] = []

    def index(self, tools: Sequence[Tool]) -> None:
        """Index the tools in both rankers (each reuses what it has analysed or embedded).

        Args:
            tools: The deferred tools.
        """
        self.lexical.index(tools)
        self.semantic.index(tools)
        self._names = [tool.name for tool in tools]

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Rank the indexed tools by the combined score.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive combined score, best first, ties by name; reasons give both
            components.
        """
        import numpy as np

        if not self._names:
            return []
        lexical = self.lexical.scores(terms)
        best = float(lexical.max())
        lexical = lexical / best if best > 0 else lexical
        if all(not term.units.words for term in terms) and not self.semantic.multilingual:
            cosine = np.zeros_like(lexical)
            weight = 1.0
        else:
            cosine = np.maximum(self.semantic.scores(terms), 0.0)
            weight = self.lexical_weight
        combined = weight * lexical + (1 - weight) * cosine
        mask = self.lexical.allowed(terms)
        if mask is not None:
            combined[~mask] = 0.0
        return [
            SearchHit(
                self._names[p],
                round(float(combined[p]), 3),
                (f"bm25 {lexical[p]:.3f} (normalised)", f"cosine {cosine[p]:.3f}"),
            )
            for p in top(combined, self._names, limit)
        ]
