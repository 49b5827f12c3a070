"""Paths of the file tools: resolving against the root, the paths no tool reads, display."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nbagent.core.errors import ToolError
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools.context import ToolContext


def resolve(context: ToolContext, raw: str, write: bool = False) -> Path:
    """Turn a path the model gave into an absolute path without ``..`` or symlinks.

    Args:
        context: The tools' context; relative paths start at its root.
        raw: An absolute path, a path relative to the root, or one starting with ``~``.
        write: The path is about to be written: Edit deny rules apply too.

    Returns:
        The resolved path (which may not exist).

    Raises:
        ToolError: The path is empty, or no tool may touch it (credentials, a deny rule).
    """
    if not raw or not raw.strip():
        raise ToolError("The path is empty: give a file path, absolute or relative to the root.")
    path = Path(raw).expanduser()
    path = (path if path.is_absolute() else context.root / path).resolve()
    policy = policy_of(context)
    if not policy.readable(path) or (write and not policy.writable(path)):
        raise ToolError(
            f"{raw} is off limits: it holds credentials or a permission rule denies it."
        )
    return path


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


def policy_of(context: ToolContext) -> PermissionPolicy:
    """The permission policy the context's tools answer to: the agent's, else the default
    one (which still refuses credentials).

    Args:
        context: The tools' context.
    """
    return context.policy() or PermissionPolicy(root=context.root)


def readable(context: ToolContext) -> Callable[[Path], bool]:
    """Build the test a search applies to each file: may any tool read it at all?

    Args:
        context: The tools' context.

    Returns:
        A function of a path, False for credentials and paths a deny rule covers.
    """
    return policy_of(context).readable


def skipped_note(skipped: int) -> str:
    """Say how many files a search left out because the permission rules forbid reading them.

    Args:
        skipped: How many.

    Returns:
        A line for the result, or an empty string.
    """
    if not skipped:
        return ""
    files = "file" if skipped == 1 else "files"
    return f"({skipped} {files} skipped: the permission rules do not let the agent read them.)"


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
