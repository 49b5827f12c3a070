"""``%agent checkpoints``, ``undo``, ``redo`` and ``rewind``, and the hooks of an ``%%agent`` cell.

Each ``%%agent`` cell opens a checkpoint (:func:`begin_cell`): what its notebook and file tools
change is recorded in it (:mod:`nbagent.tools.checkpoints`). ``%agent undo`` restores what the
last cell changed, ``%agent rewind N`` what checkpoint N and every later one changed (with
``--conversation``, the conversation is cut back to before that cell too), ``%agent redo``
takes the last undo back. What a person changed since is never overwritten unless ``--force``.
The model is told at its next turn what was undone (:func:`begin_cell` hands it the notes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display

from nbagent.core.events import ToolCallStarted
from nbagent.core.markup import Markdown, code_markdown, table_cell
from nbagent.jupyter.conversations_table import local_time
from nbagent.tools.checkpoints.model import Checkpoint
from nbagent.tools.checkpoints.recording import CheckpointLog
from nbagent.tools.checkpoints.undo import UndoReport, undo, undo_call
from nbagent.tools.notebook.locate import running_cell_id

if TYPE_CHECKING:
    from nbagent.jupyter.session import Session
    from nbagent.loop.agent import Agent

CHECKPOINT_COMMANDS = ("checkpoints", "undo", "redo", "rewind")
"""The ``%agent`` subcommands of this module."""


def begin_cell(session: Session, agent: Agent, prompt: str, review: bool = False) -> None:
    """Open the checkpoint of an ``%%agent`` cell, and have the model told what was undone
    since its last turn (:class:`UndoNotes`).

    Args:
        session: The kernel's session.
        agent: The agent about to run the cell.
        prompt: The cell's prompt.
        review: Review mode for this cell (``--review``); else ``c.NbAgent.review``.
    """
    log = session.checkpoints
    log.review = review or session.settings.review
    messages = agent.messages
    log.begin(
        running_cell_id(session.shell),
        prompt,
        conversation=len(messages),
        conversation_id=session.recorder.current_id,
        conversation_mark=_mark(messages[-1]) if messages else "",
    )
    if not any(isinstance(remind, UndoNotes) for remind in agent.reminders):
        agent.reminders.append(UndoNotes(log))


class UndoNotes:
    """What the model is told at its next turn of what was undone since its last one (a
    reminder of the agent's: a ``<system-reminder>`` after the prompt, in the same message).

    Args:
        log: The checkpoint log, which keeps the notes until they are told.
    """

    def __init__(self, log: CheckpointLog) -> None:
        self.log = log

    def __call__(self, history: Sequence[Any]) -> str | None:
        """The notes, taken from the log; None when there are none or the conversation is
        new (it has nothing to be told)."""
        notes = self.log.take_notes()
        return "\n\n".join(notes) if notes and history else None


def end_cell(session: Session) -> None:
    """Close the checkpoint of the ``%%agent`` cell that ran, and show its Undo buttons."""
    from nbagent.jupyter.undo_widgets import show_undo_panel  # ipywidgets, at the first cell

    session.checkpoints.review = False
    show_undo_panel(session, session.checkpoints.end())


def watch(session: Session, event: Any) -> None:
    """Note a tool call whose changes no checkpoint holds (Bash, RunCode)."""
    if isinstance(event, ToolCallStarted):
        session.checkpoints.note_untracked(event.name)


def run_command(session: Session, command: str, words: list[str], **flags: bool) -> None:
    """Run one of :data:`CHECKPOINT_COMMANDS` and show what it did.

    Args:
        session: The kernel's session.
        command: The subcommand.
        words: Its words (a checkpoint's number).
        **flags: ``force``, ``conversation``, ``conversation_only``.

    Raises:
        UsageError: The command cannot be done; the message says what to do instead.
    """
    log = session.checkpoints
    if command == "checkpoints":
        if words:
            raise UsageError("%agent checkpoints takes no argument.")
        display(Markdown(checkpoints_markdown(log.checkpoints(), log.enabled)))
        return
    if session.context is None:
        raise UsageError("nbagent's tools are not ready yet: run the command again.")
    if session.frontend is not None:  # restores go where the user sees the notebook
        session.frontend.open()
    number = _number(command, words)
    force = bool(flags.get("force"))
    if command == "rewind":
        if number is None:
            raise UsageError("%agent rewind takes a checkpoint's number: see %agent checkpoints.")
        _rewind(session, number, force, flags)
        return
    if flags.get("conversation") or flags.get("conversation_only"):
        raise UsageError("--conversation goes with %agent rewind N.")
    items = [_undo_target(log, command, number)]
    again = f"%agent undo {items[0].number} --force"
    report = undo(session.context, log, items, force, force_command=again)
    _show(report)


def undo_button(session: Session, call_id: str) -> UndoReport:
    """What a card's Undo button does: undo one call's changes (never what a person changed).

    Args:
        session: The kernel's session.
        call_id: The tool call's id.

    Raises:
        ToolError: Nothing of that call is kept.
    """
    if session.context is None:
        raise UsageError("nbagent's tools are not ready yet.")
    return undo_call(session.context, session.checkpoints, call_id)


def checkpoints_markdown(items: list[Checkpoint], enabled: bool = True) -> str:
    """The checkpoints as a Markdown table, the newest last.

    Args:
        items: The checkpoints kept.
        enabled: Whether changes are recorded now.
    """
    if not items:
        off = " (recording is off: c.NbAgent.checkpoints = 0)" if not enabled else ""
        return (
            f"No checkpoints yet{off}: each %%agent cell that changes a notebook or file makes one."
        )
    rows = [
        "| # | when | cell | prompt | changed | state |",
        "| --: | --- | --- | --- | --- | --- |",
    ]
    for item in items:
        cell = code_markdown(item.cell_id[:8]) if item.cell_id else ""
        changed = item.summary()
        if item.untracked:
            changed += f"; {', '.join(item.untracked)} not tracked"
        rows.append(
            f"| {item.number} | {local_time(item.started)} | {cell} | "
            f"{table_cell(item.prompt, 60)} | {table_cell(changed)} | {_state(item)} |"
        )
    tail = (
        "\n\n`%agent undo` undoes the last cell's changes, `%agent rewind N` goes back to "
        "before checkpoint N (`--conversation` cuts the conversation too), `%agent redo` takes "
        "the last undo back."
    )
    return "\n".join(rows) + tail


def _state(item: Checkpoint) -> str:
    if item.kind == "undo":
        undid = ", ".join(str(n) for n in item.undoes)
        state = f"undo of {undid}" if undid else "undo"
    else:
        state = "kept"
    if item.undone_by:
        state += f", undone by {item.undone_by}"
    elif item.undone_by == 0:
        state += ", undone"
    return state


def _number(command: str, words: list[str]) -> int | None:
    if len(words) > 1 or (words and not words[0].isdigit()):
        raise UsageError(
            f"%agent {command} takes a checkpoint's number at most: see %agent checkpoints."
        )
    return int(words[0]) if words else None


def _undo_target(log: CheckpointLog, command: str, number: int | None) -> Checkpoint:
    """The checkpoint ``%agent undo [N]`` or ``%agent redo`` undoes."""
    items = log.checkpoints()
    if number is not None:
        found = log.get(number)
        if found is None:
            raise UsageError(f"No checkpoint {number} is kept: %agent checkpoints lists them.")
        return found
    kind = "undo" if command == "redo" else "cell"
    undos = {item.number for item in items if item.kind == "undo"}
    for item in reversed(items):
        redo = item.kind == "undo" and bool(undos.intersection(item.undoes))
        if item.kind == kind and item.undone_by is None and not redo:
            return item  # a redo is taken back by %agent undo N, not by another redo
    if command == "redo":
        raise UsageError("Nothing to redo: no undo is kept that was not taken back.")
    raise UsageError(
        "Nothing to undo: no %%agent cell's changes are kept that were not undone "
        "(%agent checkpoints lists them)."
    )


def _rewind(session: Session, number: int, force: bool, flags: dict[str, bool]) -> None:
    """Go back to before checkpoint ``number``: its changes and every later one's undone,
    and the conversation cut back too with ``--conversation``."""
    log = session.checkpoints
    target = log.get(number)
    if target is None or target.kind != "cell":
        raise UsageError(
            f"No %%agent cell's checkpoint {number} is kept: %agent checkpoints lists them."
        )
    conversation = flags.get("conversation") or flags.get("conversation_only")
    if conversation:
        _check_conversation(session.agent, session, target)
    if not flags.get("conversation_only"):
        items = [
            item
            for item in log.checkpoints()
            if item.kind == "cell" and item.number >= number and item.undone_by is None
        ]
        title = f"checkpoints {number} to {items[-1].number}" if len(items) > 1 else ""
        again = f"%agent rewind {number} --force"
        report = undo(session.context, log, items, force, title=title, force_command=again)  # type: ignore[arg-type]
        _show(report)
    if conversation:
        _cut_conversation(session, target)


def _check_conversation(agent: Agent, session: Session, target: Checkpoint) -> None:
    """Refuse to cut a conversation that is not the one the checkpoint's cell went on."""
    length = target.conversation
    messages = agent.messages
    same_file = target.conversation_id in (None, session.recorder.current_id)
    if (
        length is None
        or not same_file
        or len(messages) < length
        or (length and _mark(messages[length - 1]) != target.conversation_mark)
    ):
        raise UsageError(
            f"The conversation cannot be cut back to checkpoint {target.number}: it was reset, "
            "compacted or another was resumed since. Rewind the changes only (without "
            "--conversation), or start anew with %%agent --new."
        )


def _cut_conversation(session: Session, target: Checkpoint) -> None:
    agent = session.agent
    length = target.conversation or 0
    dropped = len(agent.messages) - length
    state = agent.snapshot()
    cut = state.messages[:length]  # a prefix: as valid as far as it was
    agent.restore(dataclasses.replace(state, messages=cut, valid=min(state.valid, length)))
    session.recorder.record(agent)
    display(
        Markdown(
            f"The conversation is back to before checkpoint {target.number} "
            f"({dropped} messages dropped): the next %%agent cell goes on from there."
        )
    )


def _show(report: UndoReport) -> None:
    from nbagent.jupyter.undo_widgets import report_markdown

    display(Markdown(report_markdown(report)))


def _mark(message: Any) -> str:
    """A digest of a message, to know it is still where it was."""
    text = json.dumps(message, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
