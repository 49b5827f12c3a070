"""The reference keyword ranker of ToolSearch.

Each term scores against a tool once, the best of:

=========================  ====  =========
where the term matches     MCP   other
=========================  ====  =========
a whole name part          12    10
inside a name part         6     5
the search hint            4     4
the description            2     2
=========================  ====  =========

A term's words must all be present for a hint or description match; a CJK term matches when
at least a third of its character bigrams are present, and scores in proportion. A tool's score
is the sum over terms; a tool lacking a required (``+``) term is dropped; ties break by name.

Inverted indexes over name parts, hint and description units make a warm search cost
roughly the size of the postings it touches, not the size of the catalogue.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nbagent.search import SearchHit, Term, parse_tool_name
from nbagent.text import cjk_grams, words
from nbagent.tool import Tool

NAME_EXACT = (12.0, 10.0)
"""Score of a whole-name-part match, for MCP and other tools."""
NAME_PARTIAL = (6.0, 5.0)
"""Score of a match inside a name part, for MCP and other tools."""
HINT = 4.0
"""Score of a search-hint match."""
DESCRIPTION = 2.0
"""Score of a description match."""
MIN_GRAM_COVERAGE = 1 / 3
"""Share of a CJK term's bigrams that must be present for it to match."""


@dataclass(frozen=True)
class _Doc:
    """What the ranker keeps of one tool."""

    name: str
    is_mcp: bool
    parts: frozenset[str]
    hint_words: frozenset[str]
    hint_grams: frozenset[str]
    description_words: frozenset[str]
    description_grams: frozenset[str]

    @classmethod
    def of(cls, tool: Tool) -> _Doc:
        parsed = parse_tool_name(tool.name)
        return cls(
            name=tool.name,
            is_mcp=tool.is_mcp or parsed.is_mcp,
            parts=frozenset(parsed.parts),
            hint_words=frozenset(words(tool.search_hint)),
            hint_grams=frozenset(cjk_grams(tool.search_hint, with_unigrams=True)),
            description_words=frozenset(words(tool.description)),
            description_grams=frozenset(cjk_grams(tool.description, with_unigrams=True)),
        )


class _Field:
    """An inverted index of one text field: unit -> positions of the docs that have it."""

    def __init__(self, units_of_docs: Iterable[Iterable[str]]) -> None:
        self.postings: dict[str, list[int]] = defaultdict(list)
        for position, units in enumerate(units_of_docs):
            for unit in units:
                self.postings[unit].append(position)

    def coverage(self, term: Term) -> dict[int, float]:
        """Return, for each doc the term matches, the share of the term's units it has."""
        grams = term.units.grams
        total = len(term.units.words) + len(grams)
        if term.units.words:
            candidates = set(self.postings.get(term.units.words[0], ()))
            for word in term.units.words[1:]:
                candidates.intersection_update(self.postings.get(word, ()))
            counts = dict.fromkeys(candidates, len(term.units.words))
            for gram in grams:
                for position in self.postings.get(gram, ()):
                    if position in counts:
                        counts[position] += 1
        else:
            counts = defaultdict(int)
            for gram in grams:
                for position in self.postings.get(gram, ()):
                    counts[position] += 1
        threshold = len(term.units.words) + MIN_GRAM_COVERAGE * len(grams)
        return {pos: n / total for pos, n in counts.items() if n >= threshold}


class KeywordRanker:
    """The reference scoring of ToolSearch (see the module docstring)."""

    name = "keyword"

    def __init__(self) -> None:
        self._docs: list[_Doc] = []
        self._cache: dict[int, tuple[Tool, _Doc]] = {}
        self._parts: dict[str, list[int]] = {}
        self._hints = _Field(())
        self._descriptions = _Field(())

    def index(self, tools: Sequence[Tool]) -> None:
        """Index the tools to search; tools indexed before are not analysed again.

        Args:
            tools: The deferred tools.
        """
        cache: dict[int, tuple[Tool, _Doc]] = {}
        for tool in tools:
            cached = self._cache.get(id(tool))
            cache[id(tool)] = cached if cached and cached[0] is tool else (tool, _Doc.of(tool))
        self._cache = cache
        self._docs = [cache[id(tool)][1] for tool in tools]
        parts: dict[str, list[int]] = defaultdict(list)
        for position, doc in enumerate(self._docs):
            for part in doc.parts:
                parts[part].append(position)
        self._parts = dict(parts)
        self._hints = _Field(d.hint_words | d.hint_grams for d in self._docs)
        self._descriptions = _Field(d.description_words | d.description_grams for d in self._docs)

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Score every indexed tool against the terms.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive score, best first, ties broken by name.
        """
        totals: dict[int, float] = defaultdict(float)
        reasons: dict[int, list[str]] = defaultdict(list)
        required: set[int] | None = None
        for term in terms:
            matched = self._score_term(term)
            for position, (score, where) in matched.items():
                totals[position] += score
                reasons[position].append(f"{term.text!r} {where} ({score:g})")
            if term.required:
                required = set(matched) if required is None else required & set(matched)
        positions = totals.keys() if required is None else required
        best = heapq.nsmallest(limit, positions, key=lambda p: (-totals[p], self._docs[p].name))
        return [SearchHit(self._docs[p].name, round(totals[p], 3), tuple(reasons[p])) for p in best]

    def _score_term(self, term: Term) -> dict[int, tuple[float, str]]:
        """Return the best (score, where) of one term for every tool it matches."""
        best: dict[int, tuple[float, str]] = {}

        def offer(position: int, score: float, where: str) -> None:
            if score > best.get(position, (0.0, ""))[0]:
                best[position] = (score, where)

        term_words = term.units.words
        if term_words and not term.units.grams:
            exact = set(self._parts.get(term_words[0], ()))
            for word in term_words[1:]:
                exact.intersection_update(self._parts.get(word, ()))
            for position in exact:
                offer(position, NAME_EXACT[not self._docs[position].is_mcp], "name part")
            if len(term_words) == 1:
                for part, positions in self._parts.items():
                    if term_words[0] in part and part != term_words[0]:
                        for position in positions:
                            weight = NAME_PARTIAL[not self._docs[position].is_mcp]
                            offer(position, weight, f"in name part {part!r}")
        for field, weight, where in (
            (self._hints, HINT, "search hint"),
            (self._descriptions, DESCRIPTION, "description"),
        ):
            for position, share in field.coverage(term).items():
                offer(position, weight * share, where)
        return best
