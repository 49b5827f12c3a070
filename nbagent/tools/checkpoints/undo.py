"""The undo operations: undo checkpoints (``%agent undo``, ``%agent rewind``), redo, one call.

Each operation restores through :func:`~nbagent.tools.checkpoints.restore.restore`, keeps what it
did as a checkpoint of kind ``undo`` (so that undoing it is a redo), and leaves a note for the
model's next turn saying what was undone, what was left and what no checkpoint holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.tools.checkpoints.model import Change, Checkpoint
from nbagent.tools.checkpoints.recording import CheckpointLog
from nbagent.tools.checkpoints.restore import Outcome, restore
from nbagent.tools.context import ToolContext

UNTRACKED_NOTE = (
    "What Bash commands and RunCode did (files they wrote, variables they set) is not undone: "
    "no checkpoint holds it."
)
"""What an undo says when the cells it undid ran Bash or RunCode."""

KERNEL_NOTE = "The kernel's variables are as they are: undoing a run does not run anything."
"""What an undo of a run says."""

_TAG = re.compile(r"<(?=/?[A-Za-z])")


@dataclass
class UndoReport:
    """What one undo did: for the person and, as a note, for the model."""

    title: str
    """What was undone: ``the changes of checkpoint 3``."""
    outcome: Outcome
    """What was restored and left."""
    record: Checkpoint | None
    """The undo's own checkpoint (undo it to redo), None when nothing changed."""
    untracked: list[str] = field(default_factory=list)
    """Tools whose changes were not undone (Bash, RunCode)."""
    force_command: str = ""
    """The command that would also overwrite what was left."""
    ran: bool = False
    """Whether a run's outputs were undone (the kernel was not)."""

    def lines(self) -> list[str]:
        """The report, a line each: what was restored, left, and not tracked."""
        outcome = self.outcome
        lines = [f"Undid {self.title}: {plural(len(outcome.restored), 'change')} restored."]
        lines += [f"- {line}" for line in outcome.restored]
        if outcome.left:
            lines.append(f"Left as they are ({len(outcome.left)}):")
            lines += [f"- {line}" for line in outcome.left]
            if self.force_command:
                lines.append(f"To overwrite them too: {self.force_command}")
        if self.untracked:
            lines.append(f"{' and '.join(self.untracked)} ran: {UNTRACKED_NOTE}")
        if self.ran:
            lines.append(KERNEL_NOTE)
        if self.record is not None:
            lines.append(
                f"This undo is checkpoint {self.record.number}: `%agent redo` takes it back."
            )
        return lines

    def note(self) -> str:
        """What the model is told at its next turn."""
        body = "\n".join(self.lines()[:-1] if self.record is not None else self.lines())
        body = _TAG.sub("\u2039", body)  # a file name cannot close the reminder
        return (
            "<system-reminder>\nThe user undid changes you made (with nbagent's %agent undo). "
            f"{body}\nRead the notebook and files again before you edit them.\n</system-reminder>"
        )


def undo(
    context: ToolContext,
    log: CheckpointLog,
    items: Sequence[Checkpoint],
    force: bool = False,
    title: str = "",
    force_command: str = "",
) -> UndoReport:
    """Undo whole checkpoints, newest first, as one undo.

    An undone undo is a redo: what it undid counts as done again.

    Args:
        context: The tools' context.
        log: The checkpoint log.
        items: The checkpoints.
        force: Overwrite cells and files a person changed since.
        title: What is undone, in a few words.
        force_command: The command that forces what is left.
    """
    ordered = sorted(items, key=lambda item: item.number)
    changes = [change for item in ordered for change in item.changes]
    numbers = [item.number for item in ordered]
    title = title or _title(numbers)
    report = _apply(context, log, changes, force, title, force_command, undoes=numbers)
    report.untracked = sorted({tool for item in ordered for tool in item.untracked})
    if report.record is not None or not report.outcome.left:
        by = report.record.number if report.record is not None else None
        log.set_undone(numbers, by if by is not None else 0)
        redone = [n for item in ordered if item.kind == "undo" for n in item.undoes]
        if redone:
            log.set_undone(redone, None)
    log.tell(report.note())
    return report


def undo_call(
    context: ToolContext, log: CheckpointLog, call_id: str, force: bool = False
) -> UndoReport:
    """Undo one tool call's changes (its card's Undo button).

    Raises:
        ToolError: No kept checkpoint has a change of that call.
    """
    changes = [
        change for item in log.checkpoints() for change in item.changes if change.call_id == call_id
    ]
    if not changes:
        raise ToolError(
            "Nothing to undo for this call: its changes are no longer kept (see %agent "
            "checkpoints), or it changed nothing."
        )
    title = f"the {changes[0].tool} call {call_id[-8:]}"
    report = _apply(context, log, changes, force, title, "", undoes=[])
    log.tell(report.note())
    return report


def _apply(
    context: ToolContext,
    log: CheckpointLog,
    changes: list[Change],
    force: bool,
    title: str,
    force_command: str,
    undoes: list[int],
) -> UndoReport:
    outcome = restore(context, log, changes, force)
    record = None
    if outcome.inverse:
        record = log.add(
            "undo", f"undo of {title}", outcome.inverse, undoes=undoes, left=outcome.left
        )
    ran = any(change.tool == "NotebookRun" for change in changes)
    return UndoReport(title, outcome, record, force_command=force_command, ran=ran)


def _title(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"checkpoint {numbers[0]}"
    return f"checkpoints {numbers[0]} to {numbers[-1]}"
