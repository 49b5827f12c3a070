"""One MCP server: its connection, its tools in the registry, its restarts.

A :class:`Connection` lives on the manager's event loop. :meth:`Connection.run` connects
(start-up, handshake and first tool listing within ``connect_timeout``), registers the
tools as one batch, then keeps them current until the connection is lost:

- tool-list changes arrive as ``notifications/tools/list_changed`` (protocol 2025 and
  earlier) or on a ``subscriptions/listen`` stream (protocol 2026-07-28); either re-lists
  the tools (every page) and updates the registry with what changed;
- a loss is noticed from the process's exit (stdio), the end of the listen stream, a
  failed re-listing (HTTP servers without change events are re-listed every
  ``poll_interval`` seconds), or an HTTP server's silence to the liveness probe sent every
  ``probe_interval`` seconds;
- on loss the tools are unregistered and the server is restarted as
  :class:`~nbagent.mcp.state.RestartPolicy` says.

Tool calls come from other threads (:meth:`Connection.call`): each is submitted to the
loop and waited for with the per-call timeout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ToolError
from nbagent.core.markup import code_markdown, plain_markdown
from nbagent.core.notices import Notices
from nbagent.core.secrets import get_logger
from nbagent.core.tool import Tool, ToolResult
from nbagent.mcp.budget import ToolBudget
from nbagent.mcp.config import HttpSpec, ServerSpec, StdioSpec
from nbagent.mcp.content import resource_content, tool_result
from nbagent.mcp.listing import ListingGuard
from nbagent.mcp.state import ConnectionSettings, ServerState, ServerStatus, error_line
from nbagent.mcp.stdio import StdioProcess
from nbagent.mcp.tools import Listing, ServerTools, build_tools
from nbagent.mcp.transports import HttpStatus, describe_failure, http_transport

logger = get_logger("nbagent.mcp")

MAX_PAGES = 1000
"""Pages of a listing followed at most (a server whose cursors never end is cut off)."""

HISTORY_LINES = 100
"""Events of a server's life kept for ``%mcp log``."""

GRACE_FOR_REASON = 1.0
"""Seconds a call that lost its connection waits to learn why (e.g. the exit code)."""

_T = TypeVar("_T")


class Connection:
    """One configured MCP server, kept connected on the manager's event loop.

    Build it on the loop (it makes anyio events); read :meth:`status` and :meth:`tools`,
    and :meth:`call` its tools, from any other thread.

    Args:
        name: The server's name (its tools are ``mcp__<name>__<tool>``).
        spec: How to reach it.
        registry: Where its tools go.
        loop: The manager's event loop, on which :meth:`run` runs.
        settings: Timeouts and limits.
        on_change: Called, from the loop thread, after every change of state.
        notices: Where failures, restarts and tools left out are told to the user.
        budget: How many of its tools it may register (shared with the other servers).
    """

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        registry: ToolRegistry,
        loop: asyncio.AbstractEventLoop,
        settings: ConnectionSettings,
        on_change: Callable[[], None],
        notices: Notices,
        budget: ToolBudget,
    ) -> None:
        self.name = name
        self.spec = spec
        self.registry = registry
        self.loop = loop
        self.settings = settings
        self._on_change = on_change
        self._notices = notices
        self._budget = budget
        self._listing: Listing | None = None
        self._history: deque[str] = deque(maxlen=HISTORY_LINES)
        self._lock = threading.Lock()
        self._state: ServerState = "connecting"
        self._error: str | None = None
        self._restarts = 0
        self._protocol: str | None = None
        self._connect_seconds: float | None = None
        self._skipped: tuple[str, ...] = ()
        self._adjusted: tuple[str, ...] = ()
        self._mended: tuple[str, ...] = ()
        self._past_limit = 0
        self._with_output_schema: set[str] = set()
        self._guard = ListingGuard(lambda: None)
        self._http_status = HttpStatus()
        self._tools = ServerTools(name, registry)
        self._client: Client | None = None
        self._process: StdioProcess | None = None
        self._ever_connected = False
        self._connected_at: float | None = None
        self._lost = anyio.Event()
        self._lost_reason = ""
        self._relist_wanted = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._stop_requested = False

    # -- what other threads read ------------------------------------------------------------

    def status(self) -> ServerStatus:
        """Return a snapshot of the server's state."""
        with self._lock:
            process = self._process
            running = process is not None and process.returncode is None
            return ServerStatus(
                name=self.name,
                state=self._state,
                transport=self.spec.transport,
                tool_count=len(self._tools),
                last_error=self._error,
                pid=process.pid if running and self._state != "stopped" else None,
                restarts=self._restarts,
                protocol_version=self._protocol,
                connect_seconds=self._connect_seconds,
                skipped=self._skipped,
                adjusted=self._adjusted,
                mended=self._mended,
                past_limit=self._past_limit,
                target=self.spec.describe(),
                history=tuple(self._history),
                stderr=tuple(process.stderr_tail) if process is not None else (),
            )

    def tools(self) -> list[Tool]:
        """Return the server's tools that are in the registry now."""
        return self._tools.tools()

    def cancel(self) -> None:
        """Stop :meth:`run` (call on the loop): its tools are unregistered, its process ended."""
        self._stop_requested = True
        if self._scope is not None:
            self._scope.cancel()

    # -- calls from other threads ---------------------------------------------------------

    def call(self, remote: str, arguments: dict[str, Any]) -> ToolResult:
        """Call a tool of this server and wait for its result (from any thread but the loop's).

        Args:
            remote: The tool's name on the server.
            arguments: Its input.

        Returns:
            The result, mapped to API content.

        Raises:
            ToolError: The server is not connected, refused the call, disconnected during
                it, or did not answer within ``call_timeout``.
        """
        timeout = self.settings.call_timeout
        try:
            return self._submit(lambda client: self._call(client, remote, arguments), timeout)
        except TimeoutError:
            raise ToolError(
                f"Tool {remote!r} of MCP server {self.name!r} did not answer within "
                f"{timeout:g} s; the call was cancelled."
            ) from None

    def list_resources(self, timeout: float) -> list[Any]:
        """List the server's resources, every page.

        Args:
            timeout: Seconds to wait at most.

        Returns:
            The ``mcp_types.Resource`` entries.

        Raises:
            ToolError: The server is not connected or failed to answer.
            TimeoutError: It did not answer in time.
        """

        async def pages(client: Client) -> list[Any]:
            return await _all_pages(
                lambda cursor: client.list_resources(cursor=cursor), "resources"
            )

        return self._submit(pages, timeout)

    def read_resource(self, uri: str, timeout: float) -> str | list[dict[str, Any]]:
        """Read one resource as tool_result content.

        Args:
            uri: The resource's URI.
            timeout: Seconds to wait at most.

        Returns:
            Text, or API content blocks (images, documents).

        Raises:
            ToolError: The server is not connected or refused.
            TimeoutError: It did not answer in time.
        """

        async def read(client: Client) -> str | list[dict[str, Any]]:
            result = await client.read_resource(uri)
            return resource_content(result.contents, self.settings.max_output_chars)

        return self._submit(read, timeout)

    def _submit(self, work: Callable[[Client], Awaitable[_T]], timeout: float) -> _T:
        """Run ``work(client)`` on the loop and wait for it; MCP errors become ToolErrors."""
        client = self._client
        if client is None:
            status = self.status()
            detail = f": {status.last_error}" if status.last_error else ""
            raise ToolError(f"MCP server {self.name!r} is not connected ({status.state}{detail}).")

        async def guarded() -> _T:
            try:
                with anyio.fail_after(timeout):
                    return await work(client)
            except MCPError as exc:
                if exc.code != types.CONNECTION_CLOSED:
                    raise ToolError(
                        f"MCP server {self.name!r} answered with an error: "
                        + self._http_status.explain(exc.message)
                    ) from None
                with anyio.move_on_after(GRACE_FOR_REASON):
                    await self._lost.wait()
                reason = f" ({self._lost_reason})" if self._lost_reason else ""
                raise ToolError(
                    f"MCP server {self.name!r} disconnected during the call{reason}."
                ) from None
            except ValidationError as exc:
                raise ToolError(
                    f"MCP server {self.name!r} sent a result that does not follow the protocol "
                    f"or the tool's output schema: {exc.errors()[0]['msg']}"
                ) from None

        future = asyncio.run_coroutine_threadsafe(guarded(), self.loop)
        try:
            return future.result(timeout + GRACE_FOR_REASON + 1)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None
        except BaseException:
            future.cancel()
            raise

    async def _call(self, client: Client, remote: str, arguments: dict[str, Any]) -> ToolResult:
        """Call a tool on the loop and map its result.

        The SDK checks the result of a tool with an ``outputSchema`` with ``jsonschema``, which
        it imports on the loop at the first such call (a second or more, with every server
        waiting): the call waits for the import on its own thread instead. Not before: an
        import holds the GIL, and done while servers connect it slowed the person's cells.
        """
        if remote in self._with_output_schema:
            await asyncio.wrap_future(warm_jsonschema())
        result = await client.call_tool(remote, arguments)
        return tool_result(result, self.settings.max_output_chars)

    # -- the life cycle, on the loop --------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve, restart on loss; until stopped or given up (state ``failed``)."""
        stopped = True
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._stop_requested:
                    scope.cancel()
                await self._supervise()
                stopped = False
        finally:
            self._scope = None
            self._client = None
            self._drop_tools()
            if stopped:
                self._record("stopped")
                self._update(state="stopped")

    async def _supervise(self) -> None:
        """Connect again and again, as the restart policy allows."""
        policy = self.settings.restart
        restarts = 0
        while True:
            self._connected_at = None
            try:
                reason = await self._connect_and_serve()
            except Exception as exc:
                reason = self._why(exc)
            self._client = None
            self._drop_tools()
            uptime = time.monotonic() - self._connected_at if self._connected_at else 0.0
            if uptime >= policy.reset_after:
                restarts = 0
            if not self._ever_connected or restarts >= policy.max_restarts:
                if self._ever_connected:
                    reason = f"{reason} (gave up after {restarts} restarts)"
                self._record(f"failed: {error_line(reason)}")
                self._update(state="failed", error=reason, protocol=None)
                self._tell(f"failed: {plain_markdown(error_line(reason))}")
                return
            restarts += 1
            delay = policy.delay(restarts)
            logger.warning(
                "MCP server %r went away (%s); restarting in %.1f s", self.name, reason, delay
            )
            self._record(f"lost: {error_line(reason)}")
            self._record(f"restart {restarts} of at most {policy.max_restarts} in {delay:g} s")
            self._update(state="connecting", error=reason, restarts=restarts, protocol=None)
            self._tell(f"went away ({plain_markdown(error_line(reason))}); restarting it")
            await anyio.sleep(delay)

    async def _connect_and_serve(self) -> str:
        """Connect and list the tools within the timeout, then serve until the connection is lost.

        Returns:
            Why the connection ended.

        Raises:
            TimeoutError: The server did not get through start-up in time.
            Exception: The server could not be started or reached.
        """
        self._lost = anyio.Event()
        self._lost_reason = ""
        self._relist_wanted = anyio.Event()
        started = time.monotonic()
        timeout = self.settings.connect_timeout
        self._record(f"starting: {self.spec.describe()}")
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as deadline:
            async with self._client_for(self.spec) as client:
                await self._relist(client)
                deadline.deadline = math.inf
                self._client = client
                self._ever_connected = True
                self._connected_at = time.monotonic()
                self._record(
                    f"connected in {self._connected_at - started:.2f} s (protocol "
                    f"{client.protocol_version}, {len(self._tools)} tools)"
                )
                self._update(
                    state="connected",
                    protocol=client.protocol_version,
                    connect_seconds=self._connected_at - started,
                )
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(self._relister, client)
                    tasks.start_soon(self._watch, client)
                    if isinstance(self.spec, HttpSpec):
                        tasks.start_soon(self._probe, client)
                    await self._lost.wait()
                    tasks.cancel_scope.cancel()
                self._client = None
            return self._lost_reason
        raise TimeoutError(
            f"did not get through start-up (handshake and tool listing) within {timeout:g} s"
        )

    @asynccontextmanager
    async def _client_for(self, spec: ServerSpec) -> AsyncIterator[Client]:
        """Open the transport and the MCP session."""
        from nbagent.core.version import __version__

        if isinstance(spec, StdioSpec):
            process = self._process = StdioProcess(
                spec, self.name, on_exit=lambda: self._lose(process.describe_exit())
            )
            transport: Any = process.open()
        else:
            self._http_status = HttpStatus()
            transport = http_transport(spec, self._http_status)
        guard = self._guard = ListingGuard(
            lambda: client.protocol_version,
            self._process.not_utf8 if isinstance(spec, StdioSpec) else None,
        )
        client = Client(
            guard.around(transport),
            message_handler=self._on_message,
            cache=None,
            client_info=types.Implementation(name="nbagent", version=__version__),
        )
        async with client:
            yield client

    async def _on_message(self, message: Any) -> None:
        """React to what the server sends unasked: a tool-list change asks for a re-listing."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._relist_wanted.set()
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport error: %r", self.name, message)

    async def _relister(self, client: Client) -> None:
        """Re-list the tools whenever a change was announced (changes in a burst coalesce)."""
        while True:
            await self._relist_wanted.wait()
            self._relist_wanted = anyio.Event()
            try:
                with anyio.fail_after(self.settings.connect_timeout):
                    await self._relist(client)
            except (MCPError, TimeoutError, ValidationError) as exc:
                logger.warning("MCP server %r: re-listing tools failed: %s", self.name, exc)
                if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
                    self._lose(self._why(exc))

    async def _watch(self, client: Client) -> None:
        """Follow the server's change events; re-list HTTP servers that send none."""
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        tools = client.server_capabilities.tools
        if modern and tools is not None and tools.list_changed:
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    if subscription.honored.tools_list_changed:
                        async for _event in subscription:
                            self._relist_wanted.set()
                        if isinstance(self.spec, HttpSpec):
                            self._lose("the server closed its event stream")
                        return
            except SubscriptionLost:
                if isinstance(self.spec, HttpSpec):
                    self._lose("lost the connection (its event stream broke off)")
                return
            except MCPError as exc:
                if exc.code == types.CONNECTION_CLOSED:
                    return  # the loss itself is reported by whoever noticed it
                logger.info("MCP server %r refused subscriptions/listen: %s", self.name, exc)
            except ListenNotSupportedError:
                pass
        elif tools is not None and tools.list_changed and isinstance(self.spec, StdioSpec):
            return  # notifications/tools/list_changed arrive through _on_message
        if isinstance(self.spec, HttpSpec):
            await self._poll(client)

    async def _poll(self, client: Client) -> None:
        """Re-list an HTTP server's tools now and then; a failure means it is gone."""
        while True:
            await anyio.sleep(self.settings.poll_interval)
            try:
                with anyio.fail_after(self.settings.connect_timeout):
                    await self._relist(client)
            except Exception as exc:
                self._lose(f"stopped answering: {self._why(exc)}")
                return

    async def _probe(self, client: Client) -> None:
        """Ask an HTTP server now and then whether it is there; no answer means it is gone.

        Any answer counts, an error too: only a failed connection or silence is a loss.
        """
        interval = self.settings.probe_interval
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        while True:
            await anyio.sleep(interval)
            try:
                with anyio.fail_after(interval):
                    if modern:
                        await client.session.send_discover(str(client.protocol_version))
                    else:
                        await client.session.send_ping()
            except MCPError as exc:
                if exc.code == types.CONNECTION_CLOSED:
                    self._lose(f"stopped answering: {self._why(exc)}")
                    return
            except Exception as exc:
                self._lose(f"stopped answering: {self._why(exc)}")
                return

    def _why(self, exc: BaseException) -> str:
        """Say why the server could not be reached or went away, with its HTTP status."""
        return self._http_status.explain(describe_failure(exc, self.spec, self._process))

    def _lose(self, reason: str) -> None:
        """Note that the connection is lost (the first reason wins): its tools go at once."""
        if not self._lost.is_set():
            self._lost_reason = reason
            self._lost.set()
            self._client = None
            self._drop_tools()
            self._update(state="connecting", error=reason)

    async def _relist(self, client: Client) -> None:
        """Fetch every page of the tool listing and bring the registry up to date."""
        listed = await _all_pages(lambda cursor: client.list_tools(cursor=cursor), "tools")
        refused, typed, mended = self._guard.take()
        self._with_output_schema = {tool.name for tool in listed if tool.output_schema}
        listing = self._listing = await anyio.to_thread.run_sync(
            build_tools, self.name, listed, self.call, refused, typed, mended
        )
        self._budget.want(self.name, len(listing.tools), self.spec.max_tools, self._publish)

    def _publish(self) -> None:
        """Register the first tools of the last listing, as many as the budget allows (called
        by the budget, when this listing or another server's share changes)."""
        listing = self._listing
        if listing is None:
            return
        shared = listing.first(self._budget.share(self.name))
        skipped = self._tools.publish(shared)
        if skipped and skipped != self._skipped:
            names = ", ".join(code_markdown(line.split(":")[0]) for line in skipped)
            self._tell(f"had {len(skipped)} of its tools left out ({names})")
        self._update(
            skipped=skipped,
            adjusted=listing.adjusted,
            mended=listing.mended,
            past_limit=len(listing.tools) - len(shared.tools),
        )

    def _record(self, event: str) -> None:
        """Add an event to the server's history (``%mcp log``), with the time of day."""
        self._history.append(f"{time.strftime('%H:%M:%S')} {event}")

    def _tell(self, what: str) -> None:
        """Tell the user, at the next ``%%agent`` cell or ``%mcp`` command.

        Args:
            what: What happened, as Markdown, after the server's name: ``failed: ...``.
        """
        self._notices.add(
            f"MCP server {code_markdown(self.name)} {what.rstrip('.')}. "
            f"{code_markdown('%mcp log ' + self.name)} tells more."
        )

    def _drop_tools(self) -> None:
        """Unregister all of the server's tools, and give up its share of the budget."""
        self._listing = None
        self._budget.leave(self.name, self._publish)
        if self._tools.clear():
            self._on_change()

    def _update(self, **changes: Any) -> None:
        """Change the reported state, then tell the manager."""
        with self._lock:
            for key, value in changes.items():
                setattr(self, f"_{key}", value)
        self._on_change()


async def _all_pages(fetch: Callable[[str | None], Awaitable[Any]], kind: str) -> list[Any]:
    """Follow a paginated listing to its end (``kind`` is the result's list field)."""
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(getattr(page, kind))
        cursor = page.next_cursor
        if not cursor:
            return items
        if cursor in seen:
            logger.warning("MCP listing of %s repeats cursor %r; stopped there", kind, cursor)
            return items
        seen.add(cursor)
    logger.warning("MCP listing of %s has more than %d pages; stopped there", kind, MAX_PAGES)
    return items


@functools.cache
def warm_jsonschema() -> concurrent.futures.Future[None]:
    """Import ``jsonschema`` on a thread of its own, once per process (about a second).

    Returns:
        A future that is done when the import has finished.
    """
    future: concurrent.futures.Future[None] = concurrent.futures.Future()

    def work() -> None:
        try:
            import jsonschema.validators  # noqa: F401
            import referencing  # noqa: F401
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(None)

    threading.Thread(target=work, name="nbagent-jsonschema", daemon=True).start()
    return future
