"""A conversation kept inside the context window: nbagent's own summary (client compaction),
the tools loaded before it still callable, the deferred names announced again once."""

from __future__ import annotations

import re
from typing import Any

from nbagent.catalogue.delta import ADDED_HEADER, announced_names, since_compaction
from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.events import Notice, ToolSetAnnounced
from nbagent.loop.agent import Agent
from nbagent.loop.compaction import SUMMARY_REQUEST
from nbagent.loop.history import SUMMARY_TAG
from nbagent.testing import FakeAnthropicServer, Reply
from tests.loop.test_agent import FORECAST, echo, forecast_tool
from tests.shells import run


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


FILLER = " ".join(f"word{i}" for i in range(60))


def test_a_300_turn_session_in_a_small_window_never_overflows() -> None:
    registry = ToolRegistry([echo, forecast_tool()])
    with FakeAnthropicServer(context_window=6_000, min_compaction_trigger=1) as api:
        agent = Agent(registry=registry, client=api.client(), compact_threshold=3_000)
        agent.server_min_trigger = 1
        api.enqueue(
            Reply.tool_use("ToolSearch", {"query": "select:" + FORECAST}),
            Reply.tool_use(FORECAST, {"city": "Oslo"}),
            Reply.text("Sunny in Oslo."),
        )
        agent.run("Weather in Oslo?")
        for turn in range(2, 301):
            if turn == 250:  # long after the first compactions: the tool is still loaded
                api.enqueue(Reply.tool_use(FORECAST, {"city": "Bergen"}))
            api.enqueue(Reply.text(f"Answer {turn}: {FILLER}"))
            result = agent.run(f"Question {turn}: {FILLER}")
            assert result.text.startswith(f"Answer {turn}:")
            assert agent.last_prompt_tokens <= api.window(agent.model)
        api.assert_no_errors()
        bodies = [r.body for r in api.requests]
    compacted = [i for i, b in enumerate(bodies) if _has_compaction(b["messages"])]
    assert compacted and len({_last_block(bodies[i]["messages"]) for i in compacted}) >= 5
    for body in bodies[compacted[0] :]:
        seen = since_compaction(body["messages"])
        announced = sum(ADDED_HEADER in t for m in seen if m["role"] == "user" for t in texts(m))
        assert announced == 1  # the deferred names again, once, after each compaction
    calls = [
        b
        for body in bodies
        for m in body["messages"]
        for b in m["content"]
        if b.get("type") == "tool_result" and "Bergen" in str(b.get("content"))
    ]
    assert calls and not calls[0].get("is_error")


def _has_compaction(messages: list[dict[str, Any]]) -> bool:
    return any(b.get("type") == "compaction" for m in messages for b in m["content"])


def _last_block(messages: list[dict[str, Any]]) -> str:
    blocks = [b for m in messages for b in m["content"] if b.get("type") == "compaction"]
    return blocks[-1]["signature"]


def test_an_endpoint_without_compaction_is_asked_again_and_nbagent_summarises() -> None:
    registry = ToolRegistry([echo])
    with FakeAnthropicServer(supports_compaction=False) as api:
        agent = Agent(registry=registry, client=api.client())
        api.enqueue(Reply.text("Hello."))
        events: list[Any] = []
        assert agent.run("Hi.", on_event=events.append).text == "Hello."
        refused, retried = api.requests[0].body, api.requests[1].body
        assert edit_types(refused) == ["clear_tool_uses_20250919", "compact_20260112"]
        assert edit_types(retried) == ["clear_tool_uses_20250919"]
        warnings = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
        assert warnings == [
            "This endpoint has no server-side compaction; nbagent will summarise the "
            "conversation itself when it grows long."
        ]
        agent.compact_threshold = agent.last_prompt_tokens
        api.enqueue(Reply.text("The user said hi."), Reply.text("Hello again."))
        assert agent.run("Hi again.").text == "Hello again."
        assert texts(api.requests[2].body["messages"][-1])[-1] == SUMMARY_REQUEST
        assert edit_types(api.requests[3].body) == ["clear_tool_uses_20250919"]
        api.assert_no_errors()


def edit_types(body: dict[str, Any]) -> list[str]:
    """The types of a request's context_management edits."""
    return [edit["type"] for edit in (body.get("context_management") or {}).get("edits", ())]


def test_status_meter_and_agent_compact_in_a_notebook(
    ip: Any, fake_api: FakeAnthropicServer
) -> None:
    fake_api.enqueue(Reply.text("Hello."))
    result, shown = run(ip, "%%agent\nHi.")
    assert result.success
    meter = r"context: [\d,]+ of 1,000,000 tokens \((<1|\d+)%\) · compacts at 150,000"
    assert re.search(meter, shown)
    _, status = run(ip, "%agent status")
    assert re.search(r"\*\*context\*\*: [\d,]+ of 1,000,000 tokens", status)
    fake_api.enqueue(Reply.text("The user said hi; I said hello."))
    result, shown = run(ip, "%agent compact")
    assert result.success
    assert "The conversation was compacted: the model's summary replaces 2 earlier messages" in (
        shown
    )
    fake_api.enqueue(Reply.text("Hello again."))
    run(ip, "%%agent\nAnd again.")
    first = fake_api.requests[-1].body["messages"][0]
    assert texts(first)[0].startswith(f"<{SUMMARY_TAG}>\nThe user said hi")


def test_a_compacted_conversation_goes_on_when_compaction_is_switched_off() -> None:
    with FakeAnthropicServer(min_compaction_trigger=1) as api:
        agent = Agent(registry=ToolRegistry([echo]), client=api.client(), compact_threshold=200)
        agent.server_min_trigger = 1
        for turn in range(1, 4):
            api.enqueue(Reply.text(f"Answer {turn}: {FILLER}"))
            agent.run(f"Question {turn}: {FILLER}")
        assert _has_compaction(agent.messages)
        agent.compaction = "off"
        api.enqueue(Reply.text("Still here."))
        assert agent.run("Go on.").text == "Still here."
        last = api.requests[-1]
        assert edit_types(last.body) == ["clear_tool_uses_20250919"]
        assert "compact-2026-01-12" in last.headers.get("anthropic-beta", "")
        api.assert_no_errors()
