"""An MCP server written without any SDK: JSON-RPC lines on stdio, as a careless server sends.

Its listing puts tools that the SDK or the API would refuse beside good ones: a root that
is an array, no ``type`` at all, ``{}``, a schema that is not a dict, a tool without a name,
draft-04 forms (boolean ``exclusiveMinimum``, ``id``, ``definitions`` with a ``$ref``), a
tuple ``items``, and a keyword with a value of the wrong type. ``tools/call`` answers with
the tool's name and its arguments as JSON text.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Say the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {"name": "array_root", "inputSchema": {"type": "array", "items": {"type": "string"}}},
    {"name": "no_type", "inputSchema": {"properties": {"n": {"type": "integer"}}}},
    {"name": "empty", "description": "Takes nothing.", "inputSchema": {}},
    {"name": "not_a_dict", "inputSchema": "none"},
    {"description": "A tool without a name.", "inputSchema": {"type": "object"}},
    {
        "name": "read_pdf",
        "description": "Read a page of a PDF (a draft-04 schema, as LiveMCPBench's server has).",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "id": "http://example.com/read_pdf.json#",
            "type": "object",
            "properties": {
                "page": {"type": "integer", "minimum": 1, "exclusiveMinimum": False},
                "scale": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                "mode": {"$ref": "#/definitions/Mode"},
                "path": {"type": "string", "required": True},
            },
            "definitions": {"Mode": {"type": "string", "enum": ["text", "layout"]}},
        },
    },
    {
        "name": "point",
        "inputSchema": {
            "type": "object",
            "properties": {
                "xy": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}
            },
        },
    },
    {
        "name": "bad_keyword",
        "inputSchema": {
            "type": "object",
            "properties": {"word": {"type": "string", "minLength": "3"}},
        },
    },
]


def answer(
    request: dict[str, Any], tools: list[dict[str, Any]] = TOOLS, name: str = "raw"
) -> dict[str, Any] | None:
    """The response to one message (``None`` for a notification), for a server of that name
    listing those tools (tests/mcp_servers/hostile.py answers with it too)."""
    method = request.get("method")
    if "id" not in request:
        return None
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    params = request.get("params") or {}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "0"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": tools}
    elif method == "tools/call":
        text = json.dumps({"tool": params.get("name"), "arguments": params.get("arguments")})
        reply["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": f"Method not found: {method}"}
    return reply


def main() -> None:
    """Answer each line of stdin on stdout until stdin ends."""
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
