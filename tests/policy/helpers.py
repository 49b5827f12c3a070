"""Tools the permission tests call: each declares what it touches as the built-in ones do."""

from __future__ import annotations

from nbagent.core.access import Touch, paths
from nbagent.core.tool import Tool

READ = Tool(name="Read", read_only=True, touches=paths("read", "file_path"))
GREP = Tool(name="Grep", read_only=True, touches=lambda i: [Touch("read", i.get("path") or ".")])
WRITE = Tool(name="Write", touches=paths("write", "file_path"))
EDIT = Tool(name="Edit", touches=paths("write", "file_path"))
NOTEBOOK_READ = Tool(name="NotebookRead", read_only=True, touches=paths("read", "notebook_path"))
NOTEBOOK_EDIT = Tool(name="NotebookEdit", touches=paths("write", "notebook_path"))
BARE_EDIT = Tool(name="Edit")
BASH = Tool(name="Bash")
MCP_READ = Tool(name="mcp__github__get_issue", read_only=True, is_mcp=True, server="github")
RESOURCES = Tool(
    name="ReadMcpResource", read_only=True, touches=lambda i: [Touch("mcp", i["server"])]
)
FETCH = Tool(name="WebFetch", read_only=True, touches=lambda i: [Touch("fetch", i["url"])])
