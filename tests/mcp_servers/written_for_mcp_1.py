"""A server written for mcp 1.x, as many published ones are: on mcp 2.x it dies at its import,
and only its stderr says why (FastMCP was renamed)."""

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("old")

if __name__ == "__main__":
    mcp.run()
