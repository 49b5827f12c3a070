"""nbagent.mcp.config_file: the mcpServers JSON of Claude Code and Claude Desktop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.errors import ConfigurationError
from nbagent.mcp.config import HttpSpec, StdioSpec
from nbagent.mcp.config_entry import expand
from nbagent.mcp.config_file import find_config, load_config, parse_config, parse_server
from nbagent.mcp.errors import McpConfigError

ENV = {"HOME": "/home/ada", "TOKEN": "s3cret", "EMPTY": ""}


def test_claude_desktop_entries_need_no_type() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
                "remote": {"url": "https://example.com/mcp"},
            }
        },
        environ=ENV,
    )
    assert config.servers == {
        "fs": StdioSpec(command="npx", args=("-y", "server-filesystem", "/tmp")),
        "remote": HttpSpec(url="https://example.com/mcp"),
    }
    assert list(config.servers) == ["fs", "remote"]


def test_claude_code_entries_with_every_field() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "git": {
                    "type": "stdio",
                    "command": "uvx",
                    "args": ["mcp-server-git", "--repository", "${HOME}/repo"],
                    "env": {"GIT_TOKEN": "${TOKEN}", "MODE": "${MODE:-fast}"},
                    "cwd": "/srv",
                },
                "search": {
                    "type": "http",
                    "url": "https://api.example.com/${TOKEN}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
                "legacy": {"type": "sse", "url": "http://127.0.0.1:8000/sse"},
            }
        },
        environ=ENV,
    )
    git, search, legacy = config.servers.values()
    assert git == StdioSpec(
        command="uvx",
        args=("mcp-server-git", "--repository", "/home/ada/repo"),
        env={"GIT_TOKEN": "s3cret", "MODE": "fast"},
        cwd="/srv",
    )
    assert git.transport == "stdio"
    assert search == HttpSpec(
        url="https://api.example.com/s3cret/mcp", headers={"Authorization": "Bearer s3cret"}
    )
    assert legacy.transport == "sse"


def test_other_clients_keys_are_ignored() -> None:
    entry = {"command": "x", "disabled": False, "autoApprove": ["a"], "timeout": 60}
    assert parse_server("s", entry, environ=ENV) == StdioSpec(command="x")


@pytest.mark.parametrize("kind", ["streamable-http", "streamableHttp", "http"])
def test_streamable_http_spellings(kind: str) -> None:
    spec = parse_server("s", {"type": kind, "url": "http://127.0.0.1:1/mcp"}, environ=ENV)
    assert spec == HttpSpec(url="http://127.0.0.1:1/mcp")


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ({"command": 3}, "command", "must be a string, not a number"),
        ({"command": ""}, "command", "must not be empty"),
        ({"command": "x", "args": "-v"}, "args", "must be a list of strings, not a string"),
        ({"command": "x", "args": ["ok", 2]}, "args.1", "must be a string"),
        ({"command": "x", "env": ["A=1"]}, "env", "must be an object of strings"),
        ({"command": "x", "env": {"PORT": 80}}, "env.PORT", "must be a string, not a number"),
        ({"command": "x", "env": {"K": "${NOPE}"}}, "env.K", "uses ${NOPE}, which is not set"),
        ({"command": "x", "cwd": None}, None, None),
        ({"type": "http"}, "url", "is required"),
        ({"type": "stdio", "url": "http://a"}, "command", "is required"),
        ({"type": "websocket", "url": "ws://a"}, "type", 'must be "stdio", "http" or "sse"'),
        ({"url": "ftp://a/b"}, "url", "must be an http:// or https:// address"),
        ({"url": "http://a", "headers": {"X": 1}}, "headers.X", "must be a string"),
        ({"url": "http://a", "headers": {"X": "${NOPE}"}}, "headers.X", "NOPE"),
        ({"url": "https://${NOPE}/mcp"}, "url", "NOPE"),
    ],
)
def test_bad_fields_name_the_server_and_the_field(
    entry: dict[str, Any], field: str | None, words: str | None
) -> None:
    if field is None:  # null cwd means "the kernel's folder"
        assert parse_server("db", entry, environ=ENV) == StdioSpec(command="x")
        return
    with pytest.raises(McpConfigError) as caught:
        parse_server("db", entry, environ=ENV, source=".mcp.json")
    error = caught.value
    assert (error.server, error.field) == ("db", field)
    assert str(error).startswith(f"MCP server 'db' (in .mcp.json): field '{field}' ")
    assert words in str(error)
    assert isinstance(error, ConfigurationError) and isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("npx x", "must be an object with a command or a url, not a string"),
        ({}, 'needs a "command" (a local server) or a "url"'),
        ({"command": "x", "url": "http://a"}, 'has both "command" and "url"'),
    ],
)
def test_bad_entries_name_the_server(entry: Any, words: str) -> None:
    with pytest.raises(McpConfigError, match="^MCP server 'db': ") as caught:
        parse_server("db", entry, environ=ENV)
    assert words in str(caught.value) and caught.value.field is None


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], 'must be a JSON object with "mcpServers", not a list'),
        ({"mcpServers": []}, '"mcpServers" must be an object of servers by name, not a list'),
        ({"mcpServers": {"": {"command": "x"}}}, "server names must be non-empty strings"),
    ],
)
def test_bad_documents(data: Any, words: str) -> None:
    with pytest.raises(McpConfigError, match="^MCP configuration: ") as caught:
        parse_config(data, environ=ENV)
    assert words in str(caught.value)


def test_names_that_clash_once_cleaned_are_refused() -> None:
    config = parse_config({"mcpServers": {"my.db": {"command": "a"}, "my_db": {"command": "b"}}})
    assert list(config.servers) == ["my.db"]
    [problem] = config.problems
    assert problem.server == "my_db" and "clashes with server 'my.db'" in str(problem)


def test_bad_entries_are_left_out_with_every_fault_named_and_the_rest_kept() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "good": {"command": "uvx", "args": ["mcp-server-git"]},
                "args": {"command": "npx", "args": "-y server"},
                "env": {"command": "x", "env": {"PORT": 8080, "KEY": "${NOPE}", "OK": "1"}},
                "many": {"command": "", "args": [1], "cwd": 3},
                "remote": {"url": "ftp://a", "headers": {"X": 1}},
            }
        },
        environ=ENV,
    )
    assert config.servers == {"good": StdioSpec(command="uvx", args=("mcp-server-git",))}
    faults = {(p.server, p.field) for p in config.problems}
    assert faults == {
        ("args", "args"),
        ("env", "env.PORT"),
        ("env", "env.KEY"),
        ("many", "command"),
        ("many", "args.0"),
        ("many", "cwd"),
        ("remote", "url"),
        ("remote", "headers.X"),
    }
    [unset] = config.faults("env")[1:]
    assert "uses ${NOPE}, which is not set (set it, or write ${NOPE:-default})" in str(unset)
    assert "must be a list of strings, not a string" in str(config.faults("args")[0])
    assert config.faults("good") == []


def test_parse_server_names_every_fault_of_an_entry() -> None:
    with pytest.raises(McpConfigError, match="^MCP server 'db': field 'args.0' ") as caught:
        parse_server("db", {"command": "x", "args": [1], "env": {"K": "${NOPE}"}}, environ=ENV)
    assert "; field 'env.K' uses ${NOPE}" in str(caught.value)
    assert (caught.value.server, caught.value.field) == ("db", "args.0")


def test_disabled_entries_are_left_out_and_listed() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "off": {"command": "x", "disabled": True},
                "off_and_bad": {"args": "x", "disabled": True},
                "on": {"command": "x", "disabled": False},
            }
        },
        environ=ENV,
    )
    assert list(config.servers) == ["on"]
    assert config.disabled == ("off", "off_and_bad") and config.problems == ()


def test_a_disabled_that_is_not_a_boolean_is_a_fault() -> None:
    config = parse_config({"mcpServers": {"s": {"command": "x", "disabled": "yes"}}})
    assert config.servers == {} and config.disabled == ()
    [problem] = config.problems
    assert (problem.server, problem.field) == ("s", "disabled")
    assert "must be true or false, not a string" in str(problem)


def test_a_bad_entry_in_a_file_is_named_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps({"mcpServers": {"a": {"command": "x", "args": "y"}, "b": {"command": "z"}}})
    )
    config = load_config(path, environ=ENV)
    assert list(config.servers) == ["b"]
    assert str(config.problems[0]).startswith(f"MCP server 'a' (in {path}): field 'args' ")


def test_a_file_without_mcp_servers_has_none() -> None:
    assert parse_config({"other": 1}).servers == {}


def test_load_reports_json_errors_with_the_file_and_position(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {"a": {"command": "x",}}}')
    with pytest.raises(McpConfigError, match=r"\.mcp\.json\): is not valid JSON: line 1 column 38"):
        load_config(path)
    with pytest.raises(McpConfigError, match="cannot be read"):
        load_config(tmp_path / "missing.json")


def test_a_relative_cwd_starts_at_the_files_folder(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x", "cwd": "sub"}}}))
    config = load_config(path, environ=ENV)
    assert config.servers["a"] == StdioSpec(command="x", cwd=str(tmp_path / "sub"))
    assert config.source == path


def test_lookup_prefers_the_notebooks_folder_then_home(tmp_path: Path) -> None:
    notebook, home = tmp_path / "project", tmp_path / "home"
    notebook.mkdir()
    (home / ".nbagent").mkdir(parents=True)
    assert find_config(notebook, home=home) is None
    (home / ".nbagent" / "mcp.json").write_text("{}")
    assert find_config(notebook, home=home) == home / ".nbagent" / "mcp.json"
    (notebook / ".mcp.json").write_text("{}")
    assert find_config(notebook, home=home) == notebook / ".mcp.json"


# -- ${VAR} expansion, by property -----------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
PLAIN = st.text(
    st.characters(blacklist_characters="$\x00", blacklist_categories=("Cs",)), max_size=30
)
"""Text without variables, NUL or lone surrogates (which no process can be given)."""
VALUES = st.text(min_size=1, max_size=20)


@given(PLAIN)
def test_text_without_variables_is_unchanged(text: str) -> None:
    assert expand(text, {}) == text


@given(NAMES, VALUES, PLAIN, PLAIN)
def test_a_set_variable_is_replaced(name: str, value: str, before: str, after: str) -> None:
    assert expand(f"{before}${{{name}}}{after}", {name: value}) == before + value + after
    assert expand(f"${{{name}:-unused}}", {name: value}) == value


@given(NAMES, st.text(st.characters(blacklist_characters="}"), max_size=20))
def test_the_default_applies_when_unset_or_empty(name: str, default: str) -> None:
    assert expand(f"${{{name}:-{default}}}", {}) == default
    assert expand(f"${{{name}:-{default}}}", {name: ""}) == default


@given(NAMES)
def test_an_unset_variable_without_default_is_a_key_error(name: str) -> None:
    with pytest.raises(KeyError) as caught:
        expand(f"x ${{{name}}} y", {})
    assert caught.value.args[0] == name
    assert expand(f"${{{name}}}", {name: ""}) == ""


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
ENTRY_KEYS = st.sampled_from(["command", "args", "env", "cwd", "type", "url", "headers"])


@given(
    st.dictionaries(
        st.text(max_size=6), st.dictionaries(ENTRY_KEYS, JSON, max_size=4) | JSON, max_size=3
    )
)
def test_any_document_parses_or_fails_with_a_config_error(servers: dict[str, Any]) -> None:
    try:
        config = parse_config({"mcpServers": servers}, environ=ENV)
    except McpConfigError as error:
        assert str(error).startswith(("MCP server ", "MCP configuration"))
    else:
        left_out = {p.server for p in config.problems} | set(config.disabled)
        assert set(config.servers) | left_out == set(servers)
        assert not set(config.servers) & left_out


@given(
    command=PLAIN.filter(str.strip),
    args=st.lists(PLAIN, max_size=4),
    env=st.dictionaries(NAMES, PLAIN, max_size=4),
)
def test_stdio_entries_keep_their_values(
    command: str, args: list[str], env: dict[str, str]
) -> None:
    spec = parse_server("s", {"command": command, "args": args, "env": env}, environ={})
    assert spec == StdioSpec(command=command, args=tuple(args), env=env)
