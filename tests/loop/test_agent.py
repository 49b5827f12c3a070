"""The agent loop end to end: the real anthropic SDK against FakeAnthropicServer."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ModelAPIError, ToolError
from nbagent.core.events import (
    Notice,
    PermissionRequested,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSearchResults,
    ToolSetAnnounced,
    UsageReported,
)
from nbagent.core.tool import Tool, tool
from nbagent.loop.agent import INTERRUPTED_TEXT, Agent
from nbagent.policy.decisions import PermissionAnswer, ask, deny
from nbagent.testing import FakeAnthropicServer, Fault, Reply, ToolUse

FORECAST = "mcp__weather__forecast"


def forecast_tool(**flags: Any) -> Tool:
    return Tool(
        name=FORECAST,
        description="Weather forecast for a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        handler=lambda city: f"Sunny in {city}",
        is_mcp=True,
        server="weather",
        **flags,
    )


@tool(read_only=True)
def echo(text: str) -> str:
    """Say a text back.

    Args:
        text: The text.
    """
    return text


def registry(*extra: Tool) -> ToolRegistry:
    return ToolRegistry([echo, forecast_tool(), *extra])


def agent_for(api: FakeAnthropicServer, reg: ToolRegistry | None = None, **kwargs: Any) -> Agent:
    return Agent(registry=reg or registry(), client=api.client(), **kwargs)


def bodies(api: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [r.body for r in api.requests if r.path == "/v1/messages"]


SEARCH_THEN_CALL = [
    Reply.tool_use("ToolSearch", {"query": "weather forecast"}),
    Reply.tool_use(FORECAST, {"city": "Paris"}),
    Reply.text("It is sunny in Paris."),
]


def test_native_search_reference_call(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(*SEARCH_THEN_CALL)
    agent = agent_for(fake_api)
    events = list(agent.events("Weather in Paris?"))
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "end_turn"
    assert finished.text == "It is sunny in Paris."
    [search] = [e for e in events if isinstance(e, ToolSearchResults)]
    assert search.query == "weather forecast" and search.loaded == (FORECAST,)
    [announced] = [e for e in events if isinstance(e, ToolSetAnnounced)]
    assert announced.added == (FORECAST,)
    calls = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(c.name, c.status) for c in calls] == [("ToolSearch", "ok"), (FORECAST, "ok")]
    assert calls[1].content == "Sunny in Paris"

    first, second, third = bodies(fake_api)
    by_name = {t["name"]: t for t in first["tools"]}
    assert by_name[FORECAST]["defer_loading"] is True
    assert "defer_loading" not in by_name["echo"] and "defer_loading" not in by_name["ToolSearch"]
    assert by_name["ToolSearch"]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in first["tools"] if t.get("defer_loading"))
    announcement = first["messages"][0]["content"][-1]["text"]
    assert "now available via ToolSearch:\nmcp__weather__forecast\n" in announcement
    result = second["messages"][-1]["content"][0]
    assert result["content"] == [{"type": "tool_reference", "tool_name": FORECAST}]
    assert third["messages"][-1]["content"][0]["content"] == "Sunny in Paris"
    assert agent.loaded_names == [FORECAST]


def test_cache_breakpoints_never_pile_up_in_the_history(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(*SEARCH_THEN_CALL)
    agent = agent_for(fake_api)
    agent.run("Weather in Paris?")
    for body in bodies(fake_api):
        marks = json.dumps(body["messages"]).count("cache_control")
        assert marks == 1
    assert "cache_control" not in json.dumps(agent.messages)


def test_client_mode_sends_definitions_itself() -> None:
    with FakeAnthropicServer(SEARCH_THEN_CALL, supports_tool_reference=False) as api:
        agent = agent_for(api, mode="client")
        result = agent.run("Weather in Paris?")
        api.assert_no_errors()
    assert result.text == "It is sunny in Paris."
    first, second, _ = bodies(api)
    assert [t["name"] for t in first["tools"]] == ["echo", "ToolSearch"]
    assert [t["name"] for t in second["tools"]] == ["echo", "ToolSearch", FORECAST]
    assert "defer_loading" not in json.dumps(second["tools"])
    text = second["messages"][-1]["content"][0]["content"]
    assert text.startswith(f"Loaded: {FORECAST}.")


def test_server_mode_uses_the_apis_tool_search(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        Reply.server_tool_search("weather", [FORECAST], then=[ToolUse(FORECAST, {"city": "Oslo"})]),
        Reply.text("Sunny."),
    )
    agent = agent_for(fake_api, mode="server")
    result = agent.run("Weather in Oslo?")
    assert result.text == "Sunny." and [c.name for c in result.tool_calls] == [FORECAST]
    tools = bodies(fake_api)[0]["tools"]
    assert {
        "type": "tool_search_tool_bm25_20251119",
        "name": "tool_search_tool_bm25",
        "cache_control": {"type": "ephemeral"},
    } in tools
    assert "ToolSearch" not in [t.get("name") for t in tools]


def test_off_mode_loads_everything(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.tool_use(FORECAST, {"city": "Rome"}), Reply.text("Sunny."))
    agent = agent_for(fake_api, mode="off")
    events = list(agent.events("Weather in Rome?"))
    assert not any(isinstance(e, ToolSetAnnounced) for e in events)
    tools = bodies(fake_api)[0]["tools"]
    assert [t["name"] for t in tools] == ["echo", FORECAST]
    assert "defer_loading" not in json.dumps(tools)


def test_a_tool_added_mid_conversation_is_announced_once_and_the_prefix_stays(
    fake_api: FakeAnthropicServer,
) -> None:
    reg = registry()
    fake_api.enqueue(
        Reply.tool_use("echo", {"text": "a"}),
        Reply.tool_use("echo", {"text": "b"}),
        Reply.text("done"),
        Reply.text("again"),
    )

    def register_later(event: object) -> None:
        if isinstance(event, ToolCallFinished) and event.content == "a":
            reg.register(Tool(name="mcp__db__query", description="Run SQL.", is_mcp=True))

    agent = agent_for(fake_api, reg)
    agent.run("Echo twice", on_event=register_later)
    agent.run("Once more")
    requests = bodies(fake_api)
    texts = [json.dumps(r["messages"]) for r in requests]
    assert all(t.count("mcp__db__query") == (0 if i == 0 else 1) for i, t in enumerate(texts))
    # Every request's messages, less the breakpoint, start with the previous request's.
    for before, after in zip(requests, requests[1:], strict=False):
        old = _without_breakpoints(before["messages"])
        assert _without_breakpoints(after["messages"])[: len(old)] == old


def _without_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = json.dumps(messages).replace(', "cache_control": {"type": "ephemeral"}', "")
    return json.loads(text)


def test_tool_errors_and_crashes_reach_the_model_and_the_loop_goes_on(
    fake_api: FakeAnthropicServer, caplog: pytest.LogCaptureFixture
) -> None:
    def fail(kind: str) -> str:
        if kind == "anticipated":
            raise ToolError("The file does not exist.")
        raise RuntimeError("boom")

    failing = Tool(
        name="Fail",
        input_schema={"type": "object", "properties": {"kind": {"type": "string"}}},
        handler=fail,
    )
    fake_api.enqueue(
        Reply.tool_use("Fail", {"kind": "anticipated"}),
        Reply.tool_use("Fail", {"kind": "crash"}),
        Reply.tool_use("Fail", {"kind": 3}),
        Reply.text("I give up."),
    )
    agent = agent_for(fake_api, registry(failing), mode="off")
    result = agent.run("Try")
    assert result.text == "I give up."
    errors = [c.error for c in result.tool_calls]
    assert errors[0] == "The file does not exist."
    assert errors[1] == "Tool Fail failed: RuntimeError: boom"
    assert "`kind`: 3 is not of type 'string'" in (errors[2] or "")
    assert "Tool Fail failed" in caplog.text and "RuntimeError: boom" in caplog.text
    results = [
        b
        for m in agent.messages
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert all(b["is_error"] for b in results)


def test_permission_deny_and_ask(fake_api: FakeAnthropicServer) -> None:
    guarded = Tool(
        name="Guarded",
        handler=lambda: "ran",
        check_permission=lambda _input: deny("Not in this notebook.", "test rule"),
    )
    asked = Tool(name="Asked", handler=lambda: "ran", check_permission=lambda _input: ask("OK?"))
    answers: list[str] = []

    def asker(request: PermissionRequested) -> PermissionAnswer:
        answers.append(request.reason)
        return "yes"

    fake_api.enqueue(Reply.tool_use("Guarded"), Reply.tool_use("Asked"), Reply.text("ok"))
    agent = agent_for(fake_api, registry(guarded, asked), asker=asker)
    events = list(agent.events("go"))
    calls = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (calls[0].status, calls[0].content) == ("denied", "Not in this notebook.")
    assert calls[0].permission == "deny: test rule"
    assert (calls[1].status, calls[1].content) == ("ok", "ran")
    assert answers == ["OK?"]


def test_a_hook_that_fails_fails_its_call_before_anyone_is_asked(
    fake_api: FakeAnthropicServer,
) -> None:
    def cannot_be_made(_input: Any) -> None:
        raise ToolError("No cell with id 'gone'.")

    def broken(_input: Any) -> None:
        raise KeyError("cell_id")

    ran: list[str] = []
    impossible = Tool(
        name="Impossible", handler=lambda: ran.append("x"), check_permission=cannot_be_made
    )
    buggy = Tool(name="Buggy", handler=lambda: ran.append("y"), check_permission=broken)
    asked: list[PermissionRequested] = []
    fake_api.enqueue(Reply.tool_use("Impossible"), Reply.tool_use("Buggy"), Reply.text("ok"))
    agent = agent_for(
        fake_api, registry(impossible, buggy), asker=lambda r: asked.append(r) or "yes"
    )
    result = agent.run("go")
    assert [(c.status, c.error) for c in result.tool_calls] == [
        ("error", "No cell with id 'gone'."),
        ("error", "Buggy's permission check failed: KeyError: 'cell_id'"),
    ]
    assert asked == [] and ran == []  # nobody asked, nothing ran


def test_a_client_from_the_environment_follows_its_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """An offline model started again, or a new key: the next run uses the new address."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with FakeAnthropicServer([Reply.text("first")]) as first:
        with FakeAnthropicServer([Reply.text("second")]) as second:
            agent = Agent(registry=ToolRegistry(), mode="off")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", first.url)
            assert agent.run("go").text == "first"
            monkeypatch.setenv("ANTHROPIC_BASE_URL", second.url)
            assert agent.run("go").text == "second"
            assert (len(first.requests), len(second.requests)) == (1, 1)


def test_ask_without_an_asker_is_denied(fake_api: FakeAnthropicServer) -> None:
    asked = Tool(name="Asked", handler=lambda: "ran", check_permission=lambda _input: ask("OK?"))
    fake_api.enqueue(Reply.tool_use("Asked"), Reply.text("ok"))
    result = agent_for(fake_api, registry(asked)).run("go")
    assert result.tool_calls[0].status == "denied"
    assert "no one can be asked" in (result.tool_calls[0].error or "")


def test_concurrency_safe_calls_run_together_others_in_order(fake_api: FakeAnthropicServer) -> None:
    log: list[tuple[str, str]] = []

    def slow(name: str, safe: bool) -> Tool:
        def handler() -> str:
            log.append(("start", name))
            time.sleep(0.3)
            log.append(("end", name))
            return name

        return Tool(name=name, handler=handler, concurrency_safe=safe, read_only=safe)

    tools = [slow("A", True), slow("B", True), slow("C", False)]
    fake_api.enqueue(Reply.tool_uses(("A", {}), ("B", {}), ("C", {})), Reply.text("done"))
    agent = agent_for(fake_api, registry(*tools))
    started = time.perf_counter()
    result = agent.run("go")
    elapsed = time.perf_counter() - started
    assert elapsed < 0.85  # A and B overlap (0.3 s) then C (0.3 s)
    assert log[:2] == [("start", "A"), ("start", "B")] or log[:2] == [
        ("start", "B"),
        ("start", "A"),
    ]
    assert log[-2:] == [("start", "C"), ("end", "C")]
    ids = [b["tool_use_id"] for b in agent.messages[2]["content"] if b["type"] == "tool_result"]
    calls = [b["id"] for b in agent.messages[1]["content"] if b["type"] == "tool_use"]
    assert ids == calls  # results in the model's order
    assert result.text == "done"


def test_max_turns_stops_an_endless_loop_and_the_history_stays_valid(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(*[Reply.tool_use("echo", {"text": "again"}) for _ in range(3)])
    agent = agent_for(fake_api, max_turns=3)
    result = agent.run("loop")
    assert result.stop_reason == "max_turns" and len(result.tool_calls) == 3
    fake_api.enqueue(Reply.text("fine"))
    assert agent.run("stop now").text == "fine"  # the server validated the history


def test_the_conversation_continues_until_reset(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.text("one"), Reply.text("two"), Reply.text("three"))
    agent = agent_for(fake_api)
    agent.run("first")
    agent.run("second")
    assert len(bodies(fake_api)[1]["messages"]) == 3
    agent.reset()
    agent.run("third")
    assert len(bodies(fake_api)[2]["messages"]) == 1


def test_usage_is_summed_and_cache_reads_appear(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(*SEARCH_THEN_CALL)
    agent = agent_for(fake_api)
    events = list(agent.events("Weather in Paris?"))
    usages = [e.usage for e in events if isinstance(e, UsageReported)]
    total = events[-1].usage  # type: ignore[union-attr]
    assert total.input_tokens == sum(u.input_tokens for u in usages)
    assert total.cache_read_input_tokens > 0 and usages[-1].cache_read_input_tokens > 0


def test_streaming_text_arrives_in_pieces(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.text("A fairly long answer that the server streams in chunks."))
    deltas = [e for e in agent_for(fake_api).events("hi") if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert (
        "".join(d.text for d in deltas) == "A fairly long answer that the server streams in chunks."
    )


def test_pause_turn_continues_the_same_assistant_message(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.text("Working", stop_reason="pause_turn"), Reply.text(" done."))
    agent = agent_for(fake_api)
    result = agent.run("go")
    assert result.text == " done."
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert bodies(fake_api)[1]["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize("reason", ["refusal", "max_tokens"])
def test_other_stop_reasons_end_the_run(fake_api: FakeAnthropicServer, reason: str) -> None:
    fake_api.enqueue(Reply.text("no", stop_reason=reason))  # type: ignore[arg-type]
    assert agent_for(fake_api).run("go").stop_reason == reason


@pytest.mark.parametrize(
    "fault",
    [Fault.rate_limit(retry_after=0.01), Fault.overloaded(), Fault.server_error()],
    ids=["429", "529", "500"],
)
def test_retryable_statuses_are_retried_by_the_sdk(
    fake_api: FakeAnthropicServer, fault: Fault
) -> None:
    fake_api.enqueue(fault, Reply.text("ok"))
    agent = Agent(registry=registry(), client=fake_api.client(max_retries=2))
    assert agent.run("go").text == "ok"


def test_a_dropped_stream_is_sent_again(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        Fault.drop_stream(Reply.tool_use("echo", {"text": "partial"})),
        Reply.tool_use("echo", {"text": "whole"}),
        Reply.text("ok"),
    )
    agent = agent_for(fake_api)
    result = agent.run("go")
    assert result.text == "ok" and result.tool_calls[0].input == {"text": "whole"}


@pytest.mark.parametrize(
    ("fault", "attempts", "message"),
    [
        (Fault.http(400, message="bad"), 1, "answered 400 (invalid_request_error): bad"),
        (Fault.malformed_json(), 2, "could not be read"),
        (Fault.server_error(), 1, "answered 500 (api_error)"),
    ],
    ids=["400", "malformed-after-one-retry", "500-without-sdk-retries"],
)
def test_failures_are_clear_errors_and_the_next_run_works(
    fake_api: FakeAnthropicServer, fault: Fault, attempts: int, message: str
) -> None:
    fake_api.enqueue(Reply.text("first"), *[fault] * attempts)
    agent = agent_for(fake_api, stream_retries=1)
    agent.run("one")
    with pytest.raises(ModelAPIError, match=re.escape(message)):
        agent.run("two")
    assert fake_api.pending == 0
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    fake_api.enqueue(Reply.text("back"))
    assert agent.run("three").text == "back"


def test_interrupt_during_a_tool_keeps_the_history_valid(fake_api: FakeAnthropicServer) -> None:
    def interrupt() -> str:
        raise KeyboardInterrupt

    stop = Tool(name="Stop", handler=interrupt)
    fake_api.enqueue(
        Reply.tool_uses(("echo", {"text": "x"}), ("Stop", {}), ("echo", {"text": "y"}))
    )
    agent = agent_for(fake_api, registry(stop))
    result = agent.run("go")
    assert result.stop_reason == "interrupted"
    results = agent.messages[-1]["content"]
    assert [b.get("is_error", False) for b in results] == [False, True, True]
    assert "Interrupted by the user" in results[1]["content"]
    fake_api.enqueue(Reply.text("resumed"))
    assert agent.run("continue").text == "resumed"
    assert agent.messages[-2]["content"][-1] == {"type": "text", "text": "continue"}


def test_interrupt_during_the_stream_keeps_the_partial_answer(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Reply.text("Thinking about it at length " * 5, delay=0.1))
    agent = agent_for(fake_api)
    streamed: list[str] = []

    def interrupt_at_the_first_text(event: Any) -> None:  # Ctrl-C mid-stream, however slow
        if isinstance(event, TextDelta) and not streamed:
            streamed.append(event.text)
            raise KeyboardInterrupt

    result = agent.run("go", on_event=interrupt_at_the_first_text)
    assert result.stop_reason == "interrupted"
    last = agent.messages[-1]["content"][0]["text"]
    assert last.endswith(INTERRUPTED_TEXT) and last.startswith("Thinking")
    fake_api.wait_idle()
    fake_api.enqueue(Reply.text("resumed"))
    assert agent.run("continue").text == "resumed"


def test_legacy_mode_lists_every_deferred_tool_at_the_head(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.text("ok"))
    agent = agent_for(fake_api, legacy_announcements=True)
    agent.run("hi")
    first = bodies(fake_api)[0]["messages"][0]["content"][0]["text"]
    assert first == f"<available-deferred-tools>\n{FORECAST}\n</available-deferred-tools>"
    assert "system-reminder" not in json.dumps(agent.messages)


def test_a_loaded_tool_whose_server_left_stays_resolvable(fake_api: FakeAnthropicServer) -> None:
    reg = registry()
    fake_api.enqueue(
        *SEARCH_THEN_CALL, Reply.tool_use(FORECAST, {"city": "Rome"}), Reply.text("gone")
    )
    agent = agent_for(fake_api, reg)
    agent.run("Weather in Paris?")
    reg.unregister(FORECAST)
    result = agent.run("And Rome?")
    assert (
        result.tool_calls[0].error
        == f"Tool {FORECAST} is no longer available (its server disconnected)."
    )
    body = bodies(fake_api)[-1]
    assert any(t["name"] == FORECAST and t.get("defer_loading") for t in body["tools"])
    assert "no longer available" in json.dumps(body["messages"])


def test_interrupt_in_the_observer_leaves_a_valid_history(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.tool_use("echo", {"text": "x"}))
    agent = agent_for(fake_api)

    def interrupt_at_the_call(event: object) -> None:
        if isinstance(event, ToolCallStarted):
            raise KeyboardInterrupt

    result = agent.run("go", on_event=interrupt_at_the_call)
    assert result.stop_reason == "interrupted"
    assert agent.messages[-1]["content"][0]["is_error"] is True
    fake_api.enqueue(Reply.text("resumed"))
    assert agent.run("continue").text == "resumed"


def test_preloading_sends_what_the_prompt_names_before_any_search(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Reply.tool_use(FORECAST, {"city": "Lima"}), Reply.text("Sunny."))
    agent = agent_for(fake_api, preload_budget=3000)
    events = list(agent.events("Use the weather server: forecast for Lima."))
    [notice] = [e for e in events if isinstance(e, Notice)]
    assert notice.message.startswith("Preloaded for this prompt") and FORECAST in notice.message
    tools = {t["name"]: t for t in bodies(fake_api)[0]["tools"]}
    assert "defer_loading" not in tools[FORECAST]  # the model sees it from the first request
    assert [c.name for c in events if isinstance(c, ToolCallFinished)] == [FORECAST]


def test_tools_used_often_are_loaded_from_the_start(
    fake_api: FakeAnthropicServer, tmp_path: Any
) -> None:
    from nbagent.catalogue.promotion import UsageStore

    store = UsageStore(tmp_path / "usage.sqlite3")
    reg = registry()
    fake_api.enqueue(*SEARCH_THEN_CALL)
    agent = agent_for(fake_api, reg, usage_store=store)
    agent.run("Weather in Paris?")
    assert [(u.tool, u.uses) for u in store.usage()] == [(FORECAST, 1)]
    store.record(FORECAST)
    store.record(FORECAST)
    fake_api.enqueue(Reply.tool_use(FORECAST, {"city": "Rome"}), Reply.text("ok"))
    agent.reset()
    events = list(agent.events("Rome?"))
    assert any(isinstance(e, Notice) and "use them often" in e.message for e in events)
    first = {t["name"]: t for t in bodies(fake_api)[3]["tools"]}
    assert "defer_loading" not in first[FORECAST]
    reg.override(FORECAST, None)


def test_an_asker_that_cannot_ask_is_not_a_refusal(fake_api: FakeAnthropicServer) -> None:
    asked = Tool(name="Asked", handler=lambda: "ran", check_permission=lambda _input: ask("OK?"))
    fake_api.enqueue(Reply.tool_use("Asked"), Reply.text("ok"))
    agent = agent_for(fake_api, registry(asked), asker=lambda request: None)
    events = list(agent.events("go"))
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.status == "denied" and finished.permission.startswith("nobody could be asked")
    assert "no one can be asked" in str(finished.content)


def test_an_interrupt_while_the_user_is_asked_ends_the_run_with_the_call_interrupted(
    fake_api: FakeAnthropicServer,
) -> None:
    asked = Tool(name="Asked", handler=lambda: "ran", check_permission=lambda _input: ask("OK?"))

    def asker(request: PermissionRequested) -> PermissionAnswer:
        raise KeyboardInterrupt  # the user pressed Stop instead of answering

    fake_api.enqueue(Reply.tool_use("Asked"), Reply.text("next cell"))
    agent = agent_for(fake_api, registry(asked), asker=asker)
    result = agent.run("go")
    assert result.stop_reason == "interrupted"
    assert [(c.name, c.status) for c in result.tool_calls] == [("Asked", "interrupted")]
    assert agent.run("again").text == "next cell"  # the history stayed valid


def test_the_state_counts_as_valid_only_what_is_unchanged_since_the_repair(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Reply.text("one"), Reply.text("two"))
    agent = agent_for(fake_api)
    agent.run("first")
    agent.run("second")
    assert agent.snapshot().valid == 2  # the history as the second run's repair left it
    assert agent.snapshot(history=False) == dataclasses.replace(agent.snapshot(), messages=())
    agent.messages[1] = {"role": "assistant", "content": [{"type": "text", "text": "edited"}]}
    assert agent.snapshot().valid == 1
    agent.messages = list(agent.messages)  # a plain list: compared, not read from marks
    assert agent.snapshot().valid == 1
