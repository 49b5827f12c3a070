"""Messages and content blocks of a history, as the tests of the loop and the store build
them."""

from __future__ import annotations

from typing import Any


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(ident: str, name: str = "Read", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": tool_input}


def result(ident: str, content: Any = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": ident, "content": content}
