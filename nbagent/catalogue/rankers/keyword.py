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

from nbagent.catalogue.toolsearch import IndexedAtOnce, SearchHit, Term, parse_tool_name
from nbagent.core.text import cjk_grams, words
from nbagent.core.tool import Tool

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


class KeywordRanker(IndexedAtOnce):
    """The reference scoring of ToolSearch (see the module docstring)."""

    name = "keyword"

    def __init__(self) -> None:
        self._docs: list[_Doc] = []
        self._cache: dict[int, tuple[Tool, _Doc]] = {}
        self._parts: dict[str, list[int]] = {}
        self._exact: list[float] = []
        self._partial: list[float] = []
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
        self._exact = [NAME_EXACT[not doc.is_mcp] for doc in self._docs]
        self._partial = [NAME_PARTIAL[not doc.is_mcp] for doc in self._docs]
        self._hints = _Field(d.hint_words | d.hint_grams for d in self._docs)
        self._descriptions = _Field(d.description_words | d.description_grams for d in self._docs)

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Score every indexed tool against the terms.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive score, best first, ties broken by name; each hit's reasons
            say where each term matched.
        """
        totals: dict[int, float] = defaultdict(float)
        required: set[int] | None = None
        for term in terms:
            scores = self._score_term(term)
            for position, score in scores.items():
                totals[position] += score
            if term.required:
                required = set(scores) if required is None else required & scores.keys()
        positions = totals.keys() if required is None else required
        best = heapq.nsmallest(limit, positions, key=lambda p: (-totals[p], self._docs[p].name))
        return [self._hit(self._docs[p], terms, totals[p]) for p in best]

    def _hit(self, doc: _Doc, terms: Sequence[Term], total: float) -> SearchHit:
        """Build a hit, explaining each term's match (for the few hits returned only)."""
        reasons = []
        for term in terms:
            score, where = explain(term, doc)
            if score:
                reasons.append(f"{term.text!r} {where} ({score:g})")
        return SearchHit(doc.name, round(total, 3), tuple(reasons))

    def _score_term(self, term: Term) -> dict[int, float]:
        """Return the best score of one term for every tool it matches."""
        best: dict[int, float] = {}
        term_words = term.units.words
        if term_words and not term.units.grams:
            exact = set(self._parts.get(term_words[0], ()))
            for word in term_words[1:]:
                exact.intersection_update(self._parts.get(word, ()))
            for position in exact:
                best[position] = self._exact[position]
            if len(term_words) == 1:
                word = term_words[0]
                for part, positions in self._parts.items():
                    if word in part and part != word:
                        for position in positions:
                            if position not in best:
                                best[position] = self._partial[position]
        for field, weight in ((self._hints, HINT), (self._descriptions, DESCRIPTION)):
            for position, share in field.coverage(term).items():
                if weight * share > best.get(position, 0.0):
                    best[position] = weight * share
        return best


def explain(term: Term, doc: _Doc) -> tuple[float, str]:
    """Score one term against one tool directly (the reference the indexes must agree with).

    Args:
        term: The term.
        doc: The tool's analysed text.

    Returns:
        The term's best score and where it matched; ``(0.0, "")`` when it does not match.
    """
    candidates: list[tuple[float, str]] = [(0.0, "")]
    term_words, grams = term.units.words, term.units.grams
    if term_words and not grams:
        if all(word in doc.parts for word in term_words):
            candidates.append((NAME_EXACT[not doc.is_mcp], "name part"))
        elif len(term_words) == 1:
            inside = sorted(part for part in doc.parts if term_words[0] in part)
            if inside:
                candidates.append((NAME_PARTIAL[not doc.is_mcp], f"in name part {inside[0]!r}"))
    for words_, grams_, weight, where in (
        (doc.hint_words, doc.hint_grams, HINT, "search hint"),
        (doc.description_words, doc.description_grams, DESCRIPTION, "description"),
    ):
        if all(word in words_ for word in term_words) and (term_words or grams):
            found = sum(gram in grams_ for gram in grams)
            if found >= MIN_GRAM_COVERAGE * len(grams):
                share = (len(term_words) + found) / (len(term_words) + len(grams))
                candidates.append((weight * share, where))
    return max(candidates, key=lambda c: c[0])
