"""What the fixture servers share: command-line options, transports, and middleware.

Every fixture is a real ``MCPServer`` run as its own process::

    python basic.py                                   # stdio
    python basic.py --transport http --port-file F    # streamable HTTP on 127.0.0.1, port in F
    python basic.py --transport sse --port-file F     # the older HTTP+SSE transport (/sse)

Options: ``--start-delay S`` sleeps before serving (a slow server), ``--legacy`` serves
only the 2025 handshake era over stdio (so clients get ``notifications/tools/list_changed``
instead of a ``subscriptions/listen`` stream), ``--page-size N`` paginates ``tools/list``.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

ListingHook = Callable[[dict[str, Any]], None]


def options(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the options every fixture takes.

    Args:
        argv: The arguments; ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=("stdio", "http", "sse"), default="stdio")
    parser.add_argument("--port-file", help="where an HTTP server writes its port")
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument(
        "--refuse-calls", type=int, default=0, help="HTTP status to answer every tools/call with"
    )
    return parser.parse_args(argv)


def middleware(opts: argparse.Namespace, on_listing: ListingHook | None = None) -> list[Any]:
    """Build the middleware the options ask for.

    Args:
        opts: The parsed options.
        on_listing: Edits each ``tools/list`` result (a wire dict) in place.
    """

    async def chain(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            if on_listing is not None:
                on_listing(result)
            if opts.page_size:
                paginate(result, (ctx.params or {}).get("cursor"), opts.page_size)
        return result

    return [chain]


def paginate(result: dict[str, Any], cursor: str | None, size: int) -> None:
    """Cut a listing to one page; the cursor is the index of the page's first tool."""
    start = int(cursor or 0)
    tools = result["tools"]
    result["tools"] = tools[start : start + size]
    if start + size < len(tools):
        result["nextCursor"] = str(start + size)


async def announce_change(ctx: Context) -> None:
    """Tell clients of either protocol era that the tool list changed."""
    await ctx.notify_tools_changed()
    if ctx.request_context.session.protocol_version < "2026":
        await ctx.request_context.session.send_tool_list_changed()


def serve(server: MCPServer, opts: argparse.Namespace) -> None:
    """Run a server on the transport the options name.

    Args:
        server: The server.
        opts: The parsed options.
    """
    if opts.start_delay:
        time.sleep(opts.start_delay)
    if opts.transport == "stdio" and opts.legacy:
        anyio.run(_serve_legacy_stdio, server)
        return
    if opts.transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = server.sse_app() if opts.transport == "sse" else server.streamable_http_app()
    if opts.refuse_calls:
        app = _refusing_calls(app, opts.refuse_calls)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    tmp = f"{opts.port_file}.tmp"
    with open(tmp, "w") as handle:
        handle.write(str(sock.getsockname()[1]))
    os.replace(tmp, opts.port_file)
    print(f"serving on 127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


async def _serve_legacy_stdio(server: MCPServer) -> None:
    """Serve stdio in the handshake era only (``server/discover`` is not answered as modern)."""
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # the SDK has no public accessor for it
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await serve_loop(
            lowlevel,
            read,
            write,
            lifespan_state=state,
            init_options=lowlevel.create_initialization_options(
                NotificationOptions(tools_changed=True)
            ),
        )


def _refusing_calls(app: Any, status: int) -> Any:
    """Wrap an ASGI app so that it answers every ``tools/call`` POST with a bare HTTP status."""

    async def refusing(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if b'"tools/call"' in body:
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b"refused"})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return refusing
