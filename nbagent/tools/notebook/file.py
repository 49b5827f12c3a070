"""Notebook files: loading with a stamp, rendering cells for the model, validated atomic saves.

No IPython here: Read (for ``.ipynb`` files), NotebookRead and NotebookEdit share this module.
Cells are addressed by id. A notebook older than nbformat 4.5 has no cell ids; it gets
``cell-<index>`` ids when loaded (stable while the file is unchanged) and is saved as 4.5.
A change to the cells is a :class:`CellEdit`, applied to a file's notebook here and to
JupyterLab's live document by :mod:`nbagent.tools.notebook.live`.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable, Container
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from nbagent.core.errors import ToolError
from nbagent.core.text import cut
from nbagent.tools.digest import text_digest
from nbagent.tools.files.stamps import ChangedOnDisk, FileStamp, atomic_write
from nbagent.tools.notebook.images import ImageBudget

T = TypeVar("T")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FIRST_LINE_CHARS = 80


@dataclass
class LoadedNotebook:
    """A notebook read from disk, with the stamp it had."""

    path: Path
    """The resolved path."""
    node: Any
    """The ``nbformat.NotebookNode`` (version 4)."""
    stamp: FileStamp
    """The file's stamp when it was read."""

    @property
    def cells(self) -> list[Any]:
        """The cells, in order."""
        return self.node.cells

    def index_of(self, cell_id: str) -> int:
        """Return the index of the cell with this id.

        Args:
            cell_id: The cell's id.

        Raises:
            ToolError: No cell has that id (the message lists some that exist).
        """
        for index, cell in enumerate(self.cells):
            if cell.get("id") == cell_id:
                return index
        ids = [cell.get("id") for cell in self.cells]
        listed = ", ".join(ids[:20]) + (f", … ({len(ids) - 20} more)" if len(ids) > 20 else "")
        raise ToolError(
            f"No cell with id {cell_id!r} in {self.path.name}. "
            + (f"Its cell ids are: {listed}." if ids else "The notebook has no cells.")
        )


def load_notebook(path: Path, shown_as: str) -> LoadedNotebook:
    """Read a notebook file as nbformat 4, giving cells ids where they have none.

    A version 4 file is parsed as JSON into :class:`Node` s, as nbformat reads it, without
    importing nbformat (seconds, see :class:`Node`); an older one is converted by nbformat.

    Args:
        path: The resolved path.
        shown_as: How the path is shown in messages.

    Returns:
        The notebook and its stamp.

    Raises:
        ToolError: The file is missing or is not a notebook.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"Notebook does not exist: {shown_as}") from None
    except IsADirectoryError:
        raise ToolError(f"{shown_as} is a folder, not a notebook.") from None
    try:
        parsed = json.loads(data.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, or not JSON
        raise ToolError(f"{shown_as} is not a readable notebook: {exc}") from exc
    if isinstance(parsed, dict) and parsed.get("nbformat") == 4:
        node = _in_memory(as_nodes(parsed))
    else:
        node = _converted(parsed, shown_as)
    _give_cell_ids(node)
    return LoadedNotebook(path=path, node=node, stamp=FileStamp.of_bytes(data))


def _in_memory(node: Node) -> Node:
    """A version 4 notebook as nbformat holds it once read: texts split into lines joined
    again, and the values a file must not keep (``trusted``, ``signature``) left out (what
    ``nbformat.v4.rwbase.rejoin_lines`` and ``strip_transient`` do)."""
    node.setdefault("cells", [])
    metadata = node.setdefault("metadata", Node())
    for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
        metadata.pop(key, None)
    for cell in node.cells:
        if isinstance(cell.get("source"), list):
            cell.source = "".join(cell.source)
        for attachment in (cell.get("attachments") or {}).values():
            _join_bundle(attachment)
        if isinstance(cell.get("metadata"), dict):
            cell.metadata.pop("trusted", None)
        if cell.get("cell_type") != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") in ("execute_result", "display_data"):
                _join_bundle(output.get("data", {}))
            elif output.get("output_type") and isinstance(output.get("text"), list):
                output.text = "".join(output.text)
    return node


def _join_bundle(data: dict[str, Any]) -> None:
    """Join the texts of a mime bundle split into lines (JSON types are data: left alone)."""
    for mime, value in data.items():
        json_type = mime == "application/json" or (
            mime.startswith("application/") and mime.endswith("+json")
        )
        if not json_type and isinstance(value, list) and all(isinstance(v, str) for v in value):
            data[mime] = "".join(value)


def _converted(parsed: Any, shown_as: str) -> Any:
    """A notebook of another nbformat version, converted to version 4 by nbformat."""
    import nbformat

    try:
        return nbformat.convert(nbformat.from_dict(parsed), 4)
    except Exception as exc:  # nbformat raises several kinds for a bad file
        raise ToolError(f"{shown_as} is not a readable notebook: {exc}") from exc


def _give_cell_ids(node: Any) -> None:
    """Give the cells of a notebook older than nbformat 4.5 ``cell-<index>`` ids (as 4.5)."""
    if node.nbformat_minor < 5:
        for index, cell in enumerate(node.cells):
            cell.setdefault("id", f"cell-{index}")
        node.nbformat_minor = 5


def save_notebook(notebook: LoadedNotebook) -> FileStamp:
    """Validate a notebook and write it atomically, unless the file changed since it was loaded.

    The check is made at the moment the new file replaces the old one (see
    :func:`~nbagent.tools.files.stamps.atomic_write`), so a save by Jupyter or another program at
    any point of the edit is never overwritten.

    Args:
        notebook: The notebook, changed in memory.

    Returns:
        The file's new stamp.

    Raises:
        ToolError: The notebook would not be valid nbformat, or the file changed since it was
            loaded; the file is left untouched.
    """
    import nbformat

    try:
        nbformat.validate(notebook.node)
    except nbformat.ValidationError as exc:
        raise ToolError(
            f"The edit was not saved: {notebook.path.name} would not be a valid notebook "
            f"({exc.message})."
        ) from exc
    text = nbformat.v4.writes(notebook.node)  # nbformat.writes would validate it again
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
    try:
        atomic_write(notebook.path, data, expect=notebook.stamp)
    except ChangedOnDisk as changed:
        name = notebook.path.name
        if changed.maybe_kept:
            raise ToolError(
                f"The edit may not be in {name}: another program saved it at the moment the "
                "edit was written, and the file now holds that save (made from the edited "
                "notebook or not). Read it again with NotebookRead to see, then edit it."
            ) from None
        raise ToolError(
            f"The edit was not saved: {name} changed on disk while it was being edited. "
            "Read it again with NotebookRead, then edit it."
        ) from None
    return FileStamp.of_bytes(data)


def source_of(cell: Any) -> str:
    """Return a cell's source as one string.

    Args:
        cell: An nbformat cell.
    """
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _first_line(cell: Any) -> str:
    lines = source_of(cell).splitlines()
    first = cut(next((line for line in lines if line.strip()), ""), _FIRST_LINE_CHARS)
    more = len(lines) - 1
    return first + (f"  (+{more} lines)" if more > 0 else "")


def header(notebook: LoadedNotebook, shown_as: str, running: str | None) -> str:
    """Return the first line of a rendering: name, cell count, kernel, the running cell.

    Args:
        notebook: The notebook.
        shown_as: How its path is shown.
        running: The id of the cell that runs the agent, if known.
    """
    kernel = notebook.node.metadata.get("kernelspec", {}).get("name")
    text = f"Notebook {shown_as}: {len(notebook.cells)} cells" + (
        f", kernel {kernel}." if kernel else "."
    )
    if running and any(cell.get("id") == running for cell in notebook.cells):
        text += f" Cell {running} runs this agent: it cannot be edited."
    return text


THIS_CELL = "[This cell: it runs %%agent, and its output is this conversation.]"
"""What a rendering shows of the running agent cell's outputs (the live transcript's widget)."""


def render_overview(notebook: LoadedNotebook, running: str | None) -> list[str]:
    """Render one line per cell: index, id, type and first line (outputs counted).

    Args:
        notebook: The notebook.
        running: The id of the cell that runs the agent, if known.

    Returns:
        The lines.
    """
    lines = []
    for index, cell in enumerate(notebook.cells):
        outputs = len(cell.get("outputs", ())) if cell.get("id") != running else 0
        extra = f"  [{outputs} output{'s' if outputs != 1 else ''}]" if outputs else ""
        mark = "  [running: this agent]" if cell.get("id") == running else ""
        lines.append(
            f"{index:>4}  {cell.get('id')}  {cell.cell_type:<8}  {_first_line(cell)}{extra}{mark}"
        )
    return lines


def render_cell(
    cell: Any,
    index: int,
    running: str | None,
    outputs: bool,
    output_chars: int,
    images: ImageBudget | None = None,
) -> str:
    """Render one cell with its whole source and, optionally, its outputs (each cut).

    Args:
        cell: The nbformat cell.
        index: Its position.
        running: The id of the cell that runs the agent, if known: its outputs (the live
            transcript) are shown as :data:`THIS_CELL`.
        outputs: Include the outputs.
        output_chars: Characters of each output shown at most.
        images: Where image outputs go as image blocks (their place in the text named);
            without one, images are only named.
    """
    attributes = f'index="{index}" id="{cell.get("id")}" type="{cell.cell_type}"'
    if cell.cell_type == "code" and cell.get("execution_count") is not None:
        attributes += f' execution_count="{cell.execution_count}"'
    this_cell = cell.get("id") == running
    if this_cell:
        attributes += ' running="true"'
    parts = [f"<cell {attributes}>\n{source_of(cell)}\n</cell>"]
    if this_cell:
        if outputs and cell.get("outputs"):
            parts.append(THIS_CELL)
    elif outputs:
        parts.extend(render_outputs(cell.get("outputs", ()), output_chars, images, cell.get("id")))
    return "\n".join(parts)


def render_outputs(
    outputs: Any, output_chars: int, images: ImageBudget | None = None, cell_id: Any = None
) -> list[str]:
    """Render cell outputs for the model, each cut to ``output_chars``.

    Args:
        outputs: nbformat outputs.
        output_chars: Characters of each output shown at most.
        images: Where image outputs go as image blocks; without one, images are only named.
        cell_id: The cell's id, for notes about images left out.

    Returns:
        One ``<output>`` element per output.
    """
    parts = []
    for number, output in enumerate(outputs, 1):
        kind, text = _output_text(output, images, f"cell {cell_id}, output {number}")
        more = f"the whole output is cell {cell_id}'s output {number} (RunCode can print parts)"
        text = text_digest(text.rstrip("\n"), output_chars, more)
        parts.append(f'<output type="{kind}">\n{text}\n</output>')
    return parts


def _output_text(output: Any, images: ImageBudget | None, where: str) -> tuple[str, str]:
    """Return an output's kind and its text: plain text kept, images taken or named, other
    types (HTML) named."""
    kind = output.get("output_type", "unknown")
    if kind == "stream":
        return f"stream {output.get('name', '')}".strip(), _ANSI.sub(
            "", _joined(output.get("text"))
        )
    if kind == "error":
        trace = "\n".join(_ANSI.sub("", line) for line in output.get("traceback", ()))
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return "error", trace if head in trace else f"{head}\n{trace}".strip()
    data = output.get("data", {})
    image = images.take(data, where) if images is not None else None
    notes = [image] if image else []
    notes += [
        f"[{mime} output, {len(_joined(data[mime])):,} characters]"
        for mime in data
        if mime != "text/plain" and not (image and _is_binary(mime))
    ]
    text = _ANSI.sub("", _joined(data.get("text/plain", "")))
    return kind, "\n".join(part for part in (text, *notes) if part)


def _is_binary(mime: str) -> bool:
    return mime.startswith("image/") or mime == "application/pdf"


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(value)
    return value if isinstance(value, str) else str(value or "")


@dataclass(frozen=True)
class Rendering:
    """Cells rendered for the model within a character budget."""

    text: str
    """The cells, one after the other."""
    ids: tuple[str, ...]
    """Ids of the cells shown whole (they count as read)."""
    stopped_at: int | None
    """The index of the first cell left out for lack of room, or None."""


def render_cells(
    notebook: LoadedNotebook,
    indices: range,
    running: str | None,
    outputs: bool,
    output_chars: int,
    budget: int,
    images: ImageBudget | None = None,
) -> Rendering:
    """Render a range of cells whole, stopping before the cell that would pass the budget.

    The first cell is always shown, even past the budget, so that a reader makes progress.

    Args:
        notebook: The notebook.
        indices: The cells to render.
        running: The id of the cell that runs the agent, if known.
        outputs: Include outputs.
        output_chars: Characters of each output shown at most.
        budget: Characters of text at most.
        images: Where image outputs go as image blocks; without one, images are only named.
    """
    parts: list[str] = []
    ids: list[str] = []
    used = 0
    for index in indices:
        cell = notebook.cells[index]
        taken = len(images.blocks) if images is not None else 0
        text = render_cell(cell, index, running, outputs, output_chars, images)
        if parts and used + len(text) > budget:
            if images is not None:
                del images.blocks[taken:]
            return Rendering("\n".join(parts), tuple(ids), index)
        parts.append(text)
        ids.append(cell.get("id"))
        used += len(text) + 1
    return Rendering("\n".join(parts), tuple(ids), None)


LIVE_STAMP = FileStamp(-1, "")
"""The stamp of a notebook read from JupyterLab's live document, not from a file: it matches
no file, so it can never pass for a read of the file."""


class Node(dict):  # type: ignore[type-arg]
    """A part of a notebook (the notebook, a cell, an output) as nbformat's ``NotebookNode``
    is: a dict whose keys read and write as attributes too.

    The notebooks a front end or a live document sends are made of these, so reading them
    never imports nbformat: its import loads jsonschema, whose format checkers compile a
    grammar for seconds (the first read of the notebook JupyterLab shows took 6 to 10 s).
    """

    def __getattr__(self, key: str) -> Any:
        """Return the value of a key; a missing key is a missing attribute."""
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        """Set the value of a key."""
        self[key] = value

    def __delattr__(self, key: str) -> None:
        """Remove a key; a missing key is a missing attribute."""
        try:
            del self[key]
        except KeyError:
            raise AttributeError(key) from None


def as_nodes(value: Any) -> Any:
    """Copy JSON data with every dict made a :class:`Node` (as ``nbformat.from_dict`` does).

    Args:
        value: Dicts, lists and plain values.
    """
    if isinstance(value, dict):
        return Node({key: as_nodes(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return [as_nodes(item) for item in value]
    return value


def new_cell(kind: str, source: str, existing: Container[str] = (), **fields: Any) -> Node:
    """Make a cell as nbformat 4.5's ``new_*_cell`` does, with an id no other cell has.

    Args:
        kind: ``code``, ``markdown`` or ``raw``.
        source: Its source.
        existing: The ids its id must differ from.
        **fields: Fields that replace the new cell's (``id``, ``metadata``, ...).
    """
    cell = Node(id=_cell_id(existing), cell_type=kind, metadata=Node(), source=source)
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    cell.update(as_nodes(fields))
    return cell


def _cell_id(existing: Container[str]) -> str:
    """A new cell id as nbformat makes them (8 hex digits), unlike any in ``existing``."""
    while (cell_id := uuid.uuid4().hex[:8]) in existing:
        pass
    return cell_id


def notebook_from_dict(path: Path, data: dict[str, Any]) -> LoadedNotebook:
    """Build a notebook from its JSON form (a front end's or a live document's), not from
    its file; nbformat is not imported (see :class:`Node`).

    Cells without ids get ``cell-<index>`` ids, as :func:`load_notebook` gives them.

    Args:
        path: The notebook's resolved path.
        data: The notebook as nbformat 4 JSON (``cells``, ``metadata``, ``nbformat``, ...).

    Returns:
        The notebook, stamped :data:`LIVE_STAMP`.
    """
    node = as_nodes(data)
    node.setdefault("nbformat_minor", 4)  # no minor said: cells without ids get them
    node.setdefault("cells", [])
    _give_cell_ids(node)
    return LoadedNotebook(path=path, node=node, stamp=LIVE_STAMP)


def cell_digest(cell: Any) -> str:
    """Return a digest of what the model reads of a cell: its type and its source.

    Args:
        cell: An nbformat cell.
    """
    text = f"{cell.get('cell_type')}\0{source_of(cell)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CellEdit:
    """One change to a notebook's cells (what NotebookEdit decided), not yet made."""

    action: Literal["insert", "delete", "source", "cell", "outputs"]
    """``insert`` puts ``cell`` at ``index``; ``delete`` removes the cell at ``index``;
    ``source`` sets its source to ``source``; ``cell`` replaces it by ``cell`` (a new type);
    ``outputs`` sets its outputs and execution count (a code cell that ran, or runs)."""
    index: int
    """The position of the cell, in the cells before the change."""
    cell: Any = None
    """The nbformat cell to insert or to put in the old one's place."""
    source: str = ""
    """The new source, for ``source``."""
    outputs: tuple[dict[str, Any], ...] = ()
    """The new outputs (nbformat dicts), for ``outputs``."""
    execution_count: int | None = None
    """The new execution count, for ``outputs``."""
    running: bool = False
    """For ``outputs``: the cell is running now (shown as ``[*]``), its outputs still to come."""
    mark: dict[str, Any] | None = None
    """For ``source``: the cell's ``nbagent`` metadata to set (``{}`` removes it; None leaves
    it): the mark of a cell the agent changed (:mod:`nbagent.tools.checkpoints.marks`)."""


def apply_edit(notebook: LoadedNotebook, edit: CellEdit) -> None:
    """Make one of NotebookEdit's changes (insert, delete, source, cell) to a notebook in memory;
    a run's outputs reach the user through :meth:`Document.show_outputs` instead.

    Args:
        notebook: The notebook.
        edit: The change.
    """
    if edit.action == "insert":
        notebook.cells.insert(edit.index, edit.cell)
    elif edit.action == "delete":
        del notebook.cells[edit.index]
    elif edit.action == "source":
        cell = notebook.cells[edit.index]
        cell.source = edit.source
        if edit.mark is not None:
            set_mark(cell, edit.mark)
    else:
        notebook.cells[edit.index] = edit.cell


def set_mark(cell: Any, mark: dict[str, Any]) -> None:
    """Set a cell's ``nbagent`` metadata (the agent's mark), or remove it (``{}``)."""
    metadata = cell.setdefault("metadata", Node())
    if mark:
        metadata["nbagent"] = as_nodes(mark)
    else:
        metadata.pop("nbagent", None)


class Document(Protocol):
    """A notebook as the user sees it, not its file: the front end's model or the live
    document (:class:`~nbagent.tools.notebook.frontend.FrontEndDocument`,
    :class:`~nbagent.tools.notebook.live.LiveDocument`)."""

    path: Path
    """The notebook's resolved path."""

    def read(self, outputs: bool = True) -> LoadedNotebook:
        """Return the notebook as it is now (stamped :data:`LIVE_STAMP`); without
        ``outputs``, each output may be only its ``output_type``."""
        ...

    def edit(self, change: Callable[[LoadedNotebook], tuple[CellEdit, T]]) -> T:
        """Decide a change from the notebook as it is now and make it, at once, where the user
        sees it; ``change`` refuses by raising :class:`~nbagent.core.errors.ToolError`."""
        ...

    def show_outputs(
        self,
        cell_id: str,
        outputs: tuple[dict[str, Any], ...],
        execution_count: int | None,
        running: bool = False,
    ) -> None:
        """Show a code cell's outputs and execution count, or that it runs (``[*]``)."""
        ...
