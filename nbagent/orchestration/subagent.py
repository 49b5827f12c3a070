"""The ``Agent`` tool: a sub-task run by a fresh agent, whose answer is the tool's result.

The sub-agent gets its own conversation, the parent's model, client, permission policy and
call time limit, a turn budget, and the parent's tools or a narrower set. Its own events are
reported as progress of the parent's call, so its tool calls show nested under the parent's
card. It is concurrency-safe: several sub-agents asked for at once run in parallel, each on a
worker thread; their questions and ``main_thread`` tools still run on the cell's thread, one
at a time (:mod:`nbagent.loop.cellthread`). When the parent's call is stopped or abandoned at its
time limit, the sub-agent stops before its next model request or tool call, its stream is
closed and its open question withdrawn. Sub-agents cannot nest deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbagent.catalogue.registry import AGENT_TOOL_NAME, TOOL_SEARCH_NAME, ToolRegistry
from nbagent.core.errors import ToolError
from nbagent.core.events import RunFinished
from nbagent.core.tool import Tool, tool
from nbagent.loop.execution import emit
from nbagent.orchestration.agents import AgentSource, agent_of

if TYPE_CHECKING:
    from nbagent.loop.agent import Agent

MAX_DEPTH = 2
"""Levels of sub-agents below the user's agent (a sub-agent of a sub-agent, no deeper)."""

DEFAULT_SUBAGENT_TURNS = 15
"""A sub-agent's turn budget unless the model asks for another."""

SUBAGENT_SYSTEM = (
    "You are a sub-agent working on one task for another agent inside a Jupyter notebook. "
    "Do the task with the tools you have, then answer with what the other agent needs: the "
    "result, briefly, and anything it must know. Your answer is all it sees."
)
"""The system prompt of every sub-agent."""


def agent_tool(parent: AgentSource, depth: int = 1) -> Tool:
    """Build the Agent tool of an agent.

    Args:
        parent: The agent whose model, client, policy and tools sub-agents share, or a
            callable that gives it when the tool runs.
        depth: The level of the sub-agents this tool starts (1 below the user's agent).

    Returns:
        The tool.
    """

    @tool(
        name=AGENT_TOOL_NAME,
        read_only=True,
        concurrency_safe=True,
        search_hint="sub-agent subagent delegate parallel task research",
    )
    def run_subagent(
        description: str,
        prompt: str,
        tools: list[str] | None = None,
        max_turns: int = DEFAULT_SUBAGENT_TURNS,
    ) -> str:
        """Hand a self-contained sub-task to a sub-agent with a fresh context, and get its
        answer. Use it for research or multi-step work whose details you do not need;
        several calls at once run in parallel. The sub-agent's own tool calls are checked
        like yours.

        Args:
            description: What the sub-agent does, in 3 to 5 words.
            prompt: The task, with everything the sub-agent needs to know.
            tools: Names of the tools it may use (default: all of yours).
            max_turns: Model requests it may make at most.
        """
        if max_turns < 1:
            raise ToolError("max_turns must be at least 1.")
        child = _child_agent(agent_of(parent), tools, max_turns, depth)
        finished: RunFinished | None = None
        for event in child.events(prompt):
            emit(event)
            if isinstance(event, RunFinished):
                finished = event
        if finished is None or finished.stop_reason == "interrupted":
            raise ToolError(f"The sub-agent ({description}) was interrupted before it answered.")
        note = (
            ""
            if finished.stop_reason == "end_turn"
            else (f"\n\n(The sub-agent stopped: {finished.stop_reason}.)")
        )
        return (finished.text or "(The sub-agent gave no answer.)") + note

    return run_subagent


def _child_agent(parent: Agent, names: list[str] | None, max_turns: int, depth: int) -> Agent:
    """A fresh agent with the parent's settings and the chosen tools."""
    from nbagent.loop.agent import Agent

    available = {
        t.name: t
        for t in parent.registry.tools()
        if t.name not in (AGENT_TOOL_NAME, TOOL_SEARCH_NAME)
    }
    if names is not None:
        unknown = [n for n in names if n not in available]
        if unknown:
            raise ToolError(
                f"Unknown tools for the sub-agent: {', '.join(unknown)}. "
                f"Available: {', '.join(sorted(available))}."
            )
        available = {n: available[n] for n in names}
    registry = ToolRegistry(available.values())
    child = Agent(
        registry=registry,
        client=parent.client,
        model=parent.model,
        system=SUBAGENT_SYSTEM,
        max_turns=max_turns,
        mode=parent.mode,
        max_tokens=parent.max_tokens,
        ranker=parent.search.ranker.name,
        policy=parent.runner.policy,
        asker=parent.runner.asker,
    )
    child.runner.call_timeout = parent.runner.call_timeout
    if depth < MAX_DEPTH:
        registry.register(agent_tool(child, depth + 1))
    return child
