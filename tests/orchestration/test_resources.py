"""MCP resources through the loop, from the server-everything reference server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nbagent.agent import Agent
from nbagent.mcp import McpManager
from nbagent.orchestration.resources import resource_tools
from nbagent.registry import ToolRegistry
from nbagent.search import ToolSearch
from nbagent.testing import FakeAnthropicServer, Reply
from tests.mcp.servers import reference
from tests.orchestration.conversation import tool_results

pytestmark = pytest.mark.slow


@pytest.fixture
def everything() -> Iterator[tuple[ToolRegistry, McpManager]]:
    command = reference("mcp-server-everything", "npm")
    registry = ToolRegistry()
    with McpManager(registry) as manager:
        manager.add("everything", {"command": command, "args": ["stdio"]})
        assert manager.wait_ready(60) and manager.status()[0].state == "connected"
        registry.register_many(resource_tools(manager))
        yield registry, manager


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
    agent = Agent(registry=registry, client=fake_api.client())
    result = agent.run("What resources are there?")
    statuses = [c.status for c in result.tool_calls]
    assert statuses == ["ok", "ok", "ok", "error"]
    results = tool_results(agent.messages)
    assert f"everything  {first.uri}" in results[1]
    assert results[2]  # text or content blocks
    assert result.tool_calls[3].error == "No MCP server named 'nowhere'."


def test_natural_words_find_the_resource_tools(everything: tuple[ToolRegistry, McpManager]) -> None:
    registry, _ = everything
    names = {h.name for h in ToolSearch(registry).search("resource")}
    assert {"ListMcpResources", "ReadMcpResource"} <= names
