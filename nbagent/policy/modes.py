"""The permission modes, the tools ``acceptEdits`` lets edit, and what plan mode tells the model.

The table of what each mode runs without asking is in :mod:`nbagent.policy.permissions`.
"""

from __future__ import annotations

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
