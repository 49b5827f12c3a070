"""The live transcript of a run, as ipywidgets.

While a cell runs, the kernel cannot receive widget events (clicks, typing), but it can send
updates: the live transcript only sends. Its tool cards are HTML ``<details>`` elements, which
the browser opens and closes by itself.

A call that waits for the user's answer shows at the very bottom of the view, below the
meter: JupyterLab's stdin box, where the answer is typed, comes right after the cell's
outputs, so the question is the last thing above it.

Everything the view sends is redacted (:mod:`nbagent.core.secrets`); text that is still streaming
in shows without its last word, nor an ending that could be the start of a secret, until what
follows it has come (:func:`~nbagent.core.secrets.streamable`).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from nbagent.core.markup import escape_html, show_controls
from nbagent.core.secrets import redact
from nbagent.core.text import plural
from nbagent.render.transcript.html import item_html
from nbagent.render.transcript.items import AnswerItem, Call, Item, so_far, visible
from nbagent.render.transcript.model import Transcript

MAX_LIVE_CARDS = 50
"""Tool cards kept as widgets at once; older ones fold into a count (keeps browsers fast)."""


class TranscriptView:
    """A live view of a :class:`Transcript`: one child widget per item, and a meter.

    Args:
        transcript: The transcript the view follows.
        max_cards: Tool cards kept as widgets at once.
        verbose: Render the cards in the verbose mode (input JSON, status, duration,
            permission decision) and show the first announcement of the deferred tools.
    """

    def __init__(
        self, transcript: Transcript, max_cards: int = MAX_LIVE_CARDS, verbose: bool = False
    ) -> None:
        self.transcript = transcript
        self.max_cards = max_cards
        self.verbose = verbose
        self.folded = 0
        self._children: dict[int, widgets.Widget] = {}
        self._cards: list[int] = []
        self._questions: dict[int, widgets.HTML] = {}
        self._more = widgets.HTML(layout=widgets.Layout(display="none"))
        self._meter = widgets.HTML()
        self._items = widgets.VBox()
        self._asking = widgets.VBox()
        self.box = widgets.VBox([self._more, self._items, self._meter, self._asking])
        self.box.add_class("nbagent-live")

    def show(self, item: Item, streaming: bool = False) -> None:
        """Add or refresh the widget of an item (an item the mode leaves out gets none).

        Args:
            item: An item of the transcript (new or changed).
            streaming: The item is a stretch of text still streaming in: its unfinished end
                waits.
        """
        if not visible(item, self.verbose):
            return
        shown = so_far(item) if isinstance(item, AnswerItem) and streaming else item
        child = self._children.get(id(item))
        if child is None:
            child = self._make(shown)
            self._children[id(item)] = child
            self._items.children = (*self._items.children, child)
            if isinstance(item, Call):
                self._cards.append(id(item))
                self._fold()
        elif isinstance(shown, AnswerItem):
            child.outputs = (_markdown_output(shown.markdown),)
        else:
            child.value = self._html(item)
        if isinstance(item, Call):
            self._place(item, child)

    def refresh_meter(self) -> None:
        """Show the current token meter."""
        self._meter.value = (
            f'<span class="nbagent-meter">{escape_html(self.transcript.meter())}</span>'
        )

    def close(self) -> None:
        """Close every widget of the view."""
        for child in (
            *self._children.values(),
            *self._questions.values(),
            self._more,
            self._meter,
            self._items,
            self._asking,
            self.box,
        ):
            child.close()

    def _make(self, item: Item) -> widgets.Widget:
        if isinstance(item, AnswerItem):
            output = widgets.Output()
            output.add_class("nbagent-narration")
            output.outputs = (_markdown_output(item.markdown),)
            return output
        return widgets.HTML(self._html(item))

    def _html(self, item: Item) -> str:
        return show_controls(redact(item_html(item, self.verbose), shapes=False))

    def _place(self, call: Call, card: widgets.Widget) -> None:
        """Show a waiting call's card at the bottom, right above the stdin box; else in place.

        Args:
            call: A call that started, changed or ended.
            card: Its widget among the items.
        """
        waiting = call.status == "waiting"
        card.layout.display = "none" if waiting else None
        question = self._questions.get(id(call))
        if waiting and question is None:
            self._questions[id(call)] = widgets.HTML(card.value)
        elif waiting:
            question.value = card.value
        elif question is not None:
            del self._questions[id(call)]
            question.close()
        self._asking.children = tuple(self._questions.values())

    def _fold(self) -> None:
        """Drop the oldest cards beyond the cap and count them."""
        while len(self._cards) > self.max_cards:
            oldest = self._children.pop(self._cards.pop(0))
            self._items.children = tuple(c for c in self._items.children if c is not oldest)
            oldest.close()
            self.folded += 1
        if self.folded:
            self._more.value = f"… {plural(self.folded, 'earlier tool call')} not shown live"
            self._more.layout.display = None


def _markdown_output(text: str) -> dict[str, Any]:
    """An output of an Output widget showing Markdown (rendered here, its outside text
    redacted before it was escaped)."""
    text = show_controls(redact(text, shapes=False))
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/markdown": text, "text/plain": text},
    }
