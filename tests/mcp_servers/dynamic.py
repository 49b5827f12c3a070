"""A server whose tools change at run time; each change is announced to the client.

Tools: ``add_tool(name, description)`` adds a tool ``name`` (it answers "I am NAME"),
``remove_tool(name)`` removes one, ``ping`` answers "pong". Run it with ``--legacy`` to
announce over ``notifications/tools/list_changed`` instead of ``subscriptions/listen``.
"""

from __future__ import annotations

from _common import announce_change, middleware, options, serve
from mcp.server.mcpserver import Context, MCPServer

opts = options()
mcp = MCPServer("dynamic", middleware=middleware(opts))


@mcp.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


@mcp.tool()
async def add_tool(name: str, description: str, ctx: Context) -> str:
    """Add (or redefine) a tool that says its own name."""
    if name in {tool.name for tool in await mcp.list_tools()}:
        mcp.remove_tool(name)
    mcp.add_tool(lambda: f"I am {name}", name=name, description=description)
    await announce_change(ctx)
    return f"added {name}"


@mcp.tool()
async def remove_tool(name: str, ctx: Context) -> str:
    """Remove a tool."""
    mcp.remove_tool(name)
    await announce_change(ctx)
    return f"removed {name}"


if __name__ == "__main__":
    serve(mcp, opts)
