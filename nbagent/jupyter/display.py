"""Rendering a run's events in the running cell.

:class:`CellTranscript` folds events into a :class:`~nbagent.render.transcript.model.Transcript`
and shows it live: in a kernel as one output updated in place while the run only writes its
answer, as ipywidgets (:mod:`nbagent.jupyter.widgets`) from its first tool call, notice or
question on; in a terminal as printed lines. A cell that only answers thus makes no widget:
its output is sent two or three times, not the thirty messages of a widget tree.
When the run ends, the live view is replaced by one static Markdown output (tool cards as
``<details>``), which JupyterLab, nbconvert, GitHub and VS Code all render without a kernel.

This module depends on the events only, never on the agent loop.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from IPython.display import DisplayHandle, display

from nbagent.core.events import (
    Event,
    PermissionRequested,
    RunFinished,
    TextDelta,
    Usage,
    UsageReported,
)
from nbagent.core.markup import Markdown, model_markdown, show_controls
from nbagent.core.secrets import redact
from nbagent.jupyter.outputs import in_kernel
from nbagent.render.transcript.items import (
    STATE_WORDS,
    AnswerItem,
    Call,
    Item,
    so_far,
    visible,
)
from nbagent.render.transcript.model import Transcript
from nbagent.render.transcript.text import item_text

STREAM_INTERVAL = 0.1
"""Seconds between two refreshes of the streaming answer."""

MAX_STATIC_CARDS = 200
"""Tool cards kept in the static transcript (the latest); older ones are counted."""


class CellTranscript:
    """Shows one run's events as outputs of the running cell.

    Args:
        quiet: Show only the final answer.
        stream: Refresh the answer as it streams in (else when the turn ends).
        live: Show widgets while the run goes on; by default, when in a kernel.
        saved_tokens: Tokens that deferral keeps out of the context, for the meter.
        verbose: Show every call's input JSON, status, duration and permission decision, and
            the conversation's first announcement of the deferred tools (for tool authors);
            by default a call is one line, its main argument and its result in a few words.
        cost: Estimates what the tokens cost, for the meter (none shown without it).
        context: Says how full the context window is, for the meter.
    """

    def __init__(
        self,
        quiet: bool = False,
        stream: bool = True,
        live: bool | None = None,
        saved_tokens: int | None = None,
        verbose: bool = False,
        cost: Callable[[Usage], str] | None = None,
        context: Callable[[], str] | None = None,
    ) -> None:
        self.quiet = quiet
        self.stream = stream
        self.verbose = verbose
        self.transcript = Transcript(saved_tokens=saved_tokens, cost=cost, context=context)
        self._last_refresh = 0.0
        self._live = not quiet and (in_kernel() if live is None else live)
        self._view: Any = None
        self._handle: DisplayHandle | None = None
        self._printed = 0
        self._streaming: AnswerItem | None = None

    def __call__(self, event: Event) -> None:
        """Render one event.

        Args:
            event: Any event of a run.
        """
        item = self.transcript.apply(event)
        if isinstance(event, RunFinished):
            self._finish()
        elif self.quiet:
            return
        elif self._live:
            self._show_live(item, event)
        elif item is not None and not isinstance(event, TextDelta):
            self._print_done_items()
            if isinstance(event, PermissionRequested):
                self._print(item)

    def _show_live(self, item: Any, event: Event) -> None:
        """Show an item live; a stretch of text streaming in at most every STREAM_INTERVAL,
        without its unfinished end, and whole once something else comes."""
        if isinstance(event, UsageReported) and self._view is not None:
            self._view.refresh_meter()
        if isinstance(item, AnswerItem):
            self._streaming = item
            now = time.monotonic()
            if self.stream and now - self._last_refresh >= STREAM_INTERVAL:
                self._last_refresh = now
                self._show_answer(item)
        elif item is not None and visible(item, self.verbose):
            view = self._widgets()
            if self._streaming is not None:
                view.show(self._streaming)
                self._streaming = None
            view.show(item)

    def _show_answer(self, answer: AnswerItem) -> None:
        """Show the answer streaming in: in the widgets if there are, else in one output."""
        if self._view is not None:
            self._view.show(answer, streaming=True)
            return
        shown = so_far(answer)
        if not shown.text.strip() and self._handle is None:
            return  # nothing to show yet (a first word is held back until the next comes)
        output = Markdown(shown.markdown, plain=shown.plain).bundle()
        if self._handle is None:
            self._handle = display(output, raw=True, display_id=True)
        else:
            self._handle.update(output, raw=True)

    def _widgets(self) -> Any:
        """The widget view, made (in place of the answer's output, if one is shown) with the
        items so far when something other than the answer first comes."""
        if self._view is None:
            from nbagent.jupyter.widgets import TranscriptView

            self._view = TranscriptView(self.transcript, verbose=self.verbose)
            for item in self.transcript.items:
                self._view.show(item)
            self._view.refresh_meter()
            if self._handle is None:
                self._handle = display(self._view.box, display_id=True)
            else:
                self._handle.update(self._view.box)
        return self._view

    def _print_done_items(self) -> None:
        """In a terminal, print the items that are complete, in order.

        An item is complete when another follows it (a stretch of text goes on until then, a
        ToolSearch gets its hits right after it ends); a call, when it also ended. A call
        still running holds back the items after it.
        """
        items = self.transcript.items
        while self._printed < len(items) - 1:
            item = items[self._printed]
            if isinstance(item, Call) and item.status in STATE_WORDS:
                break
            self._print(item)
            self._printed += 1

    def _print(self, item: Item) -> None:
        """Print an item in a terminal, if the mode shows it."""
        if visible(item, self.verbose):
            print(show_controls(redact(item_text(item, self.verbose))), file=sys.stdout)

    def _finish(self) -> None:
        """Replace the live view by the static transcript (or show the answer alone)."""
        transcript = self.transcript
        if self.quiet:
            answer = transcript.answer or "(no answer)"
            display(Markdown(model_markdown(answer, "nbagent-answer"), plain=answer))
            return
        final = Markdown(
            transcript.to_markdown(MAX_STATIC_CARDS, self.verbose),
            plain=transcript.to_text(MAX_STATIC_CARDS, self.verbose),
        )
        if self._handle is not None:
            self._handle.update(final.bundle(), raw=True)
            if self._view is not None:
                self._view.close()
        elif self._live:
            display(final.bundle(), raw=True)
        else:
            for item in transcript.items[self._printed :]:
                self._print(item)
            print(transcript.meter())
