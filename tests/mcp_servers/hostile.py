"""An MCP server written without any SDK whose listing puts hostile tools beside good ones.

Usage: ``hostile.py [SHAPE ...]``, each SHAPE one of :data:`SHAPES` (``all``, the default,
is every shape but ``many``; ``good`` is none, the good tools only):

- ``not_utf8``: a tool whose description holds bytes that are not UTF-8 (written raw);
- ``deep``: a tool whose input schema is nested 200 levels deep;
- ``wide``: a tool whose input schema has 100,000 properties;
- ``long``: 20 tools with a 1 MB description each;
- ``many``: 20,000 more tools.

The good tools ``echo`` and ``add`` come first. ``tools/call`` answers with the tool's name
and its arguments as JSON text, so every listed tool can be called.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from raw_jsonrpc import answer  # the script's own folder is on sys.path

SHAPES = ("not_utf8", "deep", "wide", "long", "many")
"""The hostile shapes this server can list."""

DEPTH = 200
"""Levels of nested ``properties`` in the deep schema."""

PROPERTIES = 100_000
"""Properties of the wide schema."""

LONG_TOOLS = 20
"""Tools with a long description."""

DESCRIPTION_BYTES = 1_000_000
"""Characters of each long description."""

MANY = 20_000
"""Tools added by ``many``."""

NOT_UTF8 = "@@NOT-UTF8@@"
"""Stands in the JSON for the bytes that are not UTF-8, replaced as the line is written."""

GOOD: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Say the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
]


def deep_schema() -> dict[str, Any]:
    """An object schema whose one property nests :data:`DEPTH` levels deep."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(DEPTH):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def hostile(shape: str) -> list[dict[str, Any]]:
    """The tools one shape lists."""
    if shape == "not_utf8":
        return [
            {
                "name": "latin1",
                "description": f"Caf{NOT_UTF8} menus, in Latin-1.",
                "inputSchema": {"type": "object", "properties": {"dish": {"type": "string"}}},
            }
        ]
    if shape == "deep":
        return [{"name": "deep", "inputSchema": deep_schema()}]
    if shape == "wide":
        properties = {f"p{i}": {"type": "string"} for i in range(PROPERTIES)}
        return [{"name": "wide", "inputSchema": {"type": "object", "properties": properties}}]
    if shape == "long":
        return [
            {
                "name": f"long_{i:02}",
                "description": f"Tool {i}. " + "x" * DESCRIPTION_BYTES,
                "inputSchema": {"type": "object"},
            }
            for i in range(LONG_TOOLS)
        ]
    return [
        {
            "name": f"tool_{i:05}",
            "description": f"Tool number {i}.",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        }
        for i in range(MANY)
    ]


def listing(shapes: list[str]) -> list[dict[str, Any]]:
    """The good tools, then each shape's."""
    return [*GOOD, *(tool for shape in shapes for tool in hostile(shape))]


def main() -> None:
    """Answer each line of stdin on stdout, as raw bytes, until stdin ends."""
    shapes = sys.argv[1:] or ["all"]
    unknown = set(shapes) - {*SHAPES, "all", "good"}
    if unknown:
        sys.exit(f"unknown shapes: {sorted(unknown)}; known: {SHAPES}")
    if "all" in shapes:
        shapes = [shape for shape in SHAPES if shape != "many"]
    shapes = [shape for shape in shapes if shape != "good"]
    tools = listing(shapes)
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), tools, "hostile")
        if reply is not None:
            data = json.dumps(reply).encode().replace(NOT_UTF8.encode(), b"\xe9\xff")
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
