"""The comm between this kernel and nbagent's JupyterLab extension (``labextension/``).

The kernel opens a comm with target :data:`TARGET` at ``%load_ext`` and at the start of each
``%%agent`` cell (:meth:`FrontEndChannel.open`). Every front end that shows this kernel's
notebook and has the extension answers ``hello``: its client id, the notebook's path (from
the Jupyter server's root), its application and versions, and whether it answers over a
subshell. It says ``path`` when the user renames or moves the notebook, and ``bye`` when its
tab closes. The front end that runs the ``%%agent`` cell (else the one that answered last)
then serves requests against the notebook model the user sees, and shows a withdrawn
question's stdin box as withdrawn (:meth:`FrontEndChannel.show_withdrawn`). Requests travel on
IOPub, which flows while the cell runs; replies come over a kernel subshell (ipykernel 7),
handled on that subshell's thread while the main shell is still busy with the ``%%agent`` cell.

A front end older than :data:`MINIMUM_VERSIONS`, or one without a subshell, could answer only
after the cell: it is not used, and :attr:`FrontEnd.problem` says what it needs. What each
front end said last is kept across comms (:meth:`FrontEndChannel.stated`): an old front end's
hello reaches the kernel only between cells, and the notebook's current path is known even
when no front end answers now.

Exceptions::

    FrontEndError        the front end did not answer in time, or refused the request
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from nbagent.core.secrets import get_logger

log = get_logger(__name__)

TARGET = "nbagent.frontend"
"""The comm target the extension registers on every notebook's kernel connection."""

EXTENSION = "nbagent-frontend"
"""The JupyterLab extension's name, as ``jupyter labextension list`` shows it."""

MINIMUM_VERSIONS: dict[str, tuple[int, int]] = {"JupyterLab": (4, 4), "Notebook": (7, 4)}
"""The oldest front ends nbagent works in: the first whose kernel connections open subshells,
over which the page answers while the ``%%agent`` cell keeps the kernel busy."""


_latest: FrontEndChannel | None = None
"""The channel that opened a comm last (in a kernel, the extension's one)."""


def latest() -> FrontEndChannel | None:
    """The channel that opened a comm last and is not closed (None outside a kernel)."""
    return _latest


def needed() -> str:
    """The supported front ends in words: ``JupyterLab 4.4 or Notebook 7.4 (or newer)``."""
    names = [f"{app} {_dotted(version)}" for app, version in MINIMUM_VERSIONS.items()]
    return f"{' or '.join(names)} (or newer)"


def _upgrade(application: str) -> str:
    """What to install to reach an application's minimum (its package is its name in lower
    case): ``'jupyterlab>=4.4'``."""
    return f"'{application.lower()}>={_dotted(MINIMUM_VERSIONS[application])}'"


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


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
    application: str = ""
    """The application: ``JupyterLab``, ``Notebook``, or what another front end calls itself."""
    version: str = ""
    """The application's version, e.g. ``4.6.6`` (empty when it did not say)."""
    extension: str = ""
    """The version of nbagent's extension in it."""

    @classmethod
    def from_hello(cls, data: dict[str, Any]) -> FrontEnd:
        """Read a ``hello``: its ``versions`` (``app``, ``version``, ``extension``), else the
        older fields (``app`` as ``JupyterLab 4.6.6``, the extension's ``version``).

        Args:
            data: The message's data.
        """
        versions = data.get("versions") if isinstance(data.get("versions"), dict) else {}
        named = str(data.get("app") or "")
        head, _, tail = named.rpartition(" ")
        said_version = tail if head and tail[:1].isdigit() else ""
        application = str(versions.get("app") or (head if said_version else named))
        if application == "Jupyter Notebook":
            application = "Notebook"
        version = str(versions.get("version") or said_version)
        return cls(
            client=str(data.get("client")),
            path=str(data.get("path", "")),
            app=f"{application} {version}".strip() or "a front end",
            subshell=bool(data.get("subshell")),
            application=application,
            version=version,
            extension=str(versions.get("extension") or data.get("version") or ""),
        )

    @property
    def problem(self) -> str | None:
        """Why nbagent cannot work with this front end, and what to do; None when it can."""
        minimum = MINIMUM_VERSIONS.get(self.application)
        release = _release(self.version)
        if minimum is not None and release and release < minimum:
            return (
                f"{self.app} is older than nbagent supports: it needs {needed()}, whose kernel "
                "subshells let the page answer while an %%agent cell runs. Upgrade it in the "
                f"environment that runs it (`pip install -U {_upgrade(self.application)}`), "
                "restart it and reload the page."
            )
        if not self.subshell:
            return (
                f"{self.app} opened no kernel subshell for nbagent, so it could answer only "
                f"once the %%agent cell has ended. Reload the page (nbagent needs {needed()} "
                "and ipykernel 7 or newer)."
            )
        return None


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version (``4.4.0a1`` -> ``(4, 4, 0)``); empty if none."""
    numbers = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
    return tuple(numbers)


class FrontEndChannel:
    """The kernel's end of the comm to nbagent's JupyterLab extension. Thread-safe.

    Args:
        greeting_wait: Seconds after the comm opened that :meth:`front_end` waits for a
            front end to say hello (the answer usually takes a few milliseconds). Once one
            such wait has ended without any front end ever saying hello, none is waited for
            again until one does (VS Code, nbclient, a page without the extension).
        timeout: Seconds one request waits for its answer.
        clock: The monotonic clock the waits are measured on.
    """

    def __init__(
        self,
        greeting_wait: float = 1.0,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.greeting_wait = greeting_wait
        """Seconds after opening that :meth:`front_end` waits for a hello."""
        self.timeout = timeout
        """Seconds one request waits for its answer."""
        self._comm: Any = None
        self._previous: Any = None
        self._opened_at = 0.0
        self._nobody = False  # a greeting wait ended and no front end ever said hello
        self._clock = clock
        self._front_ends: dict[str, FrontEnd] = {}
        self._stated: dict[str, FrontEnd] = {}
        self._told: set[tuple[str, str]] = set()
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

        global _latest
        with self._greeted:
            self._front_ends.clear()
            self._opened_at = self._clock()
        comm = open_comm(TARGET, self._on_message)
        with self._lock:
            older, self._previous, self._comm = self._previous, self._comm, comm
        _latest = self
        if older is not None:
            older.close()

    def front_end(
        self, shows: Callable[[FrontEnd], bool] = lambda front: True, client: str | None = None
    ) -> FrontEnd | None:
        """Return the front end to serve a request, waiting briefly after opening.

        Args:
            shows: Which front ends will do (e.g. those that show a given notebook: a kernel
                may serve tabs of two notebooks).
            client: The client id of the front end that runs the cell: it is chosen when it
                answered, else the one that answered last.

        Returns:
            The front end, or None when none with the extension, a supported version and a
            subshell answered on this comm.
        """
        with self._lock:
            unopened = self._comm is None
        if unopened:
            self.open()
        with self._greeted:
            nobody = self._nobody and not self._stated
            deadline = self._opened_at + (0 if nobody else self.greeting_wait)
            while not self._usable(shows) and (left := deadline - self._clock()) > 0:
                self._greeted.wait(left)
            self._nobody = not self._stated
            return _chosen(self._usable(shows), client)

    def stated(self, client: str | None = None) -> FrontEnd | None:
        """Return what a front end said last, on this comm or an earlier one (without waiting).

        Args:
            client: The client id of the front end that runs the cell: its word wins.

        Returns:
            The front end as it last said it was (its notebook's path, its versions), whether
            nbagent can work with it or not; None when none ever said hello (or all said bye).
        """
        with self._greeted:
            return _chosen(list(self._stated.values()), client)

    def notices(self) -> list[str]:
        """Say, once per front end, why nbagent cannot work with it (for the cell to show).

        Returns:
            The :attr:`FrontEnd.problem` of each front end that has one and was not told yet.
        """
        with self._greeted:
            fronts = list(self._stated.values())
            said = [(f.client, f.problem) for f in fronts if f.problem is not None]
            new = [
                (client, problem) for client, problem in said if (client, problem) not in self._told
            ]
            self._told.update(new)
        return [problem for _, problem in new]

    def why_unseen(self, client: str | None, vscode: bool = False) -> str:
        """Say why no front end serves the notebook now, and what the user can do.

        Args:
            client: The client id of the front end that runs the cell.
            vscode: The kernel runs in VS Code (it set ``__vsc_ipynb_file__``).

        Returns:
            A front end's :attr:`~FrontEnd.problem`; that one answered before and not now; or
            how to install and enable the extension.
        """
        front = self.stated(client)
        if front is not None:
            return front.problem or (
                f"{front.app} showed this notebook before but did not answer now (is the page "
                "still open, or being reloaded?): reload the page, then try again."
            )
        if vscode:
            return (
                "VS Code runs no nbagent extension: nbagent sees only the notebook's saved "
                "file (save it to show nbagent your changes) and cannot change the notebook as "
                "VS Code shows it."
            )
        return (
            "No front end with nbagent's extension answered. It works in "
            f"{needed()}: in the environment that runs JupyterLab, `jupyter labextension "
            f"list` should show {EXTENSION} enabled; if it is disabled, run `jupyter "
            f"labextension enable {EXTENSION}`; if it is missing, `pip install jupyter-nbagent` "
            "there; then reload the page."
        )

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

    def show_withdrawn(self, request: str, client: str, reason: str) -> bool:
        """Have the front end that was asked a question show it withdrawn.

        nbagent's extension disables the question's stdin box and says why on it; the box
        goes when the cell's execution ends.

        Args:
            request: The message id of the question's input request.
            client: The client id of the front end it was sent to (the one running the cell).
            reason: Why it was withdrawn, as a clause ("its call reached its time limit").

        Returns:
            Whether that front end shows it so: False when it has no usable extension on this
            comm, did not answer, or did not get the question (yet).
        """
        front = self.front_end(lambda front: front.client == client)
        if front is None:
            return False
        try:
            answer = self.request(front, "withdrawn", request=request, reason=reason)
        except FrontEndError as error:
            log.info("The withdrawn question was not shown on the page: %s", error)
            return False
        return bool(answer.get("shown"))

    def close(self) -> None:
        """Close the comm (idempotent); waiting requests fail."""
        global _latest
        if _latest is self:
            _latest = None
        with self._lock:
            comms = [c for c in (self._comm, self._previous) if c is not None]
            self._comm = self._previous = None
            pending = list(self._pending.values())
        for event, _ in pending:
            event.set()
        for comm in comms:
            comm.close()

    def _usable(self, shows: Callable[[FrontEnd], bool]) -> list[FrontEnd]:
        return [f for f in self._front_ends.values() if f.problem is None and shows(f)]

    def _on_message(self, data: dict[str, Any]) -> None:
        """Take a message from a front end (on the subshell's thread)."""
        op = data.get("op")
        if op == "hello":
            front = FrontEnd.from_hello(data)
            log.info("Front end %s shows %s (subshell: %s)", front.app, front.path, front.subshell)
            with self._greeted:
                for known in (self._front_ends, self._stated):
                    known.pop(front.client, None)
                    known[front.client] = front
                self._greeted.notify_all()
        elif op == "path":
            client, path = str(data.get("client")), str(data.get("path", ""))
            with self._greeted:
                if client not in self._stated:
                    log.info("A path from a front end that said no hello: %s", path)
                    return
                log.info("Front end %s now shows %s", client, path)
                for known in (self._front_ends, self._stated):
                    if client in known:
                        known[client] = replace(known[client], path=path)
        elif op == "bye":
            with self._greeted:
                for known in (self._front_ends, self._stated):
                    known.pop(str(data.get("client")), None)
        else:
            with self._lock:
                waiter = self._pending.get(str(data.get("id")))
            if waiter is not None:
                waiter[1].append(data)
                waiter[0].set()


def _chosen(fronts: list[FrontEnd], client: str | None) -> FrontEnd | None:
    """The front end of ``client`` among ``fronts``, else the last; None when there is none."""
    return next((f for f in fronts if f.client == client), fronts[-1] if fronts else None)
