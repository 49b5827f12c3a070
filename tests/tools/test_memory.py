"""The memory tool: the API's commands over a project's folder, confined to it; sent as the
API's typed entry under its beta; listed by %agent memory."""

from __future__ import annotations

import os
from pathlib import Path

import pydantic
import pytest
from anthropic.types.beta import BetaMemoryTool20250818Command, BetaMemoryTool20250818Param
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ToolError
from nbagent.loop.agent import Agent
from nbagent.policy.combining import decide
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.tools.memory import MemoryStore, memory_folder, memory_tool


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory" / "project-abc")


def test_the_commands(store: MemoryStore) -> None:
    assert store.run("view", path="/memories") == "Files in /memories:\n(none yet)"
    store.run("create", path="/memories/notes/plan.md", file_text="a\nb\n")
    assert (store.folder / "notes" / "plan.md").read_text() == "a\nb\n"
    assert store.run("view", path="/memories/notes/plan.md") == "     1\ta\n     2\tb"
    assert store.run("view", path="/memories/notes/plan.md", view_range=[2, -1]) == "     2\tb"
    store.run("str_replace", path="/memories/notes/plan.md", old_str="b", new_str="c")
    store.run("insert", path="/memories/notes/plan.md", insert_line=1, insert_text="between")
    assert (store.folder / "notes" / "plan.md").read_text() == "a\nbetween\nc\n"
    store.run("rename", old_path="/memories/notes/plan.md", new_path="/memories/plan.md")
    assert "/memories/plan.md" in store.run("view", path="/memories")
    assert store.listing() == [("/memories/plan.md", 12)]
    store.run("delete", path="/memories/plan.md")
    assert store.listing() == []
    store.run("create", path="/memories/x", file_text="1")
    with pytest.raises(ToolError, match="was not found"):
        store.run("str_replace", path="/memories/x", old_str="zz", new_str="y")


@pytest.mark.parametrize(
    "path",
    ["/memories/../secret", "/etc/passwd", "memories/x", "/memories/a/../../b", "/memoriesx"],
)
def test_a_path_leaving_the_folder_is_refused(store: MemoryStore, path: str) -> None:
    with pytest.raises(ToolError):
        store.run("create", path=path, file_text="x")


def test_a_link_pointing_out_is_refused(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store.folder.mkdir(parents=True)
    os.symlink(outside, store.folder / "link")
    with pytest.raises(ToolError, match="leaves the memory folder"):
        store.run("create", path="/memories/link/x", file_text="x")
    assert not (outside / "x").exists()


@given(st.text(alphabet="ab./~", max_size=20))
def test_every_accepted_path_lies_in_the_folder(tail: str) -> None:
    store = MemoryStore(Path("/tmp/nbagent-memory-test/p"))
    try:
        local = store.local("/memories/" + tail)
    except ToolError:
        return
    assert str(local).startswith(str(store.folder.resolve()))


def test_the_folder_is_per_project(tmp_path: Path) -> None:
    first, second = memory_folder(tmp_path / "a"), memory_folder(tmp_path / "b")
    assert first != second and first.name.startswith("a-")
    assert memory_folder(tmp_path / "a") == first


def test_the_policy_confines_it(store: MemoryStore, tmp_path: Path) -> None:
    """Writes inside its folder need no question; an escape, or a deny rule on the real
    place, is refused."""
    tool = memory_tool(store)
    policy = PermissionPolicy("default", root=tmp_path / "work")
    write = {"command": "create", "path": "/memories/a.md", "file_text": "x"}
    assert decide(tool, write, policy).behavior == "allow"
    escape = {"command": "create", "path": "/memories/../a.md", "file_text": "x"}
    assert decide(tool, escape, policy).behavior == "deny"
    denying = PermissionPolicy("default", deny=[f"Write({store.folder}/**)"], root=tmp_path)
    assert decide(tool, write, denying).behavior == "deny"


def test_the_agent_sends_the_typed_entry_and_runs_the_commands(
    fake_api: FakeAnthropicServer, store: MemoryStore
) -> None:
    agent = Agent(registry=ToolRegistry([memory_tool(store)]), client=fake_api.client())
    create = {"command": "create", "path": "/memories/facts.md", "file_text": "The user likes tea."}
    fake_api.enqueue(
        Reply.tool_use("memory", {"command": "view", "path": "/memories"}),
        Reply.tool_use("memory", create),
        Reply.text("Noted."),
    )
    assert agent.run("Remember that I like tea.").text == "Noted."
    assert (store.folder / "facts.md").read_text() == "The user likes tea."
    request = fake_api.requests[0]
    entry = next(t for t in request.body["tools"] if t.get("type") == "memory_20250818")
    assert entry == {"type": "memory_20250818", "name": "memory"}
    pydantic.TypeAdapter(BetaMemoryTool20250818Param).validate_python(entry, strict=True)
    assert "context-management-2025-06-27" in request.headers["anthropic-beta"]
    for call in (b for m in agent.messages for b in m["content"] if b["type"] == "tool_use"):
        pydantic.TypeAdapter(BetaMemoryTool20250818Command).validate_python(call["input"])
    fake_api.assert_no_errors()


def test_the_memory_tool_needs_its_beta(fake_api: FakeAnthropicServer) -> None:
    import anthropic

    client = fake_api.client()
    with pytest.raises(anthropic.BadRequestError, match="needs the anthropic-beta"):
        client.messages.create(
            model="claude-test",
            max_tokens=10,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "memory_20250818", "name": "memory"}],  # type: ignore[list-item]
        )
