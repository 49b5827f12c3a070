"""The execution record: what the kernel actually ran, cell by cell, the person's and the agent's.

:class:`ExecutionRecord` is pure data, kept by the kernel's own events
(:mod:`nbagent.jupyter.kernel_state` registers IPython's ``pre_run_cell`` and ``post_run_cell``
callbacks) and read by the tools (``NotebookState``, ``NotebookRun``'s ``"stale"``) and by the
reminders that tell the model what changed in the kernel between its turns. Each run is a
:class:`CellExecution`: the cell's id as the front end sent it, the execution count, the source
that ran, when it started, how long it took, how it ended and the names it bound or rebound.

The record is bounded: the last :data:`RUNS` runs, the last run of :data:`CELLS` cells, and
:data:`SOURCE_CHARS` characters of each source (a digest of the whole source says whether a
cell changed since it ran).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

RUNS = 1000
"""Runs the record keeps, the last ones."""
CELLS = 2000
"""Cells whose last run the record keeps, those run last."""
SOURCE_CHARS = 2000
"""Characters of a run's source the record keeps (the digest is of the whole source)."""
MESSAGE_CHARS = 300
"""Characters of an error's message the record keeps."""
NAMES = 50
"""Names bound (or deleted) by one run the record keeps."""

By = Literal["person", "agent"]
"""Who ran a cell: the person (the front end's request) or the agent (``NotebookRun``)."""


def source_digest(source: str) -> str:
    """A short digest of a cell's source: equal digests mean the same source.

    Args:
        source: The source.
    """
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True)
class CellExecution:
    """One run of a cell in the kernel."""

    number: int
    """The run's place in the record (1, 2, ...): later runs have larger numbers."""
    cell_id: str | None
    """The cell's id as the front end sent it (``cellId`` in the request's metadata), or None."""
    execution_count: int | None
    """The execution count the cell showed, or None."""
    source: str
    """The source that ran (its first :data:`SOURCE_CHARS` characters)."""
    digest: str
    """The digest of the whole source (:func:`source_digest`)."""
    started: float
    """When it started (seconds since the epoch)."""
    duration: float
    """How long it ran, in seconds."""
    error: str | None
    """The name of the exception it ended with (``KeyboardInterrupt`` when stopped), or None."""
    message: str
    """The exception's message (empty when none)."""
    bound: tuple[str, ...]
    """The names it bound or rebound in the user's namespace."""
    deleted: tuple[str, ...]
    """The names it deleted from the user's namespace."""
    by: By
    """Who ran it."""
    agent_cell: bool = False
    """Whether it was an ``%%agent`` cell."""

    @property
    def interrupted(self) -> bool:
        """Whether it was stopped (Ctrl-C, the kernel's interrupt, a time limit)."""
        return self.error == "KeyboardInterrupt"

    @property
    def outcome(self) -> str:
        """How it ended, in a few words: ``ok``, ``interrupted``, ``ValueError: bad``."""
        if self.error is None:
            return "ok"
        if self.interrupted:
            return "interrupted"
        return f"{self.error}: {self.message}" if self.message else self.error


@dataclass(frozen=True, slots=True)
class Attribution:
    """What the agent says of a run it starts itself (the kernel's events cannot know it)."""

    cell_id: str
    """The cell it runs."""
    execution_count: int | None
    """The count its outputs carry."""


class ExecutionRecord:
    """The runs of the kernel's cells, bounded, safe to read from any thread.

    Args:
        kernel_started: When the kernel started (seconds since the epoch); now by default.
        runs: Runs kept at most.
        cells: Cells whose last run is kept at most.
    """

    def __init__(
        self, kernel_started: float | None = None, runs: int = RUNS, cells: int = CELLS
    ) -> None:
        self.kernel_started = time.time() if kernel_started is None else kernel_started
        """When the kernel started (seconds since the epoch)."""
        self.recording_since = time.time()
        """When the record began (cells run before were not seen)."""
        self._runs: deque[CellExecution] = deque(maxlen=runs)
        self._cells: OrderedDict[str, CellExecution] = OrderedDict()
        self._cell_limit = cells
        self._last_error: CellExecution | None = None
        self._number = 0
        self._attributions: list[Attribution] = []
        self._lock = threading.Lock()

    @property
    def last_number(self) -> int:
        """The number of the last run recorded (0 before any)."""
        return self._number

    @property
    def last_error(self) -> CellExecution | None:
        """The last run that ended with an exception, if any."""
        return self._last_error

    def add(
        self,
        *,
        cell_id: str | None,
        execution_count: int | None,
        source: str,
        started: float,
        duration: float,
        error: BaseException | None,
        bound: tuple[str, ...] = (),
        deleted: tuple[str, ...] = (),
        by: By = "person",
    ) -> CellExecution:
        """Record a run that ended.

        Args:
            cell_id: The cell's id, or None when unknown.
            execution_count: Its execution count, or None.
            source: The whole source that ran.
            started: When it started (seconds since the epoch).
            duration: How long it ran, in seconds.
            error: The exception it ended with, or None.
            bound: The names it bound or rebound.
            deleted: The names it deleted.
            by: Who ran it.

        Returns:
            The run as recorded.
        """
        message = "" if error is None else str(error)
        with self._lock:
            self._number += 1
            run = CellExecution(
                number=self._number,
                cell_id=cell_id,
                execution_count=execution_count,
                source=source[:SOURCE_CHARS],
                digest=source_digest(source),
                started=started,
                duration=duration,
                error=None if error is None else type(error).__name__,
                message=message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS],
                bound=bound[:NAMES],
                deleted=deleted[:NAMES],
                by=by,
                agent_cell=source.lstrip().startswith("%%agent"),
            )
            self._runs.append(run)
            if cell_id is not None:
                self._cells[cell_id] = run
                self._cells.move_to_end(cell_id)
                if len(self._cells) > self._cell_limit:
                    self._cells.popitem(last=False)
            if error is not None:
                self._last_error = run
        return run

    def runs(self, since: int = 0) -> list[CellExecution]:
        """The runs kept whose number is above ``since``, oldest first.

        Args:
            since: A run's number (0: all kept).
        """
        with self._lock:
            if since <= 0:
                return list(self._runs)
            return [run for run in self._runs if run.number > since]

    def last_run(self, cell_id: str) -> CellExecution | None:
        """The last run of a cell kept, or None when it did not run since the record began.

        Args:
            cell_id: The cell's id.
        """
        with self._lock:
            return self._cells.get(cell_id)

    @contextmanager
    def attributed(self, cell_id: str, execution_count: int | None) -> Iterator[None]:
        """Say that the runs starting inside the block are the agent's run of a cell.

        Args:
            cell_id: The cell the agent runs.
            execution_count: The count its outputs carry.
        """
        attribution = Attribution(cell_id, execution_count)
        with self._lock:
            self._attributions.append(attribution)
        try:
            yield
        finally:
            with self._lock:
                self._attributions.remove(attribution)

    def attribution(self) -> Attribution | None:
        """The agent's run going on now, if any (the innermost)."""
        with self._lock:
            return self._attributions[-1] if self._attributions else None
