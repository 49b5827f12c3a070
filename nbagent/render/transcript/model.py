"""The transcript of a run: :class:`Transcript` folds events into items, and renders them
whole as HTML, Markdown or plain text (the verbose or the quiet mode, the oldest calls counted
past a cap).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

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
from nbagent.core.markup import escape_html, plain_markdown, show_controls
from nbagent.core.secrets import ONE_LINE, redact, redact_value
from nbagent.render.transcript.html import item_html
from nbagent.render.transcript.items import (
    FULL_CHARS,
    STATE_WORDS,
    AnswerItem,
    Call,
    Delta,
    Item,
    Note,
    Search,
    Tasks,
    result_text,
    visible,
)
from nbagent.render.transcript.markdown import item_markdown
from nbagent.render.transcript.summaries import usage_line
from nbagent.render.transcript.text import item_text
from nbagent.render.web_view import Mark, Source, pages_text


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
            return self._add(Note(redact(event.message), event.level, redact(event.detail)))
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

    def _text(self, text: str) -> AnswerItem:
        last = self.items[-1] if self.items else None
        answer = last if isinstance(last, AnswerItem) else self._add(AnswerItem())
        assert isinstance(answer, AnswerItem)
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
        call.review = redact(event.review)
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

    def _cite(self, event: TextCited) -> AnswerItem | None:
        """Mark the end of the text streamed last as citing these pages."""
        answer = self.items[-1] if self.items else None
        if not isinstance(answer, AnswerItem):
            return None
        for citation in event.citations:
            source = self.sources.setdefault(citation.url, Source(len(self.sources) + 1, citation))
            answer.marks.append(Mark(len(answer.text), source, citation.cited_text))
        return answer

    def _end(self, event: RunFinished) -> AnswerItem | None:
        """Note why the run ended, and mark its answer."""
        self.usage = event.usage
        self.stop_reason = event.stop_reason
        talk = [i for i in self.items if isinstance(i, AnswerItem | Call)]
        if talk and isinstance(talk[-1], AnswerItem):
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
        answers = [i.text for i in self.items if isinstance(i, AnswerItem)]
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


def _skipped_calls(calls: list[Call], max_calls: int | None) -> dict[str, None]:
    """The ids of the oldest calls beyond the cap, in order."""
    if max_calls is None or len(calls) <= max_calls:
        return {}
    return dict.fromkeys(c.id for c in calls[: len(calls) - max_calls])
