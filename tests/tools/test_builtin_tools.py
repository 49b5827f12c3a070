"""builtin_tools: the set, its flags, and the tools at work in the agent loop (real SDK)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import ConfigurationError
from nbagent.core.events import ToolCallFinished
from nbagent.loop.agent import Agent
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.tools import BUILTIN_TOOL_NAMES, ToolContext, builtin_tools

# name: (read_only, concurrency_safe, should_defer, what it touches: a declaration or a hook)
FLAGS = {
    "Read": (True, True, False, True),
    "Write": (False, False, False, True),
    "Edit": (False, False, False, True),
    "Glob": (True, True, False, True),
    "Grep": (True, True, False, True),
    "Bash": (False, False, False, True),
    "NotebookRead": (True, True, False, True),
    "NotebookEdit": (False, False, False, True),
    "NotebookRun": (False, False, False, True),
    "NotebookState": (True, True, False, True),
    "ListVariables": (True, True, False, False),
    "InspectVariable": (True, True, True, False),
    "RunCode": (False, False, True, True),
    "WebFetch": (True, True, True, True),
}


def test_the_tools_and_their_flags(context: ToolContext) -> None:
    tools = {t.name: t for t in builtin_tools(context)}
    assert list(tools) == list(FLAGS) == list(BUILTIN_TOOL_NAMES)
    for name, (read_only, safe, defer, hook) in FLAGS.items():
        tool = tools[name]
        assert (tool.read_only, tool.concurrency_safe, tool.should_defer) == (
            read_only,
            safe,
            defer,
        )
        declared = tool.touches is not None or tool.check_permission is not None
        assert declared is hook, name
        assert tool.search_hint and tool.description


def test_a_subset_in_the_standard_order(context: ToolContext) -> None:
    assert [t.name for t in builtin_tools(context, ["Grep", "Read"])] == ["Read", "Grep"]
    with pytest.raises(ConfigurationError) as caught:
        builtin_tools(context, ["Read", "Browse"])
    assert str(caught.value) == (
        "No built-in tool named 'Browse'; the built-in tools are " + ", ".join(FLAGS) + "."
    )


def test_every_parameter_is_described(context: ToolContext) -> None:
    for tool in builtin_tools(context):
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name}"


def test_the_registry_defers_three_and_toolsearch_finds_them(context: ToolContext) -> None:
    registry = ToolRegistry(builtin_tools(context))
    assert [t.name for t in registry.deferred()] == ["InspectVariable", "RunCode", "WebFetch"]
    search = ToolSearch(registry)
    assert search.search("fetch a web page")[0].name == "WebFetch"
    assert search.search("run python code")[0].name == "RunCode"
    assert search.search("dataframe columns")[0].name == "InspectVariable"


def test_the_agent_reads_an_image_greps_and_learns_from_an_error(
    root: Path, fake_api: FakeAnthropicServer
) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(16)
    (root / "plot.png").write_bytes(png)
    (root / "notes.md").write_text("todo: plot\n")
    fake_api.enqueue(
        Reply.tool_uses(
            ("Read", {"file_path": "plot.png"}),
            ("Grep", {"pattern": "todo", "output_mode": "content"}),
        ),
        Reply.tool_use("Edit", {"file_path": "notes.md", "old_string": "x", "new_string": "y"}),
        Reply.text("Done."),
    )
    agent = Agent(
        registry=ToolRegistry(builtin_tools(ToolContext(root=root))),
        client=fake_api.client(),
        policy=PermissionPolicy("acceptEdits", root=root),
    )
    events = list(agent.events("Look at the plot."))
    finished = [(e.name, e.status) for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(finished[:2]) == [("Grep", "ok"), ("Read", "ok")]
    assert finished[2] == ("Edit", "error")

    bodies: list[dict[str, Any]] = [r.body for r in fake_api.requests if r.path == "/v1/messages"]
    results = {b["tool_use_id"]: b for b in bodies[1]["messages"][-1]["content"]}
    calls = bodies[1]["messages"][-2]["content"]
    uses = {b["name"]: b["id"] for b in calls if b["type"] == "tool_use"}
    image = results[uses["Read"]]["content"][1]
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == png
    assert results[uses["Grep"]]["content"] == "notes.md:1:todo: plot"
    edit_result = bodies[2]["messages"][-1]["content"][0]
    assert edit_result["is_error"] is True
    assert edit_result["content"] == "notes.md has not been read yet. Read it first, then edit it."


@pytest.mark.parametrize("name", ["Write", "Edit", "RunCode"])
def test_asking_tools_are_refused_without_an_asker(
    name: str, root: Path, shell: Any, fake_api: FakeAnthropicServer
) -> None:
    inputs = {
        "Write": {"file_path": "../escape.txt", "content": "x"},
        "Edit": {"file_path": "/etc/hostname", "old_string": "a", "new_string": "b"},
        "RunCode": {"code": "1"},
    }
    tools = builtin_tools(ToolContext(root=root, shell=shell))
    registry = ToolRegistry(tools)
    if name == "RunCode":
        fake_api.enqueue(Reply.tool_use("ToolSearch", {"query": "select:RunCode"}))
        registry.register(ToolSearch(registry).tool)
    fake_api.enqueue(Reply.tool_use(name, inputs[name]), Reply.text("ok"))
    agent = Agent(registry=registry, client=fake_api.client())
    events = list(agent.events("go"))
    [outcome] = [e for e in events if isinstance(e, ToolCallFinished) and e.name == name]
    assert outcome.status == "denied"
    assert outcome.content == "This call needs the user's approval, and no one can be asked here."
    assert not (root.parent / "escape.txt").exists()
