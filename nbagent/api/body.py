"""A request's JSON body, encoded once per change: what the last requests sent is reused.

A conversation's requests differ from one another by little: the history grows by a turn, the
tool list gains a breakpoint copy. The SDK copies the whole body (``prepare_request_data``)
and encodes it at every request, which makes a long conversation cost O(n²). Here the items
of ``messages`` and ``tools`` that a recent request sent too (the same objects, found where
the two lists share a prefix and a suffix: :mod:`nbagent.core.identity`) keep their encoding,
and only the others are encoded; the bytes are handed to the SDK as they are
(:func:`nbagent.api.anthropic.stream_response`).

The encoding is the SDK's: UTF-8 JSON, no spaces, non-ASCII kept, NaN refused; the body's
keys in the order the SDK's ``messages.stream`` writes them, ``"stream": true`` last.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Set
from typing import Any

from nbagent.core.identity import same_prefix, same_suffix

KEY_ORDER = ("max_tokens", "messages", "model", "context_management", "system", "tools")
"""The body's keys that come first, in the SDK's order (others follow in the request's)."""

INCREMENTAL = ("messages", "tools")
"""The lists whose items keep their encoding from one request to the next."""

REMEMBERED = 8
"""Recent lists remembered per key (several agents may share the process)."""


def _plain(value: Any) -> Any:
    """What the encoder sends for a value JSON has no type for, as the SDK's encoder does."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Set | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_plain
)


class BodyEncoder:
    """Encodes request bodies, reusing the encoding of the list items recent requests sent.

    Thread-safe: agents in several threads may share one.
    """

    def __init__(self) -> None:
        self._recent: dict[str, list[tuple[list[Any], list[str]]]] = {}
        self._lock = threading.Lock()

    def encode(self, request: Mapping[str, Any]) -> bytes:
        """The body of a streamed request.

        Args:
            request: The request's parameters (``model``, ``messages``, ``tools``, ...); its
                list items must not have changed in place since an earlier request sent them.

        Returns:
            The JSON body, with ``"stream": true``.
        """
        keys = [k for k in KEY_ORDER if k in request]
        keys += [k for k in request if k not in KEY_ORDER]
        parts = []
        with self._lock:
            for key in keys:
                value = request[key]
                if key in INCREMENTAL and isinstance(value, list):
                    text = self._list(key, value)
                else:
                    text = _ENCODER.encode(value)
                parts.append(f"{_ENCODER.encode(key)}:{text}")
        parts.append('"stream":true')
        return ("{" + ",".join(parts) + "}").encode()

    def _list(self, key: str, items: list[Any]) -> str:
        """Encode a list, reusing the most that one of the recent ones shares with it."""
        recent = self._recent.setdefault(key, [])
        prefix = suffix = 0
        old: list[Any] = []
        encoded: list[str] = []
        for candidate, texts in recent:
            start = same_prefix(candidate, items)
            end = same_suffix(candidate, items, min(len(candidate), len(items)) - start)
            if start + end > prefix + suffix:
                prefix, suffix, old, encoded = start, end, candidate, texts
        fresh = [_ENCODER.encode(item) for item in items[prefix : len(items) - suffix]]
        texts = [*encoded[:prefix], *fresh, *encoded[len(old) - suffix :]]
        # The list it grew from is superseded; one that merely shares a few items (another
        # conversation's, with the same first tool) stays.
        superseded = old if 2 * (prefix + suffix) > len(old) else None
        kept = [entry for entry in recent if entry[0] is not superseded][: REMEMBERED - 1]
        recent[:] = [(list(items), texts), *kept]
        return "[" + ",".join(texts) + "]"
