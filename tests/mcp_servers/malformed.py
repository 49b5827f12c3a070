"""A server with one tool whose input schema is not valid JSON Schema, beside two good ones."""

from __future__ import annotations

from typing import Any

from _common import middleware, options, serve
from mcp.server.mcpserver import MCPServer


def break_schema(result: dict[str, Any]) -> None:
    """Make the ``broken`` tool's schema invalid (a property of an unknown type)."""
    for tool in result["tools"]:
        if tool["name"] == "broken":
            tool["inputSchema"] = {"type": "object", "properties": {"x": {"type": "nonsense"}}}


opts = options()
mcp = MCPServer("malformed", middleware=middleware(opts, on_listing=break_schema))


@mcp.tool()
def good_one() -> str:
    """A tool with a sound schema."""
    return "one"


@mcp.tool()
def broken(x: int) -> int:
    """A tool whose listed schema is broken."""
    return x


@mcp.tool()
def good_two(text: str) -> str:
    """Another tool with a sound schema."""
    return text


if __name__ == "__main__":
    serve(mcp, opts)
