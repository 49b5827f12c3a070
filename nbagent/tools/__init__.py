"""The built-in tools: notebook cells, variables, files, shell and web.

>>> from pathlib import Path
>>> context = ToolContext(root=Path("."))
>>> [t.name for t in builtin_tools(context, ["Read", "Grep"])]
['Read', 'Grep']

Loaded by default (the model sees their definitions from the first turn): Read, Write, Edit,
Glob, Grep, Bash, NotebookRead, NotebookEdit, NotebookRun, NotebookState and ListVariables, the
tools nearly every notebook session uses. Deferred (found with ToolSearch): InspectVariable,
RunCode and WebFetch. A tool's module is imported only when the tool is built.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from nbagent.core.errors import ConfigurationError
from nbagent.core.tool import Tool
from nbagent.tools.context import Limits, ReadLedger, ToolContext

__all__ = ["BUILTIN_TOOL_NAMES", "Limits", "ReadLedger", "ToolContext", "builtin_tools"]

_BUILDERS: dict[str, tuple[str, str]] = {
    "Read": ("files.read_write", "read_tool"),
    "Write": ("files.read_write", "write_tool"),
    "Edit": ("files.read_write", "edit_tool"),
    "Glob": ("files.globbing", "glob_tool"),
    "Grep": ("files.grep", "grep_tool"),
    "Bash": ("shell.bash", "bash_tool"),
    "NotebookRead": ("notebook.read_edit", "notebook_read_tool"),
    "NotebookEdit": ("notebook.read_edit", "notebook_edit_tool"),
    "NotebookRun": ("notebook.run", "notebook_run_tool"),
    "NotebookState": ("notebook.state", "notebook_state_tool"),
    "ListVariables": ("python.variables", "list_variables_tool"),
    "InspectVariable": ("python.variables", "inspect_variable_tool"),
    "RunCode": ("python.runcode", "run_code_tool"),
    "WebFetch": ("web.fetch", "web_fetch_tool"),
}

BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(_BUILDERS)
"""The names of the built-in tools, in the order :func:`builtin_tools` returns them."""


def builtin_tools(context: ToolContext, names: Iterable[str] | None = None) -> list[Tool]:
    """Build the built-in tools over one context.

    Args:
        context: The root folder, notebook, kernel and limits the tools share; the tools also
            share its record of what was read.
        names: Build only these (in ``BUILTIN_TOOL_NAMES`` order); all of them by default.

    Returns:
        The tools, in the order of ``BUILTIN_TOOL_NAMES``.

    Raises:
        ConfigurationError: A name is not a built-in tool.
    """
    wanted = set(BUILTIN_TOOL_NAMES if names is None else names)
    unknown = sorted(wanted - set(_BUILDERS))
    if unknown:
        raise ConfigurationError(
            f"No built-in tool named {', '.join(map(repr, unknown))}; the built-in tools are "
            f"{', '.join(BUILTIN_TOOL_NAMES)}."
        )
    tools = []
    for name in BUILTIN_TOOL_NAMES:
        if name in wanted:
            module, builder = _BUILDERS[name]
            tools.append(
                getattr(importlib.import_module(f"nbagent.tools.{module}"), builder)(context)
            )
    return tools
