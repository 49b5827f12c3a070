"""The notebook tools NotebookRead and NotebookEdit.

Edits follow Claude Code's contract: cells by id, ``replace`` / ``insert`` / ``delete``. Where
a notebook is read and edited (the front end that shows it, JupyterLab's live document, or
its file) is decided by :mod:`nbagent.tools.nbaccess`. An edit where the user sees the
notebook shows at once and is refused only when the cell it changes was changed since the
model read it; an edit of a file is validated, atomic, and refused when the file changed
since it was read. The agent's own running cell cannot be replaced or deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nbagent.access import paths
from nbagent.errors import ToolError
from nbagent.permissions import PermissionDecision, deny
from nbagent.tool import Tool, ToolResult, tool
from nbagent.tools.context import ToolContext
from nbagent.tools.images import ImageBudget, with_images
from nbagent.tools.nbaccess import Unseen, route, snapshot, target
from nbagent.tools.nbfile import (
    CellEdit,
    Document,
    LoadedNotebook,
    apply_edit,
    cell_digest,
    header,
    load_notebook,
    new_cell,
    render_cells,
    render_overview,
    save_notebook,
    source_of,
)
from nbagent.tools.output import cap_text, counted

CellType = Literal["code", "markdown", "raw"]
EditMode = Literal["replace", "insert", "delete"]


def notebook_read_tool(context: ToolContext) -> Tool:
    """Build the NotebookRead tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="NotebookRead",
        read_only=True,
        search_hint="jupyter notebook cells read view source outputs ipynb",
        touches=paths("read", "notebook_path"),
    )
    def notebook_read(
        notebook_path: str | None = None,
        cell_id: str | None = None,
        start: int = 0,
        count: int | None = None,
        overview: bool = False,
        outputs: bool = True,
    ) -> ToolResult:
        """Read the notebook's cells: ids, types, sources and outputs (images included).

        Reads the open notebook as the user sees it (unsaved typing included) unless
        `notebook_path` names another. For a long notebook use `overview` first (one line per
        cell), then read cells by `cell_id` or by `start`/`count`. A cell must be read in full
        before NotebookEdit can change it. Figures and other image outputs come back as
        images (a few per read); text outputs are cut to a couple of thousand characters.

        Args:
            notebook_path: A notebook other than the open one.
            cell_id: Read just this cell.
            start: The index of the first cell to read (0 = the first cell).
            count: How many cells to read; all the rest by default.
            overview: One line per cell (index, id, type, first line) instead of full cells.
            outputs: Include the cells' outputs.
        """
        path, name, is_open = target(context, notebook_path)
        seen = snapshot(context, path, name, outputs and not overview)
        notebook = seen.notebook
        running = context.cell_id() if is_open else None
        total = len(notebook.cells)
        if start < 0 or (total and start >= total) or (count is not None and count < 1):
            raise ToolError(
                f"{name} has {total} cells (indices 0 to {total - 1}); start={start}"
                f"{f', count={count}' if count is not None else ''} is out of range."
            )
        stop = total if count is None else min(total, start + count)
        top = " ".join(part for part in (header(notebook, name, running), seen.note) if part)
        if overview:
            seen.remember(context, ())
            lines = render_overview(notebook, running)[start:stop]
            head = top + " Overview (index, id, type, first line):"
            return ToolResult(
                cap_text("\n".join([head, *lines]), limits.output_chars, "use start/count"),
                metadata={"summary": f"overview of {_cells(start, stop, total)}"},
            )
        indices = range(start, stop)
        if cell_id is not None:
            index = notebook.index_of(cell_id)
            indices = range(index, index + 1)
        images = ImageBudget(limits.images, limits.image_bytes)
        rendering = render_cells(
            notebook,
            indices,
            running,
            outputs,
            limits.cell_output_chars,
            limits.output_chars,
            images,
        )
        seen.remember(context, rendering.ids)
        parts = [top, rendering.text]
        end = rendering.stopped_at if rendering.stopped_at is not None else indices.stop
        if end < total and cell_id is None:
            parts.append(
                f"[Cells {indices.start}-{end - 1} of {total} shown. Read on with start={end}.]"
            )
        said = "1 cell" if cell_id is not None else _cells(indices.start, end, total)
        if images.blocks:
            said += f", {counted(len(images.blocks), 'image')}"
        result = with_images("\n".join(parts), images)
        content = result.content if isinstance(result, ToolResult) else result
        return ToolResult(content, metadata={"summary": said})

    return notebook_read


@dataclass(frozen=True)
class _Request:
    """What NotebookEdit was asked to do."""

    cell_id: str | None
    """The cell to replace or delete, or to insert after."""
    new_source: str | None
    """The new source (for replace and insert)."""
    cell_type: CellType | None
    """The new cell's type, or the replaced cell's new type."""
    edit_mode: EditMode
    """``replace``, ``insert`` or ``delete``."""
    running: Callable[[], str | None]
    """Returns the id of the cell that runs the agent (None when the notebook is not the open
    one); asked only when an edit would replace or delete a cell."""


def _cells(start: int, stop: int, total: int) -> str:
    """Which cells a read showed: ``12 cells`` (all of them) or ``cells 0-9 of 40``."""
    if start == 0 and stop >= total:
        return counted(total, "cell")
    return f"cells {start}-{stop - 1} of {total}"


def notebook_edit_tool(context: ToolContext) -> Tool:
    """Build the NotebookEdit tool.

    Args:
        context: The tools' context.
    """

    def check(tool_input: Mapping[str, Any]) -> PermissionDecision | None:
        """Refuse, before the user is asked, an edit of the kernel's notebook that cannot be
        made where it is open (an insert can still go below the agent cell)."""
        notebook_path = tool_input.get("notebook_path")
        if context.frontend is None or not isinstance(notebook_path, str | None):
            return None  # outside a kernel, or an input the call itself refuses
        try:
            path, _, is_open = target(context, notebook_path, write=True)
            route(context, path, is_open, editing=True)
        except Unseen as unseen:
            refusal = _not_below(context, tool_input, unseen)
            return deny(refusal) if refusal else None
        except ToolError:
            return None  # the call says it
        return None

    @tool(
        name="NotebookEdit",
        search_hint="jupyter notebook cell edit insert delete replace source ipynb",
        touches=paths("write", "notebook_path"),
        check_permission=check,
    )
    def notebook_edit(
        cell_id: str | None = None,
        new_source: str | None = None,
        cell_type: CellType | None = None,
        edit_mode: EditMode = "replace",
        notebook_path: str | None = None,
    ) -> ToolResult:
        """Replace, insert or delete one notebook cell, addressed by its id.

        `replace` sets the source of cell `cell_id` (and its type, if `cell_type` is given);
        `insert` adds a new cell after `cell_id`, or at the top without one (`cell_type`
        defaults to code); `delete` removes cell `cell_id`. Read the cell with NotebookRead
        first. The cell that runs this agent cannot be replaced or deleted. Outputs of an
        edited code cell are kept until it runs again.

        Args:
            cell_id: The cell to replace or delete, or to insert after.
            new_source: The new source (for replace and insert).
            cell_type: `code`, `markdown` or `raw`.
            edit_mode: `replace`, `insert` or `delete`.
            notebook_path: A notebook other than the open one.
        """
        try:
            path, name, is_open = target(context, notebook_path, write=True)
            found = route(context, path, is_open, editing=True)
        except Unseen as unseen:
            inputs = {"edit_mode": edit_mode, "cell_type": cell_type, "new_source": new_source}
            refusal = _not_below(context, inputs, unseen)
            if refusal:
                raise ToolError(refusal) from unseen
            return _insert_below(context, cell_id, new_source or "", unseen.why)
        running = context.cell_id if is_open else _no_cell
        request = _Request(cell_id, new_source, cell_type, edit_mode, running)
        if found.document is not None:
            message = _edit_live(context, found.document, name, request)
        else:
            message = _edit_file(context, path, name, request)
            message = f"{message}\n\n{found.note}" if found.note else message
        return ToolResult(message, metadata={"summary": _edit_summary(request)})

    return notebook_edit


ONLY_BELOW = (
    "Only a new code cell can be added to a notebook nbagent cannot see: NotebookEdit with "
    "edit_mode insert puts it below the %%agent cell, where it appears when this cell ends."
)
"""What a refused edit of an unseen notebook adds: what can still be done."""


def _not_below(context: ToolContext, tool_input: Mapping[str, Any], unseen: Unseen) -> str:
    """Why an edit of the kernel's unseen notebook cannot go below the agent cell instead
    (Jupyter's ``set_next_input``); empty when it can.

    Args:
        context: The tools' context.
        tool_input: The call's ``edit_mode``, ``cell_type`` and ``new_source``.
        unseen: Why the notebook cannot be edited where it is open.
    """
    shell = context.shell
    if not callable(getattr(shell, "set_next_input", None)):
        return str(unseen)
    kind = tool_input.get("cell_type") or "code"
    if tool_input.get("edit_mode", "replace") != "insert" or kind != "code":
        return f"{unseen} {ONLY_BELOW}"
    if tool_input.get("new_source") is None:
        return "new_source is required to insert a cell."
    if any(payload.get("source") == "set_next_input" for payload in _payloads(shell)):
        return (
            "The cell was not added: one new cell already waits to appear below the %%agent "
            "cell, and Jupyter's protocol passes one such cell per cell run (a second would "
            "replace the first). Give this code in your answer instead, or put it with the "
            f"first in one cell in a later %%agent cell. {unseen.why}"
        )
    return ""


def _payloads(shell: Any) -> list[dict[str, Any]]:
    """The payloads the running execute request's reply will carry (IPython's manager)."""
    manager = getattr(shell, "payload_manager", None)
    return list(manager.read_payload()) if manager is not None else []


def _insert_below(context: ToolContext, after: str | None, source: str, why: str) -> ToolResult:
    """Hand a new code cell to the front end in the execute reply (``set_next_input``): it
    appears below the agent cell when the cell ends, in front ends that support it."""
    context.shell.set_next_input(source, replace=False)
    running = context.cell_id()
    if after is None:
        asked = " (not at the top, as asked: below the %%agent cell is the only place it can go)"
    elif after != running:
        asked = (
            f" (not after cell {after}, as asked: below the %%agent cell is the only place it "
            "can go)"
        )
    else:
        asked = ""
    message = (
        f"The new code cell ({_lines(source)}) was not inserted where the notebook is open: "
        "nbagent cannot see it there. It was handed to the front end the way Jupyter's "
        "protocol allows (set_next_input): it appears directly below the %%agent cell when "
        f"this cell finishes{asked}, in JupyterLab, Notebook and VS Code (a run by nbclient or "
        "papermill drops it). It has not run, and its id is not known: it cannot be read, run "
        "or edited in this turn. Only one cell can be added this way per %%agent cell. Why "
        f"nbagent cannot see the notebook: {why}"
    )
    return ToolResult(message, metadata={"summary": "new cell below this one, when it ends"})


def _edit_summary(request: _Request) -> str:
    """A done edit in a few words: ``inserted cell after sales-df``, ``deleted cell a1``."""
    if request.edit_mode == "insert":
        kind = "" if request.cell_type in (None, "code") else f"{request.cell_type} "
        where = f"after {request.cell_id}" if request.cell_id else "at the top"
        return f"inserted {kind}cell {where}"
    verb = "deleted" if request.edit_mode == "delete" else "replaced"
    return f"{verb} cell {request.cell_id}"


def _no_cell() -> str | None:
    return None


def _not_read(name: str) -> ToolError:
    return ToolError(
        f"{name} has not been read yet. Read it with NotebookRead first, then edit it."
    )


def _edit_file(context: ToolContext, path: Path, name: str, request: _Request) -> str:
    """Make an edit in the notebook's file, if it did not change since it was read."""
    stamp = context.reads.stamp(path)
    if stamp is None:
        raise _not_read(name)
    try:
        notebook: LoadedNotebook | None = load_notebook(path, name)
    except ToolError:
        if stamp.still_matches(path):
            raise
        notebook = None
    if notebook is None or notebook.stamp != stamp:  # one read of the file checks and loads
        raise ToolError(
            f"{name} has changed on disk since it was last read (saved by Jupyter or edited "
            "elsewhere). Read it again with NotebookRead, then edit it."
        )
    seen = context.reads.cells(path)
    edit, message = _plan(notebook, name, request, seen)
    if edit.action == "delete":
        seen.discard(notebook.cells[edit.index].id)
    apply_edit(notebook, edit)
    if edit.action == "insert":
        seen.add(edit.cell.id)
    context.reads.note(path, save_notebook(notebook), seen)
    return message


def _edit_live(context: ToolContext, live: Document, name: str, request: _Request) -> str:
    """Make an edit where the user sees the notebook (the front end's or the live document),
    if the cell it changes did not change since it was read."""
    known = context.reads.live_cells(live.path)
    if known is None:
        raise _not_read(name)

    def change(notebook: LoadedNotebook) -> tuple[CellEdit, tuple[str, dict[str, str]]]:
        edit, message = _plan(notebook, name, request, known, known)
        apply_edit(notebook, edit)
        if edit.action == "delete":
            return edit, (message, {})
        cell = notebook.cells[edit.index]
        return edit, (message, {cell.id: cell_digest(cell)})

    message, written = live.edit(change)
    gone = [request.cell_id] if request.edit_mode == "delete" and request.cell_id else []
    context.reads.note_live(live.path, written, gone)
    return message


def _plan(
    notebook: LoadedNotebook,
    name: str,
    request: _Request,
    seen: Container[str],
    digests: Mapping[str, str] | None = None,
) -> tuple[CellEdit, str]:
    """Check an edit against the notebook as it is, and say what it will do.

    Args:
        notebook: The notebook (not changed here).
        name: How it is shown.
        request: The edit.
        seen: Ids of the cells the model has read.
        digests: For the live document, each read cell's digest as the model saw it; an edit
            of a cell that changed since is refused.

    Returns:
        The change and the message that reports it.
    """
    if request.edit_mode == "insert":
        kind = request.cell_type or "code"
        return _insert(notebook, name, request.cell_id, request.new_source, kind)
    cell_id = request.cell_id
    if not cell_id:
        raise ToolError(f"cell_id is required to {request.edit_mode} a cell.")
    index = notebook.index_of(cell_id)
    if cell_id == request.running():
        raise ToolError(
            f"Cell {cell_id} is the cell running this agent: it cannot be "
            f"{'deleted' if request.edit_mode == 'delete' else 'replaced'} while it runs. "
            "Insert a new cell instead."
        )
    if cell_id not in seen:
        raise ToolError(
            f"Cell {cell_id} has not been read yet. Read it with NotebookRead "
            f"(cell_id={cell_id!r}) first, then edit it."
        )
    if digests is not None and cell_digest(notebook.cells[index]) != digests[cell_id]:
        raise ToolError(
            f"Cell {cell_id} has changed in JupyterLab since it was last read. Read it again "
            f"with NotebookRead (cell_id={cell_id!r}), then edit it."
        )
    if request.edit_mode == "delete":
        return _delete(notebook, name, index)
    return _replace(notebook, name, index, request.new_source, request.cell_type)


def _lines(source: str) -> str:
    count = len(source.splitlines())
    return f"{count} line{'s' if count != 1 else ''}"


def _insert(
    notebook: LoadedNotebook,
    name: str,
    after: str | None,
    source: str | None,
    kind: CellType,
) -> tuple[CellEdit, str]:
    if source is None:
        raise ToolError("new_source is required to insert a cell.")
    position = 0 if after is None else notebook.index_of(after) + 1
    cell = new_cell(kind, source, {c.get("id") for c in notebook.cells})
    where = f"after cell {after}" if after else "at the top"
    message = (
        f"Inserted {kind} cell {cell.id} ({_lines(source)}) {where} of {name}, at index {position}."
    )
    return CellEdit("insert", position, cell=cell), message


def _delete(notebook: LoadedNotebook, name: str, index: int) -> tuple[CellEdit, str]:
    cell = notebook.cells[index]
    outputs = len(cell.get("outputs", ()))
    extra = f", with its {outputs} output{'s' if outputs != 1 else ''}" if outputs else ""
    return (
        CellEdit("delete", index),
        f"Deleted {cell.cell_type} cell {cell.id} ({_lines(source_of(cell))}{extra}) from {name}.",
    )


def _replace(
    notebook: LoadedNotebook,
    name: str,
    index: int,
    source: str | None,
    kind: CellType | None,
) -> tuple[CellEdit, str]:
    if source is None:
        raise ToolError("new_source is required to replace a cell.")
    cell = notebook.cells[index]
    note = ""
    if kind and kind != cell.cell_type:
        outputs = len(cell.get("outputs", ()))
        if outputs:
            note = f" Its {outputs} output{'s were' if outputs != 1 else ' was'} removed."
        new = new_cell(kind, source, id=cell.id, metadata=cell.metadata)
        changed = f"{cell.cell_type} to {kind}"
        message = f"Replaced cell {cell.id} in {name} ({changed}, {_lines(source)}).{note}"
        return CellEdit("cell", index, cell=new), message
    if cell.get("outputs"):
        note = " Its outputs are from the old source until the cell runs again."
    return (
        CellEdit("source", index, source=source),
        f"Replaced cell {cell.id} in {name} ({cell.cell_type}, {_lines(source)}).{note}",
    )
