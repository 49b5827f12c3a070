"""A misbehaving model: calls to tools it cannot call, bad input, floods of calls, endless loops.

FakeAnthropicServer refuses to script a call the model could not see; ``unchecked=True`` on a
``ToolUse`` plays it anyway, so that these tests can show how the agent copes.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
import pytest

from nbagent.core.events import Notice, RunFinished, ToolCallFinished
from nbagent.core.tool import Tool
from nbagent.testing import FakeAnthropicServer, Reply, ToolUse
from tests.reliability.helpers import (
    agent_for,
    assert_next_run_works,
    bodies,
    results_told,
    tool_results,
)

FORECAST = "mcp__weather__forecast"


def forecast(calls: list[str]) -> Tool:
    """A deferred MCP-style tool that records the cities it was asked about."""

    def handler(city: str) -> str:
        calls.append(city)
        return f"Sunny in {city}"

    return Tool(
        name=FORECAST,
        description="Weather forecast for a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string", "minLength": 1}},
            "required": ["city"],
            "additionalProperties": False,
        },
        handler=handler,
        is_mcp=True,
        server="weather",
    )


# The fake server's opt-in ---------------------------------------------------------------


def test_unchecked_plays_a_call_the_model_could_not_see(fake_api: FakeAnthropicServer) -> None:
    client = fake_api.client()
    request = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
    }
    fake_api.enqueue(Reply.tool_use("Ghost", {"x": 1}))
    with pytest.raises(anthropic.InternalServerError, match="cannot call Ghost"):
        client.messages.create(**request)
    assert fake_api.take_errors() == [
        "script error: the model cannot call Ghost: it is not in the request's tools"
    ]
    fake_api.enqueue(
        Reply.tool_use("Ghost", {"x": 1}, unchecked=True),
        Reply.of(ToolUse("Read"), ToolUse("Ghost", id="toolu_ghost", unchecked=True)),
    )
    [use] = client.messages.create(**request).content
    assert (use.type, use.name, use.input) == ("tool_use", "Ghost", {"x": 1})
    read, ghost = client.messages.create(**request).content
    assert (read.name, ghost.name, ghost.id) == ("Read", "Ghost", "toolu_ghost")


# Calls the model cannot make ------------------------------------------------------------


def test_a_call_of_an_unknown_tool_is_answered_with_an_error(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(
        Reply.tool_use("DeleteEverything", {"really": True}, unchecked=True), Reply.text("Sorry.")
    )
    agent = agent_for(fake_api)
    result = agent.run("go")
    assert result.text == "Sorry."
    [told] = results_told(fake_api)
    assert (told["content"], told["is_error"]) == (
        "No tool named 'DeleteEverything' is available.",
        True,
    )
    assert [(c.name, c.status) for c in result.tool_calls] == [("DeleteEverything", "error")]
    assert_next_run_works(fake_api, agent)


def test_a_deferred_tool_never_searched_is_refused_until_it_is_loaded(
    fake_api: FakeAnthropicServer,
) -> None:
    cities: list[str] = []
    fake_api.enqueue(
        Reply.tool_use(FORECAST, {"city": "Oslo"}, unchecked=True),
        Reply.tool_use("ToolSearch", {"query": f"select:{FORECAST}"}),
        Reply.tool_use(FORECAST, {"city": "Oslo"}),
        Reply.text("Sunny."),
    )
    agent = agent_for(fake_api, forecast(cities))
    result = agent.run("Weather in Oslo?")
    assert result.text == "Sunny."
    first = tool_results(bodies(fake_api)[1]["messages"][-1])[0]
    assert (first["content"], first["is_error"]) == (
        f'Tool {FORECAST} is deferred and not loaded: call ToolSearch with "select:{FORECAST}" '
        "first.",
        True,
    )
    assert cities == ["Oslo"], "the refused call did not run; the loaded one did"
    assert [c.status for c in result.tool_calls] == ["error", "ok", "ok"]
    assert_next_run_works(fake_api, agent)


@pytest.mark.parametrize(
    ("tool_input", "message"),
    [
        ({"city": 3}, "- `city`: 3 is not of type 'string'"),
        ({}, "- `city`: 'city' is a required property"),
        ({"city": ""}, "- `city`: '' should be non-empty"),
        (
            {"city": "Oslo", "days": 3},
            "- input: Additional properties are not allowed ('days' was unexpected)",
        ),
        (
            {"city": ["Oslo"], "units": "metric"},
            "- input: Additional properties are not allowed ('units' was unexpected)\n"
            "- `city`: ['Oslo'] is not of type 'string'",
        ),
    ],
    ids=["wrong type", "missing", "too short", "extra field", "two faults"],
)
def test_input_that_violates_the_schema_names_each_bad_field(
    fake_api: FakeAnthropicServer, tool_input: dict[str, Any], message: str
) -> None:
    cities: list[str] = []
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": f"select:{FORECAST}"}),
        Reply.tool_use(FORECAST, tool_input),
        Reply.text("I sent bad input."),
    )
    agent = agent_for(fake_api, forecast(cities))
    agent.run("Weather?")
    [told] = results_told(fake_api)
    assert told["is_error"] is True
    assert told["content"] == f"Invalid input for tool {FORECAST}:\n{message}"
    assert cities == []
    assert_next_run_works(fake_api, agent)


def test_input_that_violates_a_decorated_functions_types(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.tool_use("echo", {"text": {"nested": True}}), Reply.text("Oops."))
    agent = agent_for(fake_api)
    agent.run("go")
    [told] = results_told(fake_api)
    assert told == {
        "type": "tool_result",
        "tool_use_id": told["tool_use_id"],
        "content": "Invalid input for tool echo:\n- `text`: {'nested': True} is not of type "
        "'string'",
        "is_error": True,
    }
    assert_next_run_works(fake_api, agent)


@pytest.mark.parametrize(
    ("tool", "tool_input", "message"),
    [
        (
            "echo",
            {"text": "hi", "loud": True},
            "Invalid input for tool echo:\n- `loud`: unexpected field (the tool takes: text)",
        ),
        (
            "Plain",
            {"city": "Oslo", "units": "metric", "days": 2},
            "Invalid input for tool Plain:\n- `units`: unexpected field (the tool takes: city)\n"
            "- `days`: unexpected field (the tool takes: city)",
        ),
    ],
    ids=["decorated function", "plain handler"],
)
def test_a_field_the_handler_does_not_take_is_an_input_error(
    fake_api: FakeAnthropicServer, tool: str, tool_input: dict[str, Any], message: str
) -> None:
    """A schema allows extra fields unless it says otherwise; before the fix they reached the
    handler: an AttributeError (decorated) or a TypeError (plain), reported as a crash."""
    plain = Tool(
        name="Plain",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        handler=lambda city: f"Sunny in {city}",
    )
    fake_api.enqueue(Reply.tool_use(tool, tool_input), Reply.text("Noted."))
    agent = agent_for(fake_api, plain)
    agent.run("go")
    [told] = results_told(fake_api)
    assert (told["content"], told["is_error"]) == (message, True)
    assert_next_run_works(fake_api, agent)


# Floods and loops -----------------------------------------------------------------------


def test_a_hundred_calls_in_one_turn_are_all_answered_in_order(
    fake_api: FakeAnthropicServer,
) -> None:
    """Echoes (run together), unknown tools and a tool that must run alone, interleaved."""
    order: list[int] = []
    alone = Tool(
        name="Alone",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        handler=lambda n: order.append(n) or f"alone {n}",
    )
    parts: list[ToolUse] = []
    for i in range(100):
        if i % 10 == 3:
            parts.append(ToolUse("Alone", {"n": i}))
        elif i % 10 == 7:
            parts.append(ToolUse(f"Ghost{i}", {}, unchecked=True))
        else:
            parts.append(ToolUse("echo", {"text": f"echo {i}"}))
    fake_api.enqueue(Reply.of(*parts), Reply.text("All done."))
    agent = agent_for(fake_api, alone)
    started = time.monotonic()
    events = list(agent.events("Do a hundred things."))
    assert time.monotonic() - started < 10
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 100
    uses = [b for b in agent.messages[1]["content"] if b["type"] == "tool_use"]
    told = results_told(fake_api)
    assert [t["tool_use_id"] for t in told] == [u["id"] for u in uses]
    assert len({u["id"] for u in uses}) == 100
    for i, result in enumerate(told):
        if i % 10 == 3:
            assert (result["content"], "is_error" in result) == (f"alone {i}", False)
        elif i % 10 == 7:
            assert result["content"] == f"No tool named 'Ghost{i}' is available."
        else:
            assert (result["content"], "is_error" in result) == (f"echo {i}", False)
    assert order == list(range(3, 100, 10)), "calls that must run alone run in order"
    assert_next_run_works(fake_api, agent)


def test_an_endless_tool_loop_is_stopped_by_max_turns(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        *[Reply.tool_use("echo", {"text": f"again {i}"}) for i in range(4)],
        *[Reply.tool_use("Nowhere", unchecked=True) for _ in range(4)],
    )
    agent = agent_for(fake_api, max_turns=8)
    events = list(agent.events("Loop forever."))
    last = events[-1]
    assert isinstance(last, RunFinished) and last.stop_reason == "max_turns"
    assert [e.message for e in events if isinstance(e, Notice)] == [
        "Stopped after 8 turns (max_turns)."
    ]
    assert len(bodies(fake_api)) == 8 and fake_api.pending == 0
    assert [m["role"] for m in agent.messages] == ["user", "assistant"] * 8 + ["user"]
    assert tool_results(agent.messages[-1])[0]["content"] == "No tool named 'Nowhere' is available."
    assert_next_run_works(fake_api, agent)
    # The next prompt joined the last tool results in one user turn.
    assert [b["type"] for b in bodies(fake_api)[-1]["messages"][-1]["content"]] == [
        "tool_result",
        "text",
    ]
