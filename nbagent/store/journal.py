"""One conversation's file: an append-only journal of signed JSON lines.

A conversation is an append-only JSON Lines file in its notebook's folder
(:mod:`nbagent.store.folders`). The first line is the header; every later line is a
record of the history (``Agent.messages``), which changes by appending messages and by
merging blocks into the last one, so records name the index they set::

    {"nbagent": "conversation", "version": 1, "id": "3fa29c1e", "notebook": "/a/b.ipynb",
     "started": "2025-01-02T14:03:12+00:00", "model": "claude-sonnet-5-5"}
    {"i": 0, "message": {"role": "user", "content": [...]}}
    {"i": 1, "message": {"role": "assistant", "content": [...]}}
    {"i": 1, "message": {...}}     a later record for the same index replaces it
    {"length": 1}                  the history was cut back to its first message
    {"state": {"loaded": [...], "expanded": [...], "prompt_tokens": 1234, "usage": {...}}}
                                   what the agent knows beside the history (the last counts)

Only the messages that changed since the last record are written, each record with one
``write`` of a whole line on a file opened with ``O_APPEND``: a kernel killed at any moment
loses at most the line being written, which reading skips. The file is synced to disk a
second later, off the cell's path (:mod:`nbagent.store.durable`). Secrets are
redacted (:func:`nbagent.core.secrets.redact`) from every string before it is written. Reading
trusts no line: each record is checked against its schema (:mod:`nbagent.store.records`),
and what is wrong (a line, a record, a block, a field of the state) is left out and named.

Every line ends with a MAC (HMAC-SHA256, keyed by a secret of the user's), the last field of
its object: ``{"i": 0, "message": {...}, "mac": "9f86d0..."}``. It covers the line's bytes
without that field and the MAC of the line before; the first line's covers the file's place
(the name of its notebook's folder and the conversation's id). So editing, inserting,
removing or reordering a line, or copying the file under another id or into another
notebook's folder, breaks the chain, while a file that ends at a line's end still verifies:
appending stays one ``write`` per line. A line cut short by a crash is acknowledged when the
conversation goes on, by a record ``{"cut": "<SHA-256 of that line>"}`` chained after it
(:func:`verify`). The key is the user's (:mod:`nbagent.store.key`). A file whose chain does
not verify (written before nbagent signed conversations, written by something else, or changed)
is listed as not written by nbagent and is resumed only when the person says ``--trust``: what
it holds would reach the model as the person's own words.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nbagent.store.durable import sync_later
from nbagent.store.key import ConversationKeyError, conversation_key, key_path
from nbagent.store.records import Line, read_line, read_lines

FORMAT = "conversation"
"""The header's ``nbagent`` field."""

VERSION = 1
"""The file format's version."""

_MAC_FIELD = b',"mac":"'
_MAC_TAIL = len(_MAC_FIELD) + 64 + len(b'"}')
"""The bytes a line's MAC field takes at its end."""
_MAC_END = -_MAC_TAIL + len(_MAC_FIELD)
_SEED = b"nbagent conversation\0"


def _line(record: Mapping[str, Any]) -> bytes:
    """One record as a line: ASCII JSON (lone surrogates and newlines escaped)."""
    return (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode("ascii")


def _write_whole(path: Path, data: bytes, flags: int, sync: bool = True) -> None:
    """Write all of ``data`` to a file only its owner reads, then ``fsync`` it (or, when not
    ``sync``, have it synced soon: :func:`~nbagent.store.durable.sync_later`)."""
    fd = os.open(path, os.O_WRONLY | flags, 0o600)
    try:
        written = os.write(fd, data)
        while written < len(data):  # only on a full disk or the like
            written += os.write(fd, data[written:])
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if not sync:
        sync_later(path)


def _seed(key: bytes, path: Path) -> bytes:
    """What the first line's MAC chains from: the file's notebook folder and id."""
    place = f"{path.parent.name}\0{path.stem.rpartition('-')[2]}"
    return hmac.new(key, _SEED + place.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def _sha256(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _keyed(key: bytes) -> hmac.HMAC:
    """An HMAC-SHA256 with the key and nothing read yet, copied for each line: the key is
    prepared once, and a line's MAC takes half the time of an ``hmac.digest``."""
    return hmac.new(key, digestmod=hashlib.sha256)


def _signed(keyed: hmac.HMAC, previous: bytes, body: bytes) -> bytes:
    """The MAC of a line's bytes (without its MAC field) after the line before."""
    mac = keyed.copy()
    mac.update(previous + body)
    return mac.digest()


def _verified(keyed: hmac.HMAC, previous: bytes, line: bytes) -> tuple[bytes, bytes] | None:
    """A line's bytes without its MAC field, and its MAC, if the MAC is right after
    ``previous``."""
    if len(line) <= _MAC_TAIL or not line.endswith(b'"}'):
        return None
    if line[-_MAC_TAIL:_MAC_END] != _MAC_FIELD:
        return None
    body = line[:-_MAC_TAIL] + b"}"
    mac = _signed(keyed, previous, body)
    if not hmac.compare_digest(mac.hex().encode("ascii"), line[-66:-2]):
        return None
    return body, mac


@dataclass
class Chain:
    """What verifying a conversation's file found."""

    lines: list[Line]
    """The lines whose MAC is right, read (:func:`~nbagent.store.records.read_line`),
    in order (acknowledgements of cut lines left out)."""
    end: bytes
    """The MAC the next record chains from."""
    damage: str = ""
    """Why the file is not as nbagent wrote it; empty when it is."""
    skipped: int = 0
    """Lines cut short by a crash: the last, or one acknowledged by the next record."""

    @property
    def signed(self) -> bool:
        """Whether every line is as nbagent wrote it (the file may end early)."""
        return not self.damage


def verify(data: bytes, path: Path, key: bytes | None) -> Chain:
    """Check a conversation file's chain of MACs.

    A line whose MAC is wrong is left out and the chain goes on from the line before it; it
    is damage unless it is the last line, cut short (no newline, and not a whole line whose
    newline was changed), or the next line is the record that acknowledges it
    (``{"cut": "<its SHA-256>"}``). Verifying stops at the first damage. A line whose MAC is
    right is read, but not trusted: one that cannot be read is kept with why.

    Args:
        data: The file's bytes.
        path: The file (its folder's name and its id are part of the first MAC).
        key: The key (:func:`~nbagent.store.key.conversation_key`); None when there is none.

    Returns:
        The records that verify and what is wrong, if anything.
    """
    if key is None:
        return Chain([], b"", damage="there is no conversation key to check it with")
    keyed = _keyed(key)
    chain = Chain([], _seed(key, path))
    lines = data.split(b"\n")
    tail = lines.pop()
    failed: tuple[int, bytes] | None = None
    bodies: list[tuple[int, bytes]] = []
    for number, line in enumerate(lines, 1):
        verified = _verified(keyed, chain.end, line)
        if verified is None:
            if failed is not None:
                break
            failed = (number, line)
            continue
        chain.end = verified[1]
        if failed is not None:
            if read_line(number, verified[0]).record == {"cut": _sha256(failed[1])}:
                chain.skipped, failed = chain.skipped + 1, None
                continue
            break
        bodies.append((number, verified[0]))
    chain.lines = [
        line for line in read_lines(bodies) if line.record is None or "cut" not in line.record
    ]
    if failed is None and tail:  # cut short by a crash, unless a whole line lost its newline
        if _verified(keyed, chain.end, tail[:-1]) is None:
            chain.skipped += 1
        else:
            failed = (len(lines) + 1, tail)
    if failed is not None:
        where = "its first line" if failed[0] == 1 else f"line {failed[0]}"
        chain.damage = f"{where} has no valid MAC"
    return chain


class ConversationLog:
    """One conversation's file, appended to one whole line at a time.

    Args:
        path: The ``.jsonl`` file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._key: bytes | None = None
        self._keyed: hmac.HMAC | None = None  # the key prepared once, copied for each line
        self._previous: bytes | None = None

    @property
    def id(self) -> str:
        """The conversation's id (the end of the file's name)."""
        return self.path.stem.rpartition("-")[2]

    @classmethod
    def create(
        cls,
        folder: Path,
        notebook: str,
        model: str,
        started: datetime | None = None,
        ident: str | None = None,
    ) -> ConversationLog:
        """Start a new conversation's file, with its header.

        Args:
            folder: The notebook's folder (:func:`~nbagent.store.folders.notebook_folder`);
                made if missing.
            notebook: The notebook's path, kept in the header.
            model: The model at the start.
            started: When it started; now by default.
            ident: Its id; 8 random hexadecimal digits by default.

        Returns:
            The log.
        """
        started = started or datetime.now(UTC)
        ident = ident or uuid.uuid4().hex[:8]
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = cls(folder / f"{started.strftime('%Y%m%dT%H%M%S')}-{ident}.jsonl")
        header = {
            "nbagent": FORMAT,
            "version": VERSION,
            "id": ident,
            "notebook": notebook,
            "started": started.isoformat(timespec="seconds"),
            "model": model,
        }
        log.append(header)
        return log

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record, signed: one ``write`` of the whole line (synced to disk soon).

        The first append of a log over an existing file goes on from the last line of it
        that verifies.

        Raises:
            OSError: The file could not be written, or the key not kept
                (:class:`~nbagent.store.key.ConversationKeyError`).
            ValueError: The record has a ``mac`` field of its own.
        """
        if "mac" in record:
            raise ValueError("A conversation record has no 'mac' field of its own.")
        with self._lock:
            self._append(record)

    def _append(self, record: Mapping[str, Any]) -> None:
        self._append_body(_line(record)[:-1])

    def _append_body(self, body: bytes) -> None:
        """Sign a line's bytes (a JSON object, without its newline) and append them."""
        previous = self._chain_end()
        if self._keyed is None:
            self._keyed = _keyed(self._signing_key())
        mac = _signed(self._keyed, previous, body)
        data = body[:-1] + _MAC_FIELD + mac.hex().encode("ascii") + b'"}\n'
        self._write(data)
        self._previous = mac

    def _signing_key(self) -> bytes:
        if self._key is None:
            key = conversation_key(create=True)
            if key is None:  # only if the folder vanished at once
                raise ConversationKeyError(f"No conversation key could be made at {key_path()}")
            self._key = key
        return self._key

    def _chain_end(self) -> bytes:
        """The MAC the next record chains from (read from the file the first time)."""
        if self._previous is None:
            try:
                data = self.path.read_bytes()
            except FileNotFoundError:
                data = b""
            self._previous = verify(data, self.path, self._signing_key()).end
        return self._previous

    def _write(self, data: bytes) -> None:
        _write_whole(self.path, data, os.O_APPEND | os.O_CREAT, sync=False)

    def move(self, folder: Path, notebook: str) -> None:
        """Move the file into another notebook folder (the notebook was renamed or moved).

        A file's folder is part of its first MAC, so the records that verify are written
        anew, each signed after the one before it, with the header naming the notebook's
        new path. The new file replaces the old one only once it is whole on disk.

        Args:
            folder: The renamed notebook's folder
                (:func:`~nbagent.store.folders.notebook_folder`); made if missing.
            notebook: The notebook's new path, for the header.

        Raises:
            OSError: The file could not be read or written (the old one is then kept).
        """
        with self._lock:
            key = self._signing_key()
            chain = verify(self.path.read_bytes(), self.path, key)
            target = folder / self.path.name
            keyed, previous, lines = _keyed(key), _seed(key, target), bytearray()
            for read in chain.lines:
                if read.record is None:
                    continue
                record = (
                    {**read.record, "notebook": notebook}
                    if "nbagent" in read.record
                    else read.record
                )
                body = _line(record)[:-1]
                previous = _signed(keyed, previous, body)
                lines += body[:-1] + _MAC_FIELD + previous.hex().encode("ascii") + b'"}\n'
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = target.with_suffix(".partial")
            _write_whole(partial, bytes(lines), os.O_CREAT | os.O_TRUNC)
            os.replace(partial, target)
            self.path.unlink(missing_ok=True)
            self.path, self._previous = target, previous

    def mend(self) -> None:
        """End a line cut short by a crash, so that the next record starts a line of its own,
        and acknowledge it in a record chained after it (the chain goes on verifying)."""
        with self._lock:
            data = self.path.read_bytes()
            if not data or data.endswith(b"\n"):
                return
            self._chain_end()
            self._write(b"\n")
            remnant = data[data.rfind(b"\n") + 1 :]
            self._append({"cut": hashlib.sha256(remnant).hexdigest()})
