"""Kernel changes told to the model: a restart, cells the person ran, interrupts.

At the start of each ``%%agent`` turn, :class:`KernelChanges` reads the execution record
(:mod:`nbagent.tools.notebook.record`) for what happened since the agent's last turn in this
kernel, and says it in one short ``<system-reminder>`` text that goes into the new user
message, after the prompt: the earlier turns are never edited, so the prompt cache's prefix
stays valid (as the deferred-tool announcements of :mod:`nbagent.catalogue.delta`).

- The first turn in this kernel of a conversation that had turns before (resumed after a
  restart): the kernel restarted, its variables are gone; the cells that ran since.
- Later turns: the cells the person ran since the last turn, with their outcomes
  (interrupted ones included); nothing when the person ran none.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from nbagent.core.text import one_line, plural
from nbagent.tools.notebook.record import CellExecution, ExecutionRecord

RUNS_TOLD = 12
"""Runs one reminder lists at most (the last ones)."""

OUTCOME_CHARS = 200
"""Characters of a run's outcome (its error's message) one reminder line quotes at most."""

_TAG = re.compile(r"<(?=/?[A-Za-z])")


class KernelChanges:
    """What changed in the kernel since the agent's last turn, as a reminder.

    Args:
        record: The kernel's execution record.
    """

    def __init__(self, record: ExecutionRecord) -> None:
        self.record = record
        self._seen: int | None = None
        """The last run number the model was told of; None before this kernel's first turn."""
        self._told: tuple[int | None, str] | None = None
        """The last reminder and what was seen before it: told again when the request that
        carried it failed (the agent then takes its prompt back out of the history)."""

    def __call__(self, history: Sequence[Any]) -> str | None:
        """The reminder for a turn starting now, or None when there is nothing to tell.

        Args:
            history: The conversation before the new prompt.
        """
        if self._told is not None and not _in_history(history, self._told[1]):
            self._seen = self._told[0]
        first, since = self._seen is None, self._seen or 0
        before, self._seen, self._told = self._seen, self.record.last_number, None
        lines = []
        if first and history:
            lines.append(
                f"The kernel restarted since this conversation's last turn (it started at "
                f"{_clock(self.record.kernel_started)}): every variable, import and definition "
                "from before is gone until cells that make them run again."
            )
        elif first:
            return None
        runs = [
            r
            for r in self.record.runs(since)
            if r.by == "person" and not r.agent_cell and not nbagent_only(r.source)
        ]
        if runs:
            who = "" if first and history else " by the person"
            lines.append(f"Cells run{who} since your last turn ({plural(len(runs), 'run')}):")
            if len(runs) > RUNS_TOLD:
                lines.append(f"- ... {len(runs) - RUNS_TOLD} earlier")
            lines.extend(f"- {run_line(run)}" for run in runs[-RUNS_TOLD:])
        if not lines:
            return None
        if any(r.interrupted for r in runs):
            lines.append("An interrupted cell stopped part way: what it was making may be partial.")
        lines.append("NotebookState shows every cell's state now.")
        text = "<system-reminder>\n" + "\n".join(lines) + "\n</system-reminder>"
        self._told = (before, text)
        return text


NBAGENT_LINES = ("%agent", "%load_ext nbagent", "%reload_ext nbagent", "%config NbAgent", "%mcp")
"""Starts of the lines of a cell that only works nbagent itself (not told to the model)."""


def nbagent_only(source: str) -> bool:
    """Whether a cell's every line is one of nbagent's own magics (``%agent resume``, ...).

    Args:
        source: The cell's source.
    """
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith(NBAGENT_LINES) for line in lines)


def run_line(run: CellExecution) -> str:
    """One run in a line: cell, count, outcome, duration, names bound.

    Args:
        run: The run.
    """
    where = f"cell {run.cell_id}" if run.cell_id else f"code {one_line(run.source, 40)!r}"
    count = f" In [{run.execution_count}]" if run.execution_count is not None else ""
    outcome = one_line(run.outcome, OUTCOME_CHARS)
    line = inert(f"{where}{count}: {outcome} after {run.duration:.2f} s")
    if run.bound:
        line += f"; bound {', '.join(run.bound[:8])}" + (" ..." if len(run.bound) > 8 else "")
    if run.deleted:
        line += f"; deleted {', '.join(run.deleted[:8])}"
    return line


def inert(text: str) -> str:
    """A text quoted in a reminder with its tags made inert (``<`` before a tag's name
    becomes ``‹``): a cell's source or error message cannot close nbagent's reminder and open
    one of its own.

    Args:
        text: The quoted text.
    """
    return _TAG.sub("\u2039", text)


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(moment))


def _in_history(history: Sequence[Any], text: str, last: int = 50) -> bool:
    """Whether one of the last user messages carries the text (the request went out)."""
    for message in history[-last:]:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("text") == text for b in content
        ):
            return True
    return False
