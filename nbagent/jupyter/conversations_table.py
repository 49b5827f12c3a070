"""The table of a notebook's saved conversations that ``%agent sessions`` shows, and the notes
``%agent resume`` adds: pure functions of what :mod:`nbagent.store.saved` read, in Markdown.

The store's reading (and its records' models) is imported by the first of them called, not at
``%load_ext``: :func:`local_time` alone serves other tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from nbagent.core.markup import code_markdown, plain_markdown, table_cell
from nbagent.core.text import one_line

if TYPE_CHECKING:
    from nbagent.store.saved import SavedConversation


def sessions_table(conversations: Sequence[SavedConversation], current: str | None = None) -> str:
    """The Markdown table of a notebook's saved conversations.

    Args:
        conversations: Last written first.
        current: The id of the conversation going on, marked in the table.
    """
    from nbagent.store.saved import DAMAGED, NOT_SIGNED

    rows = []
    for saved in conversations:
        mark = " (this one)" if saved.id == current else ""
        mark += f" — {NOT_SIGNED}" if saved.damage else ""
        mark += f" — {DAMAGED}" if saved.damaged else ""
        rows.append(
            f"| {code_markdown(saved.id)}{mark} | {table_cell(local_time(saved.started))} | "
            f"{table_cell(local_time(saved.updated))} | {table_cell(str(saved.turns))} | "
            f"{table_cell(one_line(saved.first_prompt, 60))} |"
        )
    header = "| id | started | last written | turns | first prompt |\n|---|---|---|---|---|\n"
    return header + "\n".join(rows)


def damage_notes(conversations: Sequence[SavedConversation]) -> str:
    """What reading left out of each damaged conversation, in Markdown, to follow the table.

    Args:
        conversations: As listed.

    Returns:
        A paragraph and a list, or an empty text when none is damaged.
    """
    from nbagent.store.records import named
    from nbagent.store.saved import DAMAGED

    items = [
        f"- {code_markdown(saved.id)}: "
        + plain_markdown(
            f"{saved.unreadable}: there is nothing of it to resume."
            if saved.unreadable
            else f"left out {named(saved.problems)}."
        )
        for saved in conversations
        if saved.damaged
    ]
    return (
        f"\n\n{DAMAGED.capitalize()}, read as far as it goes:\n" + "\n".join(items) if items else ""
    )


def left_out(saved: SavedConversation) -> str:
    """What reading left out of a conversation, to say when it is resumed.

    Args:
        saved: The conversation.

    Returns:
        A sentence in Markdown after a space, or an empty text when nothing was left out.
    """
    if not saved.problems:
        return ""
    from nbagent.store.records import named
    from nbagent.store.saved import DAMAGED

    return f" Left out, as {DAMAGED}: {plain_markdown(named(saved.problems))}."


def local_time(moment: str | float) -> str:
    """A moment (ISO 8601, or seconds since the epoch) in local time, to the minute."""
    try:
        when = (
            datetime.fromtimestamp(moment)
            if isinstance(moment, int | float)
            else datetime.fromisoformat(moment).astimezone()
        )
    except (ValueError, OSError, OverflowError):
        return str(moment)
    return when.strftime("%Y-%m-%d %H:%M")
