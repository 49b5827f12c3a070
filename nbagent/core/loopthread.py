"""An asyncio event loop on a daemon thread of its own, for work the kernel must not wait on.

The MCP manager and the live notebook documents each keep one: the kernel's own thread
submits coroutines to it (:meth:`LoopThread.loop` with ``asyncio.run_coroutine_threadsafe``)
and never blocks on the network itself.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from contextlib import suppress


class LoopThread:
    """An event loop running on a daemon thread, started on first use. Thread-safe."""

    def __init__(self, name: str) -> None:
        """Name the thread (nothing starts yet).

        Args:
            name: The thread's name, as debuggers and ``threading.enumerate()`` show it.
        """
        self.name = name
        """The thread's name."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        """Whether the loop was started (and not stopped since)."""
        return self._loop is not None

    def loop(self) -> asyncio.AbstractEventLoop:
        """Return the loop, starting it and its thread on first use."""
        with self._lock:
            if self._loop is None:
                # Kernels on Windows use a selector loop, which cannot start processes.
                proactor = sys.platform == "win32"
                loop = asyncio.ProactorEventLoop() if proactor else asyncio.new_event_loop()
                thread = threading.Thread(target=_serve, args=(loop,), name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def stop(self, timeout: float) -> None:
        """Cancel the tasks left on the loop, stop it and wait for its thread (if it started).

        Args:
            timeout: Seconds to wait for the tasks, then for the thread, at most.
        """
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        with suppress(TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(_cancel_leftovers(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run the loop until stopped, then close it (the thread's body)."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


async def _cancel_leftovers() -> None:
    """Cancel every other task on the loop (SDK helpers, readers), so that it closes cleanly."""
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()
