"""The BM25 ranker: one BM25 index per tool field, scores summed with field weights.

A tool's score is ``sum over fields f of FIELD_WEIGHTS[f] * BM25_f(query)``, where ``BM25_f``
is Lucene's BM25 (k1 1.5, b 0.75, the formula of ``bm25s``' default, in float32) over that
field alone (fields
and tokens: :mod:`nbagent.catalogue.rankers.fields`). A tool lacking a required (``+``) term is
dropped; zero scores are never returned; ties break by name.

The index keeps, per field, each token's postings (the tools that have it and how often) and
each tool's length, and scores a query from them: BM25's document frequencies and average
lengths are properties of the whole set, so nothing that depends on them is stored. Adding or
removing a tool updates the postings of its own tokens only (see
:mod:`nbagent.catalogue.rankers.slots`); a token's postings are turned into arrays at its
first search after they changed. A query's tokens are summed in a fixed order, so an index
grown by changes scores exactly like one built afresh.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nbagent.catalogue.rankers.fields import FIELDS, ToolFields, requirement, term_tokens
from nbagent.catalogue.rankers.slots import SlotIndexed, Slots
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

K1 = 1.5
"""BM25's term-frequency saturation (Lucene's and ``bm25s``' default)."""
B = 0.75
"""BM25's length normalisation (Lucene's and ``bm25s``' default)."""


class BM25Ranker(SlotIndexed[ToolFields], IndexedAtOnce):
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
        self.slots: Slots[ToolFields] = Slots()
        self._indexed = [p for p, field in enumerate(FIELDS) if self.weights[field] > 0]
        self._postings: list[dict[str, dict[int, int]]] = [{} for _ in FIELDS]
        self._arrays: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
        self._lengths: np.ndarray | None = None
        self._total = [0] * len(FIELDS)

    def update(self, added: Sequence[Tool], removed: Sequence[Tool]) -> None:
        """Remove tools from the searched set, then add tools, at the cost of those tools.

        Args:
            added: Tools to search from now on (their names are not indexed, or are removed).
            removed: Indexed tools to forget.
        """
        import numpy as np

        for tool in removed:
            position, doc = self.slots.remove(tool.name)
            for field in self._indexed:
                for token in set(doc.fields[field]):
                    postings = self._postings[field][token]
                    del postings[position]
                    if not postings:
                        del self._postings[field][token]
                    self._arrays.pop((field, token), None)
                self._total[field] -= len(doc.fields[field])
                self._lengths[field, position] = 0  # type: ignore[index]
        for tool in added:
            doc = ToolFields.of(tool)
            position = self.slots.add(tool, doc)
            lengths = self._lengths
            if lengths is None or position >= lengths.shape[1]:
                self._lengths = np.zeros((len(FIELDS), max(64, 2 * position)), dtype=np.float32)
                if lengths is not None:
                    self._lengths[:, : lengths.shape[1]] = lengths
            for field in self._indexed:
                counts: dict[str, int] = {}
                for token in doc.fields[field]:
                    counts[token] = counts.get(token, 0) + 1
                for token, count in counts.items():
                    self._postings[field].setdefault(token, {})[position] = count
                    self._arrays.pop((field, token), None)
                self._total[field] += len(doc.fields[field])
                self._lengths[field, position] = len(doc.fields[field])  # type: ignore[index]

    def field_scores(self, terms: Sequence[Term]) -> np.ndarray:
        """Score every indexed tool field by field, unweighted (required terms not applied).

        Args:
            terms: The query's terms.

        Returns:
            An array of shape ``(len(FIELDS), positions)`` (a free position scores 0); rows of
            unindexed fields are 0.
        """
        import numpy as np

        wanted = sorted({t for term in terms for t in term_tokens(term)})
        out = np.zeros((len(FIELDS), len(self.slots)), dtype=np.float32)
        count = self.slots.count
        for field in self._indexed:
            if not self._total[field]:
                continue
            average = self._total[field] / count
            for token in wanted:
                postings = self._postings[field].get(token)
                if not postings:
                    continue
                idf = math.log(1 + (count - len(postings) + 0.5) / (len(postings) + 0.5))
                positions, frequencies = self._postings_arrays(field, token)
                lengths = self._lengths[field, positions]  # type: ignore[index]
                saturation = K1 * ((1 - B) + B * lengths / average)
                out[field, positions] += np.float32(idf) * (
                    frequencies / (saturation + frequencies)
                )
        return out

    def scores(self, terms: Sequence[Term]) -> np.ndarray:
        """Score every indexed tool (required terms not applied).

        Args:
            terms: The query's terms.

        Returns:
            One weighted BM25 score per tool, in indexing order.
        """
        import numpy as np

        fields = self.field_scores(terms)
        total = np.zeros(fields.shape[1], dtype=np.float32)
        for position in self._indexed:
            total += np.float32(self.weights[FIELDS[position]]) * fields[position]
        return total

    def coverage(self, terms: Sequence[Term]) -> np.ndarray:
        """Tell how much of the query each tool's words contain, weighting rare tokens more.

        Args:
            terms: The query's terms.

        Returns:
            One share in [0, 1] per tool: the summed IDF of the query tokens found in any of
            its indexed fields over the summed IDF of all the query's tokens (a token no tool
            has weighs most); zeros for a query without tokens.
        """
        import numpy as np

        out = np.zeros(len(self.slots))
        count = self.slots.count
        total = 0.0
        for token in sorted({t for term in terms for t in term_tokens(term)}):
            found = self._containing(token)
            frequency = int(found.sum())
            idf = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
            total += idf
            out[found] += idf
        return out / total if total > 0 else out

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
        mask = np.zeros(len(self.slots), dtype=bool)
        mask[list(self.slots.positions.values())] = True
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
        """Mark the tools that have a token in an indexed field."""
        import numpy as np

        mask = np.zeros(len(self.slots), dtype=bool)
        for field in self._indexed:
            if token in self._postings[field]:
                mask[self._postings_arrays(field, token)[0]] = True
        return mask

    def _postings_arrays(self, field: int, token: str) -> tuple[np.ndarray, np.ndarray]:
        """Return a token's postings in a field as arrays: positions and term frequencies."""
        import numpy as np

        arrays = self._arrays.get((field, token))
        if arrays is None:
            postings = self._postings[field][token]
            arrays = self._arrays[(field, token)] = (
                np.fromiter(postings.keys(), dtype=np.int64, count=len(postings)),
                np.fromiter(postings.values(), dtype=np.float32, count=len(postings)),
            )
        return arrays

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
        names = self.slots.names
        return [
            SearchHit(names[p], round(float(scores[p]), 3), self._reasons(p, wanted))
            for p in top(scores, names, limit)
        ]

    def _reasons(self, position: int, wanted: Sequence[str]) -> tuple[str, ...]:
        """Say which query tokens a tool matched, field by field."""
        doc = self.slots.docs[position]
        assert doc is not None
        reasons = []
        for index, field in enumerate(FIELDS):
            found = [t for t in dict.fromkeys(wanted) if t in doc.fields[index]]
            if found and self.weights[field] > 0:
                reasons.append(f"{field}: {', '.join(found)}")
        return tuple(reasons)


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
