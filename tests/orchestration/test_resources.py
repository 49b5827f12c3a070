"""MCP resources: what each call declares it touches, and the tools through the loop with the
server-everything reference server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.access import Touch
from nbagent.core.tool import Tool
from nbagent.loop.agent import Agent
from nbagent.mcp import McpManager, ServerState, ServerStatus
from nbagent.orchestration.resources import resource_tools
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply
from tests.mcp.servers import reference
from tests.orchestration.conversation import tool_results


class Servers:
    """A stand-in for the MCP manager: only its servers' statuses."""

    def __init__(self, *states: tuple[str, ServerState]) -> None:
        self.states = states

    def status(self) -> list[ServerStatus]:
        """Every server, in the order given."""
        return [ServerStatus(name, state, "stdio", 0) for name, state in self.states]


def tools(manager: Any) -> dict[str, Tool]:
    """The resource tools over a manager, by name."""
    return {t.name: t for t in resource_tools(manager)}


SERVERS = Servers(("git", "connected"), ("web", "connecting"), ("gone", "failed"))
EVERY = [Touch("mcp", "git"), Touch("mcp", "web"), Touch("mcp", "gone")]


@pytest.mark.parametrize(
    ("name", "tool_input", "touched"),
    [
        ("ReadMcpResource", {"server": "git", "uri": "note://a"}, [Touch("mcp", "git")]),
        ("ReadMcpResource", {"server": "elsewhere", "uri": "x"}, [Touch("mcp", "elsewhere")]),
        ("ListMcpResources", {"server": "web"}, [Touch("mcp", "web")]),
        # No server named: every server, also one still connecting (it could connect while
        # the person is asked) or failed.
        ("ListMcpResources", {}, EVERY),
        ("ListMcpResources", {"server": None}, EVERY),
        ("ListMcpResources", {"server": ""}, EVERY),  # the tool lists every server then too
        # Odd input never declares less than the call could touch.
        ("ListMcpResources", {"server": 7}, EVERY),
        ("ReadMcpResource", {"server": ["git"], "uri": "x"}, EVERY),
        ("ReadMcpResource", {"uri": "x"}, EVERY),
    ],
)
def test_each_call_declares_the_servers_it_touches(
    name: str, tool_input: dict[str, Any], touched: list[Touch]
) -> None:
    tool = tools(SERVERS)[name]
    assert tool.touches is not None and list(tool.touches(tool_input)) == touched
    assert PermissionPolicy().touches(tool, tool_input) == touched
    assert tool.read_only


def test_with_no_server_a_listing_touches_nothing() -> None:
    tool = tools(Servers())["ListMcpResources"]
    assert tool.touches is not None and list(tool.touches({})) == []
    assert tool.handler is not None and tool.handler() == "No MCP server is connected."


@pytest.fixture
def everything() -> Iterator[tuple[ToolRegistry, McpManager]]:
    command = reference("mcp-server-everything", "npm")
    registry = ToolRegistry()
    with McpManager(registry) as manager:
        manager.add("everything", {"command": command, "args": ["stdio"]})
        assert manager.wait_ready(60) and manager.status()[0].state == "connected"
        registry.register_many(resource_tools(manager))
        yield registry, manager


@pytest.mark.slow
def test_the_model_lists_and_reads_a_resource(
    everything: tuple[ToolRegistry, McpManager], fake_api: FakeAnthropicServer
) -> None:
    registry, manager = everything
    [first, *_] = manager.list_resources("everything")
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "mcp resource"}),
        Reply.tool_use("ListMcpResources", {}),
        Reply.tool_use("ReadMcpResource", {"server": "everything", "uri": str(first.uri)}),
        Reply.tool_use("ReadMcpResource", {"server": "nowhere", "uri": "x://y"}),
        Reply.text("Read it."),
    )
    policy = PermissionPolicy(allow=["mcp__everything", "mcp__nowhere"])
    agent = Agent(registry=registry, client=fake_api.client(), policy=policy)
    result = agent.run("What resources are there?")
    statuses = [c.status for c in result.tool_calls]
    assert statuses == ["ok", "ok", "ok", "error"]
    results = tool_results(agent.messages)
    assert f"everything  {first.uri}" in results[1]
    assert results[2]  # text or content blocks
    assert result.tool_calls[3].error == "No MCP server named 'nowhere'."


@pytest.mark.slow
def test_natural_words_find_the_resource_tools(everything: tuple[ToolRegistry, McpManager]) -> None:
    registry, _ = everything
    names = {h.name for h in ToolSearch(registry).search("resource")}
    assert {"ListMcpResources", "ReadMcpResource"} <= names
