"""A request's JSON body, encoded once per change: what the last requests sent is reused.

A conversation's requests differ from one another by little: the history grows by a turn, the
tool list gains a breakpoint copy. The SDK copies the whole body (``prepare_request_data``)
and encodes it at every request, which makes a long conversation cost O(n²). Here the items
of ``messages`` and ``tools`` that a recent request sent too (the same objects, found where
the two lists share a prefix and a suffix: :mod:`nbagent.core.identity`) keep their encoding,
and only the others are encoded. The body is handed to the SDK in a few chunks, not joined
(:func:`nbagent.api.anthropic.stream_response`): a large run that an earlier request sent too
(a long history's first messages, a catalogue's definitions) goes to the socket as the bytes
object it already is, not copied into one body of megabytes at every request.

The encoding is the SDK's: UTF-8 JSON, no spaces, non-ASCII kept, NaN refused; the body's
keys in the order the SDK's ``messages.stream`` writes them, ``"stream": true`` last.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from nbagent.core.identity import same_prefix, same_suffix
from nbagent.core.tracked import Since, TrackedList

KEY_ORDER = ("max_tokens", "messages", "model", "context_management", "system", "tools")
"""The body's keys that come first, in the SDK's order (others follow in the request's)."""

INCREMENTAL = ("messages", "tools")
"""The lists whose items keep their encoding from one request to the next."""

REMEMBERED = 8
"""Recent lists remembered per key (several agents may share the process)."""

CHECK_ENV = "NBAGENT_CHECK_BODIES"
"""When set (the test suite sets it), every body is also encoded whole and the two compared:
an item changed in place after a request sent it fails the request instead of being sent as
it was."""


def _plain(value: Any) -> Any:
    """What the encoder sends for a value JSON has no type for, as the SDK's encoder does."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Set | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODING: dict[str, Any] = {
    "ensure_ascii": False,
    "separators": (",", ":"),
    "allow_nan": False,
    "default": _plain,
}
"""The SDK's JSON encoding."""
_ENCODER = json.JSONEncoder(**_ENCODING)
_CHECKER = json.JSONEncoder(**_ENCODING)
"""The same encoding, for the whole-body check (:data:`CHECK_ENV`) apart from the encoder whose
work the tests count."""


CHUNK = 256 * 1024
"""Pieces of the body smaller than this are joined with their neighbours into one chunk; a
larger one is a chunk of its own, sent as it is (each chunk costs a write to the socket)."""

RUNS = 16
"""Joined runs kept apart at most, before they are joined into one (so that a request
copies the shared items once, in the body, and not again into a longer run)."""


@dataclass
class _Sent:
    """A list as a request sent it: its items, each one's encoding, and the encodings of its
    first and last items in a few joined runs (so that a next request sharing them copies a
    few runs, not every item)."""

    items: list[Any]
    texts: list[bytes]
    head: tuple[int, tuple[bytes, ...]] = (0, ())
    """How many first items the runs hold, and the runs."""
    tail: tuple[int, tuple[bytes, ...]] = (0, ())
    """How many last items the runs hold, and the runs."""
    source: list[Any] | None = None
    """The list the request gave. The same list given again, each item the same object or
    an equal one (a list comparison, at C speed: the tools of requests that send the same
    ones are one list), is sent as it was without looking for what it shares."""
    chunks: tuple[bytes, ...] = ()
    """Its encoding, in chunks (:func:`_chunked`)."""
    since: Since | None = None
    """The list given, when it is a :class:`~nbagent.core.tracked.TrackedList`: the same list
    given again is encoded from its first item changed since (its mark), not compared whole
    (nor copied: :attr:`items` is then empty)."""

    def first(self, count: int) -> tuple[bytes, ...]:
        """The first ``count`` items' encodings, in runs."""
        done, runs = self.head
        if done > count:
            done, runs = 0, ()
        rest = b",".join(self.texts[done:count])
        return _few((*runs, rest) if rest else runs)

    def last(self, count: int) -> tuple[bytes, ...]:
        """The last ``count`` items' encodings, in runs."""
        done, runs = self.tail
        if done > count:
            done, runs = 0, ()
        length = len(self.texts)
        rest = b",".join(self.texts[length - count : length - done])
        return _few((rest, *runs) if rest else runs)


def _few(runs: tuple[bytes, ...]) -> tuple[bytes, ...]:
    """The runs, joined into one when there are more than :data:`RUNS`."""
    return (b",".join(runs),) if len(runs) > RUNS else runs


class BodyEncoder:
    """Encodes request bodies, reusing the encoding of the list items recent requests sent.

    Thread-safe: agents in several threads may share one.
    """

    def __init__(self) -> None:
        self._recent: dict[str, list[_Sent]] = {}
        self._lock = threading.Lock()

    def encode(self, request: Mapping[str, Any]) -> bytes:
        """The body of a streamed request, in one bytes object.

        Args:
            request: As for :meth:`encode_chunks`.

        Returns:
            The JSON body, with ``"stream": true``.
        """
        return b"".join(self.encode_chunks(request))

    def encode_chunks(self, request: Mapping[str, Any]) -> tuple[bytes, ...]:
        """The body of a streamed request, in the chunks to send one after another.

        Args:
            request: The request's parameters (``model``, ``messages``, ``tools``, ...); its
                list items must not have changed in place since an earlier request sent them.

        Returns:
            The JSON body, with ``"stream": true``, in a few chunks (:data:`CHUNK`).
        """
        keys = [k for k in KEY_ORDER if k in request]
        keys += [k for k in request if k not in KEY_ORDER]
        parts = [b"{"]
        with self._lock:
            for key in keys:
                value = request[key]
                parts.append(_ENCODER.encode(key).encode() + b":")
                if key in INCREMENTAL and isinstance(value, list):
                    parts += self._list(key, value)
                else:
                    parts.append(_ENCODER.encode(value).encode())
                parts.append(b",")
        parts.append(b'"stream":true}')
        chunks = _chunked(parts)
        if os.environ.get(CHECK_ENV):
            whole = {key: request[key] for key in keys}
            expected = _CHECKER.encode({**whole, "stream": True}).encode()
            if b"".join(chunks) != expected:
                raise AssertionError(
                    "A request's body reused the encoding of a message or tool that was changed "
                    "in place after an earlier request sent it."
                )
        return chunks

    def _list(self, key: str, items: list[Any]) -> tuple[bytes, ...]:
        """Encode a list (in chunks), reusing the most that one of the recent ones shares
        with it."""
        recent = self._recent.setdefault(key, [])
        for sent in recent:
            if sent.since is not None and sent.since.items is items:  # read from its mark
                return self._tracked(recent, sent, items)
            if sent.source is items and sent.chunks and sent.items == items:
                return sent.chunks  # the same list again, every item the same or equal
        since = Since(items) if isinstance(items, TrackedList) else None  # before reading it
        prefix = suffix = 0
        old = _Sent([], [])
        for sent in recent:
            if len(sent.items) <= prefix + suffix:  # it cannot share more than the best so far
                continue
            start = same_prefix(sent.items, items)
            end = same_suffix(sent.items, items, min(len(sent.items), len(items)) - start)
            if start + end > prefix + suffix:
                prefix, suffix, old = start, end, sent
        fresh = [_ENCODER.encode(item).encode() for item in items[prefix : len(items) - suffix]]
        head, tail = old.first(prefix), old.last(suffix)
        texts = [*old.texts[:prefix], *fresh, *old.texts[len(old.items) - suffix :]]
        # The list it grew from is superseded; one that merely shares a few items (another
        # conversation's, with the same first tool) stays.
        superseded = old if 2 * (prefix + suffix) > len(old.items) else None
        kept = [sent for sent in recent if sent is not superseded][: REMEMBERED - 1]
        chunks = _chunked([b"[", *_between([*head, *fresh, *tail], b","), b"]"])
        if since is not None:  # given again, it is read from its mark
            sent = _Sent([], texts, (prefix, head), source=items, chunks=chunks, since=since)
        else:
            sent = _Sent(list(items), texts, (prefix, head), (suffix, tail), items, chunks)
        recent[:] = [sent, *kept]
        return chunks

    def _tracked(self, recent: list[_Sent], sent: _Sent, items: list[Any]) -> tuple[bytes, ...]:
        """Encode a tracked list sent before: the items before its mark keep their encoding
        (the same objects), the others are encoded."""
        prefix = sent.since.unchanged(items) if sent.since is not None else 0
        if prefix == len(items) == len(sent.texts):
            return sent.chunks
        since = Since(items)  # before reading it: a change meanwhile lowers it
        head = sent.first(prefix)
        fresh = [_ENCODER.encode(item).encode() for item in items[prefix:]]
        texts = sent.texts  # superseded: its encodings are taken over, not copied
        del texts[prefix:]
        texts += fresh
        chunks = _chunked([b"[", *_between([*head, *fresh], b","), b"]"])
        kept = [other for other in recent if other is not sent][: REMEMBERED - 1]
        recent[:] = [
            _Sent([], texts, (prefix, head), source=items, chunks=chunks, since=since),
            *kept,
        ]
        return chunks


def _chunked(pieces: list[bytes]) -> tuple[bytes, ...]:
    """The pieces in chunks: each run of pieces under :data:`CHUNK` joined into one, each
    larger piece kept as the object it is."""
    chunks: list[bytes] = []
    small: list[bytes] = []
    for piece in pieces:
        if len(piece) < CHUNK:
            small.append(piece)
            continue
        if small:
            chunks.append(b"".join(small))
            small = []
        chunks.append(piece)
    if small:
        chunks.append(b"".join(small))
    return tuple(chunks)


def _between(pieces: list[bytes], separator: bytes) -> list[bytes]:
    """The pieces with the separator between each two."""
    spaced = [separator] * (2 * len(pieces) - 1) if pieces else []
    spaced[::2] = pieces
    return spaced
