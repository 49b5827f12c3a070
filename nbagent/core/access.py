"""What a tool call touches: the paths it reads or writes, the commands, URLs and servers.

A tool declares, from its input, what a call would touch (:attr:`Tool.touches
<nbagent.core.tool.Tool.touches>`), so that one permission policy checks every tool alike: a
``Read(./secrets/**)`` deny rule refuses Grep, Glob and NotebookRead as much as Read, and an
``Edit`` rule covers Write and NotebookEdit. A tool that touches nothing outside the kernel
declares nothing.

>>> Touch("read", "data/sales.csv")
Touch(access='read', target='data/sales.csv')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Access = Literal["read", "write", "run", "fetch", "mcp"]
"""How a call touches its target: ``read`` and ``write`` a path, ``run`` a shell command
line, ``fetch`` a URL, ``mcp`` an MCP server (by name) outside its tools."""

ACCESSES: tuple[Access, ...] = ("read", "write", "run", "fetch", "mcp")
"""Every kind of access, in the order above."""


@dataclass(frozen=True)
class Touch:
    """One thing a tool call touches."""

    access: Access
    """How it is touched."""
    target: str
    """The path, command line, URL or server name, as the model gave it."""


Touches = Callable[[Mapping[str, Any]], Iterable[Touch]]
"""A tool's declaration: given a call's input, what the call touches."""


def paths(access: Literal["read", "write"], *fields: str) -> Touches:
    """Declare that the input fields ``fields`` (each a string, when given) are paths.

    Args:
        access: Whether the tool reads or writes them.
        fields: The input fields holding a path.

    Returns:
        The declaration.
    """

    def touches(tool_input: Mapping[str, Any]) -> list[Touch]:
        return [
            Touch(access, tool_input[name])
            for name in fields
            if isinstance(tool_input.get(name), str)
        ]

    return touches
