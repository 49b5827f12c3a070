"""nbagent: a Claude agent inside a Jupyter kernel.

``%load_ext nbagent`` registers the ``%%agent`` magics. The public names are here; the code is
in folders by layer, each importing only those below it (docs/explanation/architecture.md)::

    import nbagent
    nbagent.registry            # the process-wide ToolRegistry
    nbagent.Agent(...).run("…") # an agent driven from Python

Importing the package imports none of them: each public name is imported when it is first
used (PEP 562), so that the Jupyter server, which imports ``nbagent.frontend.server`` at its
start, does not import the core (pydantic, tokenizers) it never uses.
"""

from __future__ import annotations

import importlib

from nbagent.core.version import __version__ as __version__

# typing.TYPE_CHECKING without importing typing (17 ms in a fresh process).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.catalogue.toolsearch import SearchHit, ToolSearch
    from nbagent.core.errors import ModelAPIError, NbAgentError, ToolError
    from nbagent.core.tool import Tool, ToolResult, tool
    from nbagent.loop.agent import Agent, AgentResult

    registry: ToolRegistry

__all__ = [
    "Agent",
    "AgentResult",
    "ModelAPIError",
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


_SOURCES = {
    "Agent": "loop.agent",
    "AgentResult": "loop.agent",
    "ModelAPIError": "core.errors",
    "NbAgentError": "core.errors",
    "ToolError": "core.errors",
    "ToolRegistry": "catalogue.registry",
    "SearchHit": "catalogue.toolsearch",
    "ToolSearch": "catalogue.toolsearch",
    "Tool": "core.tool",
    "ToolResult": "core.tool",
    "tool": "core.tool",
}
"""Each lazily imported name and the submodule that defines it."""


def __getattr__(name: str) -> Any:
    """Import a public name when it is first used, and keep it in the module.

    ``registry`` is made once per process: ``%reload_ext nbagent`` runs this file again in the
    same module, which keeps it.

    Args:
        name: The attribute asked for.

    Returns:
        Its value.

    Raises:
        AttributeError: ``name`` is not one of the package's names.
    """
    if name == "registry":
        from nbagent.catalogue.process import process_registry

        globals()["registry"] = process_registry()
        return globals()["registry"]
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_SOURCES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, with the public ones not imported yet."""
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and the configuration (``%load_ext nbagent``).

    Args:
        ipython: The IPython shell.
    """
    from nbagent.jupyter.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics and release what they hold (``%unload_ext nbagent``).

    Args:
        ipython: The IPython shell.
    """
    from nbagent.jupyter.extension import unload

    unload(ipython)
