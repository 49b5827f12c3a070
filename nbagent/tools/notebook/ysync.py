"""One notebook's room on a Jupyter server with jupyter-collaboration, over one websocket.

:func:`open_room` asks the server for the notebook's collaboration session and opens the
room's websocket; :class:`Connection` keeps a ``jupyter_ydoc.YNotebook`` in sync with the
room by the Y sync protocol, reads it as an nbformat notebook and makes a
:class:`~nbagent.tools.notebook.file.CellEdit` in one Y transaction, sent before it returns. A
cell's source is changed in place (:func:`retype`: only the span that differs), so typing
elsewhere in it by another client at the same moment is kept. Everything here runs on one
event loop (the caller's); pycrdt and jupyter-ydoc are imported only once a server answers
that it has real-time collaboration.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from nbagent.core.errors import ToolError
from nbagent.core.secrets import get_logger
from nbagent.tools.notebook.file import CellEdit, LoadedNotebook, notebook_from_dict
from nbagent.tools.notebook.servers import JupyterServer

log = get_logger(__name__)

T = TypeVar("T")

_MAX_MESSAGE_BYTES = 1 << 30
"""The largest websocket message accepted (a whole notebook with its outputs, at sync)."""


class NotLive(Exception):
    """The server offers no live document of the notebook: the file is to be used."""

    def __init__(self, reason: str, lasting: bool) -> None:
        """Say why.

        Args:
            reason: Why, in a few words.
            lasting: True when the server has no collaboration API at all.
        """
        super().__init__(reason)
        self.lasting = lasting
        """True when the server has no collaboration at all (remembered for its lifetime)."""


class MissingExtra(Exception):
    """The server has real-time collaboration, but pycrdt or jupyter-ydoc is missing here."""


class Dropped(Exception):
    """The websocket closed: whatever was not sent did not reach the server."""


async def open_room(server: JupyterServer, path: Path, timeout: float) -> Any:
    """Ask the server for the notebook's collaboration session and open its room's websocket.

    Args:
        server: The server that serves the notebook.
        path: The notebook's resolved path, under the server's root folder.
        timeout: Seconds to wait for each answer at most.

    Returns:
        The tornado websocket connection.

    Raises:
        NotLive: The server has no collaboration API, or did not answer the request.
        MissingExtra: pycrdt or jupyter-ydoc cannot be imported.
    """
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    relative = quote(path.relative_to(server.root_dir).as_posix())
    request = HTTPRequest(
        server.api(f"api/collaboration/session/{relative}"),
        method="PUT",
        headers={**server.headers, "Content-Type": "application/json"},
        body=json.dumps({"format": "json", "type": "notebook"}),
        connect_timeout=timeout,
        request_timeout=timeout,
    )
    try:
        response = await AsyncHTTPClient().fetch(request, raise_error=False)
    except OSError as exc:
        raise NotLive(f"no answer: {exc}", lasting=False) from exc
    if response.code == 404:
        raise NotLive("no real-time collaboration", lasting=True)
    if response.code not in (200, 201):
        raise NotLive(f"HTTP {response.code} {response.reason}", lasting=False)
    try:
        import jupyter_ydoc  # noqa: F401  (checked here, used by Connection)
        import pycrdt  # noqa: F401
    except ImportError as exc:
        raise MissingExtra(str(exc)) from exc
    session = json.loads(response.body)
    room = f"json:notebook:{session['fileId']}"
    return await websocket_connect(
        HTTPRequest(
            server.api(f"api/collaboration/room/{room}?sessionId={session['sessionId']}", "ws"),
            headers=server.headers,
            connect_timeout=timeout,
            request_timeout=timeout,
        ),
        max_message_size=_MAX_MESSAGE_BYTES,
    )


class Connection:
    """One websocket to a notebook's room and the Y document it keeps in sync.

    Build it on the event loop that will run it, and use it there only.
    """

    def __init__(self, socket: Any, path: Path) -> None:
        """Start reading the socket (call :meth:`sync` next).

        Args:
            socket: The room's websocket (what :func:`open_room` returns).
            path: The notebook's resolved path.
        """
        from jupyter_ydoc import YNotebook

        self.path = path
        """The notebook's resolved path."""
        self.closed = False
        """True once the socket closed: nothing more is received or sent."""
        self.notebook = YNotebook()
        """The document, as the server last sent it plus this client's edits."""
        self._socket = socket
        self._synced = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def sync(self) -> None:
        """Send the document's state and wait for the server's answer (the whole document).

        Raises:
            Dropped: The server closed the socket first.
        """
        from pycrdt import create_sync_message

        await self._send(create_sync_message(self.notebook.ydoc))
        await self._synced.wait()
        if self.closed:
            code, reason = getattr(self._socket, "close_code", None), self._socket_reason()
            raise Dropped(f"the server closed the connection ({code}{reason})")

    def snapshot(self) -> LoadedNotebook:
        """The document as a notebook, as it is now (read only: nothing is written to it)."""
        from pycrdt import Map

        meta = self.notebook.ydoc.get("meta", type=Map).to_py() or {}
        data = {
            "nbformat": int(meta.get("nbformat", 4)),
            "nbformat_minor": int(meta.get("nbformat_minor", 5)),
            "metadata": meta.get("metadata") or {},
            "cells": [_nbformat_cell(ycell.to_py()) for ycell in self.notebook.ycells],
        }
        return notebook_from_dict(self.path, data)

    async def edit(self, change: Callable[[LoadedNotebook], tuple[CellEdit, T]]) -> T:
        """Decide a change from the document as it is, make it in one transaction, send it.

        ``change`` runs inside the transaction, so no update from the server comes in
        between; it refuses by raising :class:`~nbagent.core.errors.ToolError` (nothing changes).

        Args:
            change: Given the notebook, returns the change and what :meth:`edit` returns.

        Returns:
            What ``change`` returned beside the change.

        Raises:
            Dropped: The socket is closed or closed while sending; the server has nothing of
                the change, and this connection is done.
        """
        from pycrdt import create_update_message

        if self.closed:
            raise Dropped("the connection is closed")
        document = self.notebook.ydoc
        before = document.get_state()
        try:
            with document.transaction():
                edit, result = change(self.snapshot())
                _apply(self.notebook, edit)
        except ToolError:
            raise
        except BaseException:
            self.close()  # a half-made change must never be sent with a later one
            raise
        await self._send(create_update_message(document.get_update(before)))
        return result

    def close(self) -> None:
        """Close the socket; the reader then ends."""
        self.closed = True
        self._synced.set()
        self._socket.close()

    async def _read(self) -> None:
        """Apply the server's updates and answer its sync requests until the socket closes."""
        from pycrdt import YMessageType, YSyncMessageType, handle_sync_message

        try:
            while (message := await self._socket.read_message()) is not None:
                if isinstance(message, str) or len(message) < 2:
                    continue
                if message[0] == YMessageType.SYNC:
                    reply = handle_sync_message(message[1:], self.notebook.ydoc)
                    if message[1] == YSyncMessageType.SYNC_STEP2:
                        self._synced.set()
                    if reply is not None:
                        await self._send(reply)
        except Exception:  # a malformed message, a failed reply: drop the connection
            log.warning("The live document of %s was dropped", self.path, exc_info=True)
        finally:
            self.close()

    async def _send(self, message: bytes) -> None:
        from tornado.iostream import StreamClosedError
        from tornado.websocket import WebSocketClosedError

        try:
            await self._socket.write_message(message, binary=True)
        except (StreamClosedError, WebSocketClosedError) as exc:
            self.close()
            raise Dropped("the connection dropped") from exc

    def _socket_reason(self) -> str:
        reason = getattr(self._socket, "close_reason", None)
        return f": {reason}" if reason else ""


def _nbformat_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Turn a Y cell's content into nbformat JSON: no collaboration state, integer counts."""
    cell.pop("execution_state", None)
    for part in (cell, *(cell.get("outputs") or ())):
        if isinstance(part.get("execution_count"), float):
            part["execution_count"] = int(part["execution_count"])
    return cell


def _apply(notebook: Any, edit: CellEdit) -> None:
    """Make a change to a ``jupyter_ydoc.YNotebook`` (inside the caller's transaction)."""
    from pycrdt import Array, Text

    cells = notebook.ycells
    if edit.action == "insert":
        cells.insert(edit.index, notebook.create_ycell(edit.cell))
    elif edit.action == "delete":
        del cells[edit.index]
    elif edit.action == "source":
        text = cells[edit.index].get("source")
        if isinstance(text, Text):
            retype(text, edit.source)
        else:
            cells[edit.index]["source"] = Text(edit.source)
        if edit.mark is not None:
            _set_mark(cells[edit.index], edit.mark)
    elif edit.action == "outputs":
        cell = cells[edit.index]
        cell["outputs"] = Array([_youtput(output) for output in edit.outputs])
        cell["execution_count"] = edit.execution_count
        cell["execution_state"] = "running" if edit.running else "idle"
    else:
        cells[edit.index] = notebook.create_ycell(edit.cell)


def _set_mark(cell: Any, mark: dict[str, Any]) -> None:
    """Set a Y cell's ``nbagent`` metadata (the agent's mark), or remove it (``{}``)."""
    from pycrdt import Map

    metadata = cell.get("metadata")
    if not isinstance(metadata, Map):
        metadata = cell["metadata"] = Map(dict(metadata or {}))
    if mark:
        metadata["nbagent"] = mark
    elif "nbagent" in metadata:
        del metadata["nbagent"]


def _youtput(output: dict[str, Any]) -> Any:
    """An output as JupyterLab keeps it in a Y document (a stream's text as a Y text)."""
    from pycrdt import Map, Text

    output = dict(output)
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        output["text"] = Text("".join(text) if isinstance(text, list) else text)
    return Map(output)


def retype(text: Any, new: str) -> None:
    """Change a Y text into ``new`` by replacing only what lies between the common head and tail.

    One transaction. Text typed elsewhere in it at the same moment, by another client, is
    kept; cursors outside the changed span stay where they were.

    Args:
        text: A ``pycrdt.Text`` (positions count UTF-8 bytes).
        new: What it should hold.
    """
    old = str(text)
    if old == new:
        return
    head = len(os.path.commonprefix([old, new]))
    room = min(len(old), len(new)) - head
    tail = min(len(os.path.commonprefix([old[::-1], new[::-1]])), room)
    start = len(old[:head].encode())
    stop = len(old[: len(old) - tail].encode())
    middle = new[head : len(new) - tail]
    with text.doc.transaction():
        if stop > start:
            del text[start:stop]
        if middle:
            text.insert(start, middle)
