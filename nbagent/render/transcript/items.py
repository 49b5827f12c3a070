"""The items of a transcript: answer text, tool-call cards, searches, tool-set changes,
notices and the task list, as :class:`~nbagent.render.transcript.model.Transcript` folds them
from events.

An answer renders itself (it is the model's Markdown, redacted where rendered); the other items
are data that :mod:`~nbagent.render.transcript.html`, :mod:`~nbagent.render.transcript.markdown`
and :mod:`~nbagent.render.transcript.text` draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from nbagent.core.events import TaskItem, WebSearched
from nbagent.core.markup import html_block, model_html
from nbagent.core.secrets import redact, streamable
from nbagent.render.web_view import Mark, citation_inserts, cited_text, sources_html, sources_text

if TYPE_CHECKING:
    from nbagent.render.transcript.model import Transcript


FULL_CHARS = 20_000
"""How much of a tool result a card keeps at all."""


PREVIEW_CHARS = 300
"""How much of a tool result a card shows before "show more"."""


STATE_WORDS = {"running": "running…", "waiting": "waiting for your answer"}
"""What a card says in place of a result while the call has none."""


@dataclass
class AnswerItem:
    """A stretch of the model's text: narration between tool calls, or the final answer."""

    text: str = ""
    """The Markdown so far."""
    final: bool = False
    """The run's answer: the last stretch of a finished run, with no tool call after it."""
    marks: list[Mark] = field(default_factory=list)
    """Where it cites web pages, and which."""

    @property
    def html(self) -> str:
        """The text rendered (:func:`~nbagent.core.markup.model_html`), with its citation markers,
        then its sources."""
        return model_html(self.text, citation_inserts(self.marks)) + sources_html(self.marks)

    @property
    def markdown(self) -> str:
        """The Markdown shown: the rendered text as one HTML block, in a ``<div>`` of its class
        (``nbagent-answer`` or ``nbagent-narration``)."""
        return html_block(f'<div class="{answer_class(self)}">{self.html}</div>')

    @property
    def plain(self) -> str:
        """The text shown in a terminal: ``[1]`` markers, then the sources (redacted)."""
        listed = sources_text(self.marks)
        body = cited_text(self.text, self.marks)
        return redact(f"{body}\n\n{listed}" if listed else body)


def answer_class(answer: AnswerItem) -> str:
    """The class of a stretch of text: the run's answer, or narration.

    Args:
        answer: The stretch.

    Returns:
        ``nbagent-answer`` or ``nbagent-narration``.
    """
    return "nbagent-answer" if answer.final else "nbagent-narration"


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
    """running, waiting (for the user's answer), ok, error, denied or interrupted."""
    duration: float = 0.0
    """Seconds it ran."""
    result: str = ""
    """What the model was sent, as text (cut at FULL_CHARS)."""
    summary: str = ""
    """The result in a few words, as the tool gave it (empty: the card derives one)."""
    review: str = ""
    """The change the call made, as words and fenced diffs (empty: none to show)."""
    permission: str = ""
    """The permission decision, when one applied."""
    request: str = ""
    """What the call would do, as the user was asked about it (empty: nobody was asked)."""
    reason: str = ""
    """Why it needed approval, when the policy said."""
    always: str = ""
    """The allow rule that answering "always" adds."""
    answer: str = ""
    """The user's answer: yes, no or always (empty: none yet, or nobody was asked)."""
    rule: str = ""
    """The allow rule the answer "always" added."""
    search: Search | None = None
    """What a ToolSearch call found and loaded (its table is the card's body)."""
    web: WebSearched | None = None
    """What a web search (run by the API) found (its pages are the card's body)."""
    inner: Transcript | None = None
    """What happened inside the call (a sub-agent's own run), if anything."""


@dataclass
class Tasks:
    """The agent's task list, as a checklist (one item, updated in place)."""

    tasks: tuple[TaskItem, ...] = ()
    """The tasks, in order."""


@dataclass
class Search:
    """A ToolSearch: the hits of a query, and what it loaded."""

    query: str
    """The query."""
    hits: list[tuple[str, float, tuple[str, ...]]]
    """Name, score and reasons of each hit, best first."""
    loaded: tuple[str, ...] | None
    """The names this search loaded into the model's context; None for a search the model
    did not make (``%tool_search``)."""
    fallback: str = ""
    """How the hits were ranked when the full scoring was not ready (empty when it was)."""

    def context(self, name: str) -> str:
        """What the search did to one hit's place in the model's context."""
        return "loaded" if self.loaded and name in self.loaded else "already loaded"

    def printed_hits(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """Name, score as printed (all with one number of decimals: :func:`score_texts`) and
        reasons of each hit, best first."""
        scores = score_texts([score for _, score, _ in self.hits])
        return [
            (name, score, reasons)
            for (name, _, reasons), score in zip(self.hits, scores, strict=True)
        ]


def score_texts(scores: Sequence[float]) -> list[str]:
    """Format scores with one number of decimals, as many as the most precise needs (at most 3).

    So the best hybrid hit reads ``1.000`` beside ``0.853``, and whole keyword scores stay
    whole (``12``, ``8``).

    Args:
        scores: The scores of one search, in any order.

    Returns:
        Each score as text, in the given order.
    """
    decimals = max((len(f"{s:.3f}".rstrip("0").partition(".")[2]) for s in scores), default=0)
    return [f"{s:.{decimals}f}" for s in scores]


@dataclass
class Delta:
    """A change of the deferred tools, as the model was told it."""

    added: tuple[str, ...]
    """Names now available."""
    removed: tuple[str, ...]
    """Names gone."""
    text: str
    """The exact text the model received."""
    initial: bool = False
    """The conversation's first announcement (no news: the tools there from the start)."""


@dataclass
class Note:
    """A notice (a retry, a limit)."""

    message: str
    """What happened."""
    level: str = "info"
    """info or warning."""
    detail: str = ""
    """More, folded under the message (a thinking summary)."""


Item = AnswerItem | Call | Tasks | Search | Delta | Note


def visible(item: Item, verbose: bool = False) -> bool:
    """Tell whether a mode shows an item (the quiet mode leaves out the first announcement).

    Args:
        item: An item of a transcript.
        verbose: The verbose mode.

    Returns:
        Whether the item is shown.
    """
    return verbose or not (isinstance(item, Delta) and item.initial)


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


def so_far(answer: AnswerItem) -> AnswerItem:
    """A stretch of text still streaming in, as far as it can be shown now.

    Args:
        answer: The stretch of text.

    Returns:
        A copy without its unfinished end (:func:`~nbagent.core.secrets.streamable`).
    """
    text = streamable(answer.text)
    marks = [mark for mark in answer.marks if mark.end <= len(text)]
    return replace(answer, text=text, marks=marks)
