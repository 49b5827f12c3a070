"""The Anthropic Messages API through the official SDK: streaming one response.

The SDK is imported lazily (it takes about a second). Its own retries handle 429, 529 and
5xx answers with backoff and ``retry-after``; this module turns what is left into
:class:`~nbagent.core.errors.ModelAPIError` and SDK objects into plain dicts for the history.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbagent.api.api_tool_blocks import ServerBlockReader
from nbagent.api.body import BodyEncoder
from nbagent.core.errors import ModelAPIError
from nbagent.core.events import Notice, StopReason, TextCited, TextDelta, Usage, WebSearched
from nbagent.core.text import one_line

if TYPE_CHECKING:
    from nbagent.core.cancellation import Cancellation

DEFAULT_MAX_RETRIES = 4
"""Retries of a failed request (the SDK's backoff, honouring ``retry-after``)."""

MAX_MESSAGE_CHARS = 500
"""The longest error message shown (on one line)."""

_STATUS_OF_ERROR = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""The HTTP status that goes with each API error type."""

_TRANSIENT_ERRORS = frozenset({"api_error", "overloaded_error", "rate_limit_error"})
"""Error types worth sending the turn again for (the SDK retries their HTTP statuses)."""

BODIES = BodyEncoder()
"""Encodes the bodies of every agent's requests, reusing what recent requests sent."""


@dataclass(frozen=True)
class ModelResponse:
    """One complete answer of the model."""

    content: list[dict[str, Any]]
    """The assistant message's content blocks, as request params."""
    stop_reason: StopReason
    """Why the model stopped (``end_turn``, ``tool_use``, ``pause_turn``, ...)."""
    usage: Usage
    """Its token usage."""
    applied_edits: tuple[dict[str, Any], ...] = ()
    """The context edits the API applied to the request (``context_management.applied_edits``
    of a beta answer), as plain dicts."""


def response_text(response: ModelResponse) -> str:
    """The text blocks of a response, joined."""
    return "".join(b.get("text", "") for b in response.content if b.get("type") == "text")


class StreamDropped(ModelAPIError):
    """The response stream broke off before the message was complete."""


CLIENT_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
"""The environment variables :func:`default_client` reads."""


def default_client(max_retries: int = DEFAULT_MAX_RETRIES) -> Any:
    """Build ``anthropic.Anthropic()`` from the environment.

    ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``) and ``ANTHROPIC_BASE_URL`` work as
    with the SDK itself.

    Args:
        max_retries: Retries of a failed request.

    Returns:
        The client.

    Raises:
        ModelAPIError: No API key is set.
    """
    import anthropic

    client = anthropic.Anthropic(max_retries=max_retries)
    if not (client.api_key or client.auth_token or getattr(client, "_token_cache", None)):
        raise ModelAPIError(
            "No Anthropic API key: set ANTHROPIC_API_KEY (%env ANTHROPIC_API_KEY=...), or work "
            "offline with nbagent.testing.FakeAnthropicServer (see "
            "nbagent.testing.scripted.offline_unless_api_key)."
        )
    return client


def stream_response(
    client: Any,
    request: dict[str, Any],
    betas: Sequence[str] = (),
    cancel: Cancellation | None = None,
) -> Iterator[TextDelta | WebSearched | TextCited | Notice | ModelResponse]:
    """Send a request and stream the answer.

    Args:
        client: An ``anthropic.Anthropic`` client.
        request: The request body (``stream`` is set by the SDK).
        betas: Beta features the request uses (``compact-2026-01-12``): it then goes through
            the SDK's beta messages API, with the ``anthropic-beta`` header.
        cancel: Checked at each streamed event: once cancelled, the stream is closed.

    Yields:
        TextDelta for each piece of text, WebSearched for each web search the API ran,
        TextCited after a text that cites web pages, a Notice after each thinking block
        (:func:`thought`), then one ModelResponse.

    Raises:
        StreamDropped: The connection broke during the stream, or the stream ended with an
            error event of a transient kind (``overloaded_error``, ``api_error``, ...).
        ModelAPIError: The API refused the request, or failed after the SDK's retries; the
            message is one line.
        Cancelled: ``cancel`` was cancelled; the stream was closed.
    """
    import anthropic
    import httpx2

    try:
        opened = _open_stream(client, request, betas)
        reader = ServerBlockReader()
        thinking_since = 0.0
        with opened as stream:
            for event in stream:
                if cancel is not None:
                    cancel.check()
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    yield TextDelta(event.delta.text)
                elif event.type == "content_block_start":
                    thinking_since = time.monotonic()
                elif event.type == "content_block_stop" and event.content_block.type == "thinking":
                    yield thought(event.content_block.thinking, time.monotonic() - thinking_since)
                elif event.type == "content_block_stop":
                    read = reader.read(_block_param(event.content_block))
                    if read is not None:
                        yield read
            message = stream.get_final_message()
    except anthropic.APIStatusError as exc:
        kind, detail = _error_of(exc)
        if exc.status_code != 200:
            raise ModelAPIError(
                one_line(
                    f"The model's API answered {exc.status_code} ({kind}): {detail}",
                    MAX_MESSAGE_CHARS,
                ),
                status=exc.status_code,
            ) from exc
        # An error event after a 200: the SDK does not retry it, the agent may.
        text = one_line(f"The model's API failed mid-answer ({kind}): {detail}", MAX_MESSAGE_CHARS)
        if kind in _TRANSIENT_ERRORS:
            raise StreamDropped(text) from exc
        raise ModelAPIError(text, status=_STATUS_OF_ERROR.get(kind)) from exc
    except (anthropic.APITimeoutError, httpx2.TimeoutException) as exc:
        said = _transport_error(exc)
        raise StreamDropped(
            one_line(f"The model's API did not answer in time: {said}", MAX_MESSAGE_CHARS)
        ) from exc
    except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
        said = _transport_error(exc)
        raise StreamDropped(
            one_line(f"The connection to the model's API broke: {said}", MAX_MESSAGE_CHARS)
        ) from exc
    except (anthropic.AnthropicError, ValueError) as exc:
        raise StreamDropped(
            one_line(f"The model's answer could not be read: {exc}", MAX_MESSAGE_CHARS)
        ) from exc
    yield ModelResponse(
        content=[_block_param(block) for block in message.content],
        stop_reason=message.stop_reason or "end_turn",
        usage=Usage(
            input_tokens=message.usage.input_tokens or 0,
            output_tokens=message.usage.output_tokens or 0,
            cache_read_input_tokens=message.usage.cache_read_input_tokens or 0,
            cache_creation_input_tokens=message.usage.cache_creation_input_tokens or 0,
            web_search_requests=_web_searches(message.usage),
        ),
        applied_edits=_applied_edits(message),
    )


def _open_stream(client: Any, request: dict[str, Any], betas: Sequence[str]) -> Any:
    """What ``client.messages.stream(**request)`` (or the beta one) returns, the body encoded
    by :data:`BODIES` and handed to the SDK as its chunks, with their length: the SDK would
    otherwise copy and encode the whole request again (``prepare_request_data``), the whole
    history every turn, and one body of bytes would copy every definition of the catalogue.
    A tuple of chunks can be sent again when the SDK retries.

    The request is the one the stream helper sends: ``POST /v1/messages`` with its helper
    headers, and for betas ``?beta=true`` and the ``anthropic-beta`` header.
    """
    from anthropic import NOT_GIVEN, Stream
    from anthropic.lib.streaming import BetaMessageStreamManager, MessageStreamManager
    from anthropic.types import Message, RawMessageStreamEvent
    from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent

    body = BODIES.encode_chunks(request)
    headers = {
        "X-Stainless-Helper-Method": "stream",
        "Content-Length": str(sum(map(len, body))),
    }
    options: dict[str, Any] = {"headers": headers}
    if betas:
        headers["X-Stainless-Stream-Helper"] = "beta.messages"
        headers["anthropic-beta"] = ",".join(betas)
        options["params"] = {"beta": "true"}
        manager: Any = BetaMessageStreamManager
        cast_to: Any = BetaMessage
        events: Any = Stream[BetaRawMessageStreamEvent]
    else:
        headers["X-Stainless-Stream-Helper"] = "messages"
        manager, cast_to, events = MessageStreamManager, Message, Stream[RawMessageStreamEvent]
    post = functools.partial(
        client.post,
        "/v1/messages",
        cast_to=cast_to,
        content=body,
        options=options,
        stream=True,
        stream_cls=events,
    )
    return manager(post, output_format=NOT_GIVEN)


_PARAM_FIELDS = {
    "text": ("type", "text"),
    "tool_use": ("type", "id", "name", "input"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


_VERBATIM = frozenset({"server_tool_use", "web_search_tool_result"})
"""Blocks of server tools: sent back exactly as the API sent them (its fields, nulls too)."""


def _block_param(block: Any) -> dict[str, Any]:
    """Turn a response block into the param dict that goes back in the history.

    A text keeps its citations as they came (a web search result's ``title`` may be null,
    and the API wants it there).
    """
    if block.type in _VERBATIM:
        return block.model_dump(mode="json", exclude_unset=True)
    data = block.model_dump(mode="json", exclude_none=True)
    fields = _PARAM_FIELDS.get(data.get("type", ""))
    if not fields:
        return data
    param = {k: data[k] for k in fields if k in data}
    if block.type == "text" and block.citations:
        param["citations"] = [
            c.model_dump(mode="json", exclude_unset=True) for c in block.citations
        ]
    return param


def thought(summary: str, seconds: float) -> Notice:
    """What the card shows of a thinking block: how long, its summary folded under it.

    Args:
        summary: The block's (summarised) thinking; empty when the display omits it.
        seconds: How long it streamed.
    """
    return Notice(f"Thought for {max(1, round(seconds))} s", detail=summary.strip())


def _applied_edits(message: Any) -> tuple[dict[str, Any], ...]:
    """The context edits a (beta) answer says the API applied."""
    management = getattr(message, "context_management", None)
    edits = getattr(management, "applied_edits", None) or ()
    return tuple(edit.model_dump(mode="json") for edit in edits)


def _web_searches(usage: Any) -> int:
    """The web searches a response's usage counts (none without ``server_tool_use``)."""
    return getattr(getattr(usage, "server_tool_use", None), "web_search_requests", None) or 0


def _error_of(exc: Any) -> tuple[str, str]:
    """Return the API's error type and message, from its error body when it sent one."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", {}) if isinstance(body.get("error"), dict) else {}
    return str(error.get("type", "error")), str(error.get("message") or exc)


def _transport_error(exc: Exception) -> Exception:
    """The transport's own error under the SDK's (which names the address from 2.17 on), so
    that what the person reads is the same whatever the SDK's version."""
    import httpx2

    cause = exc.__cause__
    return cause if isinstance(cause, httpx2.TransportError) else exc
