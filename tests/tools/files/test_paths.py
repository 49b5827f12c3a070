"""Resolving paths against the root, the paths no tool reads, and how paths are shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools import ToolContext
from nbagent.tools.files.paths import (
    inside_root,
    refuse_open_notebook,
    resolve,
    shown,
    skipped_note,
)


def test_relative_paths_start_at_the_root(context: ToolContext, root: Path) -> None:
    assert resolve(context, "a/b.txt") == root / "a" / "b.txt"
    assert resolve(context, "a/../c.txt") == root / "c.txt"
    assert resolve(context, str(root / "x")) == root / "x"
    assert resolve(context, "~") == Path.home().resolve()
    with pytest.raises(ToolError, match="The path is empty"):
        resolve(context, "  ")


def test_paths_are_shown_relative_to_the_root_when_inside(context: ToolContext, root: Path) -> None:
    assert shown(context, root) == "."
    assert shown(context, root / "a" / "b") == "a/b"
    assert shown(context, root.parent) == str(root.parent)
    assert inside_root(context, root / "a") and not inside_root(context, root.parent / "other")


def test_a_folder_beside_the_root_with_the_same_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    policy = PermissionPolicy(root=tmp_path / "work")
    reader = Tool(name="Reader", read_only=True, touches=lambda i: [Touch("read", i["p"])])
    decision = policy(reader, {"p": str(tmp_path / "work-other" / "f")})
    assert decision.behavior == "ask" and decision.rule == "outside the working folder"
    assert policy(reader, {"p": "f"}).behavior == "allow"


def test_credentials_never_resolve_whatever_the_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    context = ToolContext(root=tmp_path)
    with pytest.raises(ToolError, match="off limits"):
        resolve(context, "~/.ssh/id_rsa")
    denied = PermissionPolicy(deny=["Read(./private/**)"], root=tmp_path)
    context.policy = lambda: denied
    with pytest.raises(ToolError, match="off limits"):
        resolve(context, "private/x")
    assert resolve(context, "public/x") == tmp_path / "public" / "x"


def test_a_search_says_how_many_files_it_skipped() -> None:
    assert skipped_note(0) == ""
    assert "1 file skipped" in skipped_note(1) and "3 files skipped" in skipped_note(3)


def test_the_open_notebook_is_refused_by_name(root: Path) -> None:
    notebook = root / "nb.ipynb"
    context = ToolContext(root=root, notebook_path=lambda: notebook)
    with pytest.raises(ToolError, match="nb.ipynb is the open notebook"):
        refuse_open_notebook(context, notebook, "Write")
    refuse_open_notebook(context, root / "other.ipynb", "Write")


def test_a_write_is_checked_where_it_really_lands(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "hop").symlink_to(tmp_path / "a" / "b")
    context = ToolContext(root=tmp_path)
    denied = PermissionPolicy("bypassPermissions", deny=["Edit(./secrets/**)"], root=tmp_path)
    context.policy = lambda: denied
    # hop/../../secrets is a/secrets for normpath, but secrets/ once the link is followed
    assert resolve(context, "hop/../../secrets/x") == tmp_path / "secrets" / "x"
    with pytest.raises(ToolError, match="off limits"):
        resolve(context, "hop/../../secrets/x", write=True)
    assert resolve(context, "notes.txt", write=True) == tmp_path / "notes.txt"
