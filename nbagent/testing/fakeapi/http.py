"""A small threaded HTTP/1.1 server on 127.0.0.1 that carries out planned answers.

The application (``FakeAnthropicServer``) decides *what* to answer; this module does the
*how*: a JSON body with its Content-Length (keep-alive works), a stream of SSE events in
chunked encoding (so a connection cut mid-stream is an error for the client, not an early
end), or a connection closed without an answer. Waits before and between events end early
when the client goes away or the server stops.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_POLL = 0.02


@dataclass(frozen=True)
class JsonAnswer:
    """Answer with a complete body.

    Attributes:
        status: The HTTP status.
        body: The body bytes (usually JSON).
        headers: Extra headers.
        delay: Seconds to wait before answering.
        on_client_closed: Called if the client goes away during the wait.
    """

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    on_client_closed: Callable[[], None] | None = None


@dataclass(frozen=True)
class StreamAnswer:
    """Answer 200 with a stream of encoded SSE events.

    Attributes:
        events: The encoded events, in order.
        headers: Extra headers.
        delay: Seconds to wait before each event.
        cut_after: If set, close the connection after that many events, mid-stream.
        on_client_closed: Called if the client goes away before the end.
    """

    events: Sequence[bytes]
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    cut_after: int | None = None
    on_client_closed: Callable[[], None] | None = None


@dataclass(frozen=True)
class DropAnswer:
    """Close the connection without answering."""


HttpAnswer = JsonAnswer | StreamAnswer | DropAnswer
"""What the application answers with: a whole body, a stream of events, or no answer."""
App = Callable[[str, Mapping[str, str], bytes], HttpAnswer]
"""The application: (path, lower-cased headers, body) -> the answer."""


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, asks the application, carries out its answer."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        """Register the connection so that ``stop`` can close it."""
        super().setup()
        self.server.connections.add(self.connection)

    def finish(self) -> None:
        """Forget the connection."""
        self.server.connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        """Answer a GET (the API has none: the application answers 404)."""
        self._serve()

    def do_POST(self) -> None:
        """Answer a POST."""
        self._serve()

    def _serve(self) -> None:
        """Read the request and carry out the application's answer."""
        with self.server.busy:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            answer = self.server.app(path, headers, raw)
            if isinstance(answer, DropAnswer):
                self._close()
            elif isinstance(answer, JsonAnswer):
                self._send_json(answer)
            else:
                self._send_stream(answer)

    def _wait(self, seconds: float) -> bool:
        """Wait, and tell whether the client is still there (and the server running)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.server.stopping.is_set():
                return False
            readable, _, _ = select.select([self.connection], [], [], min(left, _POLL))
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
                time.sleep(min(left, _POLL))
        return True

    def _close(self) -> None:
        """Close the connection at once."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send_json(self, answer: JsonAnswer) -> None:
        """Send a complete answer with its Content-Length."""
        if answer.delay and not self._wait(answer.delay):
            self._client_closed(answer.on_client_closed)
            return
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        try:
            self.wfile.write(answer.body)
        except OSError:
            self.close_connection = True

    def _send_stream(self, answer: StreamAnswer) -> None:
        """Send SSE events in chunked encoding, cutting or stopping as planned."""
        self.send_response(200)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for sent, event in enumerate(answer.events):
                if sent == answer.cut_after:
                    self._close()
                    return
                if answer.delay and not self._wait(answer.delay):
                    raise ConnectionAbortedError
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self._client_closed(answer.on_client_closed)

    def _client_closed(self, callback: Callable[[], None] | None) -> None:
        """Close after the client went away (or the server stopped), telling the callback."""
        if callback is not None and not self.server.stopping.is_set():
            callback()
        self._close()


class _Server(ThreadingHTTPServer):
    """The threaded server, with what its handlers share."""

    daemon_threads = True

    def __init__(self, app: App) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.app = app
        self.connections: set[socket.socket] = set()
        self.stopping = threading.Event()
        self.busy = _Counter()


class _Counter:
    """Counts the requests being answered; usable as a context manager."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = threading.Condition()

    def __enter__(self) -> None:
        with self._idle:
            self._count += 1

    def __exit__(self, *exc: object) -> None:
        with self._idle:
            self._count -= 1
            self._idle.notify_all()

    def wait_zero(self, timeout: float) -> bool:
        """Wait until no request is being answered; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._count == 0, timeout)


class LoopbackServer:
    """Serve an application on 127.0.0.1, on a free port, in a background thread.

    Args:
        app: Decides the answer to each request.
    """

    def __init__(self, app: App) -> None:
        self._app = app
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL, ``http://127.0.0.1:PORT``. Raises RuntimeError before ``start``."""
        if self._server is None:
            raise RuntimeError("the server is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        """Bind a free port and serve in a daemon thread."""
        if self._server is not None:
            return
        self._server = _Server(self._app)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close every open connection, including kept-alive ones."""
        server, self._server = self._server, None
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        for connection in list(server.connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.busy.wait_zero(2.0)
        server.server_close()
        if self._thread is not None:
            self._thread.join(2.0)

    def wait_idle(self, timeout: float = 2.0) -> bool:
        """Wait until no request is being answered.

        Args:
            timeout: Seconds to wait at most.

        Returns:
            True when idle, False on timeout (or if the server is not started).
        """
        return self._server is not None and self._server.busy.wait_zero(timeout)
