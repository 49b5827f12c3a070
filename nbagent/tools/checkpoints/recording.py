"""The checkpoint log: the tools record each change here, the undo commands read it.

One :class:`CheckpointLog` per kernel. ``%%agent`` opens a checkpoint (:meth:`~CheckpointLog.begin`)
and closes it; each notebook or file change a tool makes is added to it as it is made, and the
log is saved at once through its :class:`CheckpointStore` (nbagent's folder of the notebook, beside
its saved conversations, so that checkpoints survive a kernel restart). At most
:attr:`~CheckpointLog.limit` checkpoints are kept, the oldest dropped first.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from nbagent.core.secrets import get_logger
from nbagent.tools.checkpoints.model import Change, Checkpoint, CheckpointKind

log = get_logger(__name__)

MAX_CONTENT = 16 * 1024 * 1024
"""Bytes of one file's content a checkpoint keeps at most: a change of a larger file is not
kept (and said so), rather than copied whole into nbagent's folder."""

UNTRACKED = frozenset({"Bash", "RunCode"})
"""Tools whose changes (files a command wrote, variables) no checkpoint holds."""


class CheckpointStore(Protocol):
    """Where checkpoints are kept (implemented in :mod:`nbagent.store.checkpoints`)."""

    def load(self) -> dict[str, Any] | None:
        """The log as last saved, or None."""
        ...

    def save(self, data: dict[str, Any]) -> None:
        """Save the log (atomically)."""
        ...

    def put(self, data: bytes) -> str:
        """Keep a file's content; return its digest."""
        ...

    def get(self, digest: str) -> bytes:
        """A content kept by :meth:`put`."""
        ...

    def keep(self, digests: set[str]) -> None:
        """Remove every content but these."""
        ...


class MemoryStore:
    """A :class:`CheckpointStore` in memory (no notebook folder, or in tests)."""

    def __init__(self) -> None:
        self.data: dict[str, Any] | None = None
        self.contents: dict[str, bytes] = {}

    def load(self) -> dict[str, Any] | None:
        """The log as last saved, or None."""
        return self.data

    def save(self, data: dict[str, Any]) -> None:
        """Keep the log."""
        self.data = data

    def put(self, data: bytes) -> str:
        """Keep a file's content; return its digest."""
        digest = hashlib.sha256(data).hexdigest()
        self.contents[digest] = data
        return digest

    def get(self, digest: str) -> bytes:
        """A content kept by :meth:`put`.

        Raises:
            FileNotFoundError: It is not kept.
        """
        try:
            return self.contents[digest]
        except KeyError:
            raise FileNotFoundError(digest) from None

    def keep(self, digests: set[str]) -> None:
        """Remove every content but these."""
        for digest in set(self.contents) - digests:
            del self.contents[digest]


class CheckpointLog:
    """The checkpoints of one notebook's agent, recorded as the tools change things.

    Args:
        store: Returns where the log is kept (asked at first use), or None to keep it in
            memory only.
        limit: Returns how many checkpoints are kept at most (0: none are recorded).
    """

    def __init__(
        self, store: Callable[[], CheckpointStore | None], limit: Callable[[], int]
    ) -> None:
        self._store_of = store
        self._limit = limit
        self._store: CheckpointStore | None = None
        self._loaded = False
        self._items: list[Checkpoint] = []
        self._next = 1
        self._notes: list[str] = []
        self._current: Checkpoint | None = None
        self._lock = threading.RLock()
        self._memory = MemoryStore()

    review = False
    """Review mode in the cell that runs (each edit kept once the person accepts it)."""

    @property
    def enabled(self) -> bool:
        """Whether changes are recorded (``c.NbAgent.checkpoints`` above 0, or review mode,
        which undoes a rejected change from its record)."""
        return self._limit() > 0 or self.review

    @property
    def store(self) -> CheckpointStore | None:
        """Where the log is kept (file contents included)."""
        self._load()
        return self._store

    def begin(
        self,
        cell_id: str | None,
        prompt: str,
        conversation: int | None = None,
        conversation_id: str | None = None,
        conversation_mark: str = "",
    ) -> None:
        """Open the checkpoint of an ``%%agent`` cell (kept once something is recorded in it).

        Args:
            cell_id: The cell's id, if known.
            prompt: The prompt (its first line is kept).
            conversation: The conversation's length before the cell.
            conversation_id: The saved conversation's id.
            conversation_mark: A digest of the conversation's last message.
        """
        with self._lock:
            self._load()
            first = next((line for line in prompt.splitlines() if line.strip()), "")
            self._current = Checkpoint(
                0,
                "cell",
                time.time(),
                cell_id=cell_id,
                prompt=first[:120],
                conversation=conversation,
                conversation_id=conversation_id,
                conversation_mark=conversation_mark,
            )

    def end(self) -> Checkpoint | None:
        """Close the open checkpoint; return it if it was kept."""
        with self._lock:
            current, self._current = self._current, None
            return current if current is not None and current.number else None

    @property
    def current(self) -> Checkpoint | None:
        """The open checkpoint, once something was recorded in it."""
        with self._lock:
            current = self._current
            return current if current is not None and current.number else None

    def record(self, change: Change) -> None:
        """Add a change to the open checkpoint (one is opened when none is) and save.

        Args:
            change: The change, just made.
        """
        if not self.enabled:
            return
        with self._lock:
            self._open().changes.append(change)
            self._save()

    def record_file(
        self, path: str, before: bytes | None, after: bytes | None, tool: str, call_id: str = ""
    ) -> None:
        """Add a change of a file to the open checkpoint, its contents kept in the store.

        Args:
            path: The file's resolved path.
            before: Its bytes before, or None when it did not exist.
            after: Its bytes after, or None when it was removed.
            tool: The tool that changed it.
            call_id: The tool call's id.
        """
        if not self.enabled:
            return
        if any(data is not None and len(data) > MAX_CONTENT for data in (before, after)):
            self.note_too_large(path, tool)
            return
        with self._lock:
            self._load()
            store = self._store or self._memory
            digests = [None if data is None else store.put(data) for data in (before, after)]
            change = Change("file", path, tool, call_id, before=digests[0], after=digests[1])
            self._open().changes.append(change)
            self._save()

    def note_too_large(self, path: str, tool: str) -> None:
        """Note that a tool changed a file too large to keep (over :data:`MAX_CONTENT`): an
        undo says it cannot take that change back.

        Args:
            path: The file's resolved path.
            tool: The tool that changed it.
        """
        if not self.enabled:
            return
        said = f"{tool} of {Path(path).name} (over {MAX_CONTENT // (1024 * 1024)} MiB: not kept)"
        with self._lock:
            current = self._open()
            if said not in current.untracked:
                current.untracked.append(said)
                self._save()

    def keep_content(self, data: bytes) -> str:
        """Keep a file's content for a change about to be recorded; return its digest."""
        with self._lock:
            self._load()
            return (self._store or self._memory).put(data)

    def content(self, digest: str) -> bytes:
        """A file's content kept by :meth:`record_file`.

        Raises:
            OSError: It is not kept (any more).
        """
        with self._lock:
            self._load()
            return (self._store or self._memory).get(digest)

    def note_untracked(self, tool: str) -> None:
        """Note that a tool whose changes are not tracked ran in the open checkpoint.

        Args:
            tool: Its name (``Bash``, ``RunCode``).
        """
        if not self.enabled or tool not in UNTRACKED:
            return
        with self._lock:
            current = self._open()
            if tool not in current.untracked:
                current.untracked.append(tool)
                self._save()

    def current_changes(self) -> list[Change]:
        """The changes of the open checkpoint so far."""
        with self._lock:
            current = self.current
            return list(current.changes) if current is not None else []

    def checkpoints(self) -> list[Checkpoint]:
        """The checkpoints kept, oldest first."""
        with self._lock:
            self._load()
            return list(self._items)

    def get(self, number: int) -> Checkpoint | None:
        """The checkpoint of that number, if kept."""
        return next((item for item in self.checkpoints() if item.number == number), None)

    def add(
        self, kind: CheckpointKind, prompt: str, changes: Iterable[Change], **fields: Any
    ) -> Checkpoint:
        """Keep a checkpoint made whole (an undo), and save.

        Args:
            kind: Its kind.
            prompt: What it did.
            changes: Its changes.
            **fields: Other fields (``undoes``, ``left``).
        """
        with self._lock:
            self._load()
            item = Checkpoint(
                self._next, kind, time.time(), prompt=prompt, changes=list(changes), **fields
            )
            self._next += 1
            self._items.append(item)
            self._save()
            return item

    def set_undone(self, numbers: Iterable[int], by: int | None) -> None:
        """Mark checkpoints undone by an undo (or done again: ``by`` None), and save."""
        wanted = set(numbers)
        with self._lock:
            for item in self._items:
                if item.number in wanted:
                    item.undone_by = by
            self._save()

    def tell(self, text: str) -> None:
        """Keep a note for the model's next turn (what the person undid), and save."""
        with self._lock:
            self._load()
            self._notes.append(text)
            self._save()

    def take_notes(self) -> list[str]:
        """The notes for the model's next turn, forgotten once taken."""
        with self._lock:
            self._load()
            notes, self._notes = self._notes, []
            if notes:
                self._save()
            return notes

    def _open(self) -> Checkpoint:
        """The open checkpoint, numbered and kept at its first record."""
        self._load()
        if self._current is None:
            self._current = Checkpoint(0, "cell", time.time(), prompt="(outside an agent cell)")
        if not self._current.number:
            self._current.number = self._next
            self._next += 1
            self._items.append(self._current)
        return self._current

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        self._store = self._store_of()
        data = None
        if self._store is not None:
            try:
                data = self._store.load()
            except (OSError, ValueError, TypeError, KeyError) as exc:
                log.warning("The checkpoints could not be read: %s", exc)
        if data:
            self._items = [Checkpoint.from_json(item) for item in data.get("checkpoints", [])]
            self._next = int(data.get("next", 1))
            self._notes = list(data.get("notes", []))

    def _save(self) -> None:
        """Drop the oldest checkpoints past the limit, then write the log."""
        limit = max(self._limit(), 1)
        if len(self._items) > limit:
            del self._items[: len(self._items) - limit]
        data = {
            "version": 1,
            "next": self._next,
            "notes": self._notes,
            "checkpoints": [item.to_json() for item in self._items],
        }
        store = self._store or self._memory
        try:
            store.save(data)
            store.keep(set().union(*(item.blobs() for item in self._items)))
        except OSError as exc:
            log.warning("The checkpoints could not be saved: %s", exc)
