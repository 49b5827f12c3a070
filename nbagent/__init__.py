"""nbagent: a Claude agent inside a Jupyter kernel.

``%load_ext nbagent`` registers the ``%%agent`` magics. The core (tools, registry, search,
announcements, tokens) imports no IPython and is usable on its own::

    import nbagent
    nbagent.registry            # the process-wide ToolRegistry

Importing the package imports none of them: each public name is imported when it is first
used (PEP 562), so that the Jupyter server, which imports ``nbagent.frontend.server`` at its
start, does not import the core (pydantic, tokenizers) it never uses.
"""

from __future__ import annotations

import importlib
import sys
import types

from nbagent.core.version import __version__ as __version__

# typing.TYPE_CHECKING without importing typing (17 ms in a fresh process).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.catalogue.toolsearch import SearchHit, ToolSearch
    from nbagent.core.errors import NbAgentError, ToolError
    from nbagent.core.tool import Tool, ToolResult, tool

    registry: ToolRegistry

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


_SOURCES = {
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


class _Package(types.ModuleType):
    """This package's module type: its submodules do not take the place of its public names.

    ``nbagent.registry`` and ``nbagent.tool`` are also submodules, and importing a submodule
    sets it as an attribute of its package. The names stay the registry and the decorator,
    whichever is imported first.
    """

    def __setattr__(self, name: str, value: object) -> None:
        """Set an attribute, except a submodule over the public name it shares.

        Args:
            name: The attribute.
            value: Its new value.
        """
        if (
            name in __all__
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{__name__}.{name}"
        ):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
