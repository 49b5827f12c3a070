"""Predictive preloading (opt-in): load the tools a prompt clearly needs before the first turn.

Before the model's first turn, the user's prompt is read for two kinds of evidence:

1. **A server named in the prompt.** An MCP server is named when the words of its name (less
   generic ones such as ``mcp`` and ``server``) appear in the prompt in order, as whole
   words: "open a GitHub issue" names ``github``. Its :data:`PER_SERVER` best tools for the
   prompt are picked.
2. **A very confident hit.** The prompt is run through ToolSearch; hits scoring at least the
   ranker's :data:`MIN_SCORE` are picked.

Picks are taken in that order, each only while the definitions picked so far fit the token
budget. Each pick saves the model a ToolSearch round trip when it was needed, and costs its
definition's tokens on every request whether or not it is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nbagent.catalogue.toolsearch import SearchHit, ToolSearch, parse_tool_name
from nbagent.core.errors import SearchQueryError
from nbagent.core.text import split_name
from nbagent.core.tokens import definition_tokens
from nbagent.core.tool import Tool

DEFAULT_BUDGET = 3_000
"""Tokens of tool definitions that preloading may add."""

PER_SERVER = 3
"""Tools picked from each server named in the prompt."""

MAX_HITS = 5
"""Search hits considered for the confidence rule."""

MIN_SCORE = {"keyword": float("inf"), "bm25": 24.346, "semantic": 1.0, "hybrid": 0.967}
"""The score from which a search hit is a confident pick, per ranker: fitted on the task-style
dev queries by ``benchmarks/preload_savings.py --fit`` (the lowest threshold whose top-5 hits
were at least 80% relevant there; the keyword ranker never got there, so it preloads only for
named servers). A ranker not listed never makes confident picks."""

GENERIC_WORDS = frozenset({"mcp", "server", "the", "a", "an", "of", "for", "and", "tool", "tools"})
"""Words of server names that do not identify a server on their own."""

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Pick:
    """One tool chosen for preloading."""

    name: str
    """The tool's name."""
    reason: str
    """Why: ``server 'github' named`` or ``search score 0.71``."""
    tokens: int
    """Tokens of its definition."""


@dataclass(frozen=True)
class Preload:
    """What preloading chose for a prompt."""

    picks: tuple[Pick, ...]
    """The tools to load, in order."""
    budget: int
    """The token budget they fit in."""

    @property
    def names(self) -> list[str]:
        """The names of the picked tools."""
        return [pick.name for pick in self.picks]

    @property
    def tokens(self) -> int:
        """Tokens of all picked definitions."""
        return sum(pick.tokens for pick in self.picks)


def named_servers(prompt: str, tools: Iterable[Tool]) -> list[str]:
    """Find the MCP servers that a prompt names.

    Args:
        prompt: The user's prompt.
        tools: The tools whose servers may be named.

    Returns:
        The servers, in order of first appearance among the tools.
    """
    words = " " + " ".join(w.lower() for w in _WORD.findall(prompt)) + " "
    found: list[str] = []
    for tool in tools:
        server = _server_of(tool)
        if not server or server in found:
            continue
        parts = _identifying_parts(server)
        if parts and f" {' '.join(parts)} " in words:
            found.append(server)
    return found


def preload(
    search: ToolSearch,
    prompt: str,
    budget: int = DEFAULT_BUDGET,
    min_score: float | None = None,
) -> Preload:
    """Choose the deferred tools to load before the first turn.

    Args:
        search: The ToolSearch over the registry (its ranker scores the prompt).
        prompt: The user's prompt.
        budget: The most definition tokens to add.
        min_score: The confidence threshold; the ranker's :data:`MIN_SCORE` by default.

    Returns:
        The picks (none when nothing is clear enough or nothing fits).
    """
    threshold = MIN_SCORE.get(search.ranker.name, float("inf")) if min_score is None else min_score
    deferred = {tool.name: tool for tool in search.registry.deferred()}
    candidates: list[tuple[str, str]] = []
    for server in named_servers(prompt, deferred.values()):
        required = " ".join(f"+{part}" for part in _identifying_parts(server))
        hits = [
            hit
            for hit in _search(search, f"{required} {prompt}", MAX_HITS * PER_SERVER)
            if hit.name in deferred and _server_of(deferred[hit.name]) == server
        ]
        candidates += [(hit.name, f"server {server!r} named") for hit in hits[:PER_SERVER]]
    candidates += [
        (hit.name, f"search score {hit.score:g}")
        for hit in _search(search, prompt, MAX_HITS)
        if hit.score >= threshold
    ]
    picks: list[Pick] = []
    spent = 0
    for name, reason in candidates:
        tool = deferred.get(name)
        if tool is None or name in {pick.name for pick in picks}:
            continue
        cost = definition_tokens([tool.definition()])
        if spent + cost <= budget:
            picks.append(Pick(name, reason, cost))
            spent += cost
    return Preload(tuple(picks), budget)


def _server_of(tool: Tool) -> str | None:
    """The MCP server of a tool: its ``server`` field, else the one its name gives."""
    return tool.server or parse_tool_name(tool.name).server


def _identifying_parts(server: str) -> list[str]:
    """The words of a server's name that identify it (generic words and numbers left out)."""
    return [p for p in split_name(server) if p not in GENERIC_WORDS and not p.isdigit()]


def _search(search: ToolSearch, query: str, limit: int) -> Sequence[SearchHit]:
    """Run a keyword search, treating a query with no words as finding nothing."""
    try:
        return search.search(query, max_results=limit)
    except SearchQueryError:
        return []
