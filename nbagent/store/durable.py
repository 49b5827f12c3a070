"""Making appended files durable off the cell's path: one ``fsync`` a little after the writes.

A record's ``write`` reaches the operating system at once, so a kernel killed right after loses
nothing of it; what ``fsync`` adds is surviving a crash of the machine itself, and it costs the
writer the disk's journal commit, a few milliseconds of waiting per record. So a conversation's
file is synced by one background thread, :data:`DELAY` seconds after its first write not yet
synced, once for all the writes made meanwhile, and again at the interpreter's exit
(:func:`sync_later`, :func:`sync_now`). A machine that crashes loses at most the records of
those last seconds; each line is whole or left out when read.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from pathlib import Path

from nbagent.core.secrets import get_logger

log = get_logger(__name__)

DELAY = 1.0
"""Seconds from a file's first unsynced write to its ``fsync``."""


class _Syncer:
    """The files written and not yet synced, each with when it is due, and the thread that
    syncs them."""

    def __init__(self) -> None:
        self._due: dict[Path, float] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def later(self, path: Path) -> None:
        """Sync a file :data:`DELAY` seconds from its first write since the last sync."""
        with self._changed:
            if path in self._due:
                return  # already due, as soon as its first unsynced write made it
            earliest = min(self._due.values(), default=None)
            due = self._due[path] = time.monotonic() + DELAY
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="nbagent-fsync", daemon=True)
                self._thread.start()
                atexit.register(self.now)
            if earliest is None or due < earliest:  # else it wakes for an earlier one first
                self._changed.notify()

    def now(self) -> None:
        """Sync every file waiting to be synced, at once."""
        with self._changed:
            paths = list(self._due)
            self._due.clear()
        for path in paths:
            _fsync(path)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due:
                    self._changed.wait()
                wait = min(self._due.values()) - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                now = time.monotonic()
                ready = [path for path, due in self._due.items() if due <= now]
                for path in ready:
                    del self._due[path]
            for path in ready:
                _fsync(path)


def _fsync(path: Path) -> None:
    """``fsync`` a file by its path (one moved or removed meanwhile has nothing to sync)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        log.warning("%s could not be synced to disk: %s", path, exc)
    finally:
        os.close(fd)


_syncer = _Syncer()


def _forget_in_child() -> None:
    """A forked child starts with no thread and nothing to sync (its parent syncs its own)."""
    global _syncer
    _syncer = _Syncer()


os.register_at_fork(after_in_child=_forget_in_child)


def sync_later(path: Path) -> None:
    """Have a file just written synced to disk soon, off the caller's thread.

    Args:
        path: The file.
    """
    _syncer.later(path)


def sync_now() -> None:
    """Sync every file written and not synced yet, at once (what the exit does)."""
    _syncer.now()
