"""IdleWatch: when no code has run in a shell for a while (real InteractiveShell cells)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.jupyter.idle import IdleWatch


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """The test process's shell."""
    yield InteractiveShell.instance()


def test_a_wait_begun_during_a_cell_ends_only_after_the_cell(shell: InteractiveShell) -> None:
    """A thread that waits for an idle shell while a cell runs goes on only once the cell
    has ended: when it goes on, the cell's last statement has run."""
    idle = IdleWatch(shell)
    seen: dict[str, object] = {}

    def waiter() -> None:
        seen["idle"] = idle.wait(0.01)
        seen["cell done"] = shell.user_ns.get("cell_done")

    shell.user_ns.update(waiter=waiter, threading=threading, cell_done=False)
    try:
        shell.run_cell(
            "import time\n"
            "thread = threading.Thread(target=waiter)\n"
            "thread.start()\n"
            "time.sleep(0.2)\n"
            "cell_done = True\n"
        )
        shell.user_ns["thread"].join(30)
    finally:
        idle.close()
    assert seen == {"idle": True, "cell done": True}


def test_nested_runs_keep_the_shell_busy_until_the_outer_one_ends(
    shell: InteractiveShell,
) -> None:
    """A cell that runs another cell (as NotebookRun does) is running until its own end,
    not the inner one's: a wait for no idle time at all, begun after the inner cell, does
    not end until it is told to."""
    idle = IdleWatch(shell)
    asked = itertools.count()
    shell.user_ns.update(idle=idle, go_on=lambda: next(asked) < 3)
    try:
        shell.run_cell("get_ipython().run_cell('1 + 1')\nanswer = idle.wait(0, go_on=go_on)")
        after = idle.wait(0)
    finally:
        idle.close()
    assert shell.user_ns["answer"] is False
    assert after is True


def test_go_on_false_ends_the_wait(shell: InteractiveShell) -> None:
    """When ``go_on`` says false (the session closed), the wait ends, answering False."""
    idle = IdleWatch(shell)
    try:
        assert idle.wait(3600, go_on=lambda: False) is False
    finally:
        idle.close()


def test_close_stops_following_the_shell(shell: InteractiveShell) -> None:
    """After close, the watch's callbacks are gone from the shell's events."""
    idle = IdleWatch(shell)
    idle.close()
    idle.close()  # twice is harmless
    callbacks = shell.events.callbacks
    assert idle._started not in callbacks["pre_execute"]
    assert idle._ended not in callbacks["post_execute"]
