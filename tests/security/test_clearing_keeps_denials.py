"""Context editing never makes the model forget what the person refused: a denied call's
result survives nbagent's own clearing (a cleared result says "run the tool again", which
for a refusal would invite the model to ask again and again)."""

from __future__ import annotations

from typing import Any

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.tool import tool
from nbagent.loop.agent import Agent
from nbagent.loop.context_editing import CLEARED_TEXT, ContextEditing
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply

TABLE = "value " * 1500


@tool(read_only=True)
def table(name: str) -> str:
    """Print a big table."""
    return f"{name}: {TABLE}"


@tool()
def wipe(folder: str) -> str:
    """Delete a folder."""
    raise AssertionError("never runs: the person refused it")


def test_a_refusal_is_not_cleared_by_nbagent() -> None:
    editing = ContextEditing(trigger=2000, keep=1, clear_at_least=0)
    with FakeAnthropicServer(supports_context_editing=False) as api:
        agent = Agent(
            registry=ToolRegistry([table, wipe]),
            client=api.client(),
            context_editing=editing,
            policy=PermissionPolicy("default", deny=["wipe"]),
        )
        api.enqueue(
            Reply.tool_use("wipe", {"folder": "data"}),
            *(Reply.tool_use("table", {"name": f"t{k}"}) for k in range(4)),
            Reply.text("Done."),
        )
        agent.run("Tidy up.")
        last = api.requests[-1].body
    results: list[Any] = [
        b
        for m in last["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert results[1]["content"] == CLEARED_TEXT  # old results are cleared
    assert results[0]["content"] != CLEARED_TEXT and results[0].get("is_error") is True
