"""Plan mode through the loop: a write refused in plan mode, allowed after approval."""

from __future__ import annotations

from pathlib import Path

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.tool import Tool
from nbagent.loop.agent import Agent
from nbagent.orchestration.planning import plan_tools
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply
from tests.orchestration.conversation import tool_results


def test_plan_mode_refuses_writes_until_the_plan_is_approved(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    written: list[str] = []
    write = Tool(name="WriteNote", handler=lambda: written.append("x") or "written")
    registry = ToolRegistry([write])
    policy = PermissionPolicy("acceptEdits", allow=["WriteNote"], root=tmp_path)
    agent = Agent(registry=registry, client=fake_api.client(), policy=policy)
    answers = iter([False, True])
    plans: list[str] = []

    def approver(plan: str) -> bool:
        plans.append(plan)
        return next(answers)

    registry.register_many(plan_tools(agent, approver))
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "plan mode"}),
        Reply.tool_use("EnterPlanMode"),
        Reply.tool_use("WriteNote"),
        Reply.tool_use("ExitPlanMode", {"plan": "1. Write the note."}),
        Reply.tool_use("ExitPlanMode", {"plan": "1. Write the note, carefully."}),
        Reply.tool_use("WriteNote"),
        Reply.text("Written."),
    )
    result = agent.run("Plan, then write.")
    statuses = [(c.name, c.status) for c in result.tool_calls]
    assert statuses == [
        ("ToolSearch", "ok"),
        ("EnterPlanMode", "ok"),
        ("WriteNote", "denied"),
        ("ExitPlanMode", "ok"),
        ("ExitPlanMode", "ok"),
        ("WriteNote", "ok"),
    ]
    assert "Plan mode" in (result.tool_calls[2].error or "")
    results = tool_results(agent.messages)
    assert results[3].startswith("The user did not approve the plan.")
    assert results[4] == (
        "The user approved the plan. Write tools are allowed again (mode acceptEdits)."
    )
    assert plans == ["1. Write the note.", "1. Write the note, carefully."]
    assert written == ["x"] and policy.mode == "acceptEdits"
