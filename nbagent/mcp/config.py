"""MCP server configuration as values: how to reach each server (:class:`StdioSpec`,
:class:`HttpSpec`) and one configuration's servers (:class:`McpConfig`).

The ``mcpServers`` JSON they are read from is :mod:`nbagent.mcp.config_file`'s.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from nbagent.core.secrets import redact
from nbagent.mcp.errors import McpConfigError

PROJECT_FILE = ".mcp.json"
"""The file name looked up in the notebook's folder (as Claude Code names it)."""
USER_FILE = Path(".nbagent") / "mcp.json"
"""The file looked up under the home folder."""


@dataclass(frozen=True)
class StdioSpec:
    """A local server, started as a child process that speaks MCP on stdin and stdout."""

    command: str
    """The executable (looked up on ``PATH`` when not a path)."""
    args: tuple[str, ...] = ()
    """Its command-line arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the small safe environment the process inherits (``HOME``,
    ``PATH``, ``USER``, ...); the kernel's other variables (API keys) are not passed on."""
    cwd: str | None = None
    """The working folder; the kernel's when ``None``."""
    max_tools: int | None = None
    """Of its tools, the first this many are registered; all when ``None``."""

    @property
    def transport(self) -> Literal["stdio"]:
        """The transport's name: ``stdio``."""
        return "stdio"

    def describe(self) -> str:
        """Say what is run, for the user: the command line, and the names (not the values)
        of the variables set (secrets in the command line are redacted)."""
        env = f" (env: {', '.join(sorted(self.env))})" if self.env else ""
        return redact(shlex.join([self.command, *self.args])) + env


@dataclass(frozen=True)
class HttpSpec:
    """A remote server, reached over streamable HTTP (or the older HTTP+SSE transport)."""

    url: str
    """The endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers sent with every request (``Authorization``, ...)."""
    transport: Literal["http", "sse"] = "http"
    """``http`` (streamable HTTP) or ``sse`` (HTTP+SSE, deprecated by the protocol)."""
    max_tools: int | None = None
    """Of its tools, the first this many are registered; all when ``None``."""

    def describe(self) -> str:
        """Say what is reached, for the user: the URL (secrets redacted), and the names (not
        the values) of the headers sent."""
        headers = f" (headers: {', '.join(sorted(self.headers))})" if self.headers else ""
        return f"{self.transport} {redact(self.url)}{headers}"


ServerSpec = StdioSpec | HttpSpec
"""How to reach one MCP server."""


@dataclass(frozen=True)
class McpConfig:
    """The servers of one configuration, by name, in the file's order."""

    servers: dict[str, ServerSpec]
    """Each server's spec, by the name its tools are prefixed with."""
    source: Path | None = None
    """The file it was read from, if any."""
    problems: tuple[McpConfigError, ...] = ()
    """Every fault of the entries left out for them, each naming its server and field
    (``server``, ``field``), in the file's order."""
    disabled: tuple[str, ...] = ()
    """The servers left out because their entry says ``"disabled": true``."""

    def faults(self, name: str) -> list[McpConfigError]:
        """Return the faults of one server's entry (none when it is good or not there).

        Args:
            name: The server's name.
        """
        return [problem for problem in self.problems if problem.server == name]
