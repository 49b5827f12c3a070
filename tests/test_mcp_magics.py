"""%mcp through run_cell with real MCP fixture servers; the extension's MCP life cycle."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.testing import FakeAnthropicServer, Reply
from tests.mcp.servers import FIXTURES, alive, wait_until
from tests.shells import error_of, run

pytestmark = pytest.mark.slow

BASIC = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'basic.py'))}"


@pytest.fixture
def ip(
    fake_api: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    shell.run_line_magic("config", 'NbAgent.allow_rules = ["mcp__basic__*"]')
    shell.run_line_magic("load_ext", "nbagent")
    yield shell
    shell.run_line_magic("unload_ext", "nbagent")
    shell.run_line_magic("config", "NbAgent.allow_rules = []")


def manager(shell: InteractiveShell):  # type: ignore[no-untyped-def]
    from nbagent.extension import _loaded

    return _loaded[id(shell)].manager


def test_add_list_tools_call_restart_remove(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    _, shown = run(ip, f"%mcp add basic -- {BASIC}")
    assert "Connecting `basic` in the background" in shown
    assert manager(ip).wait_ready(60)
    _, listing = run(ip, "%mcp list")
    assert "| `basic` | connected | stdio |" in listing
    _, tools = run(ip, "%mcp tools basic")
    assert "| `mcp__basic__add` | yes |" in tools
    assert nbagent.registry.is_deferred(nbagent.registry.get("mcp__basic__add"))

    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "+basic add"}),
        Reply.tool_use("mcp__basic__add", {"a": 2, "b": 3}),
        Reply.text("5"),
    )
    result, shown = run(ip, "%%agent --verbose -o r\nAdd 2 and 3 with the basic server.")
    assert result.success and ip.user_ns["r"].tool_calls[1].status == "ok"
    assert "mcp__basic__ (" in shown  # the first announcement (verbose), grouped by server
    tool_result = fake_api.requests[2].body["messages"][-1]["content"][0]
    assert tool_result["content"] in ("5", [{"type": "text", "text": "5"}])

    [status] = manager(ip).status()
    old_pid = status.pid
    run(ip, "%mcp restart basic")
    assert wait_until(lambda: manager(ip).status()[0].pid not in (None, old_pid), 60)
    run(ip, "%mcp remove basic")
    assert "mcp__basic__add" not in nbagent.registry
    assert wait_until(lambda: not alive(old_pid), 10)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%mcp", "%mcp list | add NAME"),
        ("%mcp dance", "Unknown %mcp command 'dance'"),
        ("%mcp add", "%mcp add needs a server name"),
        ("%mcp add x", "give '-- COMMAND ARGS' or '--url URL'"),
        ("%mcp add x --url http://127.0.0.1:1/mcp --header nope", "Expected --header NAME=VALUE"),
        ("%mcp remove nowhere", "nowhere"),
        ("%mcp tools", "%mcp tools takes one server name"),
        ("%mcp list extra", "%mcp list takes no argument"),
    ],
)
def test_bad_mcp_lines_are_usage_errors(ip: InteractiveShell, line: str, message: str) -> None:
    result, _ = run(ip, line)
    error = error_of(result)
    assert isinstance(error, UsageError) and message in str(error)


def test_configured_servers_start_on_load_and_stop_on_unload(tmp_path: Path) -> None:
    shell = InteractiveShell.instance()
    config = {
        "mcpServers": {"basic": {"command": sys.executable, "args": [str(FIXTURES / "basic.py")]}}
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    cwd = Path.cwd()
    try:
        import os

        os.chdir(tmp_path)
        shell.run_line_magic("load_ext", "nbagent")
        assert manager(shell).wait_ready(60)
        [status] = manager(shell).status()
        assert status.state == "connected" and status.pid
        shell.run_line_magic("unload_ext", "nbagent")
        assert wait_until(lambda: not alive(status.pid), 10)
        assert "mcp__basic__add" not in nbagent.registry
    finally:
        os.chdir(cwd)


def test_bad_config_is_reported_and_loading_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell = InteractiveShell.instance()
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"bad": {"args": []}')
    monkeypatch.chdir(tmp_path)
    result, shown = run(shell, "%load_ext nbagent")
    try:
        assert result.success and "MCP configuration not used" in shown
        assert "is not valid JSON" in shown
        assert "agent" in shell.magics_manager.magics["cell"]
    finally:
        shell.run_line_magic("unload_ext", "nbagent")


def test_bad_entries_are_named_and_the_good_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell = InteractiveShell.instance()
    basic = {"command": sys.executable, "args": [str(FIXTURES / "basic.py")]}
    config = {
        "mcpServers": {
            "strargs": {"command": "npx", "args": "-y some-server"},
            "basic": basic,
            "envy": {"command": "x", "env": {"PORT": 8080, "TOKEN": "${NBAGENT_UNSET_TOKEN}"}},
            "off": {**basic, "disabled": True},
        }
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBAGENT_UNSET_TOKEN", raising=False)
    result, shown = run(shell, "%load_ext nbagent")
    try:
        assert result.success and "MCP configuration not used" not in shown
        assert "MCP servers not started" in shown
        assert "`strargs`: field 'args' must be a list of strings, not a string." in shown
        assert "`envy`: field 'env.PORT' must be a string, not a number.; " in shown
        assert "field 'env.TOKEN' uses ${NBAGENT_UNSET_TOKEN}, which is not set" in shown
        assert "`off`" not in shown and "`basic`" not in shown
        assert manager(shell).wait_ready(60)
        [status] = manager(shell).status()
        assert (status.name, status.state) == ("basic", "connected")
        assert "mcp__basic__add" in nbagent.registry and "mcp__off__add" not in nbagent.registry
        _, listing = run(shell, "%mcp list")
        assert "| `basic` | connected | stdio |" in listing
        assert "| `off` | disabled |" in listing
        assert "| `strargs` | not started |  |  |  |  | field 'args' must be a list" in listing
        assert "| `envy` | not started |" in listing and "NBAGENT_UNSET_TOKEN" in listing
    finally:
        shell.run_line_magic("unload_ext", "nbagent")


def test_a_new_mcp_config_stops_the_old_servers_and_starts_its_own(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    def config_file(name: str) -> Path:
        path = tmp_path / f"{name}.json"
        server = {"command": sys.executable, "args": [str(FIXTURES / "basic.py")]}
        path.write_text(json.dumps({"mcpServers": {name: server}}))
        return path

    first, second = config_file("first"), config_file("second")
    try:
        ip.run_line_magic("config", f"NbAgent.mcp_config = {str(first)!r}")
        assert wait_until(lambda: [s.name for s in manager(ip).status()] == ["first"], 60)
        assert manager(ip).wait_ready(60)
        [old] = manager(ip).status()
        ip.run_line_magic("config", f"NbAgent.mcp_config = {str(second)!r}")
        assert wait_until(lambda: [s.name for s in manager(ip).status()] == ["second"], 60)
        assert manager(ip).wait_ready(60)
        assert wait_until(lambda: not alive(old.pid), 10)
        assert "mcp__second__add" in nbagent.registry and "mcp__first__add" not in nbagent.registry
    finally:
        ip.run_line_magic("config", "NbAgent.mcp_config = ''")
