"""Helpers for tests that start real MCP servers: the fixture scripts and the reference servers.

The fixtures live in ``tests/mcp_servers``. The reference servers (written elsewhere) are
looked up in ``$NBAGENT_MCP_SERVERS`` (default ``~/.cache/nbagent/mcp-servers``), where
``.ci/run`` installs them::

    npm install --prefix ~/.cache/nbagent/mcp-servers @modelcontextprotocol/server-everything \\
        @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-memory
    python3 -m venv ~/.cache/nbagent/mcp-servers/venv
    ~/.cache/nbagent/mcp-servers/venv/bin/pip install mcp-server-time mcp-server-git

and then on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tests.components import missing

FIXTURES = Path(__file__).resolve().parents[1] / "mcp_servers"
"""The fixture server scripts."""

REFERENCE_DIR = Path(os.environ.get("NBAGENT_MCP_SERVERS", "~/.cache/nbagent/mcp-servers"))
"""Where .ci/run installs the reference servers."""

INSTALL_HINT = {
    "npm": (
        "npm install --prefix ~/.cache/nbagent/mcp-servers "
        "@modelcontextprotocol/server-everything@2026.8.31 "
        "@modelcontextprotocol/server-filesystem@2026.8.31 "
        "@modelcontextprotocol/server-memory@2026.8.31 "
        "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
    ),
    "pypi": (
        "python3 -m venv ~/.cache/nbagent/mcp-servers/venv && "
        "~/.cache/nbagent/mcp-servers/venv/bin/pip install mcp-server-time==2026.10.19 "
        "mcp-server-git==2026.10.19 mcp-server-motherduck==1.1.0"
    ),
}


def git_repository(folder: Path) -> Path:
    """Make a git repository with one commit, for mcp-server-git.

    Args:
        folder: Where (created).

    Returns:
        The folder.
    """
    folder.mkdir(parents=True)
    git = ["git", "-C", str(folder), "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (folder / "README").write_text("hi\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "First commit of the test repo"], check=True)
    return folder


def fixture(script: str, *args: str) -> dict[str, Any]:
    """A stdio configuration entry that runs a fixture script with this Python.

    Args:
        script: The script's file name in ``tests/mcp_servers``.
        *args: Its options (``--legacy``, ``--start-delay 3``, ...).
    """
    return {"command": sys.executable, "args": [str(FIXTURES / script), *args]}


@dataclass
class HttpServer:
    """A fixture script serving streamable HTTP on 127.0.0.1."""

    url: str
    """Its endpoint."""
    process: subprocess.Popen[bytes]
    """Its process."""

    def kill(self) -> None:
        """Kill it (a crash, as far as clients can tell)."""
        self.process.kill()
        self.process.wait(10)


@contextmanager
def http_server(
    script: str, *args: str, transport: str = "http", timeout: float = 60.0
) -> Iterator[HttpServer]:
    """Run a fixture script over HTTP on a free port of 127.0.0.1.

    Args:
        script: The script's file name.
        *args: Its options.
        transport: ``http`` (streamable HTTP, at ``/mcp``) or ``sse`` (at ``/sse``).
        timeout: Seconds to wait for it to listen.

    Yields:
        The running server; it is killed on exit.
    """
    with tempfile.TemporaryDirectory() as folder:
        port_file = Path(folder) / "port"
        command = [sys.executable, str(FIXTURES / script), "--transport", transport]
        process = subprocess.Popen(
            [*command, "--port-file", str(port_file), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + timeout
            while not port_file.exists():
                assert process.poll() is None, f"{script} exited with code {process.returncode}"
                assert time.monotonic() < deadline, f"{script} did not listen in {timeout} s"
                time.sleep(0.05)
            path = "sse" if transport == "sse" else "mcp"
            yield HttpServer(f"http://127.0.0.1:{port_file.read_text()}/{path}", process)
        finally:
            process.kill()
            process.wait(10)


def find_reference(name: str) -> str | None:
    """Find a reference server's executable in ``REFERENCE_DIR``, else on ``PATH``.

    Args:
        name: The executable, e.g. ``mcp-server-time``.

    Returns:
        Its path, or ``None`` when it is not installed.
    """
    folder = REFERENCE_DIR.expanduser()
    for candidate in (folder / "node_modules" / ".bin" / name, folder / "venv" / "bin" / name):
        if candidate.exists():
            return str(candidate)
    return shutil.which(name)


def reference(name: str, source: str) -> str:
    """Find a reference server's executable, or skip the test saying how to install it (under
    ``CI=true``, fail it: see :mod:`tests.components`).

    Args:
        name: The executable, e.g. ``mcp-server-time``.
        source: ``npm`` or ``pypi``.

    Returns:
        Its path.
    """
    found = find_reference(name)
    if found is None:
        missing(
            f"the reference MCP server {name} (in {REFERENCE_DIR} or on PATH)", INSTALL_HINT[source]
        )
    return found


def process_tree(pid: int) -> list[int]:
    """A process and all its descendants (``npx`` starts ``node``, and so on).

    Args:
        pid: The process id.
    """
    try:
        parent = psutil.Process(pid)
        return [pid, *(child.pid for child in parent.children(recursive=True))]
    except psutil.NoSuchProcess:
        return []


def alive(pid: int) -> bool:
    """Tell whether a process runs (a zombie does not count).

    Args:
        pid: The process id.
    """
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(predicate: Any, timeout: float = 30.0, interval: float = 0.05) -> bool:
    """Poll until ``predicate()`` is true.

    Args:
        predicate: A function of no arguments.
        timeout: Seconds to wait at most.
        interval: Seconds between polls.

    Returns:
        Whether it became true in time.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
