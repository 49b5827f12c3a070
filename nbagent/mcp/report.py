"""What the user reads about one server: its problems in a line, and its whole log."""

from __future__ import annotations

from nbagent.display import code_block
from nbagent.mcp.state import ServerStatus


def problems(status: ServerStatus) -> str:
    """Say in one line what is wrong with a server, for ``%mcp list``.

    Args:
        status: The server's status.

    Returns:
        Its last error in one line (:attr:`ServerStatus.problem`), then the count of tools
        left out, e.g. ``exited with code 1: ImportError: ... · 2 tools left out``; empty
        when all is well.
    """
    parts = [status.problem] if status.problem else []
    if status.skipped:
        count = len(status.skipped)
        parts.append(f"{count} tool{'s' if count > 1 else ''} left out")
    return " · ".join(parts)


def server_log(status: ServerStatus) -> str:
    """Tell everything known about a server, as Markdown, for ``%mcp log NAME``.

    Args:
        status: The server's status.

    Returns:
        What runs (or is reached), its state, the full last error, its stderr's last lines,
        its history, the tools left out and the schema changes made, each where there is
        something to say.
    """
    facts = [status.state, status.transport, f"{status.tool_count} tools"]
    if status.pid:
        facts.append(f"pid {status.pid}")
    if status.protocol_version:
        facts.append(f"protocol {status.protocol_version}")
    if status.restarts:
        facts.append(f"{status.restarts} restarts")
    parts = [f"**`{status.name}`**: {' · '.join(facts)}"]
    if status.target:
        parts.append(f"Runs: `{status.target}`")
    head, _, tail = (status.last_error or "").partition("; stderr: ")
    if head:
        parts.append(f"**Last error**: {head}")
    stderr = "\n".join(status.stderr) or tail
    if stderr:
        parts.append(f"**stderr** (its last lines):\n\n{code_block(stderr)}")
    for title, lines in (
        ("History", status.history),
        ("Tools left out", status.skipped),
        ("Schemas mended so that the API takes them", status.adjusted),
    ):
        if lines:
            parts.append(f"**{title}**:\n\n" + "\n".join(f"- {line}" for line in lines))
    return "\n\n".join(parts)
