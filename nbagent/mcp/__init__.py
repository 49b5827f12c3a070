"""MCP servers as tool sources: their tools become deferred tools the model finds with ToolSearch.

Modules, each with one job:

- :mod:`~nbagent.mcp.config`: the configuration's values (server specs, :class:`McpConfig`);
- :mod:`~nbagent.mcp.config_file`: the ``mcpServers`` JSON of Claude Code and Claude Desktop,
  found and read into them; :mod:`~nbagent.mcp.config_entry`: one entry's fields checked;
- :mod:`~nbagent.mcp.approvals`: the person's approval of a project's ``.mcp.json`` servers,
  kept in ``~/.nbagent/mcp-approvals.json``;
- :mod:`~nbagent.mcp.manager`: :class:`McpManager`, the servers on one background thread;
- :mod:`~nbagent.mcp.connection`: one server's connection, tool listing and restarts;
- :mod:`~nbagent.mcp.stdio`: the stdio transport (process id, exit code, stderr tail);
- :mod:`~nbagent.mcp.transports`: the HTTP transports, and why a server was not reached;
- :mod:`~nbagent.mcp.tools`: tool names, Tools built from listings, a server's tools in
  the registry;
- :mod:`~nbagent.mcp.content`: call results as API tool_result content;
- :mod:`~nbagent.mcp.state`: statuses, restart policy, settings.

Importing this package does not import the ``mcp`` SDK; the manager imports it on its own
thread when the first server starts.
"""

from __future__ import annotations

from nbagent.mcp.approvals import Approvals, ProjectServer, ProjectServers
from nbagent.mcp.config import HttpSpec, McpConfig, ServerSpec, StdioSpec
from nbagent.mcp.config_file import find_config, load_config, parse_config
from nbagent.mcp.errors import ApprovalsError, McpConfigError, UnknownServerError
from nbagent.mcp.manager import McpManager
from nbagent.mcp.state import RestartPolicy, ServerState, ServerStatus
from nbagent.mcp.tools import tool_name

__all__ = [
    "Approvals",
    "ApprovalsError",
    "HttpSpec",
    "McpConfig",
    "McpConfigError",
    "McpManager",
    "ProjectServer",
    "ProjectServers",
    "RestartPolicy",
    "ServerSpec",
    "ServerState",
    "ServerStatus",
    "StdioSpec",
    "UnknownServerError",
    "find_config",
    "load_config",
    "parse_config",
    "tool_name",
]
