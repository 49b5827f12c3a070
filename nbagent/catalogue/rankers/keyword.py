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
roughly the size of the postings it touches, not the size of the catalogue; the name parts
that contain a word are found through an index of their character n-grams (up to three). A
tool added or removed updates the postings of its own units only (see
:mod:`nbagent.catalogue.rankers.slots`).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nbagent.catalogue.rankers.slots import SlotIndexed, Slots
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
PART_GRAM = 3
"""The longest character n-gram of the name parts' substring index."""


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

    def __init__(self) -> None:
        self.postings: dict[str, set[int]] = {}

    def add(self, position: int, units: Iterable[str]) -> None:
        """Index a doc's units at its position."""
        for unit in units:
            self.postings.setdefault(unit, set()).add(position)

    def remove(self, position: int, units: Iterable[str]) -> None:
        """Forget a doc's units (those it was indexed with)."""
        for unit in units:
            postings = self.postings[unit]
            postings.discard(position)
            if not postings:
                del self.postings[unit]

    def having(self, units: Sequence[str]) -> set[int]:
        """Return the docs that have every one of the units."""
        postings = sorted((self.postings.get(unit, set()) for unit in units), key=len)
        return postings[0].intersection(*postings[1:])

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


def part_grams(part: str) -> set[str]:
    """Return a name part's distinct substrings of 1 to :data:`PART_GRAM` characters."""
    return {
        part[start : start + size]
        for size in range(1, PART_GRAM + 1)
        for start in range(len(part) - size + 1)
    }


class KeywordRanker(SlotIndexed[_Doc], IndexedAtOnce):
    """The reference scoring of ToolSearch (see the module docstring)."""

    name = "keyword"

    def __init__(self) -> None:
        self.slots: Slots[_Doc] = Slots()
        self._mcp: set[int] = set()
        self._parts = _Field()
        self._part_grams = _Field()
        self._part_names: list[str] = []
        self._part_positions: dict[str, int] = {}
        self._hints = _Field()
        self._descriptions = _Field()

    def update(self, added: Sequence[Tool], removed: Sequence[Tool]) -> None:
        """Remove tools from the searched set, then add tools, at the cost of those tools.

        Args:
            added: Tools to search from now on (their names are not indexed, or are removed).
            removed: Indexed tools to forget.
        """
        for tool in removed:
            position, doc = self.slots.remove(tool.name)
            self._mcp.discard(position)
            self._parts.remove(position, doc.parts)
            for part in doc.parts:
                if part not in self._parts.postings:
                    self._part_grams.remove(self._part_positions[part], part_grams(part))
            self._hints.remove(position, doc.hint_words | doc.hint_grams)
            self._descriptions.remove(position, doc.description_words | doc.description_grams)
        for tool in added:
            doc = _Doc.of(tool)
            position = self.slots.add(tool, doc)
            if doc.is_mcp:
                self._mcp.add(position)
            for part in doc.parts:
                if part not in self._parts.postings:
                    self._part_grams.add(self._part_position(part), part_grams(part))
            self._parts.add(position, doc.parts)
            self._hints.add(position, doc.hint_words | doc.hint_grams)
            self._descriptions.add(position, doc.description_words | doc.description_grams)

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Score every indexed tool against the terms.

        Args:
            terms: The query's terms.
            limit: How many hits at most.

        Returns:
            Hits with a positive score, best first, ties broken by name; each hit's reasons
            say where each term matched.
        """
        totals: dict[int, float] = {}
        required: set[int] | None = None
        for term in terms:
            scores = self._score_term(term)
            if not totals:
                totals = dict(scores)
            else:
                for position, score in scores.items():
                    totals[position] = totals.get(position, 0.0) + score
            if term.required:
                required = set(scores) if required is None else required & scores.keys()
        if required is not None:
            totals = {position: totals[position] for position in required}
        if not totals:
            return []
        cut = heapq.nlargest(limit, totals.values())[-1]
        names = self.slots.names
        best = sorted(
            (p for p, total in totals.items() if total >= cut), key=lambda p: (-totals[p], names[p])
        )[:limit]
        return [self._hit(self.slots.docs[p], terms, totals[p]) for p in best]  # type: ignore[arg-type]

    def _part_position(self, part: str) -> int:
        """Return a name part's number in the substring index, numbering new parts."""
        position = self._part_positions.get(part)
        if position is None:
            position = self._part_positions[part] = len(self._part_names)
            self._part_names.append(part)
        return position

    def _containing(self, word: str) -> list[str]:
        """Return the indexed name parts that contain a word and are not that word."""
        grams = [word[i : i + PART_GRAM] for i in range(max(1, len(word) - PART_GRAM + 1))]
        postings = sorted((self._part_grams.postings.get(g, set()) for g in grams), key=len)
        candidates = postings[0].intersection(*postings[1:])
        parts = (self._part_names[p] for p in candidates)
        return [part for part in parts if word in part and part != word]

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
        term_words = term.units.words
        if term_words and not term.units.grams:
            return self._score_words(term_words)
        best: dict[int, float] = {}
        for field, weight in ((self._hints, HINT), (self._descriptions, DESCRIPTION)):
            for position, share in field.coverage(term).items():
                if weight * share > best.get(position, 0.0):
                    best[position] = weight * share
        return best

    def _score_words(self, term_words: Sequence[str]) -> dict[int, float]:
        """Score a term of words only: each match scores its place's whole weight, so the
        places are applied from the lowest weight up, each overriding the ones below."""
        best = dict.fromkeys(self._descriptions.having(term_words), DESCRIPTION)
        best.update(dict.fromkeys(self._hints.having(term_words), HINT))
        if len(term_words) == 1:
            postings = self._parts.postings
            inside = set().union(*(postings[part] for part in self._containing(term_words[0])))
            best.update(dict.fromkeys(inside - self._mcp, NAME_PARTIAL[1]))
            best.update(dict.fromkeys(inside & self._mcp, NAME_PARTIAL[0]))
        exact = self._parts.having(term_words)
        best.update(dict.fromkeys(exact - self._mcp, NAME_EXACT[1]))
        best.update(dict.fromkeys(exact & self._mcp, NAME_EXACT[0]))
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
