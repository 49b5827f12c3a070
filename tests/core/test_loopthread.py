"""The background event loop thread."""

from __future__ import annotations

import asyncio
import threading

from nbagent.core.loopthread import LoopThread


def threads_named(name: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == name]


def test_the_loop_starts_on_first_use_on_a_daemon_thread() -> None:
    background = LoopThread("test-loop-start")
    assert not background.started and threads_named("test-loop-start") == []
    loop = background.loop()
    try:
        assert background.started and background.loop() is loop
        (thread,) = threads_named("test-loop-start")
        assert thread.daemon

        async def where() -> str:
            return threading.current_thread().name

        assert asyncio.run_coroutine_threadsafe(where(), loop).result(5) == "test-loop-start"
    finally:
        background.stop(5)


def test_stop_cancels_what_is_left_and_ends_the_thread() -> None:
    background = LoopThread("test-loop-stop")
    loop = background.loop()
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    pending = asyncio.run_coroutine_threadsafe(forever(), loop)
    background.stop(5)
    assert cancelled.is_set() and pending.cancelled()
    assert loop.is_closed() and not background.started
    assert threads_named("test-loop-stop") == []


def test_stopping_a_loop_that_never_started_does_nothing() -> None:
    background = LoopThread("test-loop-idle")
    background.stop(1)
    assert not background.started and threads_named("test-loop-idle") == []
