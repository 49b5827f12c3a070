"""A running cell's outputs shown in the notebook as they come, while NotebookRun waits.

:class:`OutputStream` is told of every change to the run's outputs (on the kernel's main
thread, inside the cell's ``print``: it only notes the change) and a thread of its own sends
the outputs so far to the cell where the person sees it, at most every :data:`INTERVAL`
seconds, with the cell still shown running (``[*]``). A training loop's progress is so seen
in its cell, not only when the run ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from nbagent.core.secrets import get_logger
from nbagent.tools.notebook.file import Document

if TYPE_CHECKING:
    from nbagent.tools.context import ToolContext

logger = get_logger("nbagent.tools.notebook.streaming")

INTERVAL = 0.5
"""Seconds between two updates of the cell at least."""


class OutputStream:
    """Sends a running cell's outputs to its document as they change.

    Args:
        document: Where the person sees the notebook.
        cell_id: The running cell.
        execution_count: The count it shows.
        interval: Seconds between two updates at least.
    """

    def __init__(
        self,
        document: Document,
        cell_id: str,
        execution_count: int | None,
        interval: float = INTERVAL,
    ) -> None:
        self.document = document
        self.cell_id = cell_id
        self.execution_count = execution_count
        self.interval = interval
        self.sent = 0
        """Updates sent so far."""
        self._outputs: list[dict[str, Any]] | None = None
        self._changed = threading.Event()
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._send_changes, name="nbagent-output-stream", daemon=True
        )

    def __enter__(self) -> OutputStream:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._stopped.set()
        self._changed.set()
        self._thread.join(timeout=5)

    def changed(self, outputs: list[dict[str, Any]]) -> None:
        """Note that the run's outputs changed (cheap: called on every write of the cell).

        Args:
            outputs: The run's outputs list (read, never changed, by the sending thread).
        """
        self._outputs = outputs
        self._changed.set()

    def _send_changes(self) -> None:
        while True:
            self._changed.wait()
            if self._stopped.is_set():
                return
            self._changed.clear()
            outputs = self._outputs
            if outputs is not None:
                self._send(outputs)
            self._stopped.wait(self.interval)

    def _send(self, outputs: list[dict[str, Any]]) -> None:
        shown = tuple(
            {k: v for k, v in dict(o).items() if not k.startswith("_")} for o in list(outputs)
        )
        try:
            self.document.show_outputs(self.cell_id, shown, self.execution_count, running=True)
            self.sent += 1
        except Exception:  # noqa: BLE001 - the run goes on; its end shows the outputs
            logger.warning("outputs of cell %s not streamed", self.cell_id, exc_info=True)


@contextmanager
def streamed(
    context: ToolContext, document: Document | None, cell_id: str, execution_count: int | None
) -> Iterator[Callable[[list[dict[str, Any]]], None] | None]:
    """Around the agent's run of a cell: its outputs streamed to the document (when there is
    one) and its runs recorded as the agent's, of that cell.

    Args:
        context: The tools' context (its execution record, if any).
        document: Where the person sees the notebook, or None.
        cell_id: The cell run.
        execution_count: The count its outputs carry.

    Yields:
        What to call when the outputs change (None without a document).
    """
    record = context.record
    attributed = (
        record.attributed(cell_id, execution_count) if record is not None else nullcontext()
    )
    with attributed:
        if document is None:
            yield None
            return
        with OutputStream(document, cell_id, execution_count) as stream:
            yield stream.changed
