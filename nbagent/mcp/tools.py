"""A server's tools: names, Tools built from its listings, and their place in the registry.

An MCP tool ``send-message`` of server ``slack`` becomes the deferred tool
``mcp__slack__send-message``. Names are cleaned to the API's rule
(``^[a-zA-Z0-9_-]{1,64}$``): other characters become ``_``; a server name loses doubled
and outer underscores (``__`` separates the server from the tool); a name longer than 64
characters is cut and ends in a short hash of the whole, so that it stays unique.

:class:`ServerTools` keeps one server's tools in the registry: each new listing is applied
as a diff (gone tools unregistered, new and changed ones registered, one event each).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ToolDefinitionError
from nbagent.core.schema_upgrade import UnusableSchema, prepare
from nbagent.core.secrets import get_logger
from nbagent.core.text import MCP_PREFIX
from nbagent.core.tool import Tool

logger = get_logger("nbagent.mcp")

MAX_NAME = 64
"""The API's limit on tool names."""

SERVER_CHARS = 24
"""The longest server part of a tool name; a longer server name is shortened with a hash."""

_BAD_CHARACTERS = re.compile(r"[^a-zA-Z0-9_-]")


def clean_server_name(name: str) -> str:
    """Clean a server's name for use inside tool names.

    Args:
        name: The name from the configuration.

    Returns:
        Letters, digits, ``_`` and ``-`` only, without ``__`` and without ``_`` at either end
        (``my.db`` -> ``my_db``), so that ``mcp__<server>__<tool>`` splits back; a name
        with nothing left (``日本``) becomes ``s`` and a short hash of it.
    """
    cleaned = re.sub(r"_{2,}", "_", _BAD_CHARACTERS.sub("_", name)).strip("_")
    return cleaned or f"s{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def server_part(server: str) -> str:
    """The server's part of its tools' names: its cleaned name, shortened when long.

    A name longer than :data:`SERVER_CHARS` keeps its start and gains a short hash of the
    whole name (``my-company-internal-docs-server`` -> ``my-company-intern_1a2b3c``), the
    same for every tool of the server, so that the tool's own part keeps room to be read.

    Args:
        server: The server's name from the configuration.

    Returns:
        What stands between ``mcp__`` and the next ``__``.
    """
    cleaned = clean_server_name(server)
    if len(cleaned) <= SERVER_CHARS:
        return cleaned
    digest = hashlib.sha256(server.encode()).hexdigest()[:6]
    return f"{cleaned[: SERVER_CHARS - 7].rstrip('_')}_{digest}"


def tool_name(server: str, tool: str) -> str:
    """Name an MCP tool for the model: ``mcp__<server>__<tool>``, cleaned and at most 64 long.

    A long server name is shortened first (:func:`server_part`); a tool name still too long
    keeps its start and ends in a short hash that keeps it unique. The tool's name on the
    server is kept beside the Tool for calls (:attr:`Listing.remote_names`).

    Args:
        server: The server's name.
        tool: The tool's name on that server.

    Returns:
        A name that matches ``^[a-zA-Z0-9_-]{1,64}$``.
    """
    name = f"{MCP_PREFIX}{server_part(server)}__{_BAD_CHARACTERS.sub('_', tool) or '_'}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


@dataclass(frozen=True)
class Listing:
    """The Tools built from one server's tool listing."""

    tools: dict[str, Tool]
    """The usable tools, by registered name."""
    remote_names: dict[str, str]
    """Each registered name's tool name on the server."""
    skipped: tuple[str, ...] = ()
    """One line per tool left out, saying why."""
    adjusted: tuple[str, ...] = ()
    """One line per change made to a loaded tool's schema so that the API takes it."""
    mended: tuple[str, ...] = ()
    """One line per other change made to a listed tool (a description cut, ...)."""

    def first(self, count: int) -> Listing:
        """Return the listing with its first ``count`` tools only (the others unregistered).

        Args:
            count: How many tools to keep, in listing order.
        """
        if count >= len(self.tools):
            return self
        names = list(self.tools)[:count]
        return Listing(
            tools={name: self.tools[name] for name in names},
            remote_names={name: self.remote_names[name] for name in names},
            skipped=self.skipped,
            adjusted=self.adjusted,
            mended=self.mended,
        )


def build_tools(
    server: str,
    listed: Iterable[Any],
    call: Callable[[str, dict[str, Any]], Any],
    refused: Mapping[str, str] | None = None,
    typed: Collection[str] = (),
    mended: Iterable[str] = (),
) -> Listing:
    """Turn a server's ``tools/list`` entries into deferred Tools.

    Each input schema is made into draft 2020-12 (:func:`~nbagent.core.schema_upgrade.prepare`);
    a tool whose schema cannot be (its root is not an object) or whose name clashes once
    cleaned is skipped with a warning; the others load.

    Args:
        server: The server's name.
        listed: The listing's ``mcp_types.Tool`` entries, every page.
        call: ``call(remote_name, arguments)``, what each tool's handler runs.
        refused: Tools the SDK could not read, taken out of the listing before it (by
            :class:`~nbagent.mcp.listing.ListingGuard`), with why.
        typed: Tools whose root schema was given ``"type": "object"`` on the way.
        mended: Other changes made to listed tools on the way, one line each.

    Returns:
        The tools, their remote names, what was skipped and what was changed.
    """
    tools: dict[str, Tool] = {}
    remote: dict[str, str] = {}
    skipped = [f"{name}: the server lists it with {why}" for name, why in (refused or {}).items()]
    adjusted: list[str] = []
    for entry in listed:
        name = tool_name(server, entry.name)
        if name in tools:
            skipped.append(f"{entry.name}: its name clashes with {remote[name]!r} as {name}")
            continue
        annotations = entry.annotations
        read_only = bool(annotations and annotations.read_only_hint)
        try:
            prepared = prepare(entry.input_schema)
            tools[name] = Tool(
                name=name,
                description=entry.description or "",
                input_schema=prepared.schema,
                handler=_handler(call, entry.name),
                read_only=read_only,
                concurrency_safe=read_only,
                search_hint=entry.title or (annotations.title if annotations else None) or "",
                is_mcp=True,
                server=server,
            )
        except (UnusableSchema, ToolDefinitionError) as exc:
            what = f"its inputSchema: {exc}" if isinstance(exc, UnusableSchema) else str(exc)
            skipped.append(f"{entry.name}: {what}")
            continue
        remote[name] = entry.name
        changes = (['(root): "type": "object" added'] if entry.name in typed else []) + list(
            prepared.changes
        )
        adjusted += [f"{entry.name}: inputSchema {change}" for change in changes]
    for line in skipped:
        logger.warning("MCP server %r: skipped tool %s", server, line)
    return Listing(
        tools=tools,
        remote_names=remote,
        skipped=tuple(skipped),
        adjusted=tuple(adjusted),
        mended=tuple(mended),
    )


def same_definition(a: Tool, b: Tool) -> bool:
    """Tell whether two tools look the same to the model and the search.

    Args:
        a: One tool.
        b: The other.

    Returns:
        True when name, description, schema, hint and flags are equal.
    """
    return (a.definition(), a.search_hint, a.read_only) == (
        b.definition(),
        b.search_hint,
        b.read_only,
    )


def _handler(call: Callable[[str, dict[str, Any]], Any], remote: str) -> Callable[..., Any]:
    """Make a handler that forwards its keyword arguments to ``call(remote, ...)``."""

    def handler(**arguments: Any) -> Any:
        return call(remote, arguments)

    return handler


class ServerTools:
    """One server's tools in the registry (changed on the manager's thread, read anywhere).

    Args:
        server: The server's name.
        registry: The registry.
    """

    def __init__(self, server: str, registry: ToolRegistry) -> None:
        self.server = server
        self.registry = registry
        self._tools: dict[str, Tool] = {}

    def __len__(self) -> int:
        """Return how many of the server's tools are registered."""
        return len(self._tools)

    def tools(self) -> list[Tool]:
        """Return the server's registered tools, in listing order."""
        return list(self._tools.values())

    def publish(self, listing: Listing) -> tuple[str, ...]:
        """Bring the registry in line with a listing.

        Gone tools are unregistered, new and changed ones registered (one event each);
        tools that did not change are left alone.

        Args:
            listing: The server's latest listing.

        Returns:
            The listing's skipped lines, plus a line for each name another tool holds.
        """
        old = self._tools
        skipped = list(listing.skipped)
        changed: dict[str, Tool] = {}
        for name, tool in listing.tools.items():
            if name in old and same_definition(old[name], tool):
                continue
            if name not in old and name in self.registry:
                skipped.append(f"{listing.remote_names[name]}: {name} is taken by another tool")
                continue
            changed[name] = tool
        gone = [name for name in old if name not in listing.tools]
        self._tools = {
            name: changed.get(name) or old[name]
            for name in listing.tools
            if name in changed or name in old
        }
        if gone:
            self._change(self.registry.unregister_many, gone)
        if changed:
            self._change(self.registry.register_many, changed.values(), replace=True)
        return tuple(skipped)

    def clear(self) -> bool:
        """Unregister all of the server's tools (one event).

        Returns:
            Whether there were any.
        """
        names, self._tools = list(self._tools), {}
        if names:
            self._change(self.registry.unregister_many, names)
        return bool(names)

    def _change(self, change: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """Apply a registry change; a subscriber that fails is logged, and cannot stop us."""
        try:
            change(*args, **kwargs)
        except Exception:
            logger.exception(
                "A registry subscriber failed on a change by MCP server %r", self.server
            )
