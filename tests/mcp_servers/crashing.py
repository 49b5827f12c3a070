"""A server that crashes when asked: at once, in the middle of a call, or a little later.

Tools: ``die(code)`` exits while the call is running (the call never gets an answer),
``crash_soon(delay, code)`` answers, then exits ``delay`` seconds later, ``pid`` returns
the process id. It says on stderr when it starts and before it crashes.
"""

from __future__ import annotations

import os
import sys
import threading

from _common import middleware, options, serve
from mcp.server.mcpserver import MCPServer

opts = options()
mcp = MCPServer("crashing", middleware=middleware(opts))


@mcp.tool()
def die(code: int = 4) -> str:
    """Exit the process in the middle of this call."""
    print(f"dying mid-call with code {code}", file=sys.stderr, flush=True)
    os._exit(code)


@mcp.tool()
def crash_soon(delay: float = 0.2, code: int = 3) -> str:
    """Answer, then exit after a delay."""

    def crash() -> None:
        print(f"crashing on demand with code {code}", file=sys.stderr, flush=True)
        os._exit(code)

    threading.Timer(delay, crash).start()
    return f"crashing in {delay} s"


@mcp.tool()
def pid() -> int:
    """Return the server's process id."""
    return os.getpid()


if __name__ == "__main__":
    print(f"crashing server {os.getpid()} started", file=sys.stderr, flush=True)
    serve(mcp, opts)
