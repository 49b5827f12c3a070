"""Limits on listed tools, the shares of the tool budget, max_tools, and lenient stdio lines."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from nbagent.core.notices import Notices
from nbagent.mcp.budget import ToolBudget
from nbagent.mcp.config import StdioSpec
from nbagent.mcp.config_file import parse_config, parse_server
from nbagent.mcp.errors import McpConfigError
from nbagent.mcp.limits import MAX_DESCRIPTION, cut_description, schema_fault
from nbagent.mcp.listing import ListingGuard
from nbagent.mcp.stdio import StdioProcess, _Lines


def nested(levels: int) -> dict[str, Any]:
    """An object schema whose property nests ``levels`` levels of ``properties`` deep."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_schemas_within_the_limits_pass_and_the_others_are_named() -> None:
    assert schema_fault(nested(31)) is None  # 62 levels of JSON
    assert schema_fault(nested(33)) == "it is nested more than 64 levels deep"
    assert schema_fault(nested(200)) == "it is nested more than 64 levels deep"
    wide = {"type": "object", "properties": {f"p{i}": {} for i in range(1_001)}}
    assert schema_fault(wide) == "it has more than 1,000 properties"
    assert schema_fault({"type": "object", "enum": ["x" * 70_000]}) == (
        "it is 68 kB of JSON, more than 64 kB"
    )
    assert schema_fault({"type": "object", "enum": list(range(40_000))}) == (
        "it is more than 64 kB of JSON"
    )
    assert schema_fault("none") is None and schema_fault(None) is None


def test_a_long_description_is_cut_and_says_so() -> None:
    assert cut_description("short") == ("short", 0)
    kept, cut = cut_description("y" * (MAX_DESCRIPTION + 1234))
    assert cut == 1234 and kept == "y" * MAX_DESCRIPTION + "… (cut: 1,234 characters)"


class Servers:
    """Servers sharing a budget, each recording the share it published."""

    def __init__(self, total: int, order: list[str]) -> None:
        self.order = order
        self.notices = Notices()
        self.budget = ToolBudget(total, lambda: list(self.order), self.notices)
        self.published: list[tuple[str, int]] = []
        self.publishers = {name: self.publisher(name) for name in order}

    def publisher(self, name: str) -> Any:
        return lambda: self.published.append((name, self.budget.share(name)))

    def want(self, name: str, count: int, limit: int | None = None) -> list[tuple[str, int]]:
        self.published = []
        self.budget.want(name, count, limit, self.publishers[name])
        return self.published


def test_shares_follow_the_configuration_order_whatever_the_connection_order() -> None:
    servers = Servers(100, ["a", "b", "c"])
    assert servers.want("c", 30) == [("c", 30)]
    assert servers.want("b", 50) == [("b", 50)]
    assert servers.notices.take() == []
    # a comes first: c, which loses tools, publishes before a grows the total
    assert servers.want("a", 40) == [("c", 10), ("a", 40)]
    [notice] = servers.notices.take()
    assert "tools left out: `c` (20 of 30)." in notice and "at most 100" in notice
    assert servers.want("a", 60) == [("c", 0), ("b", 40), ("a", 60)]
    [notice] = servers.notices.take()
    assert "`b` (10 of 50), `c` (30 of 30)" in notice  # b is newly cut
    assert servers.want("a", 60) == [("a", 60)]  # a listing that did not grow
    assert servers.notices.take() == []
    servers.published = []
    servers.budget.leave("a", servers.publishers["a"])
    assert sorted(servers.published) == [("b", 50), ("c", 30)]
    assert servers.notices.take() == []


def test_max_tools_caps_a_server_and_a_new_run_is_not_forgotten_by_the_old() -> None:
    servers = Servers(100, ["a", "b"])
    assert servers.want("a", 500, limit=20) == [("a", 20)]
    assert servers.want("b", 500) == [("b", 80)]
    [notice] = servers.notices.take()
    assert "`b` (420 of 500)" in notice and "`a`" not in notice
    servers.budget.leave("a", lambda: None)  # not the publisher a gave: ignored
    assert servers.budget.share("a") == 20


def test_max_tools_is_read_from_an_entry_and_checked() -> None:
    spec = parse_server("s", {"command": "run", "max_tools": 50})
    assert isinstance(spec, StdioSpec) and spec.max_tools == 50
    assert parse_server("w", {"url": "https://h/mcp", "max_tools": 1}).max_tools == 1
    assert parse_server("s", {"command": "run"}).max_tools is None
    for bad in (0, -3, 2.5, "50", True):
        with pytest.raises(McpConfigError, match="'max_tools' must be a whole number of tools"):
            parse_server("s", {"command": "run", "max_tools": bad})
    config = parse_config({"mcpServers": {"s": {"command": "run", "max_tools": "many"}}})
    assert config.servers == {} and config.problems[0].field == "max_tools"


def test_lines_are_split_across_chunks_and_a_runaway_line_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = _Lines("s")
    assert lines.feed(b"ab") == []
    assert lines.feed(b"c\nd") == [b"abc"]
    assert lines.feed(b"e\n\nf\n") == [b"de", b"", b"f"]
    monkeypatch.setattr("nbagent.mcp.stdio.MAX_LINE_BYTES", 4)
    assert lines.feed(b"12345") == []
    assert lines.feed(b"67\nok\n") == [b"ok"]


def listing_line(tool: str, request_id: int = 7) -> bytes:
    """A ``tools/list`` answer with one tool, written as the raw bytes ``tool``."""
    return b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]}}' % (request_id, tool.encode())


def test_a_line_with_bytes_that_are_not_utf8_or_a_deep_schema_is_read_leniently() -> None:
    process = StdioProcess(StdioSpec(command="x"), "s", on_exit=lambda: None)
    tool = b'{"name":"cafe","description":"Caf\xe9","inputSchema":{"type":"object"}}'
    raw = b'{"jsonrpc":"2.0","id":7,"result":{"tools":[' + tool + b"]}}"
    message = process._parse(raw)
    assert message is not None and process.not_utf8 == {7}
    assert message.message.result["tools"][0]["description"] == "Caf\ufffd"
    deep = json.dumps({"name": "deep", "inputSchema": nested(200)})
    message = process._parse(listing_line(deep, 8))
    assert message is not None and process.not_utf8 == {7} and process.ignored_lines == 0
    assert process._parse(b"not json") is None and process.ignored_lines == 1

    guard = ListingGuard(lambda: None, process.not_utf8)
    for request_id in (7, 8):
        guard.note(
            SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/list"))
        )
    guard.check(process._parse(raw))
    guard.check(message)
    refused, typed, mended = guard.take()
    assert mended == ["cafe: bytes that are not UTF-8 in its listing read as U+FFFD"]
    assert refused == {
        "deep": "an inputSchema beyond the limits: it is nested more than 64 levels deep"
    }
    assert process.not_utf8 == set() and typed == []


def test_an_output_schema_beyond_the_limits_is_dropped_and_the_tool_kept() -> None:
    guard = ListingGuard(lambda: None)
    guard.note(SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/list")))
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": nested(40)}
    response = types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"tools": [tool]})
    guard.check(SessionMessage(response))
    assert response.result["tools"] == [{"name": "t", "inputSchema": {"type": "object"}}]
    assert guard.take()[2] == ["t: outputSchema left out, as it is nested more than 64 levels deep"]
