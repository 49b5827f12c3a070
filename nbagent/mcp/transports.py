"""Reaching a remote server (streamable HTTP, HTTP+SSE), and saying why a server was not reached.

The stdio transport, which owns a process, is :mod:`nbagent.mcp.stdio`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from nbagent.mcp.config import HttpSpec, ServerSpec, StdioSpec
from nbagent.mcp.stdio import StdioProcess

CONNECT_SECONDS = 30.0
"""Seconds to open an HTTP connection (or write a request) before giving up."""

READ_SECONDS = 300.0
"""Seconds an HTTP response stream may stay silent (event streams are long-lived)."""


class HttpStatus:
    """The last error status an HTTP server answered with.

    The SDK turns an HTTP error into "Server returned an error response" and drops the
    status; this response hook keeps it, so that errors can say ``HTTP 401 Unauthorized``.
    """

    def __init__(self) -> None:
        self.last: str | None = None
        """E.g. ``HTTP 503 Service Unavailable``; ``None`` until an error status is seen."""

    async def __call__(self, response: Any) -> None:
        """Note a response's status when it is an error (an httpx response hook)."""
        if response.status_code >= 400:
            self.last = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()

    def explain(self, text: str) -> str:
        """Add the last error status to a message that does not say it yet."""
        if self.last is None or self.last in text:
            return text
        return f"{text} ({self.last})"


@asynccontextmanager
async def http_transport(spec: HttpSpec, status: HttpStatus) -> AsyncIterator[Any]:
    """Open a streamable HTTP (or SSE) transport that sends the configured headers.

    Args:
        spec: The server's address and headers.
        status: Where the server's error statuses are noted.

    Yields:
        The (read, write) streams ``mcp.Client`` takes from a transport.
    """
    import httpx2

    hooks = {"response": [status]}
    timeout = httpx2.Timeout(CONNECT_SECONDS, read=READ_SECONDS)
    if spec.transport == "sse":
        from mcp.client.sse import sse_client

        def factory(**options: Any) -> Any:
            return httpx2.AsyncClient(**{"timeout": timeout, **options}, event_hooks=hooks)

        async with sse_client(
            spec.url, headers=dict(spec.headers), httpx_client_factory=factory
        ) as streams:
            yield streams
        return
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout, event_hooks=hooks) as http,
        streamable_http_client(spec.url, http_client=http) as streams,
    ):
        yield streams


def describe_failure(exc: BaseException, spec: ServerSpec, process: StdioProcess | None) -> str:
    """Say why a server could not be reached or went away, as plainly as possible.

    Args:
        exc: What was raised (an exception group is read through to its first member).
        spec: The server's spec.
        process: The stdio server's last process, if any.

    Returns:
        E.g. ``exited with code 2; stderr: fatal: no token``, ``cannot start 'x': command not
        found``, ``cannot reach http://...: ...``, or a timeout with the tail of stderr.
    """
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if process is not None and process.ended_by_itself and not isinstance(exc, TimeoutError):
        return process.describe_exit()
    if isinstance(exc, TimeoutError):
        text = str(exc) or "timed out"
    elif isinstance(spec, StdioSpec) and isinstance(exc, FileNotFoundError):
        return f"cannot start {spec.command!r}: command not found"
    elif isinstance(spec, StdioSpec) and isinstance(exc, OSError):
        return f"cannot start {spec.command!r}: {exc}"
    elif isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        text = "the connection was closed"
    elif isinstance(exc, MCPError):
        text = f"the server answered with an error: {exc.message}"
    elif isinstance(spec, HttpSpec) and type(exc).__module__.startswith("httpx"):
        return f"cannot reach {spec.url}: {str(exc) or type(exc).__name__}"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    tail = "\n".join(process.stderr_tail).strip() if process else ""
    return f"{text}; stderr: {tail}" if tail else text
