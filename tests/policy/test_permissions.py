"""Tests of nbagent.policy.permissions: the policy over what calls touch, by mode and rules."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.core.access import Touch, paths
from nbagent.core.errors import ConfigurationError
from nbagent.core.tool import Tool
from nbagent.policy.decisions import allow
from nbagent.policy.modes import PLAN_MESSAGE
from nbagent.policy.permissions import PermissionPolicy
from tests.policy.helpers import (
    BARE_EDIT,
    BASH,
    EDIT,
    FETCH,
    GREP,
    MCP_READ,
    NOTEBOOK_EDIT,
    NOTEBOOK_READ,
    READ,
    RESOURCES,
    WRITE,
)


def denying(project: Path, mode: str = "default") -> PermissionPolicy:
    return PermissionPolicy(mode, deny=["Read(./secrets/**)", "Edit(./secrets/**)"], root=project)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (READ, {"file_path": "secrets/db.txt"}),
        (GREP, {"path": "secrets"}),
        (GREP, {"path": "./secrets/db.txt"}),
        (NOTEBOOK_READ, {"notebook_path": "secrets/nb.ipynb"}),
        (WRITE, {"file_path": "secrets/new.txt"}),
        (EDIT, {"file_path": "data/../secrets/db.txt"}),
        (NOTEBOOK_EDIT, {"notebook_path": "secrets/nb.ipynb"}),
    ],
)
def test_read_and_edit_rules_guard_every_tool_that_reads_or_writes(
    project: Path, tool: Tool, tool_input: dict
) -> None:
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        decision = denying(project, mode)(tool, tool_input)
        assert decision.behavior == "deny", (mode, decision)
        assert "secrets" in decision.rule


def test_a_folder_pattern_covers_the_folder_itself(project: Path) -> None:
    policy = denying(project)
    assert policy(GREP, {"path": "secrets"}).behavior == "deny"
    assert policy(GREP, {"path": "secrets/"}).behavior == "deny"
    assert policy(GREP, {"path": "data"}).behavior == "allow"
    assert not policy.readable(project / "secrets")
    assert policy.readable(project / "data" / "a.csv")


def test_a_symlink_cannot_smuggle_a_path_past_a_rule(project: Path) -> None:
    (project / "data" / "link").symlink_to(project / "secrets")
    policy = denying(project, "bypassPermissions")
    assert policy(READ, {"file_path": "data/link/db.txt"}).behavior == "deny"


SPELLINGS = st.sampled_from(
    [
        "secrets/{f}",
        "./secrets/{f}",
        "secrets//{f}",
        "data/../secrets/{f}",
        "./data/./../secrets/./{f}",
        "{root}/secrets/{f}",
        "{root}/data/../secrets/{f}",
        "data/link/{f}",
        "secrets",
        "{root}/secrets/",
    ]
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    spelling=SPELLINGS,
    name=st.text(alphabet="abcxyz._-", min_size=1, max_size=8).filter(lambda n: n not in ".."),
    tool=st.sampled_from([READ, GREP, NOTEBOOK_READ, WRITE, EDIT, NOTEBOOK_EDIT]),
    mode=st.sampled_from(["default", "acceptEdits", "bypassPermissions"]),
)
def test_no_spelling_of_a_path_into_a_denied_folder_is_read_or_written(
    project: Path, spelling: str, name: str, tool: Tool, mode: str
) -> None:
    link = project / "data" / "link"
    if not link.exists():
        link.symlink_to(project / "secrets")
    path = spelling.format(root=project, f=name)
    field = "notebook_path" if tool.name.startswith("Notebook") else "file_path"
    field = "path" if tool is GREP else field
    assert denying(project, mode)(tool, {field: path}).behavior == "deny"


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"])
@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (READ, {"file_path": "~/.ssh/id_rsa"}),
        (GREP, {"path": "~/.ssh"}),
        (GREP, {"path": "~/.aws/"}),
        (READ, {"file_path": "~/.aws/../.aws/credentials"}),
        (WRITE, {"file_path": "~/.ssh/authorized_keys"}),
        (Tool(name="Glob", read_only=True, touches=paths("read", "path")), {"path": "~/.ssh"}),
    ],
)
def test_credentials_are_denied_to_every_tool_in_every_mode(
    home: Path, project: Path, mode: str, tool: Tool, tool_input: dict
) -> None:
    decision = PermissionPolicy(mode, root=project)(tool, tool_input)
    assert decision.behavior == "deny" and decision.rule == "credentials"


def test_credentials_are_denied_through_a_symlinked_home(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked = tmp_path / "linked-home"
    linked.symlink_to(home)
    monkeypatch.setenv("HOME", str(linked))
    policy = PermissionPolicy("bypassPermissions", root=project)
    for path in ("~/.ssh/id_rsa", str(home / ".ssh" / "id_rsa"), str(linked / ".ssh/id_rsa")):
        assert policy(READ, {"file_path": path}).behavior == "deny", path
    (project / "key").symlink_to(home / ".ssh" / "id_rsa")
    assert policy(READ, {"file_path": "key"}).behavior == "deny"


def test_searches_from_the_home_folder_skip_credentials(home: Path) -> None:
    (home / "notes.txt").write_text("hello")
    policy = PermissionPolicy(root=home)
    assert policy(GREP, {}).behavior == "allow"
    assert not policy.readable(home / ".ssh" / "id_rsa")
    assert not policy.readable(home / ".aws" / "credentials")
    assert policy.readable(home / "notes.txt")


def test_only_a_rule_that_names_a_credential_unlocks_it(home: Path, project: Path) -> None:
    wide = PermissionPolicy(allow=["Read(~/**)", "Read(/**)", "Read"], root=project)
    assert wide(READ, {"file_path": "~/.ssh/id_rsa"}).behavior == "deny"
    named = PermissionPolicy(allow=["Read(~/.ssh/id_rsa)"], root=project)
    assert named(READ, {"file_path": "~/.ssh/id_rsa"}).behavior == "allow"
    assert named(READ, {"file_path": "~/.aws/credentials"}).behavior == "deny"


def test_the_jupyter_runtime_folder_is_a_credential(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "kernel-1.json").write_text('{"key": "x"}')
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    policy = PermissionPolicy("bypassPermissions", root=project)
    assert policy(READ, {"file_path": str(runtime / "kernel-1.json")}).behavior == "deny"


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git/config",
        ".mcp.json",
        ".vscode/tasks.json",
        ".github/workflows/ci.yml",
        "sitecustomize.py",
        "pandas.py",
        "json.py",
        "ipykernel_launcher.py",
        "lib/site.pth",
        "~/.bashrc",
        "~/.ipython/profile_default/startup/00-x.py",
        "~/.jupyter/jupyter_server_config.py",
        "~/.nbagent/mcp.json",
    ],
)
def test_protected_paths_ask_in_every_mode_but_bypass(home: Path, project: Path, path: str) -> None:
    for mode in ("default", "acceptEdits"):
        decision = PermissionPolicy(mode, allow=["Edit"], root=project)(WRITE, {"file_path": path})
        assert decision.behavior == "ask", (mode, decision)
        assert "run code later" in decision.message
    assert PermissionPolicy("plan", root=project)(WRITE, {"file_path": path}).behavior == "deny"
    bypass = PermissionPolicy("bypassPermissions", root=project)
    assert bypass(WRITE, {"file_path": path}).behavior == "allow"


def test_accept_edits_writes_ordinary_files_inside_the_folder_only(
    home: Path, project: Path
) -> None:
    policy = PermissionPolicy("acceptEdits", root=project)
    assert policy(WRITE, {"file_path": "analysis.py"}).behavior == "allow"
    assert policy(EDIT, {"file_path": "data/a.csv"}).behavior == "allow"
    outside = policy(WRITE, {"file_path": str(project.parent / "x.txt")})
    assert outside.behavior == "ask" and outside.rule == "outside the working folder"


def test_a_project_module_is_not_a_shadow(project: Path) -> None:
    policy = PermissionPolicy("acceptEdits", root=project)
    assert policy(WRITE, {"file_path": "helpers.py"}).behavior == "allow"


def test_reads_outside_the_folder_ask_with_the_narrowest_rule(home: Path, project: Path) -> None:
    (home / "data").mkdir()
    (home / "data" / "x.csv").write_text("1")
    policy = PermissionPolicy(root=project)
    decision = policy(READ, {"file_path": "~/data/x.csv"})
    assert decision.behavior == "ask" and decision.always == f"Read({home}/data/x.csv)"
    folder = policy(GREP, {"path": "~/data"})
    assert folder.always == f"Grep({home}/data/**)"
    policy.add("allow", folder.always)
    assert policy(GREP, {"path": "~/data"}).behavior == "allow"
    assert policy(GREP, {"path": "~"}).behavior == "ask"


@pytest.mark.parametrize(
    ("mode", "tool", "behavior"),
    [
        ("default", READ, "allow"),
        ("default", BARE_EDIT, "ask"),
        ("default", BASH, "ask"),
        ("default", MCP_READ, "ask"),
        ("acceptEdits", BARE_EDIT, "allow"),
        ("acceptEdits", BASH, "ask"),
        ("acceptEdits", READ, "allow"),
        ("plan", READ, "allow"),
        ("plan", BARE_EDIT, "deny"),
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


def test_mcp_resources_follow_their_servers_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy(root=tmp_path)
    assert policy(RESOURCES, {"server": "github"}).behavior == "ask"
    for rule in ("mcp__github", "mcp__github__*"):
        allowed = PermissionPolicy(allow=[rule], root=tmp_path)
        assert allowed(RESOURCES, {"server": "github"}).behavior == "allow"
        assert allowed(RESOURCES, {"server": "slack"}).behavior == "ask"
        denied = PermissionPolicy("bypassPermissions", deny=[rule], root=tmp_path)
        assert denied(RESOURCES, {"server": "github"}).behavior == "deny"
    one_tool = PermissionPolicy(allow=["mcp__github__get_issue"], root=tmp_path)
    assert one_tool(RESOURCES, {"server": "github"}).behavior == "ask"
    assert one_tool(MCP_READ, {}).behavior == "allow"
    assert PermissionPolicy(allow=["mcp__github"], root=tmp_path)(MCP_READ, {}).behavior == "allow"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/c?d=secret",
        "http://localhost/x",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/",
        "http://192.168.1.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://foo.localhost/",
        "http://2130706433/",
        "http://127.1/",
        "http://0x7f.0.0.1/",
        "http://LOCALHOST./",
    ],
)
def test_web_fetch_never_reaches_a_private_address_unless_a_rule_names_it(
    tmp_path: Path, url: str
) -> None:
    for mode in ("default", "bypassPermissions"):
        decision = PermissionPolicy(mode, allow=["WebFetch"], root=tmp_path)(FETCH, {"url": url})
        assert decision.behavior == "deny" and decision.rule == "private address"
    host = (urlsplit(url).hostname or "").rstrip(".")
    named = PermissionPolicy(allow=[f"WebFetch(domain:{host})"], root=tmp_path)
    assert named(FETCH, {"url": url}).behavior == "allow"
    assert named.names_host(host)


def test_web_fetch_asks_per_domain_and_always_stores_the_domain(tmp_path: Path) -> None:
    policy = PermissionPolicy(root=tmp_path)
    decision = policy(FETCH, {"url": "https://docs.python.org/3/library/json.html"})
    assert decision.behavior == "ask" and decision.always == "WebFetch(domain:docs.python.org)"
    policy.add("allow", decision.always)
    assert policy(FETCH, {"url": "https://docs.python.org/3/"}).behavior == "allow"
    assert policy(FETCH, {"url": "https://evil.example/?q=docs.python.org"}).behavior == "ask"
    assert policy(FETCH, {"url": "https://docs.python.org.evil.example/"}).behavior == "ask"
    sub = PermissionPolicy(allow=["WebFetch(domain:*.python.org)"], root=tmp_path)
    assert sub(FETCH, {"url": "https://docs.python.org/"}).behavior == "allow"
    assert sub(FETCH, {"url": "https://notpython.org/"}).behavior == "ask"


def test_rules_added_later_apply(tmp_path: Path) -> None:
    policy = PermissionPolicy(root=tmp_path)
    assert policy(READ, {"file_path": "x"}).behavior == "allow"
    policy.add("deny", "Read")
    assert policy(READ, {"file_path": "x"}).behavior == "deny"
    assert policy(GREP, {}).behavior == "deny"


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="Unknown permission mode 'yolo'"):
        PermissionPolicy("yolo")


def test_plan_mode_beats_allow_rules(tmp_path: Path) -> None:
    policy = PermissionPolicy("plan", allow=["Edit"], root=tmp_path)
    assert policy(BARE_EDIT, {}).behavior == "deny"
    policy.mode = "default"
    assert policy(BARE_EDIT, {}).behavior == "allow"


def test_configured_rules_are_replaced_and_added_ones_stay(tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=["Read"], root=tmp_path)
    policy.add("allow", "Edit")
    policy.configure(allow=["Write"], deny=["Bash"])
    assert [r.text for r in policy.allow_rules] == ["Write", "Edit"]
    assert [r.text for r in policy.deny_rules] == ["Bash"]
    with pytest.raises(ConfigurationError):
        policy.configure(allow=["Bash("])
    assert [r.text for r in policy.allow_rules] == ["Write", "Edit"]


def test_an_odd_declaration_is_judged_by_the_tool(tmp_path: Path) -> None:
    broken = Tool(name="Odd", touches=lambda i: [Touch("read", i["missing"])])
    assert PermissionPolicy(root=tmp_path)(broken, {}).behavior == "ask"
    assert os.path.isdir(tmp_path)


def test_in_the_sandbox_bash_runs_unasked_but_deny_rules_and_credentials_hold(
    home: Path, project: Path
) -> None:
    bash = Tool(name="Bash", touches=lambda i: [Touch("run", i["command"])])
    policy = PermissionPolicy(root=project)
    assert policy(bash, {"command": "make build"}).behavior == "ask"
    policy.sandboxed = True
    assert policy(bash, {"command": "make build"}) == allow("sandbox")
    assert policy(bash, {"command": "echo $(date)"}).behavior == "allow"
    assert policy(bash, {"command": "cat ~/.ssh/id_rsa"}).behavior == "deny"
    policy.configure(deny=["Bash(rm:*)"])
    assert policy(bash, {"command": "/bin/rm -r data"}).behavior == "deny"
    assert policy(bash, {"command": "$(echo rm) -r data"}).behavior != "allow"


BASH_TOOL = Tool(name="Bash", touches=lambda i: [Touch("run", i["command"])])


@pytest.mark.parametrize(
    "line", ["grep -r PRIVATE .", "grep -rn PRIVATE", "rg PRIVATE", "tar -cf - ~", "cp -a ~ /tmp/x"]
)
def test_a_recursive_read_of_a_folder_holding_credentials_is_asked(home: Path, line: str) -> None:
    for mode in ("default", "bypassPermissions"):
        allowing = ["Bash(grep:*)", "Bash(rg:*)", "Bash(tar:*)", "Bash(cp:*)"]
        decision = PermissionPolicy(mode, allow=allowing, root=home)(BASH_TOOL, {"command": line})
        assert decision.behavior == "ask" and decision.rule == "folder with credentials"
    project = PermissionPolicy(allow=["Bash(grep:*)"], root=home)
    (home / "src").mkdir()
    assert project(BASH_TOOL, {"command": "grep -r TODO src"}).behavior == "allow"


def test_a_path_through_a_link_and_dotdot_is_read_as_the_system_reads_it(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "deep"
    elsewhere.mkdir(parents=True)
    (project / "jump").symlink_to(elsewhere)
    policy = PermissionPolicy(
        "bypassPermissions", deny=["Edit(./secrets/**)"], root=tmp_path / "elsewhere"
    )
    # jump/.. is elsewhere/ for the system (the link first), not the project for normpath
    tricky = f"{project}/jump/../../project/secrets/new.txt"
    assert os.path.realpath(tricky) == str(project / "secrets" / "new.txt")
    strict = PermissionPolicy("bypassPermissions", deny=[f"Edit({project}/secrets/**)"])
    assert strict(WRITE, {"file_path": tricky}).behavior == "deny"
    assert policy(WRITE, {"file_path": "x\0y"}).behavior == "deny"


@pytest.mark.parametrize(
    "path", ["pandas/__init__.py", "json/__init__.py", ".bash_aliases", ".local/bin/git"]
)
def test_more_places_that_run_code_later_ask(home: Path, path: str) -> None:
    assert PermissionPolicy("acceptEdits", root=home)(WRITE, {"file_path": path}).behavior == "ask"


def test_a_plain_folder_named_like_a_module_is_no_shadow(project: Path) -> None:
    (project / "test").mkdir()
    policy = PermissionPolicy("acceptEdits", root=project)
    assert policy(WRITE, {"file_path": "test/results.csv"}).behavior == "allow"
    assert policy(WRITE, {"file_path": "test/__init__.py"}).behavior == "ask"


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(
        sorted(n for n in __import__("sys").stdlib_module_names if n.isidentifier())
    )
)
def test_a_file_named_like_any_standard_module_asks_in_accept_edits(
    project: Path, name: str
) -> None:
    policy = PermissionPolicy("acceptEdits", root=project)
    decision = policy(WRITE, {"file_path": f"{name}.py"})
    assert decision.behavior == "ask" and name in decision.message


def test_the_key_that_signs_conversations_is_a_credential(home: Path, project: Path) -> None:
    (home / ".nbagent").mkdir()
    (home / ".nbagent" / "conversations.key").write_bytes(b"k" * 32)
    policy = PermissionPolicy("bypassPermissions", root=project)
    assert policy(READ, {"file_path": "~/.nbagent/conversations.key"}).behavior == "deny"


def test_a_credential_refusal_names_the_rule_that_would_unlock_that_path(
    home: Path, project: Path
) -> None:
    message = PermissionPolicy(root=project)(READ, {"file_path": "~/.ssh/id_rsa"}).message
    assert 'allow_rules = ["Read(~/.ssh/id_rsa)"]' in message


def test_on_a_filesystem_that_ignores_case_rules_ignore_it_too(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbagent.policy import pathrules

    monkeypatch.setattr(pathrules, "ignores_case", lambda folder: True)
    policy = denying(project, "bypassPermissions")
    assert policy(READ, {"file_path": "SECRETS/db.txt"}).behavior == "deny"
    assert policy(READ, {"file_path": "Secrets/DB.TXT"}).behavior == "deny"
    monkeypatch.setattr(pathrules, "ignores_case", lambda folder: False)
    assert denying(project, "bypassPermissions")(READ, {"file_path": "SECRETS/x"}).behavior == (
        "allow"
    )
