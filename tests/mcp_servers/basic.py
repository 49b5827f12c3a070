"""A server with a few tools of every result kind, and one resource.

Tools: ``add`` (structured output), ``echo`` (text), ``fail`` (``isError``), ``image``
(a PNG), ``document`` (an embedded text resource and a blob), ``slow`` (sleeps), ``pid``
(its process id), ``header`` (an HTTP request header). Resource: ``note://hello``.
"""

from __future__ import annotations

import base64
import os

import anyio
from _common import middleware, options, serve
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2213bc60000000049454e44ae426082"
    )
).decode()

opts = options()
mcp = MCPServer("basic", middleware=middleware(opts))


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Say a text back."""
    return text


@mcp.tool()
def fail(reason: str) -> str:
    """Always fail, with the reason given."""
    raise ToolError(f"failed on purpose: {reason}")


@mcp.tool()
def image() -> list[ImageContent | TextContent]:
    """Return a 1x1 PNG and a caption."""
    return [
        ImageContent(type="image", data=PNG, mime_type="image/png"),
        TextContent(type="text", text="a red pixel"),
    ]


@mcp.tool()
def document() -> list[EmbeddedResource]:
    """Return an embedded text resource and an embedded binary one."""
    return [
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="note://readme", mime_type="text/plain", text="Hi!"),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="blob://data", mime_type="application/octet-stream", blob="AAEC"
            ),
        ),
    ]


@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleep, then say so."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@mcp.tool()
def pid() -> int:
    """Return the server's process id."""
    return os.getpid()


@mcp.tool()
def header(name: str, ctx: Context) -> str:
    """Return a header of the HTTP request that carried this call ("" over stdio)."""
    return (ctx.headers or {}).get(name, "")


@mcp.resource("note://hello", mime_type="text/plain")
def hello() -> str:
    """A short note."""
    return "Hello from the basic server."


if __name__ == "__main__":
    serve(mcp, opts)
