"""The ``%mcp`` line magic: list, add, remove and restart MCP servers, and list their tools."""

from __future__ import annotations

import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import display

from nbagent.display import Markdown, table_cell
from nbagent.errors import NbAgentError

USAGE = (
    "%mcp list | add NAME -- COMMAND [ARGS...] | add NAME --url URL [--header K=V ...] | "
    "remove NAME | restart NAME | tools NAME"
)
"""The one-line summary shown with every usage error."""


@magics_class
class McpMagics(Magics):
    """``%mcp``, bound to one shell and one :class:`~nbagent.mcp.McpManager`.

    Args:
        shell: The IPython shell.
        manager: The kernel's MCP manager.
    """

    def __init__(self, shell: Any, manager: Any) -> None:
        super().__init__(shell)
        self.manager = manager

    @line_magic
    def mcp(self, line: str) -> None:
        """Manage the MCP servers whose tools the agent can use (as deferred tools).

        Usage::

            %mcp list                                  servers, state, tool counts, last error
                                                       (configured ones left out: disabled,
                                                       or not started with their faults)
            %mcp add NAME -- COMMAND [ARGS...]         start a stdio server
            %mcp add NAME --url URL [--header K=V]     connect a streamable-HTTP server
            %mcp remove NAME                           stop it and remove its tools
            %mcp restart NAME                          stop and start it again
            %mcp tools NAME                            its tools in the registry

        Servers connect in the background: a cell never waits for them. Servers configured in
        ``.mcp.json`` (beside the notebook), ``~/.nbagent/mcp.json`` or
        ``c.NbAgent.mcp_config`` start when nbagent loads.
        """
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"{exc}. {USAGE}") from None
        if not words:
            raise UsageError(USAGE)
        command, args = words[0], words[1:]
        handler = getattr(self, f"_{command}", None)
        if command.startswith("_") or handler is None:
            raise UsageError(f"Unknown %mcp command {command!r}. {USAGE}")
        try:
            handler(args)
        except NbAgentError as exc:
            raise UsageError(str(exc).splitlines()[0]) from None

    def _list(self, args: list[str]) -> None:
        _no_more(args, "list")
        statuses = self.manager.status()
        not_started = self.manager.not_started()
        if not statuses and not not_started:
            display(Markdown("No MCP server. Add one with `%mcp add NAME -- COMMAND ARGS...`."))
            return
        rows = "\n".join(
            [
                f"| `{s.name}` | {s.state} | {s.transport} | {s.tool_count} | {s.pid or ''} | "
                f"{s.restarts} | {table_cell(s.last_error)} |"
                for s in statuses
            ]
            + [
                f"| `{name}` | {why if why == 'disabled' else 'not started'} |  |  |  |  | "
                f"{'' if why == 'disabled' else table_cell(why, 400)} |"
                for name, why in not_started.items()
            ]
        )
        display(
            Markdown(
                "| server | state | transport | tools | pid | restarts | last error |\n"
                f"|---|---|---|---|---|---|---|\n{rows}"
            )
        )

    def _add(self, args: list[str]) -> None:
        if not args or args[0].startswith("-"):
            raise UsageError(f"%mcp add needs a server name. {USAGE}")
        name, rest = args[0], args[1:]
        if rest[:1] == ["--"] and len(rest) > 1:
            entry: dict[str, Any] = {"command": rest[1], "args": rest[2:]}
        elif rest[:1] == ["--url"] and len(rest) > 1:
            entry = {"type": "http", "url": rest[1], "headers": _headers(rest[2:])}
        else:
            raise UsageError(f"%mcp add {name}: give '-- COMMAND ARGS' or '--url URL'. {USAGE}")
        self.manager.add(name, entry)
        display(Markdown(f"Connecting `{name}` in the background; `%mcp list` shows its state."))

    def _remove(self, args: list[str]) -> None:
        name = _one_name(args, "remove")
        self.manager.remove(name)
        display(Markdown(f"Removed `{name}` and its tools."))

    def _restart(self, args: list[str]) -> None:
        name = _one_name(args, "restart")
        self.manager.restart(name)
        display(Markdown(f"Restarting `{name}` in the background."))

    def _tools(self, args: list[str]) -> None:
        name = _one_name(args, "tools")
        tools = self.manager.tools(name)
        if not tools:
            display(Markdown(f"`{name}` has no tools in the registry (yet)."))
            return
        rows = "\n".join(
            f"| `{t.name}` | {'yes' if t.read_only else ''} | {table_cell(t.description)} |"
            for t in tools
        )
        display(Markdown(f"| tool | read-only | description |\n|---|---|---|\n{rows}"))


def _one_name(args: list[str], command: str) -> str:
    """The single server name a command takes."""
    if len(args) != 1:
        raise UsageError(f"%mcp {command} takes one server name. {USAGE}")
    return args[0]


def _no_more(args: list[str], command: str) -> None:
    if args:
        raise UsageError(f"%mcp {command} takes no argument. {USAGE}")


def _headers(args: list[str]) -> dict[str, str]:
    """``--header K=V`` pairs."""
    headers: dict[str, str] = {}
    pairs = iter(args)
    for flag in pairs:
        value = next(pairs, "")
        if flag != "--header" or "=" not in value:
            raise UsageError(f"Expected --header NAME=VALUE, got {flag} {value}. {USAGE}")
        key, _, header = value.partition("=")
        headers[key] = header
    return headers
