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

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from nbagent.catalogue.delta import render_legacy_block
from nbagent.catalogue.registry import TOOL_SEARCH_NAME, ToolRegistry
from nbagent.core.errors import ConfigurationError
from nbagent.core.tool import Tool

Mode = Literal["native", "client", "server", "off"]
MODES: tuple[Mode, ...] = ("native", "client", "server", "off")
"""The deferral modes."""

SERVER_SEARCH_TOOLS: dict[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
"""The API's server-side tool search tools, by variant."""

CACHE_CONTROL = {"type": "ephemeral"}
"""The breakpoint marker."""


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
    """
    tools = [t for t in registry.tools() if t.name != TOOL_SEARCH_NAME]
    if mode == "off":
        definitions = [t.definition() for t in tools]
        return _with_breakpoint(definitions, len(definitions))
    early = set(preloaded) if mode != "client" else set()
    loaded = [t.definition() for t in tools if not registry.is_deferred(t) or t.name in early]
    if mode == "server":
        loaded.append(dict(SERVER_SEARCH_TOOLS[server_search]))
    else:
        loaded.append(search_tool.definition())
    deferred = [t for t in tools if registry.is_deferred(t) and t.name not in early]
    deferred += [t for name, t in retained.items() if name not in registry]
    if mode == "client":
        by_name = {t.name: t for t in deferred}
        extra = [by_name[name].definition() for name in loaded_names if name in by_name]
    else:
        extra = [{**t.definition(), "defer_loading": True} for t in deferred]
    return _with_breakpoint(loaded + extra, len(loaded))


def build_messages(
    messages: Sequence[Mapping[str, Any]], legacy_names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Copy the history for a request, adding the user-turn breakpoint (and the legacy list).

    Args:
        messages: The conversation; not modified.
        legacy_names: In legacy mode, every deferred name, listed at the head of the first
            user message (this changes the cached prefix whenever the set changes).

    Returns:
        The request's messages.
    """
    result = [dict(m) for m in messages]
    if legacy_names is not None and result:
        first = result[0]
        block = {"type": "text", "text": render_legacy_block(legacy_names)}
        first["content"] = [block, *content_blocks(first["content"])]
    for message in reversed(result):
        if message["role"] == "user":
            blocks = copy.deepcopy(content_blocks(message["content"]))
            if blocks:
                blocks[-1]["cache_control"] = dict(CACHE_CONTROL)
            message["content"] = blocks
            break
    return result


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Return message content (a text or blocks) as a list of blocks."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _with_breakpoint(definitions: list[dict[str, Any]], loaded: int) -> list[dict[str, Any]]:
    """Put the cache breakpoint on the last of the first ``loaded`` definitions."""
    if loaded:
        definitions[loaded - 1] = {**definitions[loaded - 1], "cache_control": dict(CACHE_CONTROL)}
    return definitions
