"""Imports on nbagent's background threads, paced so that the person's cells keep the GIL.

Importing a large package (the SDK, the MCP SDK with its pydantic models) computes in Python
for a second or more: on a thread, it holds the GIL most of that time, and a cell the person
runs meanwhile waits for it at every step. While :func:`paced_imports` is on, a thread named in
:data:`PACED_THREADS` that has computed for :data:`SLICE` seconds of its own CPU time since its
last pause sleeps, just before it imports its next module, :data:`REST` times as long as it
computed (at most :data:`MAX_REST`): its imports take about three times as long, and leave the
GIL free two thirds of the time. A paced thread does not pause while the main thread waits for
a module being imported (a cell that needs the SDK does not wait for the pauses). A single
large module still runs in one go (the MCP SDK's type modules take 0.3 s each): there only the
short switch interval helps (:mod:`nbagent.core.switching`). Other threads, and the paced ones
when pacing is off, import as usual.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

PACED_THREADS = frozenset({"nbagent-start-up", "nbagent-mcp"})
"""The names of the threads whose imports are paced: nbagent's start-up work
(:mod:`nbagent.jupyter.extension`) and the MCP manager's event loop (:mod:`nbagent.mcp`)."""

SLICE = 0.002
"""Seconds a paced thread computes before it pauses."""

REST = 2.0
"""A pause's length over the work before it."""

MAX_REST = 0.010
"""Seconds a pause lasts at most."""


class _Pacer:
    """A meta path finder that finds nothing: it only pauses the paced threads."""

    def __init__(self) -> None:
        self.holders = 0
        self._resumed: dict[int, float] = {}

    def find_spec(
        self,
        name: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """Pause a paced thread that has computed a slice, then let the other finders look.

        Returns:
            None, always.
        """
        thread = threading.current_thread()
        if thread.name not in PACED_THREADS:
            return None
        now = time.thread_time()
        worked = now - self._resumed.setdefault(thread.ident or 0, now)
        if worked >= SLICE:
            if not _main_thread_waits_for_an_import():
                time.sleep(min(worked * REST, MAX_REST))
            self._resumed[thread.ident or 0] = time.thread_time()
        return None


def _main_thread_waits_for_an_import() -> bool:
    """Whether the main thread (the person's cell) waits for a module another thread is
    importing: then a paced thread does not pause (the cell would wait for its pauses)."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    return (
        frame is not None
        and frame.f_code.co_filename == "<frozen importlib._bootstrap>"
        and frame.f_code.co_name == "acquire"
    )


_pacer = _Pacer()
_lock = threading.Lock()


@contextmanager
def paced_imports() -> Iterator[None]:
    """Pace the imports of :data:`PACED_THREADS` while a block runs (calls nest).

    Yields:
        Nothing; pacing ends with the last block, however it ends.
    """
    with _lock:
        if _pacer.holders == 0:
            sys.meta_path.insert(0, _pacer)
        _pacer.holders += 1
    try:
        yield
    finally:
        with _lock:
            _pacer.holders -= 1
            if _pacer.holders == 0:
                sys.meta_path[:] = [finder for finder in sys.meta_path if finder is not _pacer]
                _pacer._resumed.clear()
