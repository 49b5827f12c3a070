"""The stdio transport: a server process, with its pid, exit code and the tail of its stderr.

The SDK's own ``stdio_client`` hides its process; this one keeps what the manager
reports (``pid``, why it exited, the last lines of stderr) and tolerates servers that
write other things than JSON-RPC on stdout (banners, ``print`` debugging): such lines are
counted and skipped. stderr is read all along, so a server that floods it never blocks
on a full pipe.

The process starts in its own session (process group). Shutdown follows the protocol:
close stdin, wait, then SIGTERM and SIGKILL the whole group, so that no child of the
server (``npx`` starts ``node``, ``uvx`` starts ``python``) outlives it. On Windows only
the process itself is killed.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from nbagent.core.secrets import get_logger
from nbagent.mcp.config import StdioSpec

logger = get_logger("nbagent.mcp")

STDERR_LINES = 20
"""Lines of stderr kept for error reports."""

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A stdout line longer than this is dropped (a runaway write, not a message)."""

GRACE_SECONDS = 2.0
"""How long a server may take to exit once its stdin is closed, and once SIGTERMed."""

_CHUNK = 65536


class StdioProcess:
    """One run of a stdio server: open it with :meth:`open` and hand the streams to the client.

    Args:
        spec: How to start the server.
        server: Its name, for log messages.
        on_exit: Called (on the event loop) when the server's stdout ends before the
            transport is closed: it exited, crashed or closed its output.
    """

    def __init__(self, spec: StdioSpec, server: str, on_exit: Callable[[], None]) -> None:
        self.spec = spec
        self.server = server
        self._on_exit = on_exit
        self.pid: int | None = None
        """The process id, once started."""
        self.returncode: int | None = None
        """The exit code, once it exited (negative: killed by that signal)."""
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        """The last lines the server wrote on stderr."""
        self.ignored_lines = 0
        """Lines of stdout that were not JSON-RPC messages."""
        self.not_utf8: set[types.RequestId] = set()
        """Ids of responses whose line held bytes that are not UTF-8 (read as U+FFFD), until
        the listing guard takes them."""
        self.ended_by_itself = False
        """The server closed its stdout (exited, crashed) before it was asked to stop."""
        self._eof = False
        self._closing = False

    def describe_exit(self) -> str:
        """Say how the process ended, with the tail of its stderr.

        Returns:
            E.g. ``exited with code 2; stderr: fatal: no token``.
        """
        if self.returncode is None:
            what = "closed its stdout"
        elif self.returncode < 0:
            what = f"was killed by signal {-self.returncode}"
        else:
            what = f"exited with code {self.returncode}"
        tail = "\n".join(self.stderr_tail).strip()
        return f"{what}; stderr: {tail}" if tail else what

    @asynccontextmanager
    async def open(self) -> AsyncIterator[tuple[Any, Any]]:
        """Start the process and yield the (read, write) streams of SessionMessages.

        Yields:
            The streams ``mcp.Client`` takes from a transport.

        Raises:
            OSError: The command cannot be started (not found, not executable).
        """
        spec = self.spec
        process = await anyio.open_process(
            [spec.command, *spec.args],
            env=get_default_environment() | dict(spec.env),
            cwd=spec.cwd,
            start_new_session=True,
        )
        self.pid = process.pid
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._read_stdout, process, read_writer)
            tasks.start_soon(self._read_stderr, process)
            tasks.start_soon(self._write_stdin, process, write_reader, read_writer)
            try:
                yield read_stream, write_stream
            finally:
                self._closing = True
                with anyio.CancelScope(shield=True):
                    write_stream.close()
                    read_stream.close()
                    await self._stop(process)
                tasks.cancel_scope.cancel()

    async def _read_stdout(
        self, process: Process, messages: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        """Parse stdout into messages; when it ends, wait for the exit and report it."""
        assert process.stdout is not None
        lines = _Lines(self.server)
        async with messages:
            try:
                while True:
                    for line in lines.feed(await process.stdout.receive(_CHUNK)):
                        message = self._parse(line)
                        if message is not None:
                            await messages.send(message)
            except anyio.EndOfStream:
                self._eof = True
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the session or our own shutdown closed the streams
        await self._await_exit(process, GRACE_SECONDS)
        if not self._closing:
            self._on_exit()

    def _parse(self, line: bytes) -> SessionMessage | None:
        """Parse one stdout line; anything but a JSON-RPC message is counted and skipped.

        A line the fast parser refuses is read again leniently (:meth:`_parse_leniently`), so
        that one tool with bytes that are not UTF-8, or with a deep schema, does not cost the
        whole listing.
        """
        if not line.strip():
            return None
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError:
            message = self._parse_leniently(line)
        if message is None:
            self.ignored_lines += 1
            log = logger.warning if self.ignored_lines == 1 else logger.debug
            log(
                "MCP server %r wrote a line that is not JSON-RPC on stdout (ignored): %.200r",
                self.server,
                line,
            )
        return message

    def _parse_leniently(self, line: bytes) -> SessionMessage | None:
        """Parse a line the fast parser refused, or return ``None``.

        Bytes that are not UTF-8 become U+FFFD (the ids of such responses are kept in
        :attr:`not_utf8`), and nesting deeper than the fast parser's limit (200) is read by
        the standard library's parser (up to Python's recursion limit).
        """
        text = line.decode("utf-8", "replace")
        try:
            message = types.jsonrpc_message_adapter.validate_python(json.loads(text), by_name=False)
        except (ValueError, RecursionError):
            return None
        if isinstance(message, types.JSONRPCResponse) and "\ufffd" in text:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                self.not_utf8.add(message.id)
        return SessionMessage(message)

    async def _read_stderr(self, process: Process) -> None:
        """Keep the last lines of stderr (and keep the pipe from filling up)."""
        assert process.stderr is not None
        partial = b""
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                *lines, partial = (partial + await process.stderr.receive(_CHUNK)).split(b"\n")
                partial = partial[-1000:]
                for line in lines:
                    text = line.decode("utf-8", "replace").rstrip()[:1000]
                    if text:
                        self.stderr_tail.append(text)
                        logger.debug("MCP server %r stderr: %s", self.server, text)

    async def _write_stdin(
        self,
        process: Process,
        messages: MemoryObjectReceiveStream[SessionMessage],
        replies: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        """Write each outgoing message as one line; if stdin breaks, end the read side too."""
        assert process.stdin is not None
        try:
            async with messages:
                async for message in messages:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await replies.aclose()

    async def _stop(self, process: Process) -> None:
        """Close stdin, give the server time to exit, then end its whole process group."""
        assert process.stdin is not None
        self.ended_by_itself = self._eof
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        await self._await_exit(process, GRACE_SECONDS)
        if sys.platform == "win32":  # pragma: no cover
            if process.returncode is None:
                process.kill()
        else:
            from mcp.os.posix.utilities import terminate_posix_process_tree

            # Also sweeps children left in the group by a leader that exited by itself.
            await terminate_posix_process_tree(process, GRACE_SECONDS)
        await self._await_exit(process, GRACE_SECONDS)
        with anyio.move_on_after(GRACE_SECONDS):
            await process.aclose()  # closes the pipes' transports too

    async def _await_exit(self, process: Process, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the process to exit; note its exit code."""
        with anyio.move_on_after(timeout):
            while process.returncode is None:
                await anyio.sleep(0.01)
        self.returncode = process.returncode


class _Lines:
    """Splits a byte stream into lines, in time linear in its length however long a line is.

    Args:
        server: The server's name, for log messages.
    """

    def __init__(self, server: str) -> None:
        self._server = server
        self._parts: list[bytes] = []
        self._size = 0
        self._dropping = False

    def feed(self, chunk: bytes) -> list[bytes]:
        """Take the next chunk; return the lines it completes (without their newline).

        A line longer than :data:`MAX_LINE_BYTES` is dropped whole (a runaway write, not a
        message).
        """
        *ends, rest = chunk.split(b"\n")
        lines: list[bytes] = []
        for end in ends:
            if not self._dropping:
                lines.append(b"".join([*self._parts, end]))
            self._parts, self._size, self._dropping = [], 0, False
        if rest and not self._dropping:
            self._parts.append(rest)
            self._size += len(rest)
            if self._size > MAX_LINE_BYTES:
                logger.warning(
                    "MCP server %r: dropped a stdout line over %d bytes",
                    self._server,
                    MAX_LINE_BYTES,
                )
                self._parts, self._size, self._dropping = [], 0, True
        return lines
