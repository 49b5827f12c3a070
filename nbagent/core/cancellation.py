"""Cancellation: a token cancelled once (Stop, a time limit, the end of a run) and seen by
all the work started under it.

A child token is cancelled with its parent, for the same reason, but not the other way round;
work that acts under a token counts itself running while it does, so that whoever cancels can
wait for it to notice (:meth:`Cancellation.settle`). The cell's thread
(:mod:`nbagent.loop.cellthread`) passes a run's token down as its scope.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from functools import partial

from nbagent.core.secrets import get_logger

logger = get_logger("nbagent")

TIME_LIMIT = "its call reached its time limit"
"""Why work is cancelled when the call it belongs to is abandoned at its time limit."""

STOPPED = "the run was stopped"
"""Why work is cancelled when the person stops the run (Stop, Ctrl-C)."""

ENDED = "the run it belonged to ended"
"""Why work is cancelled when the turn or run that started it is over."""

_quiet = threading.Condition()
"""Guards every token's count of running work; notified whenever some of it ends."""


class Cancelled(Exception):
    """The work was cancelled (Stop, a time limit, the end of its run), or the question
    withdrawn: whatever it would have done does not happen."""


class Cancellation:
    """A cancellation token: cancelled once, seen by all the work started under it.

    A child is cancelled with its parent (for the same reason) but not the other way round.
    Work that acts (a tool call, a model request) counts itself as running under the token
    while it does (:meth:`acting`), so that whoever cancels can wait for it to see the
    cancellation (:meth:`settle`).

    Args:
        parent: The token whose cancellation cancels this one too.
    """

    def __init__(self, parent: Cancellation | None = None) -> None:
        self.parent = parent
        """The token this one is a child of."""
        self.reason = ""
        """Why it was cancelled (empty until then)."""
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._running = 0
        self._unlink: Callable[[], None] | None = None
        if parent is not None:
            self._unlink = parent.on_cancel(lambda: self.cancel(parent.reason))

    @property
    def cancelled(self) -> bool:
        """Whether the token was cancelled."""
        return self._event.is_set()

    def cancel(self, reason: str) -> None:
        """Cancel the token and its children (nothing happens the second time).

        Args:
            reason: Why, as a clause ("its call reached its time limit").
        """
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        if self._unlink is not None:
            self._unlink()
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failed callback must not stop the others
                logger.exception("A cancellation callback failed")

    def check(self) -> None:
        """Raise :class:`Cancelled` if the token was cancelled.

        Raises:
            Cancelled: It was, with the reason.
        """
        if self._event.is_set():
            raise Cancelled(self.reason)

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once the token is cancelled (at once, if it already is).

        Args:
            callback: Called with no argument, on the thread that cancels.

        Returns:
            A function that unregisters the callback.
        """
        with self._lock:
            if not self._event.is_set():
                key, self._next = self._next, self._next + 1
                self._callbacks[key] = callback
                return partial(self._callbacks.pop, key, None)
        callback()
        return _nothing

    @contextlib.contextmanager
    def acting(self) -> Iterator[None]:
        """Count the work of the ``with`` block as running under this token and its parents.

        Check the token inside the block, not before it: whoever cancels then either sees the
        work running (and may wait for it, :meth:`settle`), or the work sees the cancellation.
        """
        chain = list(self._lineage())
        with _quiet:
            for token in chain:
                token._running += 1
        try:
            yield
        finally:
            with _quiet:
                for token in chain:
                    token._running -= 1
                _quiet.notify_all()

    def settle(self, running: int, timeout: float) -> bool:
        """Wait until at most ``running`` pieces of work run under this token.

        Args:
            running: How many may still run (1 for a call waiting for what it started).
            timeout: Seconds to wait at most.

        Returns:
            Whether it settled in time.
        """
        with _quiet:
            return _quiet.wait_for(lambda: self._running <= running, timeout)

    def _lineage(self) -> Iterator[Cancellation]:
        """This token, its parent, and so on up."""
        token: Cancellation | None = self
        while token is not None:
            yield token
            token = token.parent


def _nothing() -> None:
    """Unregister nothing (the callback already ran)."""
