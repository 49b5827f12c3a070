"""The script of FakeAnthropicServer: scripted replies and faults.

A script is a queue of items, one per valid ``POST /v1/messages``: a ``Reply`` (text, with
citations of web search results, tool uses, server-side tool search, web search; a stop
reason; a delay), a ``Fault`` (an HTTP error, a dropped
stream, a malformed body, an error event mid-stream), or a callable
``(request_body) -> Reply | Fault``. Import them from ``nbagent.testing``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nbagent.core.events import StopReason
from nbagent.testing.fakeapi.api_tools import (
    ERROR_CODES,
    SERVER_TOOL_TYPES,
    WEB_SEARCH,
    citation,
    found_results,
    search_results,
)
from nbagent.testing.fakeapi.rules import TOOL_SEARCH_TYPES, call_error, model_messages
from nbagent.testing.fakeapi.thinking import thinking_on

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_STATUSES = {kind: status for status, kind in _ERROR_TYPES.items()}


@dataclass(frozen=True)
class Cite:
    """A citation of a web search result, on a text block.

    Attributes:
        url: The cited result's address: a result of a web search in this reply or earlier
            in the conversation (the model cites only what it found).
        cited_text: The words cited.
    """

    url: str
    cited_text: str


@dataclass(frozen=True)
class Text:
    """A text block of a reply, citing web search results if ``citations`` are given."""

    text: str
    citations: tuple[Cite, ...] = ()


@dataclass(frozen=True)
class Thinking:
    """A thinking block of a reply (it must come first, and the request must turn thinking
    on); the server signs it."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block of a reply.

    Attributes:
        name: The tool called; it must be in the model's context unless ``unchecked``.
        input: The tool input.
        id: The ``tool_use`` id; by default the server makes a unique one.
        unchecked: Play the call even if the model could not see the tool (unknown, or
            deferred and never loaded): a misbehaving model, for testing how the agent copes.
    """

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    unchecked: bool = False


@dataclass(frozen=True)
class ServerToolSearch:
    """A server-side tool search: a ``server_tool_use`` and ``tool_search_tool_result`` pair.

    Attributes:
        query: The query the model sends to the search tool.
        tool_names: The tools the search finds (each is loaded from then on).
        variant: ``bm25`` or ``regex``; the request must carry that tool search tool.
    """

    query: str
    tool_names: tuple[str, ...]
    variant: Literal["bm25", "regex"] = "bm25"

    @property
    def tool_name(self) -> str:
        """The name of the search tool, e.g. ``tool_search_tool_bm25``."""
        return f"tool_search_tool_{self.variant}"


@dataclass(frozen=True)
class WebResult:
    """One result of a scripted web search.

    Attributes:
        url: The page's address.
        title: The page's title.
        page_age: How old the page is, as the API says it (``"2 days ago"``), if known.
    """

    url: str
    title: str
    page_age: str | None = None


@dataclass(frozen=True)
class WebSearch:
    """A web search the API runs: a ``server_tool_use`` and ``web_search_tool_result`` pair.

    The model must have web search in its context (loaded, or found by ToolSearch). As the
    API does, the definition's ``allowed_domains`` and ``blocked_domains`` filter the
    results, and a search past its ``max_uses`` in one answer gets the
    ``max_uses_exceeded`` error instead.

    Attributes:
        query: The query the model sends.
        results: The results the API finds.
        error: An ``error_code`` to answer instead of results (``too_many_requests``,
            ``invalid_tool_input``, ``max_uses_exceeded``, ...).
    """

    query: str
    results: tuple[WebResult, ...] = ()
    error: str | None = None


Part = Text | Thinking | ToolUse | ServerToolSearch | WebSearch


@dataclass(frozen=True)
class Reply:
    """One scripted model answer.

    Attributes:
        parts: The content, in order.
        stop_reason: Overrides the stop reason (by default ``tool_use`` if a part is a
            ``ToolUse``, else ``end_turn``), e.g. ``max_tokens``, ``pause_turn``, ``refusal``.
        delay: Seconds to wait before the answer, and between streamed events; a client that
            closes the stream ends the wait.
    """

    parts: tuple[Part, ...] = ()
    stop_reason: StopReason | None = None
    delay: float = 0.0

    @classmethod
    def of(cls, *parts: Part, stop_reason: StopReason | None = None, delay: float = 0.0) -> Reply:
        """Build a reply from parts, e.g. ``Reply.of(Text("Let me look."), ToolUse("Read"))``."""
        return cls(tuple(parts), stop_reason, delay)

    @classmethod
    def text(cls, text: str, *, stop_reason: StopReason | None = None, delay: float = 0.0) -> Reply:
        """Build a text-only reply."""
        return cls((Text(text),), stop_reason, delay)

    @classmethod
    def tool_use(
        cls,
        name: str,
        input: Mapping[str, Any] | None = None,
        *,
        text: str | None = None,
        id: str | None = None,
        stop_reason: StopReason | None = None,
        delay: float = 0.0,
        unchecked: bool = False,
    ) -> Reply:
        """Build a reply that calls one tool, optionally after some text.

        ``unchecked=True`` plays the call even if the model could not see the tool (see
        ``ToolUse.unchecked``).
        """
        lead = (Text(text),) if text else ()
        use = ToolUse(name, dict(input or {}), id, unchecked)
        return cls((*lead, use), stop_reason, delay)

    @classmethod
    def tool_uses(
        cls,
        *calls: tuple[str, Mapping[str, Any]],
        text: str | None = None,
        stop_reason: StopReason | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """Build a reply calling several tools: ``Reply.tool_uses(("A", {}), ("B", {"x": 1}))``."""
        lead = (Text(text),) if text else ()
        uses = (ToolUse(name, dict(args)) for name, args in calls)
        return cls((*lead, *uses), stop_reason, delay)

    @classmethod
    def server_tool_search(
        cls,
        query: str,
        tool_names: Iterable[str],
        *,
        variant: Literal["bm25", "regex"] = "bm25",
        then: Iterable[Part] = (Text("I found the tools I need."),),
        stop_reason: StopReason | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """Build a reply where the API's own tool search runs, then more content follows.

        Args:
            query: The search query.
            tool_names: The tools found.
            variant: ``bm25`` or ``regex``.
            then: The parts after the search (text by default; may call the found tools).
            stop_reason: See ``Reply.stop_reason`` (``pause_turn`` is typical here).
            delay: See ``Reply.delay``.
        """
        search = ServerToolSearch(query, tuple(tool_names), variant)
        return cls((search, *then), stop_reason, delay)

    @classmethod
    def web_search(
        cls,
        query: str,
        results: Iterable[WebResult] = (),
        *,
        error: str | None = None,
        then: Iterable[Part] = (),
        stop_reason: StopReason | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """Build a reply where the API runs a web search, then more content follows.

        Args:
            query: The query.
            results: The results found.
            error: An ``error_code`` answered instead of results.
            then: The parts after the search (text citing the results, typically).
            stop_reason: See ``Reply.stop_reason``.
            delay: See ``Reply.delay``.
        """
        return cls((WebSearch(query, tuple(results), error), *then), stop_reason, delay)

    def resolved_stop_reason(self) -> StopReason:
        """The stop reason sent: the override, else ``tool_use`` or ``end_turn``."""
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(isinstance(p, ToolUse) for p in self.parts) else "end_turn"


@dataclass(frozen=True)
class Fault:
    """A scripted failure. Build one with the class methods.

    Attributes:
        kind: ``http`` (an error status), ``drop`` (connection closed mid-answer),
            ``malformed`` (a body that is not JSON), ``stream_error`` (an error event).
        status: The HTTP status of an ``http`` fault.
        error_type: The API error type.
        message: The error message.
        retry_after: Seconds sent in ``retry-after``, if any.
        reply: The reply streamed before a ``drop`` or ``stream_error``.
        after_events: How many events are sent before the drop or error event (default:
            in the middle of the reply's last content block).
    """

    kind: Literal["http", "drop", "malformed", "stream_error"]
    status: int = 500
    error_type: str = "api_error"
    message: str = "Internal server error"
    retry_after: float | None = None
    reply: Reply | None = None
    after_events: int | None = None

    @classmethod
    def http(
        cls,
        status: int,
        error_type: str | None = None,
        message: str | None = None,
        *,
        retry_after: float | None = None,
    ) -> Fault:
        """An error status with the API's error body (type inferred from the status)."""
        kind = error_type or _ERROR_TYPES.get(status, "api_error")
        return cls("http", status, kind, message or f"{kind} (scripted)", retry_after)

    @classmethod
    def rate_limit(cls, *, retry_after: float | None = None) -> Fault:
        """A 429 ``rate_limit_error``, with ``retry-after`` when given."""
        return cls.http(
            429, message="Number of requests has exceeded your rate limit", retry_after=retry_after
        )

    @classmethod
    def overloaded(cls, *, retry_after: float | None = None) -> Fault:
        """A 529 ``overloaded_error``."""
        return cls.http(529, message="Overloaded", retry_after=retry_after)

    @classmethod
    def server_error(cls, *, retry_after: float | None = None) -> Fault:
        """A 500 ``api_error``."""
        return cls.http(500, message="Internal server error", retry_after=retry_after)

    @classmethod
    def drop_stream(cls, reply: Reply, *, after_events: int | None = None) -> Fault:
        """Stream ``reply`` but close the connection mid-stream.

        The events are ``message_start``, ``ping``, then for each content block its
        ``content_block_start``, deltas and ``content_block_stop``, then ``message_delta``
        and ``message_stop``. By default the cut falls after the first delta of the last
        block: in the middle of a tool_use's input JSON. A request without ``stream`` gets
        its connection closed with no answer.

        Args:
            reply: The reply whose stream is cut.
            after_events: How many events to send before closing.
        """
        return cls("drop", reply=reply, after_events=after_events)

    @classmethod
    def stream_error(
        cls,
        reply: Reply,
        *,
        after_events: int | None = None,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
    ) -> Fault:
        """Stream ``reply``, then an ``error`` event instead of the rest (or, without stream,
        answer that error's status)."""
        return cls(
            "stream_error",
            _STATUSES.get(error_type, 500),
            error_type,
            message,
            reply=reply,
            after_events=after_events,
        )

    @classmethod
    def malformed_json(cls) -> Fault:
        """Answer 200 with a body (or an SSE event) cut in the middle of its JSON."""
        return cls("malformed")


Responder = Callable[[dict[str, Any]], Reply | Fault]
ScriptItem = Reply | Fault | Responder


class ScriptError(Exception):
    """The script cannot answer a request (exhausted, or the model could not do what it says)."""


def render(
    reply: Reply, body: Mapping[str, Any], visible: set[str], new_id: Callable[[str], str]
) -> list[dict[str, Any]]:
    """Render a reply as the content blocks the API would send for a request.

    Args:
        reply: The scripted reply.
        body: The request it answers.
        visible: The tools in the model's context; a server-side search adds what it finds.
        new_id: Makes a new id from a prefix (``toolu``, ``srvtoolu``).

    Raises:
        ScriptError: A part calls a tool the model cannot see (unless it is marked
            ``unchecked``), or searches without the search tool, or finds a tool that is not
            in the request, or cites a page no web search of the conversation found.
    """
    blocks: list[dict[str, Any]] = []
    for part in reply.parts:
        if isinstance(part, Text):
            blocks.append(_text_block(part, body, blocks))
        elif isinstance(part, Thinking):
            if not thinking_on(body) or blocks:
                raise ScriptError(
                    "script error: a Thinking part must come first, in answer to a request "
                    "with thinking on"
                )
            blocks.append({"type": "thinking", "thinking": part.text, "signature": ""})
        elif isinstance(part, WebSearch):
            blocks += _web_search_blocks(part, body, visible, blocks, new_id("srvtoolu"))
        elif isinstance(part, ToolUse):
            if not part.unchecked and (error := call_error(part.name, body, visible)):
                raise ScriptError(error)
            use_id = part.id or new_id("toolu")
            blocks.append(
                {"type": "tool_use", "id": use_id, "name": part.name, "input": dict(part.input)}
            )
        else:
            blocks += _search_blocks(part, body, visible, new_id("srvtoolu"))
    return blocks


def _search_blocks(
    part: ServerToolSearch, body: Mapping[str, Any], visible: set[str], search_id: str
) -> list[dict[str, Any]]:
    """Render a server-side tool search as its two blocks, loading what it finds."""
    tools = {t.get("name"): t for t in body.get("tools") or ()}
    if TOOL_SEARCH_TYPES.get(tools.get(part.tool_name, {}).get("type", "")) != part.tool_name:
        raise ScriptError(
            f"script error: the model cannot call {part.tool_name}: the request has no such "
            "tool search tool"
        )
    for name in part.tool_names:
        if name not in tools:
            raise ScriptError(
                f"script error: {part.tool_name} cannot find {name}: it is not in the "
                "request's tools"
            )
    visible.update(part.tool_names)
    references = [{"type": "tool_reference", "tool_name": name} for name in part.tool_names]
    found = {"type": "tool_search_tool_search_result", "tool_references": references}
    return [
        {
            "type": "server_tool_use",
            "id": search_id,
            "name": part.tool_name,
            "input": {"query": part.query},
        },
        {"type": "tool_search_tool_result", "tool_use_id": search_id, "content": found},
    ]


def _text_block(
    part: Text, body: Mapping[str, Any], blocks: list[dict[str, Any]]
) -> dict[str, Any]:
    """Render a text part, its citations pointing at results found before it."""
    block: dict[str, Any] = {"type": "text", "text": part.text}
    if not part.citations:
        return block
    earlier = [b for m in model_messages(body) if m["role"] == "assistant" for b in m["content"]]
    found = {r["url"]: r for r in found_results([*earlier, *blocks])}
    for cite in part.citations:
        if cite.url not in found:
            raise ScriptError(
                f"script error: the model cannot cite {cite.url}: no web search of this "
                "conversation found it"
            )
    block["citations"] = [citation(found[c.url], c.cited_text) for c in part.citations]
    return block


def _web_search_blocks(
    part: WebSearch,
    body: Mapping[str, Any],
    visible: set[str],
    blocks: list[dict[str, Any]],
    search_id: str,
) -> list[dict[str, Any]]:
    """Render a web search as its two blocks, as the request's definition lets it run."""
    if error := call_error(WEB_SEARCH, body, visible):
        raise ScriptError(error)
    tool = next(t for t in body.get("tools") or () if t.get("name") == WEB_SEARCH)
    if SERVER_TOOL_TYPES.get(tool.get("type", ""), ("",))[0] != WEB_SEARCH:
        raise ScriptError(
            "script error: the API cannot run web_search: the request's web_search is not "
            "the API's web search tool (a web_search_20260318 entry)"
        )
    if part.error is not None and part.error not in ERROR_CODES:
        raise ScriptError(
            f"script error: {part.error!r} is no web search error code; use one of "
            f"{', '.join(sorted(ERROR_CODES))}"
        )
    done = sum(b["type"] == "server_tool_use" and b["name"] == WEB_SEARCH for b in blocks)
    limit = tool.get("max_uses")
    error = "max_uses_exceeded" if limit is not None and done >= limit else part.error
    content: Any = (
        {"type": "web_search_tool_result_error", "error_code": error}
        if error
        else search_results(tool, ((r.url, r.title, r.page_age) for r in part.results))
    )
    use = {"type": "server_tool_use", "id": search_id, "name": WEB_SEARCH}
    return [
        {**use, "input": {"query": part.query}},
        {"type": "web_search_tool_result", "tool_use_id": search_id, "content": content},
    ]
