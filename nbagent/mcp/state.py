"""What the manager reports about each server, and the rules for restarting one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ServerState = Literal["connecting", "connected", "failed", "stopped"]
"""``connecting`` (starting, or waiting to restart after a crash), ``connected``,
``failed`` (gave up: see ``last_error``) or ``stopped`` (removed or shut down)."""


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of one server, for ``%mcp list`` and tests."""

    name: str
    """The server's name."""
    state: ServerState
    """Where its connection stands."""
    transport: str
    """``stdio``, ``http`` or ``sse``."""
    tool_count: int
    """Tools of this server in the registry now."""
    last_error: str | None = None
    """Why it last failed or disconnected (with the tail of its stderr for stdio); kept after
    a successful restart, so that ``restarts`` > 0 comes with its reason."""
    pid: int | None = None
    """The process id of a stdio server while it runs."""
    restarts: int = 0
    """Restarts after crashes since the last stable connection."""
    protocol_version: str | None = None
    """The protocol version negotiated, once connected."""
    connect_seconds: float | None = None
    """How long the last successful connection took, tool listing included."""
    skipped: tuple[str, ...] = ()
    """Tools left out of the registry, one line each saying why."""
    adjusted: tuple[str, ...] = ()
    """Changes made to loaded tools' schemas so that the API takes them, one line each."""
    mended: tuple[str, ...] = ()
    """Other changes made to listed tools, one line each: a description cut, an outputSchema
    beyond the limits left out, bytes that were not UTF-8."""
    past_limit: int = 0
    """Usable tools listed but not registered: past the entry's ``max_tools``, or past the
    tools all servers together may register (the servers before it in the configuration
    come first)."""
    target: str = ""
    """What is run or reached: the command line, or the URL (secrets redacted)."""
    history: tuple[str, ...] = ()
    """Its life so far, one timed event a line: starts, connections, losses, restarts."""
    stderr: tuple[str, ...] = ()
    """The last lines a stdio server wrote on stderr."""

    @property
    def problem(self) -> str:
        """The last error in one line: how it ended, with the last line of its stderr (which
        for a crashed Python server names the exception), e.g. ``exited with code 1:
        ImportError: cannot import name 'FastMCP'``; empty when there is none."""
        return error_line(self.last_error or "")


def error_line(error: str) -> str:
    """Put an error in one line: how it ended, with the last line of the stderr it quotes.

    Args:
        error: E.g. ``exited with code 1; stderr: Traceback ...\nImportError: ...``.

    Returns:
        E.g. ``exited with code 1: ImportError: ...``.
    """
    head, _, tail = error.partition("; stderr: ")
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return f"{head}: {lines[-1]}" if lines else head


@dataclass(frozen=True)
class RestartPolicy:
    """When a server that disconnected is started again.

    A server that fails on its first start is not restarted (its command or address is
    most likely wrong; ``restart()`` tries again). One that goes away after connecting is
    restarted after ``initial_delay``, doubling up to ``max_delay``, at most
    ``max_restarts`` times in a row; a connection that stays up for ``reset_after``
    seconds clears the count.
    """

    max_restarts: int = 5
    """Restarts in a row before the server is marked ``failed``."""
    initial_delay: float = 1.0
    """Seconds before the first restart."""
    max_delay: float = 30.0
    """The longest wait between restarts."""
    reset_after: float = 60.0
    """Seconds of uptime after which the restart count starts again from zero."""

    def delay(self, restart: int) -> float:
        """Return the wait before a restart.

        Args:
            restart: Which restart in a row (1 for the first).

        Returns:
            Seconds: ``initial_delay * 2 ** (restart - 1)``, at most ``max_delay``.
        """
        return min(self.initial_delay * 2 ** (restart - 1), self.max_delay)


@dataclass(frozen=True)
class ConnectionSettings:
    """Timeouts and limits that apply to every server of a manager."""

    connect_timeout: float = 30.0
    """Seconds a server may take to start, shake hands and list its tools."""
    call_timeout: float = 300.0
    """Seconds a tool call may take before the model is told it timed out."""
    poll_interval: float = 30.0
    """Seconds between re-listings of an HTTP server that sends no change events (the
    re-listing also tells whether it is still there)."""
    probe_interval: float = 5.0
    """Seconds between liveness probes of an HTTP server (``ping``; ``server/discover`` from
    protocol 2026-07-28 on, which has no ping): one that stops answering is noticed within
    about twice this."""
    max_output_chars: int = 100_000
    """Characters of text one tool result may send to the model."""
    restart: RestartPolicy = RestartPolicy()
    """When a server that went away is started again."""
