"""The BM25 ranker: one ``bm25s`` index per tool field, scores summed with field weights.

A tool's score is ``sum over fields f of FIELD_WEIGHTS[f] * BM25_f(query)``, where ``BM25_f``
is Lucene's BM25 (k1 1.5, b 0.75, as ``bm25s`` computes it) over that field alone (fields
and tokens: :mod:`nbagent.catalogue.rankers.fields`). A tool lacking a required (``+``) term is
dropped; zero scores are never returned; ties break by name.

Each tool is analysed once (its tokens become ids in a vocabulary that only grows) and the
analysis is kept while the tool stays in the searched set. When the set changes, the
per-field score matrices are recomputed from those cached ids, since BM25's document
frequencies and average lengths are properties of the whole set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nbagent.catalogue.rankers.fields import FIELDS, ToolFields, requirement, term_tokens
from nbagent.catalogue.toolsearch import IndexedAtOnce, SearchHit, Term
from nbagent.core.tool import Tool

if TYPE_CHECKING:
    import numpy as np

FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "server": 3.0,
    "hint": 1.0,
    "description": 1.0,
    "params": 0.0,
    "param_docs": 0.5,
}
"""The weight of each field's BM25 score: fitted by ``benchmarks/fit_weights.py`` on the dev
sets (43 keyword queries, 74 task-style queries, 103 MCP-Bench tasks), except ``hint``, which
no dev tool has, set by hand to the description's weight."""


class BM25Ranker(IndexedAtOnce):
    """Field-weighted BM25 over the deferred tools (see the module docstring).

    Args:
        weights: A weight per field name of :data:`~nbagent.catalogue.rankers.fields.FIELDS`; fields
            left out or weighted 0 are not indexed.

    Attributes:
        weights: The weight of every field (0 for those left out).
    """

    name = "bm25"

    def __init__(self, weights: Mapping[str, float] = FIELD_WEIGHTS) -> None:
        self.weights = {f: float(weights.get(f, 0.0)) for f in FIELDS}
        self._cache: dict[int, tuple[Tool, ToolFields, list[list[int]]]] = {}
        self._vocabulary: dict[str, int] = {}
        self._docs: list[ToolFields] = []
        self._names: list[str] = []
        self._fields: list[tuple[int, object]] = []

    def index(self, tools: Sequence[Tool]) -> None:
        """Index the tools to search; tools indexed before are not analysed again.

        Args:
            tools: The deferred tools.
        """
        import bm25s

        cache: dict[int, tuple[Tool, ToolFields, list[list[int]]]] = {}
        for tool in tools:
            cached = self._cache.get(id(tool))
            if not cached or cached[0] is not tool:
                fields = ToolFields.of(tool)
                ids = [[self._id(token) for token in field] for field in fields.fields]
                cached = (tool, fields, ids)
            cache[id(tool)] = cached
        self._cache = cache
        entries = [cache[id(tool)] for tool in tools]
        self._docs = [fields for _, fields, _ in entries]
        self._names = [fields.name for fields in self._docs]
        self._fields = []
        for position, field in enumerate(FIELDS):
            corpus = [ids[position] for _, _, ids in entries]
            if self.weights[field] <= 0 or not any(corpus):
                continue
            retriever = bm25s.BM25()
            retriever.scores = retriever.build_index_from_ids(
                unique_token_ids=list(range(len(self._vocabulary))),
                corpus_token_ids=corpus,
                show_progress=False,
            )
            self._fields.append((position, retriever))

    def field_scores(self, terms: Sequence[Term]) -> np.ndarray:
        """Score every indexed tool field by field, unweighted (required terms not applied).

        Args:
            terms: The query's terms.

        Returns:
            An array of shape ``(len(FIELDS), tools)``; rows of unindexed fields are 0.
        """
        import numpy as np

        wanted = {t for term in terms for t in term_tokens(term)}
        ids = sorted(self._vocabulary[t] for t in wanted if t in self._vocabulary)
        out = np.zeros((len(FIELDS), len(self._docs)), dtype=np.float32)
        if ids:
            for position, retriever in self._fields:
                out[position] = retriever.get_scores_from_ids(ids)  # type: ignore[attr-defined]
        return out

    def scores(self, terms: Sequence[Term]) -> np.ndarray:
        """Score every indexed tool (required terms not applied).

        Args:
            terms: The query's terms.

        Returns:
            One weighted BM25 score per tool, in indexing order.
        """
        import numpy as np

        weights = np.array([self.weights[f] for f in FIELDS], dtype=np.float32)
        return weights @ self.field_scores(terms)

    def allowed(self, terms: Sequence[Term]) -> np.ndarray | None:
        """Tell which tools have every required term in an indexed field.

        A term's words must all be present; of a CJK term's characters and bigrams, at least
        a third (see :func:`~nbagent.catalogue.rankers.fields.has_term`).

        Args:
            terms: The query's terms.

        Returns:
            A boolean mask over the indexed tools, or ``None`` when no term is required.
        """
        import numpy as np

        required = [term for term in terms if term.required]
        if not required:
            return None
        mask = np.ones(len(self._docs), dtype=bool)
        for term in required:
            words, grams = requirement(term)
            if not words and not grams:
                mask[:] = False
            for word in words:
                mask &= self._containing(word)
            if grams:
                found = sum(self._containing(gram).astype(np.int32) for gram in grams)
                mask &= found * 3 >= len(grams)
        return mask

    def _containing(self, token: str) -> np.ndarray:
        """Mark the tools that have a token in an indexed field (from the score matrices)."""
        import numpy as np

        mask = np.zeros(len(self._docs), dtype=bool)
        token_id = self._vocabulary.get(token)
        if token_id is None:
            return mask
        for _, retriever in self._fields:
            matrix = retriever.scores  # type: ignore[attr-defined]
            start, end = matrix["indptr"][token_id], matrix["indptr"][token_id + 1]
            mask[matrix["indices"][start:end]] = True
        return mask

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Rank the indexed tools against the terms.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive score, best first, ties by name; each hit's reasons say
            which query tokens matched in which field.
        """
        scores = self.scores(terms)
        mask = self.allowed(terms)
        if mask is not None:
            scores[~mask] = 0.0
        wanted = [t for term in terms for t in term_tokens(term)]
        return [
            SearchHit(self._names[p], round(float(scores[p]), 3), self._reasons(p, wanted))
            for p in top(scores, self._names, limit)
        ]

    def _reasons(self, position: int, wanted: Sequence[str]) -> tuple[str, ...]:
        """Say which query tokens a tool matched, field by field."""
        doc = self._docs[position]
        reasons = []
        for index, field in enumerate(FIELDS):
            found = [t for t in dict.fromkeys(wanted) if t in doc.fields[index]]
            if found and self.weights[field] > 0:
                reasons.append(f"{field}: {', '.join(found)}")
        return tuple(reasons)

    def _id(self, token: str) -> int:
        """Return a token's id in the vocabulary, adding it if new."""
        return self._vocabulary.setdefault(token, len(self._vocabulary))


def top(scores: np.ndarray, names: Sequence[str], limit: int) -> list[int]:
    """Pick the best positions: positive scores only, best first, ties broken by name.

    Args:
        scores: One score per tool.
        names: The tools' names, in the same order.
        limit: How many positions at most.

    Returns:
        The positions.
    """
    import numpy as np

    positive = np.flatnonzero(scores > 0)
    if len(positive) > limit:
        cut = np.partition(scores[positive], len(positive) - limit)[len(positive) - limit]
        positive = positive[scores[positive] >= cut]
    return sorted(positive.tolist(), key=lambda p: (-float(scores[p]), names[p]))[:limit]
