"""What a checkpoint holds: each change one ``%%agent`` cell (or one undo) made.

A :class:`Change` is one cell of a notebook or one file, before and after: a cell as nbformat
JSON (None when it did not exist before, or no longer exists after), a file as the digest of its
bytes in the store (None when the file did not exist). A :class:`Checkpoint` is the changes of one
``%%agent`` cell, in the order they were made, or the changes one undo made (so that an undo can
itself be undone: a redo).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from nbagent.core.text import plural

ChangeKind = Literal["cell", "file"]
CheckpointKind = Literal["cell", "undo"]


def cell_mark(cell: Any) -> str:
    """What tells whether a cell is still as a change left it: its type, source and execution
    count (a person typing in it, or running it, changes the mark; its metadata does not).

    Args:
        cell: An nbformat cell (a dict).
    """
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    count = cell.get("execution_count")
    text = json.dumps([cell.get("cell_type"), source, count if count is not None else None])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Change:
    """One cell of a notebook, or one file, before and after a change."""

    kind: ChangeKind
    """``cell`` or ``file``."""
    path: str
    """The notebook's or the file's resolved path."""
    tool: str
    """The tool that made it (``NotebookEdit``, ``NotebookRun``, ``Edit``, ``Write``, ``undo``)."""
    call_id: str = ""
    """The tool call's id (its card's Undo button names it), when known."""
    cell_id: str = ""
    """The cell's id (a cell change)."""
    before: Any = None
    """The cell (nbformat JSON) or the file's content digest before; None: it did not exist."""
    after: Any = None
    """The cell or the file's content digest after; None: it no longer exists."""
    index: int = 0
    """The cell's position before the change (where a deleted cell goes back)."""
    previous: str | None = None
    """The id of the cell before it, before the change (where a deleted cell goes back)."""

    def inverse(self, tool: str = "undo") -> Change:
        """The change that takes the after state back to the before state."""
        return dataclasses.replace(
            self, tool=tool, call_id="", before=self.after, after=self.before
        )

    @property
    def action(self) -> str:
        """``inserted``, ``deleted``, ``ran``, ``edited``; ``created``, ``removed``, ``edited``."""
        if self.before is None:
            return "inserted" if self.kind == "cell" else "created"
        if self.after is None:
            return "deleted" if self.kind == "cell" else "removed"
        if self.kind == "cell" and _outputs_only(self.before, self.after):
            return "ran"
        return "edited"

    def to_json(self) -> dict[str, Any]:
        """The change as JSON."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Change:
        """Read a change written by :meth:`to_json`."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})


def _outputs_only(before: Any, after: Any) -> bool:
    """Whether two states of a cell differ in outputs or execution count only."""
    same = all(before.get(key) == after.get(key) for key in ("cell_type", "source"))
    ran = any(before.get(key) != after.get(key) for key in ("outputs", "execution_count"))
    return same and ran


@dataclass
class Checkpoint:
    """The changes of one ``%%agent`` cell, or of one undo, in the order they were made."""

    number: int
    """Its number, as ``%agent checkpoints`` lists it and ``%agent rewind N`` takes it."""
    kind: CheckpointKind
    """``cell`` (an ``%%agent`` cell) or ``undo`` (an undo, a rewind or an Undo button)."""
    started: float
    """When it began (seconds since the epoch)."""
    cell_id: str | None = None
    """The ``%%agent`` cell's id, when the front end sent it."""
    prompt: str = ""
    """The prompt's first line (a cell), or what was undone (an undo)."""
    conversation: int | None = None
    """The conversation's length (messages) before the cell ran, to cut it back to."""
    conversation_id: str | None = None
    """The saved conversation's id then."""
    conversation_mark: str = ""
    """A digest of the conversation's last message before the cell (it must still be there)."""
    changes: list[Change] = field(default_factory=list)
    """The changes, in the order they were made."""
    untracked: list[str] = field(default_factory=list)
    """Tools that ran and whose changes are not tracked (Bash, RunCode), once each."""
    undone_by: int | None = None
    """The number of the undo that undid it, while undone."""
    undoes: list[int] = field(default_factory=list)
    """An undo: the checkpoints it undid."""
    left: list[str] = field(default_factory=list)
    """An undo: what it left as it was, and why."""

    def summary(self) -> str:
        """What changed, in a few words: ``3 cells edited, 1 inserted, 2 files``."""
        cells: dict[str, set[str]] = {}
        files: set[str] = set()
        for change in self.changes:
            if change.kind == "file":
                files.add(change.path)
            else:
                cells.setdefault(change.action, set()).add(f"{change.path}#{change.cell_id}")
        parts = []
        for action in ("edited", "inserted", "deleted", "ran"):
            count = len(cells.get(action, ()))
            if count:
                noun = plural(count, "cell") if not parts else str(count)
                parts.append(f"{noun} {action}")
        if files:
            parts.append(plural(len(files), "file"))
        return ", ".join(parts) or "nothing changed"

    def to_json(self) -> dict[str, Any]:
        """The checkpoint as JSON."""
        data = dataclasses.asdict(self)
        data["changes"] = [change.to_json() for change in self.changes]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        """Read a checkpoint written by :meth:`to_json`."""
        names = {f.name for f in dataclasses.fields(cls)}
        fields = {key: value for key, value in data.items() if key in names}
        fields["changes"] = [Change.from_json(change) for change in data.get("changes", [])]
        return cls(**fields)

    def blobs(self) -> set[str]:
        """The digests of the file contents its changes name."""
        return {
            digest
            for change in self.changes
            if change.kind == "file"
            for digest in (change.before, change.after)
            if isinstance(digest, str)
        }
