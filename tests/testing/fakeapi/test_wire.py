"""Response shapes: the message object and its SSE events."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.testing.fakeapi.wire import (
    encode_event,
    message,
    middle_of_last_block,
    split_text,
    stream_events,
)

USAGE = {"input_tokens": 5, "output_tokens": 7}


def whole(*content: dict[str, Any]) -> dict[str, Any]:
    """A message with the given content."""
    return message(
        message_id="msg_1", model="m", content=list(content), stop_reason="tool_use", usage=USAGE
    )


@settings(max_examples=50, deadline=None)
@given(st.text(), st.integers(min_value=1, max_value=5))
def test_split_text_keeps_every_character(text: str, parts: int) -> None:
    """The pieces join back into the text, and there are at most ``parts`` of them."""
    pieces = split_text(text, parts)
    assert "".join(pieces) == text and 1 <= len(pieces) <= parts


def test_stream_events_order_and_content() -> None:
    """message_start (empty, no stop reason), ping, each block's start/deltas/stop, delta, stop."""
    text = {"type": "text", "text": "Let me check that."}
    use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.txt"}}
    events = stream_events(whole(text, use))
    names = [name for name, _ in events]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert (
        start["content"] == []
        and start["stop_reason"] is None
        and start["usage"]["input_tokens"] == 5
    )
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert "".join(d["text"] for d in deltas if d["type"] == "text_delta") == text["text"]
    partial = "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    assert json.loads(partial) == use["input"]
    tool_start = next(
        d["content_block"] for n, d in events if n == "content_block_start" and d["index"] == 1
    )
    assert tool_start == {**use, "input": {}}
    assert events[-2][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": USAGE,
    }


def test_whole_blocks_start_complete() -> None:
    """A block without deltas (a tool search result) comes whole in its start event."""
    found = {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {"type": "x"},
    }
    names = [name for name, _ in stream_events(whole(found))]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_middle_of_last_block() -> None:
    """The cut falls after the last block's first delta, or after its start if it has none."""
    use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a/b/c/d.txt"}}
    events = stream_events(whole({"type": "text", "text": "hi"}, use))
    cut = middle_of_last_block(events)
    assert events[cut - 1][0] == "content_block_delta" and events[cut][0] == "content_block_delta"
    assert middle_of_last_block(stream_events(whole())) == 1


def test_encode_event() -> None:
    """An event is its name line, its data line and a blank line; raw text is sent as is."""
    assert encode_event("ping", {"type": "ping"}) == b'event: ping\ndata: {"type":"ping"}\n\n'
    assert encode_event("x", '{"cut') == b'event: x\ndata: {"cut\n\n'


def test_a_text_that_cites_streams_its_citations_then_its_text() -> None:
    """Its start has empty citations; one citations_delta a citation comes before the text."""
    cited = {"type": "web_search_result_location", "url": "https://a.org/", "cited_text": "a"}
    text = {"type": "text", "text": "A is so.", "citations": [cited, {**cited, "cited_text": "b"}]}
    events = stream_events(whole(text))
    start = next(d["content_block"] for n, d in events if n == "content_block_start")
    assert start == {"type": "text", "text": "", "citations": []}
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    kinds = [d["type"] for d in deltas]
    assert kinds[:2] == ["citations_delta", "citations_delta"] and set(kinds[2:]) == {"text_delta"}
    assert [d["citation"] for d in deltas[:2]] == text["citations"]
