"""Response shapes of the Messages API: the message object and its stream of SSE events.

A streamed message is, as the API sends it and the SDK's ``MessageStream`` parses it::

    message_start        the message with empty content, stop_reason null, input usage
    ping
    per content block:   content_block_start, content_block_delta * n, content_block_stop
                         (text_delta for text, after one citations_delta per citation
                         for a text that cites, whose start has empty citations;
                         input_json_delta, in a few chunks, for tool_use and
                         server_tool_use; one compaction_delta, with the
                         whole content and encrypted_content, for compaction, whose start
                         has them null but carries signature and tool_changes, which no
                         delta sets; none for tool_search_tool_result and
                         web_search_tool_result, whose content comes whole in
                         content_block_start)
    message_delta        stop_reason, stop_sequence, cumulative usage (usage.iterations
                         only here; server_tool_use.web_search_requests when the answer
                         searched the web), context_management
    message_stop
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nbagent.core.tokens import compact_json

Event = tuple[str, dict[str, Any]]
"""An SSE event: its name and its JSON data."""

_CHUNKS = 3


def split_text(text: str, parts: int = _CHUNKS) -> list[str]:
    """Split a text into at most ``parts`` non-empty pieces, at word boundaries if it can.

    Args:
        text: The text to split.
        parts: The most pieces to make.
    """
    words = text.split(" ")
    if len(words) < parts:
        size = max(1, -(-len(text) // parts))
        return [text[i : i + size] for i in range(0, len(text), size)] or [""]
    step = -(-len(words) // parts)
    pieces = [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
    return [p + " " for p in pieces[:-1]] + pieces[-1:]


def message(
    *,
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: Mapping[str, Any],
    context_management: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a complete message object, as a non-streaming response carries it.

    Args:
        message_id: The ``msg_`` id.
        model: The model named by the request.
        content: The content blocks.
        stop_reason: Why the message stopped.
        usage: The usage figures (with ``iterations`` when the request could compact).
        context_management: The ``context_management`` of the answer, if any.
    """
    whole = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage),
    }
    if context_management is not None:
        whole["context_management"] = dict(context_management)
    return whole


def _block_events(index: int, block: dict[str, Any]) -> list[Event]:
    """Return the start, delta and stop events of one content block."""
    kind = block["type"]
    if kind == "text":
        start = {**block, "text": "", **({"citations": []} if "citations" in block else {})}
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations", ())]
        deltas += [{"type": "text_delta", "text": piece} for piece in split_text(block["text"])]
    elif kind in ("tool_use", "server_tool_use"):
        start = {**block, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in split_text(compact_json(block["input"]))
        ]
    elif kind == "thinking":
        start = {**block, "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in split_text(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "compaction":
        start = {**block, "content": None, "encrypted_content": None}
        delta = {
            "type": "compaction_delta",
            "content": block["content"],
            "encrypted_content": block["encrypted_content"],
        }
        deltas = [delta]
    else:
        start, deltas = block, []
    events: list[Event] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    ]
    events += [
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        for delta in deltas
    ]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def stream_events(whole: Mapping[str, Any]) -> list[Event]:
    """Return the SSE events that stream a message.

    Args:
        whole: The complete message (see ``message``).
    """
    usage = dict(whole["usage"])
    opening = {k: v for k, v in usage.items() if k != "iterations"}
    start = {**whole, "content": [], "stop_reason": None, "usage": {**opening, "output_tokens": 1}}
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(whole["content"]):
        events += _block_events(index, block)
    delta = {"stop_reason": whole["stop_reason"], "stop_sequence": whole["stop_sequence"]}
    closing = {"type": "message_delta", "delta": delta, "usage": usage}
    if "context_management" in whole:
        closing["context_management"] = whole["context_management"]
    events.append(("message_delta", closing))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def middle_of_last_block(events: list[Event]) -> int:
    """Return how many events to send to stop in the middle of the last content block.

    The cut falls after the block's first delta (so in the middle of a tool_use's input
    JSON), or after its start when it has no delta.

    Args:
        events: The events of a message (see ``stream_events``).
    """
    starts = [i for i, (name, _) in enumerate(events) if name == "content_block_start"]
    if not starts:
        return 1
    return starts[-1] + (2 if events[starts[-1] + 1][0] == "content_block_delta" else 1)


def encode_event(name: str, data: Mapping[str, Any] | str) -> bytes:
    """Encode one SSE event.

    Args:
        name: The event name.
        data: The JSON data, or raw text to send as it is.
    """
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"event: {name}\ndata: {text}\n\n".encode()
