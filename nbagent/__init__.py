"""nbagent: a Claude agent inside a Jupyter kernel.

``%load_ext nbagent`` registers the ``%%agent`` magics. The core (tools, registry, search,
announcements, tokens) imports no IPython and is usable on its own::

    import nbagent
    nbagent.registry            # the process-wide ToolRegistry
"""

from __future__ import annotations

from typing import Any

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


def _process_registry() -> ToolRegistry:
    """The registry this module already holds (kept across ``%reload_ext``), or a new one."""
    existing = globals().get("registry")
    if isinstance(existing, ToolRegistry):
        return existing
    created = ToolRegistry()
    created.register(ToolSearch(created).tool)
    return created


registry = _process_registry()
"""The process-wide registry: the tools every agent in this kernel can use."""


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and the configuration (``%load_ext nbagent``).

    Args:
        ipython: The IPython shell.
    """
    from nbagent.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics and release what they hold (``%unload_ext nbagent``).

    Args:
        ipython: The IPython shell.
    """
    from nbagent.extension import unload

    unload(ipython)
