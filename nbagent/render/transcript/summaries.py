"""The one-line summaries of a transcript's parts: a call's line (its mark, main argument,
result in a few words and notes), what the user was asked, a tool-set change, the token meter,
durations and counts.

Every rendering (HTML, Markdown, plain text) says a call in these same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbagent.core.events import Usage
from nbagent.core.text import (
    MCP_PREFIX,
    cut,
    cut_start,
    first_line,
    first_line_noting_more,
    one_line,
    plural,
)
from nbagent.render.codeview import short_id, words_of
from nbagent.render.transcript.items import STATE_WORDS, Call, Delta, Search, Tasks, result_text
from nbagent.render.web_view import web_summary

LINE_CHARS = 80
"""The most characters of a card's result summary."""


ARGUMENT_CHARS = 60
"""The most characters of a card's main argument (the result summary follows it)."""


SLOW_SECONDS = 5.0
"""A call that ran this long says how long, in the quiet mode too."""


STATUS_MARK = {
    "running": "○",
    "waiting": "?",
    "ok": "✓",
    "error": "✗",
    "denied": "⊘",
    "interrupted": "■",
}
"""The mark of each tool-call status (text, so it shows without styles too)."""


MAIN_ARGUMENTS = (
    "command",
    "file_path",
    "pattern",
    "query",
    "url",
    "cell_id",
    "notebook_path",
    "path",
    "name",
    "code",
    "description",
    "prompt",
    "question",
    "subject",
    "title",
)
"""Input fields that say what a call is about, in the order a card looks for one."""


QUOTED_ARGUMENTS = frozenset({"query", "pattern"})
"""Main arguments shown in quotes (they are searched for, not named)."""


PATH_ARGUMENTS = frozenset({"file_path", "notebook_path", "path"})
"""Main arguments cut at the start when long (a path's end says the most)."""


TASK_MARK = {"pending": "☐", "in_progress": "▶", "completed": "☑"}
"""The checkbox of each task status."""


def usage_line(usage: Usage) -> str:
    """Token usage in one line.

    Args:
        usage: Usage of a run or a conversation.

    Returns:
        E.g. ``tokens: 1,200 in (1,000 from cache, 100 written to it), 80 out``, and
        ``· 2 web searches`` when the API searched.
    """
    searches = usage.web_search_requests
    return (
        f"tokens: {usage.total_input_tokens:,} in ({usage.cache_read_input_tokens:,} from "
        f"cache, {usage.cache_creation_input_tokens:,} written to it), "
        f"{usage.output_tokens:,} out"
    ) + (f" · {plural(searches, 'web search', 'web searches')}" if searches else "")


def head_parts(call: Call, verbose: bool = False) -> list[tuple[str, str]]:
    """The parts of a card's line: mark, tool, main argument, result summary and notes.

    Args:
        call: The call.
        verbose: The verbose mode (its notes: status, duration, decision).

    Returns:
        Each part's name (a key of HEAD_TAGS) and text; together, e.g.
        ``✓ Read sales.csv → 42 lines``.
    """
    argument = main_argument(call.input)
    notes = call_notes(call, verbose)
    return [
        ("mark", STATUS_MARK.get(call.status, "•")),
        ("name", call.name),
        *([("arg", argument)] if argument else []),
        ("result", f"→ {result_summary(call)}"),
        *([("notes", f"· {' · '.join(notes)}")] if notes else []),
    ]


def head_line(call: Call, verbose: bool = False) -> str:
    """A card's line as plain text.

    Args:
        call: The call.
        verbose: The verbose mode.

    Returns:
        E.g. ``✓ Read sales.csv → 42 lines · allowed by you``.
    """
    return " ".join(text for _, text in head_parts(call, verbose))


def main_argument(tool_input: Mapping[str, Any], limit: int = ARGUMENT_CHARS) -> str:
    """What a call is about, in one line: its command, path, pattern, query, cell, URL ….

    Args:
        tool_input: The call's input.
        limit: The most characters.

    Returns:
        E.g. ``sales.csv``, ``"weather"``, ``1a2b3c4d`` (a cell id, shortened) or, for an
        input with none of the known fields, ``value=21, to='F'``; empty for an empty input.
    """
    for key in MAIN_ARGUMENTS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            if key == "cell_id":
                return short_id(first_line_noting_more(value))
            if key in QUOTED_ARGUMENTS:
                return f'"{cut(first_line_noting_more(value), limit - 2)}"'
            if key in PATH_ARGUMENTS:
                return cut_start(first_line_noting_more(value), limit)
            return cut(first_line_noting_more(value), limit)
    return brief(dict(tool_input), limit)


def result_summary(call: Call) -> str:
    """What came of a call, in a few words: the tool's summary, or one derived from its result.

    Args:
        call: The call.

    Returns:
        E.g. ``42 lines``, ``loaded 2: get_forecast, get_alerts``, ``exit 1: 3 failed``,
        ``refused by you``, ``running…``.
    """
    if call.status in STATE_WORDS:
        return STATE_WORDS[call.status]
    if call.status == "denied":
        return denial(call)
    if call.status == "interrupted":
        return f"interrupted after {seconds(call.duration)}" if call.duration else "interrupted"
    if call.search is not None and call.status == "ok":
        return search_summary(call.search)
    if call.web is not None:
        return web_summary(call.web)
    if first_line(call.summary):
        return first_line(call.summary, LINE_CHARS)
    if call.status == "error":
        return first_line(call.result, LINE_CHARS) or "failed"
    return text_summary(call.result)


def denial(call: Call) -> str:
    """Why a call was refused, in a few words.

    Args:
        call: A denied call.

    Returns:
        ``refused by you``, ``denied: deny rule Bash(rm:*)`` (the decision that refused it),
        or the first line of what the model was told.
    """
    if call.answer == "no":
        return "refused by you"
    if call.permission:
        return f"denied: {call.permission.removeprefix('deny: ')}"
    return first_line(call.result, LINE_CHARS) or "denied"


def text_summary(text: str) -> str:
    """A result's text in a few words: itself when it is one short line, else its size.

    Args:
        text: The result.

    Returns:
        E.g. ``69.8``, ``42 lines``, ``1,200 characters``, ``no output``.
    """
    stripped = text.strip()
    if not stripped:
        return "no output"
    lines = stripped.splitlines()
    if len(lines) > 1:
        return plural(len(lines), "line")
    return stripped if len(stripped) <= LINE_CHARS // 2 else plural(len(stripped), "character")


def search_summary(search: Search) -> str:
    """What a ToolSearch did, in a few words.

    Args:
        search: The search.

    Returns:
        E.g. ``loaded 2: get_forecast, get_alerts``, ``3 matches, all loaded before`` or
        ``no match``.
    """
    note = f" · ranked by {search.fallback}" if search.fallback else ""
    if not search.hits:
        return "no match" + note
    if search.loaded:
        return cut(f"loaded {len(search.loaded)}: {', '.join(search.loaded)}", LINE_CHARS) + note
    return f"{plural(len(search.hits), 'match', 'matches')}, all loaded before{note}"


def call_notes(call: Call, verbose: bool = False) -> list[str]:
    """What a card's line says after the result: the user's answer, and what is not routine.

    The quiet mode leaves out routine facts (an allow by the mode or a rule, a short
    duration); the verbose mode says the status, duration and decision of every call.

    Args:
        call: The call.
        verbose: The verbose mode.

    Returns:
        The notes, e.g. ``["allowed by you, always: added rule Bash(git status:*)"]``.
    """
    notes = answer_notes(call)
    if verbose:
        return [*notes, status_words(call), *([call.permission] if call.permission else [])]
    if call.status in ("ok", "error") and call.duration >= SLOW_SECONDS:
        notes.append(seconds(call.duration))
    return notes


def answer_notes(call: Call) -> list[str]:
    """What the user's answer to a permission question did, for the card's line.

    Args:
        call: The call.

    Returns:
        ``allowed by you``, ``allowed by you, always: added rule …``, ``question withdrawn``
        (the call was interrupted while it asked), or nothing (a refusal is the result
        itself: ``refused by you``).
    """
    if withdrawn(call):
        return ["question withdrawn"]
    if call.answer == "yes":
        return ["allowed by you"]
    if call.answer == "always":
        return [f"allowed by you, always: added rule {call.rule or call.always}".rstrip()]
    return []


def withdrawn(call: Call) -> bool:
    """Whether a call was interrupted while its question waited for the user's answer.

    Args:
        call: The call.
    """
    return call.status == "interrupted" and bool(call.request) and not call.answer


def status_words(call: Call) -> str:
    """A call's status and, once it ended, how long it ran: ``ok 0.01 s``.

    Args:
        call: The call.

    Returns:
        The words.
    """
    done = call.status not in STATE_WORDS
    return f"{call.status} {call.duration:.2f} s" if done else call.status


def asked_line(call: Call) -> str:
    """What the user was asked about a call, and answered (empty: nobody was asked).

    Args:
        call: The call.

    Returns:
        E.g. ``asked: rm -rf build · answered: no``, with the question's reason when it gave
        one (``asked: .mcp.json (… can run code later) · answered: yes``), not its code.
    """
    if not call.request or call.status == "waiting":
        return ""
    words = words_of(call.reason)
    why = f" ({first_line_noting_more(words)})" if words else ""
    if withdrawn(call):
        return f"asked: {first_line_noting_more(call.request)}{why} · withdrawn before an answer"
    return (
        f"asked: {first_line_noting_more(call.request)}{why} · answered: {call.answer or 'nothing'}"
    )


def delta_line(delta: Delta) -> str:
    """A change of the deferred tools in one line, grouped by MCP server with counts.

    Args:
        delta: The change.

    Returns:
        E.g. ``± 12 deferred tools available: mcp__github__ (12)``.
    """
    parts = []
    if delta.added:
        parts.append(
            f"± {plural(len(delta.added), 'deferred tool')} available: {grouped(delta.added)}"
        )
    if delta.removed:
        parts.append(
            f"± {plural(len(delta.removed), 'deferred tool')} removed: {grouped(delta.removed)}"
        )
    return " · ".join(parts)


def tasks_heading(item: Tasks) -> str:
    """The task list's heading: ``Tasks (1/3 done)``."""
    done = sum(t.status == "completed" for t in item.tasks)
    return f"Tasks ({done}/{len(item.tasks)} done)"


def brief(value: Any, limit: int) -> str:
    """A one-line rendering of a tool input or result, cut to ``limit`` characters.

    Args:
        value: A dict (shown as ``k=v``), a string or anything else.
        limit: The most characters.

    Returns:
        The line.
    """
    if isinstance(value, dict):
        text = ", ".join(f"{k}={v!r}" for k, v in value.items())
    elif isinstance(value, list):
        text = result_text(value)
    else:
        text = str(value)
    return one_line(text, limit)


def seconds(duration: float) -> str:
    """A duration for people: ``0.4 s``, ``12 s``, ``2 min 5 s``.

    Args:
        duration: Seconds.

    Returns:
        The duration.
    """
    if duration < 10:
        return f"{duration:.1f} s"
    if duration < 60:
        return f"{duration:.0f} s"
    minutes, rest = divmod(round(duration), 60)
    return f"{minutes} min {rest} s"


def grouped(names: tuple[str, ...] | list[str]) -> str:
    """Names grouped by MCP server with counts: ``mcp__github__ (12), Read``.

    Args:
        names: Tool names.

    Returns:
        The summary.
    """
    counts: dict[str, int] = {}
    for name in names:
        server = name[len(MCP_PREFIX) :].split("__", 1)[0] if name.startswith(MCP_PREFIX) else ""
        key = f"{MCP_PREFIX}{server}__" if server else name
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(
        f"{key} ({n})" if key.startswith(MCP_PREFIX) else key for key, n in counts.items()
    )
