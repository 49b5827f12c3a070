"""The notebook tools NotebookRead and NotebookEdit, and how the kernel finds its notebook.

The notebook is found from (in order) an explicit setting, ``__session__`` (which ipykernel
sets from ``JPY_SESSION_NAME``) or ``JPY_SESSION_NAME`` itself, then VS Code's
``__vsc_ipynb_file__``. The running cell's id is the ``cellId`` that JupyterLab and Notebook 7
put in the execute request's metadata, read through ``shell.kernel.get_parent()``.

Edits follow Claude Code's contract: cells by id, ``replace`` / ``insert`` / ``delete``.
The kernel's own notebook is read and edited where the user sees it: in the front end that
shows it, through nbagent's JupyterLab extension (:mod:`nbagent.frontend`), else in
JupyterLab's live document when it shares the notebook in real time (jupyter-collaboration,
:mod:`nbagent.tools.livedoc`). An edit shows at once, and is refused only when the cell it
changes was changed since the model read it. In a kernel, the own notebook's file is never
written: the front end holds it open and its next save would undo the edit (or ask the user
which to keep); with neither channel, an edit is refused and says what to enable. Other
notebooks go to their files (:mod:`nbagent.tools.nbfile`: validated, atomic, refused when the
file changed since it was read). The agent's own running cell cannot be replaced or deleted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from nbagent.errors import ToolError
from nbagent.frontend.channel import FrontEnd
from nbagent.frontend.document import FrontEndDocument
from nbagent.tool import Tool, ToolResult, tool
from nbagent.tools.context import ToolContext
from nbagent.tools.images import ImageBudget
from nbagent.tools.livedoc import Route
from nbagent.tools.nbfile import (
    CellEdit,
    Document,
    LoadedNotebook,
    apply_edit,
    cell_digest,
    header,
    load_notebook,
    render_cells,
    render_overview,
    save_notebook,
    source_of,
)
from nbagent.tools.output import cap_text
from nbagent.tools.paths import ask_outside_root, resolve, shown

NO_NOTEBOOK = (
    "No notebook is open: nbagent could not find this kernel's notebook (no notebook setting, "
    "no __session__ or JPY_SESSION_NAME, no __vsc_ipynb_file__). Pass notebook_path to name "
    "one."
)
"""What the notebook tools say when there is no notebook."""

LIVE = "Live: the document JupyterLab shows (real-time collaboration); edits show there at once."
"""What NotebookRead's header adds when it read the live document."""

NO_FRONT_END = (
    "{name} was not changed: it is open in a front end that nbagent cannot reach, and an edit "
    "of its file would be undone by the front end's next save. To let the agent edit it, "
    "install nbagent in the environment that runs JupyterLab too (its JupyterLab extension "
    "shows edits at once) and reload the page, or turn on "
    "JupyterLab's real-time collaboration (jupyter-collaboration). Tell the user this, and give "
    "the code in your answer meanwhile."
)
"""Why an edit of the kernel's own notebook is refused when no front end can show it."""

CellType = Literal["code", "markdown", "raw"]
EditMode = Literal["replace", "insert", "delete"]


def find_notebook(shell: Any, explicit: str | Path | None = None) -> Path | None:
    """Find the notebook a kernel runs.

    Args:
        shell: The IPython shell (its ``user_ns`` is read), or None.
        explicit: A path set by the user; it wins when given.

    Returns:
        The notebook's resolved path, or None when it cannot be found.
    """
    if explicit:
        return Path(explicit).expanduser().resolve()
    namespace = getattr(shell, "user_ns", None) or {}
    for candidate in (
        namespace.get("__session__"),
        os.environ.get("JPY_SESSION_NAME"),
        namespace.get("__vsc_ipynb_file__"),
    ):
        found = _notebook_file(candidate)
        if found is not None:
            return found
    return None


def _notebook_file(candidate: Any) -> Path | None:
    """Turn a session name into an existing ``.ipynb`` path (relative ones from the cwd)."""
    if not isinstance(candidate, str) or not candidate.endswith(".ipynb"):
        return None
    path = Path(candidate).expanduser()
    options = [path] if path.is_absolute() else [Path.cwd() / path, Path.cwd() / path.name]
    return next((option.resolve() for option in options if option.is_file()), None)


def running_cell_id(shell: Any) -> str | None:
    """Return the id of the cell being executed, from the execute request's metadata.

    Args:
        shell: The IPython shell of an ipykernel kernel.

    Returns:
        The ``cellId`` the front end sent, or None (a plain IPython, a front end that sends
        none, no request running).
    """
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent("shell") or {}
    except Exception:  # an older or a foreign kernel: no cell id rather than a failure
        return None
    cell_id = (parent.get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) else None


def _target(context: ToolContext, notebook_path: str | None) -> tuple[Path, str, bool]:
    """Resolve the notebook a call is about: (path, how it is shown, whether it is open)."""
    open_notebook = context.notebook_path()
    if notebook_path:
        path = resolve(context, notebook_path)
    elif open_notebook is None:
        raise ToolError(NO_NOTEBOOK)
    else:
        path = open_notebook.resolve()
    if path.suffix.lower() != ".ipynb":
        raise ToolError(f"{shown(context, path)} is not a notebook (.ipynb file).")
    is_open = open_notebook is not None and open_notebook.resolve() == path
    return path, shown(context, path), is_open


def with_images(text: str, images: ImageBudget) -> str | ToolResult:
    """A tool's text, followed by the images it took as image blocks (the text alone without).

    Args:
        text: The text, naming each image where it belongs (``[image 1: ...]``).
        images: The images taken.
    """
    if not images.blocks:
        return text
    return ToolResult(content=[{"type": "text", "text": text}, *images.blocks])


def _notebook_target(tool_input: Any) -> list[str]:
    path = tool_input.get("notebook_path")
    return [path] if path else []


def _route(context: ToolContext, path: Path, is_open: bool, editing: bool = False) -> Route:
    """Where a notebook is read or edited: the front end that shows it, its live document, or
    its file.

    Raises:
        ToolError: An edit of the kernel's own notebook, in a kernel, and neither the front end
            nor a live document can take it (its file must not be written behind them).
    """
    if is_open and context.frontend is not None:
        front = context.frontend.front_end()
        if front is not None and _shows(front, path):
            return Route(FrontEndDocument(context.frontend, front, path))
    route = context.live.route(path, editing) if context.live is not None else Route(None)
    if route.document is None and editing and is_open and context.frontend is not None:
        raise ToolError(NO_FRONT_END.format(name=path.name))
    return route


def _shows(front: FrontEnd, path: Path) -> bool:
    """Whether a front end's notebook (a path from the server's root) is this file."""
    parts = PurePosixPath(front.path).parts
    return bool(parts) and path.parts[-len(parts) :] == parts


@dataclass(frozen=True)
class NotebookSnapshot:
    """A notebook as a reading tool sees it: from a front end or live document, or its file."""

    notebook: LoadedNotebook
    """The notebook's content."""
    document: Document | None
    """The front end's or live document it was read from, or None for the file."""
    note: str
    """What the header adds: where it was read from, and what that leaves out."""

    def remember(self, context: ToolContext, ids: tuple[str, ...]) -> None:
        """Record the read: the file's stamp and the cells seen, or each cell as seen.

        Args:
            context: The tools' context, whose read ledger is updated.
            ids: The ids of the cells whose whole source was shown.
        """
        notebook, shown = self.notebook, set(ids)
        if self.document is None:
            context.reads.note(notebook.path, notebook.stamp, shown)
            return
        context.reads.note_live(
            notebook.path,
            {cell.id: cell_digest(cell) for cell in notebook.cells if cell.get("id") in shown},
        )


def snapshot(context: ToolContext, path: Path, name: str) -> NotebookSnapshot:
    """Read a notebook where the user sees it when it is the kernel's own, else from its file.

    Args:
        context: The tools' context.
        path: The notebook's resolved path.
        name: How it is shown in messages.

    Raises:
        ToolError: The notebook cannot be read.
    """
    open_notebook = context.notebook_path()
    is_open = open_notebook is not None and open_notebook.resolve() == path
    route = _route(context, path, is_open)
    document = route.document
    if document is None:
        note = " ".join(
            p for p in (_file_note(path, is_open and context.frontend), route.note) if p
        )
        return NotebookSnapshot(load_notebook(path, name), None, note)
    notebook = document.read()
    if isinstance(document, FrontEndDocument):
        unsaved = "with changes not yet saved" if document.state.dirty else "all saved"
        note = f"Read from the notebook as {document.front_end.app} shows it ({unsaved})."
    else:
        note = " ".join(part for part in (LIVE, route.note) if part)
    return NotebookSnapshot(notebook, document, note)


def _file_note(path: Path, unseen: bool) -> str:
    """Say that a notebook was read from its file, how old the save is, and (for the kernel's
    own notebook, ``unseen``) that unsaved changes are not in it."""
    try:
        age = f"saved {_age(time.time() - path.stat().st_mtime)} ago"
    except OSError:
        age = "saved earlier"
    if unseen:
        return (
            f"[Read from the file, {age}: no front end that shows this notebook answered, so "
            "what is typed there but not saved is not included.]"
        )
    return f"[Read from the file, {age}.]"


def _age(seconds: float) -> str:
    """A duration in words: ``12 s``, ``4 min``, ``3 h``, ``2 days``."""
    if seconds < 90:
        return f"{max(0, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} days"


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
        check_permission=ask_outside_root(context, _notebook_target, "read"),
    )
    def notebook_read(
        notebook_path: str | None = None,
        cell_id: str | None = None,
        start: int = 0,
        count: int | None = None,
        overview: bool = False,
        outputs: bool = True,
    ) -> str | ToolResult:
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
        path, name, is_open = _target(context, notebook_path)
        seen = snapshot(context, path, name)
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
            return cap_text("\n".join([head, *lines]), limits.output_chars, "use start/count")
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
        return with_images("\n".join(parts), images)

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


def notebook_edit_tool(context: ToolContext) -> Tool:
    """Build the NotebookEdit tool.

    Args:
        context: The tools' context.
    """

    @tool(
        name="NotebookEdit",
        search_hint="jupyter notebook cell edit insert delete replace source ipynb",
        check_permission=ask_outside_root(context, _notebook_target, "edit"),
    )
    def notebook_edit(
        cell_id: str | None = None,
        new_source: str | None = None,
        cell_type: CellType | None = None,
        edit_mode: EditMode = "replace",
        notebook_path: str | None = None,
    ) -> str:
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
        path, name, is_open = _target(context, notebook_path)
        running = context.cell_id if is_open else _no_cell
        request = _Request(cell_id, new_source, cell_type, edit_mode, running)
        route = _route(context, path, is_open, editing=True)
        if route.document is not None:
            return _edit_live(context, route.document, name, request)
        message = _edit_file(context, path, name, request)
        return f"{message}\n\n{route.note}" if route.note else message

    return notebook_edit


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


def _new_cell(kind: CellType, source: str, existing: set[str], **fields: Any) -> Any:
    """Make a cell of a type with an id no other cell has."""
    import nbformat

    make = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }[kind]
    cell = make(source, **fields)
    while cell.id in existing:
        cell = make(source, **fields)
    return cell


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
    cell = _new_cell(kind, source, {c.get("id") for c in notebook.cells})
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
        new = _new_cell(kind, source, set(), id=cell.id, metadata=cell.metadata)
        changed = f"{cell.cell_type} to {kind}"
        message = f"Replaced cell {cell.id} in {name} ({changed}, {_lines(source)}).{note}"
        return CellEdit("cell", index, cell=new), message
    if cell.get("outputs"):
        note = " Its outputs are from the old source until the cell runs again."
    return (
        CellEdit("source", index, source=source),
        f"Replaced cell {cell.id} in {name} ({cell.cell_type}, {_lines(source)}).{note}",
    )
