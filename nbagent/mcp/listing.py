"""Tool listings the SDK can read, even when one tool in them is malformed.

The SDK checks a ``tools/list`` answer as a whole: one tool whose ``inputSchema`` is not an
object schema (``{"type": "array"}``, ``{}``, no ``type``) fails the listing, and with it
every tool of the server. :class:`ListingGuard` sits between the transport and the
:class:`mcp.Client`: it notes which requests are ``tools/list``, and in their answers gives
a root schema with no ``type`` its ``"type": "object"`` and takes out each tool that the
negotiated protocol version still refuses, saying why. The rest of the listing reaches the
SDK unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Self

import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types import methods
from pydantic import ValidationError

from nbagent.schema_upgrade import object_root

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
    """

    def __init__(self, version: Callable[[], str | None]) -> None:
        self._version = version
        self._pending: set[types.RequestId] = set()
        self.refused: dict[str, str] = {}
        """Tools taken out of listings since the last :meth:`take`, with why, by name."""
        self.typed: list[str] = []
        """Tools whose root schema was given ``"type": "object"`` since the last :meth:`take`."""

    def take(self) -> tuple[dict[str, str], list[str]]:
        """Return (and forget) the tools refused and typed since the last call."""
        refused, typed = self.refused, self.typed
        self.refused, self.typed = {}, []
        return refused, typed

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
        if message.id not in self._pending:
            return item
        self._pending.discard(message.id)
        tools = message.result.get("tools") if isinstance(message, types.JSONRPCResponse) else None
        if isinstance(tools, list) and self._fault({**message.result, "tools": []}) is None:
            message.result["tools"] = [tool for tool in tools if self._usable(message.result, tool)]
        return item

    def _usable(self, result: dict[str, Any], tool: Any) -> bool:
        """Tell whether one listed tool can be read, mending its root type if that is all."""
        name = tool.get("name") if isinstance(tool, dict) else None
        label = name if isinstance(name, str) else NAMELESS
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
