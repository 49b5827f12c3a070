"""%mcp through run_cell with real MCP fixture servers; the extension's MCP life cycle; the
approval of a project's .mcp.json servers."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.mcp.config_file import parse_server
from nbagent.testing import FakeAnthropicServer, Reply
from tests.mcp.servers import FIXTURES, alive, http_server, wait_until
from tests.shells import error_of, run, shown

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
    from nbagent.jupyter.session import Session

    return Session.of(shell).mcp_manager  # type: ignore[union-attr]


@pytest.fixture
def added(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """The (name, entry) pairs that %mcp add hands the manager, which starts none of them."""
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(manager(ip), "add", lambda name, entry: calls.append((name, entry)))
    return calls


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


def stdio(command: str, *args: str, **env: str) -> dict[str, Any]:
    """The entry of a stdio server."""
    return {"command": command, "args": list(args), "env": env}


def remote(url: str, transport: str = "http", **headers: str) -> dict[str, Any]:
    """The entry of an http or sse server."""
    return {"type": transport, "url": url, "headers": headers}


@pytest.mark.parametrize(
    ("line", "name", "entry"),
    [
        # Claude Code's documented examples, with `claude mcp` written `%mcp`.
        (
            "%mcp add --transport http sentry https://mcp.sentry.dev/mcp",
            "sentry",
            remote("https://mcp.sentry.dev/mcp"),
        ),
        (
            "%mcp add --transport sse asana https://mcp.asana.com/sse",
            "asana",
            remote("https://mcp.asana.com/sse", "sse"),
        ),
        (
            (
                "%mcp add --transport stdio airtable --env AIRTABLE_API_KEY=YOUR_KEY "
                "-- npx -y airtable-mcp-server"
            ),
            "airtable",
            stdio("npx", "-y", "airtable-mcp-server", AIRTABLE_API_KEY="YOUR_KEY"),
        ),
        (
            (
                "%mcp add --transport http secure-api https://api.example.com/mcp "
                '--header "Authorization: Bearer your-token"'
            ),
            "secure-api",
            remote("https://api.example.com/mcp", Authorization="Bearer your-token"),
        ),
        (
            "%mcp add -e API_KEY=xyz -e OTHER=1 myserver -- python -m my_server --port 3",
            "myserver",
            stdio("python", "-m", "my_server", "--port", "3", API_KEY="xyz", OTHER="1"),
        ),
        ("%mcp add time uvx mcp-server-time", "time", stdio("uvx", "mcp-server-time")),
        # nbagent's own forms.
        ("%mcp add x -- cmd --flag a", "x", stdio("cmd", "--flag", "a")),
        (
            "%mcp add x --url http://127.0.0.1:1/mcp --header X-Token=a=b",
            "x",
            remote("http://127.0.0.1:1/mcp", **{"X-Token": "a=b"}),
        ),
        # Short flags, --flag=value, options after the URL, a URL meaning http, -e with "=".
        (
            "%mcp add -t sse -H 'X-A: 1' s https://h/sse -H X-B:2 --scope=user",
            "s",
            remote("https://h/sse", "sse", **{"X-A": "1", "X-B": "2"}),
        ),
        ("%mcp add web https://h/mcp", "web", remote("https://h/mcp")),
        ("%mcp add --env=Q=a=b -s local q -- run", "q", stdio("run", Q="a=b")),
        (
            """%mcp add-json j '{"type": "sse", "url": "https://h/sse"}'""",
            "j",
            {"type": "sse", "url": "https://h/sse"},
        ),
        (
            """%mcp add-json -s project k '{"command": "uvx", "args": ["t"]}'""",
            "k",
            {"command": "uvx", "args": ["t"]},
        ),
    ],
)
def test_add_lines_give_their_entries(
    ip: InteractiveShell, added: list[tuple[str, Any]], line: str, name: str, entry: Any
) -> None:
    result, shown = run(ip, line)
    assert result.success and added == [(name, entry)]
    assert f"Connecting `{name}` in the background" in shown
    parse_server(name, entry)  # a good entry


def test_a_scope_is_accepted_and_said_to_be_ignored(
    ip: InteractiveShell, added: list[tuple[str, Any]]
) -> None:
    _, shown = run(ip, "%mcp add -s user time -- uvx mcp-server-time")
    assert added == [("time", stdio("uvx", "mcp-server-time"))]
    assert "`--scope user` is ignored: a server added with `%mcp` lasts as long as" in shown
    _, shown = run(ip, "%mcp add other -- uvx mcp-server-time")
    assert "ignored" not in shown


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    env=st.dictionaries(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_]*", fullmatch=True),
        # No line breaks (a line magic is one line), and no $ { } (IPython expands them).
        st.text(
            st.characters(blacklist_categories=["Cc", "Cs", "Zl", "Zp"], blacklist_characters="${}")
        ),
        max_size=4,
    )
)
def test_any_environment_goes_through_e_flags(
    ip: InteractiveShell, added: list[tuple[str, Any]], env: dict[str, str]
) -> None:
    flags = " ".join(f"-e {shlex.quote(f'{key}={value}')}" for key, value in env.items())
    result, _ = run(ip, f"%mcp add {flags} srv -- cmd -e x")
    assert result.success and added[-1] == ("srv", stdio("cmd", "-e", "x", **env))


def test_pasted_lines_start_real_servers(ip: InteractiveShell) -> None:
    with (
        http_server("basic.py") as web,
        http_server("basic.py", transport="sse") as old,
    ):
        run(ip, f"%mcp add --transport http web {web.url} --header 'X-Token: t0ken'")
        run(ip, f"""%mcp add-json old '{{"type": "sse", "url": "{old.url}"}}'""")
        run(ip, f"%mcp add -e GREETING=hi basic -- {BASIC}")
        assert manager(ip).wait_ready(60)
        states = {s.name: (s.state, s.transport) for s in manager(ip).status()}
        assert states == {
            "web": ("connected", "http"),
            "old": ("connected", "sse"),
            "basic": ("connected", "stdio"),
        }
        header = nbagent.registry.get("mcp__web__header").call({"name": "x-token"})
        assert header.content == "t0ken"
        [pid] = [s.pid for s in manager(ip).status() if s.name == "basic"]
        assert psutil.Process(pid).environ()["GREETING"] == "hi"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%mcp", "%mcp list | log NAME | approve NAME...|--all | deny NAME...|--all | add"),
        ("%mcp approve", "%mcp approve takes server names or --all: %mcp approve NAME [NAME"),
        ("%mcp deny a --all", "%mcp deny takes server names or --all"),
        ("%mcp approve x", "No project .mcp.json was found when nbagent loaded: only the"),
        ("%mcp dance", "Unknown %mcp command 'dance'"),
        ("%mcp _list", "Unknown %mcp command '_list'"),
        ("%mcp add", "%mcp add needs a server name: %mcp add NAME -- COMMAND"),
        ("%mcp add -e A=1 -- ", "%mcp add needs a server name"),
        ("%mcp add x", "%mcp add x: give a command (%mcp add x -- COMMAND [ARGS...]) or a URL"),
        ("%mcp add x --", "give a command"),
        ("%mcp add -e FOO x -- y", "-e takes KEY=VALUE, not 'FOO': write -e API_KEY=xyz."),
        ("%mcp add -e =1 x -- y", "-e takes KEY=VALUE, not '=1'"),
        ("%mcp add x --transport", "--transport needs a value."),
        ("%mcp add -t ws x https://h/mcp", "--transport takes stdio, http or sse, not 'ws'."),
        ("%mcp add -t stdio x https://h/mcp", "'https://h/mcp' is a URL: write --transport http"),
        ("%mcp add -t http x npx server", "--transport http connects to a URL, but 'npx' is not"),
        ("%mcp add x --url ftp://h", "but 'ftp://h' is not one"),
        ("%mcp add -t sse x https://h/sse extra", "takes one URL, not arguments after it: extra"),
        ("%mcp add x https://h/mcp --url https://h/mcp", "give the URL once"),
        ("%mcp add -H 'Bearer abc' x https://h/mcp", "--header takes 'Name: value', not 'Bearer"),
        ("%mcp add x --url http://127.0.0.1:1/mcp --header nope", "--header takes 'Name: value'"),
        ("%mcp add -H ': v' x https://h/mcp", "--header takes 'Name: value', not ': v'"),
        ("%mcp add -H 'A: b' x -- cmd", "--header is for http and sse servers"),
        ("%mcp add -e A=1 x https://h/mcp", "-e sets a stdio server's environment"),
        ("%mcp add -s global x -- y", "--scope takes local, project or user, not 'global'."),
        (
            "%mcp add time uvx mcp-server-time --local-timezone UTC",
            "%mcp add has no option --local-timezone; if it is the server's, put -- before",
        ),
        ("%mcp add-json x", "%mcp add-json takes a name and one JSON entry: %mcp add-json NAME '"),
        ("%mcp add-json -t http x '{}'", "%mcp add-json takes a name and one JSON entry"),
        ("%mcp add-json x '{bad'", "%mcp add-json x: the entry is not JSON (Expecting"),
        ("""%mcp add-json x '{"type": "http"}'""", "field 'url' is required for an http server"),
        ("%mcp remove nowhere", "nowhere"),
        ("%mcp tools", "%mcp tools takes one server name"),
        ("%mcp list extra", "%mcp list takes no argument"),
    ],
)
def test_bad_mcp_lines_are_usage_errors(ip: InteractiveShell, line: str, message: str) -> None:
    result, _ = run(ip, line)
    error = error_of(result)
    assert isinstance(error, UsageError) and message in str(error)
    assert "\n" not in str(error) and not manager(ip).status()


def test_configured_servers_start_on_load_and_stop_on_unload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell = InteractiveShell.instance()
    config = {
        "mcpServers": {"basic": {"command": sys.executable, "args": [str(FIXTURES / "basic.py")]}}
    }
    (tmp_path / "servers.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("config", f"NbAgent.mcp_config = {str(tmp_path / 'servers.json')!r}")
    try:
        shell.run_line_magic("load_ext", "nbagent")
        assert manager(shell).wait_ready(60)
        [status] = manager(shell).status()
        assert status.state == "connected" and status.pid
        shell.run_line_magic("unload_ext", "nbagent")
        assert wait_until(lambda: not alive(status.pid), 10)
        assert "mcp__basic__add" not in nbagent.registry
    finally:
        shell.run_line_magic("unload_ext", "nbagent")
        shell.run_line_magic("config", "NbAgent.mcp_config = ''")


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
    """The user's own configuration (``c.NbAgent.mcp_config``): no approval asked."""
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
    (tmp_path / "servers.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBAGENT_UNSET_TOKEN", raising=False)
    shell.run_line_magic("config", f"NbAgent.mcp_config = {str(tmp_path / 'servers.json')!r}")
    result, loaded = run(shell, "%load_ext nbagent")
    notice = shown(loaded)
    try:
        assert result.success and "MCP configuration not used" not in notice
        assert "MCP servers not started" in notice and "approval" not in notice
        assert "`strargs`: field 'args' must be a list of strings, not a string." in notice
        assert "`envy`: field 'env.PORT' must be a string, not a number.; " in notice
        assert "field 'env.TOKEN' uses ${NBAGENT_UNSET_TOKEN}, which is not set" in notice
        assert "\\${NBAGENT\\_UNSET\\_TOKEN}" in loaded  # never read as mathematics
        assert "`off`" not in notice and "`basic`" not in notice
        assert manager(shell).wait_ready(60)
        [status] = manager(shell).status()
        assert (status.name, status.state) == ("basic", "connected")
        assert "mcp__basic__add" in nbagent.registry and "mcp__off__add" not in nbagent.registry
        listing = shown(run(shell, "%mcp list")[1])
        assert "| `basic` | connected | stdio |" in listing
        assert "| `off` | disabled |" in listing
        assert "| `strargs` | not started |  |  |  |  | field 'args' must be a list" in listing
        assert "| `envy` | not started |" in listing and "NBAGENT_UNSET_TOKEN" in listing
    finally:
        shell.run_line_magic("unload_ext", "nbagent")
        shell.run_line_magic("config", "NbAgent.mcp_config = ''")


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


def test_a_crashed_server_is_explained_in_list_in_log_and_in_a_notice_once(
    ip: InteractiveShell,
) -> None:
    old = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'written_for_mcp_1.py'))}"
    run(ip, f"%mcp add old -- {old}")
    assert manager(ip).wait_ready(60)
    hint = "ModuleNotFoundError: No module named 'mcp.server.fastmcp'. This is mcp 2.x"

    told, log = shown(run(ip, "%mcp log old")[1]).split("\n", 1)
    assert told.startswith("> MCP server `old` failed: exited with code 1: " + hint)
    assert told.endswith("pin 'mcp<2' to keep running v1 code. `%mcp log old` tells more.  ")
    assert log.startswith("**`old`**: failed · stdio · 0 tools")
    assert f"Runs: `{old}`" in log
    assert f"**Last error**: exited with code 1: {hint}" in log
    stderr = log.split("**stderr** (its last lines):")[1].split("**History**")[0]
    assert "Traceback (most recent call last):" in stderr
    assert "pin 'mcp<2' to keep running v1 code" in stderr

    table = shown(run(ip, "%mcp list")[1])
    assert table.startswith("| server |")  # the notice was told once
    assert f"| `old` | failed | stdio | 0 |  | 0 | exited with code 1: {hint}" in table
    assert "…" in table and "https://" not in table  # the link is left to the log
    assert "`%mcp log NAME` shows a server's history" in table
    history = log.split("**History**:")[1].splitlines()
    assert [line.split(" ", 2)[2].split(":")[0] for line in history if line] == [
        "starting",
        "failed",
    ]


def test_log_lists_tools_left_out_and_schemas_mended(ip: InteractiveShell) -> None:
    raw = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'raw_jsonrpc.py'))}"
    run(ip, f"%mcp add raw -- {raw}")
    assert manager(ip).wait_ready(60)
    listing = shown(run(ip, "%mcp log raw")[1] + run(ip, "%mcp list")[1])
    assert listing.startswith(
        "> MCP server `raw` had 3 of its tools left out (`array_root`, `not_a_dict`, "
        "`(a tool without a name)`). `%mcp log raw` tells more."
    )
    assert "| `raw` | connected | stdio | 6 |" in listing and "| 3 tools left out |" in listing
    log = listing
    left_out = log.split("**Tools left out**:")[1].split("**Schemas mended")[0]
    assert "- array_root: the server lists it with inputSchema.type: Input should be 'object'" in (
        left_out
    )
    mended = log.split("**Schemas mended so that the API takes them**:")[1]
    assert "- read_pdf: inputSchema (root): $schema 'http://json-schema.org/draft-04" in mended


def test_a_background_failure_is_told_at_the_next_agent_cell(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    run(ip, f"%mcp add gone -- {shlex.quote(sys.executable)} -c 'raise SystemExit(3)'")
    assert manager(ip).wait_ready(60)
    fake_api.enqueue(Reply.text("Hello."))
    result, shown = run(ip, "%%agent\nSay hello.")
    assert result.success
    assert shown.startswith("> MCP server `gone` failed: exited with code 3.")
    fake_api.enqueue(Reply.text("Hello again."))
    _, shown = run(ip, "%%agent\nAnd again.")
    assert "MCP server `gone`" not in shown


def test_notebook_variables_are_filled_in_and_environment_variables_kept(
    ip: InteractiveShell, added: list[tuple[str, Any]]
) -> None:
    ip.user_ns.update(TOKEN="from-the-notebook", sys=sys)
    run(ip, "%mcp add -e PY={sys.executable} py -- {sys.executable} -V")
    run(ip, "%mcp add -t http api https://example.com/mcp -H 'Authorization: Bearer ${{TOKEN}}'")
    run(ip, "%mcp add -t http web https://example.com/mcp -H 'X-Key: ${NBAGENT_UNSET_KEY}'")
    assert added == [
        ("py", {"command": sys.executable, "args": ["-V"], "env": {"PY": sys.executable}}),
        (
            "api",
            {
                "type": "http",
                "url": "https://example.com/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            },
        ),
        (
            "web",
            {
                "type": "http",
                "url": "https://example.com/mcp",
                "headers": {"X-Key": "${NBAGENT_UNSET_KEY}"},
            },
        ),
    ]


# -- a project's .mcp.json waits for approval ------------------------------------------------

SECRET_VAR = "NBAGENT_TEST_SECRET_VAR"
SECRET = "the-secret-value-no-unapproved-entry-reads"


@pytest.fixture
def project_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_api: FakeAnthropicServer
) -> Iterator[InteractiveShell]:
    """The shell in a folder whose .mcp.json the test writes; nbagent not loaded yet (and
    unloaded at the end)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv(SECRET_VAR, SECRET)
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    yield shell
    if "mcp" in shell.magics_manager.magics["line"]:
        shell.run_line_magic("unload_ext", "nbagent")


def marked_entry(marker: Path, *args: str) -> dict[str, Any]:
    """A server that writes ``marker`` when it starts, reading ``${SECRET_VAR}`` when it does."""
    return {
        "command": sys.executable,
        "args": [str(FIXTURES / "marks_start.py"), str(marker), *args],
        "env": {"TOKEN": "${" + SECRET_VAR + "}"},
    }


def write_project(folder: Path, servers: dict[str, Any]) -> None:
    """Write the folder's .mcp.json."""
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def reload(shell: InteractiveShell) -> str:
    """Unload nbagent if loaded, then load it (a new session) through run_cell; its output."""
    if "mcp" in shell.magics_manager.magics["line"]:
        run(shell, "%unload_ext nbagent")
    result, loaded = run(shell, "%load_ext nbagent")
    assert result.success, error_of(result)
    return shown(loaded)


def mcp_tools() -> list[str]:
    """The MCP tools in the registry now."""
    return sorted(name for name in nbagent.registry.names() if name.startswith("mcp__"))


def test_a_project_server_waits_is_approved_kept_and_asked_again_once_changed(
    project_shell: InteractiveShell, tmp_path: Path, approvals_file: Path
) -> None:
    shell, marker = project_shell, tmp_path / "started"
    entry = marked_entry(marker)
    write_project(tmp_path, {"marked": entry})
    loaded = reload(shell)
    assert loaded.startswith(
        f"> **MCP servers waiting for your approval** (in {tmp_path / '.mcp.json'}): `marked`. "
        "`%mcp list` shows what each would run; `%mcp approve NAME` starts one."
    )
    assert len(loaded.strip().splitlines()) == 1
    listing = shown(run(shell, "%mcp list")[1])
    assert "| `marked` | waiting for approval | stdio |  |  |  | `%mcp approve marked` |" in listing
    command = shlex.join([entry["command"], *entry["args"]])
    assert f"```\n{command}\nenv TOKEN=${{{SECRET_VAR}}}\n```" in listing
    assert f"the values of your environment variables `{SECRET_VAR}`." in listing
    log = shown(run(shell, "%mcp log marked")[1])
    assert log.startswith("`marked` waits for your approval") and command in log
    assert SECRET not in listing + log and not marker.exists() and mcp_tools() == []

    result, approved = run(shell, "%mcp approve marked")
    assert result.success and shown(approved).startswith(
        "Approved `marked`: connecting in the background"
    )
    assert str(approvals_file) in shown(approved)
    assert manager(shell).wait_ready(60)
    assert "mcp__marked__add" in mcp_tools()
    assert json.loads(marker.read_text())["env"]["TOKEN"] == SECRET
    assert "| `marked` | connected | stdio | 8 |" in shown(run(shell, "%mcp list")[1])

    marker.unlink()
    assert "approval" not in reload(shell)  # a new session: the same entry starts at once
    assert manager(shell).wait_ready(60)
    assert "mcp__marked__add" in mcp_tools() and marker.exists()

    marker.unlink()
    write_project(tmp_path, {"marked": marked_entry(marker, "--legacy")})
    assert "waiting for your approval** (in " in reload(shell)
    assert mcp_tools() == [] and not marker.exists()
    result, denied = run(shell, "%mcp deny marked")
    assert result.success and shown(denied).startswith("Denied `marked`: not started")
    assert "| `marked` | denied | stdio |" in shown(run(shell, "%mcp list")[1])
    assert reload(shell) == ""  # denied: not asked about again
    assert mcp_tools() == [] and not marker.exists()


def test_approve_all_names_what_did_not_start_and_says_what_to_do(
    project_shell: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NBAGENT_UNSET_TOKEN", raising=False)
    basic = {"command": sys.executable, "args": [str(FIXTURES / "basic.py")]}
    write_project(
        tmp_path,
        {"basic": basic, "envy": {**basic, "env": {"TOKEN": "${NBAGENT_UNSET_TOKEN}"}}},
    )
    assert "`basic`, `envy`" in reload(project_shell)
    result, said = run(project_shell, "%mcp approve --all")
    assert result.success
    first, second = shown(said).split("\n\n")
    assert first.startswith("Approved `basic`: connecting in the background")
    assert second.startswith("> Approved `envy`, but it was not started: field 'env.TOKEN' uses")
    assert "Once that is fixed, `%reload_ext nbagent` starts it" in second
    assert manager(project_shell).wait_ready(60)
    listing = shown(run(project_shell, "%mcp list")[1])
    assert "| `basic` | connected |" in listing and "| `envy` | not started |" in listing
    assert "Waiting for your approval" not in listing
    error = error_of(run(project_shell, "%mcp approve --all")[0])
    assert isinstance(error, UsageError) and "is left to approve" in str(error)


def test_a_damaged_approvals_file_is_named_at_load_and_loading_goes_on(
    project_shell: InteractiveShell, tmp_path: Path, approvals_file: Path
) -> None:
    approvals_file.write_text("not json")
    marker = tmp_path / "started"
    write_project(tmp_path, {"marked": marked_entry(marker)})
    loaded = reload(project_shell)
    assert "**MCP servers waiting for your approval**" in loaded
    assert f"**MCP approvals not read**: The MCP approvals file {approvals_file} is not valid" in (
        loaded
    )
    assert "fix the file or move it away, then `%reload_ext nbagent`" in loaded
    assert "agent" in project_shell.magics_manager.magics["cell"]
    assert "MCP approvals not read" in shown(run(project_shell, "%mcp list")[1])
    error = error_of(run(project_shell, "%mcp approve marked")[0])
    assert isinstance(error, UsageError)
    assert str(error).startswith(f"The MCP approvals file {approvals_file} is not valid JSON")
    assert str(error).endswith(
        ": the decision was not kept, and nothing started or stopped; fix the file or move it "
        "away, then `%mcp approve NAME` again."
    )
    assert approvals_file.read_text() == "not json" and not marker.exists()
