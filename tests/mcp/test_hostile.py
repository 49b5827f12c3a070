"""Servers whose listings are hostile: each bad tool costs itself only, and a huge catalogue is
cut below the API's limit of deferred tools, in the configuration's order."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.catalogue.registry import ToolRegistry
from nbagent.mcp import McpManager
from nbagent.mcp.budget import DEFAULT_MAX_TOOLS
from nbagent.mcp.limits import MAX_DESCRIPTION
from nbagent.mcp.report import problems, server_log
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.testing.fakeapi.rules import MAX_DEFERRED_TOOLS
from tests.mcp.conftest import READY
from tests.mcp.servers import fixture
from tests.shells import run

pytestmark = pytest.mark.slow

Make = Callable[..., McpManager]

GOOD = ["echo", "add"]
"""The good tools of tests/mcp_servers/hostile.py, listed first."""

MANY = 20_000
"""The tools its ``many`` shape adds."""


def test_each_hostile_tool_is_named_with_its_reason_and_the_good_ones_work(
    make_manager: Make,
) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.add("hostile", fixture("hostile.py"))
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "connected", status.last_error
    loaded = {t.name.removeprefix("mcp__hostile__"): t for t in manager.tools("hostile")}
    longs = [f"long_{i:02}" for i in range(20)]
    assert list(loaded) == [*GOOD, "latin1", *longs]

    assert status.skipped == (
        "deep: the server lists it with an inputSchema beyond the limits: it is nested more "
        "than 64 levels deep",
        "wide: the server lists it with an inputSchema beyond the limits: it has more than "
        "1,000 properties",
    )
    assert status.mended == (
        "latin1: bytes that are not UTF-8 in its listing read as U+FFFD",
        *(
            f"long_{i:02}: description cut by {len(f'Tool {i}. ') + 990_000:,} characters"
            for i in range(20)
        ),
    )
    assert loaded["latin1"].description == "Caf\ufffd\ufffd menus, in Latin-1."
    description = loaded["long_00"].description
    assert description.endswith("… (cut: 990,008 characters)")
    assert len(description) == MAX_DESCRIPTION + len("… (cut: 990,008 characters)")

    assert json.loads(str(loaded["add"].call({"a": 2, "b": 3}).content)) == {
        "tool": "add",
        "arguments": {"a": 2, "b": 3},
    }
    assert json.loads(str(loaded["latin1"].call({"dish": "soup"}).content))["tool"] == "latin1"
    assert problems(status) == "2 tools left out"
    log = server_log(status)
    assert "**Tools left out**:" in log and "**Listing mended**:" in log
    assert "it has more than 1,000 properties" in log
    assert [n for n in manager.notices.take() if "left out" in n] == [
        "MCP server `hostile` had 2 of its tools left out (`deep`, `wide`). "
        "`%mcp log hostile` tells more."
    ]


@pytest.mark.parametrize("shape", ["not_utf8", "deep", "wide", "long"])
def test_one_hostile_shape_costs_only_its_own_tools(make_manager: Make, shape: str) -> None:
    manager = make_manager()
    manager.add("hostile", fixture("hostile.py", shape))
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "connected", status.last_error
    names = [t.name.removeprefix("mcp__hostile__") for t in manager.tools("hostile")]
    assert names[:2] == GOOD


def test_a_huge_catalogue_is_cut_after_the_servers_before_it(make_manager: Make) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.start(
        {
            "mcpServers": {
                "small": fixture("hostile.py", "not_utf8"),
                "huge": fixture("hostile.py", "many"),
                "after": fixture("hostile.py", "not_utf8"),
            }
        }
    )
    assert manager.wait_ready(READY)
    small, huge, after = manager.status()
    assert (small.tool_count, small.past_limit) == (3, 0)
    assert (huge.tool_count, huge.past_limit) == (DEFAULT_MAX_TOOLS - 3, MANY + 2 - 8_997)
    assert (after.tool_count, after.past_limit) == (0, 3)
    assert problems(huge) == "11,005 tools past the limit"
    assert len(registry.deferred()) == DEFAULT_MAX_TOOLS
    assert [t.name for t in manager.tools("huge")][:3] == [
        "mcp__huge__echo",
        "mcp__huge__add",
        "mcp__huge__tool_00000",
    ]
    # One notice per server newly cut: how many depends on the order the servers connected.
    *_, notice = [n for n in manager.notices.take() if "nbagent registers" in n]
    assert re.search(r"tools left out: `huge` \(11,00\d of 20,002\), `after` \(3 of 3\)\.", notice)

    manager.remove("small")  # the servers after it get its share
    assert manager.status_of("huge").tool_count == DEFAULT_MAX_TOOLS
    assert len(registry.deferred()) == DEFAULT_MAX_TOOLS
    assert not [n for n in manager.notices.take() if "nbagent registers" in n]  # told once


def test_max_tools_keeps_a_servers_first_tools_without_a_notice(make_manager: Make) -> None:
    manager = make_manager(max_tools=100)
    manager.start(
        {
            "mcpServers": {
                "huge": {**fixture("hostile.py", "many"), "max_tools": 60},
                "next": fixture("hostile.py", "many"),
            }
        }
    )
    assert manager.wait_ready(READY)
    huge, following = manager.status()
    assert (huge.tool_count, huge.past_limit) == (60, MANY + 2 - 60)
    assert (following.tool_count, following.past_limit) == (40, MANY + 2 - 40)
    [notice] = [n for n in manager.notices.take() if "nbagent registers" in n]
    assert re.search(r"tools left out: `next` \(19,9[06]2 of 20,002\)\.", notice)  # not huge


def test_a_cell_works_beside_a_huge_catalogue_and_is_told_once(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    from nbagent.jupyter.session import Session

    manager = Session.of(ip).mcp_manager  # type: ignore[union-attr]
    manager.add("huge", fixture("hostile.py", "many"))
    try:
        assert manager.wait_ready(READY)
        assert manager.status_of("huge").tool_count > 0
        fake_api.enqueue(Reply.text("Hello."), Reply.text("Again."))
        result, first = run(ip, "%%agent\nSay hello.")
        assert result.success, first
        _, second = run(ip, "%%agent\nSay it again.")
        deferred = [t for t in fake_api.requests[-1].body["tools"] if t.get("defer_loading")]
        assert 0 < len(deferred) <= MAX_DEFERRED_TOOLS
        assert any(t["name"] == "mcp__huge__tool_00000" for t in deferred)
        assert "nbagent registers" in first and "nbagent registers" not in second
        assert "Again." in second
        fake_api.assert_no_errors()
    finally:
        manager.remove("huge")
    assert not any(name.startswith("mcp__huge__") for name in nbagent.registry.names())
