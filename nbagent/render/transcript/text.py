"""A transcript's items as plain text: a terminal, a log."""

from __future__ import annotations

from nbagent.render.codeview import question_parts
from nbagent.render.transcript.items import (
    PREVIEW_CHARS,
    AnswerItem,
    Call,
    Delta,
    Item,
    Search,
    Tasks,
)
from nbagent.render.transcript.summaries import (
    STATUS_MARK,
    TASK_MARK,
    answer_notes,
    asked_line,
    brief,
    delta_line,
    head_line,
    result_summary,
    status_words,
    tasks_heading,
)


def item_text(item: Item, verbose: bool = False) -> str:
    """Render one item as plain text (a terminal).

    Args:
        item: The item.
        verbose: The verbose mode (for tool calls).

    Returns:
        The text.
    """
    if isinstance(item, AnswerItem):
        return item.plain
    if isinstance(item, Call):
        return call_text(item, verbose)
    if isinstance(item, Search):
        return search_line(item)
    if isinstance(item, Delta):
        return delta_line(item)
    if isinstance(item, Tasks):
        return tasks_text(item)
    message = f"{item.message}: {item.detail}" if item.detail else item.message
    return f"> Warning: {message}" if item.level == "warning" else f"> {message}"


def call_text(call: Call, verbose: bool = False) -> str:
    """A tool call as a line, with the question it waits on, its hits or its error under it.

    Args:
        call: The call.
        verbose: Today's detailed line (``Name(k=v) status 0.01 s · decision``) with the
            ToolSearch hits and a failed call's result under it.

    Returns:
        The text.
    """
    head = verbose_line(call) if verbose else head_line(call)
    rows = call_detail_rows(call, verbose)
    if call.inner is not None:
        rows += call.inner.to_text(verbose=verbose).splitlines()
    return "\n".join([head, *("    " + row for row in rows)])


def verbose_line(call: Call) -> str:
    """A call's line in the verbose mode: its input as ``k=v``, status, duration, decision.

    Args:
        call: The call.

    Returns:
        E.g. ``✓ Read(file_path='a.csv') ok 0.01 s → 42 lines · allow: mode default``.
    """
    mark = STATUS_MARK.get(call.status, "•")
    line = f"{mark} {call.name}({brief(call.input, 120)}) {status_words(call)}"
    notes = [*answer_notes(call), *([call.permission] if call.permission else [])]
    return " · ".join([f"{line} → {result_summary(call)}", *notes])


def call_detail_rows(call: Call, verbose: bool) -> list[str]:
    """The lines under a call's line: its question while it waits; in verbose, hits and errors.

    Args:
        call: The call.
        verbose: The verbose mode.

    Returns:
        The lines, not indented.
    """
    if call.status == "waiting":
        parts = question_parts(call.reason)
        words = [line for info, part in parts if info is None for line in part.splitlines()]
        code = [line for info, part in parts if info is not None for line in part.split("\n")]
        return [*words, *call.request.splitlines(), *code, choices_line(call)]
    rows = [asked_line(call)] if verbose and asked_line(call) else []
    if call.web is not None and call.status == "ok":
        rows += call.result.splitlines()
    if verbose and call.search is not None:
        rows.append(search_line(call.search))
    if verbose and call.status not in ("ok", "running"):
        rows.append(brief(call.result, PREVIEW_CHARS))
    return rows


def choices_line(call: Call) -> str:
    """The answers a waiting call takes, as the user types them.

    Args:
        call: A call waiting for the user's answer.

    Returns:
        E.g. ``y yes · n no · a always (adds Bash(git status:*))``.
    """
    choices = ["y yes", "n no"]
    if call.always:
        choices.append(f"a always (adds {call.always})")
    return " · ".join(choices)


def search_line(search: Search) -> str:
    """A ToolSearch's hits in one line.

    Args:
        search: The search.

    Returns:
        E.g. ``ToolSearch 'weather': get_forecast (12), get_alerts (8)``.
    """
    hits = ", ".join(f"{n} ({s})" for n, s, _ in search.printed_hits()) or "no match"
    return f"ToolSearch {search.query!r}: {hits}"


def tasks_text(item: Tasks) -> str:
    """The task list as plain text, one task a line.

    Args:
        item: The task list.

    Returns:
        The lines.
    """
    rows = [f"{TASK_MARK[t.status]} {t.id}. {t.subject}" for t in item.tasks]
    return "\n".join([tasks_heading(item), *rows])
