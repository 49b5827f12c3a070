"""The approvals of project servers: digests, what the person is shown, the file, screening."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.mcp.approvals import (
    APPROVALS_ENV,
    Approvals,
    ProjectServer,
    approvals_path,
    entry_digest,
    screen,
    written,
)
from nbagent.mcp.config_entry import variables_of
from nbagent.mcp.errors import ApprovalsError

GIT = {"command": "npx", "args": ["-y", "server git"], "env": {"TOKEN": "${GITHUB_TOKEN}"}}

JSON_TEXT = st.recursive(
    st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
"""Entries of strings, lists and objects (whose equality is exactly JSON's)."""


def server(name: str, entry: Any) -> ProjectServer:
    """A project server as the file has it."""
    return ProjectServer(name, entry, entry_digest(entry))


def mode(path: Path) -> int:
    """A file's permission bits."""
    return stat.S_IMODE(path.stat().st_mode)


# -- the digest ------------------------------------------------------------------------------


def test_the_digest_ignores_key_order_and_sees_every_change() -> None:
    reordered = {"env": GIT["env"], "args": GIT["args"], "command": GIT["command"]}
    assert entry_digest(reordered) == entry_digest(GIT)
    for changed in (
        {**GIT, "args": ["-y", "server git", "--write"]},
        {**GIT, "env": {"TOKEN": "${ANTHROPIC_API_KEY}"}},
        {**GIT, "cwd": "elsewhere"},
        {**GIT, "command": "npx "},
    ):
        assert entry_digest(changed) != entry_digest(GIT), changed


@given(JSON_TEXT, JSON_TEXT)
def test_equal_entries_and_only_they_share_a_digest(first: Any, second: Any) -> None:
    assert (entry_digest(first) == entry_digest(second)) == (first == second)
    assert entry_digest(json.loads(json.dumps(first))) == entry_digest(first)


# -- what the person is shown ----------------------------------------------------------------


def test_a_command_is_shown_as_written_with_its_variables_unexpanded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_the-real-token-value")
    entry = {**GIT, "cwd": "sub"}
    assert written(entry) == "npx -y 'server git'\nenv TOKEN=${GITHUB_TOKEN}\ncwd sub"
    assert variables_of(entry) == ("GITHUB_TOKEN",)


def test_a_remote_server_is_shown_with_its_url_and_headers_as_written() -> None:
    entry = {
        "type": "sse",
        "url": "https://h/sse?key=${KEY:-none}",
        "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}"},
    }
    assert written(entry) == (
        "sse https://h/sse?key=${KEY:-none}\nheader Authorization: Bearer ${ANTHROPIC_API_KEY}"
    )
    assert written({"url": "https://h/mcp"}) == "http https://h/mcp"
    assert variables_of(entry) == ("ANTHROPIC_API_KEY", "KEY")


def test_variables_are_those_of_the_expanded_fields_only() -> None:
    entry = {
        "command": "${A}",
        "args": ["${B}", "${B}"],
        "env": {"${NOT_A_VALUE}": "${C:-x}"},
        "cwd": "${D}/x",
        "url": "${E}",
        "headers": {"H": "${F}"},
        "description": "${G}",
    }
    assert variables_of(entry) == ("A", "B", "C", "D", "E", "F")
    assert variables_of({"args": "${A}", "env": [["${B}"]]}) == ("A", "B")
    assert variables_of("${A}") == ()


def test_characters_that_hide_or_reorder_text_are_shown_escaped() -> None:
    entry = {"command": "python", "args": ["ok.py\nrm -rf ~", "\u202eyp.live", "\x1b[8m"]}
    shown = written(entry)
    assert "\n" not in shown and "\u202e" not in shown and "\x1b" not in shown
    assert "ok.py\\nrm -rf ~" in shown and "\\u202eyp.live" in shown and "\\x1b[8m" in shown
    assert written({"command": "é", "args": ["日本"]}) == "'é' '日本'"  # quoted, not escaped


def test_an_entry_of_another_shape_is_shown_as_its_json() -> None:
    for entry in ({"command": "npx", "args": "-y server"}, ["npx"], {"env": {"PORT": 8080}}, {}):
        assert json.loads(written(entry)) == entry


def test_a_secret_written_literally_in_the_file_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-literal-value")
    shown = written({"url": "https://h/mcp", "headers": {"X-Key": "sk-ant-literal-value"}})
    assert "sk-ant-literal-value" not in shown and "[redacted ANTHROPIC_API_KEY]" in shown


# -- the file --------------------------------------------------------------------------------


def test_the_file_is_named_by_the_environment_else_kept_under_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(APPROVALS_ENV, str(tmp_path / "a.json"))
    assert approvals_path() == tmp_path / "a.json" == Approvals().path
    monkeypatch.delenv(APPROVALS_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert approvals_path() == tmp_path / ".nbagent" / "mcp-approvals.json"


def test_decisions_are_kept_private_by_resolved_path_and_digest(tmp_path: Path) -> None:
    approvals = Approvals(tmp_path / "home" / ".nbagent" / "mcp-approvals.json")
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "link").symlink_to(project)
    assert approvals.decisions(project / ".mcp.json") == {}

    approvals.record(tmp_path / "link" / ".mcp.json", [server("git", GIT)], "approved")
    approvals.record(project / ".mcp.json", [server("web", {"url": "https://h"})], "denied")
    assert approvals.decisions(project / ".mcp.json") == {
        "git": ("approved", entry_digest(GIT)),
        "web": ("denied", entry_digest({"url": "https://h"})),
    }
    assert approvals.decisions(tmp_path / "other" / ".mcp.json") == {}
    assert mode(approvals.path) == 0o600 and mode(approvals.path.parent) == 0o700
    data = json.loads(approvals.path.read_text())
    assert data["version"] == 1 and list(data["projects"]) == [str(project / ".mcp.json")]
    assert [p.name for p in approvals.path.parent.iterdir()] == ["mcp-approvals.json"]


def test_an_existing_folder_is_made_private(tmp_path: Path) -> None:
    folder = tmp_path / ".nbagent"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    Approvals(folder / "mcp-approvals.json").record(tmp_path, [server("git", GIT)], "approved")
    assert mode(folder) == 0o700


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("approved: [git]", "is not valid JSON (line 1 column 1: Expecting value)"),
        ("[]", 'is not an approvals file of this nbagent ({"version": 1, "projects"'),
        ('{"version": 2, "projects": {}}', "is not an approvals file of this nbagent"),
        ('{"version": 1, "projects": []}', "is not an approvals file of this nbagent"),
        (
            json.dumps({"version": 1, "projects": {"/p/.mcp.json": {"git": {"decision": "?"}}}}),
            "has a malformed record under '/p/.mcp.json'",
        ),
        ('{"version": 1, "projects": {"/p/.mcp.json": ["git"]}}', "has a malformed record"),
        (b"\xff\xfe", "cannot be read"),
    ],
)
def test_a_damaged_file_is_named_and_never_written_over(
    tmp_path: Path, text: str | bytes, problem: str
) -> None:
    path = tmp_path / "mcp-approvals.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    path.chmod(0o600)
    approvals = Approvals(path)
    with pytest.raises(ApprovalsError) as caught:
        approvals.decisions(tmp_path / ".mcp.json")
    assert str(caught.value).startswith(f"The MCP approvals file {path} ")
    assert problem in str(caught.value)
    with pytest.raises(ApprovalsError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        approvals.record(tmp_path / ".mcp.json", [server("git", GIT)], "approved")
    assert path.read_bytes() == (text if isinstance(text, bytes) else text.encode())


def test_a_file_others_can_change_counts_as_damaged(tmp_path: Path) -> None:
    approvals = Approvals(tmp_path / "mcp-approvals.json")
    approvals.record(tmp_path / ".mcp.json", [server("git", GIT)], "approved")
    approvals.path.chmod(0o622)
    with pytest.raises(ApprovalsError, match=r"can be changed by other users \(mode 622; chmod"):
        approvals.decisions(tmp_path / ".mcp.json")


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a file to another user")
def test_another_users_file_counts_as_damaged(tmp_path: Path) -> None:
    approvals = Approvals(tmp_path / "mcp-approvals.json")
    approvals.record(tmp_path / ".mcp.json", [server("git", GIT)], "approved")
    os.chown(approvals.path, 12345, 12345)
    with pytest.raises(ApprovalsError, match="belongs to another user"):
        approvals.decisions(tmp_path / ".mcp.json")


def test_a_file_that_cannot_be_written_is_named_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    approvals = Approvals(tmp_path / "mcp-approvals.json")
    approvals.record(tmp_path / ".mcp.json", [server("git", GIT)], "approved")
    before = approvals.path.read_text()

    def refuse(source: str, target: str) -> None:
        raise PermissionError(13, "Permission denied", target)

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ApprovalsError, match=r"cannot be written \(\[Errno 13\] Permission"):
        approvals.record(tmp_path / ".mcp.json", [server("web", {"url": "https://h"})], "denied")
    assert approvals.path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["mcp-approvals.json"]  # no temporary file


def test_a_path_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    approvals = Approvals(tmp_path / "a-file" / "mcp-approvals.json")
    with pytest.raises(ApprovalsError, match="cannot be read .*Not a directory"):
        approvals.decisions(tmp_path / ".mcp.json")


# -- screening a project file ----------------------------------------------------------------


def test_only_approved_unchanged_entries_are_kept_to_start(tmp_path: Path) -> None:
    source = tmp_path / ".mcp.json"
    approvals = Approvals(tmp_path / "approvals.json")
    web = {"url": "https://h/mcp", "headers": {"X": "${SECRET}"}}
    approvals.record(source, [server("git", GIT)], "approved")
    approvals.record(source, [server("web", web)], "denied")
    approvals.record(source, [server("old", {"command": "old"})], "approved")
    data = {
        "mcpServers": {
            "git": GIT,
            "web": web,
            "old": {"command": "old", "args": ["--changed"]},
            "new": {"command": "new"},
            "off": {"command": "off", "disabled": True},
            " ": {"command": "blank"},
        },
        "other": 1,
    }
    project, startable = screen(source, data, approvals)
    assert startable == {
        "mcpServers": {"git": GIT, "off": data["mcpServers"]["off"], " ": {"command": "blank"}},
        "other": 1,
    }
    decisions = {name: s.decision for name, s in project.servers.items()}
    assert decisions == {"git": "approved", "web": "denied", "old": None, "new": None}
    assert [s.name for s in project.deciding(None)] == ["old", "new"]
    assert project.source == source and project.fault is None
    again = project.decided(["old"], "denied")
    assert [s.name for s in again.deciding("denied")] == ["web", "old"]
    assert project.servers["old"].decision is None  # frozen: a new value, not a change


def test_a_damaged_file_leaves_every_server_waiting_and_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text("{")
    data = {"mcpServers": {"git": GIT}}
    project, startable = screen(tmp_path / ".mcp.json", data, Approvals(path))
    assert startable == {"mcpServers": {}}
    assert [s.name for s in project.deciding(None)] == ["git"]
    assert project.fault is not None
    assert project.fault.startswith(f"The MCP approvals file {path} is not valid JSON")
    assert "fix the file or move it away, then `%reload_ext nbagent`" in project.fault


@pytest.mark.parametrize("data", [[], {"mcpServers": []}, "text"])
def test_a_document_without_servers_is_passed_on_to_be_refused(tmp_path: Path, data: Any) -> None:
    project, startable = screen(tmp_path / ".mcp.json", data, Approvals(tmp_path / "a.json"))
    assert startable is data and project.servers == {}
