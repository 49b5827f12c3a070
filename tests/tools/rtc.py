"""Real-time collaboration for the live-document tests.

- :class:`FakeRoom`: a collaboration room in this process (the server's Y document and the
  sockets to it), standing in for ``ysync.open_room`` in fast tests;
- :func:`jupyter_server`: a real Jupyter server on 127.0.0.1, with jupyter-collaboration
  (from its own virtual environment, ``$NBAGENT_RTC_ENV``) or without;
- :class:`YUser`: a second Y client of a real room, on its own thread, playing the user's
  browser (pycrdt's own ``Provider``, independent of nbagent's client);
- the test notebook, the tools on it, and reading back what the server saved.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import nbformat

from nbagent.core.tool import Tool
from nbagent.tools import ToolContext
from nbagent.tools.notebook.live import LiveDocuments
from tests.jupyterlab_server import stop_server
from tests.tools.helpers import LazyTools

T = TypeVar("T")

RTC_ENV = Path(os.environ.get("NBAGENT_RTC_ENV", "~/.cache/nbagent/rtc-venv")).expanduser()
"""The virtual environment with jupyter-collaboration (made by .ci/run)."""

RTC_PYTHON = RTC_ENV / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
"""Its interpreter."""

KERNEL = "nbagent-test"
"""The kernelspec the test servers get: this interpreter, where nbagent is installed."""


# -- an in-process room ----------------------------------------------------------------------


class FakeSocket:
    """One client's websocket to a :class:`FakeRoom`, shaped like tornado's client connection."""

    def __init__(self, room: FakeRoom, loop: asyncio.AbstractEventLoop) -> None:
        self.room = room
        self.loop = loop
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False
        self.close_code: int | None = None
        self.close_reason: str | None = None

    async def read_message(self) -> bytes | None:
        """The next message from the room, or None once closed."""
        return await self.inbox.get()

    def write_message(self, message: bytes, binary: bool = False) -> asyncio.Future[None]:
        """Hand a message to the room (failing as a dropped socket when told to)."""
        from tornado.websocket import WebSocketClosedError

        if self.room.fail_writes and message[:2] == b"\x00\x02":
            self.room.fail_writes -= 1
            self.close()
            raise WebSocketClosedError()
        if self.closed:
            raise WebSocketClosedError()
        self.room.receive(self, message)
        done = self.loop.create_future()
        done.set_result(None)
        return done

    def close(self) -> None:
        """Close: the reader gets None."""
        if not self.closed:
            self.closed = True
            self.loop.call_soon_threadsafe(self.inbox.put_nowait, None)

    def deliver(self, message: bytes) -> None:
        """Queue a message from the room (from any thread)."""
        if not self.closed:
            self.loop.call_soon_threadsafe(self.inbox.put_nowait, message)


class FakeRoom:
    """A notebook's collaboration room in this process: the server's document and its clients."""

    def __init__(self, notebook: Any) -> None:
        from jupyter_ydoc import YNotebook

        self.document = YNotebook()
        self.document.set(notebook)
        self.sockets: list[FakeSocket] = []
        self.opened = 0
        """How many times a client connected."""
        self.hang = False
        """Never answer: a server that hangs."""
        self.fail_writes = 0
        """How many of the next updates from a client fail as a dropped socket."""
        self._lock = threading.Lock()

    async def open(self, server: Any, path: Path, timeout: float) -> FakeSocket:
        """Stand in for ``ysync.open_room``: a new socket to this room."""
        socket = FakeSocket(self, asyncio.get_running_loop())
        self.sockets.append(socket)
        self.opened += 1
        return socket

    def receive(self, socket: FakeSocket, message: bytes) -> None:
        """Handle a client's message as the server does: answer sync requests, apply updates."""
        from pycrdt import YMessageType, handle_sync_message

        with self._lock:
            if self.hang or message[0] != YMessageType.SYNC:
                return
            reply = handle_sync_message(message[1:], self.document.ydoc)
        if reply is not None:
            socket.deliver(reply)

    def user(self, change: Callable[[Any], T]) -> T:
        """Make a change as the user's browser does, and send it to the clients.

        Args:
            change: Given the room's ``YNotebook``, changes it.
        """
        from pycrdt import create_update_message

        with self._lock:
            document = self.document.ydoc
            before = document.get_state()
            with document.transaction():
                result = change(self.document)
            update = create_update_message(document.get_update(before))
        for socket in self.sockets:
            socket.deliver(update)
        for socket in self.sockets:
            if not socket.closed:
                asyncio.run_coroutine_threadsafe(_settle(), socket.loop).result(5)
        return result

    def type(self, cell_id: str, text: str) -> None:
        """The user types at the end of a cell."""

        def append(notebook: Any) -> None:
            source = self.cell(cell_id, notebook)["source"]
            source.insert(len(source), text)

        self.user(append)

    def cell(self, cell_id: str, notebook: Any = None) -> Any:
        """The room's Y cell with this id."""
        cells = (notebook or self.document).ycells
        return next(cell for cell in cells if cell["id"] == cell_id)

    def cells(self) -> list[tuple[str, str, str]]:
        """The room's cells as (id, type, source)."""
        with self._lock:
            return [
                (cell["id"], cell["cell_type"], str(cell["source"]))
                for cell in self.document.ycells
            ]

    def drop(self) -> None:
        """Close every socket, as a server restart or a network cut would."""
        for socket in self.sockets:
            socket.close()


async def _settle() -> None:
    """Let the loop handle what was queued before (messages already delivered)."""
    for _ in range(5):
        await asyncio.sleep(0)


# -- a real server ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A running Jupyter server."""

    url: str
    """Its base URL, ending in ``/``."""
    token: str
    """Its token."""
    root: Path
    """The folder it serves."""
    runtime_dir: Path
    """Where its ``jpserver-<pid>.json`` and its kernels' connection files are."""
    process: subprocess.Popen[bytes]
    """Its process."""

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """Call its REST API and return the JSON answer."""
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=30) as answer:
            return json.loads(answer.read() or b"null")


@contextmanager
def jupyter_server(
    python: Path | str,
    base: Path,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[Server]:
    """Run ``python -m jupyter_server`` on 127.0.0.1 until the block ends.

    Everything it reads or writes stays under ``base``: the root folder ``base/root``, the
    runtime, config and data folders, and a kernelspec (:data:`KERNEL`) running this
    interpreter, so that its kernels have nbagent.

    Args:
        python: The interpreter whose jupyter_server (and server extensions) run.
        base: A fresh folder.
        args: More command-line options (e.g. ``--LabApp.expose_app_in_browser=True``).
        env: More environment variables for the server and its kernels.

    Yields:
        The server, once it answers.
    """
    root, runtime = base / "root", base / "runtime"
    kernels = base / "share" / "kernels" / KERNEL
    for folder in (root, runtime, base / "config", base / "data", kernels):
        folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "nbagent test",
        "language": "python",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    token = secrets.token_hex(16)
    extra, env = (
        env or {},
        {
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "JUPYTER_CONFIG_DIR": str(base / "config"),
            "JUPYTER_DATA_DIR": str(base / "data"),
            "JUPYTER_PATH": str(base / "share"),
            "JUPYTER_PLATFORM_DIRS": "0",
        },
    )
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(extra)
    command = [
        str(python),
        "-m",
        "jupyter_server",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=0",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",
        *args,
    ]
    log = open(base / "server.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    try:
        info = runtime / f"jpserver-{process.pid}.json"
        deadline = time.monotonic() + 90
        while not info.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Jupyter server did not start; see {log.name}")
            time.sleep(0.1)
        time.sleep(0.1)  # the runtime file is written in one go, but not atomically
        data = json.loads(info.read_text())
        yield Server(data["url"], token, root, runtime, process)
    finally:
        stop_server(process, log)


# -- the user's browser ----------------------------------------------------------------------


class YUser:
    """A second client of a notebook's room on a real server, on its own thread and loop.

    It plays the user's browser: it sees what the agent changes, and types.
    """

    def __init__(self, server: Server, relative: str) -> None:
        from jupyter_ydoc import YNotebook

        self.notebook = YNotebook()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._provider: Any = None
        self._socket: Any = None
        self._task: Any = None
        self._run(self._connect(server, relative))

    async def _connect(self, server: Server, relative: str) -> None:
        from pycrdt import Provider
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest
        from tornado.websocket import websocket_connect

        headers = {"Authorization": f"token {server.token}"}
        answer = await AsyncHTTPClient().fetch(
            HTTPRequest(
                f"{server.url}api/collaboration/session/{relative}",
                method="PUT",
                headers=headers,
                body=json.dumps({"format": "json", "type": "notebook"}),
            )
        )
        session = json.loads(answer.body)
        room = f"json:notebook:{session['fileId']}"
        url = server.url.replace("http", "ws", 1)
        self._socket = await websocket_connect(
            HTTPRequest(
                f"{url}api/collaboration/room/{room}?sessionId={session['sessionId']}",
                headers=headers,
            )
        )
        self._provider = Provider(self.notebook.ydoc, _TornadoChannel(self._socket, room))
        self._task = asyncio.ensure_future(self._provider.start())
        await asyncio.wait_for(self._provider.synced.wait(), 30)

    def call(self, function: Callable[[Any], T]) -> T:
        """Run a function of the user's ``YNotebook`` on the client's thread."""

        async def run() -> T:
            return function(self.notebook)

        return self._run(run())

    def sources(self) -> dict[str, str]:
        """The cells' sources the user sees, by id."""
        return self.call(lambda nb: {cell["id"]: str(cell["source"]) for cell in nb.ycells})

    def ids(self) -> list[str]:
        """The cell ids the user sees, in order."""
        return self.call(lambda nb: [cell["id"] for cell in nb.ycells])

    def type(self, cell_id: str, text: str) -> None:
        """Type at the end of a cell (one transaction, as one keystroke)."""

        def append(notebook: Any) -> None:
            source = next(c for c in notebook.ycells if c["id"] == cell_id)["source"]
            source.insert(len(source), text)

        self.call(append)

    def wait_for(self, condition: Callable[[dict[str, str]], bool], timeout: float = 10) -> float:
        """Wait until the user's cells (sources by id) satisfy a condition.

        Returns:
            The time (``time.perf_counter()``) when they first did.

        Raises:
            AssertionError: Not within the timeout.
        """
        deadline = time.monotonic() + timeout
        while True:
            sources = self.sources()
            if condition(sources):
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise AssertionError(f"the user never saw it; the user sees {sources}")
            time.sleep(0.002)

    def close(self) -> None:
        """Disconnect and stop the thread."""

        async def stop() -> None:
            await self._provider.stop()
            self._socket.close()
            self._task.cancel()

        try:
            self._run(stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    def _run(self, work: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(30)


class _TornadoChannel:
    """A tornado websocket as a ``pycrdt.Channel``."""

    def __init__(self, socket: Any, path: str) -> None:
        self._socket = socket
        self._path = path

    @property
    def path(self) -> str:
        return self._path

    def __aiter__(self) -> _TornadoChannel:
        return self

    async def __anext__(self) -> bytes:
        message = await self._socket.read_message()
        if message is None:
            raise StopAsyncIteration
        return bytes(message)

    async def send(self, message: bytes) -> None:
        await self._socket.write_message(message, binary=True)

    async def recv(self) -> bytes:
        return await self.__anext__()


def make_notebook() -> Any:
    """The test notebook: a heading, a cell with an output, a cell, the agent's cell."""
    notebook = nbformat.v4.new_notebook()
    load = nbformat.v4.new_code_cell("data = [1, 2, 3]", id="load", execution_count=1)
    load.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok\n")]
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Analysis", id="intro"),
        load,
        nbformat.v4.new_code_cell("total = sum(data)", id="sum"),
        nbformat.v4.new_code_cell("%%agent\nTidy up", id="agent"),
    ]
    return notebook


def tools_for(root: Path, path: Path, live: LiveDocuments | None) -> dict[str, Tool]:
    """NotebookRead and NotebookEdit on ``path``, the open notebook; the agent runs in cell
    ``agent``."""
    return LazyTools(
        ToolContext(root=root, notebook_path=lambda: path, cell_id=lambda: "agent", live=live)
    )


def has_collaboration(python: Path) -> bool:
    """Tell whether an interpreter has jupyter-collaboration's server extension and the
    widgets' JupyterLab extension (which a user's JupyterLab has beside ipywidgets)."""
    if not python.exists():
        return False
    check = subprocess.run(
        [python, "-c", "import jupyter_server_ydoc, jupyterlab_widgets"],
        capture_output=True,
        check=False,
    )
    return check.returncode == 0


def saved_sources(path: Path, expected: list[str], timeout: float = 15) -> list[str]:
    """The sources in the notebook's file, once they are the expected ones (or the timeout).

    The server writes the file in place, so a read can see it half-written: that one is retried.
    """
    deadline = time.monotonic() + timeout
    sources: list[str] = []
    while time.monotonic() < deadline:
        try:
            sources = [cell.source for cell in nbformat.read(path, as_version=4).cells]
        except ValueError:  # nbformat's NotJSONError: read in the middle of a save
            sources = []
        if sources == expected:
            break
        time.sleep(0.1)
    return sources
