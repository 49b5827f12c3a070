"""nbagent.mcp.tools: tool names, Tools built from a listing, a server's tools in the registry."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.registry import RegistryChange, ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch, parse_tool_name
from nbagent.core.tool import NAME_PATTERN, Tool
from nbagent.mcp.tools import (
    Listing,
    ServerTools,
    build_tools,
    clean_server_name,
    same_definition,
    server_part,
    tool_name,
)

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.mark.parametrize(
    ("server", "tool", "name"),
    [
        ("slack", "send_message", "mcp__slack__send_message"),
        ("everything", "get-tiny-image", "mcp__everything__get-tiny-image"),
        ("my.db", "run query", "mcp__my_db__run_query"),
        ("a__b", "x", "mcp__a_b__x"),
        ("_srv_", "_x", "mcp__srv___x"),
        ("ünï", "çé", "mcp__n____"),
    ],
)
def test_names(server: str, tool: str, name: str) -> None:
    assert tool_name(server, tool) == name


def test_a_long_server_name_is_shortened_so_the_tool_part_stays_readable() -> None:
    server = "acme-corporation-internal-document-management-server"
    names = [tool_name(server, t) for t in ("read_multiple_files", "write_file")]
    assert all(len(n) <= 64 for n in names)
    assert names[0].endswith("__read_multiple_files") and names[1].endswith("__write_file")
    assert {parse_tool_name(n).server for n in names} == {server_part(server)}
    assert server_part(server) != server_part(server + "-2")  # the hash keeps servers apart
    registry = ToolRegistry(
        [Tool(name=n, is_mcp=True, server=server, description="Files.") for n in names]
    )
    assert ToolSearch(registry).search("read multiple files")[0].name == names[0]


def test_long_names_are_cut_and_stay_distinct() -> None:
    a, b = tool_name("server", "x" * 80 + "a"), tool_name("server", "x" * 80 + "b")
    assert len(a) == len(b) == 64 and a != b
    assert a.startswith("mcp__server__xxx")


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=90))
def test_every_name_is_valid_for_the_api(server: str, tool: str) -> None:
    name = tool_name(server, tool)
    assert NAME_PATTERN.match(name)
    assert parse_tool_name(name).server == server_part(server)


def test_a_server_name_with_nothing_usable_gets_a_hash() -> None:
    assert clean_server_name("日本") != clean_server_name("中国")
    assert NAME_PATTERN.match(tool_name("日本", "x"))


def listed(name: str, schema: Any = OBJECT, **fields: Any) -> types.Tool:
    return types.Tool(name=name, input_schema=schema, **fields)


def test_build_mends_what_it_can_and_skips_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    with caplog.at_level(logging.WARNING, "nbagent.mcp"):
        listing = build_tools(
            "srv",
            [
                listed("search", description="Search things.", title="Finder"),
                listed("bad", {"type": "object", "properties": {"x": {"type": "nonsense"}}}),
                listed("scalar", {"type": "string"}),
                listed(
                    "peek", annotations=types.ToolAnnotations(read_only_hint=True, title="Peek")
                ),
                listed("peek"),
            ],
            lambda remote, arguments: calls.append((remote, arguments)) or "done",
        )
    assert list(listing.tools) == ["mcp__srv__search", "mcp__srv__bad", "mcp__srv__peek"]
    assert [line.split(":")[0] for line in listing.skipped] == ["scalar", "peek"]
    assert "its root must be an object schema" in listing.skipped[0]
    assert "clashes" in listing.skipped[1]
    assert "scalar" in caplog.text
    assert listing.tools["mcp__srv__bad"].input_schema == {
        "type": "object",
        "properties": {"x": {}},
    }
    assert listing.adjusted == (
        "bad: inputSchema properties/x/type: left out, not valid JSON Schema 2020-12 ('nonsense' "
        "is not valid under any of the given schemas)",
    )

    search, _, peek = listing.tools.values()
    assert (search.is_mcp, search.server, search.description) == (True, "srv", "Search things.")
    assert search.search_hint == "Finder" and not search.read_only
    assert (peek.read_only, peek.concurrency_safe, peek.search_hint) == (True, True, "Peek")
    assert ToolRegistry([search]).is_deferred(search)
    assert listing.remote_names == {
        "mcp__srv__search": "search",
        "mcp__srv__bad": "bad",
        "mcp__srv__peek": "peek",
    }

    assert search.call({"q": "x"}).content == "done"
    assert calls == [("search", {"q": "x"})]


def test_arguments_that_are_not_identifiers_reach_the_server() -> None:
    schema = {"type": "object", "properties": {"file-path": {"type": "string"}}}
    seen: list[dict[str, Any]] = []
    listing = build_tools("s", [listed("read", schema)], lambda _, args: seen.append(args) or "")
    listing.tools["mcp__s__read"].call({"file-path": "/x"})
    assert seen == [{"file-path": "/x"}]


def test_same_definition_compares_what_the_model_sees() -> None:
    def make(**fields: Any) -> Any:
        return build_tools("s", [listed("t", **fields)], lambda *_: "").tools["mcp__s__t"]

    assert same_definition(make(description="a"), make(description="a"))
    assert not same_definition(make(description="a"), make(description="b"))
    assert not same_definition(make(), make(title="hint"))


def test_server_tools_apply_each_listing_as_a_diff(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    tools = ServerTools("s", registry)

    def listing(*entries: types.Tool) -> Listing:
        return build_tools("s", entries, lambda *_: "")

    assert tools.publish(listing(listed("a"), listed("b", description="old"))) == ()
    kept = registry.get("mcp__s__a")
    assert tools.publish(listing(listed("a"), listed("b", description="new"), listed("c"))) == ()
    assert registry.get("mcp__s__a") is kept  # unchanged: not registered again
    tools.publish(listing(listed("c")))
    assert [(c.added, c.removed) for c in changes] == [
        (("mcp__s__a", "mcp__s__b"), ()),
        (("mcp__s__b", "mcp__s__c"), ()),
        ((), ("mcp__s__a", "mcp__s__b")),
    ]
    assert [t.name for t in tools.tools()] == ["mcp__s__c"] and len(tools) == 1

    registry.register(Tool(name="mcp__s__d", description="someone else's"))
    assert tools.publish(listing(listed("c"), listed("d"))) == (
        "d: mcp__s__d is taken by another tool",
    )
    assert registry.get("mcp__s__d").description == "someone else's"

    def broken(change: RegistryChange) -> None:
        raise RuntimeError("subscriber bug")

    registry.subscribe(broken)
    with caplog.at_level(logging.ERROR, "nbagent.mcp"):
        assert tools.clear() and not tools.clear()
    assert "mcp__s__c" not in registry and "failed on a change by MCP server 's'" in caplog.text
