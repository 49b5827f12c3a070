"""A run as a list of items, and its static renderings (HTML, Markdown, plain text).

:class:`Transcript` folds :mod:`nbagent.events` into items: answer text, tool-call cards,
ToolSearch tables, deferred-tool banners, notices and a usage meter. The live widget view and
the static outputs a cell keeps after the run are both drawn from it, so they always agree,
and a notebook read without a kernel (nbconvert, GitHub, VS Code) shows the same transcript.
Pure Python: no IPython, no widgets.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from nbagent.events import (
    Event,
    Notice,
    RunFinished,
    TaskItem,
    TaskListChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    ToolSearchResults,
    ToolSetAnnounced,
    Usage,
    UsageReported,
)
from nbagent.secrets import redact
from nbagent.text import MCP_PREFIX

PREVIEW_CHARS = 300
"""How much of a tool result a card shows before "show more"."""

FULL_CHARS = 20_000
"""How much of a tool result a card keeps at all."""

STATUS_MARK = {"running": "○", "ok": "✓", "error": "✗", "denied": "⊘", "interrupted": "■"}
"""The mark of each tool-call status."""


@dataclass
class Answer:
    """A stretch of the model's answer."""

    text: str = ""
    """The Markdown so far."""


@dataclass
class Call:
    """A tool call's card."""

    id: str
    """The tool_use id."""
    name: str
    """The tool's name."""
    input: dict[str, Any]
    """Its input."""
    status: str = "running"
    """running, ok, error, denied or interrupted."""
    duration: float = 0.0
    """Seconds it ran."""
    result: str = ""
    """What the model was sent, as text (cut at FULL_CHARS)."""
    permission: str = ""
    """The permission decision, when one applied."""
    inner: Transcript | None = None
    """What happened inside the call (a sub-agent's own run), if anything."""


@dataclass
class Tasks:
    """The agent's task list, as a checklist (one item, updated in place)."""

    tasks: tuple[TaskItem, ...] = ()
    """The tasks, in order."""


@dataclass
class Search:
    """A ToolSearch the model made."""

    query: str
    """The query."""
    hits: list[tuple[str, float, tuple[str, ...]]]
    """Name, score and reasons of each hit, best first."""
    loaded: tuple[str, ...] | None
    """The names this search loaded into the model's context; None for a search the model
    did not make (``%tool_search``)."""

    def context(self, name: str) -> str:
        """What the search did to one hit's place in the model's context."""
        return "loaded" if self.loaded and name in self.loaded else "already loaded"


@dataclass
class Delta:
    """A change of the deferred tools, as the model was told it."""

    added: tuple[str, ...]
    """Names now available."""
    removed: tuple[str, ...]
    """Names gone."""
    text: str
    """The exact text the model received."""


@dataclass
class Note:
    """A notice (a retry, a limit)."""

    message: str
    """What happened."""
    level: str = "info"
    """info or warning."""


Item = Answer | Call | Tasks | Search | Delta | Note


@dataclass
class Transcript:
    """A run's items, built event by event."""

    items: list[Item] = field(default_factory=list)
    """Everything shown, in order."""
    usage: Usage = field(default_factory=Usage)
    """Tokens so far."""
    stop_reason: str = ""
    """Why the run ended; empty while it runs."""
    saved_tokens: int | None = None
    """Tokens of tool definitions that deferral kept out of the context, when known."""

    def apply(self, event: Event) -> Item | None:
        """Fold one event in.

        Args:
            event: Any event of a run.

        Returns:
            The item created or changed, or None.
        """
        if isinstance(event, TextDelta):
            if not self.items or not isinstance(self.items[-1], Answer):
                self.items.append(Answer())
            answer = self.items[-1]
            assert isinstance(answer, Answer)
            answer.text += event.text
            return answer
        if isinstance(event, ToolCallStarted):
            return self._add(Call(event.id, event.name, dict(event.input)))
        if isinstance(event, ToolCallFinished):
            return self._finish(event)
        if isinstance(event, ToolSearchResults):
            hits = [(h.name, h.score, tuple(h.reasons)) for h in event.hits]
            return self._add(Search(event.query, hits, tuple(event.loaded)))
        if isinstance(event, ToolSetAnnounced):
            return self._add(Delta(tuple(event.added), tuple(event.removed), event.text))
        if isinstance(event, Notice):
            return self._add(Note(event.message, event.level))
        if isinstance(event, TaskListChanged):
            return self._tasks(event.tasks)
        if isinstance(event, ToolProgress):
            return self._progress(event)
        if isinstance(event, UsageReported):
            self.usage += event.usage
        elif isinstance(event, RunFinished):
            self.usage = event.usage
            self.stop_reason = event.stop_reason
        return None

    def _add(self, item: Item) -> Item:
        self.items.append(item)
        return item

    def _tasks(self, tasks: tuple[TaskItem, ...]) -> Tasks:
        checklist = next((i for i in self.items if isinstance(i, Tasks)), None)
        if checklist is None:
            checklist = Tasks()
            self.items.append(checklist)
        checklist.tasks = tasks
        return checklist

    def _progress(self, event: ToolProgress) -> Item | None:
        """Fold an event from inside a call into that call's own transcript."""
        call = self._call(event.id)
        if call is None:
            return None
        if call.inner is None:
            call.inner = Transcript()
        call.inner.apply(event.event)
        return call

    def _call(self, call_id: str) -> Call | None:
        return next(
            (i for i in reversed(self.items) if isinstance(i, Call) and i.id == call_id), None
        )

    def _finish(self, event: ToolCallFinished) -> Call:
        call = self._call(event.id)
        if call is None:
            call = Call(event.id, event.name, {})
            self.items.append(call)
        call.status, call.duration, call.permission = event.status, event.duration, event.permission
        call.result = result_text(event.content)[:FULL_CHARS]
        return call

    @property
    def calls(self) -> list[Call]:
        """The tool-call cards."""
        return [i for i in self.items if isinstance(i, Call)]

    @property
    def answer(self) -> str:
        """The last stretch of the answer."""
        answers = [i.text for i in self.items if isinstance(i, Answer)]
        return answers[-1] if answers else ""

    def to_html(self, max_calls: int | None = None) -> str:
        """Render the whole transcript as HTML (tool cards are ``<details>``: no script needed).

        Args:
            max_calls: Show at most this many tool cards (the latest), summarising the rest.

        Returns:
            The HTML.
        """
        meter = f'<div class="nbagent-meter">{html.escape(self.meter())}</div>'
        body = self._render(item_html, max_calls, meter, joiner="")
        return f'<div class="nbagent-transcript">{body}</div>'

    def to_markdown(self, max_calls: int | None = None) -> str:
        """Render the transcript as Markdown: what the cell keeps after the run.

        Args:
            max_calls: Show at most this many tool cards (the latest), summarising the rest.

        Returns:
            The Markdown.
        """
        return self._render(item_markdown, max_calls, f"<sub>{self.meter()}</sub>")

    def to_text(self, max_calls: int | None = None) -> str:
        """Render the transcript as plain text (a terminal, a log).

        Args:
            max_calls: Show at most this many tool calls (the latest), summarising the rest.

        Returns:
            The text.
        """
        return self._render(item_text, max_calls, self.meter())

    def _render(self, render: Any, max_calls: int | None, footer: str, joiner: str = "\n\n") -> str:
        skipped = _skipped_calls(self.calls, max_calls)
        parts = []
        for item in self.items:
            if isinstance(item, Call) and item.id in skipped:
                if item.id == next(iter(skipped)):
                    parts.append(f"… {len(skipped)} earlier tool calls not shown")
                continue
            parts.append(render(item))
        return redact(joiner.join([*parts, footer]))

    def meter(self) -> str:
        """The one-line token and cache meter."""
        line = usage_line(self.usage)
        if self.saved_tokens and self.saved_tokens > 0:
            line += f" · deferral keeps {self.saved_tokens:,} tokens of definitions out"
        if self.stop_reason and self.stop_reason not in ("end_turn", "stop_sequence"):
            line = f"stopped: {self.stop_reason} · {line}"
        return line


def usage_line(usage: Usage) -> str:
    """Token usage in one line.

    Args:
        usage: Usage of a run or a conversation.

    Returns:
        E.g. ``tokens: 1,200 in (1,000 from cache, 100 written to it), 80 out``.
    """
    return (
        f"tokens: {usage.total_input_tokens:,} in ({usage.cache_read_input_tokens:,} from "
        f"cache, {usage.cache_creation_input_tokens:,} written to it), "
        f"{usage.output_tokens:,} out"
    )


def item_html(item: Item) -> str:
    """Render one item as HTML.

    Args:
        item: The item.

    Returns:
        The HTML fragment.
    """
    if isinstance(item, Answer):
        return f'<div class="nbagent-answer">{markdown_html(item.text)}</div>'
    if isinstance(item, Call):
        return call_html(item)
    if isinstance(item, Tasks):
        return f'<div class="nbagent-tasks">{tasks_markdown(item).replace(chr(10), "<br>")}</div>'
    if isinstance(item, Search):
        return search_html(item)
    if isinstance(item, Delta):
        return f'<div class="nbagent-delta">{html.escape(delta_line(item))}</div>'
    cls = "nbagent-notice warning" if item.level == "warning" else "nbagent-notice"
    return f'<div class="{cls}">{html.escape(item.message)}</div>'


def call_html(call: Call) -> str:
    """A tool call as a collapsible card: name, input, status, duration, result.

    Args:
        call: The call.

    Returns:
        The ``<details>`` element.
    """
    head = (
        f"{STATUS_MARK.get(call.status, '?')} <b>{html.escape(call.name)}</b> "
        f'<span class="nbagent-args">{html.escape(brief(call.input, 80))}</span> '
        f'<span class="nbagent-status">{call.status}'
        f"{f' · {call.duration:.2f} s' if call.status != 'running' else ''}"
        f"{f' · {html.escape(call.permission)}' if call.permission else ''}</span>"
    )
    body = [f"<pre>{html.escape(json.dumps(call.input, indent=2, ensure_ascii=False))}</pre>"]
    if call.inner is not None:
        body.append(f'<div class="nbagent-inner">{call.inner.to_html()}</div>')
    if call.result:
        preview = call.result[:PREVIEW_CHARS]
        body.append(f"<pre>{html.escape(preview)}</pre>")
        if len(call.result) > PREVIEW_CHARS:
            body.append(
                f"<details><summary>show more ({len(call.result):,} characters)</summary>"
                f"<pre>{html.escape(call.result)}</pre></details>"
            )
    return (
        f'<details class="nbagent-call nbagent-{call.status}"><summary>{head}</summary>'
        f"{''.join(body)}</details>"
    )


def search_html(search: Search) -> str:
    """A ToolSearch as a table of hits with scores, reasons and what was loaded.

    Args:
        search: The search.

    Returns:
        The HTML table.
    """
    caption = f"ToolSearch <code>{html.escape(search.query)}</code>"
    if not search.hits:
        return f'<div class="nbagent-search">{caption}: no match</div>'
    shown = search.loaded is not None
    rows = "".join(
        f"<tr><td><code>{html.escape(name)}</code></td><td>{score:g}</td>"
        f"<td>{html.escape('; '.join(reasons))}</td>"
        + (f"<td>{search.context(name)}</td>" if shown else "")
        + "</tr>"
        for name, score, reasons in search.hits
    )
    context = "<th>context</th>" if shown else ""
    return (
        f'<table class="nbagent-search"><caption>{caption}</caption><thead><tr><th>tool</th>'
        f"<th>score</th><th>why</th>{context}</tr></thead><tbody>{rows}</tbody></table>"
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


def html_block(markup: str) -> str:
    """HTML that Markdown keeps whole, as one HTML block, whatever text it holds.

    In CommonMark (JupyterLab, nbconvert, GitHub) an HTML block that starts with a tag such as
    ``<details>`` ends at the first blank line; what follows is Markdown again, so a tool
    result's ``## heading`` would become a heading of the notebook and an indented line a code
    block. Blank lines inside become a zero-width space, which shows as the same empty line.

    Args:
        markup: HTML whose text is escaped.

    Returns:
        The HTML with no blank line.
    """
    return "\n".join(line if line.strip() else "&#8203;" for line in markup.split("\n"))


def item_markdown(item: Item) -> str:
    """Render one item as Markdown (tool cards as ``<details>`` HTML, which Markdown keeps).

    Args:
        item: The item.

    Returns:
        The Markdown.
    """
    if isinstance(item, Answer):
        return item.text
    if isinstance(item, Call):
        return html_block(call_html(item))
    if isinstance(item, Tasks):
        return tasks_markdown(item)
    if isinstance(item, Search):
        if not item.hits:
            return f"ToolSearch `{item.query}`: no match"
        shown = item.loaded is not None
        rows = "\n".join(
            f"| `{n}` | {s:g} | {'; '.join(r)} |" + (f" {item.context(n)} |" if shown else "")
            for n, s, r in item.hits
        )
        header = "| tool | score | why |" + (" context |" if shown else "")
        rule = "|---|---|---|" + ("---|" if shown else "")
        return f"ToolSearch `{item.query}`\n\n{header}\n{rule}\n{rows}"
    if isinstance(item, Delta):
        return f"**{delta_line(item)}**"
    return f"> Warning: {item.message}" if item.level == "warning" else f"> {item.message}"


def item_text(item: Item) -> str:
    """Render one item as plain text (a terminal).

    Args:
        item: The item.

    Returns:
        The text.
    """
    if isinstance(item, Call):
        line = (
            f"{STATUS_MARK.get(item.status, '?')} {item.name}({brief(item.input, 120)}) "
            f"{item.status} {item.duration:.2f} s"
        )
        if item.permission:
            line += f" · {item.permission}"
        if item.status not in ("ok", "running"):
            line += f"\n    {brief(item.result, PREVIEW_CHARS)}"
        if item.inner is not None:
            line += "\n" + "\n".join("    " + row for row in item.inner.to_text().splitlines())
        return line
    if isinstance(item, Search):
        hits = ", ".join(f"{n} ({s:g})" for n, s, _ in item.hits) or "no match"
        return f"ToolSearch {item.query!r}: {hits}"
    if isinstance(item, Delta):
        return delta_line(item)
    return item_markdown(item)


TASK_MARK = {"pending": "☐", "in_progress": "▶", "completed": "☑"}
"""The checkbox of each task status."""


def tasks_markdown(item: Tasks) -> str:
    """The task list as a checklist, one task a line.

    Args:
        item: The task list.

    Returns:
        E.g. ``☑ 1. Load the data`` lines under a heading.
    """
    rows = [f"{TASK_MARK[t.status]} {t.id}. {t.subject}" for t in item.tasks]
    done = sum(t.status == "completed" for t in item.tasks)
    return "\n".join([f"**Tasks** ({done}/{len(item.tasks)} done)", *rows])


def markdown_html(text: str) -> str:
    """Show Markdown source as HTML without a Markdown library: escaped, line breaks kept.

    The rich rendering of the answer is the Markdown output itself; this is the HTML
    fallback, readable as it is.

    Args:
        text: Markdown.

    Returns:
        HTML.
    """
    return f'<div style="white-space: pre-wrap">{html.escape(text)}</div>'


def result_text(content: Any) -> str:
    """A tool result's content as text (blocks named by type, references by tool).

    Args:
        content: A string or a list of content blocks.

    Returns:
        The text.
    """
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_reference":
            parts.append(f"→ loaded {block.get('tool_name')}")
        else:
            parts.append(f"[{block.get('type')}]")
    return "\n".join(parts)


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
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plural(count: int, noun: str) -> str:
    """``1 tool``, ``2 tools``.

    Args:
        count: How many.
        noun: The singular noun.

    Returns:
        The phrase.
    """
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


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


def _skipped_calls(calls: list[Call], max_calls: int | None) -> dict[str, None]:
    """The ids of the oldest calls beyond the cap, in order."""
    if max_calls is None or len(calls) <= max_calls:
        return {}
    return dict.fromkeys(c.id for c in calls[: len(calls) - max_calls])
