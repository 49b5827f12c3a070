"""What the user reads about one server: its problems in a line, its whole log, and, for a
project's server waiting for approval, what it would run."""

from __future__ import annotations

import re

from nbagent.core.markup import code_block, code_markdown, plain_markdown
from nbagent.mcp.approvals import ProjectServer, ProjectServers
from nbagent.mcp.state import ServerStatus

_URL = re.compile(r"https?://\S+")


def problems(status: ServerStatus) -> str:
    """Say in one line what is wrong with a server, for ``%mcp list``.

    Args:
        status: The server's status.

    Returns:
        Its last error in one line (:attr:`ServerStatus.problem`, links left to the log),
        then the count of tools left out and of those past the limit, e.g. ``exited with
        code 1: ImportError: ... · 2 tools left out``; empty when all is well.
    """
    parts = [_URL.sub("…", status.problem)] if status.problem else []
    if status.skipped:
        count = len(status.skipped)
        parts.append(f"{count} tool{'s' if count > 1 else ''} left out")
    if status.past_limit:
        parts.append(f"{status.past_limit:,} tools past the limit")
    return " · ".join(parts)


def server_log(status: ServerStatus) -> str:
    """Tell everything known about a server, as Markdown, for ``%mcp log NAME``.

    Args:
        status: The server's status.

    Returns:
        What runs (or is reached), its state, the full last error, its stderr's last lines,
        its history, the tools left out (those past the limit counted), the schema changes
        made and the other changes to listed tools, each where there is something to say.
    """
    facts = [status.state, status.transport, f"{status.tool_count} tools"]
    if status.pid:
        facts.append(f"pid {status.pid}")
    if status.protocol_version:
        facts.append(f"protocol {status.protocol_version}")
    if status.restarts:
        facts.append(f"{status.restarts} restarts")
    parts = [f"**{code_markdown(status.name)}**: {plain_markdown(' · '.join(facts))}"]
    if status.target:
        parts.append(f"Runs: {code_markdown(status.target)}")
    if status.last_error:
        parts.append(f"**Last error**: {plain_markdown(status.problem)}")
    stderr = "\n".join(status.stderr) or (status.last_error or "").partition("; stderr: ")[2]
    if stderr:
        parts.append(f"**stderr** (its last lines):\n\n{code_block(stderr)}")
    past = (
        [
            f"{status.past_limit:,} more tools past the limit (its entry's max_tools, or the "
            "tools all servers together may register)"
        ]
        if status.past_limit
        else []
    )
    for title, lines in (
        ("History", status.history),
        ("Tools left out", (*status.skipped, *past)),
        ("Schemas mended so that the API takes them", status.adjusted),
        ("Listing mended", status.mended),
    ):
        if lines:
            items = "\n".join(f"- {plain_markdown(line)}" for line in lines)
            parts.append(f"**{title}**:\n\n{items}")
    return "\n\n".join(parts)


APPROVE_HINT = (
    "`%mcp approve NAME` (several names, or `--all`) starts them and keeps the approval for "
    "these very entries; `%mcp deny NAME` keeps one stopped without asking again."
)
"""What to do about servers waiting for approval."""


def waiting_list(project: ProjectServers, servers: list[ProjectServer]) -> str:
    """Show the servers of a project file that wait for approval, as written, for ``%mcp list``.

    Args:
        project: The project file's servers.
        servers: Those waiting.

    Returns:
        Markdown: each one's command line or URL as written and the names (never the values)
        of the environment variables it would get, then what to run.
    """
    head = (
        f"**Waiting for your approval**: servers of {plain_markdown(str(project.source))}, a "
        "project file. None of them runs, and none reads your environment variables, until "
        "you approve it."
    )
    return "\n\n".join([head, *(approval_request(server) for server in servers), APPROVE_HINT])


def approval_request(server: ProjectServer) -> str:
    """Show one project server as the person must see it to decide: its entry as written.

    Args:
        server: The server.

    Returns:
        Markdown: its name and transport, its command line or URL (and ``env``, headers,
        ``cwd``) as written, and the names of the environment variables it would get.
    """
    variables = server.variables()
    gets = (
        "Approved, it would get the values of your environment variables "
        + ", ".join(code_markdown(name) for name in variables)
        + "."
        if variables
        else "It reads none of your environment variables."
    )
    kind = f" ({plain_markdown(server.transport)})" if server.transport else ""
    written = code_block(server.written())
    return f"{code_markdown(server.name)}{kind}, as written:\n\n{written}\n\n{gets}"
