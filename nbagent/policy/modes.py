"""The permission modes, and what each decides of a call that touches nothing the rules read.

The table of what each mode runs without asking is in :mod:`nbagent.policy.permissions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbagent.policy.decisions import PermissionDecision, allow, ask, deny

if TYPE_CHECKING:
    from nbagent.core.tool import Tool

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
"""The permission modes."""

EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit"})
"""The tools ``acceptEdits`` lets run when a call touches no path (an edit of the open
notebook): they change files or the notebook, nothing else."""

PLAN_MESSAGE = (
    "Plan mode: only read-only tools run. Finish the plan and present it for approval before "
    "changing anything."
)
"""What the model is told when plan mode refuses a call."""


def by_mode(mode: str, tool: Tool) -> PermissionDecision:
    """Decide a call that touches nothing the rules read (no path, command or URL) by the mode.

    Args:
        mode: One of :data:`MODES`.
        tool: The tool called.

    Returns:
        Allow in bypass mode and for read-only tools (not MCP ones); deny in plan mode;
        allow an edit tool in ``acceptEdits``; else ask, offering the tool's name as the rule.
    """
    reason = f"mode {mode}"
    safe = tool.read_only and not tool.is_mcp
    if mode == "bypassPermissions":
        return allow(reason, explicit=True)
    if safe:
        return allow(reason)
    if mode == "plan":
        return deny(PLAN_MESSAGE, reason)
    if mode == "acceptEdits" and tool.name in EDIT_TOOLS:
        return allow(reason)
    return ask("", reason, tool.name)
