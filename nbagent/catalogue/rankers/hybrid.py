"""The hybrid ranker: normalised BM25 and embedding similarity, combined by a weighted sum.

For each tool, ``score = w * bm25 / max(bm25) + (1 - w) * similarity``, where ``bm25`` is the
field-weighted BM25 score (:mod:`nbagent.catalogue.rankers.bm25`) divided by the best score of
the query, and ``similarity`` the embeddings' averaged, rescaled similarity
(:mod:`nbagent.catalogue.rankers.semantic`).

BM25's share ``w`` depends on how well the query's words match any tool at all. A query that
names what it wants ("create github issue") has a tool holding all its words, and BM25 sharpens
the embeddings' ranking; a paraphrase ("where can I plug in my Tesla" for
``find_ev_charging_stations``) has none, and BM25 only rewards the tools that happen to share
its filler words, lifting those near-misses over the target the embeddings found. So ``w`` is
``LEXICAL_WEIGHT`` when the best-covering tool holds at least ``FULL_LEXICAL_FROM`` of the
query (:meth:`~nbagent.catalogue.rankers.bm25.BM25Ranker.coverage`: the share of the query's
tokens it contains, each weighted by its IDF, so rare words count most and a word no tool has
counts the most), nothing below ``NO_LEXICAL_BELOW``, and linear in between
(:func:`lexical_share`). A long query (more than
:data:`~nbagent.catalogue.rankers.semantic.WINDOW` terms, a task of several steps) asks for
several tools, none of which is meant to cover it, and keeps the full share. A query written
only in Chinese, Japanese or Korean is ranked by similarity alone: BM25 matches its characters
only in tools described in the same language, and would push those above a better tool
described in English. Hits scoring below
``CUTOFF`` times the best are dropped, so a clear match does not bring four stragglers (a
similarity is positive for every tool but the least similar).

While the embeddings are not ready (the models loading, new tools being embedded), and for a
tool that could not be embedded, the score is the normalised BM25 alone; :attr:`ranking`
says which was used. The weights were fitted on the dev sets
(``benchmarks/fit_weights.py --fusion-only``), where paraphrased and cross-language queries
weigh as much as keyword queries: BM25 has a share of 0.2 for a query some tool covers
entirely, falling linearly to none at a coverage of 0.4. That last coverage is not the fit's
(0.1): a smaller share, on queries that few of their words match, moved paraphrases up or
down at random on held-out sets, and the default must never rank them worse than the
embeddings alone; from 0.4 on, it is the embeddings' ranking on every paraphrase set measured
(``benchmarks/paraphrase_quality.py``), at 0.005 of the fit's objective. A tool lacking a
required (``+``) term is dropped; zero scores are never returned; ties break by name.

The ``semantic`` ranker is this one with a lexical weight of 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbagent.catalogue.rankers.bm25 import BM25Ranker, top
from nbagent.catalogue.rankers.semantic import WINDOW, SemanticIndex, Similarity, only_cjk
from nbagent.catalogue.rankers.slots import difference
from nbagent.catalogue.toolsearch import SearchHit, Term
from nbagent.core.tool import Tool

LEXICAL_WEIGHT = 0.2
"""The share of the normalised BM25 score in the combined score (fitted on the dev sets)."""

NO_LEXICAL_BELOW = 0.4
"""A query whose best-covering tool holds less than this share of it (by
:meth:`~nbagent.catalogue.rankers.bm25.BM25Ranker.coverage`) is ranked by similarity alone
(chosen for paraphrases, see the module docstring)."""

FULL_LEXICAL_FROM = 1.0
"""From this coverage on, BM25 has its full share (:data:`LEXICAL_WEIGHT`); between
:data:`NO_LEXICAL_BELOW` and this, a share growing linearly (0: always the full share)."""

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
        no_lexical_below: float = NO_LEXICAL_BELOW,
        full_lexical_from: float = FULL_LEXICAL_FROM,
    ) -> None:
        self.name = name
        self.lexical = lexical or BM25Ranker()
        self.semantic = semantic or SemanticIndex()
        self.lexical_weight = lexical_weight
        self.cutoff = cutoff
        self.no_lexical_below = no_lexical_below
        self.full_lexical_from = full_lexical_from

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
            weight = 0.0 if only_cjk(terms) else self._share(terms)
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

    def _share(self, terms: Sequence[Term]) -> float:
        """BM25's share for this query: :func:`lexical_share` of its best tool's coverage (the
        full share for a long query, which no one tool is meant to cover)."""
        if self.lexical_weight <= 0 or self.full_lexical_from <= 0 or len(terms) > WINDOW:
            return self.lexical_weight
        coverage = float(self.lexical.coverage(terms).max(initial=0.0))
        return lexical_share(
            self.lexical_weight, coverage, self.no_lexical_below, self.full_lexical_from
        )


def lexical_share(weight: float, coverage: float, low: float, high: float) -> float:
    """BM25's share of the combined score for a query covered this much by its best tool.

    Args:
        weight: The full share.
        coverage: The largest share of the query's words (weighted by IDF) any tool contains.
        low: Below this coverage, no share.
        high: From this coverage on, the full share (0: always the full share).

    Returns:
        ``weight`` from ``high`` on, 0 up to ``low`` (below it when the two are equal),
        linear in between.
    """
    if coverage >= high:
        return weight
    if coverage <= low:
        return 0.0
    return weight * (coverage - low) / (high - low)


def _similarity(found: Similarity, position: int) -> tuple[str, ...]:
    """The reasons naming a tool's similarity (1 for the most similar tool of the set, 0 for the
    least) and, for a long query, the part of it closest to the tool; or that it has none."""
    value = float(found.values[position])
    if value != value:
        return ("not embedded: ranked by bm25",)
    window = found.closest_window(position)
    closest = () if window is None else (f'closest to "{window}"',)
    return (f"relative similarity {value:.3f}", *closest)
