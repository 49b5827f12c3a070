"""Live tool-set changes: list_changed (2025), listen (2026), pagination, what the model hears."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from nbagent.catalogue.delta import ADDED_HEADER, REMOVED_HEADER
from nbagent.catalogue.registry import RegistryChange, ToolRegistry
from nbagent.core.events import ToolSetAnnounced
from nbagent.loop.agent import Agent
from nbagent.mcp import McpManager
from nbagent.testing import FakeAnthropicServer, Reply
from tests.mcp.conftest import READY
from tests.mcp.servers import fixture, http_server, wait_until

pytestmark = pytest.mark.slow

Make = Callable[..., McpManager]


@pytest.fixture(params=["stdio", "legacy", "http"])
def dynamic(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The dynamic fixture as a config entry: 2026 over stdio, 2025 over stdio, 2026 over HTTP."""
    if request.param == "http":
        with http_server("dynamic.py") as web:
            yield {"type": "http", "url": web.url}
    else:
        yield fixture("dynamic.py", *(["--legacy"] if request.param == "legacy" else []))


def test_tool_list_changes_update_the_registry(make_manager: Make, dynamic: dict[str, Any]) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    manager = make_manager(registry)
    manager.add("dyn", dynamic)
    assert manager.wait_ready(READY)
    protocol = manager.status()[0].protocol_version
    assert protocol == ("2025-11-25" if "--legacy" in dynamic.get("args", ()) else "2026-07-28")

    def call(tool: str, **arguments: Any) -> Any:
        return registry.get(f"mcp__dyn__{tool}").call(arguments).content

    assert call("add_tool", name="zeta", description="First words.") == "added zeta"
    assert wait_until(lambda: "mcp__dyn__zeta" in registry)
    assert call("zeta") == "I am zeta"
    assert call("add_tool", name="zeta", description="Other words.") == "added zeta"
    assert wait_until(lambda: registry.get("mcp__dyn__zeta").description == "Other words.")
    assert call("remove_tool", name="zeta") == "removed zeta"
    assert wait_until(lambda: "mcp__dyn__zeta" not in registry)

    assert [(c.added, c.removed) for c in changes] == [
        (("mcp__dyn__ping", "mcp__dyn__add_tool", "mcp__dyn__remove_tool"), ()),
        (("mcp__dyn__zeta",), ()),
        (("mcp__dyn__zeta",), ()),  # redefined: replaced, the others untouched
        ((), ("mcp__dyn__zeta",)),
    ]
    assert manager.status()[0].tool_count == 3


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_paginated_listings_are_followed_to_the_end(make_manager: Make, transport: str) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    with ExitStack() as stack:
        if transport == "http":
            entry: dict[str, Any] = {"url": stack.enter_context(http_server("paged.py")).url}
        else:
            entry = fixture("paged.py", "--page-size", "40")
        manager = make_manager(registry)
        manager.add("many", entry)
        assert manager.wait_ready(READY)
        assert manager.status()[0].tool_count == 250
        [change] = changes  # one batch for all pages
    assert change.added[0] == "mcp__many__tool_000" and change.added[-1] == "mcp__many__tool_249"


def test_the_model_is_told_what_came_and_what_went(make_manager: Make) -> None:
    """End to end: tools appear, change and vanish, and each user turn announces the delta."""
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.add("dyn", fixture("dynamic.py"))
    assert manager.wait_ready(READY)
    with FakeAnthropicServer() as api:
        agent = Agent(registry=registry, client=api.client())

        api.enqueue(
            Reply.tool_use("ToolSearch", {"query": "select:mcp__dyn__add_tool"}),
            Reply.tool_use(
                "mcp__dyn__add_tool",
                {"name": "forecast", "description": "Weather forecast for a city."},
            ),
            Reply.text("Added."),
        )
        first = list(agent.events("Add a forecast tool."))
        initial = (("mcp__dyn__add_tool", "mcp__dyn__ping", "mcp__dyn__remove_tool"), ())
        added = (("mcp__dyn__forecast",), ())
        # The new tool is announced in the first user turn built after it arrives: the
        # tool-result turn of this run if the server's notice beats it, else the next prompt.
        assert _announced(first) in ([initial], [initial, added])
        assert wait_until(lambda: "mcp__dyn__forecast" in registry)

        api.enqueue(
            Reply.tool_use("ToolSearch", {"query": "weather forecast"}),
            Reply.tool_use("mcp__dyn__forecast", {}),
            Reply.text("Done."),
        )
        second = list(agent.events("What is the forecast?"))
        assert _announced(first) + _announced(second) == [initial, added]  # once, never twice
        result = _bodies(api)[-1]["messages"][-1]["content"][0]
        assert (result["type"], result["content"]) == ("tool_result", "I am forecast")

        manager.remove("dyn")
        api.enqueue(Reply.text("The dyn tools are gone."))
        third = list(agent.events("And now?"))
        gone = (
            "mcp__dyn__add_tool",
            "mcp__dyn__forecast",
            "mcp__dyn__ping",
            "mcp__dyn__remove_tool",
        )
        assert _announced(third) == [((), gone)]
        last_turn = _bodies(api)[-1]["messages"][-1]["content"][-1]["text"]
        assert REMOVED_HEADER in last_turn and ADDED_HEADER not in last_turn
        api.assert_no_errors()


def _announced(events: list[Any]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(e.added, e.removed) for e in events if isinstance(e, ToolSetAnnounced)]


def _bodies(api: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [r.body for r in api.requests if r.path == "/v1/messages"]
