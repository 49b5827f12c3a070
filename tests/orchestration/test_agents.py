"""Orchestration tools given a callable that gives their agent when they run."""

from __future__ import annotations

from pathlib import Path

from nbagent.catalogue.registry import ToolRegistry
from nbagent.loop.agent import Agent
from nbagent.orchestration import TaskBoard, session_tools
from nbagent.orchestration.agents import agent_of
from nbagent.policy.permissions import PermissionPolicy


def test_an_agent_is_its_own_source_and_a_callable_is_called() -> None:
    agent = Agent(registry=ToolRegistry())
    assert agent_of(agent) is agent
    assert agent_of(lambda: agent) is agent


def test_session_tools_reach_an_agent_built_after_them(tmp_path: Path) -> None:
    """Built with a callable, the tools need no agent until one runs; then they act on the
    agent the callable gives (here plan mode switches its policy)."""
    built: list[Agent] = []

    def agent() -> Agent:
        if not built:
            policy = PermissionPolicy("default", root=tmp_path)
            built.append(Agent(registry=ToolRegistry(), policy=policy))
        return built[0]

    tools = {t.name: t for t in session_tools(agent, TaskBoard())}
    assert {"Agent", "EnterPlanMode", "ExitPlanMode", "TaskCreate"} <= set(tools)
    assert built == []
    assert "Plan mode is on" in str(tools["EnterPlanMode"].call({}).content)
    assert built[0].runner.policy.mode == "plan"
