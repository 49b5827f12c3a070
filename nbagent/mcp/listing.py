"""Tool listings the SDK can read, even when one tool in them is malformed or hostile.

The SDK checks a ``tools/list`` answer as a whole: one tool whose ``inputSchema`` is not an
object schema (``{"type": "array"}``, ``{}``, no ``type``) fails the listing, and with it
every tool of the server. :class:`ListingGuard` sits between the transport and the
:class:`mcp.Client`: it notes which requests are ``tools/list``, and checks each tool of
their answers on its own. It takes out each tool whose input schema is beyond the limits of
:mod:`nbagent.mcp.limits` (too deep, too many properties, too large) or that the negotiated
protocol version still refuses, saying why; drops an output schema beyond the limits; cuts a
long description; gives a root schema with no ``type`` its ``"type": "object"``; and names
the tools whose text held bytes that are not UTF-8 (read as U+FFFD by the stdio transport).
The rest of the listing reaches the SDK unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Self

import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types import methods
from pydantic import ValidationError

from nbagent.core.schema_upgrade import object_root
from nbagent.mcp.limits import cut_description, schema_fault

LIST_TOOLS = "tools/list"
"""The method whose answers are guarded."""

NAMELESS = "(a tool without a name)"
"""How a listed tool with no name is called in notes."""

DEFAULT_VERSION = "2025-11-25"
"""The version to check by before the handshake has named one (as the SDK does)."""


class ListingGuard:
    """Guards one connection's tool listings.

    Args:
        version: Returns the protocol version negotiated (``None`` before the handshake).
        not_utf8: Ids of responses that held bytes that are not UTF-8, which the transport
            adds to (:attr:`~nbagent.mcp.stdio.StdioProcess.not_utf8`); the guard takes
            each out when its response arrives.
    """

    def __init__(
        self, version: Callable[[], str | None], not_utf8: set[types.RequestId] | None = None
    ) -> None:
        self._version = version
        self._not_utf8 = not_utf8 if not_utf8 is not None else set()
        self._pending: set[types.RequestId] = set()
        self.refused: dict[str, str] = {}
        """Tools taken out of listings since the last :meth:`take`, with why, by name."""
        self.typed: list[str] = []
        """Tools whose root schema was given ``"type": "object"`` since the last :meth:`take`."""
        self.mended: list[str] = []
        """What was changed in tools kept since the last :meth:`take`, one line each
        (``name: ...``): descriptions cut, output schemas dropped, bytes not UTF-8."""

    def take(self) -> tuple[dict[str, str], list[str], list[str]]:
        """Return (and forget) the tools refused, typed and mended since the last call."""
        refused, typed, mended = self.refused, self.typed, self.mended
        self.refused, self.typed, self.mended = {}, [], []
        return refused, typed, mended

    @asynccontextmanager
    async def around(self, transport: Any) -> AsyncIterator[tuple[Any, Any]]:
        """Open a transport, and yield its streams with the guard in between.

        Args:
            transport: What :class:`mcp.Client` would take: an async context manager
                yielding ``(read, write)`` streams of SessionMessages.

        Yields:
            The guarded ``(read, write)`` streams.
        """
        async with transport as (read, write):
            yield _GuardedRead(read, self), _NotedWrite(write, self)

    def note(self, item: Any) -> None:
        """Remember the id of an outgoing ``tools/list`` request."""
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest) and message.method == LIST_TOOLS:
            self._pending.add(message.id)

    def check(self, item: Any) -> Any:
        """Mend or take out the bad tools of an incoming ``tools/list`` answer (in place)."""
        message = getattr(item, "message", None)
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return item
        not_utf8 = message.id in self._not_utf8
        self._not_utf8.discard(message.id)
        if message.id not in self._pending:
            return item
        self._pending.discard(message.id)
        tools = message.result.get("tools") if isinstance(message, types.JSONRPCResponse) else None
        if isinstance(tools, list) and self._fault({**message.result, "tools": []}) is None:
            message.result["tools"] = [
                tool for tool in tools if self._usable(message.result, tool, not_utf8)
            ]
        return item

    def _usable(self, result: dict[str, Any], tool: Any, not_utf8: bool) -> bool:
        """Tell whether one listed tool can be read, mending what can be mended.

        Args:
            result: The listing's result (its other fields are checked with the tool).
            tool: The tool as listed.
            not_utf8: Whether the listing held bytes that are not UTF-8.
        """
        name = tool.get("name") if isinstance(tool, dict) else None
        label = name if isinstance(name, str) else NAMELESS
        if isinstance(tool, dict):
            fault = schema_fault(tool.get("inputSchema"))
            if fault is not None:
                self.refused[label] = f"an inputSchema beyond the limits: {fault}"
                return False
            self._mend(label, tool, not_utf8)
        if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
            schema = tool["inputSchema"]
            mended = object_root(schema)
            if mended is not None and mended is not schema:
                tool["inputSchema"] = mended
                self.typed.append(label)
        fault = self._fault({**result, "tools": [tool]})
        if fault is not None:
            self.refused[label] = fault
        return fault is None

    def _mend(self, label: str, tool: dict[str, Any], not_utf8: bool) -> None:
        """Note text that was not UTF-8; cut a long description; drop a hostile outputSchema."""
        if not_utf8 and "\ufffd" in json.dumps(tool, ensure_ascii=False):
            self.mended.append(f"{label}: bytes that are not UTF-8 in its listing read as U+FFFD")
        description = tool.get("description")
        if isinstance(description, str):
            tool["description"], cut = cut_description(description)
            if cut:
                self.mended.append(f"{label}: description cut by {cut:,} characters")
        if "outputSchema" in tool:
            fault = schema_fault(tool["outputSchema"])
            if fault is not None:
                del tool["outputSchema"]
                self.mended.append(f"{label}: outputSchema left out, as {fault}")

    def _fault(self, result: dict[str, Any]) -> str | None:
        """Check a listing as the SDK will; say where and what its first fault is."""
        try:
            methods.validate_server_result(LIST_TOOLS, self._version() or DEFAULT_VERSION, result)
            types.ListToolsResult.model_validate(result, by_name=False)
        except ValidationError as exc:
            error = exc.errors()[0]
            loc = list(error["loc"])
            where = ".".join(map(str, loc[2:])) if loc[:1] == ["tools"] else ""
            return f"{where or '(tool)'}: {error['msg']}"
        except (KeyError, ValueError):
            return None
        return None


class _Wrapped:
    """A stream that passes all but what its subclass changes on to the stream it wraps."""

    def __init__(self, inner: Any, guard: ListingGuard) -> None:
        self._inner = inner
        self._guard = guard

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _GuardedRead(_Wrapped):
    """A read stream whose tool listings pass through the guard."""

    async def receive(self) -> SessionMessage | Exception:
        return self._guard.check(await self._inner.receive())

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return self._guard.check(await self._inner.__anext__())


class _NotedWrite(_Wrapped):
    """A write stream that tells the guard which requests are tool listings."""

    async def send(self, item: SessionMessage, /) -> None:
        self._guard.note(item)
        await self._inner.send(item)
