"""When the person's kernel is idle: no code running, and none for a while.

Work nbagent does only to save time later (importing the SDK before the first ``%%agent``
cell needs it) slows every cell that runs beside it, since Python runs one thread at a time.
:class:`IdleWatch` lets such work wait for a pause in the person's work: it follows the shell's
``pre_execute`` and ``post_execute`` events (every execution, silent ones too) and
:meth:`IdleWatch.wait` returns once no code has run for some seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

POLL = 0.25
"""Seconds between two checks of whether to go on waiting."""


class IdleWatch:
    """Follows a shell's executions, to tell when it has been idle for a while.

    Args:
        shell: The IPython shell; its events are followed until :meth:`close`.
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._running = 0
        self._since = time.monotonic()
        self._changed = threading.Condition()
        shell.events.register("pre_execute", self._started)
        shell.events.register("post_execute", self._ended)

    def _started(self) -> None:
        with self._changed:
            self._running += 1
            self._changed.notify_all()

    def _ended(self) -> None:
        with self._changed:
            self._running = max(0, self._running - 1)
            self._since = time.monotonic()
            self._changed.notify_all()

    def wait(self, seconds: float, go_on: Callable[[], bool] = lambda: True) -> bool:
        """Wait until no code has run in the shell for some seconds.

        Args:
            seconds: How long the shell must have been idle.
            go_on: Asked every :data:`POLL` seconds; when it says false, the wait ends.

        Returns:
            True once the shell has been idle that long; False when ``go_on`` ended the wait.
        """
        with self._changed:
            while go_on():
                quiet = time.monotonic() - self._since
                if not self._running and quiet >= seconds:
                    return True
                self._changed.wait(POLL if self._running else min(POLL, seconds - quiet))
        return False

    def close(self) -> None:
        """Stop following the shell's executions."""
        for name, callback in (("pre_execute", self._started), ("post_execute", self._ended)):
            try:
                self.shell.events.unregister(name, callback)
            except ValueError:  # already closed
                pass
