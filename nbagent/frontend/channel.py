"""The comm between this kernel and nbagent's JupyterLab extension (``labextension/``).

The kernel opens a comm with target :data:`TARGET` at ``%load_ext`` and at the start of each
``%%agent`` cell (:meth:`FrontEndChannel.open`). Every front end that shows this kernel's
notebook and has the extension answers ``hello``; the one that answered last (among those
that show the notebook asked about) then serves requests against the notebook model the user
sees. Requests travel on IOPub, which flows while the cell runs; replies come over a kernel
subshell (ipykernel 7), handled on that subshell's thread while the main shell is still busy
with the ``%%agent`` cell. A front end whose kernel has no subshells could only answer after
the cell: it is not used.

Exceptions::

    FrontEndError        the front end did not answer in time, or refused the request
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nbagent.secrets import get_logger

log = get_logger(__name__)

TARGET = "nbagent.frontend"
"""The comm target the extension registers on every notebook's kernel connection."""


class FrontEndError(Exception):
    """The front end did not answer a request in time, or could not do it."""


@dataclass(frozen=True)
class FrontEnd:
    """One front end (a browser tab's kernel connection) that showed itself on the comm."""

    client: str
    """The kernel connection's client id: requests name it, so one front end answers."""
    path: str
    """The notebook's path, relative to the Jupyter server's root."""
    app: str
    """The application and its version, e.g. ``JupyterLab 4.6.6``."""
    subshell: bool
    """Whether its replies come over a subshell, i.e. while a cell runs."""


class FrontEndChannel:
    """The kernel's end of the comm to nbagent's JupyterLab extension. Thread-safe.

    Args:
        greeting_wait: Seconds after the comm opened that :meth:`front_end` waits for a
            front end to say hello (the answer usually takes a few milliseconds).
        timeout: Seconds one request waits for its answer.
    """

    def __init__(self, greeting_wait: float = 1.0, timeout: float = 10.0) -> None:
        self.greeting_wait = greeting_wait
        """Seconds after opening that :meth:`front_end` waits for a hello."""
        self.timeout = timeout
        """Seconds one request waits for its answer."""
        self._comm: Any = None
        self._previous: Any = None
        self._opened_at = 0.0
        self._front_ends: dict[str, FrontEnd] = {}
        self._greeted = threading.Condition()
        self._pending: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def open(self) -> None:
        """Open a new comm: front ends that show the notebook now, a reloaded page or a new
        tab included, answer it.

        The comm before stays open until the next one opens: JupyterLab makes a subshell for a
        comm target while any comm of it is open (checking only after the new comm's
        ``kernel_info``), and making one publishes a status that shows the kernel idle, which
        is harmless at ``%load_ext`` but wrong in the middle of an ``%%agent`` cell.
        """
        from nbagent.frontend.comm import open_comm

        with self._greeted:
            self._front_ends.clear()
            self._opened_at = time.monotonic()
        comm = open_comm(TARGET, self._on_message)
        with self._lock:
            older, self._previous, self._comm = self._previous, self._comm, comm
        if older is not None:
            older.close()

    def front_end(self, shows: Callable[[FrontEnd], bool] = lambda front: True) -> FrontEnd | None:
        """Return the front end that showed itself last, waiting briefly after opening.

        Args:
            shows: Which front ends will do (e.g. those that show a given notebook: a kernel
                may serve tabs of two notebooks).

        Returns:
            The front end, or None when none with the extension (and subshells) answered.
        """
        with self._lock:
            unopened = self._comm is None
        if unopened:
            self.open()
        with self._greeted:
            deadline = self._opened_at + self.greeting_wait
            while not self._usable(shows) and (left := deadline - time.monotonic()) > 0:
                self._greeted.wait(left)
            usable = self._usable(shows)
            return usable[-1] if usable else None

    def request(
        self, front_end: FrontEnd, op: str, wait: bool = True, **data: Any
    ) -> dict[str, Any]:
        """Send a request to one front end and wait for its answer.

        Args:
            front_end: The front end that should answer.
            op: ``read`` or ``edit``.
            wait: Wait for the answer; False sends it and returns an empty answer at once
                (for what the user need not see before the work goes on, as ``[*]``).
            **data: The request's fields.

        Returns:
            The answer's fields.

        Raises:
            FrontEndError: No answer within :attr:`timeout`, or the front end failed.
        """
        with self._lock:
            comm = self._comm
            request_id = f"r{next(self._ids)}"
            waiter: tuple[threading.Event, list[dict[str, Any]]] = (threading.Event(), [])
            if wait:
                self._pending[request_id] = waiter
        if comm is None:
            raise FrontEndError("the connection to JupyterLab is closed")
        if not wait:
            comm.send({"op": op, "id": request_id, "to": front_end.client, **data})
            return {}
        try:
            comm.send({"op": op, "id": request_id, "to": front_end.client, **data})
            if not waiter[0].wait(self.timeout):
                with self._greeted:
                    self._front_ends.pop(front_end.client, None)
                raise FrontEndError(f"{front_end.app} did not answer within {self.timeout:g} s")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if not waiter[1]:
            raise FrontEndError("the connection to JupyterLab was closed")
        answer = waiter[1][0]
        if not answer.get("ok"):
            raise FrontEndError(f"{front_end.app} could not do it: {answer.get('error')}")
        return answer

    def close(self) -> None:
        """Close the comm (idempotent); waiting requests fail."""
        with self._lock:
            comms = [c for c in (self._comm, self._previous) if c is not None]
            self._comm = self._previous = None
            pending = list(self._pending.values())
        for event, _ in pending:
            event.set()
        for comm in comms:
            comm.close()

    def _usable(self, shows: Callable[[FrontEnd], bool]) -> list[FrontEnd]:
        return [front for front in self._front_ends.values() if front.subshell and shows(front)]

    def _on_message(self, data: dict[str, Any]) -> None:
        """Take a message from a front end (on the subshell's thread)."""
        op = data.get("op")
        if op == "hello":
            front = FrontEnd(
                client=str(data.get("client")),
                path=str(data.get("path", "")),
                app=str(data.get("app", "a front end")),
                subshell=bool(data.get("subshell")),
            )
            log.info("Front end %s shows %s (subshell: %s)", front.app, front.path, front.subshell)
            with self._greeted:
                self._front_ends.pop(front.client, None)
                self._front_ends[front.client] = front
                self._greeted.notify_all()
        elif op == "bye":
            with self._greeted:
                self._front_ends.pop(str(data.get("client")), None)
        else:
            with self._lock:
                waiter = self._pending.get(str(data.get("id")))
            if waiter is not None:
                waiter[1].append(data)
                waiter[0].set()
