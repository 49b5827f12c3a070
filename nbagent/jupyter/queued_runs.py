"""Runs the agent queued for after its turn, and the ``%%agent --after`` cell that goes on.

When an ``%%agent`` cell ends and NotebookRun queued cells (``when="after_turn"``,
:mod:`nbagent.tools.notebook.run_queue`), :func:`send_queued` asks the front end that ran the
agent cell (nbagent's JupyterLab extension, request ``queue``) to run them, in order, as
normal cells: their outputs come live, Ctrl-C stops them as usual. When the last one ends
(not interrupted) and going on is on (``c.NbAgent.continue_after_run``), the extension adds a
``%%agent --after ID`` cell below and runs it; :func:`continuation` makes its prompt from the
execution record (how each run ended) and the cells' outputs as the notebook shows them. A
turn that was interrupted sends nothing, and a run that was interrupted goes on with nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from nbagent.core.errors import ToolError
from nbagent.core.markup import Markdown, code_markdown
from nbagent.core.text import one_line
from nbagent.frontend.channel import FrontEndError
from nbagent.tools.notebook.file import render_outputs, source_of
from nbagent.tools.notebook.locate import running_cell_id, running_client, snapshot
from nbagent.tools.notebook.record import source_digest
from nbagent.tools.notebook.run_queue import QueuedRun, RunQueue

if TYPE_CHECKING:
    from nbagent.jupyter.config import NbAgent
    from nbagent.jupyter.session import Session
    from nbagent.loop.agent import AgentResult

CONTINUE_TEXT = "Go on: the runs you queued ended."
"""The text of the ``%%agent --after`` cell the extension adds below (the person sees it)."""

OUTPUT_CHARS = 4000
"""Characters of each output of a queued run the continuation prompt carries."""

OUTPUTS_QUOTED = 20
"""Outputs of each queued run the continuation prompt carries at most (the last ones)."""

MAX_CONTINUATIONS = 10
"""``%%agent --after`` cells that go on by themselves in a row at most: then the person is
asked to go on (an agent that queues a run at each turn would otherwise never stop)."""

_FORGED = re.compile(r"<(?=/?(?:system-reminder|output)\b)", re.IGNORECASE)


def apply_settings(runs: RunQueue, settings: NbAgent) -> None:
    """Give NotebookRun's queue the settings in force.

    Args:
        runs: The session's run queue.
        settings: ``c.NbAgent``.
    """
    runs.max_seconds = settings.max_run_seconds
    runs.continue_after = settings.continue_after_run


class Sent(NamedTuple):
    """Runs handed to the front end at the end of an ``%%agent`` cell."""

    runs: list[QueuedRun]
    """The runs, in order."""
    after: int
    """The record's last run number when they were handed over (their runs come later)."""
    chain: int = 0
    """How many ``%%agent --after`` cells in a row led to this hand-over."""


def show_queued(session: Session, result: AgentResult | None) -> None:
    """Hand the runs queued in the turn to the front end, and say so in the cell.

    Args:
        session: The kernel's session.
        result: How the turn ended (None: it failed).
    """
    said = send_queued(session, result)
    if said is not None:
        from IPython.display import display

        display(Markdown(f"> {said}"))


def send_queued(session: Session, result: AgentResult | None) -> str | None:
    """Hand the runs queued in the turn to the front end; say what happens (Markdown).

    Args:
        session: The kernel's session.
        result: How the turn ended (None: it failed).

    Returns:
        What the cell says of it, or None when nothing was queued.
    """
    chain = getattr(session, "continuing", 0)  # set by continuation() for this cell only
    session.continuing = 0
    runs = session.runs.take()
    if not runs:
        return None
    names = ", ".join(code_markdown(r.cell_id) for r in runs)
    if result is None or result.stop_reason == "interrupted":
        return f"Not run: {names} (queued for after the turn, which was interrupted)."
    cells = _notebook(session)
    changed = [r.cell_id for r in runs if source_of(cells.get(r.cell_id) or {}) != r.source]
    if changed:  # the front end runs what the cell holds then: only the code the person saw
        return (
            f"Not run: {names}: {', '.join(map(code_markdown, changed))} changed since its run "
            "was approved (or could not be read). Read it, and run it yourself if you want it."
        )
    shell, channel = session.shell, session.frontend
    front = channel.front_end(client=running_client(shell)) if channel is not None else None
    if front is None:
        return (
            f"Not run: {names}: no JupyterLab with nbagent's extension answered. Run them "
            "yourself; the agent is not told."
        )
    going_on = session.runs.continue_after and chain < MAX_CONTINUATIONS
    queue = {
        "cells": [r.cell_id for r in runs],
        "after": running_cell_id(shell),
        "continue": going_on,
        "source": f"%%agent --after {','.join(r.cell_id for r in runs)}\n{CONTINUE_TEXT}",
    }
    try:
        channel.request(front, "queue", queue=queue)
    except FrontEndError as exc:
        return f"Not run: {names}: {front.app} did not take them ({exc}). Run them yourself."
    session.sent_runs = Sent(runs, session.record.last_number, chain)
    then = (
        "then a new `%%agent` cell below goes on with the conversation (interrupt to stop it)"
        if going_on
        else "going on by itself is off (`c.NbAgent.continue_after_run`)"
        if not session.runs.continue_after
        else f"not going on by itself after {chain} `%%agent --after` cells in a row: run "
        "`%%agent` to go on"
    )
    return f"Runs next, as normal cells: {names}; {then}."


def continuation(session: Session, cells: str, text: str) -> str | None:
    """The prompt of an ``%%agent --after`` cell, or None when it must not go on.

    Args:
        session: The kernel's session.
        cells: The queued cells' ids, comma separated (as the extension wrote them).
        text: The cell's own text.

    Returns:
        The prompt: the cell's text and how each queued run ended, with its outputs; None
        (after showing why) when a run was interrupted or did not run.
    """
    from IPython.display import display

    sent: Sent | None = getattr(session, "sent_runs", None)
    ids = [c for c in cells.split(",") if c]
    stop = _why_not(session, sent, ids)
    if stop is not None:
        display(Markdown(f"> **Not continued**: {stop}"))
        return None
    session.sent_runs = None
    session.continuing = sent.chain + 1 if sent is not None else 1
    parts = [text.strip() or CONTINUE_TEXT, "", "The runs you queued for after your turn ended:"]
    notebook = _notebook(session)
    for cell_id in ids:
        run = session.record.last_run(cell_id)
        assert run is not None  # checked by _why_not
        count = f"In [{run.execution_count}]" if run.execution_count is not None else "no count"
        outcome = _FORGED.sub("\u2039", one_line(run.outcome, OUTPUT_CHARS))
        parts.append(f"Cell {cell_id} ({count}): {outcome} after {run.duration:.1f} s.")
        cell = notebook.get(cell_id)
        if cell is None:
            parts.append("(its outputs could not be read)")
            continue
        if source_digest(source_of(cell)) != run.digest:
            parts.append("(its source changed since it ran)")
        outputs = render_outputs(cell.get("outputs", []), OUTPUT_CHARS, None, cell_id)
        if len(outputs) > OUTPUTS_QUOTED:
            parts.append(
                f"({len(outputs) - OUTPUTS_QUOTED} earlier outputs: NotebookRead shows them)"
            )
            outputs = outputs[-OUTPUTS_QUOTED:]
        parts.extend([_quoted(part) for part in outputs] or ["(no output)"])
    return "\n".join(parts)


def _quoted(part: str) -> str:
    """An ``<output>`` element whose text cannot close it, nor pass for nbagent's reminder
    (``<`` before those tags' names becomes ``‹``)."""
    head, _, rest = part.partition("\n")
    body, _, tail = rest.rpartition("\n")
    return f"{head}\n{_FORGED.sub(chr(0x2039), body)}\n{tail}"


def _why_not(session: Session, sent: Sent | None, ids: list[str]) -> str | None:
    if sent is None or [r.cell_id for r in sent.runs] != ids:
        return (
            f"no run of {', '.join(map(code_markdown, ids))} was queued by the agent in this "
            "kernel (restarted since?). Run `%%agent` to go on."
        )
    for cell_id in ids:
        run = session.record.last_run(cell_id)
        if run is None or run.number <= sent.after:
            session.sent_runs = None
            return f"cell {code_markdown(cell_id)} did not run. Run `%%agent` to go on."
        if run.interrupted:
            session.sent_runs = None
            return (
                f"cell {code_markdown(cell_id)} was interrupted after {run.duration:.1f} s. "
                "Run `%%agent` to go on."
            )
    return None


def _notebook(session: Session) -> dict[str, Any]:
    """The notebook's cells by id, outputs included, as the person sees them (empty when it
    cannot be read)."""
    context = session.context
    path = context.notebook_path() if context is not None else None
    if context is None or path is None:
        return {}
    try:
        seen = snapshot(context, path.resolve(), path.name, outputs=True)
    except ToolError:
        return {}
    return {cell.get("id"): cell for cell in seen.notebook.cells}
