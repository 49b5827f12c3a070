"""NotebookRun's session-wide settings, and the runs queued for after the agent's turn.

A cell that takes longer than a tool call should wait (training a model) is queued with
``NotebookRun(cell_id, when="after_turn")``: the ``%%agent`` cell ends, the front end runs the
queued cell as a normal cell (outputs live, Ctrl-C as usual), and when it finishes a new
``%%agent --after CELL`` cell below goes on with the conversation, its outputs in hand
(:mod:`nbagent.jupyter.queued_runs`). The person turns the going on off with
``c.NbAgent.continue_after_run = False``, and sets the longest time limit a run may be given
with ``c.NbAgent.max_run_seconds``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from nbagent.core.errors import ToolError

When = Literal["now", "after_turn"]
"""When NotebookRun runs a cell: now, or queued for after the agent's turn."""

MAX_RUN_SECONDS = 3600.0
"""The longest time limit NotebookRun may be given unless the person sets another."""


@dataclass(frozen=True)
class QueuedRun:
    """A cell to run once the agent's turn ends."""

    cell_id: str
    """The cell."""
    source: str
    """Its source when it was queued (the permission question showed it)."""


@dataclass
class RunQueue:
    """What NotebookRun may do beyond one run now, and what it queued.

    The session keeps the settings up to date (``c.NbAgent.max_run_seconds``,
    ``c.NbAgent.continue_after_run``); the queue is emptied as the ``%%agent`` cell ends.
    """

    max_seconds: float = MAX_RUN_SECONDS
    """The longest time limit a run may be given, in seconds."""
    continue_after: bool = True
    """Whether a new ``%%agent`` cell goes on with the conversation after a queued run."""
    queued: list[QueuedRun] = field(default_factory=list)
    """The runs queued in this turn, in order."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def limit(self, asked: float | None, default: float) -> float:
        """The time limit of a run: the one asked, within the maximum, else the default.

        Args:
            asked: Seconds the model asked for, or None.
            default: Seconds when it asked for none.

        Raises:
            ToolError: The limit asked is not positive, or above the maximum.
        """
        if asked is None:
            return min(default, self.max_seconds)
        if isinstance(asked, bool) or not isinstance(asked, (int, float)):
            raise ToolError(f"timeout must be a number of seconds, not {asked!r}.")
        if asked <= 0:
            raise ToolError("timeout must be more than 0 seconds.")
        if asked > self.max_seconds:
            raise ToolError(
                f"timeout {asked:g} s is above the longest the person allows "
                f"(c.NbAgent.max_run_seconds = {self.max_seconds:g}). Ask for at most "
                f"{self.max_seconds:g} s, or queue the run for after your turn "
                '(when="after_turn"): it then runs as a normal cell, with no time limit.'
            )
        return asked

    def add(self, run: QueuedRun) -> int:
        """Queue a run; returns how many are queued now.

        Raises:
            ToolError: The cell is queued already.
        """
        with self._lock:
            if any(q.cell_id == run.cell_id for q in self.queued):
                raise ToolError(f"Cell {run.cell_id} is queued already; it runs once.")
            self.queued.append(run)
            return len(self.queued)

    def take(self) -> list[QueuedRun]:
        """The runs queued, emptying the queue."""
        with self._lock:
            taken, self.queued = self.queued, []
        return taken
