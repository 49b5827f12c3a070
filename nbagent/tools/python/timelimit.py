"""Python code bounded in time: a trace function stops it once its seconds have passed."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Callable
from typing import Any, TypeVar

from nbagent.tools.python.safe_access import TRUSTED_LIBRARIES

T = TypeVar("T")
_UNTRACED = TRUSTED_LIBRARIES | {"nbagent", "reprlib", "inspect", "builtins"}


class ReprTimeout(Exception):
    """A bounded call ran out of time."""


def bounded(func: Callable[[], T], seconds: float) -> T:
    """Call ``func``, stopping any Python code it runs once ``seconds`` have passed.

    A trace function checks the clock at every call and, inside code outside the trusted
    libraries, at every bytecode instruction, so even a one-line ``while True`` stops. C code
    that never calls back into Python is not interrupted. The thread's previous trace
    function (a debugger's) is restored afterwards.

    Args:
        func: What to call.
        seconds: The time limit.

    Returns:
        What ``func`` returned.

    Raises:
        ReprTimeout: The limit passed.
    """
    deadline = time.monotonic() + seconds

    def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise ReprTimeout
        module = frame.f_globals.get("__name__", "") or ""
        if module.partition(".")[0] in _UNTRACED:
            return None
        frame.f_trace_opcodes = True
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return func()
    finally:
        sys.settrace(previous)
