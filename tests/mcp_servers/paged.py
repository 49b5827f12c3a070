"""A server with 250 tools, listed 100 to a page (``--page-size`` changes it)."""

from __future__ import annotations

from _common import middleware, options, serve
from mcp.server.mcpserver import MCPServer

TOOLS = 250

opts = options()
opts.page_size = opts.page_size or 100
mcp = MCPServer("paged", middleware=middleware(opts))


def make(number: int) -> None:
    """Add tool ``tool_NNN``, which returns its number."""
    mcp.add_tool(lambda: number, name=f"tool_{number:03d}", description=f"Tool number {number}.")


for index in range(TOOLS):
    make(index)


if __name__ == "__main__":
    serve(mcp, opts)
