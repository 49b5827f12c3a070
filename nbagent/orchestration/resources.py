"""ListMcpResources and ReadMcpResource: the resources of connected MCP servers (deferred).

Reading is size-capped by the MCP manager (text and binary alike); a server that is not
connected, refuses, or takes too long gives the model a clear error. Each call declares the
servers it touches (``Touch("mcp", NAME)``), so that the permission policy treats it as a call
of those servers' tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, tool

RESOURCE_TIMEOUT = 30.0
"""Seconds a server has to list or read resources."""


def resource_tools(manager: Any) -> list[Tool]:
    """Build the resource tools over an MCP manager.

    Args:
        manager: The kernel's :class:`~nbagent.mcp.McpManager`.

    Returns:
        ListMcpResources and ReadMcpResource.
    """
    hint = "mcp resource resources files documents data server read list uri"

    def servers(tool_input: Mapping[str, Any]) -> list[Touch]:
        """The server named in the input; without one, every server of the manager.

        Every server, not only the connected ones: one that connects while the person is
        asked about the call would otherwise be listed without having been asked about.
        """
        named = tool_input.get("server")
        if isinstance(named, str) and named:
            return [Touch("mcp", named)]
        return [Touch("mcp", status.name) for status in manager.status()]

    @tool(
        name="ListMcpResources",
        read_only=True,
        should_defer=True,
        search_hint=hint,
        touches=servers,
    )
    def list_mcp_resources(server: str | None = None) -> str:
        """List the resources (files, documents, data) that connected MCP servers offer.

        Args:
            server: One server's name; every connected server by default.
        """
        names = [server] if server else [s.name for s in manager.status() if s.state == "connected"]
        if not names:
            return "No MCP server is connected."
        lines = []
        for name in names:
            for resource in _call(manager.list_resources, name, timeout=RESOURCE_TIMEOUT):
                mime = f" ({resource.mime_type})" if getattr(resource, "mime_type", None) else ""
                about = (
                    f": {resource.description}" if getattr(resource, "description", None) else ""
                )
                lines.append(f"{name}  {resource.uri}  {resource.name}{mime}{about}")
        return "\n".join(lines) or "The servers offer no resources."

    @tool(
        name="ReadMcpResource",
        read_only=True,
        should_defer=True,
        search_hint=hint,
        touches=servers,
    )
    def read_mcp_resource(server: str, uri: str) -> Any:
        """Read one resource of an MCP server (as ListMcpResources names it).

        Args:
            server: The server's name.
            uri: The resource's URI.
        """
        return _call(manager.read_resource, server, uri, timeout=RESOURCE_TIMEOUT)

    return [list_mcp_resources, read_mcp_resource]


def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """Call the manager, turning its failures into messages for the model."""
    try:
        return method(*args, **kwargs)
    except KeyError as exc:
        raise ToolError(f"No MCP server named {args[0]!r}.") from exc
    except TimeoutError as exc:
        raise ToolError(f"The MCP server {args[0]!r} did not answer in time.") from exc
