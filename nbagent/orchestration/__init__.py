"""Tools that steer the work rather than do it: sub-agents, a task list, questions to the
user, plan mode, MCP resources.

They are built per agent (:func:`session_tools`), since they act on its conversation, its
permission policy and its task list; a session builds them before its agent, with a callable
that gives the agent when a tool runs (:mod:`nbagent.orchestration.agents`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagent.orchestration.agents import AgentSource
from nbagent.orchestration.planning import plan_tools
from nbagent.orchestration.questions import Answerer, ask_user_question_tool
from nbagent.orchestration.resources import resource_tools
from nbagent.orchestration.subagent import agent_tool
from nbagent.orchestration.tasks import TaskBoard, task_tools

if TYPE_CHECKING:
    from nbagent.core.tool import Tool
    from nbagent.orchestration.planning import Approver

__all__ = [
    "TaskBoard",
    "agent_tool",
    "ask_user_question_tool",
    "plan_tools",
    "resource_tools",
    "session_tools",
    "task_tools",
]


def session_tools(
    agent: AgentSource,
    board: TaskBoard,
    answerer: Answerer | None = None,
    approver: Approver | None = None,
    mcp_manager: Any = None,
) -> list[Tool]:
    """Build the orchestration tools of one agent.

    Args:
        agent: The agent they steer, or a callable that gives it when a tool runs.
        board: Its task list.
        answerer: Asks the user a question (stdin by default).
        approver: Asks the user to approve a plan (stdin by default).
        mcp_manager: The MCP manager, for the resource tools (none without it).

    Returns:
        Agent, TaskCreate, TaskUpdate, TaskList, AskUserQuestion, EnterPlanMode, ExitPlanMode,
        and ListMcpResources and ReadMcpResource with a manager.
    """
    return [
        agent_tool(agent),
        *task_tools(board),
        ask_user_question_tool(answerer),
        *plan_tools(agent, approver),
        *(resource_tools(mcp_manager) if mcp_manager is not None else []),
    ]
