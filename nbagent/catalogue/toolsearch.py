"""ToolSearch: how the model finds deferred tools.

A query is one of (first match wins):

- ``select:A,B``: exactly those tools, in that order (unknown names are skipped; if none
  is known the query fails with a message naming them);
- an exact tool name, case-insensitive: that tool alone;
- ``mcp__<server>`` or a longer prefix: the deferred tools whose names start with it;
- keywords: terms split on white space, ``+term`` required; ranked by a pluggable
  :class:`Ranker` (the reference ``keyword`` scoring by default).

The result goes to the model as ``tool_reference`` blocks, one per hit, which make the API
load those tools' full definitions.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from nbagent.catalogue import rankers
from nbagent.catalogue.registry import TOOL_SEARCH_NAME, RegistryChange, ToolRegistry
from nbagent.core.errors import ConfigurationError, SearchQueryError, ToolError, UnknownToolError
from nbagent.core.secrets import get_logger
from nbagent.core.text import MCP_PREFIX, Units, split_name
from nbagent.core.tool import Tool, ToolResult

log = get_logger(__name__)

DEFAULT_MAX_RESULTS = 5
"""How many tools a search returns unless asked otherwise."""

MAX_RESULTS_LIMIT = 50
"""The most tools one search may return (each one loads a full definition)."""

SELECT_PREFIX = "select:"
"""The query prefix that picks tools by exact name."""


@dataclass(frozen=True)
class ParsedToolName:
    """A tool name cut into what the search matches."""

    name: str
    """The full name."""
    parts: tuple[str, ...]
    """Lower-case parts (server and tool parts for MCP tools)."""
    is_mcp: bool
    """The name has the ``mcp__<server>__<tool>`` form."""
    server: str | None
    """The MCP server's name, for MCP names."""


def parse_tool_name(name: str) -> ParsedToolName:
    """Cut a tool name into parts.

    Args:
        name: A tool name such as ``mcp__slack__send_message`` or ``NotebookEdit``.

    Returns:
        The parsed name: ``mcp__slack__send_message`` gives parts ``slack, send, message``
        and server ``slack``.
    """
    is_mcp = name.lower().startswith(MCP_PREFIX) and "__" in name[len(MCP_PREFIX) :]
    server = name[len(MCP_PREFIX) :].split("__", 1)[0] if is_mcp else None
    return ParsedToolName(name=name, parts=split_name(name), is_mcp=is_mcp, server=server)


@dataclass(frozen=True)
class Term:
    """One keyword of a query."""

    text: str
    """The term as typed, lower-case, without its ``+``."""
    units: Units
    """Its words and CJK n-grams."""
    required: bool
    """A tool lacking this term is dropped (``+term``)."""


@dataclass(frozen=True)
class SearchHit:
    """One tool a search found."""

    name: str
    """The tool's name."""
    score: float
    """Its score (higher is better; not comparable across rankers)."""
    reasons: tuple[str, ...] = ()
    """Why it matched, one line per term, e.g. ``'slack' name part (12)``."""


class Ranker(Protocol):
    """Scores deferred tools against keyword terms. Implementations live in
    ``nbagent.catalogue.rankers``."""

    name: str
    """The ranker's name, as configured (``keyword``, ``bm25``, ...)."""

    @property
    def ranking(self) -> str:
        """How a query is ranked now: the name, or the fallback in use and why."""

    def index(self, tools: Sequence[Tool]) -> None:
        """Make ``tools`` the searched set, reusing what is already indexed where it can."""

    def update(self, added: Sequence[Tool], removed: Sequence[Tool]) -> None:
        """Remove ``removed`` from the searched set, then add ``added``, at the cost of those
        tools only (a re-registered tool is removed as the old one and added as the new)."""

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for work :meth:`index` left to a thread; whether it finished in time."""

    def rank(self, terms: Sequence[Term], limit: int) -> list[SearchHit]:
        """Return at most ``limit`` hits with a positive score, best first, ties by name."""


class IndexedAtOnce:
    """The part of :class:`Ranker` for rankers whose index is complete when ``index`` returns."""

    name: str

    @property
    def ranking(self) -> str:
        """How a query is ranked: always by this ranker's own scoring."""
        return self.name

    def wait(self, timeout: float | None = None) -> bool:
        """Return at once: nothing is left to a thread.

        Args:
            timeout: Unused.

        Returns:
            True.
        """
        return True


def _keyword_ranker() -> Ranker:
    from nbagent.catalogue.rankers.keyword import KeywordRanker

    return KeywordRanker()


RANKERS: dict[str, Callable[[], Ranker]] = {
    "keyword": _keyword_ranker,
    "bm25": rankers.bm25,
    "semantic": rankers.semantic,
    "hybrid": rankers.hybrid,
}
"""Ranker factories by name; other modules add theirs."""


def make_ranker(name: str) -> Ranker:
    """Build a ranker by name.

    Args:
        name: One of :data:`RANKERS`.

    Returns:
        A new ranker.

    Raises:
        ConfigurationError: No ranker has that name.
    """
    try:
        return RANKERS[name]()
    except KeyError:
        raise ConfigurationError(
            f"Unknown search ranker {name!r}; choose one of: {', '.join(sorted(RANKERS))}."
        ) from None


def parse_terms(query: str) -> list[Term]:
    """Split a keyword query into terms.

    Args:
        query: The query; terms are separated by white space and ``+`` marks a required one.

    Returns:
        The distinct terms in order (a term given as both optional and required is required).

    Raises:
        SearchQueryError: The query has no word to search for.
    """
    terms: dict[str, Term] = {}
    for raw in query.split():
        required = raw.startswith("+")
        text = raw.lstrip("+").lower().strip(".,;:!?\"'()[]{}<>")
        units = Units.of(text)
        if not units:
            continue
        if text not in terms or required:
            terms[text] = Term(
                text=text,
                units=units,
                required=required or (text in terms and terms[text].required),
            )
    if not terms:
        raise SearchQueryError(f"The query {query!r} has no words to search for.")
    return list(terms.values())


class ToolSearch:
    """Searches a registry's deferred tools; also available to the model as a Tool.

    The ranker's index is built once, then kept up to date change by change: the registry's
    change events name the tools added, removed or re-flagged, and only those are looked at
    again and passed to :meth:`Ranker.update`, so a change costs the size of the tools
    changed, never of the catalogue. Changes are applied at the latest on the next search,
    and, once :meth:`prepare` was called, on a thread of its own right after the change, so
    that the embedding rankers embed new tools before anyone searches.

    Args:
        registry: The registry to search.
        ranker: A ranker name from :data:`RANKERS` or a :class:`Ranker`.

    Raises:
        ConfigurationError: The ranker name is unknown.
    """

    def __init__(self, registry: ToolRegistry, ranker: str | Ranker = "keyword") -> None:
        self.registry = registry
        self.ranker: Ranker = make_ranker(ranker) if isinstance(ranker, str) else ranker
        self._lock = threading.Lock()
        self._built = False
        self._pending: set[str] = set()
        self._pending_lock = threading.Lock()
        self._deferred: dict[str, Tool] = {}
        self._deferred_lower: list[tuple[str, str]] = []
        self._by_name: dict[str, Tool] = {}
        self._lower_names: dict[str, list[str]] = {}
        self._changed = threading.Event()
        self._prepared = threading.Event()
        registry.subscribe(_refresh_later(self))

    def use(self, ranker: str | Ranker) -> None:
        """Rank with another ranker from the next search on (its index is built then).

        Args:
            ranker: A ranker name from :data:`RANKERS` or a :class:`Ranker`.

        Raises:
            ConfigurationError: The ranker name is unknown (the current ranker stays).
        """
        chosen = make_ranker(ranker) if isinstance(ranker, str) else ranker
        with self._lock:
            self.ranker, self._built = chosen, False
        self._changed.set()

    def search(self, query: str, max_results: int = DEFAULT_MAX_RESULTS) -> list[SearchHit]:
        """Run a query.

        Args:
            query: ``select:A,B``, an exact tool name, an ``mcp__server`` prefix, or keywords.
            max_results: How many hits at most, from 1 to :data:`MAX_RESULTS_LIMIT`.

        Returns:
            The hits, best first.

        Raises:
            SearchQueryError: The query is not a non-empty string, ``max_results`` is out of
                range, or no name given to ``select:`` is a tool.
        """
        query, max_results = _check(query, max_results)
        with self._lock:
            self._refresh()
            if query.lower().startswith(SELECT_PREFIX):
                return self._select(query[len(SELECT_PREFIX) :], max_results)
            exact = self._lookup(query)
            if exact is not None:
                return [SearchHit(exact.name, 1.0, ("exact name",))]
            if query.lower().startswith(MCP_PREFIX) and len(query.split()) == 1:
                return self._prefix(query, max_results)
            return self.ranker.rank(parse_terms(query), max_results)

    @property
    def fallback(self) -> str:
        """How searches are ranked while the ranker cannot use its full scoring, e.g.
        ``bm25 (loading the embedding models)``; empty when it can."""
        ranking = self.ranker.ranking
        return "" if ranking == self.ranker.name else ranking

    def prepare(self) -> None:
        """Index the deferred tools on a thread now, and again after every registry change.

        The kernel calls this once ``%load_ext`` is done, so that indexing (and the embedding
        models' loading) never competes with the load itself.
        """
        self._changed.set()
        self._prepared.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Index the deferred tools now and wait until the ranker's full scoring is ready.

        Searches never wait (they rank by a fallback meanwhile, see :attr:`Ranker.ranking`);
        scripts and benchmarks that want the full scoring call this first.

        Args:
            timeout: The most seconds to wait; ``None`` for no limit.

        Returns:
            Whether the ranker finished in time.
        """
        with self._lock:
            self._refresh()
        return self.ranker.wait(timeout)

    @cached_property
    def tool(self) -> Tool:
        """The ToolSearch tool the model calls; its result is ``tool_reference`` blocks."""
        return Tool(
            name=TOOL_SEARCH_NAME,
            description=TOOL_SEARCH_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": 'Keywords, "select:Name1,Name2", or "mcp__<server>".',
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS_LIMIT,
                        "default": DEFAULT_MAX_RESULTS,
                        "description": "The most tools to load.",
                    },
                },
                "required": ["query"],
            },
            handler=self._run,
            read_only=True,
            concurrency_safe=True,
            search_hint="find search load deferred tools",
        )

    def _run(self, query: str, max_results: int = DEFAULT_MAX_RESULTS) -> ToolResult:
        """Answer the model: tool_reference blocks, or a text saying what to try."""
        try:
            hits = self.search(query, max_results)
        except SearchQueryError as exc:
            raise ToolError(str(exc)) from exc
        metadata: dict[str, Any] = {"query": query, "hits": hits, "ranking": self.ranker.ranking}
        if fallback := self.fallback:
            metadata["fallback"] = fallback
        if not hits:
            return ToolResult(
                content=f"No deferred tool matched {query!r}. Try other words, or "
                '"select:Name1,Name2" with exact names from the announced list.',
                metadata=metadata,
            )
        return ToolResult(
            content=[{"type": "tool_reference", "tool_name": hit.name} for hit in hits],
            metadata=metadata,
        )

    def _select(self, names: str, max_results: int) -> list[SearchHit]:
        """Pick tools by exact name (case-insensitive when no exact match), in the given order."""
        wanted = [name.strip() for name in names.split(",") if name.strip()]
        if not wanted:
            raise SearchQueryError('"select:" needs tool names, e.g. "select:Read,Edit".')
        found: dict[str, SearchHit] = {}
        unknown: list[str] = []
        for name in wanted:
            tool = self._lookup(name)
            if tool is None:
                unknown.append(name)
            else:
                found.setdefault(tool.name, SearchHit(tool.name, 1.0, ("selected by name",)))
        if not found:
            raise SearchQueryError(
                f"No tool is named {', '.join(map(repr, unknown))}. Use names exactly as "
                "announced, or search with keywords."
            )
        return list(found.values())[:max_results]

    def _prefix(self, query: str, max_results: int) -> list[SearchHit]:
        """Deferred tools of one server (``mcp__github``) or whose names start with a longer
        prefix (``mcp__github__list``), by name."""
        prefix = query.lower()
        if "__" not in prefix[len(MCP_PREFIX) :]:
            prefix += "__"
        start = bisect.bisect_left(self._deferred_lower, (prefix,))
        hits: list[SearchHit] = []
        for lower, name in self._deferred_lower[start:]:
            if not lower.startswith(prefix) or len(hits) == max_results:
                break
            hits.append(SearchHit(name, 1.0, (f"name starts with {prefix!r}",)))
        return hits

    def _lookup(self, name: str) -> Tool | None:
        """Find a tool by exact name, else by name ignoring case (ToolSearch itself excluded)."""
        exact = self._by_name.get(name)
        if exact is not None:
            return exact
        same = self._lower_names.get(name.lower())
        if not same:
            return None
        if len(same) > 1:
            order = {n: i for i, n in enumerate(self.registry.names())}
            same.sort(key=lambda n: order.get(n, len(order)))
        return self._by_name.get(same[0])

    def _note(self, change: RegistryChange) -> None:
        """Remember the names a registry change touched, for the next refresh."""
        with self._pending_lock:
            self._pending.update(change.added, change.removed, change.reflagged)

    def _refresh(self) -> None:
        """Apply the registry's changes since the last refresh (index everything the first
        time and after :meth:`use`); call with the lock held, which searches hold too, so that
        a ranker is never changed while it ranks."""
        with self._pending_lock:
            names, self._pending = self._pending, set()
        if not self._built:
            self._built = True
            self._by_name, self._lower_names, self._deferred = {}, {}, {}
            self._apply(self.registry.names(), keep_sorted=False)
            self._deferred_lower = sorted((name.lower(), name) for name in self._deferred)
            self.ranker.index(list(self._deferred.values()))
        elif names:
            self.ranker.update(*self._apply(names))

    def _apply(
        self, names: Iterable[str], keep_sorted: bool = True
    ) -> tuple[list[Tool], list[Tool]]:
        """Bring these names' state up to the registry's; return the deferred tools to add to
        the ranker's index and those to remove from it (``keep_sorted`` false: the caller
        sorts the deferred names afterwards)."""
        added: list[Tool] = []
        removed: list[Tool] = []
        for name in names:
            try:
                tool: Tool | None = self.registry.get(name)
            except UnknownToolError:
                tool = None
            if name == TOOL_SEARCH_NAME:
                tool = None
            old = self._by_name.pop(name, None)
            if old is None and tool is not None:
                self._lower_names.setdefault(name.lower(), []).append(name)
            elif old is not None and tool is None:
                same = self._lower_names[name.lower()]
                same.remove(name)
                if not same:
                    del self._lower_names[name.lower()]
            if tool is not None:
                self._by_name[name] = tool
            deferred = tool if tool is not None and self.registry.is_deferred(tool) else None
            indexed = self._deferred.get(name)
            if indexed is deferred:
                continue
            if indexed is not None:
                removed.append(indexed)
                del self._deferred[name]
                if keep_sorted:
                    at = bisect.bisect_left(self._deferred_lower, (name.lower(), name))
                    del self._deferred_lower[at]
            if deferred is not None:
                added.append(deferred)
                self._deferred[name] = deferred
                if keep_sorted:
                    bisect.insort(self._deferred_lower, (name.lower(), name))
        return added, removed


def _refresh_later(search: ToolSearch) -> Callable[[Any], None]:
    """Make the registry subscriber that re-indexes ``search`` on a thread after a change.

    The thread starts indexing once :meth:`ToolSearch.prepare` was called; it holds the search
    weakly and ends once it is collected; the subscriber only notes the changed names and sets
    an event, so the registry's caller never waits for indexing.
    """
    reference = weakref.ref(search)
    changed, prepared = search._changed, search._prepared
    note = weakref.WeakMethod(search._note)

    def run() -> None:
        while not prepared.wait(60):
            if reference() is None:
                return
        while True:
            fired = changed.wait(60)
            current = reference()
            if current is None:
                return
            if fired:
                changed.clear()
                try:
                    with current._lock:
                        current._refresh()
                except Exception:
                    log.exception("ToolSearch could not index the deferred tools")
            del current

    def on_change(change: RegistryChange) -> None:
        method = note()
        if method is not None:
            method(change)
        changed.set()

    threading.Thread(target=run, name="nbagent-search-index", daemon=True).start()
    return on_change


def _check(query: Any, max_results: Any) -> tuple[str, int]:
    """Validate a query and a limit, returning the stripped query."""
    if not isinstance(query, str):
        raise SearchQueryError(f"The query must be a string, not {type(query).__name__}.")
    if not query.strip():
        raise SearchQueryError("The query is empty: give keywords, a tool name or select:Name.")
    if isinstance(max_results, bool) or not isinstance(max_results, int):
        raise SearchQueryError(f"max_results must be an integer, not {max_results!r}.")
    if not 1 <= max_results <= MAX_RESULTS_LIMIT:
        raise SearchQueryError(
            f"max_results must be between 1 and {MAX_RESULTS_LIMIT}, not {max_results}."
        )
    return query.strip(), max_results


TOOL_SEARCH_DESCRIPTION = """\
Load deferred tools so that you can call them. Deferred tools are announced by name only in \
<system-reminder> messages; until loaded their parameters are unknown and they cannot be \
called. This tool matches a query against the deferred tools and loads the best matches \
(their full definitions become available at once).

Query forms:
- "select:Read,Edit": load these exact tools.
- "notebook edit cell": keywords; the best matches by name, description and hints.
- "+slack send": "+" marks a word every result must match.
- "mcp__github": every tool of one MCP server (up to max_results).
Prefer one search that names what you need over many narrow ones."""
