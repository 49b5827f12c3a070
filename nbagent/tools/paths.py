"""Paths of the file tools: resolving against the root, the leave-the-root rule, display."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from nbagent.errors import ToolError
from nbagent.permissions import PermissionDecision, ask
from nbagent.tools.context import ToolContext

PermissionHook = Callable[[Mapping[str, Any]], PermissionDecision | None]
"""A Tool's ``check_permission``."""


def resolve(context: ToolContext, raw: str) -> Path:
    """Turn a path the model gave into an absolute path without ``..`` or symlinks.

    Args:
        context: The tools' context; relative paths start at its root.
        raw: An absolute path, a path relative to the root, or one starting with ``~``.

    Returns:
        The resolved path (which may not exist).

    Raises:
        ToolError: The path is empty.
    """
    if not raw or not raw.strip():
        raise ToolError("The path is empty: give a file path, absolute or relative to the root.")
    path = Path(raw).expanduser()
    return (path if path.is_absolute() else context.root / path).resolve()


def inside_root(context: ToolContext, path: Path) -> bool:
    """Tell whether a resolved path is the root or under it.

    Args:
        context: The tools' context.
        path: A resolved path.
    """
    return path == context.root or path.is_relative_to(context.root)


def shown(context: ToolContext, path: Path) -> str:
    """Return how a path is shown to the model: relative to the root when inside it.

    Args:
        context: The tools' context.
        path: A resolved path.
    """
    if path == context.root:
        return "."
    return str(path.relative_to(context.root)) if inside_root(context, path) else str(path)


def ask_outside_root(
    context: ToolContext,
    targets: Callable[[Mapping[str, Any]], Iterable[str]],
    action: str,
) -> PermissionHook:
    """Build a ``check_permission`` hook that asks before a tool leaves the root.

    Args:
        context: The tools' context.
        targets: The raw paths a call touches, taken from its input.
        action: What the tool does with them ("read", "write to", "search"), for the question.

    Returns:
        A hook that returns ``ask`` for the first path outside the root, else None.
    """

    def check(tool_input: Mapping[str, Any]) -> PermissionDecision | None:
        for raw in targets(tool_input):
            try:
                path = resolve(context, raw)
            except ToolError:
                continue
            if not inside_root(context, path):
                return ask(
                    f"Allow the agent to {action} {path}? It is outside the working folder "
                    f"{context.root}.",
                    rule="outside the working folder",
                )
        return None

    return check


def refuse_open_notebook(context: ToolContext, path: Path, tool_name: str) -> None:
    """Stop a generic file tool from writing the notebook that is open in the editor.

    Args:
        context: The tools' context.
        path: The resolved path about to be written.
        tool_name: The refusing tool's name, for the message.

    Raises:
        ToolError: ``path`` is the open notebook.
    """
    notebook = context.notebook_path()
    if notebook is not None and notebook.resolve() == path:
        raise ToolError(
            f"{shown(context, path)} is the open notebook: change its cells with NotebookEdit "
            f"(after NotebookRead), not {tool_name}, so that the notebook editor's copy and "
            "the cells' outputs stay intact."
        )
