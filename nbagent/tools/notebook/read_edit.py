"""The notebook tools NotebookRead and NotebookEdit.

Edits follow Claude Code's contract: cells by id, ``replace`` / ``insert`` / ``delete``. Where
a notebook is read and edited (the front end that shows it, JupyterLab's live document, or
its file) is decided by :mod:`nbagent.tools.notebook.locate`. An edit where the user sees the
notebook shows at once and is refused only when the cell it changes was changed since the
model read it; an edit of a file is validated, atomic, and refused when the file changed
since it was read. The agent's own running cell cannot be replaced or deleted.

An edit that cannot be made is refused before the person is asked; the question shows the new
cell's code, the diff of the cell replaced or the source deleted (:mod:`nbagent.render.codeview`). A
cell may be named by the first 8 or more characters of its id, as cards show it.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nbagent.core.access import paths
from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.policy.decisions import PermissionDecision, explain
from nbagent.render.codeview import SHORT_ID, capped, cell_diff, diff_counts, fenced, short_id
from nbagent.tools.checkpoints.hooks import cell_change, record, whole_cells
from nbagent.tools.checkpoints.marks import marked
from nbagent.tools.checkpoints.model import Change
from nbagent.tools.checkpoints.review import cell_review
from nbagent.tools.checkpoints.review_mode import reviewed
from nbagent.tools.context import ToolContext
from nbagent.tools.notebook.file import (
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
from nbagent.tools.notebook.images import ImageBudget, with_images
from nbagent.tools.notebook.locate import Unseen, route, snapshot, target
from nbagent.tools.output import cap_text

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
            cell_id: Read just this cell (its id, or the first 8 or more characters of it).
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
            index = cell_index(notebook, cell_id)
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
            said += f", {plural(len(images.blocks), 'image')}"
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
        return plural(total, "cell")
    return f"cells {start}-{stop - 1} of {total}"


def notebook_edit_tool(context: ToolContext) -> Tool:
    """Build the NotebookEdit tool.

    Args:
        context: The tools' context.
    """

    def check(tool_input: Mapping[str, Any]) -> PermissionDecision | None:
        """Fail, before the person is asked, an edit that cannot be made (no such cell, a
        cell not read or changed since, nothing that can take the edit where the notebook is
        open); else give what the question shows: the new cell's code, the diff of the cell
        replaced, the source deleted.

        Raises:
            ToolError: The edit cannot be made; the call fails with why.
        """
        if not _valid(tool_input):
            return None  # the call refuses the input, saying why
        try:
            path, name, is_open = target(context, tool_input.get("notebook_path"), write=True)
        except Unseen as unseen:
            return _unseen_question(context, tool_input, unseen)
        except ToolError:
            return None  # a path no tool may touch: the policy says why, naming the rule
        try:
            found = route(context, path, is_open, editing=True)
        except Unseen as unseen:
            return _unseen_question(context, tool_input, unseen)
        request = _Request(
            tool_input.get("cell_id"),
            tool_input.get("new_source"),
            tool_input.get("cell_type"),
            tool_input.get("edit_mode", "replace"),
            context.cell_id if is_open else _no_cell,
        )
        if found.document is not None:
            known = _live_reads(context, found.document.path, name)
            notebook = found.document.read(outputs=False)
            edit, _ = _plan(notebook, name, request, known, known)
        else:
            notebook, seen = _file_state(context, path, name)
            edit, _ = _plan(notebook, name, request, seen)
        return _question(notebook, name, edit)

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
            cell_id: The cell to replace or delete, or to insert after (its id, or the first
                8 or more characters of it).
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
            message, said, review = _edit_live(context, found.document, name, request)
        else:
            message, said, review = _edit_file(context, path, name, request)
            message = f"{message}\n\n{found.note}" if found.note else message
        return ToolResult(message, metadata={"summary": said, "review": review})

    return reviewed(notebook_edit, context)


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


def _valid(tool_input: Mapping[str, Any]) -> bool:
    """Whether a call's input is of the types NotebookEdit takes (else the call refuses it)."""
    texts = ("cell_id", "new_source", "notebook_path")
    return (
        all(isinstance(tool_input.get(key), str | None) for key in texts)
        and tool_input.get("edit_mode", "replace") in ("replace", "insert", "delete")
        and tool_input.get("cell_type") in (None, "code", "markdown", "raw")
    )


def _unseen_question(
    context: ToolContext, tool_input: Mapping[str, Any], unseen: Unseen
) -> PermissionDecision:
    """Refuse an edit of the kernel's notebook that cannot be made where it is open, unless it
    can go below the agent cell; then show the code the new cell gets."""
    refusal = _not_below(context, tool_input, unseen)
    if refusal:
        raise ToolError(refusal) from unseen
    source = tool_input["new_source"]
    return explain(
        fenced(capped(source), "python") if source else "",
        "add a code cell below the %%agent cell, where it appears when this cell ends",
    )


def _question(notebook: LoadedNotebook, name: str, edit: CellEdit) -> PermissionDecision:
    """What the question about an edit shows: the new cell's code, the diff of the cell it
    replaces (in the language of its type), or the source it deletes.

    Args:
        notebook: The notebook the edit was planned on (not changed).
        name: How the notebook is shown.
        edit: The edit.
    """
    if edit.action == "insert":
        cell = edit.cell
        where = (
            f"after cell {short_id(notebook.cells[edit.index - 1].id)} in {name}"
            if edit.index
            else f"at the top of {name}"
        )
        request = f"insert a {cell.cell_type} cell {where}"
        code = source_of(cell)
        language = _language(notebook, cell.cell_type)
        return explain(fenced(capped(code), language) if code else "", request)
    cell = notebook.cells[edit.index]
    if edit.action == "delete":
        outputs = len(cell.get("outputs", ()))
        extra = f", with its {plural(outputs, 'output')}" if outputs else ""
        request = f"delete {cell.cell_type} cell {short_id(cell.id)}{extra} from {name}"
        code = source_of(cell)
        language = _language(notebook, cell.cell_type)
        return explain(fenced(capped(code), language) if code else "", request)
    kind = edit.cell.cell_type if edit.action == "cell" else cell.cell_type
    new = source_of(edit.cell) if edit.action == "cell" else edit.source
    changed = f" ({cell.cell_type} to {kind})" if kind != cell.cell_type else ""
    request = f"replace cell {short_id(cell.id)}{changed} in {name}"
    diff = cell_diff(source_of(cell), new)
    if not diff:
        return explain("", f"{request}, its source unchanged")
    return explain(fenced(capped(diff), f"diff {_language(notebook, kind)}"), request)


def _language(notebook: LoadedNotebook, cell_type: str) -> str:
    """The language a cell of this type is written in: the notebook's for code (Python when
    it does not say), ``markdown``, or ``text`` for a raw cell."""
    if cell_type == "markdown":
        return "markdown"
    if cell_type != "code":
        return "text"
    metadata = notebook.node.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        language = section.get(field) if isinstance(section, Mapping) else None
        if isinstance(language, str) and language:
            return language.lower()
    return "python"


def cell_index(notebook: LoadedNotebook, cell_id: str) -> int:
    """Return the index of a cell given its id, or the first 8 or more characters of its id
    when no other cell's id starts with them (a person sees ids shortened).

    Args:
        notebook: The notebook.
        cell_id: The id, or its start.

    Raises:
        ToolError: No cell has that id, or more than one id starts with it.
    """
    ids = [cell.get("id") for cell in notebook.cells]
    if cell_id in ids or len(cell_id) < SHORT_ID:
        return notebook.index_of(cell_id)
    found = [
        i for i, other in enumerate(ids) if isinstance(other, str) and other.startswith(cell_id)
    ]
    if len(found) > 1:
        raise ToolError(
            f"The ids of {len(found)} cells of {notebook.path.name} start with {cell_id!r}: "
            f"{', '.join(ids[i] for i in found)}. Give the whole id."
        )
    return found[0] if found else notebook.index_of(cell_id)


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


def _summary(notebook: LoadedNotebook, edit: CellEdit) -> str:
    """An edit in a few words, after the card's cell id: ``inserted cell 1a2b3c4d below it``,
    ``replaced: +2 -1``, ``deleted``.

    Args:
        notebook: The notebook before the edit.
        edit: The edit.
    """
    if edit.action == "insert":
        kind = "" if edit.cell.cell_type == "code" else f"{edit.cell.cell_type} "
        where = "below it" if edit.index else "at the top"
        return f"inserted {kind}cell {short_id(edit.cell.id)} {where}"
    if edit.action == "delete":
        return "deleted"
    cell = notebook.cells[edit.index]
    new = source_of(edit.cell) if edit.action == "cell" else edit.source
    added, removed = diff_counts(source_of(cell), new)
    changed = f"{cell.cell_type} to {edit.cell.cell_type}, " if edit.action == "cell" else ""
    return f"replaced: {changed}+{added} -{removed}"


def _no_cell() -> str | None:
    return None


def _not_read(name: str) -> ToolError:
    return ToolError(
        f"{name} has not been read yet. Read it with NotebookRead first, then edit it."
    )


def _file_state(context: ToolContext, path: Path, name: str) -> tuple[LoadedNotebook, set[str]]:
    """The notebook's file as the model read it, and the ids of the cells it read; refused
    when it has not been read or changed on disk since."""
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
    return notebook, context.reads.cells(path)


def _live_reads(context: ToolContext, path: Path, name: str) -> Mapping[str, str]:
    """Each cell of a notebook where the user sees it that the model read, with its digest as
    read; refused when the model has not read the notebook."""
    known = context.reads.live_cells(path)
    if known is None:
        raise _not_read(name)
    return known


def _edit_file(
    context: ToolContext, path: Path, name: str, request: _Request
) -> tuple[str, str, str]:
    """Make an edit in the notebook's file, if it did not change since it was read.

    Returns:
        What the model is told, the edit in a few words, and its diff for the card.
    """
    notebook, seen = _file_state(context, path, name)
    edit, message = _plan(notebook, name, request, seen)
    edit = marked(edit)
    said = _summary(notebook, edit)
    change = cell_change(notebook, edit, "NotebookEdit")
    review = cell_review(change, name, _language(notebook, "code"))
    if edit.action == "delete":
        seen.discard(notebook.cells[edit.index].id)
    apply_edit(notebook, edit)
    if edit.action == "insert":
        seen.add(edit.cell.id)
    context.reads.note(path, save_notebook(notebook), seen)
    record(context, change)
    return message, said, review


def _edit_live(
    context: ToolContext, live: Document, name: str, request: _Request
) -> tuple[str, str, str]:
    """Make an edit where the user sees the notebook (the front end's or the live document),
    if the cell it changes did not change since it was read.

    Returns:
        What the model is told, the edit in a few words, and its diff for the card.
    """
    known = _live_reads(context, live.path, name)
    retyped = request.edit_mode == "replace" and request.cell_type is not None
    whole = whole_cells(context, live) if request.edit_mode == "delete" or retyped else {}
    made: list[Change] = []
    reviews: list[str] = []

    def change(
        notebook: LoadedNotebook,
    ) -> tuple[CellEdit, tuple[str, str, dict[str, str], list[str]]]:
        # The document makes the change; the notebook stays as planned on (the front end's
        # guard is read from it: a cell changed here would be its new source).
        edit, message = _plan(notebook, name, request, known, known)
        edit = marked(edit)
        said = _summary(notebook, edit)
        made[:] = [cell_change(notebook, edit, "NotebookEdit", whole)]
        reviews[:] = [cell_review(made[0], name, _language(notebook, "code"))]
        if edit.action == "delete":
            return edit, (message, said, {}, [notebook.cells[edit.index].id])
        cell = edit.cell
        if cell is None:
            cell = {**notebook.cells[edit.index], "source": edit.source}
        return edit, (message, said, {cell["id"]: cell_digest(cell)}, [])

    message, said, written, gone = live.edit(change)
    context.reads.note_live(live.path, written, gone)
    for made_change in made:
        record(context, made_change)
    return message, said, "".join(reviews)


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
    if not request.cell_id:
        raise ToolError(f"cell_id is required to {request.edit_mode} a cell.")
    index = cell_index(notebook, request.cell_id)
    cell_id = notebook.cells[index].id
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
    position = 0 if after is None else cell_index(notebook, after) + 1
    after = notebook.cells[position - 1].id if position else None
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
