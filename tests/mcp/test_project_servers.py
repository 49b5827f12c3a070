"""A project's .mcp.json starts nothing until the person approves each server, with real servers.

The fixture ``marks_start.py`` writes a marker file (its arguments and environment) the moment
it starts, so "never started" is checked by a file that does not exist, next to a server of
the same file that was approved and did start.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import NbAgentError
from nbagent.mcp import McpManager, config_entry
from nbagent.mcp.approvals import Approvals
from nbagent.mcp.errors import ApprovalsError, UnknownServerError
from tests.mcp.conftest import READY
from tests.mcp.servers import FIXTURES, alive, fixture

pytestmark = pytest.mark.slow

SECRET_VAR = "NBAGENT_TEST_SECRET_VAR"
SECRET = "the-secret-value-no-unapproved-entry-reads"


def marked(marker: Path, *args: str, **env: str) -> dict[str, Any]:
    """An entry running the basic server after it writes ``marker``."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": [str(FIXTURES / "marks_start.py"), str(marker), *args],
    }
    return {**entry, "env": env} if env else entry


def project(folder: Path, servers: dict[str, Any]) -> Path:
    """Write a project's .mcp.json."""
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def started_with(marker: Path) -> dict[str, Any]:
    """What a marked server was started with (its argv and env)."""
    return json.loads(marker.read_text())


def test_nothing_starts_until_approved_and_the_approval_is_kept(
    make_manager: Callable[..., McpManager], tmp_path: Path
) -> None:
    first, second = tmp_path / "first-started", tmp_path / "second-started"
    source = project(tmp_path, {"first": marked(first), "second": marked(second)})
    registry = ToolRegistry()
    manager = make_manager(registry)
    started = manager.start(folder=tmp_path)
    assert started is not None and started.servers == {} and started.source == source
    assert manager.status() == [] and manager.not_started() == {}
    waiting = manager.project()
    assert waiting is not None and waiting.source == source
    assert [s.name for s in waiting.deciding(None)] == ["first", "second"]

    assert manager.approve(["second"]) == {"second": None}
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert (status.name, status.state, status.tool_count) == ("second", "connected", 8)
    assert "mcp__second__add" in registry and second.exists()
    assert not first.exists() and not any(n.startswith("mcp__first__") for n in registry.names())

    again = make_manager(ToolRegistry())
    assert list(again.start(folder=tmp_path).servers) == ["second"]
    assert again.wait_ready(READY) and again.status()[0].state == "connected"
    decisions = {name: s.decision for name, s in again.project().servers.items()}
    assert decisions == {"first": None, "second": "approved"}
    assert not first.exists()


@pytest.mark.parametrize(
    "change",
    [
        {"args": [str(FIXTURES / "marks_start.py"), "MARKER", "--legacy"]},
        {"env": {"GREETING": "hi"}},
        {"cwd": "."},
    ],
)
def test_a_changed_entry_is_asked_about_again(
    make_manager: Callable[..., McpManager], tmp_path: Path, change: dict[str, Any]
) -> None:
    marker = tmp_path / "started"
    entry = marked(marker)
    project(tmp_path, {"srv": entry})
    manager = make_manager()
    manager.start(folder=tmp_path)
    manager.approve(["srv"])
    assert manager.wait_ready(READY) and marker.exists()
    manager.close()
    marker.unlink()

    changed = {**entry, **change}
    changed["args"] = [str(marker) if a == "MARKER" else a for a in changed["args"]]
    project(tmp_path, {"srv": changed})
    manager = make_manager()
    assert manager.start(folder=tmp_path).servers == {}
    assert [s.name for s in manager.project().deciding(None)] == ["srv"]
    assert manager.status() == [] and not marker.exists()


def test_an_unapproved_entry_is_never_expanded(
    make_manager: Callable[..., McpManager],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    approvals_file: Path,
) -> None:
    monkeypatch.setenv(SECRET_VAR, SECRET)
    expanded: list[str] = []
    real_expand = config_entry.expand

    def spy(value: str, environ: Any) -> str:
        expanded.append(value)
        return real_expand(value, environ)

    monkeypatch.setattr(config_entry, "expand", spy)
    marker, other = tmp_path / "started", tmp_path / "other-started"
    reference = "${" + SECRET_VAR + "}"
    project(
        tmp_path,
        {
            "local": marked(marker, f"--key={reference}", TOKEN=reference),
            "remote": {
                "type": "http",
                "url": f"http://127.0.0.1:9/mcp?key={reference}",
                "headers": {"Authorization": f"Bearer {reference}"},
            },
            "other": marked(other),
        },
    )
    manager = make_manager()
    manager.start(folder=tmp_path)
    manager.approve(["other"])
    assert manager.wait_ready(READY) and other.exists()
    assert not [value for value in expanded if SECRET_VAR in value]
    assert not marker.exists()
    waiting = manager.project()
    assert [s.name for s in waiting.deciding(None)] == ["local", "remote"]
    assert all(s.variables() == (SECRET_VAR,) for s in waiting.deciding(None))
    recorded = [
        repr(waiting),
        repr(manager.status()),
        repr(manager.not_started()),
        approvals_file.read_text(),
        *(s.written() for s in waiting.servers.values()),
        json.dumps(started_with(other)),
    ]
    assert not [text for text in recorded if SECRET in text]
    assert reference in waiting.servers["local"].written()  # shown as written

    manager.approve(["local"])  # only now read
    assert manager.wait_ready(READY)
    assert any(SECRET_VAR in value for value in expanded)
    run = started_with(marker)
    assert run["env"]["TOKEN"] == SECRET and f"--key={SECRET}" in run["argv"]


def test_denied_servers_stop_and_are_not_asked_about_again(
    make_manager: Callable[..., McpManager], tmp_path: Path
) -> None:
    project(tmp_path, {"a": fixture("basic.py"), "b": fixture("basic.py")})
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.start(folder=tmp_path)
    manager.approve(["a"])
    assert manager.wait_ready(READY)
    [running] = manager.status()
    assert manager.deny(["a", "b"]) == {"a": True, "b": False}
    assert manager.status() == [] and "mcp__a__add" not in registry
    assert not alive(running.pid)
    assert manager.project().deciding(None) == []

    again = make_manager(ToolRegistry())
    assert again.start(folder=tmp_path).servers == {}
    assert [s.name for s in again.project().deciding("denied")] == ["a", "b"]
    with pytest.raises(NbAgentError, match="No server of .* is left to approve"):
        again.approve()
    assert again.approve(["b"]) == {"b": None}  # the person changed their mind
    assert again.wait_ready(READY) and [s.name for s in again.status()] == ["b"]


def test_approving_all_starts_the_good_entries_and_names_the_faults_of_the_bad(
    make_manager: Callable[..., McpManager], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NBAGENT_TEST_UNSET", raising=False)
    project(
        tmp_path,
        {
            "strings": {"command": sys.executable, "args": "basic.py"},
            "good": fixture("basic.py"),
            "unset": {**fixture("basic.py"), "env": {"T": "${NBAGENT_TEST_UNSET}"}},
            "off": {**fixture("basic.py"), "disabled": True},
        },
    )
    manager = make_manager()
    started = manager.start(folder=tmp_path)
    assert started.disabled == ("off",) and manager.not_started() == {"off": "disabled"}
    outcome = manager.approve()
    assert list(outcome) == ["strings", "good", "unset"] and outcome["good"] is None
    assert outcome["strings"] == "field 'args' must be a list of strings, not a string."
    assert "field 'env.T' uses ${NBAGENT_TEST_UNSET}, which is not set" in outcome["unset"]
    assert manager.wait_ready(READY)
    assert [(s.name, s.state) for s in manager.status()] == [("good", "connected")]
    assert manager.not_started() == {
        "off": "disabled",
        "strings": outcome["strings"],
        "unset": outcome["unset"],
    }


def test_the_users_own_configuration_needs_no_approval(
    make_manager: Callable[..., McpManager], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, folder = tmp_path / "home", tmp_path / "notebooks"
    (home / ".nbagent").mkdir(parents=True)
    folder.mkdir()
    user_marker, named_marker = tmp_path / "user-started", tmp_path / "named-started"
    (home / ".nbagent" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"mine": marked(user_marker)}})
    )
    monkeypatch.setenv("HOME", str(home))
    manager = make_manager()
    assert list(manager.start(folder=folder).servers) == ["mine"]
    assert manager.project() is None
    named = project(tmp_path, {"named": marked(named_marker)})  # a path given: the user's choice
    other = make_manager()
    assert list(other.start(named).servers) == ["named"] and other.project() is None
    assert manager.wait_ready(READY) and other.wait_ready(READY)
    assert user_marker.exists() and named_marker.exists()


def test_a_damaged_approvals_file_is_named_and_starts_nothing(
    make_manager: Callable[..., McpManager], tmp_path: Path, approvals_file: Path
) -> None:
    approvals_file.write_text('{"version": 1, "projects": {')
    marker = tmp_path / "started"
    project(tmp_path, {"srv": marked(marker)})
    manager = make_manager()
    assert manager.start(folder=tmp_path).servers == {}
    waiting = manager.project()
    assert waiting.fault is not None and str(approvals_file) in waiting.fault
    assert "is not valid JSON" in waiting.fault
    with pytest.raises(ApprovalsError, match=f"The MCP approvals file {approvals_file} is not"):
        manager.approve(["srv"])
    assert manager.status() == [] and waiting.servers["srv"].decision is None
    assert approvals_file.read_text() == '{"version": 1, "projects": {'
    assert not marker.exists()


def test_decisions_name_servers_of_the_project_file_only(
    make_manager: Callable[..., McpManager], tmp_path: Path
) -> None:
    manager = make_manager()
    manager.start({"mcpServers": {}})
    with pytest.raises(UnknownServerError, match="No project .mcp.json was found"):
        manager.approve(["x"])
    project(tmp_path, {"a": fixture("basic.py")})
    manager.start(folder=tmp_path)
    with pytest.raises(UnknownServerError, match=r"has no server 'x' to deny \(its servers: a\)"):
        manager.deny(["x"])
    manager.approve(["a", "a"])
    with pytest.raises(NbAgentError, match="`a` is approved already"):
        manager.approve(["a"])
    manager.deny(["a"])
    with pytest.raises(NbAgentError, match="`a` is denied already"):
        manager.deny(["a"])


def test_a_new_configuration_stops_the_servers_the_project_file_started(
    make_manager: Callable[..., McpManager], tmp_path: Path
) -> None:
    project(tmp_path, {"a": fixture("basic.py")})
    manager = make_manager()
    manager.start(folder=tmp_path)
    manager.approve(["a"])
    assert manager.wait_ready(READY)
    [status] = manager.status()
    manager.start({"mcpServers": {}})
    assert manager.status() == [] and manager.project() is None
    assert not alive(status.pid)


def test_approvals_are_kept_in_the_managers_file(
    make_manager: Callable[..., McpManager], tmp_path: Path
) -> None:
    kept = Approvals(tmp_path / "elsewhere" / "approvals.json")
    source = project(tmp_path, {"a": fixture("basic.py")})
    manager = make_manager(approvals=kept)
    manager.start(folder=tmp_path)
    manager.approve(["a"])
    assert list(kept.decisions(source)) == ["a"]
