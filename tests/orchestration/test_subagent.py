"""The Agent tool through the loop: a sub-agent's own run, its tools, its depth limit."""

from __future__ import annotations

from typing import Any

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.events import ToolCallFinished, ToolCallStarted, ToolProgress
from nbagent.core.tool import tool
from nbagent.loop.agent import Agent
from nbagent.orchestration.subagent import MAX_DEPTH, SUBAGENT_SYSTEM, agent_tool
from nbagent.testing import FakeAnthropicServer, Reply


@tool(read_only=True)
def echo(text: str) -> str:
    """Say a text back.

    Args:
        text: The text.
    """
    return text


@tool(read_only=True)
def shout(text: str) -> str:
    """Say a text back, louder.

    Args:
        text: The text.
    """
    return text.upper()


def parent_agent(api: FakeAnthropicServer) -> Agent:
    registry = ToolRegistry([echo, shout])
    agent = Agent(registry=registry, client=api.client())
    registry.register(agent_tool(agent))
    return agent


def bodies(api: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [r.body for r in api.requests]


def test_a_sub_agent_runs_its_own_conversation_and_answers(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        Reply.tool_use(
            "Agent", {"description": "echo things", "prompt": "Echo hi.", "tools": ["echo"]}
        ),
        Reply.tool_use("echo", {"text": "hi"}),  # the sub-agent's first turn
        Reply.text("The echo said hi."),  # the sub-agent's answer
        Reply.text("Done: hi."),  # the parent again
    )
    agent = parent_agent(fake_api)
    events = list(agent.events("Delegate the echo."))
    parent, child_first, child_second, parent_again = bodies(fake_api)
    assert child_first["system"] == SUBAGENT_SYSTEM and len(child_first["messages"]) == 1
    assert child_first["messages"][0]["content"][0]["text"] == "Echo hi."
    child_tools = {t["name"] for t in child_first["tools"]}
    assert child_tools == {"echo", "ToolSearch", "Agent"}  # depth 1 may still delegate
    result = parent_again["messages"][-1]["content"][0]
    assert result["content"] == "The echo said hi." and not result.get("is_error")
    nested = [e.event for e in events if isinstance(e, ToolProgress)]
    assert any(isinstance(e, ToolCallStarted) and e.name == "echo" for e in nested)
    assert any(isinstance(e, ToolCallFinished) and e.content == "hi" for e in nested)
    assert events[-1].text == "Done: hi."  # type: ignore[union-attr]


def test_sub_agents_cannot_nest_beyond_the_depth_limit(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        Reply.tool_use("Agent", {"description": "level one", "prompt": "Go deeper."}),
        Reply.tool_use("Agent", {"description": "level two", "prompt": "Deepest."}),
        Reply.text("bottom"),
        Reply.text("middle"),
        Reply.text("top"),
    )
    agent = parent_agent(fake_api)
    assert agent.run("Nest.").text == "top"
    depth_two = bodies(fake_api)[2]
    assert MAX_DEPTH == 2 and "Agent" not in {t["name"] for t in depth_two["tools"]}


def test_unknown_tools_and_bad_budgets_are_errors_for_the_model(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(
        Reply.tool_use("Agent", {"description": "x", "prompt": "y", "tools": ["nope"]}),
        Reply.tool_use("Agent", {"description": "x", "prompt": "y", "max_turns": 0}),
        Reply.text("ok"),
    )
    result = parent_agent(fake_api).run("Try.")
    first, second = (call.error or "" for call in result.tool_calls)
    assert first.startswith("Unknown tools for the sub-agent: nope. Available: echo, shout")
    assert second == "max_turns must be at least 1."


def test_two_sub_agents_run_in_parallel(fake_api: FakeAnthropicServer) -> None:
    import threading

    inside = threading.Barrier(2, timeout=10)

    @tool(read_only=True)
    def meet(name: str) -> str:
        """Wait until the other sub-agent arrives.

        Args:
            name: Who arrives.
        """
        inside.wait()
        return f"{name} met"

    registry = ToolRegistry([meet])
    agent = Agent(registry=registry, client=fake_api.client())
    registry.register(agent_tool(agent))

    def reply(body: dict[str, Any]) -> Reply:
        if body.get("system") != SUBAGENT_SYSTEM:
            done = [
                b
                for m in body["messages"]
                for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            if done:
                return Reply.text("both met")
            return Reply.tool_uses(
                ("Agent", {"description": "a", "prompt": "a"}),
                ("Agent", {"description": "b", "prompt": "b"}),
            )
        last = body["messages"][-1]["content"][0]
        if last.get("type") == "tool_result":
            return Reply.text(last["content"])
        return Reply.tool_use("meet", {"name": last["text"]})

    fake_api.enqueue(*[reply] * 6)
    result = agent.run("Meet twice.")
    assert result.text == "both met"  # the barrier needs both sub-agents at once
    assert [c.status for c in result.tool_calls] == ["ok", "ok"]
