"""A transcript's items as HTML: the live view, and the tool cards the saved Markdown keeps.

A tool call is a ``<details>`` card (no script needed): one line that opens on its input,
what it found and its result, or on the question it waits on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nbagent.core.markup import NO_MATH, escape_html
from nbagent.render.codeview import code_html, question_parts
from nbagent.render.transcript.items import (
    PREVIEW_CHARS,
    AnswerItem,
    Call,
    Delta,
    Item,
    Search,
    Tasks,
    answer_class,
)
from nbagent.render.transcript.summaries import (
    TASK_MARK,
    asked_line,
    delta_line,
    head_line,
    head_parts,
    tasks_heading,
)
from nbagent.render.web_view import pages_html

HEAD_TAGS = {"mark": "span", "name": "b", "arg": "code", "result": "span", "notes": "span"}
"""The element of each part of a card's line (each gets the class ``nbagent-<part>``)."""


def item_html(item: Item, verbose: bool = False) -> str:
    """Render one item as HTML.

    Args:
        item: The item.
        verbose: The verbose mode (for tool cards).

    Returns:
        The HTML fragment.
    """
    if isinstance(item, AnswerItem):
        return f'<div class="{answer_class(item)}">{item.html}</div>'
    if isinstance(item, Call):
        return call_html(item, verbose)
    if isinstance(item, Tasks):
        return tasks_html(item)
    if isinstance(item, Search):
        return search_html(item)
    if isinstance(item, Delta):
        return f'<div class="nbagent-delta">{escape_html(delta_line(item))}</div>'
    cls = "nbagent-notice warning" if item.level == "warning" else "nbagent-notice"
    if item.detail:
        return (
            f'<details class="{cls}"><summary>{escape_html(item.message)}</summary>'
            f'<div class="nbagent-detail">{escape_html(item.detail)}</div></details>'
        )
    return f'<div class="{cls}">{escape_html(item.message)}</div>'


def call_html(call: Call, verbose: bool = False) -> str:
    """A tool call as a collapsible card: one line that opens on its input and result.

    Args:
        call: The call.
        verbose: Show the input as JSON, and the status, duration and permission decision.

    Returns:
        The ``<details>`` element (open while it waits for the user's answer).
    """
    opened = " open" if call.status == "waiting" else ""
    return (
        f'<details class="nbagent-call nbagent-{call.status} {NO_MATH}"{opened}>'
        f'<summary title="{escape_html(head_line(call, verbose))}">'
        f"{call_head_html(call, verbose)}</summary>"
        f'<div class="nbagent-body">{call_body_html(call, verbose)}</div></details>'
    )


def call_head_html(call: Call, verbose: bool = False) -> str:
    """A card's line, each part in its element; the whole line is its title too (a line cut
    to the card's width shows in full on hover).

    Args:
        call: The call.
        verbose: The verbose mode.

    Returns:
        The HTML of the ``<summary>``'s content.
    """
    parts = head_parts(call, verbose)
    return " ".join(
        f'<{HEAD_TAGS[part]} class="nbagent-{part}">{escape_html(text)}</{HEAD_TAGS[part]}>'
        for part, text in parts
    )


def call_body_html(call: Call, verbose: bool = False) -> str:
    """What an opened card shows: the input, what was found and the result; while the call
    waits, the question (last, right above where the answer is typed).

    Args:
        call: The call.
        verbose: Show the input as JSON, and the raw result of a ToolSearch too.

    Returns:
        The HTML.
    """
    full_input = f"<pre>{escape_html(json.dumps(call.input, indent=2, ensure_ascii=False))}</pre>"
    if call.status == "waiting":
        return (full_input if verbose else "") + ask_html(call)
    body = []
    if asked_line(call):
        body.append(f'<div class="nbagent-asked">{escape_html(asked_line(call))}</div>')
    if call.review:
        body.append(review_html(call.review))
    if verbose:
        body.append(full_input)
    elif call.input and "```" not in call.review:  # a diff shows what the input asked
        body.append(f'<pre class="nbagent-input">{escape_html(input_lines(call.input))}</pre>')
    if call.search is not None:
        body.append(search_html(call.search, caption=False))
    if call.web is not None:
        body.append(pages_html(call.web))
    if call.inner is not None:
        body.append(f'<div class="nbagent-inner">{call.inner.to_html(verbose=verbose)}</div>')
    if call.result and (verbose or (call.search is None and call.web is None)):
        body.append(result_html(call.result))
    return "".join(body)


def input_lines(tool_input: Mapping[str, Any]) -> str:
    """A call's input as ``key: value`` lines (text as it is, other values as JSON).

    Args:
        tool_input: The input.

    Returns:
        The lines; a text of several lines goes indented under its key.
    """
    lines = []
    for key, value in tool_input.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{key}:")
            lines += [f"  {line}" for line in value.splitlines()]
        elif isinstance(value, str):
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    return "\n".join(lines)


def ask_html(call: Call) -> str:
    """The question a waiting call asks: why, what it would do, the code it shows
    (highlighted, a diff's lines tinted: :func:`~nbagent.render.codeview.code_html`), and the
    answers it takes.

    Args:
        call: A call waiting for the user's answer.

    Returns:
        The HTML (the request as code, not JSON).
    """
    parts = question_parts(call.reason)
    words = "\n\n".join(part for info, part in parts if info is None)
    reason = f'<div class="nbagent-reason">{escape_html(words)}</div>' if words else ""
    code = "".join(code_html(part, info) for info, part in parts if info is not None)
    keys = [("y", "yes"), ("n", "no"), *([("a", "always")] if call.always else [])]
    choices = " · ".join(f"<kbd>{key}</kbd> {word}" for key, word in keys)
    if call.always:
        choices += f" (adds <code>{escape_html(call.always)}</code>)"
    return (
        f'<div class="nbagent-ask">{reason}'
        f'<pre class="nbagent-request"><code>{escape_html(call.request)}</code></pre>{code}'
        f'<div class="nbagent-choices">answer below: {choices}</div></div>'
    )


def review_html(review: str) -> str:
    """The change a call made: its words, and its diffs highlighted with their lines tinted.

    Args:
        review: Words and fenced blocks (``diff python``, ``diff text``).
    """
    parts = []
    for info, part in question_parts(review):
        if info is None:
            parts.append(f'<div class="nbagent-change">{escape_html(part)}</div>')
        else:
            parts.append(code_html(part, info))
    return f'<div class="nbagent-review">{"".join(parts)}</div>'


def result_html(result: str) -> str:
    """A result's preview, and the rest of it behind "show more".

    Args:
        result: The result's text.

    Returns:
        The HTML.
    """
    preview = f'<pre class="nbagent-output">{escape_html(result[:PREVIEW_CHARS])}</pre>'
    if len(result) <= PREVIEW_CHARS:
        return preview
    return (
        f"{preview}<details><summary>show more ({len(result):,} characters)</summary>"
        f'<pre class="nbagent-output">{escape_html(result)}</pre></details>'
    )


def search_html(search: Search, caption: bool = True) -> str:
    """A ToolSearch as a table of hits with scores, reasons and what was loaded.

    Args:
        search: The search.
        caption: Name the query above the table (a card's line already does).

    Returns:
        The HTML table.
    """
    title = f"ToolSearch <code>{escape_html(search.query)}</code>"
    note = (
        f'<div class="nbagent-search-note">Ranked by {escape_html(search.fallback)}.</div>'
        if search.fallback
        else ""
    )
    if not search.hits:
        return f'<div class="nbagent-search">{title}: no match</div>{note}'
    shown = search.loaded is not None
    rows = "".join(
        f'<tr><td><code>{escape_html(name)}</code></td><td class="nbagent-score">{score}</td>'
        f"<td>{escape_html('; '.join(reasons))}</td>"
        + (f"<td>{search.context(name)}</td>" if shown else "")
        + "</tr>"
        for name, score, reasons in search.printed_hits()
    )
    context = "<th>context</th>" if shown else ""
    head = f"<caption>{title}</caption>" if caption else ""
    return (
        f'<table class="nbagent-search">{head}<thead><tr><th>tool</th>'
        f'<th class="nbagent-score">score</th><th>why</th>{context}</tr></thead>'
        f"<tbody>{rows}</tbody></table>{note}"
    )


def tasks_html(item: Tasks) -> str:
    """The task list as HTML, one task a line.

    Args:
        item: The task list.

    Returns:
        The ``<div class="nbagent-tasks">``.
    """
    rows = [escape_html(f"{TASK_MARK[t.status]} {t.id}. {t.subject}") for t in item.tasks]
    return (
        '<div class="nbagent-tasks">'
        + "<br>".join([f"<b>{tasks_heading(item)}</b>", *rows])
        + "</div>"
    )
