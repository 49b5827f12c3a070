"""The Undo buttons under an ``%%agent`` cell's transcript (ipywidgets).

When a cell's run ends, and it changed notebook cells or files, a small panel follows the
transcript: the cell's changes in a few words with an "Undo all" button, and one row per edit
(the tool, what it changed) with its own "Undo" button. A button does what ``%agent undo`` does
for that cell or that edit: what a person changed since is left and named. The kernel handles
a click once the cell has ended (while it runs, it takes no widget events).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
from IPython.display import display

from nbagent.core.errors import NbAgentError
from nbagent.core.markup import escape_html, plain_markdown
from nbagent.render.codeview import short_id
from nbagent.tools.checkpoints.model import Change, Checkpoint
from nbagent.tools.checkpoints.undo import UndoReport, undo, undo_call

if TYPE_CHECKING:
    from nbagent.jupyter.session import Session


class UndoPanel(widgets.VBox):
    """The panel of one cell's changes; as text (nbconvert), one line that names the command."""

    summary = ""

    def __repr__(self) -> str:
        """One line: what the cell changed and how to undo it without the buttons."""
        return f"nbagent: {self.summary} (%agent undo takes them back)"


def undo_panel(session: Session, item: Checkpoint) -> UndoPanel:
    """The panel of a checkpoint's changes, with its Undo buttons.

    Args:
        session: The kernel's session.
        item: The cell's checkpoint.
    """
    out = widgets.HTML()
    summary = item.summary()
    if item.untracked:
        summary += f"; {' and '.join(item.untracked)} not tracked"
    head = widgets.HTML(
        f'<span class="nbagent-undo-summary">Checkpoint {item.number}: '
        f"{escape_html(summary)}</span>"
    )
    everything = _button("Undo all", f"Undo every change of checkpoint {item.number}")
    rows: list[widgets.Widget] = [widgets.HBox([head, everything])]
    buttons = [everything]
    for call_id, changes in _by_call(item).items():
        button = _button("Undo", "Undo this edit only")
        label = widgets.HTML(f'<span class="nbagent-undo-edit">{escape_html(_row(changes))}</span>')
        rows.append(widgets.HBox([button, label]))
        buttons.append(button)
        button.on_click(_handler(session, out, button, lambda c=call_id: _undo_call(session, c)))
    everything.on_click(
        _handler(session, out, everything, lambda: _undo_checkpoint(session, item.number))
    )
    panel = UndoPanel([*rows, out])
    panel.summary = summary
    panel.add_class("nbagent-undo")
    return panel


def show_undo_panel(session: Session, item: Checkpoint | None) -> None:
    """Show the panel under the transcript, when the cell changed something and runs in a
    kernel (a terminal has ``%agent undo``)."""
    from nbagent.jupyter.outputs import in_kernel

    if item is not None and item.changes and in_kernel():
        display(undo_panel(session, item))


def _button(description: str, tooltip: str) -> widgets.Button:
    button = widgets.Button(description=description, tooltip=tooltip, icon="undo")
    button.layout = widgets.Layout(width="auto")
    return button


def _by_call(item: Checkpoint) -> dict[str, list[Change]]:
    """The checkpoint's changes by the tool call that made them (each call of the agent's loop
    has an id; a change made outside it is undone with the whole cell)."""
    calls: dict[str, list[Change]] = {}
    for change in item.changes:
        if change.call_id:
            calls.setdefault(change.call_id, []).append(change)
    return calls


def _row(changes: list[Change]) -> str:
    change = changes[-1]
    name = Path(change.path).name
    what = change.action
    if change.kind == "cell":
        return f"{change.tool} · cell {short_id(change.cell_id)} of {name} · {what}"
    return f"{change.tool} · {name} · {what}"


def _handler(
    session: Session, out: widgets.HTML, button: widgets.Button, work: Callable[[], UndoReport]
) -> Callable[[Any], None]:
    def clicked(_: Any) -> None:
        button.disabled = True
        try:
            if session.frontend is not None:
                session.frontend.open()
            report = work()
        except (NbAgentError, ValueError) as exc:
            out.value = f"<p><b>Not undone</b>: {escape_html(str(exc))}</p>"
            button.disabled = False
            return
        out.value = report_html(report)

    return clicked


def report_markdown(report: UndoReport) -> str:
    """An undo's report as Markdown: its first line bold, what it restored and left as lists,
    the other lines as paragraphs (every text shown as written).

    Args:
        report: The undo's report.
    """
    lines = report.lines()
    blocks = [f"**{plain_markdown(lines[0])}**"]
    for line in lines[1:]:
        if line.startswith("- "):
            item = "- " + plain_markdown(line[2:])
            if blocks[-1].startswith("- "):
                blocks[-1] += "\n" + item
                continue
            blocks.append(item)
        else:
            blocks.append(plain_markdown(line))
    return "\n\n".join(blocks)


def report_html(report: UndoReport) -> str:
    """An undo's report as HTML (the panel's): what :func:`report_markdown` says.

    Args:
        report: The undo's report.
    """
    lines = report.lines()
    parts = [f'<p class="nbagent-undo-report"><b>{escape_html(lines[0])}</b></p>']
    items: list[str] = []
    for line in [*lines[1:], ""]:
        if line.startswith("- "):
            items.append(f"<li>{escape_html(line[2:])}</li>")
            continue
        if items:
            parts.append(f"<ul>{''.join(items)}</ul>")
            items = []
        if line:
            parts.append(f"<p>{escape_html(line)}</p>")
    return "".join(parts)


def _undo_call(session: Session, call_id: str) -> UndoReport:
    if session.context is None:
        raise NbAgentError("nbagent's tools are not ready yet: click again.")
    return undo_call(session.context, session.checkpoints, call_id)


def _undo_checkpoint(session: Session, number: int) -> UndoReport:
    item = _kept(session, number)
    if session.context is None:
        raise NbAgentError("nbagent's tools are not ready yet: click again.")
    again = f"%agent undo {number} --force"
    return undo(session.context, session.checkpoints, [item], force_command=again)


def _kept(session: Session, number: int) -> Checkpoint:
    item = session.checkpoints.get(number)
    if item is None:
        raise NbAgentError(
            f"Checkpoint {number} is no longer kept (c.NbAgent.checkpoints keeps the latest)."
        )
    return item
