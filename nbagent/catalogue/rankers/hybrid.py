"""The hybrid ranker: normalised BM25 and embedding similarity, combined by a weighted sum.

For each tool, ``score = LEXICAL_WEIGHT * bm25 / max(bm25) + (1 - LEXICAL_WEIGHT) * similarity``,
where ``bm25`` is the field-weighted BM25 score (:mod:`nbagent.catalogue.rankers.bm25`) divided by
the best score of the query, and ``similarity`` the embeddings' averaged, rescaled similarity
(:mod:`nbagent.catalogue.rankers.semantic`). A query written only in Chinese, Japanese or Korean is
ranked by similarity alone: BM25 matches its characters only in tools described in the same
language, and would push those above a better tool described in English. Hits scoring below
``CUTOFF`` times the best are dropped, so a clear match does not bring four stragglers (a
similarity is positive for every tool but the least similar).

While the embeddings are not ready (the models loading, new tools being embedded), and for a
tool that could not be embedded, the score is the normalised BM25 alone; :attr:`ranking`
says which was used. The weights were fitted on the dev sets (``benchmarks/fit_weights.py``).
A tool lacking a required (``+``) term is dropped; zero scores are never returned; ties
break by name.

The ``semantic`` ranker is this one with a lexical weight of 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbagent.catalogue.rankers.bm25 import BM25Ranker, top
from nbagent.catalogue.rankers.semantic import SemanticIndex, Similarity, only_cjk
from nbagent.catalogue.rankers.slots import difference
from nbagent.catalogue.toolsearch import SearchHit, Term
from nbagent.core.tool import Tool

LEXICAL_WEIGHT = 0.2
"""The share of the normalised BM25 score in the combined score (fitted on the dev sets)."""

CUTOFF = 0.4
"""Hits below this share of the best hit's score are dropped (the largest share that cost
nothing on the dev sets, at 5 hits and at 10)."""


class HybridRanker:
    """BM25 and embeddings, fused by a weighted sum (see the module docstring).

    Args:
        lexical: The BM25 ranker; a default one if not given.
        semantic: The embedding index; a default one (both models, background) if not given.
        lexical_weight: The share of BM25 in the combination, from 0 to 1.
        cutoff: Hits below this share of the best score are dropped (0 keeps all).
        name: The ranker's name (``semantic`` for the embeddings-only variant).

    Attributes:
        lexical: The BM25 ranker.
        semantic: The embedding index.
        lexical_weight: The share of BM25 in the combination.
        cutoff: The share of the best score a hit needs.
    """

    def __init__(
        self,
        lexical: BM25Ranker | None = None,
        semantic: SemanticIndex | None = None,
        lexical_weight: float = LEXICAL_WEIGHT,
        cutoff: float = CUTOFF,
        name: str = "hybrid",
    ) -> None:
        self.name = name
        self.lexical = lexical or BM25Ranker()
        self.semantic = semantic or SemanticIndex()
        self.lexical_weight = lexical_weight
        self.cutoff = cutoff

    @property
    def ranking(self) -> str:
        """How a query is ranked now: the ranker's name, or BM25 and why."""
        if self.semantic.ready:
            return self.name
        return f"bm25 ({self.semantic.status})"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the embeddings of the indexed tools are ready (or cannot be made).

        Args:
            timeout: The most seconds to wait; ``None`` for no limit.

        Returns:
            Whether the embedding index is idle (see :attr:`ranking` for which).
        """
        return self.semantic.wait(timeout)

    def index(self, tools: Sequence[Tool]) -> None:
        """Make ``tools`` the searched set: for BM25 now, for the embeddings on the index's
        thread (tools indexed before are not analysed or embedded again).

        Args:
            tools: The deferred tools.
        """
        self.update(*difference(self.lexical.slots.indexed(), tools))

    def update(self, added: Sequence[Tool], removed: Sequence[Tool]) -> None:
        """Remove tools from the searched set, then add tools: BM25 at once, at the cost of
        those tools; the embedding index at the same positions, embedding the new tools only.

        Args:
            added: Tools to search from now on (their names are not indexed, or are removed).
            removed: Indexed tools to forget.
        """
        slots = self.lexical.slots
        changes: dict[int, Tool | None] = {slots.positions[tool.name]: None for tool in removed}
        self.lexical.update(added, removed)
        changes.update((slots.positions[tool.name], tool) for tool in added)
        self.semantic.place(len(slots), changes)

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Rank the indexed tools by the combined score.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive combined score, best first, ties by name; reasons give both
            components (while the embeddings are not ready, BM25's alone: :attr:`ranking`
            says why).
        """
        import numpy as np

        names = self.lexical.slots.names
        if not self.lexical.slots.count:
            return []
        lexical = self.lexical.scores(terms)
        best = float(lexical.max())
        lexical = lexical / best if best > 0 else lexical
        found = self.semantic.similarity(terms)
        if found is None:
            combined = lexical.copy()
            alone = ("no embedder reads this language",) if self.semantic.ready else ()
        else:
            weight = 0.0 if only_cjk(terms) else self.lexical_weight
            similarity = found.values
            combined = np.where(
                np.isnan(similarity), lexical, weight * lexical + (1 - weight) * similarity
            )
        mask = self.lexical.allowed(terms)
        if mask is not None:
            combined[~mask] = 0.0
        if found is not None:
            combined[combined < self.cutoff * float(combined.max())] = 0.0
        return [
            SearchHit(
                names[p],
                round(float(combined[p]), 3),
                (f"bm25 {lexical[p]:.3f} (normalised)", *alone)
                if found is None
                else (f"bm25 {lexical[p]:.3f} (normalised)", *_similarity(found, p)),
            )
            for p in top(combined, names, limit)
        ]


def _similarity(found: Similarity, position: int) -> tuple[str, ...]:
    """The reasons naming a tool's similarity (1 for the most similar tool of the set, 0 for the
    least) and, for a long query, the part of it closest to the tool; or that it has none."""
    value = float(found.values[position])
    if value != value:
        return ("not embedded: ranked by bm25",)
    window = found.closest_window(position)
    closest = () if window is None else (f'closest to "{window}"',)
    return (f"relative similarity {value:.3f}", *closest)
