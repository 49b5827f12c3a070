"""The API's tools (its "server tools") as the Messages API checks and plays them: their
definitions and their blocks.

The API runs web search itself, inside its answer: a ``server_tool_use`` block (the query),
then a ``web_search_tool_result`` block (the results, or an error object), and text blocks
whose ``citations`` point at those results. What is checked here, as the SDK's types define
it (``WebSearchTool20260318Param``, ``WebFetchTool20260318Param``,
``ServerToolUseBlockParam``, ``WebSearchToolResultBlockParam``,
``CitationWebSearchResultLocationParam``)::

    definitions  the name the type requires; no field the type lacks; max_uses at least 1;
                 allowed_domains and blocked_domains lists of strings, not both;
                 user_location of type approximate with text fields
    blocks       a server_tool_use names a server tool the request defines; each
                 web_search_tool_result follows the server_tool_use of its id in the same
                 message; results and error objects have their fields, and only those;
                 a web_search_result_location citation has its fields, and only those

Each check returns the API's error message, or None; ``rules`` wraps it in a 400.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

WEB_SEARCH = "web_search"
"""The name of the web search tool."""

_COMMON_FIELDS = frozenset(
    {
        "type",
        "name",
        "allowed_callers",
        "allowed_domains",
        "blocked_domains",
        "cache_control",
        "defer_loading",
        "max_uses",
        "response_inclusion",
        "strict",
    }
)

SERVER_TOOL_TYPES: dict[str, tuple[str, frozenset[str]]] = {
    "web_search_20260318": (WEB_SEARCH, _COMMON_FIELDS | {"user_location"}),
    "web_fetch_20260318": (
        "web_fetch",
        _COMMON_FIELDS | {"citations", "max_content_tokens", "url_sources", "use_cache"},
    ),
}
"""The server tool types the fake API knows: the name each must carry, and its fields."""

SERVER_TOOL_TYPES_BY_NAME = frozenset(name for name, _ in SERVER_TOOL_TYPES.values())
"""The names of the server tools whose definitions the fake API knows."""

SERVER_TOOL_USE_NAMES = frozenset(
    {
        "web_search",
        "web_fetch",
        "code_execution",
        "bash_code_execution",
        "text_editor_code_execution",
        "tool_search_tool_regex",
        "tool_search_tool_bm25",
    }
)
"""The names a ``server_tool_use`` block may carry."""

ERROR_CODES = frozenset(
    {
        "invalid_tool_input",
        "unavailable",
        "max_uses_exceeded",
        "too_many_requests",
        "query_too_long",
        "request_too_large",
    }
)
"""The ``error_code`` values of a ``web_search_tool_result_error``."""

_USER_LOCATION = frozenset({"type", "city", "region", "country", "timezone"})
_USE_FIELDS = frozenset({"type", "id", "name", "input", "cache_control", "caller"})
_RESULT_BLOCK_FIELDS = frozenset({"type", "tool_use_id", "content", "cache_control", "caller"})
_RESULT_FIELDS = frozenset({"type", "url", "title", "encrypted_content", "page_age"})
_CITATION_FIELDS = frozenset({"type", "url", "title", "encrypted_index", "cited_text"})


def definition_error(i: int, tool: Mapping[str, Any]) -> str | None:
    """Check one server tool definition; ``tools.{i}`` is where it is.

    Args:
        i: Its index in ``tools``.
        tool: The definition, whose ``type`` is a key of :data:`SERVER_TOOL_TYPES`.

    Returns:
        The API's error message, or None.
    """
    kind = str(tool["type"])
    name, fields = SERVER_TOOL_TYPES[kind]
    where = f"tools.{i}.{kind}"
    if tool.get("name") != name:
        return f"{where}.name: Input should be '{name}'"
    if error := extra_field_error(where, tool, fields):
        return error
    uses = tool.get("max_uses")
    if uses is not None and (not isinstance(uses, int) or isinstance(uses, bool)):
        return f"{where}.max_uses: Input should be a valid integer"
    if uses is not None and uses < 1:
        return f"{where}.max_uses: Input should be greater than or equal to 1"
    for key in ("allowed_domains", "blocked_domains"):
        domains = tool.get(key)
        if domains is not None and (
            not isinstance(domains, list) or not all(isinstance(d, str) for d in domains)
        ):
            return f"{where}.{key}: Input should be a valid list of strings"
    if tool.get("allowed_domains") is not None and tool.get("blocked_domains") is not None:
        return f"{where}: allowed_domains and blocked_domains cannot be used together"
    if "user_location" in tool:
        return _location_error(f"{where}.user_location", tool["user_location"])
    return None


def extra_field_error(where: str, block: Mapping[str, Any], fields: Collection[str]) -> str | None:
    """The API's error for the first field of an object that its type lacks, if any.

    Args:
        where: The object's path in the request, e.g. ``tools.0``.
        block: The object.
        fields: The fields its type has.

    Returns:
        E.g. ``tools.0.colour: Extra inputs are not permitted``, or ``None``.
    """
    extra = next((key for key in block if key not in fields), None)
    return None if extra is None else f"{where}.{extra}: Extra inputs are not permitted"


def _location_error(where: str, location: Any) -> str | None:
    """Check a ``user_location``: type approximate, text fields."""
    if location is None:
        return None
    if not isinstance(location, dict):
        return f"{where}: Input should be a valid dictionary"
    if location.get("type") != "approximate":
        return f"{where}.type: Input should be 'approximate'"
    if error := extra_field_error(where, location, _USER_LOCATION):
        return error
    for key, value in location.items():
        if not isinstance(value, str | None):
            return f"{where}.{key}: Input should be a valid string"
    return None


def block_error(messages: Sequence[Any], tools: Sequence[Any]) -> str | None:
    """Check the server tool blocks of a request's messages, and the citations of its texts.

    Args:
        messages: The messages (roles and block types already checked).
        tools: The request's tool definitions.

    Returns:
        The API's error message, or None.
    """
    defined = {
        SERVER_TOOL_TYPES[t["type"]][0]
        for t in tools
        if isinstance(t, dict) and t.get("type") in SERVER_TOOL_TYPES
    }
    for i, message in enumerate(messages):
        content = message["content"]
        if message["role"] != "assistant" or not isinstance(content, list):
            continue
        uses: dict[str, str] = {}
        for j, block in enumerate(content):
            where = f"messages.{i}.content.{j}"
            kind = block["type"]
            if kind == "server_tool_use":
                error = _use_error(where, block, defined)
                uses[str(block.get("id"))] = str(block.get("name"))
            elif kind == "web_search_tool_result":
                error = _result_block_error(where, block, uses)
            elif kind == "text":
                error = _citations_error(where, block.get("citations"))
            else:
                error = None
            if error:
                return error
    return None


def _use_error(where: str, block: Mapping[str, Any], defined: set[str]) -> str | None:
    """Check a ``server_tool_use``: its fields, a known name, a tool the request defines."""
    if error := extra_field_error(f"{where}.server_tool_use", block, _USE_FIELDS):
        return error
    if not isinstance(block.get("id"), str) or not isinstance(block.get("input"), dict):
        return f"{where}.server_tool_use: id (a string) and input (an object) are required"
    name = block.get("name")
    if name not in SERVER_TOOL_USE_NAMES:
        expected = ", ".join(f"'{n}'" for n in sorted(SERVER_TOOL_USE_NAMES))
        return f"{where}.server_tool_use.name: Input should be {expected}"
    if name in SERVER_TOOL_TYPES_BY_NAME and name not in defined:
        return (
            f"{where}: server_tool_use block of {name}, but the request's tools do not define "
            f"the {name} server tool"
        )
    return None


def _result_block_error(
    where: str, block: Mapping[str, Any], uses: Mapping[str, str]
) -> str | None:
    """Check a ``web_search_tool_result``: its use before it, its results or error."""
    if error := extra_field_error(f"{where}.web_search_tool_result", block, _RESULT_BLOCK_FIELDS):
        return error
    use_id = block.get("tool_use_id")
    if uses.get(str(use_id)) != WEB_SEARCH:
        return (
            f"{where}: web_search_tool_result block with tool_use_id {use_id} does not follow "
            "a web_search server_tool_use block of that id in the same message"
        )
    content = block.get("content")
    if isinstance(content, dict):
        if content.get("type") != "web_search_tool_result_error" or set(content) != {
            "type",
            "error_code",
        }:
            return f"{where}.web_search_tool_result.content: Input should be a valid list"
        if content["error_code"] not in ERROR_CODES:
            expected = ", ".join(f"'{c}'" for c in sorted(ERROR_CODES))
            return f"{where}.web_search_tool_result.content.error_code: Input should be {expected}"
        return None
    if not isinstance(content, list):
        return f"{where}.web_search_tool_result.content: Input should be a valid list"
    for k, result in enumerate(content):
        inner = f"{where}.web_search_tool_result.content.{k}"
        if not isinstance(result, dict) or result.get("type") != "web_search_result":
            return f"{inner}.type: Input should be 'web_search_result'"
        if error := extra_field_error(inner, result, _RESULT_FIELDS):
            return error
        for key in ("url", "title", "encrypted_content"):
            if not isinstance(result.get(key), str):
                return f"{inner}.{key}: Field required"
        if not isinstance(result.get("page_age"), str | None):
            return f"{inner}.page_age: Input should be a valid string"
    return None


def _citations_error(where: str, citations: Any) -> str | None:
    """Check the web search citations of a text block."""
    if citations is None:
        return None
    if not isinstance(citations, list):
        return f"{where}.text.citations: Input should be a valid list"
    for k, citation in enumerate(citations):
        inner = f"{where}.text.citations.{k}"
        if not isinstance(citation, dict) or not isinstance(citation.get("type"), str):
            return f"{inner}: Input should be a valid dictionary"
        if citation["type"] != "web_search_result_location":
            continue
        if error := extra_field_error(
            f"{inner}.web_search_result_location", citation, _CITATION_FIELDS
        ):
            return error
        for key in ("url", "encrypted_index", "cited_text"):
            if not isinstance(citation.get(key), str):
                return f"{inner}.web_search_result_location.{key}: Field required"
        if "title" not in citation or not isinstance(citation["title"], str | None):
            return f"{inner}.web_search_result_location.title: Field required"
    return None


# Playing a web search: what a scripted search returns, as the API would.


def encrypted(*parts: str) -> str:
    """An opaque string standing for the API's encrypted content or index."""
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()[:24]
    return base64.b64encode(digest).decode()


def in_domains(url: str, domains: Iterable[str]) -> bool:
    """Tell whether a URL is on one of the domains (a subdomain counts; a path narrows).

    Args:
        url: A result's address.
        domains: Domains as the tool definition lists them (``example.com``,
            ``example.com/blog``).
    """
    parts = urlsplit(url)
    host, path = (parts.hostname or "").lower(), parts.path or "/"
    for domain in domains:
        name, _, prefix = domain.lower().partition("/")
        if (host == name or host.endswith("." + name)) and path.startswith("/" + prefix):
            return True
    return False


def search_results(
    tool: Mapping[str, Any], results: Iterable[tuple[str, str, str | None]]
) -> list[dict[str, Any]]:
    """The result blocks of a search: those the definition's domains let through.

    Args:
        tool: The web search definition of the request.
        results: The scripted results: url, title, page age.

    Returns:
        The ``web_search_result`` blocks.
    """
    allowed, blocked = tool.get("allowed_domains"), tool.get("blocked_domains")
    blocks = []
    for url, title, age in results:
        if (allowed is not None and not in_domains(url, allowed)) or (
            blocked is not None and in_domains(url, blocked)
        ):
            continue
        block = {
            "type": "web_search_result",
            "url": url,
            "title": title,
            "encrypted_content": encrypted("content", url, title),
        }
        if age is not None:
            block["page_age"] = age
        blocks.append(block)
    return blocks


def found_results(blocks: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Yield the ``web_search_result`` blocks of the result blocks among some blocks.

    Args:
        blocks: Content blocks (of an answer being made, or of the history).
    """
    for block in blocks:
        content = block.get("content")
        if block.get("type") == "web_search_tool_result" and isinstance(content, list):
            yield from (r for r in content if isinstance(r, dict))


def citation(result: Mapping[str, Any], cited_text: str) -> dict[str, Any]:
    """A citation of a search result, as a text block carries it.

    Args:
        result: A ``web_search_result`` block.
        cited_text: The words cited.

    Returns:
        The ``web_search_result_location`` citation.
    """
    return {
        "type": "web_search_result_location",
        "url": result["url"],
        "title": result.get("title"),
        "encrypted_index": encrypted("index", str(result["url"]), cited_text),
        "cited_text": cited_text,
    }
