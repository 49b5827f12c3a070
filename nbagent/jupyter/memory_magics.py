"""The memory tool in a kernel: registered while ``c.NbAgent.memory`` is on, over the
project's folder, and listed by ``%agent memory``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbagent.core.markup import code_markdown

# The memory tool's module is imported at the first cell, not at ``%load_ext``.
if TYPE_CHECKING:
    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.jupyter.session import Session
    from nbagent.tools.memory import MemoryStore, MemoryTool


def project_store(session: Session) -> MemoryStore:
    """The memory of the project the session's notebook belongs to."""
    from nbagent.store.instructions import notebook_dir, repository_root
    from nbagent.tools.memory import MemoryStore, memory_folder

    root = repository_root(notebook_dir(session.notebook()))
    return MemoryStore(memory_folder(root))


def sync_memory(session: Session) -> None:
    """Register the memory tool over the project's folder when memory is on; drop it when
    off (applied at each cell, so that a changed setting or notebook counts from the next).

    Args:
        session: The session.
    """
    registry = session.registry
    if not session.settings.memory:
        drop_memory(registry)
        return
    from nbagent.tools.memory import memory_tool

    registered = registered_memory(registry)
    store = project_store(session)
    if registered is None or registered.store_folder != store.folder:
        tool = memory_tool(store)
        registry.register(tool, replace=True)


def registered_memory(registry: ToolRegistry) -> MemoryTool | None:
    """The memory tool the registry holds, if it holds nbagent's."""
    from nbagent.tools.memory import MEMORY_NAME, MemoryTool

    tool = registry.get(MEMORY_NAME) if MEMORY_NAME in registry else None
    return tool if isinstance(tool, MemoryTool) else None


def drop_memory(registry: ToolRegistry) -> None:
    """Unregister nbagent's memory tool, if the registry holds it.

    Args:
        registry: The session's registry.
    """
    if (registered := registered_memory(registry)) is not None:
        registry.unregister(registered.name)


def memory_report(session: Session) -> str:
    """What ``%agent memory`` shows: whether memory is on, its folder and its files.

    Args:
        session: The session.
    """
    store = project_store(session)
    if not session.settings.memory:
        return (
            "Memory is off: `%config NbAgent.memory = True` lets the agent keep notes for this "
            f"project in {code_markdown(str(store.folder))}."
        )
    files = store.listing()
    lines = [f"**memory** of this project: {code_markdown(str(store.folder))}"]
    lines += [f"- {code_markdown(name)} ({size:,} bytes)" for name, size in files]
    if not files:
        lines.append("No memory files yet: the agent writes them as it works.")
    return "\n".join(lines)
