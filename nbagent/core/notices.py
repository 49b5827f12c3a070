"""Notices: what background work has to tell the user, kept until they next look.

An MCP server that fails or restarts while the user works on something else must not print
under whatever cell happens to be running (or only into the kernel's log). Its notice waits
here, and the next ``%%agent`` cell or ``%mcp`` command shows it, once.
"""

from __future__ import annotations

import threading

MAX_NOTICES = 20
"""Notices kept at most; older ones are counted, not kept."""


class Notices:
    """A thread-safe queue of one-line notices for the user."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._dropped = 0

    def add(self, line: str) -> None:
        """Keep a notice (the same notice twice in a row is kept once).

        Args:
            line: One line of Markdown, e.g. ``MCP server `git` failed: ...``.
        """
        with self._lock:
            if self._lines and self._lines[-1] == line:
                return
            self._lines.append(line)
            if len(self._lines) > MAX_NOTICES:
                del self._lines[0]
                self._dropped += 1

    def take(self) -> list[str]:
        """Return the notices kept, oldest first, and forget them.

        Returns:
            The lines, preceded by a count of those left out when there were too many.
        """
        with self._lock:
            lines, self._lines = self._lines, []
            dropped, self._dropped = self._dropped, 0
        return ([f"{dropped} earlier notices not shown"] if dropped else []) + lines
