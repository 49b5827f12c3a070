"""Sub-agents and the cell's thread: their questions one at a time, each answer bound to its
question, their main-thread tools on the main thread, and nothing of theirs after Stop or
their call's time limit."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.events import Event, PermissionRequested, ToolCallFinished, ToolProgress
from nbagent.core.tool import Tool
from nbagent.loop.agent import Agent
from nbagent.orchestration.planning import plan_tools
from nbagent.orchestration.questions import ask_user_question_tool
from nbagent.orchestration.subagent import SUBAGENT_SYSTEM, agent_tool
from nbagent.policy.decisions import PermissionAnswer
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply

COMMAND = {"type": "object", "properties": {"command": {"type": "string"}}}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}


def results_in(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message."""
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def parent_with(api: FakeAnthropicServer, *tools: Tool, policy: Any = None) -> Agent:
    registry = ToolRegistry(list(tools))
    agent = Agent(registry=registry, client=api.client(), policy=policy)
    registry.register(agent_tool(agent))
    return agent


def test_two_sub_agents_ask_one_at_a_time_on_the_main_thread_and_each_answer_binds(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Before: each sub-agent asked on its own worker thread, both at once."""
    ran: list[tuple[str, bool]] = []
    asking, most, asked_on_main = [0], [0], []

    def bash(command: str) -> str:
        ran.append((command, threading.current_thread() is threading.main_thread()))
        return f"ran {command}"

    def person(request: PermissionRequested) -> PermissionAnswer:
        asking[0] += 1
        most[0] = max(most[0], asking[0])
        asked_on_main.append(threading.current_thread() is threading.main_thread())
        time.sleep(0.02)  # reading the command
        asking[0] -= 1
        return "yes" if "safe" in request.request else "no"

    shell = Tool(name="Bash", input_schema=COMMAND, handler=bash, main_thread=True)
    for trial in range(16):

        def reply(body: dict[str, Any], trial: int = trial) -> Reply:
            if body.get("system") != SUBAGENT_SYSTEM:
                if results_in(body):
                    return Reply.text("Both done.")
                return Reply.tool_uses(
                    ("Agent", {"description": "safe", "prompt": f"echo safe {trial}"}),
                    ("Agent", {"description": "risky", "prompt": f"rm -rf risky {trial}"}),
                )
            if results_in(body):
                return Reply.text(str(results_in(body)[0]["content"]))
            return Reply.tool_use("Bash", {"command": body["messages"][-1]["content"][0]["text"]})

        fake_api.enqueue(*[reply] * 6)
        agent = parent_with(fake_api, shell, policy=PermissionPolicy(root=tmp_path))
        agent.runner.asker = person
        assert agent.run("Run both.").text == "Both done."
        assert ran[-1] == (f"echo safe {trial}", True), ran
    assert [command for command, _ in ran] == [f"echo safe {t}" for t in range(16)]
    assert asked_on_main == [True] * 32 and most[0] == 1


def note_taker(notes: list[str]) -> Tool:
    """A tool that writes a note (here, to a list) and asks nobody."""

    def note(text: str) -> str:
        notes.append(text)
        return "noted"

    return Tool(name="Note", input_schema=TEXT, handler=note, read_only=True)


def endless_sub_agent(body: dict[str, Any]) -> Reply:
    """The parent starts one sub-agent, which notes things, slowly, until it is stopped."""
    if body.get("system") != SUBAGENT_SYSTEM:
        if results_in(body):
            return Reply.text("Gave up on it.")
        return Reply.tool_use("Agent", {"description": "notes", "prompt": "Take notes."})
    return Reply.tool_use("Note", {"text": f"note {len(body['messages'])}"}, delay=0.05)


def assert_nothing_more(api: FakeAnthropicServer, notes: list[str]) -> None:
    """No model request and no note after this point (waiting a while for one)."""
    requests, written = len(api.requests), list(notes)
    time.sleep(1.5)
    assert len(api.requests) == requests
    assert notes == written


def test_a_sub_agent_abandoned_at_its_time_limit_makes_no_request_and_writes_nothing_after(
    fake_api: FakeAnthropicServer,
) -> None:
    """Before: the sub-agent went on for its whole turn budget after its card said so."""
    notes: list[str] = []
    agent = parent_with(fake_api, note_taker(notes))
    agent.runner.call_timeout = 1.0
    fake_api.enqueue(*[endless_sub_agent] * 40)
    result = agent.run("Go.")
    assert result.text == "Gave up on it." and notes
    [call] = result.tool_calls
    assert (call.name, call.status) == ("Agent", "error")
    assert "abandoned" in (call.error or "")
    assert_nothing_more(fake_api, notes)


def test_stop_during_a_sub_agent_stops_it(fake_api: FakeAnthropicServer) -> None:
    notes: list[str] = []
    agent = parent_with(fake_api, note_taker(notes))
    fake_api.enqueue(*[endless_sub_agent] * 40)

    def stop_after_the_first_note(event: Event) -> None:
        inner = event.event if isinstance(event, ToolProgress) else None
        if isinstance(inner, ToolCallFinished) and inner.name == "Note":
            raise KeyboardInterrupt

    result = agent.run("Go.", on_event=stop_after_the_first_note)
    assert result.stop_reason == "interrupted" and notes
    assert [(c.name, c.status) for c in result.tool_calls] == [("Agent", "interrupted")]
    assert_nothing_more(fake_api, notes)


def test_a_sub_agents_plan_question_is_withdrawn_at_its_time_limit_and_a_late_yes_does_nothing(
    fake_api: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the question outlived the call; a yes typed after it switched the mode."""
    asked: list[bool] = []
    typed = threading.Event()

    def person(prompt: str) -> str:  # as ipykernel's input() does: it polls
        asked.append(threading.current_thread() is threading.main_thread())
        while not typed.wait(0.01):
            pass
        return "y"

    monkeypatch.setattr("builtins.input", person)
    policy = PermissionPolicy("plan", root=tmp_path)
    agent = parent_with(fake_api, policy=policy)
    agent.registry.register_many(plan_tools(agent))
    agent.runner.call_timeout = 1.0

    def reply(body: dict[str, Any]) -> Reply:
        if body.get("system") != SUBAGENT_SYSTEM:
            if results_in(body):
                return Reply.text("No plan approved.")
            return Reply.tool_use("Agent", {"description": "plan", "prompt": "Plan it."})
        if results_in(body):
            return Reply.tool_use("ExitPlanMode", {"plan": "1. Change everything."})
        return Reply.tool_use("ToolSearch", {"query": "select:ExitPlanMode"})

    fake_api.enqueue(*[reply] * 5)
    result = agent.run("Plan.")
    assert result.text == "No plan approved."
    assert asked == [True] and policy.mode == "plan"
    typed.set()  # the person answers now
    time.sleep(0.5)
    assert policy.mode == "plan"


def test_a_sub_agents_question_to_the_person_is_withdrawn_at_its_time_limit(
    fake_api: FakeAnthropicServer,
) -> None:
    asked: list[str] = []

    def person(question: str, options: Sequence[str]) -> str:  # polls, as input() does
        asked.append(question)
        try:
            while True:
                time.sleep(0.01)
        finally:
            asked.append("withdrawn")

    agent = parent_with(fake_api, ask_user_question_tool(person))
    agent.runner.call_timeout = 1.0

    def reply(body: dict[str, Any]) -> Reply:
        if body.get("system") != SUBAGENT_SYSTEM:
            if results_in(body):
                return Reply.text("No answer.")
            return Reply.tool_use("Agent", {"description": "ask", "prompt": "Ask."})
        if results_in(body):
            return Reply.tool_use("AskUserQuestion", {"question": "Which colour?"})
        return Reply.tool_use("ToolSearch", {"query": "select:AskUserQuestion"})

    fake_api.enqueue(*[reply] * 4)
    result = agent.run("Ask through a sub-agent.")
    assert result.text == "No answer." and asked == ["Which colour?", "withdrawn"]
    assert "abandoned" in (result.tool_calls[0].error or "")
