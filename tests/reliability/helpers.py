"""What the reliability tests share: an agent on the fake API, readers of what it sent."""

from __future__ import annotations

from collections import Counter
from typing import Any

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.tool import Tool, tool
from nbagent.loop.agent import Agent
from nbagent.testing import FakeAnthropicServer, Reply

EXAMPLES: Counter[str] = Counter()
"""Hypothesis examples run, by test (printed at the end of the session by conftest.py)."""

FIGURES: dict[str, str] = {}
"""Measured figures worth reading beside the verdicts (printed at the end of the session)."""


@tool(read_only=True)
def echo(text: str) -> str:
    """Say a text back.

    Args:
        text: The text.
    """
    return text


def agent_for(api: FakeAnthropicServer, *tools: Tool, **kwargs: Any) -> Agent:
    """An agent with ``echo`` and ``tools``, talking to ``api`` (SDK retries off unless given).

    Args:
        api: The fake API.
        *tools: Tools besides ``echo``.
        **kwargs: Passed to Agent; ``client_options`` goes to ``api.client``.
    """
    client = api.client(**kwargs.pop("client_options", {}))
    return Agent(registry=ToolRegistry([echo, *tools]), client=client, **kwargs)


def bodies(api: FakeAnthropicServer) -> list[dict[str, Any]]:
    """The bodies of the Messages requests the API received, in order."""
    return [r.body for r in api.requests if r.path == "/v1/messages"]


def statuses(api: FakeAnthropicServer) -> list[int]:
    """The status answered to each Messages request (0: the connection was cut)."""
    return [r.status for r in api.requests if r.path == "/v1/messages"]


def tool_results(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a message."""
    return [b for b in message["content"] if b.get("type") == "tool_result"]


def results_told(api: FakeAnthropicServer) -> list[dict[str, Any]]:
    """The tool_results of the last request, as the model received them (without the
    prompt-cache breakpoint the agent puts on the last block)."""
    return [
        {k: v for k, v in block.items() if k != "cache_control"}
        for block in tool_results(bodies(api)[-1]["messages"][-1])
    ]


def assert_next_run_works(api: FakeAnthropicServer, agent: Agent) -> None:
    """Run the agent once more: the fake API validates the whole history on that request.

    Args:
        api: The fake API (its script must be consumed).
        agent: The agent.
    """
    assert api.pending == 0, "the fault left script items unplayed"
    api.wait_idle()
    api.enqueue(Reply.text("Back to work."))
    result = agent.run("Are you still there?")
    assert result.text == "Back to work." and result.stop_reason == "end_turn"
    api.assert_no_errors()
    assert statuses(api)[-1] == 200
