"""The memory tool under a hostile model: every spelling of a path stays in the project's
memory folder, the folder itself cannot be wiped by a disguised path, and a file's size is
bounded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.core.errors import ToolError
from nbagent.policy.combining import decide
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools.memory import MemoryStore, memory_tool


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory" / "project-abc")
    store.run("create", path="/memories/keep.md", file_text="the person's notes\n")
    return store


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../../x",
        "/memories/..",
        "/memories/./../x",
        "/memories//../x",
        "/memories/a/../../x",
        "//memories/../x",
        "/etc/passwd",
        "~/.bashrc",
        "/memories\\..\\x",
        "/memories/\x00/x",
    ],
)
def test_no_spelling_leaves_the_folder(store: MemoryStore, tmp_path: Path, path: str) -> None:
    tool = memory_tool(store)
    policy = PermissionPolicy("bypassPermissions", root=tmp_path / "work")
    call = {"command": "create", "path": path, "file_text": "x"}
    try:
        store.run("create", path=path, file_text="x")
    except (ToolError, ValueError):
        assert decide(tool, call, policy).behavior == "deny"
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and store.folder not in p.parents]
    assert outside == []


@pytest.mark.parametrize(
    "path", ["/memories/%2e%2e/x", "/memories/\u2025/x", "/memories/\uff0e\uff0e/x"]
)
def test_lookalikes_of_dot_dot_are_plain_names_inside(store: MemoryStore, path: str) -> None:
    store.run("create", path=path, file_text="x")
    assert (store.folder / path.removeprefix("/memories/")).is_file()


@pytest.mark.parametrize("path", ["/memories/.", "/memories/sub/..", "/memories/./"])
def test_the_folder_itself_cannot_be_deleted_by_another_spelling(
    store: MemoryStore, path: str
) -> None:
    (store.folder / "sub").mkdir()
    with pytest.raises(ToolError):
        store.run("delete", path=path)
    assert (store.folder / "keep.md").read_text() == "the person's notes\n"


def test_a_memory_file_is_bounded(store: MemoryStore) -> None:
    huge = "x" * 5_000_000
    with pytest.raises(ToolError, match="too large|at most"):
        store.run("create", path="/memories/big.md", file_text=huge)
    with pytest.raises(ToolError, match="too large|at most"):
        store.run("str_replace", path="/memories/keep.md", old_str="notes", new_str=huge)
    with pytest.raises(ToolError, match="too large|at most"):
        store.run("insert", path="/memories/keep.md", insert_line=0, insert_text=huge)
    assert (store.folder / "keep.md").read_text() == "the person's notes\n"
    assert not (store.folder / "big.md").exists()
