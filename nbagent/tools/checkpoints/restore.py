"""Undoing changes: each cell or file put back as it was before, unless a person changed it since.

Changes are undone newest first, each through the path the agent's own edits take: the front
end or JupyterLab's live document for the notebook the user has open (its file is never written
behind them), the file for any other notebook, the file itself for a file. A cell or file that is
no longer as the change left it (a person typed in it, ran it, deleted it) is left as it is and
named, unless ``force``. Each change undone gives its inverse, so that an undo can be undone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from nbagent.core.errors import ToolError
from nbagent.render.codeview import short_id
from nbagent.tools.checkpoints.hooks import plain
from nbagent.tools.checkpoints.marks import mark_of
from nbagent.tools.checkpoints.model import Change, cell_mark
from nbagent.tools.checkpoints.recording import CheckpointLog
from nbagent.tools.context import ToolContext
from nbagent.tools.files.paths import shown
from nbagent.tools.files.stamps import ChangedOnDisk, FileStamp, atomic_write
from nbagent.tools.notebook.file import (
    CellEdit,
    Document,
    LoadedNotebook,
    apply_edit,
    as_nodes,
    load_notebook,
    save_notebook,
)
from nbagent.tools.notebook.locate import route

T = TypeVar("T")


class Left(ToolError):
    """A change left as it is: why, in a few words."""


@dataclass
class Outcome:
    """What an undo did and left."""

    restored: list[str] = field(default_factory=list)
    """What was put back, one line each."""
    left: list[str] = field(default_factory=list)
    """What was left as it is, and why, one line each."""
    inverse: list[Change] = field(default_factory=list)
    """The changes the undo made, in the order made (undoing them is a redo)."""


def restore(
    context: ToolContext, log: CheckpointLog, changes: Iterable[Change], force: bool = False
) -> Outcome:
    """Undo changes, newest first.

    Args:
        context: The tools' context (where the notebooks are, the root files are shown from).
        log: The checkpoint log (the files' contents).
        changes: The changes, in the order they were made.
        force: Overwrite cells and files a person changed since.

    Returns:
        What was restored and left, and the inverse changes.
    """
    outcome = Outcome()
    for change in reversed(list(changes)):
        try:
            if change.kind == "file":
                said, inverse = _restore_file(context, log, change, force)
            else:
                said, inverse = _restore_cell(context, change, force)
        except Left as left:
            outcome.left.append(f"{_where(context, change)}: {left}")
            continue
        except (ToolError, OSError) as exc:
            outcome.left.append(f"{_where(context, change)}: not restored ({exc})")
            continue
        outcome.restored.append(f"{_where(context, change)}: {said}")
        outcome.inverse.insert(0, inverse)
    return outcome


def _where(context: ToolContext, change: Change) -> str:
    name = shown(context, Path(change.path))
    if change.kind == "file":
        return name
    return f"cell {short_id(change.cell_id)} of {name}"


class FileNotebook:
    """A notebook's file as a :class:`~nbagent.tools.notebook.file.Document` (a notebook that no
    front end shows): each edit loads it, changes it and saves it atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, outputs: bool = True) -> LoadedNotebook:
        """The notebook as its file holds it."""
        return load_notebook(self.path, self.path.name)

    def edit(self, change: Callable[[LoadedNotebook], tuple[CellEdit, T]]) -> T:
        """Decide a change from the file, make it and save it (refused if saved meanwhile)."""
        notebook = self.read()
        edit, result = change(notebook)
        if edit.action == "outputs":
            cell = notebook.cells[edit.index]
            cell.outputs = as_nodes(list(edit.outputs))
            cell.execution_count = edit.execution_count
        else:
            apply_edit(notebook, edit)
        save_notebook(notebook)
        return result

    def show_outputs(
        self,
        cell_id: str,
        outputs: tuple[dict[str, Any], ...],
        execution_count: int | None,
        running: bool = False,
    ) -> None:
        """Set a code cell's outputs and execution count in the file."""

        def change(notebook: LoadedNotebook) -> tuple[CellEdit, None]:
            index = notebook.index_of(cell_id)
            return CellEdit(
                "outputs", index, outputs=outputs, execution_count=execution_count
            ), None

        self.edit(change)


def _document(context: ToolContext, path: Path) -> Document:
    """Where a notebook is changed: where the user sees it if it is the open one, else its file."""
    open_notebook = context.notebook_path()
    is_open = open_notebook is not None and open_notebook.resolve() == path
    found = route(context, path, is_open, editing=True)
    return found.document if found.document is not None else FileNotebook(path)


def _index(notebook: LoadedNotebook, cell_id: str) -> int | None:
    return next((i for i, cell in enumerate(notebook.cells) if cell.get("id") == cell_id), None)


def _check(current: Any, change: Change, force: bool) -> None:
    """Refuse a cell a person changed since the change (unless ``force``)."""
    if not force and cell_mark(current) != cell_mark(change.after):
        raise Left(
            "left as it is: it was changed after the agent's edit (typed in, run or edited again)"
        )


def _restore_cell(context: ToolContext, change: Change, force: bool) -> tuple[str, Change]:
    """Put one cell back as it was before the change."""
    path = Path(change.path)
    document = _document(context, path)
    before, after = change.before, change.after
    if (
        before is not None
        and after is not None
        and _only_outputs_differ(before, after)
        and _outputs(before) != _outputs(after)
    ):  # a run: its outputs go back (a change of nothing is restored as a source edit)
        return _restore_outputs(document, change, force)

    def plan(notebook: LoadedNotebook) -> tuple[CellEdit, tuple[str, Change]]:
        index = _index(notebook, change.cell_id)
        cells = notebook.cells
        if after is None:
            if index is not None:
                raise Left("left as it is: it is in the notebook again")
            previous = _index(notebook, change.previous) if change.previous else None
            position = previous + 1 if previous is not None else min(change.index, len(cells))
            inverse = change.inverse()
            inverse.index = position
            inverse.previous = cells[position - 1].get("id") if position else None
            edit = CellEdit("insert", position, cell=as_nodes(before))
            return edit, ("put back (the agent had deleted it)", inverse)
        if index is None:
            raise Left("left as it is: it was deleted after the agent's edit")
        current = cells[index]
        _check(current, change, force)
        inverse = change.inverse()
        if cell_mark(current) != cell_mark(after):
            inverse.before = plain(current)
        inverse.index = index
        inverse.previous = cells[index - 1].get("id") if index else None
        if before is None:
            return CellEdit("delete", index), ("deleted (the agent had inserted it)", inverse)
        if before.get("cell_type") != current.get("cell_type") or _outputs(before) != _outputs(
            after
        ):
            return CellEdit("cell", index, cell=as_nodes(before)), ("restored whole", inverse)
        edit = CellEdit("source", index, source=_source(before), mark=mark_of(before))
        return edit, ("its source restored", inverse)

    return document.edit(plan)


def _restore_outputs(document: Document, change: Change, force: bool) -> tuple[str, Change]:
    """Put a cell's outputs and execution count back (a run undone; the kernel is not)."""
    notebook = document.read(outputs=False)
    index = _index(notebook, change.cell_id)
    if index is None:
        raise Left("left as it is: it was deleted after the agent ran it")
    current = notebook.cells[index]
    _check(current, change, force)
    before = change.before
    outputs = tuple(before.get("outputs") or ())
    document.show_outputs(change.cell_id, outputs, before.get("execution_count"))
    return "its outputs restored (what the run did in the kernel is not undone)", change.inverse()


def _only_outputs_differ(before: Any, after: Any) -> bool:
    return before.get("cell_type") == after.get("cell_type") and _source(before) == _source(after)


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _outputs(cell: Any) -> Any:
    return (cell.get("outputs"), cell.get("execution_count"))


def _restore_file(
    context: ToolContext, log: CheckpointLog, change: Change, force: bool
) -> tuple[str, Change]:
    """Put one file back as it was before the change (or remove the file the agent made)."""
    path = Path(change.path)
    if path.is_symlink() or path.parent.resolve() != path.parent:  # recorded resolved
        raise Left("left as it is: its path leads elsewhere now (a link was made since)")
    try:
        current: bytes | None = path.read_bytes()
    except FileNotFoundError:
        current = None
    digest = hashlib.sha256(current).hexdigest() if current is not None else None
    if not force and digest != change.after:
        what = "removed" if current is None else "changed"
        raise Left(f"left as it is: it was {what} after the agent's edit")
    inverse = change.inverse()
    if digest != change.after and current is not None:
        inverse.before = log.keep_content(current)
    expect = FileStamp.of_bytes(current) if current is not None else None
    if change.before is None:
        if current is not None:
            path.unlink()
        return "removed (the agent had created it)", inverse
    data = log.content(change.before)
    try:
        atomic_write(path, data, expect)
    except ChangedOnDisk:
        raise Left("left as it is: it changed while it was being restored") from None
    return "restored", inverse
