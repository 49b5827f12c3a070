"""Old tool results cleared as they age: the edit sent by default, played by the fake API,
what it cleared shown; nbagent clearing itself where the endpoint lacks it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
from anthropic.types.beta import BetaContextManagementConfigParam

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.events import Notice
from nbagent.core.tool import tool
from nbagent.loop.agent import Agent
from nbagent.loop.context_editing import CLEARED_TEXT, ContextEditing, old_tool_uses
from nbagent.loop.context_window import context_line
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.testing.fakeapi.edits import CLEARED_RESULT
from nbagent.tools.memory import MemoryStore, memory_tool
from tests.loop.test_agent import FORECAST, forecast_tool
from tests.messages import assistant, call, result, user

TABLE = "value " * 1500
"""A tool result of some 1,500 tokens."""


@tool(read_only=True)
def table(name: str) -> str:
    """Print a big table."""
    return f"{name}: {TABLE}"


SMALL = ContextEditing(trigger=2000, keep=1, clear_at_least=0)
"""Clears early, for short conversations."""


def edits_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The context_management edits of a request."""
    return list((body.get("context_management") or {}).get("edits", ()))


def test_the_edit_is_sent_by_default_as_the_sdk_types_it(fake_api: FakeAnthropicServer) -> None:
    """Every turn carries clear_tool_uses_20250919 with ToolSearch excluded, under its beta;
    the config validates as the SDK's BetaContextManagementConfigParam."""
    agent = Agent(registry=ToolRegistry([table]), client=fake_api.client())
    fake_api.enqueue(Reply.text("Hi."))
    agent.run("Hello.")
    request = fake_api.requests[-1]
    clear, compact = edits_of(request.body)
    assert clear == {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 60_000},
        "keep": {"type": "tool_uses", "value": 4},
        "exclude_tools": ["ToolSearch"],
        "clear_at_least": {"type": "input_tokens", "value": 10_000},
    }
    assert compact["type"] == "compact_20260112"
    pydantic.TypeAdapter(BetaContextManagementConfigParam).validate_python(
        request.body["context_management"], strict=True
    )
    betas = request.headers["anthropic-beta"].split(",")
    assert set(betas) == {"context-management-2025-06-27", "compact-2026-01-12"}
    assert agent.editor.last is None


def test_off_sends_no_edit(fake_api: FakeAnthropicServer) -> None:
    """context_editing=None (and compaction off) sends no context_management, no beta."""
    agent = Agent(
        registry=ToolRegistry([table]),
        client=fake_api.client(),
        context_editing=None,
        compaction="off",
    )
    fake_api.enqueue(Reply.text("Hi."))
    agent.run("Hello.")
    assert "context_management" not in fake_api.requests[-1].body
    assert "anthropic-beta" not in fake_api.requests[-1].headers


def test_the_api_clears_old_results_and_the_meter_says_so(fake_api: FakeAnthropicServer) -> None:
    """Past the trigger the fake API clears all but the last result; the agent says what
    was cleared, the context line shows it, and the history keeps every result."""
    agent = Agent(registry=ToolRegistry([table]), client=fake_api.client(), context_editing=SMALL)
    fake_api.enqueue(
        *(Reply.tool_use("table", {"name": f"t{k}"}) for k in range(4)), Reply.text("Done.")
    )
    events: list[Any] = []
    agent.run("Show the tables.", on_event=events.append)
    last = fake_api.requests[-1]
    assert last.answer is not None
    (applied,) = last.answer["context_management"]["applied_edits"]
    assert applied["cleared_tool_uses"] == 3
    assert agent.editor.last is not None and agent.editor.last.tool_uses == 3
    assert agent.editor.last.tokens == applied["cleared_input_tokens"] > 3 * 1400
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("Cleared the results of 3 old tool calls" in n for n in notices)
    line = context_line(agent.last_prompt_tokens, 200_000, cleared=agent.editor.last)
    assert "cleared 3 old tool results" in line
    kept = [b for m in agent.messages for b in m["content"] if b.get("type") == "tool_result"]
    assert all(TABLE in str(b["content"]) for b in kept)  # the history is whole
    assert (
        last.answer["usage"]["input_tokens"]
        + last.answer["usage"]["cache_read_input_tokens"]
        + last.answer["usage"]["cache_creation_input_tokens"]
        < 3000
    )
    fake_api.assert_no_errors()


def test_tools_loaded_by_toolsearch_stay_loaded(fake_api: FakeAnthropicServer) -> None:
    """ToolSearch's results are never cleared: the tool it loaded stays callable after old
    results are cleared (the fake API would refuse a call of an unloaded tool)."""
    agent = Agent(
        registry=ToolRegistry([table, forecast_tool()]),
        client=fake_api.client(),
        context_editing=SMALL,
    )
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:" + FORECAST}),
        *(Reply.tool_use("table", {"name": f"t{k}"}) for k in range(3)),
        Reply.tool_use(FORECAST, {"city": "Oslo"}),
        Reply.text("Sunny."),
    )
    assert agent.run("Tables, then the weather.").text == "Sunny."
    applied = fake_api.requests[-1].answer["context_management"]["applied_edits"]  # type: ignore[index]
    assert applied and applied[0]["cleared_tool_uses"] == 3
    fake_api.assert_no_errors()


def test_an_endpoint_without_context_editing_is_cleared_by_nbagent() -> None:
    """The refused edit is dropped with a warning; past the trigger nbagent replaces the old
    results in the requests it sends, and keeps the history whole."""
    with FakeAnthropicServer(supports_context_editing=False) as api:
        agent = Agent(registry=ToolRegistry([table]), client=api.client(), context_editing=SMALL)
        api.enqueue(
            *(Reply.tool_use("table", {"name": f"t{k}"}) for k in range(4)), Reply.text("Done.")
        )
        events: list[Any] = []
        agent.run("Show the tables.", on_event=events.append)
        warnings = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
        assert warnings == [
            "This endpoint has no context editing; nbagent will clear old tool results itself."
        ]
        last = api.requests[-1].body
        assert all(e["type"] != "clear_tool_uses_20250919" for e in edits_of(last))
        results = [
            b["content"]
            for m in last["messages"]
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        assert results[:3] == [CLEARED_TEXT] * 3 and TABLE in str(results[3])
        assert agent.editor.last is not None and agent.editor.last.by == "nbagent"
        assert CLEARED_RESULT not in str(last)
        api.assert_no_errors()


def answered(ident: str) -> dict[str, Any]:
    """A user message with a tool result."""
    return {"role": "user", "content": [result(ident)]}


def test_old_tool_uses_spares_toolsearch_and_the_last_ones() -> None:
    """The uses cleared are the old ones, less ToolSearch's and the excluded tools'."""
    history = [
        user("go"),
        assistant(call("a", "ToolSearch")),
        answered("a"),
        assistant(call("b", "Read")),
        answered("b"),
        assistant(call("c", "Grep")),
        answered("c"),
        assistant(call("d", "Read")),
        answered("d"),
    ]
    assert old_tool_uses(history, ContextEditing(keep=1)) == {"b", "c"}
    assert old_tool_uses(history, ContextEditing(keep=1, exclude=("Grep",))) == {"b"}
    assert old_tool_uses(history, ContextEditing(keep=9)) == set()
    reads = [
        user("go"),
        assistant(call("r1", "NotebookRead")),
        answered("r1"),
        assistant(call("r2", "NotebookRead", notebook_path="other.ipynb")),
        answered("r2"),
        assistant(call("r3", "NotebookRead")),
        answered("r3"),
        assistant(call("e", "Edit")),
        answered("e"),
    ]
    # the latest read of each notebook stays: r2 (other.ipynb) and r3 (the open one)
    assert old_tool_uses(reads, ContextEditing(keep=0)) == {"r1", "e"}


class Unread(list):  # type: ignore[type-arg]
    """A request's tool list that fails when anything walks it."""

    def __iter__(self) -> Any:
        raise AssertionError("the request's tools were walked")


def test_the_betas_never_walk_the_requests_tools(tmp_path: Path) -> None:
    """The memory tool's beta is found by the tool's name: a request's tools are the whole
    catalogue (10,000 deferred ones), and its betas are worked out at every request."""
    registry = ToolRegistry([table])
    agent = Agent(registry=registry, client=object(), context_editing=None)
    request = {"tools": Unread([{"name": "table"}])}
    assert agent.editor.betas(request) == ()
    registry.register(memory_tool(MemoryStore(tmp_path)))
    assert agent.editor.betas(request) == ("context-management-2025-06-27",)
