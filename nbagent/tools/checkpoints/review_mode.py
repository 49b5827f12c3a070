"""Review mode: each notebook or file edit is kept only once the person accepts it.

With ``c.NbAgent.review = True`` (or ``%%agent --review`` for one cell), NotebookEdit, Edit
and Write make their change, so that the person sees it where it belongs (the cell in the
notebook, the file), then ask on the cell's stdin, under the call's card, whether to keep it,
showing its diff. A rejected edit is undone at once (as its card's Undo button would) and the
model is told that it was rejected, and why when the person says.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from IPython.core.error import StdinNotImplementedError

from nbagent.core.tool import Tool, ToolResult
from nbagent.loop import cellthread
from nbagent.loop.execution import current_call_id
from nbagent.render.codeview import plain_text
from nbagent.tools.checkpoints.undo import undo_call
from nbagent.tools.context import ToolContext

KEEP = ("y", "yes", "")
"""Answers that keep an edit (Enter keeps it too)."""

REJECT = ("n", "no")
"""Answers that undo it."""


def reviewed(tool: Tool, context: ToolContext) -> Tool:
    """The tool, its changes kept only once the person accepts them when review mode is on.

    Args:
        tool: NotebookEdit, Edit or Write.
        context: The tools' context (its checkpoint log says whether review mode is on).
    """
    handler = tool.handler
    assert handler is not None

    @functools.wraps(handler)
    def review(**tool_input: Any) -> Any:
        value = handler(**tool_input)
        log = context.checkpoints
        call_id = current_call_id()
        if log is None or not log.review or not call_id:
            return value
        result = ToolResult.of(value)
        if not any(change.call_id == call_id for change in log.current_changes()):
            return result
        return _ask(context, tool.name, call_id, result)

    return dataclasses.replace(tool, handler=review)


def _ask(context: ToolContext, name: str, call_id: str, result: ToolResult) -> ToolResult:
    """Ask whether to keep the change; undo it when the person says no."""
    shown = plain_text(str(result.metadata.get("review") or "")).rstrip()
    prompt = f"{shown}\n\nReview: keep this {name} change?  y = keep, n = undo it "
    try:
        while (answer := cellthread.ask(prompt).strip().lower()) not in KEEP + REJECT:
            prompt = "Please answer y (keep) or n (undo it): "
        if answer in KEEP:
            return _with(result, "accepted by the user", "")
        why = cellthread.ask("Why (the agent is told; Enter to say nothing)? ").strip()
    except (StdinNotImplementedError, EOFError, OSError):
        note = "[Review mode could not ask the user (no stdin here): the change was kept.]"
        return _with(result, "kept: no stdin to ask", note)
    assert context.checkpoints is not None
    report = undo_call(context, context.checkpoints, call_id)
    context.checkpoints.take_notes()  # the model learns it from this result, not next turn
    left = "".join(f"\n- {line}" for line in report.outcome.left)
    said = f"The user rejected this change and it was undone{f': {why}' if why else '.'}"
    if left:
        said += f"\nLeft as they are:{left}"
    return ToolResult(
        f"{said}\nDo not make it again unless the user asks for it.",
        is_error=True,
        metadata={**result.metadata, "summary": "rejected, undone"},
    )


def _with(result: ToolResult, summary: str, note: str) -> ToolResult:
    content = result.content
    if note and isinstance(content, str):
        content = f"{content}\n\n{note}"
    said = str(result.metadata.get("summary") or "")
    metadata = {**result.metadata, "summary": f"{said}, {summary}" if said else summary}
    return ToolResult(content, is_error=result.is_error, metadata=metadata)
