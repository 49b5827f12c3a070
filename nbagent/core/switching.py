"""A shorter GIL switch interval while nbagent's own background work runs.

A thread that computes in Python holds the GIL until the interpreter asks it to let go, every
``sys.getswitchinterval()`` (5 ms by default). Each time the kernel's main thread wakes (a
message from the front end, the reply sent, output flushed) it may wait that long for the GIL,
and a trivial cell wakes it many times: a kernel importing a large package or connecting MCP
servers on a thread answers several times slower. While nbagent's start-up work runs on its
threads, :func:`short_switch_interval` lowers the interval to :data:`SHORT_INTERVAL`, so the main
thread waits a 25th as long at each hand-off; the person's own value comes back when the last
such work ends (unless they set another meanwhile, which is then kept).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SHORT_INTERVAL = 0.0002
"""The switch interval, in seconds, while nbagent's background work runs."""

_lock = threading.Lock()
_holders = 0
_saved: float | None = None
"""The interval before the first holder lowered it."""
_ours: float | None = None
"""The interval as lowered (read back, as the interpreter rounds it)."""


def lower() -> None:
    """Lower the switch interval until a matching :func:`restore` (calls nest, across threads)."""
    global _holders, _saved, _ours
    with _lock:
        if _holders == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved, SHORT_INTERVAL))
            _ours = sys.getswitchinterval()
        _holders += 1


def restore() -> None:
    """End one :func:`lower`: the last one puts the person's interval back, unless they set
    another since (theirs is kept)."""
    global _holders, _saved, _ours
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders == 0 and _saved is not None:
            if sys.getswitchinterval() == _ours:
                sys.setswitchinterval(_saved)
            _saved = _ours = None


@contextmanager
def short_switch_interval() -> Iterator[None]:
    """Run a block with the switch interval lowered (see the module's docstring).

    Yields:
        Nothing; the interval is restored when the block ends, however it ends.
    """
    lower()
    try:
        yield
    finally:
        restore()
