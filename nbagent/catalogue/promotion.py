"""Usage-based promotion (opt-in): tools a user calls often are loaded up front next time.

Each call of a deferred tool is counted per user in a small SQLite file (by default
``~/.nbagent/usage.sqlite3``). Kernels of the same user may write at the same moment: the
database is in WAL mode, every connection waits up to :data:`BUSY_TIMEOUT` seconds for a lock,
and a count is one atomic upsert (``INSERT ... ON CONFLICT DO UPDATE SET uses = uses + 1``),
so no call is lost or counted twice.

A tool is *promoted* when the user called it at least :data:`MIN_USES` times, most recently
within :data:`WINDOW_DAYS` days; the most used come first, at most :data:`MAX_PROMOTED`.
"""

from __future__ import annotations

import getpass
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PATH = Path.home() / ".nbagent" / "usage.sqlite3"
"""Where usage is counted unless told otherwise."""

BUSY_TIMEOUT = 10.0
"""Seconds a write waits for another kernel's lock before failing."""

MIN_USES = 3
"""Calls from which a tool is promoted."""

WINDOW_DAYS = 30.0
"""A tool not called for this many days is no longer promoted."""

MAX_PROMOTED = 10
"""The most tools promoted at once."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    user TEXT NOT NULL,
    tool TEXT NOT NULL,
    uses INTEGER NOT NULL,
    last_used REAL NOT NULL,
    PRIMARY KEY (user, tool)
) WITHOUT ROWID
"""


@dataclass(frozen=True)
class ToolUseCount:
    """How often and how lately a user called one tool."""

    tool: str
    """The tool's name."""
    uses: int
    """Calls counted."""
    last_used: float
    """When it was last called (seconds since the epoch)."""


class UsageStore:
    """Counts tool calls per user in SQLite and says which tools to promote.

    Args:
        path: The database file (created with its directory if missing).
        user: Whose calls to count; the login name by default.

    Attributes:
        path: The database file.
        user: Whose calls are counted.
    """

    def __init__(self, path: Path = DEFAULT_PATH, user: str | None = None) -> None:
        self.path = Path(path)
        self.user = user or getpass.getuser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)

    def record(self, tool: str, when: float | None = None) -> None:
        """Count one call of a tool.

        Args:
            tool: The tool's name.
            when: When it was called (seconds since the epoch); now by default.
        """
        with self._connect() as db:
            db.execute(
                "INSERT INTO usage (user, tool, uses, last_used) VALUES (?, ?, 1, ?) "
                "ON CONFLICT (user, tool) DO UPDATE SET uses = uses + 1, "
                "last_used = max(last_used, excluded.last_used)",
                (self.user, tool, time.time() if when is None else when),
            )

    def usage(self) -> list[ToolUseCount]:
        """Return this user's counts, most used first (ties by name).

        Returns:
            One entry per tool called at least once.
        """
        with self._connect() as db:
            rows = db.execute(
                "SELECT tool, uses, last_used FROM usage WHERE user = ? ORDER BY uses DESC, tool",
                (self.user,),
            ).fetchall()
        return [ToolUseCount(*row) for row in rows]

    def promoted(
        self,
        candidates: Iterable[str] | None = None,
        min_uses: int = MIN_USES,
        window_days: float = WINDOW_DAYS,
        limit: int = MAX_PROMOTED,
        now: float | None = None,
    ) -> list[str]:
        """Say which tools to promote to loaded.

        Args:
            candidates: Only these tools may be promoted (e.g. the deferred ones); any if
                ``None``.
            min_uses: Calls needed.
            window_days: The last call must be this recent.
            limit: The most tools returned.
            now: The current time (seconds since the epoch); the clock by default.

        Returns:
            Tool names, most used first.
        """
        allowed = None if candidates is None else set(candidates)
        oldest = (time.time() if now is None else now) - window_days * 86_400
        return [
            u.tool
            for u in self.usage()
            if u.uses >= min_uses
            and u.last_used >= oldest
            and (allowed is None or u.tool in allowed)
        ][:limit]

    def forget(self, tool: str | None = None) -> None:
        """Drop this user's count of one tool, or of every tool.

        Args:
            tool: The tool; all of them when ``None``.
        """
        with self._connect() as db:
            if tool is None:
                db.execute("DELETE FROM usage WHERE user = ?", (self.user,))
            else:
                db.execute("DELETE FROM usage WHERE user = ? AND tool = ?", (self.user, tool))

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """Open a connection for one transaction (committed on success) and close it."""
        with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT)) as db, db:
            yield db
