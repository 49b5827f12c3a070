"""nbagent.mcp.config_entry: values no process or HTTP client could use are refused when read.

A bad value is an McpConfigError naming the server and the field, at once, not an
exception of another kind (RuntimeError from ``~nobody``, ValueError from a NUL) or a failure
when the server starts.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Any

import pytest

from nbagent.mcp.config import HttpSpec, StdioSpec
from nbagent.mcp.config_file import parse_server
from nbagent.mcp.errors import McpConfigError

ENV = {"TOKEN": "s3cret"}


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ({"command": "x", "cwd": "~nobody-by-this-name/repo"}, "cwd", "no user 'nobody-by-t"),
        ({"command": "x", "cwd": "a\x00b"}, "cwd", "must not hold a NUL character"),
        ({"command": "x", "cwd": "~a\x00b"}, "cwd", "must not hold a NUL character"),
        ({"command": "x", "cwd": "\ud800"}, "cwd", "the operating system cannot take"),
        ({"command": "serve\x00"}, "command", "must not hold a NUL character"),
        ({"command": "x", "args": ["-v", "a\x00"]}, "args.1", "must not hold a NUL"),
        ({"command": "x", "env": {"A=B": "1"}}, "env", "variable name that cannot be set: 'A=B'"),
        ({"command": "x", "env": {"": "1"}}, "env", "variable name that cannot be set: ''"),
        ({"command": "x", "env": {"K": "${TOKEN}\x00"}}, "env.K", "must not hold a NUL"),
        ({"url": "http://[::1/mcp"}, "url", "is not a valid address: Invalid IPv6 URL"),
        ({"url": "http://127.0.0.1:99999/mcp"}, "url", "Port out of range"),
        ({"url": "http://host:port/mcp"}, "url", "Port could not be cast to integer"),
        ({"url": "http://a b/mcp"}, "url", "has no valid host name (got 'a b')"),
        ({"url": "http://@/mcp"}, "url", "has no valid host name"),
        ({"url": "http://a/mcp\n"}, "url", "must not hold control characters ('\\n'"),
        ({"url": "http://a/", "headers": {"X Y": "1"}}, "headers", "header name that is not"),
        ({"url": "http://a/", "headers": {"": "1"}}, "headers", "header name that is not"),
        (
            {"url": "http://a/", "headers": {"X": "${TOKEN}\r\nX-Evil: 1"}},
            "headers.X",
            "no line breaks or control characters; found '\\r' at position 6)",
        ),
        ({"url": "http://a/", "headers": {"X": "café"}}, "headers.X", "found 'é' at position 3"),
    ],
)
def test_values_no_process_or_client_can_use_are_config_errors(
    entry: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_server("db", entry, environ=ENV, base_dir=Path("/srv"), source=".mcp.json")
    assert (caught.value.server, caught.value.field) == ("db", field)
    assert str(caught.value).startswith(f"MCP server 'db' (in .mcp.json): field '{field}' ")
    assert words in str(caught.value)


def test_a_secret_in_a_bad_header_is_not_repeated_in_the_error() -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_server("db", {"url": "http://a/", "headers": {"X": "${TOKEN}\n"}}, environ=ENV)
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize("base_dir", [None, Path("/srv/project")])
def test_a_cwd_in_a_home_folder_is_expanded_with_or_without_a_file(
    base_dir: Path | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    user = pwd.getpwuid(os.getuid())
    for cwd, expected in [
        ("~", str(tmp_path)),
        ("~/repo", str(tmp_path / "repo")),
        (f"~{user.pw_name}/repo", str(Path(user.pw_dir) / "repo")),
    ]:
        spec = parse_server("s", {"command": "x", "cwd": cwd}, environ={}, base_dir=base_dir)
        assert spec == StdioSpec(command="x", cwd=expected)


def test_a_relative_cwd_is_kept_relative_without_a_file() -> None:
    spec = parse_server("s", {"command": "x", "cwd": "./~not-a-home"}, environ={})
    assert spec == StdioSpec(command="x", cwd="~not-a-home")  # a folder of that name


def test_a_home_that_cannot_be_found_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_such_uid(uid: int) -> None:
        raise KeyError(uid)

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", no_such_uid)
    with pytest.raises(McpConfigError) as caught:
        parse_server("s", {"command": "x", "cwd": "~/repo"}, environ={}, base_dir=Path("/srv"))
    assert caught.value.field == "cwd"
    assert "starts with '~', but HOME is not set" in str(caught.value)


@pytest.mark.parametrize(
    "entry",
    [
        {"url": "http://[::1]:8000/mcp"},
        {"url": "https://bücher.example/mcp?q=a b#x"},
        {"url": "https://h/mcp", "headers": {"Authorization": "Bearer a\tb ~!"}},
        {"type": "sse", "url": "http://127.0.0.1:65535/sse", "headers": {"X-Key": ""}},
    ],
)
def test_unusual_but_usable_addresses_and_headers_are_accepted(entry: dict[str, Any]) -> None:
    spec = parse_server("s", entry, environ=ENV)
    assert isinstance(spec, HttpSpec) and spec.url == entry["url"]


def test_a_bad_url_is_shown_as_written_so_no_secret_leaks() -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_server("db", {"url": "ftp://${TOKEN}@host/"}, environ=ENV, source=".mcp.json")
    assert "'ftp://${TOKEN}@host/'" in str(caught.value)
    assert "s3cret" not in str(caught.value)
