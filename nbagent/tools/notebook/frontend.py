"""A notebook as a front end shows it, read and changed through nbagent's JupyterLab extension.

:class:`FrontEndDocument` has the interface of :class:`~nbagent.tools.notebook.live.LiveDocument`
(``path``, ``read``, ``edit``), so the notebook tools treat both alike. A read returns the
notebook model JupyterLab holds, unsaved typing included. An edit is planned on a fresh read
and sent with a guard (the cell count and the cells it was planned on, with their sources); the
extension makes it only if the guard still holds, in one step of the browser's event loop, so
nothing the user types can come in between. When the user changed those cells in the
meantime, the edit is planned again on a new read (:data:`TRIES` times at most).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nbagent.core.errors import ToolError
from nbagent.frontend.channel import FrontEnd, FrontEndChannel, FrontEndError
from nbagent.tools.notebook.file import CellEdit, LoadedNotebook, notebook_from_dict, source_of

T = TypeVar("T")

TRIES = 3
"""Times an edit is planned and sent before it is given up (the user kept changing cells)."""


@dataclass(frozen=True)
class FrontEndState:
    """What a front end said of its notebook beside the cells."""

    dirty: bool
    """Whether it has changes not yet saved."""
    saved: str | None
    """When the file was last saved (ISO 8601, as the server said), if known."""


class FrontEndDocument:
    """One notebook as one front end shows it.

    Args:
        channel: The channel to the front ends.
        front_end: The front end that shows the notebook.
        path: The notebook's resolved path.
    """

    def __init__(self, channel: FrontEndChannel, front_end: FrontEnd, path: Path) -> None:
        self.path = path
        """The notebook's resolved path."""
        self.front_end = front_end
        """The front end that shows it."""
        self.state = FrontEndState(dirty=False, saved=None)
        """What the last read said of unsaved changes."""
        self._channel = channel

    def read(self, outputs: bool = True) -> LoadedNotebook:
        """Return the notebook as the front end shows it now.

        Args:
            outputs: Include the outputs' data; without, each output is only its
                ``output_type`` (what planning an edit needs, at a fraction of the bytes).

        Raises:
            ToolError: The front end did not answer.
        """
        try:
            answer = self._channel.request(self.front_end, "read", light=not outputs)
        except FrontEndError as exc:
            raise ToolError(
                f"{self.front_end.app} did not show {self.path.name} ({exc}). Try again in a "
                "moment."
            ) from exc
        self.state = FrontEndState(bool(answer.get("dirty")), answer.get("saved"))
        return notebook_from_dict(self.path, answer["notebook"])

    def edit(self, change: Callable[[LoadedNotebook], tuple[CellEdit, T]]) -> T:
        """Decide a change from the notebook as the front end shows it, and make it there.

        Args:
            change: Given the notebook, returns the change and what :meth:`edit` returns; it
                refuses by raising :class:`~nbagent.core.errors.ToolError`.

        Returns:
            What ``change`` returned beside the change.

        Raises:
            ToolError: ``change`` refused, the front end did not answer, or the user kept
                changing the same cells.
        """
        for _ in range(TRIES):
            notebook = self.read(outputs=False)
            cells = list(notebook.cells)  # as planned on: ``change`` may change the notebook
            edit, result = change(notebook)
            try:
                answer = self._channel.request(
                    self.front_end, "edit", edit=edit_json(edit), guard=guard(cells, edit)
                )
            except FrontEndError as exc:
                raise ToolError(
                    f"The edit of {self.path.name} got no answer from {self.front_end.app} "
                    f"({exc}); it may or may not have been made. Read the notebook again with "
                    "NotebookRead before editing it."
                ) from exc
            if not answer.get("changed"):
                return result
        raise ToolError(
            f"{self.path.name} kept changing in {self.front_end.app} while the edit was made "
            f"({TRIES} tries). Read it again with NotebookRead, then edit it."
        )

    def show_outputs(
        self,
        cell_id: str,
        outputs: tuple[dict[str, Any], ...],
        execution_count: int | None,
        running: bool = False,
    ) -> None:
        """Show a code cell's outputs and execution count, or that it runs (``[*]``).

        The cell is found by id where the front end is, so no read comes first; the start of a
        run is not waited for (the run goes on at once), its outputs are.

        Args:
            cell_id: The cell.
            outputs: Its outputs (nbformat dicts); none while it runs.
            execution_count: Its execution count.
            running: Whether it runs now.

        Raises:
            ToolError: The front end did not answer, or the cell is gone.
        """
        edit = {
            "action": "outputs",
            "cell_id": cell_id,
            "outputs": list(outputs),
            "execution_count": execution_count,
            "running": running,
        }
        try:
            answer = self._channel.request(
                self.front_end, "edit", wait=not running, edit=edit, guard=None
            )
        except FrontEndError as exc:
            raise ToolError(f"{self.front_end.app} did not show the outputs ({exc})") from exc
        if answer.get("missing"):
            raise ToolError(f"cell {cell_id} is no longer in {self.path.name}")


def edit_json(edit: CellEdit) -> dict[str, Any]:
    """The change as the extension takes it.

    Args:
        edit: The change.
    """
    data: dict[str, Any] = {"action": edit.action, "index": edit.index, "source": edit.source}
    if edit.cell is not None:
        data["cell"] = {**edit.cell, "source": source_of(edit.cell)}
    if edit.mark is not None:
        data["mark"] = edit.mark
    return data


def guard(cells: list[Any], edit: CellEdit) -> dict[str, Any]:
    """What must still hold in the front end for the change to be made as planned.

    The cell count, and the cell the change is about (its id and its source), or for an insert
    the cell it follows.

    Args:
        cells: The cells the change was planned on.
        edit: The change.
    """
    checked: list[tuple[int, str, str | None]] = []
    if edit.action == "insert":
        if edit.index > 0:
            checked.append((edit.index - 1, cells[edit.index - 1].id, None))
    else:
        cell = cells[edit.index]
        checked.append((edit.index, cell.id, source_of(cell)))
    return {"length": len(cells), "cells": checked}
