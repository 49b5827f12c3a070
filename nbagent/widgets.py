"""The live transcript of a run, as ipywidgets.

While a cell runs, the kernel cannot receive widget events (clicks, typing), but it can send
updates: the live transcript only sends. Its tool cards are HTML ``<details>`` elements, which
the browser opens and closes by itself.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from nbagent.secrets import redact
from nbagent.transcript import Answer, Call, Item, Transcript, item_html, plural

MAX_LIVE_CARDS = 50
"""Tool cards kept as widgets at once; older ones fold into a count (keeps browsers fast)."""


class TranscriptView:
    """A live view of a :class:`Transcript`: one child widget per item, and a meter.

    Args:
        transcript: The transcript the view follows.
        max_cards: Tool cards kept as widgets at once.
    """

    def __init__(self, transcript: Transcript, max_cards: int = MAX_LIVE_CARDS) -> None:
        self.transcript = transcript
        self.max_cards = max_cards
        self.folded = 0
        self._children: dict[int, widgets.Widget] = {}
        self._cards: list[int] = []
        self._more = widgets.HTML(layout=widgets.Layout(display="none"))
        self._meter = widgets.HTML()
        self._items = widgets.VBox()
        self.box = widgets.VBox([self._more, self._items, self._meter])
        self.box.add_class("nbagent-live")

    def show(self, item: Item) -> None:
        """Add or refresh the widget of an item.

        Args:
            item: An item of the transcript (new or changed).
        """
        child = self._children.get(id(item))
        if child is None:
            child = self._make(item)
            self._children[id(item)] = child
            self._items.children = (*self._items.children, child)
            if isinstance(item, Call):
                self._cards.append(id(item))
                self._fold()
        elif isinstance(item, Answer):
            child.outputs = (_markdown_output(item.text),)
        else:
            child.value = redact(item_html(item))

    def refresh_meter(self) -> None:
        """Show the current token meter."""
        self._meter.value = (
            f'<span class="nbagent-meter">{html.escape(self.transcript.meter())}</span>'
        )

    def close(self) -> None:
        """Close every widget of the view."""
        for child in (*self._children.values(), self._more, self._meter, self._items, self.box):
            child.close()

    def _make(self, item: Item) -> widgets.Widget:
        if isinstance(item, Answer):
            output = widgets.Output()
            output.outputs = (_markdown_output(item.text),)
            return output
        return widgets.HTML(redact(item_html(item)))

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
    """An output of an Output widget showing Markdown."""
    text = redact(text)
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/markdown": text, "text/plain": text},
    }
