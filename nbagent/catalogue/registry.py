"""ToolRegistry: the kernel-wide catalogue of tools, its deferral rules and change events, and
the rows every table of its tools lists (:meth:`ToolRegistry.rows`)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from nbagent.core.errors import DuplicateToolError, UnknownToolError
from nbagent.core.markup import escape_html
from nbagent.core.text import cut, description_line
from nbagent.core.tool import Tool

LOADED = "loaded"
"""The state of a tool whose definition is sent with every request."""
DEFERRED = "deferred"
"""The state of a tool the model knows by name only."""
LOADED_BY_SEARCH = "loaded by ToolSearch"
"""The state of a deferred tool the model has loaded with ToolSearch in this conversation."""
STATES = (LOADED, DEFERRED, LOADED_BY_SEARCH)
"""Every state of a tool in a session, in the order the browser's filter offers them."""

TOOL_SEARCH_NAME = "ToolSearch"
"""The name of the tool that loads deferred tools."""

AGENT_TOOL_NAME = "Agent"
"""The name of the sub-agent tool (never deferred)."""

BRIEF_TOOL_NAME = "Brief"
"""The name of the brief tool (never deferred)."""

TABLE_COLUMNS = ("name", "source", "state", "read-only", "description")
"""The columns of a table of tools (the registry's text and HTML, ``%tools``), in order."""
FLAGS = ("read_only", "concurrency_safe", "should_defer", "always_load")
"""The :class:`~nbagent.core.tool.Tool` flags a row lists, in order."""


@dataclass(frozen=True)
class RegistryChange:
    """One change of the registry, as sent to subscribers."""

    added: tuple[str, ...]
    """Names registered by this change (including replaced ones)."""
    removed: tuple[str, ...]
    """Names unregistered by this change."""
    reflagged: tuple[str, ...] = ()
    """Names whose deferral was overridden (see :meth:`ToolRegistry.override`)."""
    version: int = 0
    """The registry's version after the change."""


@dataclass(frozen=True)
class ContextCost:
    """Tokens the tool context takes, with every tool loaded and with deferral."""

    all_loaded: int
    """Every definition sent in full (ToolSearch left out: nothing to search)."""
    deferred: int
    """Loaded definitions plus ToolSearch plus the announcement of the deferred names."""

    @property
    def saved(self) -> float:
        """The share of the all-loaded tokens that deferral saves (0 to 1)."""
        return 1 - self.deferred / self.all_loaded if self.all_loaded else 0.0


@dataclass(frozen=True)
class ToolRow:
    """One tool as every table of the registry lists it (see :meth:`ToolRegistry.rows`)."""

    name: str
    """The tool's name."""
    source: str
    """``python``, ``mcp:<server>`` for an MCP server's tool, ``api`` for a server tool."""
    state: str
    """One of :data:`STATES`."""
    description: str
    """The first sentence of its description, cut to one line."""
    flags: tuple[str, ...]
    """The :data:`FLAGS` set on it."""
    tool: Tool = field(repr=False, compare=False)
    """The tool itself (its whole description and schema, for a view that opens a row)."""

    @property
    def cells(self) -> tuple[str, str, str, str, str]:
        """The row's texts under :data:`TABLE_COLUMNS`."""
        read_only = "yes" if "read_only" in self.flags else ""
        return (self.name, self.source, self.state, read_only, self.description)


Subscriber = Callable[[RegistryChange], None]


class ToolRegistry:
    """A thread-safe catalogue of tools, keyed by name, in registration order.

    MCP connections register and unregister tools from a background thread while the agent
    reads the registry on the kernel's thread, so every method takes a lock; subscribers are
    called after the lock is released, in the order of the changes.

    Args:
        tools: Tools to register at once.
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._subscribers: list[Subscriber] = []
        self._lock = threading.RLock()
        self._notify_lock = threading.Lock()
        self._version = 0
        self._overrides: dict[str, bool] = {}
        self._partition: tuple[int, tuple[Tool, ...], tuple[Tool, ...], frozenset[str]] | None
        self._partition = None
        """The loaded and the deferred tools and the deferred names, with the version they
        were split at."""
        self._tokens: dict[str, tuple[Tool, int]] = {}
        """Each tool's definition tokens, by name, with the tool they were counted for."""
        self._costs: dict[str, tuple[int, ContextCost]] = {}
        """The last :meth:`context_cost` of each style, with the version it was measured at."""
        self._lines: dict[str, dict[str, int]] = {}
        """The tokens of each line of the last announcement counted, by style."""
        self.register_many(tools)

    @property
    def version(self) -> int:
        """A number that grows with every change (a cheap cache key)."""
        return self._version

    def register(self, tool: Tool, replace: bool = False) -> Tool:
        """Add a tool.

        Args:
            tool: The tool.
            replace: Replace a tool of the same name instead of failing.

        Returns:
            The tool.

        Raises:
            DuplicateToolError: The name is in use and ``replace`` is false.
        """
        self.register_many([tool], replace=replace)
        return tool

    def register_many(self, tools: Iterable[Tool], replace: bool = False) -> None:
        """Add several tools as one change (one event), all or none.

        Args:
            tools: The tools.
            replace: Replace tools of the same names instead of failing.

        Raises:
            DuplicateToolError: A name is in use (or repeated) and ``replace`` is false.
        """
        batch = list(tools)
        with self._lock:
            if not replace:
                seen: set[str] = set()
                for tool in batch:
                    if tool.name in self._tools or tool.name in seen:
                        raise DuplicateToolError(
                            f"A tool named {tool.name!r} is already registered; "
                            "pass replace=True to replace it."
                        )
                    seen.add(tool.name)
            for tool in batch:
                self._tools[tool.name] = tool
                self._tokens.pop(tool.name, None)
            change = self._changed(added=tuple(t.name for t in batch), removed=())
        self._notify(change)

    def unregister(self, name: str) -> Tool:
        """Remove a tool.

        Args:
            name: The tool's name.

        Returns:
            The removed tool.

        Raises:
            UnknownToolError: No tool has that name.
        """
        tool = self.get(name)
        self.unregister_many([name])
        return tool

    def unregister_many(self, names: Iterable[str]) -> None:
        """Remove the named tools that are registered, as one change; unknown names are ignored.

        Args:
            names: The tools' names.
        """
        with self._lock:
            removed = tuple(name for name in dict.fromkeys(names) if self._tools.pop(name, None))
            for name in removed:
                self._tokens.pop(name, None)
            change = self._changed(added=(), removed=removed)
        self._notify(change)

    def get(self, name: str) -> Tool:
        """Return the tool of that name.

        Args:
            name: The tool's name.

        Returns:
            The tool.

        Raises:
            UnknownToolError: No tool has that name.
        """
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(f"No tool named {name!r} is registered.") from None

    def names(self) -> list[str]:
        """Return the names of all tools, in registration order."""
        with self._lock:
            return list(self._tools)

    def tools(self) -> list[Tool]:
        """Return all tools, in registration order."""
        with self._lock:
            return list(self._tools.values())

    def __contains__(self, name: object) -> bool:
        """Tell whether a tool of that name is registered."""
        return name in self._tools

    def __len__(self) -> int:
        """Return the number of tools."""
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        """Iterate over a snapshot of the tools, in registration order."""
        return iter(self.tools())

    def override(self, name: str, deferred: bool | None) -> None:
        """Force a tool loaded or deferred whatever its flags (configuration beats flags).

        The override applies to the name, registered now or later; ToolSearch itself is never
        deferred.

        Args:
            name: The tool's name.
            deferred: True to defer, False to load, None to go back to the flags.
        """
        with self._lock:
            if deferred is None:
                changed = self._overrides.pop(name, None) is not None
            else:
                changed = self._overrides.get(name) is not deferred
                self._overrides[name] = deferred
            change = self._changed(added=(), removed=(), reflagged=(name,) if changed else ())
        self._notify(change)

    def is_deferred(self, tool: Tool) -> bool:
        """Apply an override, else the deferral rules; the first that matches decides.

        1. ``always_load`` -> loaded. 2. ``is_mcp`` -> deferred. 3. ToolSearch -> loaded.
        4. the Agent tool -> loaded. 5. the Brief tool -> loaded. 6. ``should_defer``.

        Args:
            tool: The tool.

        Returns:
            Whether the model sees only the tool's name until it loads it with ToolSearch.
        """
        override = self._overrides.get(tool.name)
        if override is not None and tool.name != TOOL_SEARCH_NAME:
            return override
        return deferral_rule(tool)

    def overrides(self) -> dict[str, bool]:
        """Return the deferral overrides in force (name -> deferred)."""
        with self._lock:
            return dict(self._overrides)

    def loaded(self) -> list[Tool]:
        """Return the tools whose full definitions are always sent."""
        return list(self._split()[0])

    def deferred(self) -> list[Tool]:
        """Return the tools offered by name only."""
        return list(self._split()[1])

    def deferred_names(self) -> frozenset[str]:
        """Return the names of the tools offered by name only: the same object until the
        registry changes (so that a caller can tell nothing changed by identity)."""
        return self._split()[2]

    def _split(self) -> tuple[tuple[Tool, ...], tuple[Tool, ...], frozenset[str]]:
        """The loaded and the deferred tools and the deferred names, worked out once per
        version."""
        with self._lock:
            if self._partition is None or self._partition[0] != self._version:
                tools = list(self._tools.values())
                deferred = [self.is_deferred(t) for t in tools]
                later = tuple(t for t, d in zip(tools, deferred, strict=True) if d)
                self._partition = (
                    self._version,
                    tuple(t for t, d in zip(tools, deferred, strict=True) if not d),
                    later,
                    frozenset(t.name for t in later),
                )
            return self._partition[1:]

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(change)`` after every change.

        Args:
            callback: Receives a :class:`RegistryChange`; its exceptions propagate to the
                code that changed the registry, so keep it simple.

        Returns:
            A function that unsubscribes the callback.
        """
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def context_cost(self, style: str = "plain") -> ContextCost:
        """Measure the tool context in tokens, all loaded versus deferred.

        Every ``%%agent`` cell asks, so the work follows what changed, not the catalogue's
        size: with no change since the last call the answer is the last one; after a change
        only the definitions of tools registered since are counted (each tool's count is kept
        while that very tool stays registered: a changed tool is a new :class:`Tool`), and
        only the lines of the announcement of the deferred names that are new.

        Args:
            style: How the deferred names are announced: ``plain`` or ``compact``.

        Returns:
            The two token counts (see :class:`ContextCost`).
        """
        with self._lock:
            version = self._version
            if (last := self._costs.get(style)) is not None and last[0] == version:
                return last[1]
            tools = list(self._tools.values())
            deferred = {t.name for t in tools if self.is_deferred(t)}
            known = {t.name: n for t in tools if (n := self._counted(t)) is not None}
        fresh = [t for t in tools if t.name not in known]
        if fresh:
            counts = definition_costs(fresh)
            known.update(zip((t.name for t in fresh), counts, strict=True))
            with self._lock:
                for tool, count in zip(fresh, counts, strict=True):
                    if self._tools.get(tool.name) is tool:
                        self._tokens[tool.name] = (tool, count)
        others = [t.name for t in tools if t.name != TOOL_SEARCH_NAME]
        search = known.get(TOOL_SEARCH_NAME)
        cost = ContextCost(
            all_loaded=sum(known[n] for n in others),
            deferred=sum(known[n] for n in others if n not in deferred)
            + (_search_tool_tokens() if search is None else search)
            + self._announcement_tokens([n for n in others if n in deferred], style),
        )
        with self._lock:
            if self._version == version:
                self._costs[style] = (version, cost)
        return cost

    def _announcement_tokens(self, names: list[str], style: str) -> int:
        """Count the announcement of deferred names line by line, counting only lines this
        registry has not counted in this style at its last count.

        Lines count apart exactly as together: the tokenizer splits a line break from the
        text before it unless that ends in a space, and no name or header does.
        """
        from nbagent.catalogue.delta import render_announcement
        from nbagent.core.tokens import count_many

        text = render_announcement(added=names, style=style)  # type: ignore[arg-type]
        lines = text.splitlines(keepends=True)
        known = self._lines.get(style, {})
        fresh = [line for line in dict.fromkeys(lines) if line not in known]
        counted = dict(zip(fresh, count_many(fresh), strict=True)) if fresh else {}
        current = {line: known[line] if line in known else counted[line] for line in lines}
        with self._lock:
            self._lines[style] = current
        return sum(current[line] for line in lines)

    def _counted(self, tool: Tool) -> int | None:
        """The definition tokens counted for this very tool, or None (call with the lock)."""
        entry = self._tokens.get(tool.name)
        return entry[1] if entry is not None and entry[0] is tool else None

    def rows(
        self, tools: Iterable[Tool] | None = None, loaded_by_search: Collection[str] = ()
    ) -> list[ToolRow]:
        """The rows of a table of tools: what every table shows of a tool, and its state.

        Args:
            tools: The tools to list; every tool, in registration order, by default.
            loaded_by_search: Names of the deferred tools the model has loaded with
                ToolSearch (see :meth:`state`).

        Returns:
            One row per tool, in order.
        """
        found = set(loaded_by_search)
        return [
            ToolRow(
                name=tool.name,
                source=tool.source,
                state=self.state(tool, found),
                description=description_line(tool.description),
                flags=tuple(flag for flag in FLAGS if getattr(tool, flag)),
                tool=tool,
            )
            for tool in (self.tools() if tools is None else tools)
        ]

    def __repr__(self, loaded_by_search: Collection[str] = ()) -> str:
        """Show the registry as a plain-text table.

        Args:
            loaded_by_search: Names of the deferred tools the model has loaded with
                ToolSearch, shown as such (``repr()`` passes none: the registry alone cannot
                know them).
        """
        rows = self.rows(loaded_by_search=loaded_by_search)
        lines = [row.cells[:4] + (cut(row.description, 80),) for row in rows]
        widths = [max([len(TABLE_COLUMNS[i]), *(len(r[i]) for r in lines)]) for i in range(4)]
        text = [f"ToolRegistry: {_counts(rows)}"]
        for line in [TABLE_COLUMNS, *lines]:
            cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=False))
            text.append("  ".join(cells) + "  " + line[4])
        return "\n".join(text)

    def _repr_html_(self, loaded_by_search: Collection[str] = ()) -> str:
        """Show the registry as an HTML table in a notebook (all text escaped).

        Args:
            loaded_by_search: Names of the deferred tools the model has loaded with
                ToolSearch, shown as such (IPython passes none).
        """
        rows = self.rows(loaded_by_search=loaded_by_search)
        body = "".join(
            _html_row(
                "td", (f"<code>{escape_html(row.name)}</code>", *map(escape_html, row.cells[1:]))
            )
            for row in rows
        )
        return (
            f"<p><b>ToolRegistry</b>: {_counts(rows)}</p>"
            f"<table><thead>{_html_row('th', TABLE_COLUMNS)}</thead><tbody>{body}</tbody></table>"
        )

    def state(self, tool: Tool, loaded_by_search: Collection[str] = ()) -> str:
        """Say a tool's state in this session: one of :data:`STATES`.

        Args:
            tool: The tool.
            loaded_by_search: Names of the tools the model has loaded with ToolSearch (the
                registry alone cannot know them: the agent does).

        Returns:
            ``loaded by ToolSearch`` for a deferred tool the model loaded, else ``deferred``
            or ``loaded``.
        """
        if not self.is_deferred(tool):
            return LOADED
        return LOADED_BY_SEARCH if tool.name in loaded_by_search else DEFERRED

    def _changed(
        self, added: tuple[str, ...], removed: tuple[str, ...], reflagged: tuple[str, ...] = ()
    ) -> RegistryChange | None:
        """Bump the version for a non-empty change (call with the lock held)."""
        if not added and not removed and not reflagged:
            return None
        self._version += 1
        return RegistryChange(added, removed, reflagged, self._version)

    def _notify(self, change: RegistryChange | None) -> None:
        """Send a change to the subscribers, one change at a time."""
        if change is None:
            return
        with self._notify_lock:
            for callback in list(self._subscribers):
                callback(change)


def _counts(rows: Sequence[ToolRow]) -> str:
    """The line above a table: ``3 tools, 1 deferred, 1 loaded by ToolSearch``."""
    deferred = sum(row.state == DEFERRED for row in rows)
    loaded = sum(row.state == LOADED_BY_SEARCH for row in rows)
    return f"{len(rows)} tools, {deferred} deferred" + (
        f", {loaded} {LOADED_BY_SEARCH}" if loaded else ""
    )


def _html_row(tag: str, cells: Sequence[str]) -> str:
    """One HTML table row of ``td`` or ``th`` cells, the last (the description) aligned left:
    JupyterLab aligns table cells right."""
    *first, last = cells
    return (
        "<tr>"
        + "".join(f"<{tag}>{cell}</{tag}>" for cell in first)
        + f'<{tag} style="text-align: left">{last}</{tag}></tr>'
    )


def definition_costs(tools: Sequence[Tool]) -> list[int]:
    """Count the tokens of each tool's definition as the API receives it, in one batch.

    Args:
        tools: The tools.

    Returns:
        One count per tool, in order.
    """
    from nbagent.core.tokens import compact_json, count_many

    return count_many(compact_json(t.definition()) for t in tools)


@functools.cache
def _search_tool_tokens() -> int:
    """The definition tokens of the ToolSearch tool, for a registry that has none."""
    from nbagent.catalogue.toolsearch import ToolSearch

    return definition_costs([ToolSearch(ToolRegistry()).tool])[0]


def deferral_rule(tool: Tool) -> bool:
    """The deferral rules of a tool's own flags, in order (no overrides).

    Args:
        tool: The tool.

    Returns:
        Whether the tool is deferred.
    """
    if tool.always_load:
        return False
    if tool.is_mcp:
        return True
    if tool.name in (TOOL_SEARCH_NAME, AGENT_TOOL_NAME, BRIEF_TOOL_NAME):
        return False
    return tool.should_defer
