"""A conversation kept inside the context window: nbagent's own summary (client compaction),
the tools loaded before it still callable, the deferred names announced again once."""

from __future__ import annotations

from typing import Any

from nbagent.agent import SUMMARY_REQUEST, SUMMARY_TAG, Agent
from nbagent.context import context_line
from nbagent.delta import ADDED_HEADER, announced_names, since_compaction
from nbagent.events import Notice, ToolSetAnnounced
from nbagent.registry import ToolRegistry
from nbagent.testing import FakeAnthropicServer, Reply
from tests.test_agent import FORECAST, echo, forecast_tool


def texts(message: dict[str, Any]) -> list[str]:
    """The text blocks of a message."""
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


def test_client_compaction_summarises_keeps_loaded_tools_and_announces_once(
    fake_api: FakeAnthropicServer,
) -> None:
    registry = ToolRegistry([echo, forecast_tool()])
    agent = Agent(registry=registry, client=fake_api.client(), compaction="client")
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:" + FORECAST}),
        Reply.tool_use(FORECAST, {"city": "Oslo"}),
        Reply.text("Sunny in Oslo."),
    )
    agent.run("Weather in Oslo?")
    agent.compact_threshold = agent.last_prompt_tokens  # the last request reached it
    fake_api.enqueue(
        Reply.text("The user asked for the weather in Oslo: sunny."),
        Reply.tool_use(FORECAST, {"city": "Bergen"}),
        Reply.text("Sunny in Bergen too."),
    )
    events: list[Any] = []
    result = agent.run("And Bergen?", on_event=events.append)
    assert result.text == "Sunny in Bergen too."

    summary_request, after = fake_api.requests[3].body, fake_api.requests[4].body
    assert texts(summary_request["messages"][-1])[-1] == SUMMARY_REQUEST
    assert "context_management" not in summary_request
    first = after["messages"][0]
    assert first["role"] == "user"
    assert texts(first)[0].startswith(f"<{SUMMARY_TAG}>\nThe user asked for the weather")
    assert "And Bergen?" in texts(first)[1]
    # the deferred names are announced again, once, in the kept user turn
    assert sum(ADDED_HEADER in t for m in after["messages"] for t in texts(m)) == 1
    assert [e.added for e in events if isinstance(e, ToolSetAnnounced)] == [(FORECAST,)]
    # the tool loaded before is sent in full (its tool_reference is gone) and called
    sent = {t["name"]: t for t in after["tools"]}
    assert "defer_loading" not in sent[FORECAST]
    calls = [b for m in agent.messages for b in m["content"] if b.get("type") == "tool_use"]
    assert [c["name"] for c in calls] == [FORECAST]  # the earlier calls were summarised
    assert result.tool_calls[0].status == "ok"
    assert any(isinstance(e, Notice) and "compacted" in e.message for e in events)


def test_compact_now_with_nothing_said_yet(fake_api: FakeAnthropicServer) -> None:
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client())
    assert [e.message for e in agent.compact() if isinstance(e, Notice)] == [
        "Nothing to compact yet."
    ]
    assert fake_api.requests == []


def test_announcements_before_a_compaction_block_are_no_longer_counted() -> None:
    announce = f"<system-reminder>\n{ADDED_HEADER}\nRead\n</system-reminder>"
    compaction = {"type": "compaction", "content": "Summary.", "signature": "s"}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": announce}]},
        {"role": "assistant", "content": [compaction, {"type": "text", "text": "Done."}]},
        {"role": "user", "content": [{"type": "text", "text": "Next."}]},
    ]
    assert announced_names(messages[:1]) == {"Read"}
    assert announced_names(messages) == set()
    assert since_compaction(messages) == messages[1:]
    failed = {**compaction, "content": None}
    assert announced_names([messages[0], {**messages[1], "content": [failed]}]) == {"Read"}


def test_context_line() -> None:
    assert context_line(150_000, 200_000, 150_000) == (
        "context: 150,000 of 200,000 tokens (75%) · compacts at 150,000"
    )
