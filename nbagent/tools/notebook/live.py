"""JupyterLab's live notebook documents (real-time collaboration), seen from the kernel.

With jupyter-collaboration, JupyterLab shows the Jupyter server's shared Y document of a
notebook, not its file: the server writes the document to the file a second after a change,
and when something else writes the file it loads it back into the document, overwriting what
the user typed in the meantime. So the notebook tools read and edit the shared document
whenever the notebook's server has one. :class:`LiveDocuments` decides, for each call, where a
notebook is read or edited (:meth:`~LiveDocuments.route`):

- no running Jupyter server serves the notebook (:mod:`~nbagent.tools.notebook.servers`): the file;
- the server has no collaboration API (404 for the notebook's session): the file, and the
  server is not asked again;
- it has one but this kernel lacks pycrdt or jupyter-ydoc: the file, and the first edit's
  result says how to install pycrdt and jupyter-ydoc (nbagent's ``rtc`` extra);
- else the live document (:class:`LiveDocument`), one websocket per notebook
  (:mod:`~nbagent.tools.notebook.ysync`), kept open on a background event-loop thread, opened again
  after it dropped, closed when the extension is unloaded. No call waits longer than
  :attr:`LiveDocuments.timeout`: a live document that does not answer makes an edit fail
  (editing the file would overwrite the user's typing) and a read fall back to the file.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nbagent.core.errors import ToolError
from nbagent.core.loopthread import LoopThread
from nbagent.core.secrets import get_logger
from nbagent.tools.notebook import ysync
from nbagent.tools.notebook.file import CellEdit, Document, LoadedNotebook
from nbagent.tools.notebook.servers import JupyterServer, find_server

log = get_logger(__name__)

T = TypeVar("T")

MISSING_EXTRA = (
    "Note: JupyterLab has real-time collaboration on, but this kernel cannot join its live "
    "document (it lacks nbagent's rtc extra: pycrdt and jupyter-ydoc), so the file was "
    "edited; JupyterLab loads it within about 3 s, overwriting what was typed but not yet "
    "saved in that time. Install them with `pip install pycrdt jupyter-ydoc` (or nbagent's "
    "rtc extra, `pip install -e '.[rtc]'` in a clone) in the kernel's environment, then "
    "restart the kernel."
)
"""Said once, in the first edit's result, when the server has real-time collaboration and
the kernel cannot use it."""


@dataclass(frozen=True)
class Route:
    """Where a notebook is read and edited: its live document, or its file."""

    document: Document | None
    """The front end's or live document, or None for the file."""
    note: str = ""
    """What the tool result should add (why the file is used), or empty."""


class LiveDocuments:
    """JupyterLab's live notebook documents, one connection per notebook, on a background thread.

    The extension builds one per kernel and closes it when unloaded. The thread starts on
    first use. Thread-safe.
    """

    def __init__(self, timeout: float = 10.0, runtime_dir: Path | None = None) -> None:
        """Prepare (nothing is started or imported yet).

        Args:
            timeout: Seconds one read or edit may wait for the server, connecting included.
            runtime_dir: Jupyter's runtime folder; ``jupyter_runtime_dir()`` by default.
        """
        self.timeout = timeout
        """Seconds one read or edit may wait for the server, connecting included."""
        self.runtime_dir = runtime_dir
        """Where the servers' runtime files are looked for (None: Jupyter's default)."""
        self._documents: dict[Path, LiveDocument] = {}
        # Servers whose notebooks go to their files: True when the rtc extra is missing here,
        # False when the server has no real-time collaboration.
        self._file_only: dict[JupyterServer, bool] = {}
        self._hinted = False
        self._lock = threading.Lock()
        self._background = LoopThread("nbagent-livedoc")
        self._closed = False

    def route(self, path: Path, editing: bool = False) -> Route:
        """Decide where a notebook is read or edited, connecting to its live document if needed.

        Args:
            path: The notebook's resolved path.
            editing: True for an edit: a live document that does not answer is then an error
                (editing the file would overwrite the user's typing), not a reason to read the
                file.

        Returns:
            The route; its note says why the file is used when the user should know.

        Raises:
            ToolError: An edit, and the server has real-time collaboration but its live
                document did not answer in time.
        """
        server = find_server(path, self.runtime_dir) if path.is_file() else None
        if server is None:
            return Route(None)
        with self._lock:
            missing_extra = self._file_only.get(server)
        if missing_extra is not None:
            return self._file_route(missing_extra, editing)
        document = self._document(path, server)
        try:
            self._run(document.connect())
        except ysync.NotLive as exc:
            log.info("No live document of %s at %s: %s", path, server.url, exc)
            if exc.lasting:
                with self._lock:
                    self._file_only[server] = False
            return Route(None)
        except ysync.MissingExtra:
            with self._lock:
                self._file_only[server] = True
            return self._file_route(True, editing)
        except ToolError:
            raise
        except Exception as exc:
            log.warning("The live document of %s did not answer", path, exc_info=True)
            reason = _reason(exc, self.timeout)
            if editing:
                raise ToolError(
                    f"JupyterLab's live document of {path.name} did not answer ({reason}). The "
                    "notebook was not changed: editing its file instead would overwrite what "
                    "is being typed in JupyterLab. Try again in a moment."
                ) from exc
            return Route(
                None,
                f"[Read from the file: JupyterLab's live document did not answer ({reason}); "
                "the file may lag what JupyterLab shows.]",
            )
        return Route(document)

    def close(self, timeout: float = 5.0) -> None:
        """Close every connection and stop the thread (idempotent).

        Args:
            timeout: Seconds to wait for the thread at most.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            documents = list(self._documents.values())
            self._documents.clear()
        if not self._background.started:
            return
        loop = self._background.loop()
        with suppress(TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(_disconnect(documents), loop).result(timeout)
        self._background.stop(timeout)

    def _file_route(self, missing_extra: bool, editing: bool) -> Route:
        """The file route, with the missing-extra note on the first edit that needs it."""
        with self._lock:
            hint = missing_extra and editing and not self._hinted
            self._hinted = self._hinted or hint
        return Route(None, MISSING_EXTRA if hint else "")

    def _document(self, path: Path, server: JupyterServer) -> LiveDocument:
        """The document of a notebook, made anew when its server changed."""
        with self._lock:
            old = self._documents.get(path)
            if old is not None and old.server == server:
                return old
            document = self._documents[path] = LiveDocument(self, path, server)
        if old is not None:
            self._run(old.disconnect())
        return document

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the thread's loop, waiting :attr:`timeout` seconds at most."""
        with self._lock:
            if self._closed:
                work.close()
                raise ToolError("nbagent is being unloaded: the notebook was not read or changed.")
            loop = self._background.loop()
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(work, self.timeout), loop)
        try:
            return future.result(self.timeout + 5)
        except TimeoutError:
            future.cancel()
            raise


class LiveDocument:
    """The live document of one notebook, kept in sync over one websocket.

    Its methods may be called from any thread; the work is done on the owner's loop, where
    the document lives.
    """

    def __init__(self, owner: LiveDocuments, path: Path, server: JupyterServer) -> None:
        """Remember the notebook (nothing is connected yet).

        Args:
            owner: The :class:`LiveDocuments` whose loop runs the connection.
            path: The notebook's resolved path.
            server: The server that shares it.
        """
        self.path = path
        """The notebook's resolved path."""
        self.server = server
        """The server that shares it."""
        self._owner = owner
        self._connection: ysync.Connection | None = None
        self._connecting: asyncio.Lock | None = None

    def read(self, outputs: bool = True) -> LoadedNotebook:
        """Return the document as it is now, as a notebook (stamped
        :data:`~nbagent.tools.notebook.file.LIVE_STAMP`).

        Args:
            outputs: Ignored: the document is local, the outputs cost nothing to read.

        Raises:
            ToolError: The connection failed and could not be opened again in time.
        """
        try:
            return self._owner._run(self._read())
        except ToolError:
            raise
        except Exception as exc:
            reason = _reason(exc, self._owner.timeout)
            raise ToolError(
                f"JupyterLab's live document of {self.path.name} did not answer ({reason}). "
                "Try again in a moment."
            ) from exc

    def edit(self, change: Callable[[LoadedNotebook], tuple[CellEdit, T]]) -> T:
        """Decide a change from the document as it is, make it and send it to the server.

        ``change`` runs on the loop thread, inside the Y transaction that makes the change,
        so no update from the server comes in between. It may refuse by raising
        :class:`~nbagent.core.errors.ToolError`; it is called a second time when the socket
        dropped on the first try.

        Args:
            change: Given the notebook, returns the change and what :meth:`edit` returns.

        Returns:
            What ``change`` returned beside the change.

        Raises:
            ToolError: ``change`` refused, or the change could not be sent.
        """
        try:
            return self._owner._run(self._edit(change))
        except ToolError:
            raise
        except Exception as exc:
            reason = _reason(exc, self._owner.timeout)
            raise ToolError(
                f"The edit could not be sent to JupyterLab's live document of {self.path.name} "
                f"({reason}). Read the notebook again with NotebookRead, then edit it."
            ) from exc

    def show_outputs(
        self,
        cell_id: str,
        outputs: tuple[dict[str, Any], ...],
        execution_count: int | None,
        running: bool = False,
    ) -> None:
        """Show a code cell's outputs and execution count, or that it runs (``[*]``).

        Args:
            cell_id: The cell.
            outputs: Its outputs (nbformat dicts); none while it runs.
            execution_count: Its execution count.
            running: Whether it runs now.

        Raises:
            ToolError: The cell is gone, or the change could not be sent.
        """

        def change(notebook: LoadedNotebook) -> tuple[CellEdit, None]:
            index = notebook.index_of(cell_id)
            edit = CellEdit(
                "outputs",
                index,
                outputs=outputs,
                execution_count=execution_count,
                running=running,
            )
            return edit, None

        self.edit(change)

    async def connect(self) -> None:
        """Open the connection unless it is open (on the loop).

        Raises:
            ysync.NotLive: The server offers no live document (no collaboration, no answer).
            ysync.MissingExtra: pycrdt or jupyter-ydoc cannot be imported.
        """
        await self._connected()

    async def disconnect(self) -> None:
        """Close the connection, if any (on the loop)."""
        if self._connection is not None:
            self._connection.close()

    async def _connected(self) -> ysync.Connection:
        """The open connection, opened (again) when there is none or it dropped."""
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._connection is None or self._connection.closed:
                socket = await ysync.open_room(self.server, self.path, self._owner.timeout)
                connection = ysync.Connection(socket, self.path)
                try:
                    await connection.sync()
                except BaseException:
                    connection.close()
                    raise
                self._connection = connection
            return self._connection

    async def _read(self) -> LoadedNotebook:
        connection = await self._connected()
        return connection.snapshot()

    async def _edit(self, change: Callable[[LoadedNotebook], tuple[CellEdit, T]]) -> T:
        try:
            return await (await self._connected()).edit(change)
        except ysync.Dropped:
            return await (await self._connected()).edit(change)


def _reason(exc: BaseException, timeout: float) -> str:
    """Say in a few words why the server did not answer."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    return str(exc) or type(exc).__name__


async def _disconnect(documents: list[LiveDocument]) -> None:
    """Close the documents' connections (on the loop)."""
    for document in documents:
        await document.disconnect()
