"""Shared fixtures, and the mark for tests that need a real component (tests/components.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from nbagent.api.body import CHECK_ENV
from nbagent.mcp.approvals import APPROVALS_ENV
from nbagent.store.logfile import LOG_ENV
from nbagent.testing import FakeAnthropicServer
from tests.components import MARK, missing

pytest_plugins = ["tests.shells"]

# No test asserts on wall-clock time, hypothesis's per-example deadline included: the machines
# that run the suite are shared and their load varies.
settings.register_profile("nbagent", deadline=None)
settings.load_profile("nbagent")

CONVERSATIONS = "NBAGENT_CONVERSATIONS"
_USER_CONVERSATIONS = pytest.StashKey[str | None]()
_USER_LOG = pytest.StashKey[str | None]()


def pytest_configure(config: pytest.Config) -> None:
    # Conversations saved by every kernel, server and `nbagent run` of the session (some take
    # their environment at import) go to a temporary folder, never to ~/.nbagent/conversations.
    config.stash[_USER_CONVERSATIONS] = os.environ.get(CONVERSATIONS)
    os.environ[CONVERSATIONS] = tempfile.mkdtemp(prefix="nbagent-conversations-")
    # Their log too goes to a temporary folder, never to ~/.nbagent/nbagent.log.
    # Every request body is checked against a whole encoding, in kernels the tests start too.
    os.environ[CHECK_ENV] = "1"
    config.stash[_USER_LOG] = os.environ.get(LOG_ENV)
    os.environ[LOG_ENV] = str(Path(tempfile.mkdtemp(prefix="nbagent-log-")) / "nbagent.log")
    config.addinivalue_line(
        "markers",
        f"{MARK}(present, what, how): needs a real component; skips without it, fails under "
        "CI=true (tests.components.needs)",
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ.pop(CONVERSATIONS, ""), ignore_errors=True)
    if (users := config.stash.get(_USER_CONVERSATIONS, None)) is not None:
        os.environ[CONVERSATIONS] = users
    if log := os.environ.pop(LOG_ENV, ""):
        shutil.rmtree(Path(log).parent, ignore_errors=True)
    if (users := config.stash.get(_USER_LOG, None)) is not None:
        os.environ[LOG_ENV] = users


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(MARK):
        if not mark.kwargs["present"]:
            missing(mark.kwargs["what"], mark.kwargs["how"])


@pytest.fixture(autouse=True)
def conversations_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Where the test's conversations are saved (and its kernels', which inherit the
    environment): a folder of its own."""
    folder = tmp_path_factory.mktemp("conversations")
    monkeypatch.setenv(CONVERSATIONS, str(folder))
    return folder


@pytest.fixture(autouse=True)
def approvals_file(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Where the test's MCP managers and kernels keep approvals of project servers (never
    ~/.nbagent): a file of its own."""
    path = tmp_path_factory.mktemp("nbagent-home") / "mcp-approvals.json"
    monkeypatch.setenv(APPROVALS_ENV, str(path))
    return path


@pytest.fixture(autouse=True)
def log_file(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the test's kernels write nbagent's log (never ~/.nbagent): a file of its own,
    in a folder nbagent makes."""
    path = tmp_path_factory.mktemp("nbagent-log") / "home" / "nbagent.log"
    monkeypatch.setenv(LOG_ENV, str(path))
    return path


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicServer]:
    """A started FakeAnthropicServer with an empty script.

    Enqueue replies with ``fake_api.enqueue(...)``. The test fails at teardown if a script
    error is left in ``fake_api.errors`` (take the expected ones with ``take_errors()``).
    """
    with FakeAnthropicServer() as server:
        yield server
    server.assert_no_errors()
