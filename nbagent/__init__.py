"""nbagent: a Claude agent inside a Jupyter kernel.

``%load_ext nbagent`` registers the ``%%agent`` magics. The core (tools, registry, search,
announcements, tokens) imports no IPython and is usable on its own::

    import nbagent
    nbagent.registry            # the process-wide ToolRegistry
"""

from __future__ import annotations

from nbagent.errors import NbAgentError, ToolError
from nbagent.registry import ToolRegistry
from nbagent.search import SearchHit, ToolSearch
from nbagent.tool import Tool, ToolResult, tool

__all__ = [
    "NbAgentError",
    "SearchHit",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "ToolSearch",
    "registry",
    "tool",
]

__version__ = "0.1.0"

registry = ToolRegistry()
"""The process-wide registry: the tools every agent in this kernel can use."""
registry.register(ToolSearch(registry).tool)
