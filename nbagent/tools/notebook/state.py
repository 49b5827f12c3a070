"""The NotebookState tool: what ran in this kernel, cell by cell, and which cells are stale.

The notebook's cells are read where the person sees them (the front end, the live document,
else the file), and each code cell is matched with its last run in the kernel's execution
record (:mod:`nbagent.tools.notebook.record`) by its id: the execution count it got in this
kernel, how that run ended and how long it took, whether the cell's source changed since
(*stale*) or it never ran, and the variables that run bound. The kernel's start and its last
error come first.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.text import one_line, plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.tools.context import ToolContext
from nbagent.tools.files.paths import shown
from nbagent.tools.notebook.file import LoadedNotebook, source_of
from nbagent.tools.notebook.locate import NO_NOTEBOOK, NotebookSnapshot, snapshot
from nbagent.tools.notebook.record import CellExecution, ExecutionRecord, source_digest
from nbagent.tools.output import cap_text
from nbagent.tools.python.safe_access import type_label

State = Literal["ran", "stale", "never ran", "agent"]
"""A code cell's state: ran as it is now, changed since it ran, not run since the record
began, or an ``%%agent`` cell."""

VARIABLES_SHOWN = 8
"""Variables shown per cell at most."""


@dataclass(frozen=True)
class CellState:
    """A code cell of the notebook beside its last run in the kernel."""

    index: int
    """Its place in the notebook."""
    cell_id: str
    """Its id."""
    source: str
    """Its source now."""
    run: CellExecution | None
    """Its last run in the kernel since the record began, or None."""

    @property
    def state(self) -> State:
        """Whether it ran as it is now, changed since, never ran, or runs the agent."""
        if self.source.lstrip().startswith("%%agent"):
            return "agent"
        if self.run is None:
            return "never ran"
        return "ran" if self.run.digest == source_digest(self.source) else "stale"


def cell_states(notebook: LoadedNotebook, record: ExecutionRecord) -> list[CellState]:
    """The notebook's code cells, each with its last run.

    Args:
        notebook: The notebook as the person sees it.
        record: The kernel's execution record.
    """
    states = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and cell.get("id"):
            states.append(CellState(index, cell.id, source_of(cell), record.last_run(cell.id)))
    return states


def to_run(states: list[CellState]) -> list[CellState]:
    """The cells ``NotebookRun`` runs for ``"stale"``: changed since they ran, or never ran
    (empty ones and agent cells left out), in notebook order.

    Args:
        states: The notebook's code cells with their last runs.
    """
    return [s for s in states if s.state in ("stale", "never ran") and s.source.strip()]


def notebook_state_tool(context: ToolContext) -> Tool:
    """Build the NotebookState tool.

    Args:
        context: The tools' context.
    """

    def touches(tool_input: Mapping[str, Any]) -> list[Touch]:
        """It reads the kernel's notebook."""
        path = context.notebook_path()
        return [Touch("read", str(path))] if path is not None else []

    @tool(
        name="NotebookState",
        read_only=True,
        search_hint="kernel state execution order stale cells ran variables restart errors",
        touches=touches,
    )
    def notebook_state() -> ToolResult:
        """See what actually ran in this kernel: each code cell's last run and which are stale.

        For each code cell of the open notebook, in order: the execution count it got in this
        kernel, how its last run ended (ok, interrupted, or the error) and how long it took,
        whether its source changed since it ran ("stale") or it never ran since the kernel
        started, and the variables that run defined; then the kernel's start and its last
        error. The counts shown in the notebook may be from an earlier kernel; these are this
        kernel's. Use it before relying on a variable, after the person ran cells, or to
        find cells to run again (NotebookRun with cell_id "stale" runs them in order).
        """
        record = context.record
        if record is None or context.shell is None:
            raise ToolError(
                "NotebookState needs nbagent loaded in the notebook's kernel (%load_ext "
                "nbagent), which keeps the record of what ran; none is here."
            )
        seen = _snapshot(context)
        states = cell_states(seen.notebook, record)
        text = render_state(seen, states, record, context.shell.user_ns)
        stale = sum(s.state == "stale" for s in states)
        never = sum(s.state == "never ran" for s in states)
        said = f"{plural(len(states), 'code cell')}, {stale} stale, {never} never ran"
        return ToolResult(
            content=cap_text(text, context.limits.output_chars, "NotebookRead shows single cells"),
            metadata={"summary": said},
        )

    return notebook_state


def _snapshot(context: ToolContext) -> NotebookSnapshot:
    path = context.notebook_path()
    if path is None:
        raise ToolError(NO_NOTEBOOK)
    path = path.resolve()
    return snapshot(context, path, shown(context, path), outputs=False)


def render_state(
    seen: NotebookSnapshot,
    states: list[CellState],
    record: ExecutionRecord,
    namespace: Mapping[str, Any],
) -> str:
    """The state as the model reads it.

    Args:
        seen: The notebook as read, and where from.
        states: Its code cells with their last runs.
        record: The kernel's execution record.
        namespace: The user's namespace (for the variables' types now).
    """
    lines = [kernel_line(record), f"{seen.notebook.path.name}: {seen.note}"]
    for cell in states:
        lines.append(_cell_line(cell, namespace))
    if not states:
        lines.append("(no code cells)")
    ids = {cell.cell_id for cell in states}
    elsewhere = [run for run in record.runs() if run.cell_id not in ids and not run.agent_cell]
    if elsewhere:
        lines.append(
            f"Also ran in this kernel, not as a cell of this notebook now: "
            f"{plural(len(elsewhere), 'run')} (last: {one_line(elsewhere[-1].source, 60)!r}, "
            f"{elsewhere[-1].outcome})."
        )
    return "\n".join(lines)


def kernel_line(record: ExecutionRecord) -> str:
    """When the kernel started, since when runs are recorded, and its last error.

    Args:
        record: The kernel's execution record.
    """
    line = f"Kernel started {_clock(record.kernel_started)}"
    if record.recording_since - record.kernel_started > 5:
        line += f"; runs recorded since {_clock(record.recording_since)} (nbagent loaded)"
    error = record.last_error
    if error is not None:
        where = f"cell {error.cell_id}" if error.cell_id else "code without a cell id"
        line += f"; last error: {where} at {_clock(error.started)}: {error.outcome}"
    else:
        line += "; no error since"
    return line + "."


def _cell_line(cell: CellState, namespace: Mapping[str, Any]) -> str:
    head = f"[{cell.index}] {cell.cell_id}"
    state = cell.state
    run = cell.run
    if state == "agent":
        return f"{head} %%agent cell"
    if run is None:
        return f"{head} never ran in this kernel: {one_line(cell.source, 60)!r}"
    count = f"In [{run.execution_count}]" if run.execution_count is not None else "no count"
    by = ", by the agent" if run.by == "agent" else ""
    parts = [f"{head} {count}{by}: {run.outcome}, {run.duration:.2f} s at {_clock(run.started)}"]
    if state == "stale":
        parts.append("STALE (its source changed since it ran)")
    defined = _variables(run, namespace)
    if defined:
        parts.append(f"defined {defined}")
    return "; ".join(parts)


def _variables(run: CellExecution, namespace: Mapping[str, Any]) -> str:
    shown_names = []
    for name in run.bound[:VARIABLES_SHOWN]:
        if name in namespace:
            shown_names.append(f"{name} ({type_label(namespace[name])})")
        else:
            shown_names.append(f"{name} (gone)")
    more = len(run.bound) - VARIABLES_SHOWN
    return ", ".join(shown_names) + (f" and {more} more" if more > 0 else "")


def _clock(moment: float) -> str:
    """A moment as the kernel's local time of day, ``14:03:07``."""
    return time.strftime("%H:%M:%S", time.localtime(moment))
