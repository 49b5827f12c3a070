"""FakeAnthropicServer through the real anthropic SDK: replies, streams, tools, faults, caching."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import ServerToolUseBlock, ToolReferenceBlock, ToolSearchToolResultBlock

from nbagent.testing import FakeAnthropicServer, Fault, Reply, Text, ToolUse

CACHE = {"type": "ephemeral"}
MODEL = "claude-test"
SEARCH_BM25 = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    """A custom tool definition."""
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    return {"name": name, "description": f"The {name} tool.", "input_schema": schema, **extra}


TOOLS = [tool("Read"), tool("ToolSearch"), tool("Weather", defer_loading=True)]


def ask(client: anthropic.Anthropic, messages: list[Any], **kw: Any) -> anthropic.types.Message:
    """Send a non-streaming request."""
    kw.setdefault("tools", TOOLS)
    return client.messages.create(model=MODEL, max_tokens=256, messages=messages, **kw)


def stream(client: anthropic.Anthropic, messages: list[Any], **kw: Any) -> anthropic.types.Message:
    """Send a streaming request and return the final message."""
    kw.setdefault("tools", TOOLS)
    with client.messages.stream(model=MODEL, max_tokens=256, messages=messages, **kw) as s:
        return s.get_final_message()


def results(message: anthropic.types.Message, content: Any = "ok") -> dict[str, Any]:
    """The user turn answering every tool_use of a message."""
    uses = [b for b in message.content if b.type == "tool_use"]
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": u.id, "content": content} for u in uses],
    }


HELLO = [{"role": "user", "content": "hello"}]


def test_text_reply_json_and_stream(fake_api: FakeAnthropicServer) -> None:
    """A text reply arrives whole without stream, and in several text deltas with stream."""
    fake_api.enqueue(
        Reply.text("Hi there, how are you today?"), Reply.text("Streamed words arrive in pieces.")
    )
    client = fake_api.client()
    message = ask(client, HELLO)
    assert (message.content[0].text, message.stop_reason, message.role) == (
        "Hi there, how are you today?",
        "end_turn",
        "assistant",
    )
    assert message.usage.output_tokens > 0 and message.usage.input_tokens > 0
    with client.messages.stream(model=MODEL, max_tokens=64, messages=HELLO) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert (
        len(pieces) > 1
        and "".join(pieces) == final.content[0].text == "Streamed words arrive in pieces."
    )
    assert [r.stream for r in fake_api.requests] == [False, True]
    assert all(r.headers["anthropic-version"] and r.status == 200 for r in fake_api.requests)


def test_tool_use_round_trip(fake_api: FakeAnthropicServer) -> None:
    """Several tool uses after text, answered, then a final text; the SDK parses the input."""
    fake_api.enqueue(
        Reply.tool_uses(
            ("Read", {"path": "a b.txt"}), ("Read", {"path": "c.txt"}), text="Reading both."
        ),
        Reply.text("Both read."),
    )
    client = fake_api.client()
    first = stream(client, HELLO)
    assert first.stop_reason == "tool_use"
    uses = [b for b in first.content if b.type == "tool_use"]
    assert [u.input for u in uses] == [{"path": "a b.txt"}, {"path": "c.txt"}]
    assert len({u.id for u in uses}) == 2
    second = stream(client, [*HELLO, first.to_param(), results(first)])
    assert second.content[0].text == "Both read."


def test_stop_reason_overrides(fake_api: FakeAnthropicServer) -> None:
    """max_tokens, pause_turn and refusal can be scripted."""
    for reason in ("max_tokens", "pause_turn", "refusal"):
        fake_api.enqueue(Reply.text("Cut", stop_reason=reason))
        assert stream(fake_api.client(), HELLO).stop_reason == reason


def test_responder_answers_from_the_request(fake_api: FakeAnthropicServer) -> None:
    """A callable script item sees the request body."""
    fake_api.enqueue(lambda body: Reply.text(f"You said: {body['messages'][-1]['content']}"))
    assert ask(fake_api.client(), HELLO).content[0].text == "You said: hello"


def test_tool_reference_unlocks_a_deferred_tool(fake_api: FakeAnthropicServer) -> None:
    """A deferred tool is callable once a tool_result carries its tool_reference."""
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "weather"}),
        Reply.tool_use("Weather", {"path": "Paris"}),
    )
    client = fake_api.client()
    search = stream(client, HELLO)
    found = results(search, [{"type": "tool_reference", "tool_name": "Weather"}])
    history = [*HELLO, search.to_param(), found]
    assert fake_api.context_tools({"tools": TOOLS, "messages": history}) == {
        "Read",
        "ToolSearch",
        "Weather",
    }
    assert stream(client, history).content[0].name == "Weather"


def test_unloaded_deferred_tool_is_a_script_error(fake_api: FakeAnthropicServer) -> None:
    """Calling a deferred tool never loaded fails loudly: 500, not retried, recorded."""
    fake_api.enqueue(Reply.tool_use("Weather"), Reply.tool_use("Ghost"))
    client = fake_api.client(max_retries=2)
    for name, reason in (
        ("Weather", "it is deferred and was never loaded by a tool_reference"),
        ("Ghost", "it is not in the request's tools"),
    ):
        with pytest.raises(anthropic.InternalServerError) as caught:
            stream(client, HELLO)
        assert caught.value.body["error"]["type"] == "api_error"
        assert f"the model cannot call {name}: {reason}" in caught.value.message
    assert len(fake_api.requests) == 2
    assert len(fake_api.take_errors()) == 2 and fake_api.errors == []


def test_script_exhausted(fake_api: FakeAnthropicServer) -> None:
    """An empty script answers 500 "script exhausted" and records it."""
    with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
        ask(fake_api.client(max_retries=3), HELLO)
    assert len(fake_api.requests) == 1
    with pytest.raises(AssertionError, match="script exhausted"):
        fake_api.assert_no_errors()
    errors = fake_api.take_errors()
    assert len(errors) == 1 and errors[0].startswith("script exhausted")
    fake_api.assert_no_errors()


def test_responder_failure_is_a_script_error(fake_api: FakeAnthropicServer) -> None:
    """A responder that raises or returns something else is a script error."""
    fake_api.enqueue(lambda body: 1 / 0, lambda body: "not a reply")
    for expected in ("ZeroDivisionError", "not a Reply or Fault"):
        with pytest.raises(anthropic.InternalServerError, match=expected):
            ask(fake_api.client(), HELLO)
    assert len(fake_api.take_errors()) == 2


def test_server_tool_search(fake_api: FakeAnthropicServer) -> None:
    """Server-side search: the SDK parses its blocks; found tools are callable at once and later."""
    tools = [SEARCH_BM25, tool("Read"), tool("Weather", defer_loading=True)]
    fake_api.enqueue(
        Reply.server_tool_search(
            "weather", ["Weather"], then=[Text("Found it."), ToolUse("Weather", {"path": "Oslo"})]
        ),
        Reply.tool_use("Weather", {"path": "Rome"}),
    )
    client = fake_api.client()
    first = stream(client, HELLO, tools=tools)
    use, found = first.content[0], first.content[1]
    assert (
        isinstance(use, ServerToolUseBlock)
        and use.name == "tool_search_tool_bm25"
        and use.input == {"query": "weather"}
    )
    assert isinstance(found, ToolSearchToolResultBlock) and found.tool_use_id == use.id
    assert found.content.tool_references == [
        ToolReferenceBlock(tool_name="Weather", type="tool_reference")
    ]
    assert [b.type for b in first.content[2:]] == ["text", "tool_use"]
    second = ask(client, [*HELLO, first.to_param(), results(first)], tools=tools)
    assert second.content[0].name == "Weather"


def test_server_tool_search_needs_its_tool(fake_api: FakeAnthropicServer) -> None:
    """A scripted server search without its search tool, or finding an unknown tool, fails."""
    fake_api.enqueue(
        Reply.server_tool_search("w", ["Weather"], variant="regex"),
        Reply.server_tool_search("w", ["Ghost"]),
    )
    client = fake_api.client()
    with pytest.raises(anthropic.InternalServerError, match="no such tool search tool"):
        ask(client, HELLO, tools=[SEARCH_BM25, tool("Weather", defer_loading=True)])
    with pytest.raises(anthropic.InternalServerError, match="cannot find Ghost"):
        ask(client, HELLO, tools=[SEARCH_BM25])
    assert len(fake_api.take_errors()) == 2


def test_client_side_expansion_without_tool_reference() -> None:
    """Against an endpoint without tool search, adding the full definition loads the tool."""
    with FakeAnthropicServer(
        [Reply.tool_use("ToolSearch"), Reply.tool_use("Weather")], supports_tool_reference=False
    ) as server:
        client = server.client()
        tools = [tool("Read"), tool("ToolSearch")]
        search = ask(client, HELLO, tools=tools)
        answer = ask(
            client,
            [*HELLO, search.to_param(), results(search, "Weather is now available.")],
            tools=[*tools, tool("Weather")],
        )
        assert answer.content[0].name == "Weather"
        server.assert_no_errors()


def test_rate_limit_then_success_with_sdk_retry(fake_api: FakeAnthropicServer) -> None:
    """A 429 with retry-after is retried by the SDK itself, then the reply arrives."""
    fake_api.enqueue(
        Fault.rate_limit(retry_after=0.01),
        Fault.overloaded(retry_after=0.01),
        Reply.text("Finally."),
    )
    started = time.monotonic()
    assert ask(fake_api.client(max_retries=2), HELLO).content[0].text == "Finally."
    assert time.monotonic() - started < 1.0
    records = fake_api.requests
    assert [r.status for r in records] == [429, 529, 200]
    assert all(r.body == records[0].body for r in records)


@pytest.mark.parametrize(
    ("fault", "error", "status", "kind"),
    [
        (Fault.rate_limit(retry_after=3), anthropic.RateLimitError, 429, "rate_limit_error"),
        (Fault.overloaded(), anthropic.OverloadedError, 529, "overloaded_error"),
        (Fault.server_error(), anthropic.InternalServerError, 500, "api_error"),
        (
            Fault.http(400, message="prompt is too long"),
            anthropic.BadRequestError,
            400,
            "invalid_request_error",
        ),
    ],
)
def test_http_faults(
    fake_api: FakeAnthropicServer,
    fault: Fault,
    error: type[anthropic.APIStatusError],
    status: int,
    kind: str,
) -> None:
    """HTTP faults carry the API's error shape, a request-id, and retry-after when given."""
    fake_api.enqueue(fault)
    with pytest.raises(error) as caught:
        ask(fake_api.client(), HELLO)
    assert caught.value.status_code == status and caught.value.body["error"]["type"] == kind
    assert caught.value.response.headers["request-id"].startswith("req_")
    assert caught.value.response.headers.get("retry-after") == ("3" if status == 429 else None)


def test_stream_dropped_mid_tool_input(fake_api: FakeAnthropicServer) -> None:
    """A stream cut inside a tool_use's input JSON fails in the client, with part of the input
    (the SDK raises the transport's error, or from 2.17 wraps it in APIConnectionError)."""
    fake_api.enqueue(Fault.drop_stream(Reply.tool_use("Read", {"path": "/a/long/path/name.txt"})))
    seen: list[str] = []
    with (
        pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)),
        fake_api.client().messages.stream(
            model=MODEL, max_tokens=64, messages=HELLO, tools=TOOLS
        ) as s,
    ):
        for event in s:
            seen.append(event.type)
    assert seen[-1] == "input_json" and "content_block_stop" not in seen


def test_drop_without_stream_is_a_connection_error(fake_api: FakeAnthropicServer) -> None:
    """Without stream, a drop closes the connection with no answer."""
    fake_api.enqueue(Fault.drop_stream(Reply.text("never")))
    with pytest.raises(anthropic.APIConnectionError):
        ask(fake_api.client(), HELLO)


def test_error_event_mid_stream(fake_api: FakeAnthropicServer) -> None:
    """An error event mid-stream raises the SDK's status error with the API's error body."""
    fake_api.enqueue(
        Fault.stream_error(Reply.text("one two three four"), after_events=4),
        Fault.stream_error(Reply.text("x")),
    )
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        stream(fake_api.client(), HELLO)
    with pytest.raises(anthropic.OverloadedError):
        ask(fake_api.client(), HELLO)


def test_malformed_json(fake_api: FakeAnthropicServer) -> None:
    """A body or an event cut mid-JSON makes the SDK fail to decode it."""
    fake_api.enqueue(Fault.malformed_json(), Fault.malformed_json())
    with pytest.raises(json.JSONDecodeError):
        ask(fake_api.client(), HELLO)
    with pytest.raises(json.JSONDecodeError):
        stream(fake_api.client(), HELLO)


def test_client_closing_a_delayed_stream(fake_api: FakeAnthropicServer) -> None:
    """Closing a slow stream ends the server's wait at once and marks the request interrupted."""
    fake_api.enqueue(Reply.text("word " * 30, delay=0.2), Reply.text("after"))
    started = time.monotonic()
    with fake_api.client().messages.stream(model=MODEL, max_tokens=64, messages=HELLO) as s:
        next(iter(s))
    assert fake_api.wait_idle(2.0)
    assert time.monotonic() - started < 1.5
    assert fake_api.requests[0].interrupted
    assert ask(fake_api.client(), HELLO).content[0].text == "after"


def test_stop_ends_a_delayed_answer() -> None:
    """stop() does not wait for a slow answer to finish."""
    server = FakeAnthropicServer([Reply.text("slow", delay=30)]).start()
    client = server.client()
    threading.Timer(0.1, server.stop).start()
    started = time.monotonic()
    with pytest.raises(anthropic.APIConnectionError):
        ask(client, HELLO)
    assert time.monotonic() - started < 2.0


def raw_post(
    server: FakeAnthropicServer, path: str, data: bytes, headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    """POST without the SDK, for requests the SDK cannot make."""
    request = urllib.request.Request(server.url + path, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        assert exc.headers["request-id"]
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize(
    ("path", "data", "headers", "status", "message"),
    [
        (
            "/v1/messages",
            b"{}",
            {"anthropic-version": "2023-06-01"},
            401,
            "x-api-key header is required",
        ),
        ("/v1/messages", b"{}", {"x-api-key": "k"}, 400, "anthropic-version: header is required"),
        ("/v1/complete", b"{}", {"x-api-key": "k", "anthropic-version": "v"}, 404, "Not Found"),
        (
            "/v1/messages",
            b"{nope",
            {"x-api-key": "k", "anthropic-version": "v"},
            400,
            "error parsing the body",
        ),
    ],
)
def test_http_level_errors(
    fake_api: FakeAnthropicServer,
    path: str,
    data: bytes,
    headers: dict[str, str],
    status: int,
    message: str,
) -> None:
    """Credentials, version header, unknown paths and broken JSON get the API's errors."""
    got, body = raw_post(fake_api, path, data, headers)
    assert got == status and body["type"] == "error" and message in body["error"]["message"]


def test_count_tokens_matches_usage(fake_api: FakeAnthropicServer) -> None:
    """count_tokens gives the input total that a Messages request reports."""
    fake_api.enqueue(Reply.text("ok"))
    client = fake_api.client()
    counted = client.messages.count_tokens(model=MODEL, messages=HELLO, tools=TOOLS).input_tokens
    usage = ask(client, HELLO).usage
    assert counted > 0
    assert (
        counted
        == usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    assert fake_api.pending == 0


@pytest.mark.parametrize("deferred_in_prefix", [True, False])
def test_caching_over_three_turns(deferred_in_prefix: bool) -> None:
    """Each turn reads the previous turn's prefix; a deferred tool added at turn 3 breaks the
    cache only when deferred definitions are part of the prefix."""
    script = [
        Reply.tool_use("Read", {"path": "a"}),
        Reply.tool_use("Read", {"path": "b"}),
        Reply.text("Done."),
    ]
    with FakeAnthropicServer(script, deferred_in_prefix=deferred_in_prefix) as server:
        client = server.client()
        tools = [tool("Read", cache_control=CACHE), tool("Weather", defer_loading=True)]
        system = [{"type": "text", "text": "You read files.", "cache_control": CACHE}]
        history: list[Any] = [
            {
                "role": "user",
                "content": [{"type": "text", "text": "read a then b", "cache_control": CACHE}],
            }
        ]
        usages = []
        for turn in range(3):
            if turn == 2:
                tools = [*tools, tool("Stocks", defer_loading=True)]
            message = stream(client, history, tools=tools, system=system)
            usages.append(message.usage)
            if message.stop_reason != "tool_use":
                break
            for block in history[-1]["content"]:
                block.pop("cache_control", None)
            answer = results(message)
            answer["content"][-1]["cache_control"] = CACHE
            history += [message.to_param(), answer]
        first, second, third = usages
        assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 0
        assert second.cache_read_input_tokens == first.cache_creation_input_tokens
        assert second.cache_creation_input_tokens > 0
        if deferred_in_prefix:
            assert 0 < third.cache_read_input_tokens < second.cache_read_input_tokens
        else:
            assert (
                third.cache_read_input_tokens
                == second.cache_read_input_tokens + second.cache_creation_input_tokens
            )
        server.assert_no_errors()
