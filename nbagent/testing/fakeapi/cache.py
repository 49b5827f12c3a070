"""A prompt cache simulated by longest common prefix, for the fake Messages API.

A request is flattened into an ordered sequence of segments: the tools in order, then the
system blocks, then each message's content blocks. A segment's identity is its compact JSON
without ``cache_control`` (moving a breakpoint does not change the content); its weight is
the tokens the model reads for it:

- a loaded tool definition: the tokens of its JSON;
- a deferred tool definition: 0, since the model does not see it. With
  ``deferred_in_prefix=True`` it still belongs to the prefix (adding one changes every later
  prefix); with ``deferred_in_prefix=False`` it is left out of the sequence entirely;
- a content block: the tokens of its JSON, plus the definitions of the deferred tools its
  ``tool_reference`` blocks name, which the API expands in place;
- a compaction block: the tokens of its summary (``content``: the model reads neither the
  signature nor ``encrypted_content``), plus the definitions of the deferred tools its
  ``tool_changes`` add.

Only what the model reads is flattened: the messages start at the last compaction block
(``rules.model_messages``), so after a compaction the prefix after system starts at it.

``cache_control`` marks breakpoints. After a request, the prefixes ending at every segment up
to the last breakpoint are cached. A request reads the longest cached prefix ending at or
before its last breakpoint (``cache_read_input_tokens``), writes the rest up to that
breakpoint (``cache_creation_input_tokens``), and pays the remainder as ``input_tokens``. A
request without a breakpoint neither reads nor writes. Prefixes are keyed by model too.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.core.tokens import compact_json, count_tokens
from nbagent.testing.fakeapi.rules import (
    content_blocks,
    is_compaction,
    is_deferred,
    model_messages,
    tool_changes,
    tool_references,
)


@dataclass(frozen=True)
class Segment:
    """One unit of the flattened request.

    Attributes:
        key: The segment's identity: where it sits and its content without cache_control.
        tokens: The tokens the model reads for it.
        breakpoint: Whether it carries a ``cache_control`` marker.
    """

    key: str
    tokens: int
    breakpoint: bool


@dataclass(frozen=True)
class CacheUsage:
    """The input side of a response's ``usage``.

    Attributes:
        input_tokens: Tokens neither read from nor written to the cache.
        cache_read_input_tokens: Tokens of the longest cached prefix.
        cache_creation_input_tokens: Tokens written from there to the last breakpoint.
    """

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int

    @property
    def total(self) -> int:
        """All input tokens of the request."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


def _strip_cache_control(value: Any) -> Any:
    """Return a copy of a JSON value without ``cache_control`` keys, at any depth."""
    if isinstance(value, list):
        return [_strip_cache_control(item) for item in value]
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    return value


def _has_breakpoint(value: Any) -> bool:
    """Tell whether a JSON value carries a ``cache_control`` marker at any depth."""
    if isinstance(value, list):
        return any(_has_breakpoint(item) for item in value)
    if isinstance(value, dict):
        return bool(value.get("cache_control")) or any(map(_has_breakpoint, value.values()))
    return False


def segments(body: Mapping[str, Any], *, deferred_in_prefix: bool = True) -> list[Segment]:
    """Flatten a request into its ordered segments.

    Args:
        body: A valid Messages API request body.
        deferred_in_prefix: Whether deferred tool definitions belong to the prefix.

    Returns:
        The segments: tools, then system blocks, then message content blocks.
    """
    tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
    deferred_tokens = {
        t.get("name"): count_tokens(compact_json(_strip_cache_control(t)))
        for t in tools
        if is_deferred(t)
    }
    result = []
    for tool in tools:
        if is_deferred(tool) and not deferred_in_prefix:
            continue
        text = compact_json(_strip_cache_control(tool))
        tokens = 0 if is_deferred(tool) else count_tokens(text)
        result.append(Segment("tool:" + text, tokens, _has_breakpoint(tool)))
    system = body.get("system")
    for block in content_blocks(system) if system else ():
        text = compact_json(_strip_cache_control(block))
        result.append(Segment("system:" + text, count_tokens(text), _has_breakpoint(block)))
    for message in model_messages(body):
        for block in message["content"]:
            text = compact_json(_strip_cache_control(block))
            key = f"{message.get('role')}:{text}"
            result.append(
                Segment(key, _block_tokens(block, text, deferred_tokens), _has_breakpoint(block))
            )
    return result


def _block_tokens(block: Mapping[str, Any], text: str, deferred_tokens: Mapping[Any, int]) -> int:
    """The tokens the model reads for a message block (``text`` is its compact JSON)."""
    if is_compaction(block):
        added = {name for kind, name in tool_changes(block) if kind == "tool_addition"}
        return count_tokens(str(block["content"])) + sum(
            deferred_tokens.get(name, 0) for name in added
        )
    return count_tokens(text) + sum(deferred_tokens.get(name, 0) for name in tool_references(block))


class PromptCache:
    """The server-wide cache of request prefixes. Thread-safe.

    Args:
        deferred_in_prefix: Whether deferred tool definitions belong to the cached prefix.
    """

    def __init__(self, *, deferred_in_prefix: bool = True) -> None:
        self.deferred_in_prefix = deferred_in_prefix
        self._prefixes: set[str] = set()
        self._lock = threading.Lock()

    def count(self, body: Mapping[str, Any]) -> int:
        """Return the input tokens of a request, without touching the cache.

        Args:
            body: A valid request body.
        """
        return sum(s.tokens for s in segments(body, deferred_in_prefix=self.deferred_in_prefix))

    def account(self, body: Mapping[str, Any]) -> CacheUsage:
        """Work out a request's cache figures, then cache its prefixes.

        Args:
            body: A valid request body.

        Returns:
            The request's input usage.
        """
        parts = segments(body, deferred_in_prefix=self.deferred_in_prefix)
        total = sum(s.tokens for s in parts)
        marks = [i for i, s in enumerate(parts) if s.breakpoint]
        if not marks:
            return CacheUsage(total, 0, 0)
        last = marks[-1]
        digest = hashlib.sha256(str(body.get("model")).encode())
        hashes, cumulative, running = [], [], 0
        for segment in parts[: last + 1]:
            digest.update(b"\x00" + segment.key.encode())
            hashes.append(digest.hexdigest())
            running += segment.tokens
            cumulative.append(running)
        with self._lock:
            hit = max((i for i, h in enumerate(hashes) if h in self._prefixes), default=-1)
            self._prefixes.update(hashes)
        read = cumulative[hit] if hit >= 0 else 0
        return CacheUsage(total - cumulative[last], read, cumulative[last] - read)

    def clear(self) -> None:
        """Forget every cached prefix."""
        with self._lock:
            self._prefixes.clear()
