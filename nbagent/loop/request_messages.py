"""An agent's request messages kept as one list, changed where its history changed.

Each request sends the whole history with the user-turn breakpoint on a copy of its last
user message (:func:`~nbagent.loop.request.build_messages`). Built anew, that list copies
the whole history at every request; here one :class:`~nbagent.core.tracked.TrackedList` is
kept per agent and changed only where the history changed since the last request (and where
the breakpoint moved), so that building it costs what is new, and the body encoder
(:mod:`nbagent.api.body`), seeing the same list again, reads its marks instead of comparing
it whole.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from nbagent.api.body import CHECK_ENV
from nbagent.core.tracked import Since, TrackedList
from nbagent.loop.request import build_messages, put_breakpoint


class RequestMessages:
    """The messages of one agent's requests, built from its history at each request."""

    def __init__(self) -> None:
        self._sent: TrackedList | None = None
        """The last request's messages."""
        self._since: Since | None = None
        """The history as it was when they were built."""
        self._breakpoint: int | None = None
        """The index of the copy holding the breakpoint in them."""

    def build(
        self, history: Sequence[dict[str, Any]], legacy_names: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The request's messages: as :func:`~nbagent.loop.request.build_messages` builds
        them, in the list the last request sent, changed where the history changed since.

        A history that is not a :class:`~nbagent.core.tracked.TrackedList` (the history with
        old tool results cleared, a summary's messages) or legacy announcements give a new
        list, as :func:`~nbagent.loop.request.build_messages` does.

        Args:
            history: The conversation; not modified.
            legacy_names: As for :func:`~nbagent.loop.request.build_messages`.

        Returns:
            The request's messages. The list is changed in place by the next call: it must
            not be kept past its request.
        """
        if legacy_names is not None or not isinstance(history, TrackedList):
            return build_messages(history, legacy_names)
        since = Since(history)  # before reading it: a change meanwhile lowers it
        sent = self._sent
        if sent is None or self._since is None or self._since.items is not history:
            sent = TrackedList(history[:])
        else:
            low = self._since.unchanged(history)
            if self._breakpoint is not None:
                low = min(low, self._breakpoint)
            sent[low:] = history[low:]
        self._breakpoint = put_breakpoint(sent)
        self._sent, self._since = sent, since
        if os.environ.get(CHECK_ENV) and sent != build_messages(history):
            raise AssertionError("A request's messages differ from its history's.")
        return sent
