"""Build a Messages API request from the registry, the conversation and the deferral mode.

Modes:

- ``native``: every definition is sent; deferred ones carry ``defer_loading: true`` and the
  ToolSearch tool's ``tool_reference`` results make the API load them.
- ``client``: for endpoints without tool references; deferred tools are not sent until
  ToolSearch finds them, then the client sends their full definitions itself.
- ``server``: the API's own tool search tool replaces ToolSearch.
- ``off``: every tool loaded in full, no search (the baseline).

The prompt-cache breakpoints go on the last loaded tool (never on a deferred one) and on the
last block of the last user turn. Tools the model has loaded but that have left the
registry stay in ``tools`` (deferred), because the history still references them and the API
rejects a reference to a tool it is not given.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nbagent.catalogue.delta import render_legacy_block
from nbagent.catalogue.registry import TOOL_SEARCH_NAME, ToolRegistry
from nbagent.core.errors import ConfigurationError
from nbagent.core.tool import Tool
from nbagent.loop.options import MODES, Mode

SERVER_SEARCH_TOOLS: dict[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
"""The API's server-side tool search tools, by variant."""

CACHE_CONTROL = {"type": "ephemeral"}
"""The breakpoint marker."""

MAX_DEFERRED_TOOLS = 10_000
"""The most tools with ``defer_loading`` one request may carry (the API's limit)."""


def check_mode(mode: str) -> Mode:
    """Validate a mode name.

    Args:
        mode: The name.

    Returns:
        The mode.

    Raises:
        ConfigurationError: The name is not a mode.
    """
    if mode not in MODES:
        raise ConfigurationError(f"Unknown mode {mode!r}; choose one of: {', '.join(MODES)}.")
    return mode  # type: ignore[return-value]


def build_tools(
    registry: ToolRegistry,
    mode: Mode,
    search_tool: Tool,
    loaded_names: Sequence[str],
    retained: Mapping[str, Tool],
    server_search: str = "bm25",
    preloaded: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """List the tool definitions of a request.

    What depends on the registry alone (which tools are sent in full, which deferred, and
    their definitions) is worked out once per registry version and reused: a request with
    10,000 deferred tools costs a list copy, not 10,000 definitions. The definitions are
    shared between requests (:func:`definition_of`), and so is the list when nothing it is
    built from changed since the registry's last request: never change either in place.

    Args:
        registry: The tools.
        mode: The deferral mode.
        search_tool: The ToolSearch tool (sent in ``native`` and ``client`` modes).
        loaded_names: Deferred tools the model has loaded, in the order it loaded them.
        retained: Tools the model loaded that have since left the registry.
        server_search: ``bm25`` or ``regex``, for ``server`` mode.
        preloaded: Deferred tools sent in full from the first request (predictive
            preloading), in ``native`` and ``server`` modes.

    Returns:
        Definitions, loaded first (the last one carrying the cache breakpoint), then the
        deferred ones.

    Raises:
        ConfigurationError: More deferred tools than the API takes in one request, in
            ``native`` or ``server`` mode.
    """
    search = search_tool.definition() if mode in ("native", "client") else None
    key = (
        registry.version,  # read first: a change meanwhile builds them again
        mode,
        tuple(loaded_names),
        tuple((name, id(tool)) for name, tool in retained.items()),
        server_search,
        tuple(preloaded),
    )
    built = _BUILT.get(registry)
    if built is not None and built.key == key and built.search == search:
        return built.tools
    tools = _built(registry, mode, search, loaded_names, retained, server_search, preloaded)
    _BUILT[registry] = _Built(key, search, tools)
    return tools


@dataclass(frozen=True)
class _Built:
    """The tools a registry's last request sent, and what they were built from."""

    key: tuple[Any, ...]
    search: dict[str, Any] | None
    tools: list[dict[str, Any]]


_BUILT: weakref.WeakKeyDictionary[ToolRegistry, _Built] = weakref.WeakKeyDictionary()
"""The last tools built for each registry: the same list for requests that send the same
tools, so that encoding them again is found unneeded at once (:mod:`nbagent.api.body`)."""


def _built(
    registry: ToolRegistry,
    mode: Mode,
    search: dict[str, Any] | None,
    loaded_names: Sequence[str],
    retained: Mapping[str, Tool],
    server_search: str,
    preloaded: Sequence[str],
) -> list[dict[str, Any]]:
    """The tools of a request, built (see :func:`build_tools`)."""
    early = frozenset(preloaded) if mode not in ("client", "off") else frozenset()
    split = _split(registry, mode == "off", early)
    if mode == "off":
        return _with_breakpoint(list(split.loaded), len(split.loaded))
    loaded = list(split.loaded)
    if mode == "server" or search is None:
        loaded.append(dict(SERVER_SEARCH_TOOLS[server_search]))
    else:
        loaded.append(search)
    gone = [t for name, t in retained.items() if name not in registry]
    if mode == "client":
        by_name = {**split.deferred_by_name, **{t.name: t for t in gone}}
        extra = [definition_of(by_name[name]) for name in loaded_names if name in by_name]
    else:
        extra = [*split.deferred, *(deferred_definition_of(t) for t in gone)]
        if len(extra) > MAX_DEFERRED_TOOLS:
            raise ConfigurationError(
                f"{len(extra):,} deferred tools are registered, and in {mode} mode every one "
                f"is sent: the API takes at most {MAX_DEFERRED_TOOLS:,}. Run the cell with "
                "`%%agent --mode client` (ToolSearch then sends only the definitions it "
                "finds), or unregister tools (`nbagent.registry.unregister(name)`, or "
                '`"max_tools": N` in an MCP server\'s entry).'
            )
    return _with_breakpoint(loaded + extra, len(loaded))


def definition_of(tool: Tool) -> dict[str, Any]:
    """A tool's definition (:meth:`~nbagent.core.tool.Tool.definition`), built once per tool.

    A tool does not change (a changed tool is a new object), so its definition is kept for
    as long as the tool lives and shared by every request: never change it in place.

    Args:
        tool: The tool.
    """
    found = _DEFINITIONS.get(tool)
    if found is None:
        found = _DEFINITIONS[tool] = tool.definition()
    return found


def deferred_definition_of(tool: Tool) -> dict[str, Any]:
    """A deferred tool's definition, with ``defer_loading``, built once per tool (shared as
    :func:`definition_of`'s).

    Args:
        tool: The tool.
    """
    found = _DEFERRED_DEFINITIONS.get(tool)
    if found is None:
        found = _DEFERRED_DEFINITIONS[tool] = {**definition_of(tool), "defer_loading": True}
    return found


_DEFINITIONS: weakref.WeakKeyDictionary[Tool, dict[str, Any]] = weakref.WeakKeyDictionary()
_DEFERRED_DEFINITIONS: weakref.WeakKeyDictionary[Tool, dict[str, Any]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _Split:
    """A registry's tools as a request sends them, at one version."""

    key: tuple[int, bool, frozenset[str]]
    """The registry's version, whether everything is loaded (``off``), the preloaded names."""
    loaded: tuple[dict[str, Any], ...]
    """The definitions sent in full, in registration order (ToolSearch left out)."""
    deferred: tuple[dict[str, Any], ...]
    """The deferred definitions, with ``defer_loading``."""
    deferred_by_name: dict[str, Tool]
    """The deferred tools, by name."""


_SPLITS: weakref.WeakKeyDictionary[ToolRegistry, _Split] = weakref.WeakKeyDictionary()
"""The last split of each registry."""


def _split(registry: ToolRegistry, everything: bool, early: frozenset[str]) -> _Split:
    """Which of a registry's tools are sent in full and which deferred; reused until the
    registry changes."""
    key = (registry.version, everything, early)  # read first: a change meanwhile splits again
    split = _SPLITS.get(registry)
    if split is not None and split.key == key:
        return split
    tools = [t for t in registry.tools() if t.name != TOOL_SEARCH_NAME]
    deferred = [
        t for t in tools if not everything and registry.is_deferred(t) and t.name not in early
    ]
    held_back = {id(t) for t in deferred}
    split = _Split(
        key=key,
        loaded=tuple(definition_of(t) for t in tools if id(t) not in held_back),
        deferred=tuple(deferred_definition_of(t) for t in deferred),
        deferred_by_name={t.name: t for t in deferred},
    )
    _SPLITS[registry] = split
    return split


def build_messages(
    messages: Sequence[Mapping[str, Any]], legacy_names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The history as a request sends it: the user-turn breakpoint added (and the legacy list).

    The messages are the history's own objects, but for the ones changed here (copies): so
    that what a request shares with the one before is the same objects
    (:mod:`nbagent.api.body` encodes those once).

    Args:
        messages: The conversation; not modified.
        legacy_names: In legacy mode, every deferred name, listed at the head of the first
            user message (this changes the cached prefix whenever the set changes).

    Returns:
        The request's messages.
    """
    # A list's slice is copied at C speed, a list subclass's (a TrackedList) too.
    result: list[dict[str, Any]] = messages[:] if isinstance(messages, list) else list(messages)  # type: ignore[assignment,arg-type]
    if legacy_names is not None and result:
        first = result[0]
        block = {"type": "text", "text": render_legacy_block(legacy_names)}
        result[0] = {**first, "content": [block, *content_blocks(first["content"])]}
    put_breakpoint(result)
    return result


def put_breakpoint(messages: list[dict[str, Any]]) -> int | None:
    """Put the user-turn breakpoint in a request's messages: the last user message replaced
    by a copy whose last block carries ``cache_control``.

    Args:
        messages: The request's messages (changed in place).

    Returns:
        The index of the message replaced; None when there is no user message.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user":
            blocks = content_blocks(message["content"])
            if blocks:
                blocks[-1] = {**blocks[-1], "cache_control": dict(CACHE_CONTROL)}
            messages[index] = {**message, "content": blocks}
            return index
    return None


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Return message content (a text or blocks) as a list of blocks."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _with_breakpoint(definitions: list[dict[str, Any]], loaded: int) -> list[dict[str, Any]]:
    """Put the cache breakpoint on the last of the first ``loaded`` definitions."""
    if loaded:
        definitions[loaded - 1] = {**definitions[loaded - 1], "cache_control": dict(CACHE_CONTROL)}
    return definitions
