"""A run as a list of items, and its static renderings (HTML, Markdown, plain text).

:class:`Transcript` folds :mod:`nbagent.core.events` into items: answer text, tool-call cards,
deferred-tool banners, notices, a task list and a usage meter. The live widget view and the
static outputs a cell keeps after the run are both drawn from it, so they always agree, and a
notebook read without a kernel (nbconvert, GitHub, VS Code) shows the same transcript.

What comes from outside is redacted as it is folded in (:mod:`nbagent.core.secrets`): a call's
input, result, summary and question, a search's query, a notice, a task; so no rendering, nor
a line cut short, shows a secret or the start of one. The model's text is redacted where it is
rendered (:func:`~nbagent.core.markup.model_html`, :attr:`Answer.plain`): it streams in piece by
piece.

Every renderer takes a mode. The quiet default shows a tool call as one line, its main
argument and its result in a few words (``✓ Read sales.csv → 42 lines``), the input and the
result inside the card; the verbose mode adds the input JSON, status, duration and permission
decision of every call, and the conversation's first announcement of the deferred tools.
Pure Python: no IPython, no widgets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nbagent.core.events import (
    Event,
    Notice,
    PermissionAnswered,
    PermissionRequested,
    RunFinished,
    TaskItem,
    TaskListChanged,
    TextCited,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    ToolSearchResults,
    ToolSetAnnounced,
    Usage,
    UsageReported,
    WebSearched,
)
from nbagent.core.markup import (
    NO_MATH,
    code_markdown,
    escape_html,
    html_block,
    model_html,
    plain_markdown,
    show_controls,
)
from nbagent.core.secrets import ONE_LINE, redact, redact_value
from nbagent.core.text import MCP_PREFIX, cut, first_line
from nbagent.render.codeview import code_html, question_parts, short_id, words_of
from nbagent.render.web_view import (
    Mark,
    Source,
    citation_inserts,
    cited_text,
    pages_html,
    pages_text,
    sources_html,
    sources_text,
    web_summary,
)

PREVIEW_CHARS = 300
"""How much of a tool result a card shows before "show more"."""

FULL_CHARS = 20_000
"""How much of a tool result a card keeps at all."""

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

STATE_WORDS = {"running": "running…", "waiting": "waiting for your answer"}
"""What a card says in place of a result while the call has none."""

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


@dataclass
class Answer:
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


Item = Answer | Call | Tasks | Search | Delta | Note


def visible(item: Item, verbose: bool = False) -> bool:
    """Tell whether a mode shows an item (the quiet mode leaves out the first announcement).

    Args:
        item: An item of a transcript.
        verbose: The verbose mode.

    Returns:
        Whether the item is shown.
    """
    return verbose or not (isinstance(item, Delta) and item.initial)


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
    cost: Callable[[Usage], str] | None = None
    """Estimates what the tokens cost (``≈ $0.012``), when a price is known to the caller."""
    context: Callable[[], str] | None = None
    """Says how full the model's context window is (``context: 45,120 of 200,000 tokens``)."""
    sources: dict[str, Source] = field(default_factory=dict)
    """The web pages cited so far, by address (numbered in the order first cited)."""

    def apply(self, event: Event) -> Item | None:
        """Fold one event in.

        Args:
            event: Any event of a run.

        Returns:
            The item created or changed, or None.
        """
        if isinstance(event, TextDelta):
            return self._text(event.text)
        if isinstance(event, ToolCallStarted):
            return self._add(Call(event.id, event.name, redact_value(dict(event.input))))
        if isinstance(event, ToolCallFinished):
            return self._finish(event)
        if isinstance(event, PermissionRequested):
            return self._ask(event)
        if isinstance(event, PermissionAnswered):
            return self._answer(event)
        if isinstance(event, ToolSearchResults):
            return self._search(event)
        if isinstance(event, WebSearched):
            return self._web(event)
        if isinstance(event, TextCited):
            return self._cite(event)
        if isinstance(event, ToolSetAnnounced):
            return self._add(
                Delta(tuple(event.added), tuple(event.removed), event.text, event.initial)
            )
        if isinstance(event, Notice):
            return self._add(Note(redact(event.message), event.level))
        if isinstance(event, TaskListChanged):
            return self._tasks(event.tasks)
        if isinstance(event, ToolProgress):
            return self._progress(event)
        if isinstance(event, UsageReported):
            self.usage += event.usage
        elif isinstance(event, RunFinished):
            return self._end(event)
        return None

    def _add(self, item: Item) -> Item:
        self.items.append(item)
        return item

    def _text(self, text: str) -> Answer:
        last = self.items[-1] if self.items else None
        answer = last if isinstance(last, Answer) else self._add(Answer())
        assert isinstance(answer, Answer)
        answer.text += text
        return answer

    def _tasks(self, tasks: tuple[TaskItem, ...]) -> Tasks:
        tasks = tuple(replace(task, subject=redact(task.subject)) for task in tasks)
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

    def _card(self, call_id: str, name: str) -> Call:
        """The card of a call, made if the call has none yet."""
        call = self._call(call_id)
        if call is None:
            call = Call(call_id, name, {})
            self.items.append(call)
        return call

    def _finish(self, event: ToolCallFinished) -> Call:
        call = self._card(event.id, event.name)
        call.status, call.duration = event.status, event.duration
        call.permission = redact(event.permission)
        call.result = redact(result_text(event.content))[:FULL_CHARS]
        call.summary = redact(event.summary)
        if call.inner is not None:
            call.inner.end_open_calls()
        return call

    def end_open_calls(self) -> None:
        """Mark the calls still running or waiting for an answer interrupted, here and in
        the transcripts inside: the call this one shows ended without them (a sub-agent's call
        stopped or abandoned at its time limit, its open question withdrawn)."""
        for call in self.calls:
            if call.status in STATE_WORDS:
                call.status = "interrupted"
            if call.inner is not None:
                call.inner.end_open_calls()

    def _ask(self, event: PermissionRequested) -> Call:
        call = self._card(event.id, event.name)
        call.status, call.request = "waiting", redact(event.request, shapes=ONE_LINE)
        call.reason, call.always = (
            redact(event.reason, shapes=ONE_LINE),
            redact(event.always, shapes=ONE_LINE),
        )
        return call

    def _answer(self, event: PermissionAnswered) -> Call | None:
        call = self._call(event.id)
        if call is None:
            return None
        call.answer, call.rule = event.answer, redact(event.rule)
        call.status = "denied" if event.answer == "no" else "running"
        return call

    def _search(self, event: ToolSearchResults) -> Item:
        """Make a search the body of its ToolSearch call's card (an item of its own if none)."""
        hits = [(h.name, h.score, tuple(h.reasons)) for h in event.hits]
        search = Search(redact(event.query), hits, tuple(event.loaded), event.fallback)
        call = self._call(event.id)
        if call is None:
            return self._add(search)
        call.search = search
        return call

    def _web(self, event: WebSearched) -> Call:
        """A web search's card: done already (the API ran it inside its answer)."""
        call = Call(event.id, "web_search", {"query": redact(event.query)}, web=event)
        call.status = "error" if event.error else "ok"
        call.result = redact(pages_text(event))
        return self._add(call)  # type: ignore[return-value]

    def _cite(self, event: TextCited) -> Answer | None:
        """Mark the end of the text streamed last as citing these pages."""
        answer = self.items[-1] if self.items else None
        if not isinstance(answer, Answer):
            return None
        for citation in event.citations:
            source = self.sources.setdefault(citation.url, Source(len(self.sources) + 1, citation))
            answer.marks.append(Mark(len(answer.text), source, citation.cited_text))
        return answer

    def _end(self, event: RunFinished) -> Answer | None:
        """Note why the run ended, and mark its answer."""
        self.usage = event.usage
        self.stop_reason = event.stop_reason
        talk = [i for i in self.items if isinstance(i, Answer | Call)]
        if talk and isinstance(talk[-1], Answer):
            talk[-1].final = True
            return talk[-1]
        return None

    @property
    def calls(self) -> list[Call]:
        """The tool-call cards."""
        return [i for i in self.items if isinstance(i, Call)]

    @property
    def answer(self) -> str:
        """The last stretch of the answer."""
        answers = [i.text for i in self.items if isinstance(i, Answer)]
        return answers[-1] if answers else ""

    def to_html(self, max_calls: int | None = None, verbose: bool = False) -> str:
        """Render the whole transcript as HTML (tool cards are ``<details>``: no script needed).

        Args:
            max_calls: Show at most this many tool cards (the latest), summarising the rest.
            verbose: Every call's input JSON, status, duration and permission decision, and
                the first announcement of the deferred tools.

        Returns:
            The HTML.
        """
        meter = f'<div class="nbagent-meter">{escape_html(self.meter())}</div>'
        body = self._render(lambda i: item_html(i, verbose), max_calls, verbose, meter, "")
        return f'<div class="nbagent-transcript">{body}</div>'

    def to_markdown(self, max_calls: int | None = None, verbose: bool = False) -> str:
        """Render the transcript as Markdown: what the cell keeps after the run.

        Args:
            max_calls: Show at most this many tool cards (the latest), summarising the rest.
            verbose: Every call's input JSON, status, duration and permission decision, and
                the first announcement of the deferred tools.

        Returns:
            The Markdown.
        """
        meter = f'<sub class="nbagent-meter">{plain_markdown(self.meter())}</sub>'
        return self._render(lambda i: item_markdown(i, verbose), max_calls, verbose, meter)

    def to_text(self, max_calls: int | None = None, verbose: bool = False) -> str:
        """Render the transcript as plain text (a terminal, a log).

        Args:
            max_calls: Show at most this many tool calls (the latest), summarising the rest.
            verbose: Every call's status, duration and permission decision, and the first
                announcement of the deferred tools.

        Returns:
            The text.
        """
        return self._render(lambda i: item_text(i, verbose), max_calls, verbose, self.meter())

    def _render(
        self,
        render: Callable[[Item], str],
        max_calls: int | None,
        verbose: bool,
        footer: str,
        joiner: str = "\n\n",
    ) -> str:
        skipped = _skipped_calls(self.calls, max_calls)
        parts = []
        for item in self.items:
            if isinstance(item, Call) and item.id in skipped:
                if item.id == next(iter(skipped)):
                    parts.append(f"… {len(skipped)} earlier tool calls not shown")
                continue
            if visible(item, verbose):
                parts.append(render(item))
        return show_controls(redact(joiner.join([*parts, footer]), shapes=ONE_LINE))

    def meter(self) -> str:
        """The one-line token and cache meter."""
        line = usage_line(self.usage)
        if self.cost is not None:
            line += f" · {self.cost(self.usage)}"
        if self.context is not None and self.usage.total_input_tokens:
            line += f" · {self.context()}"
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
        E.g. ``tokens: 1,200 in (1,000 from cache, 100 written to it), 80 out``, and
        ``· 2 web searches`` when the API searched.
    """
    searches = usage.web_search_requests
    return (
        f"tokens: {usage.total_input_tokens:,} in ({usage.cache_read_input_tokens:,} from "
        f"cache, {usage.cache_creation_input_tokens:,} written to it), "
        f"{usage.output_tokens:,} out"
    ) + (f" · {plural(searches, 'web search', 'web searches')}" if searches else "")


# One-line summaries of a call: what it is about, and what came of it.


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
                return short_id(one_line(value))
            if key in QUOTED_ARGUMENTS:
                return f'"{cut(one_line(value), limit - 2)}"'
            if key in PATH_ARGUMENTS:
                return cut_start(one_line(value), limit)
            return cut(one_line(value), limit)
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
    why = f" ({one_line(words)})" if words else ""
    if withdrawn(call):
        return f"asked: {one_line(call.request)}{why} · withdrawn before an answer"
    return f"asked: {one_line(call.request)}{why} · answered: {call.answer or 'nothing'}"


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


# HTML: the live view, and the cards of the saved Markdown.


def item_html(item: Item, verbose: bool = False) -> str:
    """Render one item as HTML.

    Args:
        item: The item.
        verbose: The verbose mode (for tool cards).

    Returns:
        The HTML fragment.
    """
    if isinstance(item, Answer):
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
    return f'<div class="{cls}">{escape_html(item.message)}</div>'


def answer_class(answer: Answer) -> str:
    """The class of a stretch of text: the run's answer, or narration.

    Args:
        answer: The stretch.

    Returns:
        ``nbagent-answer`` or ``nbagent-narration``.
    """
    return "nbagent-answer" if answer.final else "nbagent-narration"


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


HEAD_TAGS = {"mark": "span", "name": "b", "arg": "code", "result": "span", "notes": "span"}
"""The element of each part of a card's line (each gets the class ``nbagent-<part>``)."""


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


def head_line(call: Call, verbose: bool = False) -> str:
    """A card's line as plain text.

    Args:
        call: The call.
        verbose: The verbose mode.

    Returns:
        E.g. ``✓ Read sales.csv → 42 lines · allowed by you``.
    """
    return " ".join(text for _, text in head_parts(call, verbose))


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
    if verbose:
        body.append(full_input)
    elif call.input:
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


# Markdown: what the cell keeps.


def item_markdown(item: Item, verbose: bool = False) -> str:
    """Render one item as Markdown (tool cards as ``<details>`` HTML, which Markdown keeps).

    Args:
        item: The item.
        verbose: The verbose mode (for tool cards).

    Returns:
        The Markdown.
    """
    if isinstance(item, Answer):
        return answer_markdown(item)
    if isinstance(item, Call):
        return html_block(call_html(item, verbose))
    if isinstance(item, Tasks):
        return tasks_markdown(item)
    if isinstance(item, Search):
        return search_markdown(item)
    if isinstance(item, Delta):
        return f"**{plain_markdown(delta_line(item))}**"
    message = plain_markdown(item.message)
    return f"> Warning: {message}" if item.level == "warning" else f"> {message}"


def answer_markdown(answer: Answer) -> str:
    """A stretch of text as Markdown; the run's answer is set apart from the narration.

    The text is rendered here (:func:`~nbagent.core.markup.model_html`: no raw HTML, web links
    only) and kept as one HTML block; the answer goes after a rule.

    Args:
        answer: The stretch.

    Returns:
        The Markdown.
    """
    if not answer.final:
        return answer.markdown
    return html_block(f'<hr class="nbagent-rule">\n{answer.markdown}')


def search_markdown(search: Search) -> str:
    """A ToolSearch as a Markdown table (``%tool_search``, or a search without a card).

    Args:
        search: The search.

    Returns:
        The Markdown.
    """
    note = f"\n\nRanked by {plain_markdown(search.fallback)}." if search.fallback else ""
    query = code_markdown(search.query)
    if not search.hits:
        return f"ToolSearch {query}: no match{note}"
    shown = search.loaded is not None
    rows = "\n".join(
        f"| {code_markdown(n)} | {s} | {plain_markdown('; '.join(r))} |"
        + (f" {search.context(n)} |" if shown else "")
        for n, s, r in search.printed_hits()
    )
    header = "| tool | score | why |" + (" context |" if shown else "")
    rule = "|---|--:|---|" + ("---|" if shown else "")
    return f"ToolSearch {query}\n\n{header}\n{rule}\n{rows}{note}"


# Plain text: a terminal.


def item_text(item: Item, verbose: bool = False) -> str:
    """Render one item as plain text (a terminal).

    Args:
        item: The item.
        verbose: The verbose mode (for tool calls).

    Returns:
        The text.
    """
    if isinstance(item, Answer):
        return item.plain
    if isinstance(item, Call):
        return call_text(item, verbose)
    if isinstance(item, Search):
        return search_line(item)
    if isinstance(item, Delta):
        return delta_line(item)
    if isinstance(item, Tasks):
        return tasks_text(item)
    return f"> Warning: {item.message}" if item.level == "warning" else f"> {item.message}"


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


def search_line(search: Search) -> str:
    """A ToolSearch's hits in one line.

    Args:
        search: The search.

    Returns:
        E.g. ``ToolSearch 'weather': get_forecast (12), get_alerts (8)``.
    """
    hits = ", ".join(f"{n} ({s})" for n, s, _ in search.printed_hits()) or "no match"
    return f"ToolSearch {search.query!r}: {hits}"


TASK_MARK = {"pending": "☐", "in_progress": "▶", "completed": "☑"}
"""The checkbox of each task status."""


def tasks_markdown(item: Tasks) -> str:
    """The task list as a checklist, one task a line.

    Args:
        item: The task list.

    Returns:
        E.g. ``☑ 1. Load the data`` lines under a heading (each subject shown as written).
    """
    rows = [f"{TASK_MARK[t.status]} {plain_markdown(f'{t.id}. {t.subject}')}" for t in item.tasks]
    return "  \n".join([f"**{tasks_heading(item)}**", *rows])


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


def tasks_text(item: Tasks) -> str:
    """The task list as plain text, one task a line.

    Args:
        item: The task list.

    Returns:
        The lines.
    """
    rows = [f"{TASK_MARK[t.status]} {t.id}. {t.subject}" for t in item.tasks]
    return "\n".join([tasks_heading(item), *rows])


def tasks_heading(item: Tasks) -> str:
    """The task list's heading: ``Tasks (1/3 done)``."""
    done = sum(t.status == "completed" for t in item.tasks)
    return f"Tasks ({done}/{len(item.tasks)} done)"


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
    return cut(" ".join(text.split()), limit)


def one_line(text: str) -> str:
    """The first non-blank line of a text, with `` …`` when more lines follow.

    Args:
        text: Any text (a command, a piece of code).

    Returns:
        The line, its runs of spaces kept.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[0].strip() + (" …" if len(lines) > 1 else "")


def cut_start(text: str, limit: int) -> str:
    """A text cut to ``limit`` characters from the start (a long path keeps its end).

    Args:
        text: The text.
        limit: The most characters (at least 1).

    Returns:
        The text, or ``…`` and its end.
    """
    return text if len(text) <= limit else "…" + text[len(text) - max(limit - 1, 0) :]


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


def plural(count: int, noun: str, nouns: str = "") -> str:
    """``1 tool``, ``2 tools``.

    Args:
        count: How many.
        noun: The singular noun.
        nouns: The plural noun, when it is not ``noun`` and an s.

    Returns:
        The phrase.
    """
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


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
