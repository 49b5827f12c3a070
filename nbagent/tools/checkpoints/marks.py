"""Marks on the cells the agent inserted or changed, in their metadata, until a person edits them.

A marked cell's metadata holds ``"nbagent": {"changed": "inserted" | "edited", "source": H}``,
where ``H`` is :func:`source_mark` of the source the agent left. nbagent's JupyterLab extension
draws the mark, and removes it once the cell's source is no longer the agent's (a person
edited it); any other front end keeps it in the metadata. An undo puts the cell's metadata
back as it was, mark included.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbagent.tools.notebook.file import CellEdit, as_nodes

MARK_KEY = "nbagent"
"""The cell metadata key of the mark."""


def source_mark(source: str) -> str:
    """A short hash of a source (FNV-1a, 32 bits, over its code points), as the extension
    computes it to tell whether a person changed the cell since.

    Args:
        source: The cell's source.
    """
    value = 0x811C9DC5
    for char in source:
        value = ((value ^ ord(char)) * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def mark(changed: str, source: str) -> dict[str, str]:
    """The mark of a cell the agent left with this source.

    Args:
        changed: ``inserted`` or ``edited``.
        source: The source it left.
    """
    return {"changed": changed, "source": source_mark(source)}


def marked(edit: CellEdit) -> CellEdit:
    """The edit with its cell marked as the agent's (insert, source, cell); others as they are.

    Args:
        edit: NotebookEdit's planned edit.
    """
    if edit.action == "source":
        return dataclasses.replace(edit, mark=mark("edited", edit.source))
    if edit.action in ("insert", "cell") and edit.cell is not None:
        cell = as_nodes(dict(edit.cell))
        metadata = cell.setdefault("metadata", as_nodes({}))
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        metadata[MARK_KEY] = mark("inserted" if edit.action == "insert" else "edited", source)
        return dataclasses.replace(edit, cell=cell)
    return edit


def mark_of(cell: Any) -> dict[str, Any]:
    """A cell's mark, or ``{}`` when it has none (what puts a cell's mark back as it was)."""
    metadata = cell.get("metadata") or {}
    found = metadata.get(MARK_KEY) if isinstance(metadata, dict) else None
    return dict(found) if isinstance(found, dict) else {}
