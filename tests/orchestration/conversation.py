"""Reading a conversation back in tests."""

from __future__ import annotations

from typing import Any


def tool_results(messages: list[dict[str, Any]]) -> list[Any]:
    """The content of every tool_result in a conversation, in order.

    Args:
        messages: The agent's messages.

    Returns:
        Each result's content (text or blocks).
    """
    return [
        block["content"]
        for message in messages
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
