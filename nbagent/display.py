"""Rendering a run's events in the running cell.

:class:`CellTranscript` turns :mod:`nbagent.events` into rich outputs that every front end
reads (Markdown and plain text: JupyterLab, nbconvert, GitHub, VS Code, terminal IPython):
the answer as it streams, a line per tool call, the ToolSearch hits, and a banner when
deferred tools come or go, with exactly the names the model was told. Outputs are updated
in place through display handles, so the cell keeps a static transcript once the run ends.

This module depends on the events only, never on the agent loop.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from IPython.display import DisplayHandle, display

from nbagent.events import (
    Event,
    Notice,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSearchResults,
    ToolSetAnnounced,
    Usage,
)
from nbagent.text import MCP_PREFIX

STREAM_INTERVAL = 0.1
"""Seconds between two updates of the streaming answer."""

MAX_INPUT_CHARS = 120
"""How much of a tool call's input its line shows."""

MAX_RESULT_CHARS = 300
"""How much of a tool call's result its line shows."""

_STATUS_MARK = {"ok": "✓", "error": "✗", "denied": "⛔", "interrupted": "■"}


class Markdown:
    """Markdown text that renders as Markdown in notebooks and as itself in a terminal.

    (IPython's own ``Markdown`` shows ``<IPython.core.display.Markdown object>`` as text.)

    Args:
        text: The Markdown source.
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        """The Markdown, for rich front ends."""
        return self.text

    def __repr__(self) -> str:
        """The Markdown source, for plain-text front ends."""
        return self.text


class CellTranscript:
    """Shows one run's events as outputs of the running cell.

    Args:
        quiet: Show only the final answer.
        stream: Update the answer as it streams in (else show it when the turn ends).
    """

    def __init__(self, quiet: bool = False, stream: bool = True) -> None:
        self.quiet = quiet
        self.stream = stream
        self._text = ""
        self._text_handle: DisplayHandle | None = None
        self._last_update = 0.0
        self._calls: dict[str, tuple[DisplayHandle, str]] = {}

    def __call__(self, event: Event) -> None:
        """Render one event.

        Args:
            event: Any event of a run.
        """
        if isinstance(event, TextDelta):
            self._on_text(event.text)
        elif isinstance(event, RunFinished):
            self._on_finished(event)
        elif self.quiet:
            return
        elif isinstance(event, ToolCallStarted):
            self._flush_text()
            line = f"⏳ `{event.name}` {_brief(event.input, MAX_INPUT_CHARS)}"
            self._calls[event.id] = (display(Markdown(line), display_id=True), line)
        elif isinstance(event, ToolCallFinished):
            self._on_call_finished(event)
        elif isinstance(event, ToolSearchResults):
            display(Markdown(search_table(event.query, event.hits, event.loaded)))
        elif isinstance(event, ToolSetAnnounced):
            display(Markdown(delta_banner(event.added, event.removed)))
        elif isinstance(event, Notice):
            display(
                Markdown(
                    f"> ⚠ {event.message}" if event.level == "warning" else f"> {event.message}"
                )
            )

    def _on_text(self, text: str) -> None:
        self._text += text
        if self.quiet or not self.stream:
            return
        now = time.monotonic()
        if self._text_handle is None:
            self._text_handle = display(Markdown(self._text), display_id=True)
            self._last_update = now
        elif now - self._last_update >= STREAM_INTERVAL:
            self._text_handle.update(Markdown(self._text))
            self._last_update = now

    def _flush_text(self) -> None:
        """End the current text block (a tool call follows it)."""
        if self._text and not self.quiet:
            if self._text_handle is None:
                display(Markdown(self._text))
            else:
                self._text_handle.update(Markdown(self._text))
        self._text, self._text_handle = "", None

    def _on_call_finished(self, event: ToolCallFinished) -> None:
        handle, started = self._calls.pop(event.id, (None, f"`{event.name}`"))
        mark = _STATUS_MARK.get(event.status, "?")
        line = started.replace("⏳", mark, 1) + f" · {event.duration:.2f} s"
        if event.permission:
            line += f" · {event.permission}"
        if event.status != "ok":
            line += f"\n\n  {event.status}: {_brief(event.content, MAX_RESULT_CHARS)}"
        if handle is None:
            display(Markdown(line))
        else:
            handle.update(Markdown(line))

    def _on_finished(self, event: RunFinished) -> None:
        if self.quiet:
            display(Markdown(event.text or "(no answer)"))
        else:
            self._flush_text()
            tail = (
                ""
                if event.stop_reason in ("end_turn", "stop_sequence")
                else (f"*Stopped: {event.stop_reason}.* ")
            )
            display(Markdown(f"<sub>{tail}{usage_line(event.usage)}</sub>"))


def usage_line(usage: Usage) -> str:
    """Summarise token usage in one line.

    Args:
        usage: Usage summed over a run.

    Returns:
        E.g. ``tokens: 1,200 in (1,000 from cache, 100 written to it), 80 out``.
    """
    return (
        f"tokens: {usage.total_input_tokens:,} in ({usage.cache_read_input_tokens:,} from "
        f"cache, {usage.cache_creation_input_tokens:,} written to it), "
        f"{usage.output_tokens:,} out"
    )


def search_table(query: str, hits: Sequence[Any], loaded: Sequence[str] | None = None) -> str:
    """Render ToolSearch hits as a Markdown table.

    Args:
        query: The query.
        hits: SearchHits, best first.
        loaded: The names this search loaded into the model's context; None for a search
            the model did not make (no "loaded" column).

    Returns:
        The Markdown.
    """
    if not hits:
        return f"🔎 ToolSearch `{query}`: no match"
    header = "| tool | score | why |" + (" context |" if loaded is not None else "")
    rule = "|---|---|---|" + ("---|" if loaded is not None else "")
    rows = "\n".join(
        f"| `{h.name}` | {h.score:g} | {'; '.join(h.reasons)} |"
        + ("" if loaded is None else f" {'loaded' if h.name in loaded else 'already loaded'} |")
        for h in hits
    )
    return f"🔎 ToolSearch `{query}`\n\n{header}\n{rule}\n{rows}"


def delta_banner(added: Sequence[str], removed: Sequence[str]) -> str:
    """Render a change of the deferred tools, grouped by MCP server with counts.

    Args:
        added: Names now available.
        removed: Names gone.

    Returns:
        The Markdown banner.
    """
    parts = []
    if added:
        parts.append(f"🔌 **{plural(len(added), 'deferred tool')} available**: {_grouped(added)}")
    if removed:
        parts.append(f"🔌 **{plural(len(removed), 'deferred tool')} removed**: {_grouped(removed)}")
    return "\n\n".join(parts)


def plural(count: int, noun: str) -> str:
    """``1 tool``, ``2 tools``.

    Args:
        count: How many.
        noun: The singular noun.
    """
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _grouped(names: Sequence[str]) -> str:
    """``mcp__github__ (12), Read`` for a list of names."""
    counts: dict[str, int] = {}
    for name in names:
        server = name[len(MCP_PREFIX) :].split("__", 1)[0] if name.startswith(MCP_PREFIX) else ""
        key = f"{MCP_PREFIX}{server}__" if server else name
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(
        f"`{key}` ({n})" if n > 1 or key.startswith(MCP_PREFIX) else f"`{key}`"
        for key, n in counts.items()
    )


def _brief(value: Any, limit: int) -> str:
    """A one-line, cut rendering of a tool input or result."""
    if isinstance(value, dict):
        text = ", ".join(f"{k}={v!r}" for k, v in value.items())
    elif isinstance(value, list):
        text = ", ".join(
            str(b.get("tool_name") or b.get("type")) for b in value if isinstance(b, dict)
        )
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
