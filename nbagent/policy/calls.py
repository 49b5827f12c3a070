"""What a call is shown as: the paths in a tool's input, and the request a permission
question names (the command, the path, else the input)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbagent.core.tool import Tool

PATH_FIELDS = ("file_path", "notebook_path", "path")
"""Input fields that name a path, for tools that declare nothing they touch."""


def describe_request(tool: Tool, tool_input: Mapping[str, Any]) -> str:
    """What a call would do, as a person reads it: the command, the path, else its input.

    Args:
        tool: The tool called.
        tool_input: Its input.

    Returns:
        One line (a command may hold several): what the tool declares it touches (the URL,
        the paths), else the command or path in its input, else the input.
    """
    command = tool_input.get("command")
    if isinstance(command, str):
        return command
    if tool.touches is not None:
        try:
            targets = [t.target for t in tool.touches(tool_input) if t.target]
        except (KeyError, TypeError, ValueError, AttributeError):
            targets = []
        if targets:
            return ", ".join(dict.fromkeys(targets))
    path = next((tool_input[f] for f in PATH_FIELDS if isinstance(tool_input.get(f), str)), None)
    if path is not None:
        return path
    return ", ".join(f"{key}={value!r}" for key, value in tool_input.items())
