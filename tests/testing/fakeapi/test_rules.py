"""Request validation: every rule, directly and through the real SDK against the fake server."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.testing import FakeAnthropicServer
from nbagent.testing.fakeapi.rules import (
    ApiError,
    call_error,
    check_request,
    context_tools,
    count_breakpoints,
    tool_references,
)

CACHE = {"type": "ephemeral"}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    """A custom tool definition."""
    return {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {"type": "object"},
        **extra,
    }


def user(content: Any) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": content}


def assistant(content: Any) -> dict[str, Any]:
    """An assistant message."""
    return {"role": "assistant", "content": content}


def use(use_id: str, name: str = "Read") -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": use_id, "name": name, "input": {}}


def result(use_id: str, content: Any = "ok") -> dict[str, Any]:
    """A tool_result block."""
    return {"type": "tool_result", "tool_use_id": use_id, "content": content}


def ref(name: str) -> dict[str, Any]:
    """A tool_reference block."""
    return {"type": "tool_reference", "tool_name": name}


def request(*messages: dict[str, Any], drop: tuple[str, ...] = (), **fields: Any) -> dict[str, Any]:
    """A request body: defaults, then fields, minus the dropped keys."""
    body: dict[str, Any] = {"model": "claude-test", "max_tokens": 64}
    body["messages"] = list(messages) or [user("hi")]
    body.update(fields)
    return {k: v for k, v in body.items() if k not in drop}


SEARCHING = [tool("ToolSearch"), tool("Weather", defer_loading=True)]
ROUND_TRIP = (user("go"), assistant([use("toolu_1")]), user([result("toolu_1")]))

INVALID: list[tuple[str, dict[str, Any], bool, str]] = [
    ("no model", request(drop=("model",)), True, "model: Field required"),
    ("no max_tokens", request(drop=("max_tokens",)), True, "max_tokens: Field required"),
    ("no messages", request(drop=("messages",)), True, "messages: Field required"),
    ("max_tokens 0", request(max_tokens=0), True, "greater than or equal to 1"),
    ("empty messages", request(messages=[]), True, "at least one message is required"),
    (
        "assistant first",
        request(assistant("hello"), user("hi")),
        True,
        'messages: first message must use the "user" role',
    ),
    (
        "two users",
        request(user("a"), user("b")),
        True,
        'roles must alternate between "user" and "assistant", but found multiple "user" roles',
    ),
    (
        "two assistants",
        request(user("a"), assistant("b"), assistant("c")),
        True,
        'found multiple "assistant" roles in a row',
    ),
    (
        "empty content",
        request(user([])),
        True,
        "messages.0: all messages must have non-empty content",
    ),
    ("blank text", request(user([{"type": "text", "text": " "}])), True, "non-whitespace text"),
    (
        "unanswered tool_use",
        request(user("go"), assistant([use("toolu_1")]), user("thanks"), tools=[tool("Read")]),
        True,
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after",
    ),
    (
        "tool_use last",
        request(user("go"), assistant([use("toolu_1")]), tools=[tool("Read")]),
        True,
        "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
    ),
    (
        "tool_result after text",
        request(
            user("go"),
            assistant([use("toolu_1")]),
            user([{"type": "text", "text": "here"}, result("toolu_1")]),
            tools=[tool("Read")],
        ),
        True,
        "messages.2.content.1: tool_result blocks must come first",
    ),
    (
        "unknown tool_result id",
        request(*ROUND_TRIP, assistant("ok"), user([result("toolu_9")]), tools=[tool("Read")]),
        True,
        "messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9",
    ),
    (
        "two results for one use",
        request(
            user("go"),
            assistant([use("toolu_1")]),
            user([result("toolu_1"), result("toolu_1")]),
            tools=[tool("Read")],
        ),
        True,
        "Found multiple `tool_result` blocks with id: toolu_1",
    ),
    (
        "tool_use ids reused",
        request(
            *ROUND_TRIP,
            assistant([use("toolu_1")]),
            user([result("toolu_1")]),
            tools=[tool("Read")],
        ),
        True,
        "`tool_use` ids must be unique",
    ),
    ("tool blocks without tools", request(*ROUND_TRIP), True, "must define tools"),
    (
        "tool_use from user",
        request(user([use("toolu_1")])),
        True,
        "tool_use blocks cannot appear in user",
    ),
    ("bare tool_reference", request(user([ref("Read")])), True, "only allowed inside tool_result"),
    (
        "bad tool name",
        request(tools=[tool("read file")]),
        True,
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
    ),
    ("tool name too long", request(tools=[tool("x" * 65)]), True, "String should match pattern"),
    (
        "duplicate names",
        request(tools=[tool("Read"), tool("Read")]),
        True,
        "tools: Tool names must be unique.",
    ),
    (
        "no input_schema",
        request(tools=[{"name": "Read", "description": "d"}]),
        True,
        "tools.0.custom.input_schema: Field required",
    ),
    (
        "array input_schema",
        request(tools=[{"name": "Read", "input_schema": {"type": "array"}}]),
        True,
        "tools.0.custom.input_schema.type: Input should be 'object'",
    ),
    (
        "draft-04 input_schema",
        request(
            tools=[
                tool("Read"),
                {
                    "name": "Page",
                    "input_schema": {
                        "type": "object",
                        "properties": {"n": {"minimum": 0, "exclusiveMinimum": True}},
                    },
                },
            ]
        ),
        True,
        "tools.1.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft "
        "2020-12",
    ),
    (
        "tuple items",
        request(
            tools=[
                {
                    "name": "Point",
                    "input_schema": {
                        "type": "object",
                        "properties": {"xy": {"type": "array", "items": [{}, {}]}},
                    },
                }
            ]
        ),
        True,
        "tools.0.custom.input_schema: JSON schema is invalid",
    ),
    (
        "unknown tool_reference",
        request(
            user("go"),
            assistant([use("toolu_1", "ToolSearch")]),
            user([result("toolu_1", [ref("Ghost")])]),
            tools=SEARCHING,
        ),
        True,
        "Tool reference 'Ghost' has no corresponding tool definition",
    ),
    (
        "all deferred",
        request(tools=[tool("A", defer_loading=True), tool("B", defer_loading=True)]),
        True,
        "All tools have defer_loading set. At least one tool must be non-deferred.",
    ),
    (
        "ToolSearch deferred",
        request(tools=[tool("Read"), tool("ToolSearch", defer_loading=True)]),
        True,
        "tools.1: the ToolSearch tool cannot be deferred",
    ),
    (
        "search tool deferred",
        request(
            tools=[
                tool("Read"),
                {
                    "type": "tool_search_tool_bm25_20251119",
                    "name": "tool_search_tool_bm25",
                    "defer_loading": True,
                },
            ]
        ),
        True,
        "the tool search tool cannot have defer_loading set",
    ),
    (
        "search tool misnamed",
        request(tools=[{"type": "tool_search_tool_regex_20251119", "name": "search"}]),
        True,
        "tools.0.tool_search_tool_regex_20251119.name: Input should be 'tool_search_tool_regex'",
    ),
    (
        "cache_control on deferred",
        request(tools=[tool("Read"), tool("Weather", defer_loading=True, cache_control=CACHE)]),
        True,
        "tools.1: cache_control cannot be set on a tool with defer_loading",
    ),
    (
        "too many deferred",
        request(tools=[tool("Read")] + [tool(f"t{i}", defer_loading=True) for i in range(10_001)]),
        True,
        "A maximum of 10000 tools with defer_loading may be provided. Found 10001.",
    ),
    (
        "five breakpoints",
        request(
            user([{"type": "text", "text": f"part {i}", "cache_control": CACHE} for i in range(3)]),
            tools=[tool("A", cache_control=CACHE)],
            system=[{"type": "text", "text": "sys", "cache_control": CACHE}],
        ),
        True,
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "tool_reference unsupported",
        request(
            user("go"),
            assistant([use("toolu_1", "ToolSearch")]),
            user([result("toolu_1", [ref("Read")])]),
            tools=[tool("ToolSearch"), tool("Read")],
        ),
        False,
        "Input tag 'tool_reference' found using 'type' does not match",
    ),
    (
        "defer_loading unsupported",
        request(tools=[tool("Read"), tool("Weather", defer_loading=True)]),
        False,
        "tools.1.defer_loading: Extra inputs are not permitted",
    ),
    (
        "search tool unsupported",
        request(
            tools=[{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}]
        ),
        False,
        "Input tag 'tool_search_tool_bm25_20251119' found using 'type'",
    ),
]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[bool, FakeAnthropicServer]]:
    """One server with tool search support, one without."""
    with FakeAnthropicServer() as full, FakeAnthropicServer(supports_tool_reference=False) as bare:
        yield {True: full, False: bare}


@pytest.mark.parametrize(
    ("body", "supports", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_request_is_answered_400(
    servers: dict[bool, FakeAnthropicServer], body: dict[str, Any], supports: bool, message: str
) -> None:
    """Each rule: the function names the error, and the SDK gets the API's 400 error shape."""
    error = check_request(body, supports_tool_reference=supports)
    assert isinstance(error, ApiError) and error.status == 400 and message in error.message
    server = servers[supports]
    with pytest.raises(anthropic.BadRequestError) as caught:
        server.client().post("/v1/messages", body=body, cast_to=anthropic.types.Message)
    assert caught.value.status_code == 400
    assert caught.value.body["error"] == {"type": "invalid_request_error", "message": error.message}
    assert caught.value.request_id and caught.value.request_id.startswith("req_")
    assert server.requests[-1].status == 400 and not server.errors


def test_count_tokens_needs_no_max_tokens() -> None:
    """count_tokens validates as Messages does, but without max_tokens."""
    assert isinstance(check_request(request(drop=("max_tokens",)), count_tokens=True), set)
    error = check_request(request(drop=("model",)), count_tokens=True)
    assert isinstance(error, ApiError) and error.message == "model: Field required"


def test_valid_round_trip_and_references() -> None:
    """A tool round trip whose result loads a deferred tool is valid; the tool is then visible."""
    body = request(
        user("weather?"),
        assistant([{"type": "text", "text": "Searching."}, use("toolu_1", "ToolSearch")]),
        user([result("toolu_1", [ref("Weather")]), {"type": "text", "text": "reminder"}]),
        tools=[*SEARCHING, tool("Stocks", defer_loading=True)],
    )
    assert check_request(body) == {"ToolSearch", "Weather"}


def test_server_search_results_load_tools() -> None:
    """A tool_search_tool_result in an assistant turn loads the tools it references."""
    search = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    found = {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {"type": "tool_search_tool_search_result", "tool_references": [ref("Weather")]},
    }
    turn = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "tool_search_tool_bm25",
            "input": {"query": "w"},
        },
        found,
    ]
    body = request(
        user("weather?"),
        assistant(turn),
        user("and?"),
        tools=[search, tool("Weather", defer_loading=True)],
    )
    assert context_tools(body) == {"tool_search_tool_bm25", "Weather"}
    assert list(tool_references(found)) == ["Weather"]


def test_call_error_explains_why() -> None:
    """A deferred, never loaded tool and an unknown tool are named with the reason."""
    body = request(tools=SEARCHING)
    visible = context_tools(body)
    assert call_error("ToolSearch", body, visible) is None
    deferred = call_error("Weather", body, visible)
    assert deferred and "it is deferred and was never loaded by a tool_reference" in deferred
    unknown = call_error("Ghost", body, visible)
    assert unknown and "it is not in the request's tools" in unknown


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=8))
def test_role_sequences(roles: list[str]) -> None:
    """A role sequence is accepted exactly when it starts with user and alternates."""
    body = request(*({"role": role, "content": f"turn {i}"} for i, role in enumerate(roles)))
    alternates = all(a != b for a, b in itertools.pairwise(roles))
    assert isinstance(check_request(body), set) == (roles[0] == "user" and alternates)


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=0, max_value=8), st.integers(min_value=0, max_value=3))
def test_breakpoint_limit(in_messages: int, in_tools: int) -> None:
    """Breakpoints are counted over tools and messages, nested ones included; 4 at most."""
    nested = [
        result(
            "toolu_1",
            [{"type": "text", "text": f"r{i}", "cache_control": CACHE} for i in range(in_messages)]
            or "ok",
        )
    ]
    body = request(
        user("go"),
        assistant([use("toolu_1")]),
        user(nested),
        tools=[tool(f"T{i}", cache_control=CACHE) for i in range(in_tools)] + [tool("Read")],
    )
    assert count_breakpoints(body) == in_messages + in_tools
    assert isinstance(check_request(body), set) == (in_messages + in_tools <= 4)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("ABCDEFG"), st.booleans()),
        min_size=1,
        max_size=7,
        unique_by=lambda t: t[0],
    ),
    st.sets(st.sampled_from("ABCDEFG")),
)
def test_context_is_loaded_plus_referenced(
    tools: list[tuple[str, bool]], referenced: set[str]
) -> None:
    """The context is the loaded tools plus the referenced tools that exist."""
    definitions = [tool("ToolSearch")] + [
        tool(name, defer_loading=deferred) for name, deferred in tools
    ]
    names = {name for name, _ in tools}
    refs = [ref(name) for name in sorted(referenced & names)] or "none found"
    body = request(
        user("go"),
        assistant([use("toolu_1", "ToolSearch")]),
        user([result("toolu_1", refs)]),
        tools=definitions,
    )
    loaded = {"ToolSearch"} | {name for name, deferred in tools if not deferred}
    assert check_request(body) == loaded | (referenced & names)


def test_an_unknown_model_is_not_found() -> None:
    from nbagent.testing.fakeapi.rules import ApiError, check_request

    body = {"model": "gpt-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    assert check_request(body) == ApiError(404, "not_found_error", "model: gpt-x")
