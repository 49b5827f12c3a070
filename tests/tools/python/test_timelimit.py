"""Tests of nbagent.tools.python.timelimit: Python code stopped once its time is up."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from nbagent.tools.python.timelimit import ReprTimeout, bounded
from tests.tools.python.test_reprs import Hangs


def test_bounded_restores_the_trace_function() -> None:
    def debugger(frame: Any, event: str, arg: Any) -> None:
        return None

    sys.settrace(debugger)
    try:
        with pytest.raises(ReprTimeout):
            bounded(lambda: repr(Hangs()), 0.1)
        assert bounded(lambda: 1 + 1, 1) == 2
        assert sys.gettrace() is debugger
    finally:
        sys.settrace(None)
