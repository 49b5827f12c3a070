"""A server that floods its output: junk lines on stdout before it serves and on demand, and
stderr written all the time.

Tools: ``shout(lines)`` writes that many junk lines on stdout, then answers; ``echo``.
"""

from __future__ import annotations

import os
import threading
import time

from _common import middleware, options, serve
from mcp.server.mcpserver import MCPServer

JUNK = b"DEBUG: this is not JSON-RPC " + b"x" * 70 + b"\n"

opts = options()
mcp = MCPServer("flood", middleware=middleware(opts))


@mcp.tool()
def shout(lines: int) -> str:
    """Write junk lines on stdout, then answer."""
    os.write(1, JUNK * lines + b'{"not": "a JSON-RPC message"}\n')
    return f"shouted {lines} lines"


@mcp.tool()
def echo(text: str) -> str:
    """Say a text back."""
    return text


def flood_stderr() -> None:
    """Write about 1 MB a second on stderr, forever."""
    while True:
        os.write(2, (b"stderr noise " + b"y" * 100 + b"\n") * 100)
        time.sleep(0.01)


if __name__ == "__main__":
    if opts.transport == "stdio":
        os.write(1, JUNK * 20_000)
    threading.Thread(target=flood_stderr, daemon=True).start()
    serve(mcp, opts)
