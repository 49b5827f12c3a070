"""Servers nobody here wrote: listed, found with ToolSearch, and called through the agent loop.

The npm servers (everything, filesystem, memory, sequential-thinking) speak the 2025 protocol;
the PyPI ones (time, git over stdio, MotherDuck's DuckDB server over streamable HTTP) the 2026
one. Each test skips, saying how to install, when its server is missing (under ``CI=true`` it
fails instead: ``.ci/run`` installs them all).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.events import ToolCallFinished, ToolSearchResults, ToolSetAnnounced
from nbagent.loop.agent import Agent
from nbagent.mcp import McpManager
from nbagent.testing import FakeAnthropicServer, Reply
from tests.components import require
from tests.mcp.conftest import CONNECT_TIMEOUT, FAST_RESTART, READY
from tests.mcp.servers import (
    REFERENCE_DIR,
    alive,
    find_reference,
    git_repository,
    process_tree,
    reference,
    wait_until,
)

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Case:
    """One reference server and the call that proves it works."""

    server: str
    """The name it gets in the configuration."""
    executable: str
    """Its command."""
    source: str
    """``npm`` or ``pypi``."""
    query: str
    """What the model searches for."""
    tool: str
    """The tool the search must find (registered name)."""
    input: dict[str, Any]
    """The call's input."""
    min_tools: int
    """It lists at least this many tools."""


CASES = [
    Case("everything", "mcp-server-everything", "npm", "echo message back",
         "mcp__everything__echo", {"message": "hello MCP"}, 10),
    Case("filesystem", "mcp-server-filesystem", "npm", "read text file contents",
         "mcp__filesystem__read_text_file", {"path": "{folder}/files/hello.txt"}, 10),
    Case("memory", "mcp-server-memory", "npm", "create entities knowledge graph",
         "mcp__memory__create_entities",
         {"entities": [{"name": "Ada", "entityType": "person", "observations": ["codes"]}]}, 8),
    Case("time", "mcp-server-time", "pypi", "current time timezone",
         "mcp__time__get_current_time", {"timezone": "UTC"}, 2),
    Case("git", "mcp-server-git", "pypi", "git log commits",
         "mcp__git__git_log", {"repo_path": "{folder}/repo"}, 10),
]  # fmt: skip
"""The five reference servers; ``{folder}`` in an input is the test's folder."""


def entry(case: Case, folder: Path, executable: str) -> dict[str, Any]:
    """The configuration entry of a reference server."""
    if case.server == "filesystem":
        return {"command": executable, "args": [str(folder / "files")]}
    if case.server == "memory":
        return {"command": executable, "env": {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}}
    if case.server == "git":
        return {"command": executable, "args": ["--repository", str(folder / "repo")]}
    return {"command": executable}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files for filesystem, a repository with one commit for git."""
    root = tmp_path_factory.mktemp("reference")
    (root / "files").mkdir()
    (root / "files" / "hello.txt").write_text("Hello from a file.\n")
    git_repository(root / "repo")
    return root


@pytest.fixture(scope="module")
def references(folder: Path) -> Iterator[tuple[McpManager, ToolRegistry]]:
    """One manager with every reference server that is installed, started at once."""
    registry = ToolRegistry()
    manager = McpManager(registry, connect_timeout=CONNECT_TIMEOUT, restart=FAST_RESTART)
    for case in CASES:
        executable = find_reference(case.executable)
        if executable is not None:
            manager.add(case.server, entry(case, folder, executable))
    manager.wait_ready(READY)
    yield manager, registry
    pids = [pid for status in manager.status() if status.pid for pid in process_tree(status.pid)]
    manager.close()
    assert not [pid for pid in pids if alive(pid)], "orphan processes after close()"


@pytest.mark.parametrize("case", CASES, ids=[c.server for c in CASES])
def test_listed_found_and_called_through_the_agent(
    references: tuple[McpManager, ToolRegistry], folder: Path, case: Case
) -> None:
    reference(case.executable, case.source)
    arguments = json.loads(json.dumps(case.input).replace("{folder}", str(folder)))
    manager, registry = references
    status = next(s for s in manager.status() if s.name == case.server)
    assert status.state == "connected", status.last_error
    assert status.tool_count >= case.min_tools and not status.skipped

    hits = ToolSearch(registry).search(case.query)
    assert case.tool in [hit.name for hit in hits]

    with FakeAnthropicServer() as api:
        api.enqueue(
            Reply.tool_use("ToolSearch", {"query": case.query}),
            Reply.tool_use(case.tool, arguments),
            Reply.text("Done."),
        )
        agent = Agent(registry=registry, client=api.client())
        events = list(agent.events(f"Use the {case.server} server."))
        api.assert_no_errors()
    [announced] = [e for e in events if isinstance(e, ToolSetAnnounced)]
    assert sum(name.startswith(f"mcp__{case.server}__") for name in announced.added) == (
        status.tool_count
    )
    [search] = [e for e in events if isinstance(e, ToolSearchResults)]
    assert case.tool in search.loaded
    call = next(e for e in events if isinstance(e, ToolCallFinished) and e.name == case.tool)
    assert call.status == "ok", call.content
    check(case.server, call.content)


def check(server: str, content: Any) -> None:
    """Check what a reference server's tool answered."""
    text = content if isinstance(content, str) else json.dumps(content)
    expected = {
        "everything": "hello MCP",
        "filesystem": "Hello from a file.",
        "memory": '"name": "Ada"',
        "time": '"timezone": "UTC"',
        "git": "First commit of the test repo",
    }[server]
    assert expected in text, text


def test_an_image_from_a_real_server_reaches_the_model_as_an_image_block(
    references: tuple[McpManager, ToolRegistry],
) -> None:
    reference("mcp-server-everything", "npm")
    _, registry = references
    tool = "mcp__everything__get-tiny-image"
    with FakeAnthropicServer() as api:
        api.enqueue(
            Reply.tool_use("ToolSearch", {"query": f"select:{tool}"}),
            Reply.tool_use(tool, {}),
            Reply.text("A tiny image."),
        )
        Agent(registry=registry, client=api.client()).run("Show me a tiny image.")
        api.assert_no_errors()
        last = [r.body for r in api.requests if r.path == "/v1/messages"][-1]
    [result] = [b for b in last["messages"][-1]["content"] if b["type"] == "tool_result"]
    images = [b for b in result["content"] if b["type"] == "image"]
    assert [image["source"]["media_type"] for image in images] == ["image/png"]
    assert images[0]["source"]["type"] == "base64" and images[0]["source"]["data"]


SEQUENTIAL_THINKING_HOW = (
    "npm install --prefix ~/.cache/nbagent/mcp-servers "
    "@modelcontextprotocol/server-sequential-thinking@2026.8.31; .ci/run does it"
)
MOTHERDUCK_HOW = (
    "python3 -m venv ~/.cache/nbagent/mcp-servers/venv && "
    "~/.cache/nbagent/mcp-servers/venv/bin/pip install mcp-server-motherduck==1.1.0; "
    ".ci/run does it"
)


def installed(executable: str, how: str) -> str:
    """Find a reference server's executable, else skip (under ``CI=true``, fail) saying how."""
    found = find_reference(executable)
    require(found, f"the reference MCP server {executable} (in {REFERENCE_DIR} or on PATH)", how)
    assert found is not None
    return found


def test_sequential_thinking_answers_with_structured_content(
    make_manager: Callable[..., McpManager],
) -> None:
    executable = installed("mcp-server-sequential-thinking", SEQUENTIAL_THINKING_HOW)
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.add("thinking", {"command": executable, "env": {"DISABLE_THOUGHT_LOGGING": "true"}})
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "connected", status.last_error
    name = "mcp__thinking__sequentialthinking"
    assert [tool.name for tool in manager.tools("thinking")] == [name]
    tool = registry.get(name)
    assert tool.is_mcp and tool.server == "thinking" and registry.is_deferred(tool)
    assert tool.read_only  # readOnlyHint
    assert name in [hit.name for hit in ToolSearch(registry).search("sequential thinking")]

    # The tool publishes an outputSchema; the SDK checks each structuredContent against it.
    first = tool.call(
        {"thought": "Split the problem.", "thoughtNumber": 1, "totalThoughts": 2,
         "nextThoughtNeeded": True}
    )  # fmt: skip
    second = tool.call(
        {"thought": "Try another way.", "thoughtNumber": 3, "totalThoughts": 2,
         "nextThoughtNeeded": False, "branchFromThought": 1, "branchId": "other"}
    )  # fmt: skip
    assert not first.is_error and not second.is_error, (first.content, second.content)
    assert first.metadata["structured_content"] == {
        "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True, "branches": [],
        "thoughtHistoryLength": 1,
    }  # fmt: skip
    # The server raises totalThoughts to the thought's number and keeps the branch.
    assert second.metadata["structured_content"] == {
        "thoughtNumber": 3, "totalThoughts": 3, "nextThoughtNeeded": False,
        "branches": ["other"], "thoughtHistoryLength": 2,
    }  # fmt: skip
    assert json.loads(second.content) == second.metadata["structured_content"]


def listening(port: int) -> bool:
    """Tell whether something accepts connections on a port of 127.0.0.1."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture
def motherduck(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """MotherDuck's DuckDB server (PyPI) over streamable HTTP on a free port of 127.0.0.1, with
    an in-memory database (no network, no token): its URL and process, killed at the end."""
    executable = installed("mcp-server-motherduck", MOTHERDUCK_HOW)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "motherduck.log"
    # No update check against PyPI, no banner; DuckDB's home in the test's folder.
    env = {**os.environ, "FASTMCP_CHECK_FOR_UPDATES": "off", "FASTMCP_SHOW_SERVER_BANNER": "false"}
    command = [executable, "--transport", "http", "--host", "127.0.0.1", "--port", str(port),
               "--db-path", ":memory:", "--read-write", "--home-dir", str(tmp_path)]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        while not listening(port):
            assert process.poll() is None, f"exited with code {process.returncode}:\n" + (
                log.read_text(errors="replace")
            )
            assert time.monotonic() < deadline, "not listening after 60 s:\n" + log.read_text(
                errors="replace"
            )
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(10)


def test_a_pypi_server_over_streamable_http_answers_and_its_death_is_noticed(
    make_manager: Callable[..., McpManager], motherduck: tuple[str, subprocess.Popen[bytes]]
) -> None:
    url, process = motherduck
    registry = ToolRegistry()
    # It sends no change events, so the manager re-lists it every poll_interval seconds
    # (30 by default): a failed re-listing is one way a dead HTTP server is noticed.
    manager = make_manager(registry, poll_interval=5.0)
    manager.add("duck", {"type": "http", "url": url})
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "connected", status.last_error
    assert status.transport == "http" and not status.skipped
    names = {tool.name for tool in manager.tools("duck")}
    tools = ("execute_query", "list_databases", "list_tables", "list_columns")
    assert {f"mcp__duck__{tool}" for tool in tools} <= names
    assert all(registry.is_deferred(registry.get(name)) for name in names)

    result = registry.get("mcp__duck__execute_query").call({"sql": "SELECT 6 * 7 AS answer"})
    assert not result.is_error, result.content
    answer = json.loads(result.content)
    assert answer["success"] and answer["columns"] == ["answer"] and answer["rows"] == [[42]]

    process.kill()
    process.wait(10)
    # Noticed in its own time (the generous timeouts are for a busy CI, not a measure).
    assert wait_until(lambda: manager.status()[0].state != "connected", 60)
    assert wait_until(lambda: not manager.tools("duck"), 60)
    assert not [name for name in registry.names() if name.startswith("mcp__duck__")]
    # Restarts find nothing on that port: it ends failed, saying why.
    assert manager.wait_ready(READY)
    status = manager.status()[0]
    assert status.state == "failed" and status.last_error, status
