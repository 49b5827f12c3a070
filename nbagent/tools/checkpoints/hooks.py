"""What the notebook and file tools call to record their changes in the open checkpoint.

Each hook does nothing when no checkpoint log is set (``ToolContext.checkpoints``) or recording
is off (``c.NbAgent.checkpoints = 0``). A cell's state before a change is kept whole (outputs
included) where the change needs it back: a deleted cell, a cell whose type changed, a cell
that ran. A front end's light read has only each output's type, so the cell is read whole
first (:func:`whole_cells`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nbagent.loop.execution import current_call_id
from nbagent.tools.checkpoints.marks import MARK_KEY
from nbagent.tools.checkpoints.model import Change, cell_mark
from nbagent.tools.checkpoints.recording import MAX_CONTENT
from nbagent.tools.context import ToolContext
from nbagent.tools.notebook.file import CellEdit, Document, LoadedNotebook


def recording(context: ToolContext) -> bool:
    """Whether the tools' changes are recorded now."""
    return context.checkpoints is not None and context.checkpoints.enabled


def plain(cell: Any) -> dict[str, Any]:
    """A deep copy of a cell as plain JSON (nothing a later edit changes in place)."""
    return json.loads(json.dumps(cell))


def whole_cells(context: ToolContext, document: Document | None) -> dict[str, Any]:
    """The cells of a notebook as the user sees it, outputs included, by id: read only when
    recording and the document is one (the file's cells are read whole anyway)."""
    if document is None or not recording(context):
        return {}
    return {cell.get("id"): cell for cell in document.read(outputs=True).cells}


def _whole(cell: Any, whole: dict[str, Any]) -> dict[str, Any]:
    """The cell read whole when it is the same cell as planned on, else as planned on."""
    found = whole.get(cell.get("id"))
    if found is not None and cell_mark(found) == cell_mark(cell):
        return plain(found)
    return plain(cell)


def cell_change(
    notebook: LoadedNotebook,
    edit: CellEdit,
    tool: str,
    whole: dict[str, Any] | None = None,
) -> Change:
    """The change a planned edit makes to a cell, planned on ``notebook`` (not yet changed).

    Args:
        notebook: The notebook the edit was planned on.
        edit: The edit.
        tool: The tool making it.
        whole: Cells read whole, by id (:func:`whole_cells`).
    """
    whole = whole or {}
    cells = notebook.cells
    index = edit.index
    previous = cells[index - 1].get("id") if index > 0 and index - 1 < len(cells) else None
    change = Change(
        "cell", str(notebook.path), tool, current_call_id(), index=index, previous=previous
    )
    if edit.action == "insert":
        after = plain(edit.cell)
        change.cell_id, change.after = after["id"], after
        return change
    before = _whole(cells[index], whole)
    change.cell_id, change.before = before["id"], before
    if edit.action == "source":
        change.after = {**before, "source": edit.source}
        if edit.mark is not None:
            metadata = {key: value for key, value in before.get("metadata", {}).items()}
            metadata.pop(MARK_KEY, None)
            change.after["metadata"] = {**metadata, **({MARK_KEY: edit.mark} if edit.mark else {})}
    elif edit.action == "cell":
        change.after = plain(edit.cell)
    elif edit.action == "outputs":
        outputs = plain(list(edit.outputs))
        change.after = {**before, "outputs": outputs, "execution_count": edit.execution_count}
    return change


def record(context: ToolContext, change: Change) -> None:
    """Add a change to the open checkpoint (when recording)."""
    if recording(context) and context.checkpoints is not None:
        context.checkpoints.record(change)


def record_run(
    context: ToolContext,
    path: Path,
    before: Any,
    outputs: list[dict[str, Any]],
    execution_count: int | None,
) -> None:
    """Record that a cell ran where the user sees it: its outputs and count changed.

    Args:
        context: The tools' context.
        path: The notebook's resolved path.
        before: The cell before the run, read whole.
        outputs: Its new outputs.
        execution_count: Its new execution count.
    """
    if before is None or not recording(context):
        return
    before = plain(before)
    after = {**before, "outputs": plain(outputs), "execution_count": execution_count}
    change = Change(
        "cell", str(path), "NotebookRun", current_call_id(), before["id"], before, after
    )
    record(context, change)


def too_large(path: Path) -> bool:
    """Whether a file is too large for a checkpoint to keep (so it is not read for one)."""
    try:
        return path.stat().st_size > MAX_CONTENT
    except OSError:
        return False


def record_too_large(context: ToolContext, path: Path, tool: str) -> None:
    """Record that a tool changed a file too large to keep (an undo says so)."""
    if recording(context) and context.checkpoints is not None:
        context.checkpoints.note_too_large(str(path), tool)


def record_file(
    context: ToolContext, path: Path, before: bytes | None, after: bytes, tool: str
) -> None:
    """Record a file a tool wrote (``before``: its bytes before, None when it was new)."""
    if recording(context) and context.checkpoints is not None:
        context.checkpoints.record_file(str(path), before, after, tool, current_call_id())
