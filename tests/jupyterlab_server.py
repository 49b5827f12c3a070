"""A real JupyterLab server on 127.0.0.1 and Debian's Chromium, for browser tests."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's Chromium (``apt-get install chromium``): the tests never download a browser."""

LAB_OPTIONS = (
    "--LabApp.news_url=None",
    "--LabApp.expose_app_in_browser=True",
    "--LabApp.extension_manager=readonly",
)
"""JupyterLab's options for tests: no news or extension index fetched, ``window.jupyterapp``."""


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab."""

    url: str
    """The base URL, e.g. ``http://127.0.0.1:8888``."""
    token: str
    """The token to log in with."""

    def page(self, path: str) -> str:
        """The URL of a page of the server, logged in."""
        return f"{self.url}/{path.lstrip('/')}?token={self.token}"


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def jupyterlab(root: Path, env: dict[str, str] | None = None) -> Iterator[LabServer]:
    """Serve JupyterLab on loopback with ``root`` as its folder, until the block ends.

    Args:
        root: The folder the server shows.
        env: Variables added to the server's (and so its kernels') environment.

    Yields:
        The server.
    """
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--ServerApp.port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.port_retries=0",
        "--ServerApp.allow_root=True",
        *LAB_OPTIONS,
    ]
    log = open(root.parent / "jupyterlab.log", "w")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        command, env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, cwd=root
    )
    server = LabServer(f"http://127.0.0.1:{port}", token)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(server.page("api/status"), timeout=2)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start; see {log.name}") from None
                time.sleep(0.3)
        yield server
    finally:
        stop_server(process, log)


def stop_server(process: subprocess.Popen[Any], log: IO[Any]) -> None:
    """End a server's process (SIGTERM, then SIGKILL after 20 s) and close its log."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """Run Debian's Chromium (:data:`CHROMIUM`) under Playwright until the block ends.

    Yields:
        The Playwright ``Browser``.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page: Any, name: str, folder: Path) -> Path:
    """Save a screenshot of the whole page as ``folder/name.png``, and return its path.

    JupyterLab's "get notified about news?" prompt is answered No first. With
    ``$NBAGENT_SCREENSHOTS`` set, a copy goes to that folder too.
    """
    news = page.get_by_role("button", name="No", exact=True)
    if news.count():
        news.first.click()  # JupyterLab's "get notified about news?" prompt
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    keep = os.environ.get("NBAGENT_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def wait_until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll until ``check()`` is truthy and return it.

    Raises:
        AssertionError: Not within the timeout (saying what was awaited and the last value).
    """
    deadline = time.monotonic() + timeout
    while not (last := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s (last: {last!r})")
        time.sleep(0.05)
    return last


EXTENSION = Path(__file__).resolve().parents[1] / "nbagent" / "frontend" / "labextension"
"""This checkout's JupyterLab extension, linked into each browser test's JupyterLab."""


def lab_setup(setup: str, base: Path) -> Path | str:
    """Prepare a browser test's JupyterLab: this checkout's extension, no news pop-ups.

    Chromium and, for ``collaboration``, the jupyter-collaboration environment are required
    (missing: skipped for a developer, a failure under ``CI=true``).

    Args:
        setup: ``plain`` or ``collaboration``.
        base: An empty folder for the server's data and configuration.

    Returns:
        The Python the Jupyter server runs under.
    """
    from tests.components import CHROMIUM_HOW, RTC_HOW, require
    from tests.tools.rtc import RTC_ENV, RTC_PYTHON, has_collaboration

    require(CHROMIUM.exists(), f"Debian's chromium at {CHROMIUM}", CHROMIUM_HOW)
    python: Path | str = sys.executable
    if setup == "collaboration":
        require(
            has_collaboration(RTC_PYTHON),
            f"a jupyter-collaboration environment at {RTC_ENV}",
            RTC_HOW,
        )
        python = RTC_PYTHON
    (base / "share" / "labextensions").mkdir(parents=True)
    (base / "share" / "labextensions" / "nbagent-frontend").symlink_to(EXTENSION)
    settings = base / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    return python
