"""Allow and deny rules as written (``Tool`` or ``Tool(specifier)``), what a rule's name
reaches (a tool, an MCP server, or every read, write, command line or URL), and the narrowest
rule an "always" answer adds.

How a rule's specifier matches a path, a command line or a host is the policy's
(:mod:`nbagent.policy.permissions`); Bash specifiers are :mod:`nbagent.policy.commandline`'s.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nbagent.core.access import Touch
from nbagent.core.errors import ConfigurationError
from nbagent.policy.hosts import url_host
from nbagent.policy.pathrules import inside, spellings

if TYPE_CHECKING:
    from nbagent.core.tool import Tool

READ_NAMES = frozenset({"Read"})
"""Rule names that stand for every read."""

WRITE_NAMES = frozenset({"Edit", "Write"})
"""Rule names that stand for every write."""

_RULE = re.compile(r"^(?P<tool>[^()\s]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """An allow or deny rule: a tool name (or glob) and an optional specifier.

    Raises:
        ConfigurationError: The text is not ``Tool`` or ``Tool(specifier)``.
    """

    text: str
    """The rule as written."""
    tool: str = field(init=False)
    """The tool name or glob."""
    specifier: str | None = field(init=False)
    """What the input must match: a command prefix (``git status:*``), a path glob or a
    ``domain:`` host."""

    def __post_init__(self) -> None:
        """Parse the text."""
        match = _RULE.match(self.text.strip())
        if not match or match["spec"] == "":
            raise ConfigurationError(
                f"Permission rule {self.text!r} is not of the form Tool or Tool(specifier), "
                "e.g. Bash(git status:*), Read(./data/**), WebFetch(domain:example.com), "
                "mcp__github__*."
            )
        object.__setattr__(self, "tool", match["tool"])
        object.__setattr__(self, "specifier", match["spec"])

    def names_tool(self, tool: Tool) -> bool:
        """Tell whether the rule's name covers a tool (a glob, or ``mcp__server`` for every
        tool of that server).

        Args:
            tool: The tool called.
        """
        if fnmatch.fnmatchcase(tool.name, self.tool):
            return True
        return tool.is_mcp and tool.server is not None and self.names_server(tool.server)

    def names_server(self, server: str) -> bool:
        """Tell whether the rule covers every tool and resource of an MCP server.

        Args:
            server: The server's name.
        """
        if self.specifier is not None:
            return False
        return self.tool == f"mcp__{server}" or fnmatch.fnmatchcase(f"mcp__{server}__", self.tool)

    def covers(self, tool: Tool, touch: Touch) -> bool:
        """Tell whether the rule's name reaches a thing a call touches.

        ``Read`` reaches every read, ``Edit`` and ``Write`` every write, ``*`` every path,
        ``Bash`` every command line, ``WebFetch`` every URL; another name, the touches of the
        tools it names.

        Args:
            tool: The tool called.
            touch: One thing it touches.
        """
        if touch.access == "read" and self.tool in READ_NAMES:
            return True
        if touch.access == "write" and self.tool in WRITE_NAMES:
            return True
        if touch.access in ("read", "write") and self.tool == "*":
            return True
        if touch.access == "run" and self.tool == "Bash":
            return True
        if touch.access == "fetch" and self.tool == "WebFetch":
            return True
        if touch.access == "mcp":
            return self.names_server(touch.target)
        return self.names_tool(tool)


def narrowest_rule(tool: Tool, touch: Touch, root: Path) -> str:
    """Return the narrowest allow rule that covers what the person is shown.

    Args:
        tool: The tool called.
        touch: The thing the call touches that is asked about.
        root: The working folder (a path inside it is written ``./…``).

    Returns:
        The rule an "always" answer adds; empty when none is offered (an MCP server, a URL
        without a host).
    """
    if touch.access == "run":
        from nbagent.policy import commandline

        return f"{tool.name}({commandline.always_spec(touch.target)})"
    if touch.access == "fetch":
        host = url_host(touch.target)
        return f"WebFetch(domain:{host})" if host else ""
    if touch.access in ("read", "write"):
        path = spellings(touch.target, root)[0]
        if inside(path, root):
            path = "./" + os.path.relpath(path, root)
        if touch.access == "read" and os.path.isdir(spellings(touch.target, root)[-1]):
            path = path.rstrip("/") + "/**"
        return f"{tool.name}({path})"
    if touch.access == "mcp":
        return ""
    return tool.name
