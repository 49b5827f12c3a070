"""Plan mode: EnterPlanMode and ExitPlanMode (deferred).

In plan mode the permission policy lets only read-only tools run. ExitPlanMode presents the
plan and asks the user to approve it; only then are write tools allowed again. The tools share
the mode with :class:`~nbagent.policy.permissions.PermissionPolicy` (``%config
NbAgent.permission_mode`` shows the same state).

ExitPlanMode runs on the cell's thread (``main_thread``), like every question: it waits as long
as the person takes. In a sub-agent, its question is withdrawn when the sub-agent's call is
stopped or abandoned at its time limit; the mode then stays as it is, and an answer typed
later does nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, tool
from nbagent.loop import cellthread
from nbagent.orchestration.agents import AgentSource, agent_of
from nbagent.policy.permissions import PermissionPolicy

Approver = Callable[[str], bool]
"""Shows a plan to the user and returns whether they approve it."""


def approve_on_stdin(plan: str) -> bool:
    """Show the plan and ask for approval on stdin.

    Args:
        plan: The plan, in Markdown.

    Returns:
        Whether the user typed yes.

    Raises:
        Cancelled: The question was withdrawn (its call was stopped or abandoned).
    """
    from IPython.core.error import StdinNotImplementedError
    from IPython.display import display

    from nbagent.core.markup import Markdown, model_markdown

    display(Markdown(f"**Plan**\n\n{model_markdown(plan)}", plain=f"Plan\n\n{plan}"))
    try:
        return cellthread.ask("Approve this plan? [y/N] ").strip().lower() in ("y", "yes")
    except (StdinNotImplementedError, EOFError):
        return False


def plan_tools(agent: AgentSource, approver: Approver | None = None) -> list[Tool]:
    """Build EnterPlanMode and ExitPlanMode for an agent with a PermissionPolicy.

    Args:
        agent: The agent whose policy they switch, or a callable that gives it when they run.
        approver: Asks the user to approve a plan; :func:`approve_on_stdin` by default.

    Returns:
        The two tools.
    """
    approve = approver or approve_on_stdin
    previous: dict[str, str] = {}

    def policy() -> PermissionPolicy:
        current = agent_of(agent).runner.policy
        if not isinstance(current, PermissionPolicy):
            raise ToolError("Plan mode needs nbagent's PermissionPolicy; this agent has another.")
        return current

    @tool(
        name="EnterPlanMode",
        read_only=True,
        should_defer=True,
        search_hint="plan mode planning read-only explore before changing",
    )
    def enter_plan_mode() -> str:
        """Switch to plan mode: only read-only tools run until the user approves your plan."""
        current = policy()
        if current.mode != "plan":
            previous["mode"] = current.mode
            current.mode = "plan"
        return (
            "Plan mode is on: only read-only tools run. Explore, then present your plan "
            "with ExitPlanMode."
        )

    @tool(
        name="ExitPlanMode",
        read_only=True,
        should_defer=True,
        search_hint="plan mode approve plan present plan leave planning",
    )
    def exit_plan_mode(plan: str) -> str:
        """Present your plan to the user for approval; write tools are allowed again only if
        the user approves.

        Args:
            plan: The plan, in Markdown: the steps and what each changes.
        """
        current = policy()
        if current.mode != "plan":
            return "Plan mode is not on; nothing to approve."
        if not cellthread.question(partial(approve, plan)):
            return (
                "The user did not approve the plan. Stay in plan mode: revise the plan, or "
                "ask what to change."
            )
        current.mode = previous.pop("mode", "default")
        return f"The user approved the plan. Write tools are allowed again (mode {current.mode})."

    # Its question belongs on the cell's thread, and so does the switch it answers.
    return [enter_plan_mode, dataclasses.replace(exit_plan_mode, main_thread=True)]
