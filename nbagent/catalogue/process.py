"""The process's registry: the tools every agent in this kernel can use.

``nbagent.registry`` is this registry; the agent, the MCP servers and ``%load_ext nbagent``
take it from here, so that no module reaches up to the package for it.
"""

from __future__ import annotations

import threading

from nbagent.catalogue.registry import ToolRegistry

_lock = threading.Lock()
"""Held while the registry is made, so that two threads asking first share one."""
_registry: ToolRegistry | None = None


def process_registry() -> ToolRegistry:
    """The process-wide registry, made with ToolSearch in it on first use.

    Returns:
        The same registry on every call (``%reload_ext nbagent`` keeps it).
    """
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                from nbagent.catalogue.toolsearch import ToolSearch

                created = ToolRegistry()
                created.register(ToolSearch(created).tool)
                _registry = created
    return _registry
