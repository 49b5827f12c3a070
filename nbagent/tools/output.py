"""Keeping tool output within bounds, saying what was cut.

A result's summary (``ToolResult.metadata["summary"]``) is the few words the transcript shows
after the call, such as ``42 lines`` or ``7 matches in 3 files``:
:func:`nbagent.core.text.plural` makes them.
"""

from __future__ import annotations


def cap_text(text: str, limit: int, hint: str) -> str:
    """Cut a text at a line boundary before ``limit`` characters, saying what was cut.

    Args:
        text: The text.
        limit: Characters kept at most (the note comes on top).
        hint: What the reader can do to see the rest.

    Returns:
        The text, whole or cut with a closing note.
    """
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > 0 else limit
    rest = text[cut:].count("\n")
    return text[:cut] + f"\n[Output cut at {cut:,} characters ({rest:,} more lines): {hint}.]"


class HeadTail:
    """Keeps the start and the end of a stream of text within a budget, counting the middle.

    Args:
        limit: Characters kept at most: half from the start, half from the end.
    """

    def __init__(self, limit: int) -> None:
        self._half = max(limit // 2, 1)
        self._head: list[str] = []
        self._head_size = 0
        self._tail = ""
        self.total = 0
        """Characters written in all."""

    def write(self, text: str) -> None:
        """Take more text.

        Args:
            text: The text.
        """
        self.total += len(text)
        room = self._half - self._head_size
        if room > 0:
            self._head.append(text[:room])
            self._head_size += min(room, len(text))
            text = text[room:]
        if text:
            self._tail = (self._tail + text)[-self._half :]

    def text(self) -> str:
        """Return what was kept, with a note of how much was cut from the middle."""
        head = "".join(self._head)
        cut = self.total - len(head) - len(self._tail)
        if cut <= 0:
            return head + self._tail
        return f"{head}\n[... {cut:,} characters cut from the middle ...]\n{self._tail}"
