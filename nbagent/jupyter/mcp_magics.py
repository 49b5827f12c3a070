"""The ``%mcp`` line magic: list, add, remove and restart MCP servers, list their tools, and
approve or deny the servers of a project's ``.mcp.json``."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import display

from nbagent.core.errors import NbAgentError
from nbagent.core.markup import Markdown, code_markdown, plain_markdown, table_cell
from nbagent.jupyter.outputs import notices_markdown, show_notices
from nbagent.jupyter.session import Session
from nbagent.mcp.report import approval_request, problems, server_log, waiting_list

USAGE = (
    "%mcp list | log NAME | approve NAME...|--all | deny NAME...|--all | "
    "add [-e KEY=VALUE] NAME [--] COMMAND [ARGS...] | "
    "add -t http|sse [-H 'Name: value'] NAME URL | add-json NAME JSON | "
    "remove NAME | restart NAME | tools NAME"
)
"""The one-line summary shown with usage errors."""

FIX_CONFIG = "None of its servers started: fix it, then `%reload_ext nbagent`."
"""What to do about a configuration file that was not used at all."""

_OPTIONS = {
    "-t": "transport",
    "--transport": "transport",
    "-e": "env",
    "--env": "env",
    "-H": "header",
    "--header": "header",
    "-s": "scope",
    "--scope": "scope",
    "--url": "url",
}
"""The options of ``%mcp add`` (Claude Code's ``claude mcp add``, and ``--url``), by flag."""
_TRANSPORTS = ("stdio", "http", "sse")
_SCOPES = ("local", "project", "user")
_URL = re.compile(r"https?://")


@magics_class
class McpMagics(Magics):
    """``%mcp``, over one shell's :class:`~nbagent.jupyter.session.Session` (they hold nothing
    of their own).

    Args:
        shell: The IPython shell.
        session: The shell's session, whose :class:`~nbagent.mcp.McpManager` they drive.
    """

    def __init__(self, shell: Any, session: Session) -> None:
        super().__init__(shell)
        self.session = session

    @property
    def manager(self) -> Any:
        """The session's MCP manager."""
        return self.session.mcp_manager

    @line_magic
    def mcp(self, line: str) -> None:
        """Manage the MCP servers whose tools the agent can use (as deferred tools).

        Usage::

            %mcp list                                  servers, state, tool counts, problems
                                                       (configured ones left out: disabled,
                                                       or not started with their faults)
            %mcp log NAME                              a server's command, history, full
                                                       last error, stderr, tools left out
                                                       and schemas mended
            %mcp approve NAME... | --all               start servers of the project's
                                                       .mcp.json (the approval is kept)
            %mcp deny NAME... | --all                  keep them stopped, and stop asking
            %mcp add [-e KEY=VALUE] NAME [--] COMMAND [ARGS...]
                                                       start a stdio server
            %mcp add -t http|sse [-H 'Name: value'] NAME URL
                                                       connect a streamable-HTTP (or
                                                       HTTP+SSE) server
            %mcp add-json NAME JSON                    add an ``mcpServers`` entry as is
            %mcp remove NAME                           stop it and remove its tools
            %mcp restart NAME                          stop and start it again
            %mcp tools NAME                            its tools in the registry

        ``add`` takes the lines of Claude Code's ``claude mcp add``: options (``-t/--transport
        stdio|http|sse``, ``-e/--env KEY=VALUE``, ``-H/--header "Name: value"``, and
        ``-s/--scope``, which is ignored) before or after the name; ``--`` before a command
        whose own options would be read as these. A URL without ``--transport`` means http;
        ``--url URL`` and ``--header Name=value`` are understood too.

        Servers connect in the background: a cell never waits for them. Servers configured in
        ``~/.nbagent/mcp.json`` or ``c.NbAgent.mcp_config`` start when nbagent loads; those of
        a ``.mcp.json`` beside the notebook (a project's, perhaps cloned) wait until you have
        seen them in ``%mcp list`` and approved them by name, and start again at later loads
        while their entry is unchanged. What they report in the
        background (a failure, a restart, tools left out) is shown at the next ``%mcp``
        command or ``%%agent`` cell. As in every IPython line magic, ``{expr}`` and ``$name`` are
        filled in from the notebook's variables (``{sys.executable}``); ``${VAR}``, which
        names an environment variable, is left as written unless ``VAR`` is also a notebook
        variable: write ``${{VAR}}`` then.
        """
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"{exc}. {USAGE}") from None
        if not words:
            raise UsageError(USAGE)
        command, args = words[0], words[1:]
        handler = getattr(self, "_" + command.replace("-", "_"), None)
        if not command[:1].isalpha() or handler is None:
            raise UsageError(f"Unknown %mcp command {command!r}. {USAGE}")
        if command != "list":
            show_notices(self.manager.notices)
        try:
            handler(args)
        except NbAgentError as exc:
            raise UsageError(str(exc).splitlines()[0]) from None

    def _list(self, args: list[str]) -> None:
        _no_more(args, "list")
        statuses = self.manager.status()
        not_started = self.manager.not_started()
        fault = self.manager.config_fault()
        project = self.manager.project()
        listed = {s.name for s in statuses} | set(not_started)
        undecided = [
            server
            for server in (project.servers.values() if project is not None else [])
            if server.decision != "approved" and server.name not in listed
        ]
        starts = tuple(f"MCP server {code_markdown(name)} " for name in {s.name for s in statuses})
        news = [n for n in self.manager.notices.take() if not n.startswith(starts)]
        parts = [notices_markdown(news)] if news else []
        if fault:
            parts.append(f"> **Configuration not used**: {plain_markdown(fault)} {FIX_CONFIG}")
        if project is not None and project.fault:
            parts.append(f"> **MCP approvals not read**: {plain_markdown(project.fault)}")
        if not statuses and not not_started and not undecided:
            parts.append("No MCP server. Add one with `%mcp add NAME -- COMMAND ARGS...`.")
            display(Markdown("\n\n".join(parts)))
            return
        rows = (
            [
                f"| {code_markdown(s.name)} | {s.state} | {table_cell(s.transport)} | "
                f"{s.tool_count} | {s.pid or ''} | {s.restarts} | {table_cell(problems(s), 200)} |"
                for s in statuses
            ]
            + [
                f"| {code_markdown(name)} | {why if why == 'disabled' else 'not started'} "
                "|  |  |  |  | "
                f"{'' if why == 'disabled' else table_cell(why, 400)} |"
                for name, why in not_started.items()
            ]
            + [
                f"| {code_markdown(server.name)} | "
                f"{'denied' if server.decision else 'waiting for approval'} | "
                f"{table_cell(server.transport)} |  |  |  | "
                f"{code_markdown('%mcp approve ' + server.name)} |"
                for server in undecided
            ]
        )
        parts.append(
            "| server | state | transport | tools | pid | restarts | problem |\n"
            "|:--|:--|:--|--:|--:|--:|:--|\n" + "\n".join(rows)
        )
        if any(problems(s) for s in statuses):
            parts.append(
                "`%mcp log NAME` shows a server's history, its stderr and its tools left out."
            )
        waiting = [server for server in undecided if server.decision is None]
        if project is not None and waiting:
            parts.append(waiting_list(project, waiting))
        display(Markdown("\n\n".join(parts)))

    def _log(self, args: list[str]) -> None:
        name = _one_name(args, "log")
        not_started = self.manager.not_started()
        running = {s.name for s in self.manager.status()}
        project = self.manager.project()
        undecided = project.servers.get(name) if project is not None else None
        if name in not_started and name not in running:
            why = not_started[name]
            text = (
                "is disabled in its configuration"
                if why == "disabled"
                else f"was not started: {plain_markdown(why)}"
            )
            display(Markdown(f"{code_markdown(name)} {text}"))
            return
        if undecided is not None and undecided.decision != "approved" and name not in running:
            state = "is denied" if undecided.decision else "waits for your approval"
            display(
                Markdown(
                    f"{code_markdown(name)} {state} (a server of "
                    f"{plain_markdown(str(project.source))}, a project file; "
                    f"{code_markdown('%mcp approve ' + name)} starts it).\n\n"
                    + approval_request(undecided)
                )
            )
            return
        display(Markdown(server_log(self.manager.status_of(name))))

    def _approve(self, args: list[str]) -> None:
        outcome = self.manager.approve(_names(args, "approve"))
        started = [name for name, why in outcome.items() if why is None]
        parts = []
        if started:
            names = ", ".join(code_markdown(name) for name in started)
            parts.append(
                f"Approved {names}: connecting in the background; `%mcp list` shows the state. "
                f"The approval is kept in {plain_markdown(str(self.manager.approvals.path))} "
                "for these very entries: a changed entry is asked about again."
            )
        parts += [
            f"> Approved {code_markdown(name)}, but it was not started: {plain_markdown(why)} "
            "Once that is fixed, `%reload_ext nbagent` starts it (a changed entry is asked about "
            "again)."
            for name, why in outcome.items()
            if why is not None
        ]
        display(Markdown("\n\n".join(parts)))

    def _deny(self, args: list[str]) -> None:
        outcome = self.manager.deny(_names(args, "deny"))
        names = ", ".join(code_markdown(name) for name in outcome)
        stopped = [f"{code_markdown(name)}" for name, running in outcome.items() if running]
        stop = f" Stopped {', '.join(stopped)}." if stopped else ""
        display(
            Markdown(
                f"Denied {names}: not started, and not asked about again while the entry stays "
                f"the same; `%mcp approve NAME` starts one after all.{stop}"
            )
        )

    def _add(self, args: list[str]) -> None:
        line = _read_add(args)
        name, entry = _entry(line)
        self._start(name, entry, line.scope)

    def _add_json(self, args: list[str]) -> None:
        line = _read_add(args)
        example = """%mcp add-json NAME '{"type": "http", "url": "https://..."}'"""
        if len(line.words) != 2 or line.transport or line.url or line.env or line.headers:
            raise UsageError(f"%mcp add-json takes a name and one JSON entry: {example}.")
        name, text = line.words
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"%mcp add-json {name}: the entry is not JSON ({exc}); quote it whole: {example}."
            ) from None
        self._start(name, entry, line.scope)

    def _start(self, name: str, entry: Any, scope: str | None) -> None:
        """Hand an entry to the manager and say so (and that a scope was ignored)."""
        self.manager.add(name, entry)
        ignored = (
            f" `--scope {scope}` is ignored: a server added with `%mcp` lasts as long as this "
            "kernel; to keep it, put it in `.mcp.json` or `~/.nbagent/mcp.json`."
            if scope
            else ""
        )
        display(
            Markdown(
                f"Connecting {code_markdown(name)} in the background; `%mcp list` shows its "
                f"state.{ignored}"
            )
        )

    def _remove(self, args: list[str]) -> None:
        name = _one_name(args, "remove")
        self.manager.remove(name)
        display(Markdown(f"Removed {code_markdown(name)} and its tools."))

    def _restart(self, args: list[str]) -> None:
        name = _one_name(args, "restart")
        self.manager.restart(name)
        display(Markdown(f"Restarting {code_markdown(name)} in the background."))

    def _tools(self, args: list[str]) -> None:
        name = _one_name(args, "tools")
        tools = self.manager.tools(name)
        if not tools:
            display(Markdown(f"{code_markdown(name)} has no tools in the registry (yet)."))
            return
        rows = "\n".join(
            f"| {code_markdown(t.name)} | {'yes' if t.read_only else ''} | "
            f"{table_cell(t.description)} |"
            for t in tools
        )
        display(Markdown(f"| tool | read-only | description |\n|---|---|---|\n{rows}"))


def _one_name(args: list[str], command: str) -> str:
    """The single server name a command takes."""
    if len(args) != 1:
        raise UsageError(f"%mcp {command} takes one server name. {USAGE}")
    return args[0]


def _names(args: list[str], command: str) -> list[str] | None:
    """The server names ``approve`` or ``deny`` takes; ``None`` for ``--all``."""
    if args == ["--all"]:
        return None
    if not args or "--all" in args:
        raise UsageError(
            f"%mcp {command} takes server names or --all: %mcp {command} NAME [NAME...]; "
            "`%mcp list` shows the servers waiting for approval."
        )
    return args


def approval_notice(manager: Any) -> str | None:
    """Say, in the load cell, which servers of a project file wait for approval.

    Args:
        manager: The kernel's :class:`~nbagent.mcp.McpManager`, its configuration started.

    Returns:
        A short quoted notice naming them and what to run (and why the approvals file was
        not read, if it was not), or ``None`` when no server waits.
    """
    project = manager.project()
    if project is None or not project.deciding(None):
        return None
    names = ", ".join(f"{code_markdown(server.name)}" for server in project.deciding(None))
    where = plain_markdown(str(project.source))
    waiting = (
        f"> **MCP servers waiting for your approval** (in {where}): {names}. `%mcp list` "
        "shows what each would run; `%mcp approve NAME` starts one."
    )
    lines = [waiting]
    if project.fault:
        lines.append(f"> **MCP approvals not read**: {plain_markdown(project.fault)}")
    return "\n>\n".join(lines)


def _no_more(args: list[str], command: str) -> None:
    if args:
        raise UsageError(f"%mcp {command} takes no argument. {USAGE}")


@dataclass
class _AddLine:
    """An ``%mcp add`` line, read: its words (name, command or URL, arguments) and options."""

    words: list[str] = field(default_factory=list)
    transport: str | None = None
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    scope: str | None = None


def _read_add(args: list[str]) -> _AddLine:
    """Read the words and options of ``%mcp add`` (or ``add-json``), options anywhere before ``--``.

    Args:
        args: The words after ``add``.

    Raises:
        UsageError: An option is unknown, lacks its value, or has a bad one.
    """
    line = _AddLine()
    rest = iter(args)
    for word in rest:
        if word == "--":
            line.words.extend(rest)
            break
        if not word.startswith("-") or word == "-":
            line.words.append(word)
            continue
        flag, equals, value = word.partition("=") if word.startswith("--") else (word, "", "")
        option = _OPTIONS.get(flag)
        if option is None:
            raise UsageError(
                f"%mcp add has no option {flag}; if it is the server's, put -- before the "
                "command: %mcp add NAME -- COMMAND ARGS..."
            )
        if not equals:
            value = next(rest, "")
            if not value:
                raise UsageError(f"{flag} needs a value. {USAGE}")
        if option == "transport" and value not in _TRANSPORTS:
            raise UsageError(f"--transport takes stdio, http or sse, not {value!r}.")
        if option == "scope" and value not in _SCOPES:
            raise UsageError(f"--scope takes local, project or user, not {value!r}.")
        if option == "env":
            key, sign, variable = value.partition("=")
            if not key or not sign:
                raise UsageError(f"-e takes KEY=VALUE, not {value!r}: write -e API_KEY=xyz.")
            line.env[key] = variable
        elif option == "header":
            line.headers.update([_header(value)])
        else:
            setattr(line, option, value)
    return line


def _header(value: str) -> tuple[str, str]:
    """Split a ``--header`` value, ``Name: value`` (as curl writes it) or ``Name=value``."""
    match = re.fullmatch(r"([^:=]*)[:=](.*)", value, re.DOTALL)
    if not match or not match[1].strip():
        raise UsageError(
            f"--header takes 'Name: value', not {value!r}: write -H 'Authorization: Bearer TOKEN'."
        )
    return match[1].strip(), match[2].strip()


def _entry(line: _AddLine) -> tuple[str, dict[str, Any]]:
    """Turn a read ``%mcp add`` line into a server's name and configuration entry.

    Raises:
        UsageError: No name, no command or URL, or options that do not fit the transport.
    """
    if not line.words:
        raise UsageError(
            "%mcp add needs a server name: %mcp add NAME -- COMMAND [ARGS...] or "
            "%mcp add --transport http NAME URL."
        )
    name, target = line.words[0], line.words[1:]
    if line.url is not None and target:
        raise UsageError(f"%mcp add {name}: give the URL once, after the name or after --url.")
    target = [line.url] if line.url is not None else target
    if not target:
        raise UsageError(
            f"%mcp add {name}: give a command (%mcp add {name} -- COMMAND [ARGS...]) or a URL "
            f"(%mcp add --transport http {name} URL)."
        )
    is_url = bool(_URL.match(target[0]))
    transport = line.transport or ("http" if is_url or line.url is not None else "stdio")
    if transport == "stdio":
        if is_url:
            raise UsageError(
                f"--transport stdio runs a command, but {target[0]!r} is a URL: write "
                "--transport http (or sse) for a remote server."
            )
        if line.headers:
            raise UsageError(
                "--header is for http and sse servers; give a stdio server variables with "
                "-e KEY=VALUE."
            )
        return name, {"command": target[0], "args": target[1:], "env": line.env}
    if not is_url:
        raise UsageError(
            f"--transport {transport} connects to a URL, but {target[0]!r} is not one: write "
            f"%mcp add --transport {transport} {name} https://..., or %mcp add {name} -- "
            "COMMAND [ARGS...] for a local server."
        )
    if len(target) > 1:
        raise UsageError(
            f"--transport {transport} takes one URL, not arguments after it: "
            f"{shlex.join(target[1:])}."
        )
    if line.env:
        raise UsageError(
            f"-e sets a stdio server's environment; send an {transport} server a header with "
            "-H 'Name: value'."
        )
    return name, {"type": transport, "url": target[0], "headers": line.headers}
