"""The script types: replies, their stop reasons, and faults."""

from __future__ import annotations

from nbagent.testing import Fault, Reply, ServerToolSearch, Text, ToolUse


def test_reply_constructors() -> None:
    """Each constructor builds the parts it names, in order."""
    assert Reply.text("hi").parts == (Text("hi"),)
    assert Reply.tool_use("Read", {"path": "a"}, text="Reading.").parts == (
        Text("Reading."),
        ToolUse("Read", {"path": "a"}),
    )
    assert Reply.tool_uses(("A", {}), ("B", {"x": 1})).parts == (
        ToolUse("A"),
        ToolUse("B", {"x": 1}),
    )
    search = Reply.server_tool_search("weather", ["Weather"], variant="regex", then=[])
    assert search.parts == (ServerToolSearch("weather", ("Weather",), "regex"),)
    assert search.parts[0].tool_name == "tool_search_tool_regex"  # type: ignore[union-attr]
    assert Reply.of(Text("a"), ToolUse("B"), delay=0.5).delay == 0.5


def test_stop_reasons() -> None:
    """tool_use when a tool is called, end_turn otherwise, unless overridden."""
    assert Reply.text("hi").resolved_stop_reason() == "end_turn"
    assert Reply.tool_use("Read").resolved_stop_reason() == "tool_use"
    assert Reply.server_tool_search("q", ["A"]).resolved_stop_reason() == "end_turn"
    assert Reply.text("cut", stop_reason="max_tokens").resolved_stop_reason() == "max_tokens"
    assert Reply.of().resolved_stop_reason() == "end_turn"
    assert Reply.tool_use("Read", stop_reason="max_tokens").resolved_stop_reason() == "max_tokens"
    assert Reply.tool_uses(("A", {}), stop_reason="pause_turn").stop_reason == "pause_turn"
    paused = Reply.server_tool_search("q", ["A"], then=[], stop_reason="pause_turn")
    assert paused.resolved_stop_reason() == "pause_turn"


def test_faults() -> None:
    """Error types follow the status; stream errors map their type to a status."""
    assert Fault.http(403).error_type == "permission_error"
    assert Fault.http(418).error_type == "api_error"
    assert (
        Fault.rate_limit(retry_after=2).status,
        Fault.rate_limit(retry_after=2).retry_after,
    ) == (429, 2)
    assert (Fault.overloaded().status, Fault.overloaded().error_type) == (529, "overloaded_error")
    assert Fault.stream_error(Reply.text("x")).status == 529
    assert Fault.stream_error(Reply.text("x"), error_type="api_error").status == 500
    assert Fault.drop_stream(Reply.text("x"), after_events=3).after_events == 3
    assert Fault.malformed_json().kind == "malformed"
