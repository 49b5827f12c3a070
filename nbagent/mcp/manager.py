"""McpManager: the kernel's MCP servers, on one background event-loop thread.

Nothing here waits for a server. :meth:`McpManager.start` and :meth:`McpManager.add`
return at once; each server connects on the manager's thread and its tools appear in the
registry when it is up (deferred, named ``mcp__<server>__<tool>``), change when it says
its tools changed, and go when it goes. The ``mcp`` SDK itself (about 1.5 s to import) is
imported on that thread too::

    manager = McpManager(nbagent.registry)
    manager.start()                    # ./.mcp.json, else ~/.nbagent/mcp.json
    manager.project()                  # ./.mcp.json's servers: which wait for approval
    manager.approve(["git"])           # kept in ~/.nbagent/mcp-approvals.json, and started
    manager.add("time", {"command": "uvx", "args": ["mcp-server-time"]})
    manager.wait_ready(30)             # tests and scripts; notebooks need not wait
    manager.status()                   # [ServerStatus(name='time', state='connected', ...)]
    manager.close()                    # every server process ended, the thread joined
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import NbAgentError, ToolError
from nbagent.core.loopthread import LoopThread
from nbagent.core.notices import Notices
from nbagent.core.tool import Tool
from nbagent.mcp.approvals import Approvals, Decision, ProjectServer, ProjectServers, screen
from nbagent.mcp.budget import DEFAULT_MAX_TOOLS, ToolBudget
from nbagent.mcp.config import PROJECT_FILE, HttpSpec, McpConfig, ServerSpec, StdioSpec
from nbagent.mcp.config_file import (
    check_names,
    fault_text,
    find_config,
    load_config,
    parse_config,
    parse_server,
    read_file,
)
from nbagent.mcp.errors import ApprovalsError, McpConfigError, UnknownServerError
from nbagent.mcp.state import ConnectionSettings, RestartPolicy, ServerStatus

if TYPE_CHECKING:
    from nbagent.mcp.connection import Connection


@dataclass
class _Entry:
    """A configured server: its spec, and its connection once the loop has built it."""

    spec: ServerSpec
    """How to reach it."""
    future: concurrent.futures.Future[None] | None = None
    """The run of its connection on the loop."""
    connection: Connection | None = None
    """Built on the loop when the run starts."""
    cancelled: bool = False
    """Removed, restarted or shut down (set on the loop)."""


class McpManager:
    """Connects MCP servers in the background and keeps their tools in a registry.

    Args:
        registry: Where the tools go; ``nbagent.registry`` by default.
        connect_timeout: Seconds a server may take to start, shake hands and list its tools
            before it is reported ``failed``.
        call_timeout: Seconds a tool call may take.
        poll_interval: Seconds between re-listings of HTTP servers that send no change
            events.
        probe_interval: Seconds between liveness probes of HTTP servers.
        max_output_chars: Characters of text one tool result may send to the model.
        restart: When a server that went away is restarted.
        approvals: The person's decisions about project servers; the file of
            :func:`~nbagent.mcp.approvals.approvals_path` by default.
        max_tools: Tools all servers together may register (the API takes at most 10,000
            deferred tools in a request): servers take their share in the order they were
            added (the configuration's), each at most its entry's ``max_tools``; the tools
            past it are left out, with a notice.
    """

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        connect_timeout: float = 30.0,
        call_timeout: float = 300.0,
        poll_interval: float = 30.0,
        probe_interval: float = 5.0,
        max_output_chars: int = 100_000,
        restart: RestartPolicy | None = None,
        approvals: Approvals | None = None,
        max_tools: int = DEFAULT_MAX_TOOLS,
    ) -> None:
        if registry is None:
            from nbagent.catalogue.process import process_registry

            registry = process_registry()
        self.registry = registry
        self.settings = ConnectionSettings(
            connect_timeout=connect_timeout,
            call_timeout=call_timeout,
            poll_interval=poll_interval,
            probe_interval=probe_interval,
            max_output_chars=max_output_chars,
            restart=restart or RestartPolicy(),
        )
        self._entries: dict[str, _Entry] = {}
        self._not_started: dict[str, str] = {}
        self._config_fault: str | None = None
        self.approvals = approvals if approvals is not None else Approvals()
        """The person's decisions about project servers."""
        self._project: ProjectServers | None = None
        self._project_started: list[str] = []
        self.notices = Notices()
        """What the servers have to tell the user (failures, restarts, tools left out), kept
        until the next ``%%agent`` cell or ``%mcp`` command shows it."""
        self._changed = threading.Condition()
        self._budget = ToolBudget(max_tools, self._order, self.notices)
        self._background = LoopThread("nbagent-mcp")
        self._closed = False

    # -- configuration ----------------------------------------------------------------------

    def start(
        self,
        config: McpConfig | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        *,
        folder: str | os.PathLike[str] | None = None,
    ) -> McpConfig | None:
        """Start the servers of a configuration, each in the background; returns at once.

        Args:
            config: A parsed configuration, a ``{"mcpServers": ...}`` mapping, or a file;
                by default the file :func:`~nbagent.mcp.config_file.find_config` finds.
            folder: The notebook's folder, where the lookup starts (the current folder by
                default).

        Its disabled entries and its bad ones are not started; :meth:`not_started` says which
        and why, until the next call. A ``.mcp.json`` found in the folder is the project's: of
        its servers only those the person approved start, the others wait (:meth:`project`,
        :meth:`approve`), their ``${VAR}`` not expanded. The servers a previous project file
        started are stopped first.

        Returns:
            The configuration started (its faults in ``problems``), or ``None`` when no file
            was found.

        Raises:
            McpConfigError: The file is not a configuration (not JSON, no ``mcpServers``
                object), or names a server already running (nothing is started then).
        """
        with self._changed:
            self._not_started, self._config_fault, self._project = {}, None, None
            previous, self._project_started = self._project_started, []
        for name in previous:
            with suppress(UnknownServerError):
                self.remove(name)
        try:
            if config is None:
                path = find_config(folder)
                if path is None:
                    return None
                config = self._screen(path) if path.name == PROJECT_FILE else load_config(path)
            elif isinstance(config, str | os.PathLike):
                config = load_config(config)
            elif not isinstance(config, McpConfig):
                config = parse_config(config)
        except McpConfigError as exc:
            with self._changed:
                self._config_fault = str(exc)
            raise
        with self._changed:
            for name in config.servers:
                if name in self._entries:
                    raise McpConfigError("is already running; remove it first.", server=name)
            self._not_started = {name: "disabled" for name in config.disabled}
            self._not_started.update(_left_out(config))
            for name, spec in config.servers.items():
                self.add(name, spec)
            if self._project is not None:
                self._project_started = list(config.servers)
        return config

    def _screen(self, path: Path) -> McpConfig:
        """Read a project file: keep its servers' decisions, parse only the approved entries."""
        project, startable = screen(path, read_file(path), self.approvals)
        config = parse_config(startable, source=path)
        with self._changed:
            self._project = project
        return config

    def project(self) -> ProjectServers | None:
        """Report the servers of the project file started last, each with the person's decision.

        Returns:
            Its servers (waiting, approved or denied) and why the decisions kept could not be
            read, if so; ``None`` when the configuration was not a project's ``.mcp.json``.
        """
        with self._changed:
            return self._project

    def approve(self, names: Sequence[str] | None = None) -> dict[str, str | None]:
        """Approve servers of the project file and start them, each in the background.

        The approval is kept (for this file and these very entries) before anything starts;
        only then are the entries' ``${VAR}`` expanded.

        Args:
            names: The servers; every one waiting for approval when ``None`` (not the
                denied ones).

        Returns:
            By server approved: ``None`` when it is connecting, else why it was not started
            (the faults of its entry, also in :meth:`not_started`).

        Raises:
            UnknownServerError: No project file, or a name is not one of its servers.
            NbAgentError: A server is approved already, or none waits (``names`` is ``None``).
            ApprovalsError: The approval could not be kept; nothing started.
        """
        with self._changed:
            project, chosen = self._choose(names, "approved")
            self._record(project, chosen, "approved")
            self._project = project.decided([server.name for server in chosen], "approved")
            config = parse_config(
                {"mcpServers": {server.name: server.entry for server in chosen}},
                source=project.source,
            )
            left_out = _left_out(config)
            for name, spec in config.servers.items():
                try:
                    self.add(name, spec)
                except McpConfigError as exc:  # the name of a server added with %mcp add
                    left_out[name] = fault_text(exc)
                else:
                    self._project_started.append(name)
            self._not_started.update(left_out)
        return {server.name: left_out.get(server.name) for server in chosen}

    def deny(self, names: Sequence[str] | None = None) -> dict[str, bool]:
        """Deny servers of the project file: they stop if they run, and are not asked about
        again (until their entry changes, or :meth:`approve` names them).

        Args:
            names: The servers; every one not denied yet when ``None``.

        Returns:
            By server denied: whether it was running (it is stopped now).

        Raises:
            UnknownServerError: No project file, or a name is not one of its servers.
            NbAgentError: A server is denied already, or all are (``names`` is ``None``).
            ApprovalsError: The decision could not be kept; nothing was stopped.
        """
        with self._changed:
            project, chosen = self._choose(names, "denied")
            self._record(project, chosen, "denied")
            denied = [server.name for server in chosen]
            self._project = project.decided(denied, "denied")
            stopping = [n for n in self._project_started if n in denied and n in self._entries]
            self._project_started = [n for n in self._project_started if n not in denied]
            for name in denied:
                self._not_started.pop(name, None)
        for name in stopping:
            with suppress(UnknownServerError):  # removed meanwhile with %mcp remove
                self.remove(name)
        return {name: name in stopping for name in denied}

    def _record(
        self, project: ProjectServers, chosen: list[ProjectServer], decision: Decision
    ) -> None:
        """Keep a decision, or say it was not kept and what to do."""
        try:
            self.approvals.record(project.source, chosen, decision)
        except ApprovalsError as exc:
            verb = "approve" if decision == "approved" else "deny"
            raise ApprovalsError(
                f"{exc}: the decision was not kept, and nothing started or stopped; fix the "
                f"file or move it away, then `%mcp {verb} NAME` again."
            ) from exc

    def _choose(
        self, names: Sequence[str] | None, decision: Decision
    ) -> tuple[ProjectServers, list[ProjectServer]]:
        """Find the project servers a decision is about (call with the lock held).

        Args:
            names: The servers named; ``None`` for all those it applies to.
            decision: ``approved`` (``None`` means the waiting ones) or ``denied`` (``None``
                means all not denied yet).
        """
        verb = "approve" if decision == "approved" else "deny"
        project = self._project
        if project is None:
            raise UnknownServerError(
                "No project .mcp.json was found when nbagent loaded: only the servers of one "
                "need approval (those of ~/.nbagent/mcp.json, c.NbAgent.mcp_config and "
                "%mcp add start without it)."
            )
        if names is None:
            chosen = (
                project.deciding(None)
                if decision == "approved"
                else [s for s in project.servers.values() if s.decision != "denied"]
            )
            if not chosen:
                raise NbAgentError(
                    f"No server of {project.source} is left to {verb}; "
                    f"`%mcp list` shows each one's state."
                )
            return project, chosen
        known = ", ".join(project.servers) or "none"
        chosen = []
        for name in dict.fromkeys(names):
            server = project.servers.get(name)
            if server is None:
                raise UnknownServerError(
                    f"{project.source} has no server {name!r} to {verb} (its servers: {known})."
                )
            if server.decision == decision:
                raise NbAgentError(
                    f"`{name}` is {decision} already; `%mcp list` shows each server's state."
                )
            chosen.append(server)
        return project, chosen

    def config_fault(self) -> str | None:
        """Say why the last configuration started was not used at all, if it was not.

        Returns:
            E.g. ``MCP configuration (in .mcp.json): is not valid JSON: ...``, or ``None``.
        """
        with self._changed:
            return self._config_fault

    def not_started(self) -> dict[str, str]:
        """Report the servers of the last configuration started that were left out.

        Returns:
            Why, by server name: ``"disabled"``, or the faults of its entry (each naming the
            field and what to write instead).
        """
        with self._changed:
            return dict(self._not_started)

    def add(self, name: str, spec: ServerSpec | Mapping[str, Any]) -> None:
        """Start one server in the background; returns at once.

        Args:
            name: The server's name (its tools are ``mcp__<name>__<tool>``).
            spec: A spec, or a configuration entry such as ``{"command": "uvx", "args":
                ["mcp-server-time"]}`` or ``{"type": "http", "url": ...}``.

        Raises:
            McpConfigError: The entry is bad, or the name is taken.
            NbAgentError: The manager is closed.
        """
        if not isinstance(spec, StdioSpec | HttpSpec):
            spec = parse_server(name, spec)
        with self._changed:
            if self._closed:
                raise NbAgentError("This MCP manager is closed; make a new one.")
            if name in self._entries:
                raise McpConfigError("is already running; remove it first.", server=name)
            check_names({**{n: e.spec for n, e in self._entries.items()}, name: spec})
            entry = self._entries[name] = _Entry(spec)
            self._not_started.pop(name, None)
            entry.future = asyncio.run_coroutine_threadsafe(
                self._run(name, entry), self._ensure_loop()
            )

    def remove(self, name: str, timeout: float = 10.0) -> None:
        """Stop a server: its tools leave the registry and its process ends.

        Args:
            name: The server's name.
            timeout: Seconds to wait for the shutdown at most.

        Raises:
            UnknownServerError: No server has that name.
        """
        with self._changed:
            entry = self._entry(name)
            del self._entries[name]
            self._changed.notify_all()
        self._stop([entry], timeout)

    def restart(self, name: str) -> None:
        """Stop a server and start it again, with a fresh restart count; returns at once.

        Args:
            name: The server's name.

        Raises:
            UnknownServerError: No server has that name.
        """
        with self._changed:
            old = self._entry(name)
            entry = self._entries[name] = _Entry(old.spec)
            loop = self._ensure_loop()
            loop.call_soon_threadsafe(self._cancel, old)
            entry.future = asyncio.run_coroutine_threadsafe(
                self._run(name, entry, after=old.future), loop
            )

    # -- what is there ----------------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        """Report every server, in the order they were added."""
        with self._changed:
            entries = list(self._entries.items())
        return [self._status(name, entry) for name, entry in entries]

    def status_of(self, name: str) -> ServerStatus:
        """Report one server.

        Args:
            name: The server's name.

        Raises:
            UnknownServerError: No server has that name.
        """
        with self._changed:
            entry = self._entry(name)
        return self._status(name, entry)

    def tools(self, name: str) -> list[Tool]:
        """Return a server's tools that are in the registry now.

        Args:
            name: The server's name.

        Raises:
            UnknownServerError: No server has that name.
        """
        with self._changed:
            connection = self._entry(name).connection
        return connection.tools() if connection else []

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until no server is connecting (each is connected, failed or stopped).

        Args:
            timeout: Seconds to wait at most; forever when ``None``.

        Returns:
            True when every server settled, False on timeout.
        """
        with self._changed:
            return self._changed.wait_for(
                lambda: all(s.state != "connecting" for s in self.status()), timeout
            )

    def list_resources(self, server: str, timeout: float = 30.0) -> list[Any]:
        """List a server's resources (every page).

        Args:
            server: The server's name.
            timeout: Seconds to wait at most.

        Returns:
            The ``mcp_types.Resource`` entries (``uri``, ``name``, ``mime_type``, ...).

        Raises:
            UnknownServerError: No server has that name.
            ToolError: The server is not connected or refused.
            TimeoutError: It did not answer in time.
        """
        return self._connection(server).list_resources(timeout)

    def read_resource(
        self, server: str, uri: str, timeout: float = 30.0
    ) -> str | list[dict[str, Any]]:
        """Read a resource as tool_result content.

        Args:
            server: The server's name.
            uri: The resource's URI.
            timeout: Seconds to wait at most.

        Returns:
            Text, or API content blocks (text, image, document).

        Raises:
            UnknownServerError: No server has that name.
            ToolError: The server is not connected or refused.
            TimeoutError: It did not answer in time.
        """
        return self._connection(server).read_resource(uri, timeout)

    # -- shutdown ---------------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> None:
        """Stop every server and the thread (idempotent); no server process outlives it.

        Args:
            timeout: Seconds to wait for the servers to stop at most.
        """
        with self._changed:
            if self._closed:
                return
            self._closed = True
            entries = list(self._entries.values())
            self._entries.clear()
        atexit.unregister(self.close)
        self._stop(entries, timeout)
        self._background.stop(timeout)

    def __enter__(self) -> Self:
        """Use the manager as a context manager that closes it."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the manager."""
        self.close()

    # -- the loop ---------------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        """Start the manager's thread and event loop on first use."""
        if not self._background.started:
            atexit.register(self.close)
        return self._background.loop()

    async def _run(
        self, name: str, entry: _Entry, after: concurrent.futures.Future[None] | None = None
    ) -> None:
        """Build the connection (importing the SDK here, off the caller's thread) and run it."""
        if after is not None:
            with suppress(Exception):
                await asyncio.wrap_future(after)
        if entry.cancelled:
            return
        import nbagent.core.pydantic_whole  # noqa: F401 - before the MCP SDK's pydantic (see there)
        from nbagent.mcp.connection import Connection

        entry.connection = Connection(
            name,
            entry.spec,
            self.registry,
            asyncio.get_running_loop(),
            self.settings,
            self._notify,
            self.notices,
            self._budget,
        )
        await entry.connection.run()

    @staticmethod
    def _cancel(entry: _Entry) -> None:
        """Stop an entry's run (on the loop)."""
        entry.cancelled = True
        if entry.connection is not None:
            entry.connection.cancel()

    def _stop(self, entries: list[_Entry], timeout: float) -> None:
        """Cancel entries' runs and wait for them to end."""
        if not self._background.started:
            return
        loop = self._background.loop()
        for entry in entries:
            loop.call_soon_threadsafe(self._cancel, entry)
        futures = [entry.future for entry in entries if entry.future is not None]
        concurrent.futures.wait(futures, timeout)

    def _order(self) -> list[str]:
        """Name the servers in the order they were added (the configuration's)."""
        with self._changed:
            return list(self._entries)

    def _notify(self) -> None:
        """Wake :meth:`wait_ready` (a connection's state changed)."""
        with self._changed:
            self._changed.notify_all()

    def _entry(self, name: str) -> _Entry:
        """Find the entry of a name (call with the lock held)."""
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self._entries) or "none"
            raise UnknownServerError(f"No MCP server named {name!r} (servers: {known}).") from None

    def _connection(self, name: str) -> Connection:
        """Find the connection of a server that has one."""
        with self._changed:
            connection = self._entry(name).connection
        if connection is None:
            raise ToolError(f"MCP server {name!r} is still starting.")
        return connection

    def _status(self, name: str, entry: _Entry) -> ServerStatus:
        """Report an entry, also before its connection is built."""
        if entry.connection is not None:
            return entry.connection.status()
        state = "stopped" if entry.cancelled else "connecting"
        return ServerStatus(
            name=name,
            state=state,
            transport=entry.spec.transport,
            tool_count=0,
            target=entry.spec.describe(),
        )


def _left_out(config: McpConfig) -> dict[str, str]:
    """Say why each bad entry of a configuration is left out: its faults, in one line."""
    return {
        str(problem.server): "; ".join(
            fault_text(fault, config.source) for fault in config.faults(str(problem.server))
        )
        for problem in config.problems
    }
