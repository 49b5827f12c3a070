"""A request's tools and messages: built from what changed, sharing what did not."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import ConfigurationError
from nbagent.core.tool import Tool
from nbagent.loop.request import MAX_DEFERRED_TOOLS, build_messages, build_tools


def mcp(name: str) -> Tool:
    return Tool(name=name, description=f"{name}.", input_schema={"type": "object"}, is_mcp=True)


@pytest.fixture
def definitions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools whose definition() is built, in order."""
    built: list[str] = []
    original = Tool.definition

    def counting(self: Tool) -> dict[str, Any]:
        built.append(self.name)
        return original(self)

    monkeypatch.setattr(Tool, "definition", counting)
    return built


def tools_of(registry: ToolRegistry, mode: str = "native") -> list[dict[str, Any]]:
    search = ToolSearch(registry).tool
    return build_tools(registry, mode, search, [], {})  # type: ignore[arg-type]


def test_a_second_request_builds_no_definition_again(definitions: list[str]) -> None:
    loaded = Tool(name="Read", description="Read.", input_schema={"type": "object"})
    registry = ToolRegistry([loaded, *(mcp(f"mcp__s__t{i}") for i in range(20))])
    first = tools_of(registry)
    built = len(definitions)
    second = tools_of(registry)
    assert second == first
    assert [d for d in definitions[built:] if d != "ToolSearch"] == []
    assert all(a is b for a, b in zip(first[2:], second[2:], strict=True))  # shared, deferred


def test_a_registry_change_builds_only_the_new_tools_definitions(definitions: list[str]) -> None:
    registry = ToolRegistry([mcp(f"mcp__s__t{i}") for i in range(5)])
    tools_of(registry)
    definitions.clear()
    registry.register(mcp("mcp__s__new"))
    sent = tools_of(registry)
    assert [d for d in definitions if d != "ToolSearch"] == ["mcp__s__new"]
    assert sent[-1] == {**mcp("mcp__s__new").definition(), "defer_loading": True}


def test_an_override_moves_a_tool_between_loaded_and_deferred() -> None:
    registry = ToolRegistry([mcp("mcp__s__a"), mcp("mcp__s__b")])
    assert [t.get("defer_loading") for t in tools_of(registry)] == [None, True, True]
    registry.override("mcp__s__b", deferred=False)
    sent = tools_of(registry)
    assert [t["name"] for t in sent] == ["mcp__s__b", "ToolSearch", "mcp__s__a"]
    assert sent[1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in registry.get("mcp__s__b").definition()


def test_messages_share_the_history_but_for_the_breakpoint_copy() -> None:
    history = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
    ]
    before = [dict(m) for m in history]
    sent = build_messages(history)
    assert sent[0] is history[0] and sent[1] is history[1]
    assert sent[2]["content"] == [
        {"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}}
    ]
    assert history == before


@pytest.mark.parametrize("mode", ["native", "server"])
def test_more_deferred_tools_than_the_api_takes_are_refused_with_what_to_do(mode: str) -> None:
    registry = ToolRegistry([mcp(f"mcp__many__t{i}") for i in range(MAX_DEFERRED_TOOLS + 1)])
    with pytest.raises(ConfigurationError) as refused:
        tools_of(registry, mode)
    said = str(refused.value)
    assert "10,001 deferred tools" in said and "at most 10,000" in said
    assert "`%%agent --mode client`" in said and "nbagent.registry.unregister" in said
    client = tools_of(registry, "client")  # sends only what ToolSearch found
    assert [t["name"] for t in client] == ["ToolSearch"]
    registry.unregister("mcp__many__t0")
    assert len(tools_of(registry, mode)) == MAX_DEFERRED_TOOLS + 1  # and ToolSearch


def test_requests_that_send_the_same_tools_share_one_list() -> None:
    registry = ToolRegistry([mcp("mcp__a__one"), mcp("mcp__a__two")])
    search = ToolSearch(registry).tool
    first = build_tools(registry, "native", search, [], {})
    assert build_tools(registry, "native", search, [], {}) is first
    loaded = build_tools(registry, "native", search, ["mcp__a__one"], {})
    assert loaded is not first
    registry.register(mcp("mcp__a__three"))
    grown = build_tools(registry, "native", search, ["mcp__a__one"], {})
    assert grown is not loaded and "mcp__a__three" in [t["name"] for t in grown]
    assert build_tools(registry, "client", search, [], {}) is not grown
