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
    always_rule,
    ask,
    decide,
    deny,
    describe_request,
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
        ("Bash(git status:*)", "Bash", {"command": "git status && rm -r data"}, False),
        ("Bash(git status:*)", "Bash", {"command": "git status; curl x | sh"}, False),
        ("Bash(git status:*)", "Bash", {"command": "git status > /etc/passwd"}, False),
        ("Bash(git status:*)", "Bash", {"command": "git status $(rm -r data)"}, False),
        ("Bash(git status:*)", "Bash", {"command": "git status\nrm -r data"}, False),
        ("Bash(git status && ls)", "Bash", {"command": "git status && ls"}, True),
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


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git status -s", "Bash(git status:*)"),
        ("git -C repo status", "Bash(git:*)"),
        ("ls -la data", "Bash(ls:*)"),
        ("/usr/bin/git log", "Bash(/usr/bin/git log:*)"),
        ("pytest tests/test_a.py", "Bash(pytest:*)"),
        ("python train.py --epochs 3", "Bash(python train.py --epochs 3)"),
        ("sudo rm -r data", "Bash(sudo rm -r data)"),
        ("git status && git push", "Bash(git status && git push)"),
    ],
)
def test_always_allows_the_subcommand_the_program_or_the_exact_line(
    command: str, rule: str, tmp_path: Path
) -> None:
    assert always_rule(BASH, {"command": command}) == rule
    policy = PermissionPolicy(root=tmp_path)
    policy.add("allow", rule)
    assert policy(BASH, {"command": command}).behavior == "allow"


def test_always_for_a_tool_without_a_command_allows_the_tool() -> None:
    assert always_rule(EDIT, {"file_path": "a.py"}) == "Edit"
    assert always_rule(BASH, {"command": "   "}) == "Bash"


WORDS = st.text(alphabet="abcdefghij-./", min_size=1, max_size=8)


@given(
    program=WORDS,
    rest=st.lists(WORDS, max_size=3),
    operator=st.sampled_from([";", "&&", "||", "|", ">", "<", "`", "$(", "\n", "&"]),
    tail=WORDS,
)
def test_an_always_rule_never_allows_a_chained_command(
    program: str, rest: list[str], operator: str, tail: str
) -> None:
    command = " ".join([program, *rest])
    rule = Rule(always_rule(BASH, {"command": command}))
    chained = f"{command} {operator} {tail}"
    assert not rule.matches("Bash", {"command": chained}, Path.cwd())


def test_a_request_reads_as_the_command_the_path_or_the_input() -> None:
    assert describe_request(BASH, {"command": "git status", "timeout": 5}) == "git status"
    assert describe_request(EDIT, {"file_path": "a.py", "old_string": "x"}) == "a.py"
    assert describe_request(Tool(name="T"), {"city": "Rome", "days": 3}) == "city='Rome', days=3"


def test_configured_rules_are_replaced_and_added_ones_stay(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Read"], root=tmp_path)
    policy.add("allow", "Edit")
    policy.configure(allow=["Write"], deny=["Bash"])
    assert [r.text for r in policy.allow_rules] == ["Write", "Edit"]
    assert [r.text for r in policy.deny_rules] == [*DEFAULT_DENY, "Bash"]
    with pytest.raises(ConfigurationError):
        policy.configure(allow=["Bash("])
    assert [r.text for r in policy.allow_rules] == ["Write", "Edit"]
