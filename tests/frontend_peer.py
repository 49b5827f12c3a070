"""A front end that speaks nbagent's comm protocol, in Python, for kernel tests without a browser.

:class:`FrontEndPeer` is a second jupyter_client client of a real kernel, playing the part of
nbagent's JupyterLab extension (``nbagent/frontend/labextension``): it answers the kernel's
``nbagent.frontend`` comm with ``hello`` over a subshell of its own, and serves ``read`` and
``edit`` against an in-memory notebook, the "model" the user sees (which a test can type into
without saving), and shows each ``withdrawn`` question as withdrawn. The browser tests check the
extension itself against the same protocol.
"""

from __future__ import annotations

import copy
import queue
import threading
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import KernelManager

TARGET = "nbagent.frontend"


class RecordingComm:
    """A comm that keeps what the kernel sends: a channel without a kernel, for tests of what
    front ends say (their messages go to ``FrontEndChannel._on_message``)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    def close(self) -> None:
        self.closed = True


def hello(client: str = "tab", path: str = "Untitled.ipynb", **fields: Any) -> dict[str, Any]:
    """A hello as nbagent's extension sends it (JupyterLab 4.6.6 with a subshell by default)."""
    message = {
        "op": "hello",
        "client": client,
        "path": path,
        "app": "JupyterLab 4.6.6",
        "subshell": True,
        "version": "0.1.0",
        "versions": {"app": "JupyterLab", "version": "4.6.6", "extension": "0.2.0"},
    }
    return {**message, **fields}


class FrontEndPeer:
    """A front end showing one notebook, attached to a kernel.

    Args:
        manager: The kernel's manager (a client of its own is started from it).
        notebook: The notebook file; the peer shows its content, then keeps its own.
        subshell: Whether to answer over a subshell (False plays an old front end).
    """

    def __init__(
        self,
        manager: KernelManager,
        notebook: Path,
        subshell: bool = True,
        versions: dict[str, str] | None = None,
        path: str | None = None,
    ) -> None:
        self.notebook = nbformat.read(notebook, as_version=4)
        """What the user sees (changed by the kernel's edits and by :meth:`type`)."""
        self.path = notebook.name if path is None else path
        """The notebook's path from the server's root, as the hello says it."""
        self.versions = versions or {"app": "TestLab", "version": "1.0", "extension": "0.2.0"}
        """The application, its version and the extension's, as the hello says them."""
        self.use_subshell = subshell
        self.requests: list[dict[str, Any]] = []
        """Every request the kernel sent, in order."""
        self.dirty = False
        self.statuses = 0
        """Busy or idle statuses the kernel published for this front end's answers."""
        self._answers: set[str] = set()
        self.runs: list[tuple[str, bool]] = []
        """Each outputs edit: (cell id, whether it said the cell is running)."""
        self.streamed: list[tuple[str, str]] = []
        """Each outputs edit of a running cell: (cell id, its stream text so far)."""
        self.queued: list[dict[str, Any]] = []
        """Each ``queue`` request's runs (the peer runs nothing itself)."""
        self._client = manager.blocking_client()
        self._client.start_channels()
        self._client.wait_for_ready(timeout=60)
        self._comms: set[str] = set()
        self._last_comm: str | None = None
        self._subshell: str | None = None
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="frontend-peer", daemon=True)
        self._thread.start()

    @property
    def client_id(self) -> str:
        """The id requests name to reach this front end."""
        return self._client.session.session

    def cells(self) -> list[tuple[str, str]]:
        """The cells the user sees: (type, source)."""
        with self._lock:
            return [(c.cell_type, c.source) for c in self.notebook.cells]

    def cell(self, cell_id: str) -> Any:
        """One cell as the user sees it (a copy)."""
        with self._lock:
            return copy.deepcopy(next(c for c in self.notebook.cells if c.id == cell_id))

    def type(self, cell_id: str, text: str) -> None:
        """Add text at the end of a cell, as the user typing without saving."""
        with self._lock:
            cell = next(c for c in self.notebook.cells if c.id == cell_id)
            cell.source += text
            self.dirty = True

    def rename(self, path: str) -> None:
        """Say the notebook's new path, as the extension does when the user renames it."""
        self.path = path
        with self._lock:
            comm = self._last_comm
        if comm is not None:
            self._reply(comm, {"op": "path", "client": self.client_id, "path": path})

    def wait_for_run(self, cell_id: str, running: bool, timeout: float = 30) -> bool:
        """Wait until the kernel said that a cell runs (or finished); True once it did."""
        with self._changed:
            return self._changed.wait_for(lambda: (cell_id, running) in self.runs, timeout)

    def close(self) -> None:
        """Stop serving and close the client."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._client.stop_channels()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._client.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and message["parent_header"].get("msg_id") in self._answers:
                self.statuses += 1
            if kind == "comm_open" and content.get("target_name") == TARGET:
                self._comms.add(content["comm_id"])
                with self._lock:
                    self._last_comm = content["comm_id"]
                self._reply(content["comm_id"], self._hello())
            elif kind == "comm_msg" and content.get("comm_id") in self._comms:
                data = content.get("data") or {}
                if data.get("to") == self.client_id:
                    self.requests.append(data)
                    self._reply(content["comm_id"], self._answer(data))

    def _hello(self) -> dict[str, Any]:
        return {
            "op": "hello",
            "client": self.client_id,
            "path": self.path,
            "app": f"{self.versions['app']} {self.versions['version']}",
            "subshell": self._ensure_subshell() is not None,
            "version": self.versions["extension"],
            "versions": self.versions,
        }

    def _ensure_subshell(self) -> str | None:
        if self.use_subshell and self._subshell is None:
            request = self._client.session.msg("create_subshell_request", {})
            self._client.control_channel.send(request)
            while True:
                reply = self._client.get_control_msg(timeout=10)
                if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                    self._subshell = reply["content"]["subshell_id"]
                    break
        return self._subshell

    def _reply(self, comm_id: str, data: dict[str, Any]) -> None:
        message = self._client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        message["header"]["subshell_id"] = self._subshell
        self._answers.add(message["header"]["msg_id"])
        self._client.shell_channel.send(message)

    def _answer(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            with self._lock:
                if data["op"] == "read":
                    notebook = copy.deepcopy(self.notebook)
                    if data.get("light"):
                        for cell in notebook.cells:
                            if "outputs" in cell:
                                cell.outputs = [
                                    {"output_type": o.output_type} for o in cell.outputs
                                ]
                    return {"id": data["id"], "ok": True, "notebook": notebook, "dirty": self.dirty}
                if data["op"] == "edit" and data["edit"]["action"] == "outputs":
                    ids = [cell.id for cell in self.notebook.cells]
                    edit = data["edit"]
                    if edit["cell_id"] not in ids:
                        return {"id": data["id"], "ok": True, "missing": True}
                    self._apply({**edit, "index": ids.index(edit["cell_id"])})
                    return {"id": data["id"], "ok": True, "missing": False}
                if data["op"] == "queue":
                    self.queued.append(data["queue"])
                    return {"id": data["id"], "ok": True, "queued": len(data["queue"]["cells"])}
                if data["op"] == "withdrawn":
                    return {"id": data["id"], "ok": True, "shown": True}
                if data["op"] == "edit":
                    changed = not self._guard_holds(data["guard"])
                    if not changed:
                        self._apply(data["edit"])
                    return {"id": data["id"], "ok": True, "changed": changed}
            raise ValueError(f"unknown request {data['op']}")
        except Exception as exc:
            return {"id": data["id"], "ok": False, "error": str(exc)}

    def _guard_holds(self, guard: dict[str, Any]) -> bool:
        cells = self.notebook.cells
        if guard["length"] != len(cells):
            return False
        for index, cell_id, source in guard["cells"]:
            if index >= len(cells) or cells[index].id != cell_id:
                return False
            if source is not None and cells[index].source != source:
                return False
        return True

    def _apply(self, edit: dict[str, Any]) -> None:
        cells, index = self.notebook.cells, edit["index"]
        action = edit["action"]
        if action == "insert":
            cells.insert(index, nbformat.from_dict(edit["cell"]))
        elif action == "delete":
            del cells[index]
        elif action == "source":
            cells[index].source = edit["source"]
            if edit.get("mark") is not None:
                if edit["mark"]:
                    cells[index].metadata["nbagent"] = edit["mark"]
                else:
                    cells[index].metadata.pop("nbagent", None)
        elif action == "cell":
            cells[index] = nbformat.from_dict(edit["cell"])
        elif action == "outputs":
            cells[index].outputs = [nbformat.from_dict(o) for o in edit["outputs"]]
            cells[index].execution_count = edit["execution_count"]
            self.runs.append((cells[index].id, edit["running"]))
            if edit["running"]:
                text = "".join(o.get("text", "") for o in edit["outputs"])
                self.streamed.append((cells[index].id, text))
            self._changed.notify_all()
        self.dirty = True
