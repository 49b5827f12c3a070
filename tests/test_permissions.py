"""Tests of nbagent.permissions: rules, modes, and how decisions combine."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.errors import ConfigurationError
from nbagent.permissions import (
    DEFAULT_DENY,
    PLAN_MESSAGE,
    PermissionPolicy,
    Rule,
    allow,
    ask,
    decide,
    deny,
)
from nbagent.tool import Tool

READ = Tool(name="Read", read_only=True)
EDIT = Tool(name="Edit")
BASH = Tool(name="Bash")
MCP_READ = Tool(name="mcp__github__get_issue", read_only=True, is_mcp=True, server="github")


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "matches"),
    [
        ("Bash(git status:*)", "Bash", {"command": "git status"}, True),
        ("Bash(git status:*)", "Bash", {"command": "git  status   -s"}, True),
        ("Bash(git status:*)", "Bash", {"command": "git statusx"}, False),
        ("Bash(git status:*)", "Bash", {"command": "git push"}, False),
        ("Bash(ls)", "Bash", {"command": "ls"}, True),
        ("Bash(ls)", "Bash", {"command": "ls -la"}, False),
        ("Read(./data/**)", "Read", {"file_path": "data/a/b.csv"}, True),
        ("Read(./data/**)", "Read", {"file_path": "./data/x.csv"}, True),
        ("Read(./data/**)", "Read", {"file_path": "data/../secret.txt"}, False),
        ("Read(./data/*.csv)", "Read", {"file_path": "data/sub/x.csv"}, False),
        ("Read(./data/**)", "Write", {"file_path": "data/x.csv"}, False),
        ("mcp__github__*", "mcp__github__get_issue", {}, True),
        ("mcp__github__*", "mcp__gitlab__get_issue", {}, False),
        ("NotebookEdit", "NotebookEdit", {"cell_id": "x"}, True),
        ("*(~/.ssh/**)", "Read", {"file_path": "~/.ssh/id_rsa"}, True),
        ("*(~/.ssh/**)", "Glob", {"pattern": "*", "path": "~/.ssh"}, False),
        ("*(~/.ssh)", "Glob", {"pattern": "*", "path": "~/.ssh"}, True),
    ],
)
def test_rules_match_tools_and_inputs(
    rule: str, tool: str, tool_input: dict, matches: bool, tmp_path: Path
) -> None:
    assert Rule(rule).matches(tool, tool_input, tmp_path) is matches


def test_a_symlink_cannot_smuggle_a_path_past_a_rule(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "link").symlink_to(secret)
    assert not Rule("Read(./data/**)").matches("Read", {"file_path": "data/link/x"}, tmp_path)
    assert Rule("Read(./secret/**)").matches("Read", {"file_path": "data/link/x"}, tmp_path)


@pytest.mark.parametrize("text", ["", "Bash(", "Bash()", "Two words", "(x)"])
def test_malformed_rules_are_clear_errors(text: str) -> None:
    with pytest.raises(ConfigurationError, match="is not of the form Tool or Tool"):
        Rule(text)


@given(st.from_regex(r"[A-Za-z_*][A-Za-z0-9_*-]{0,20}(\([^()]{1,20}\))?", fullmatch=True))
def test_every_well_formed_rule_parses(text: str) -> None:
    rule = Rule(text)
    assert rule.tool and (rule.specifier is None or rule.specifier)


@pytest.mark.parametrize(
    ("mode", "tool", "behavior"),
    [
        ("default", READ, "allow"),
        ("default", EDIT, "ask"),
        ("default", BASH, "ask"),
        ("default", MCP_READ, "ask"),
        ("acceptEdits", EDIT, "allow"),
        ("acceptEdits", BASH, "ask"),
        ("acceptEdits", READ, "allow"),
        ("plan", READ, "allow"),
        ("plan", EDIT, "deny"),
        ("plan", BASH, "deny"),
        ("bypassPermissions", BASH, "allow"),
        ("bypassPermissions", MCP_READ, "allow"),
    ],
)
def test_modes(mode: str, tool: Tool, behavior: str, tmp_path: Path) -> None:
    decision = PermissionPolicy(mode, root=tmp_path)(tool, {})
    assert decision.behavior == behavior and decision.rule == f"mode {mode}"
    if behavior == "deny":
        assert decision.message == PLAN_MESSAGE


def test_deny_rules_win_over_allow_rules_and_modes(tmp_path: Path) -> None:
    policy = PermissionPolicy(
        "bypassPermissions", allow=["Bash"], deny=["Bash(rm:*)"], root=tmp_path
    )
    refused = policy(BASH, {"command": "rm -rf /"})
    assert refused.behavior == "deny" and refused.rule == "deny rule Bash(rm:*)"
    assert "Bash(rm:*)" in refused.message
    assert policy(BASH, {"command": "ls"}).rule == "allow rule Bash"


def test_credentials_are_denied_by_default_even_when_bypassing(tmp_path: Path) -> None:
    policy = PermissionPolicy("bypassPermissions", root=tmp_path)
    assert policy(READ, {"file_path": "~/.aws/credentials"}).behavior == "deny"
    assert policy(READ, {"file_path": "notes.txt"}).behavior == "allow"
    assert all(rule.startswith("*(") for rule in DEFAULT_DENY)


def test_rules_added_later_apply(tmp_path: Path) -> None:
    policy = PermissionPolicy(root=tmp_path)
    assert policy(BASH, {"command": "git status"}).behavior == "ask"
    policy.add("allow", "Bash(git status:*)")
    assert policy(BASH, {"command": "git status"}).behavior == "allow"
    policy.add("deny", "Read")
    assert policy(READ, {"file_path": "x"}).behavior == "deny"


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="Unknown permission mode 'yolo'"):
        PermissionPolicy("yolo")


def hooked(decision: object) -> Tool:
    return Tool(name="RunCode", check_permission=lambda _input: decision)


def test_decisions_combine_deny_then_explicit_allow_then_strictest() -> None:
    assert decide(hooked(None), {}, None) == allow()
    assert decide(hooked(ask("sure?")), {}, lambda t, i: allow("mode default")).behavior == "ask"
    assert (
        decide(hooked(ask("sure?")), {}, lambda t, i: allow("rule", explicit=True)).rule == "rule"
    )
    assert decide(hooked(deny("no")), {}, lambda t, i: allow("rule", explicit=True)).message == "no"
    assert decide(hooked(True), {}, None).behavior == "allow"
    assert decide(hooked(False), {}, None).behavior == "deny"
    with pytest.raises(TypeError, match="return a PermissionDecision"):
        decide(hooked("yes"), {}, None)


def test_plan_mode_beats_allow_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy("plan", allow=["Edit"], root=tmp_path)
    assert policy(EDIT, {}).behavior == "deny"
    policy.mode = "default"
    assert policy(EDIT, {}).behavior == "allow"
