"""The running Jupyter servers, found from their runtime files (``jpserver-<pid>.json``).

Each server writes one in Jupyter's runtime folder while it runs: its URL, token, root
folder and process id. A kernel started by a server inherits the folder's location
(``JUPYTER_RUNTIME_DIR`` or the default).
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from nbagent.tools.notebook.pids import process_exists


@dataclass(frozen=True)
class JupyterServer:
    """A running Jupyter server, as its runtime file (``jpserver-<pid>.json``) describes it."""

    url: str
    """Its base URL, ending in ``/`` (``http://127.0.0.1:8888/``)."""
    token: str
    """The token that authenticates API requests (may be empty)."""
    root_dir: Path
    """The folder it serves, resolved."""
    pid: int
    """Its process id."""

    def api(self, path: str, scheme: str = "http") -> str:
        """Return the URL of an API path of the server.

        Args:
            path: The path after the base URL, without a leading ``/``.
            scheme: ``http``, or ``ws`` for a websocket (``https``/``wss`` follow the URL's).
        """
        secure = self.url.startswith("https:")
        base = self.url.split(":", 1)[1]
        return f"{scheme}{'s' if secure else ''}:{base}{path}"

    @property
    def headers(self) -> dict[str, str]:
        """The headers that authenticate a request."""
        return {"Authorization": f"token {self.token}"}


def find_server(notebook: Path, runtime_dir: Path | None = None) -> JupyterServer | None:
    """Find the running Jupyter server that serves a notebook.

    A server qualifies when its root folder holds the notebook and its process is alive. The
    server that started this kernel (its parent process) wins, then the deepest root folder,
    then the newest runtime file.

    Args:
        notebook: The notebook's resolved path.
        runtime_dir: Jupyter's runtime folder; ``jupyter_runtime_dir()`` by default.

    Returns:
        The server, or None.
    """
    if runtime_dir is None:
        from jupyter_core.paths import jupyter_runtime_dir

        runtime_dir = Path(jupyter_runtime_dir())
    ranked: list[tuple[bool, int, float, JupyterServer]] = []
    for info in runtime_dir.glob("jpserver-*.json"):
        server = _read_server(info)
        if server is None or not notebook.is_relative_to(server.root_dir):
            continue
        if not process_exists(server.pid):
            continue
        with suppress(OSError):
            mtime = info.stat().st_mtime
            ranked.append((server.pid == os.getppid(), len(server.root_dir.parts), mtime, server))
    return max(ranked, key=lambda entry: entry[:3])[3] if ranked else None


def parent_server(runtime_dir: Path | None = None) -> JupyterServer | None:
    """Return the running Jupyter server that started this kernel (its parent process).

    Args:
        runtime_dir: Jupyter's runtime folder; ``jupyter_runtime_dir()`` by default.

    Returns:
        The server, from its runtime file ``jpserver-<pid>.json``; None when the parent process
        is no Jupyter server of this runtime folder (a kernel started otherwise, or remote).
    """
    if runtime_dir is None:
        from jupyter_core.paths import jupyter_runtime_dir

        runtime_dir = Path(jupyter_runtime_dir())
    pid = os.getppid()
    server = _read_server(runtime_dir / f"jpserver-{pid}.json")
    return server if server is not None and server.pid == pid else None


def _read_server(info: Path) -> JupyterServer | None:
    """Read a server's runtime file; None for one unreadable or served on a Unix socket."""
    try:
        data = json.loads(info.read_text(encoding="utf-8"))
        url, token, root, pid = data["url"], data.get("token", ""), data["root_dir"], data["pid"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if data.get("sock") or not isinstance(url, str) or not isinstance(pid, int):
        return None
    if not isinstance(root, str) or not isinstance(token, str):
        return None
    return JupyterServer(
        url=url if url.endswith("/") else url + "/",
        token=token,
        root_dir=Path(root).expanduser().resolve(),
        pid=pid,
    )
