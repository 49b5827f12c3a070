"""Tests of nbagent.tools.python.reprs: the one repr that runs a value's own, bounded."""

from __future__ import annotations

import time

from nbagent.tools.python.reprs import safe_repr


class Hangs:
    """A repr that spins for 3 s (long enough to be stopped, short enough not to hang tests)."""

    def __repr__(self) -> str:
        end = time.monotonic() + 3
        while time.monotonic() < end: pass  # noqa: E701 (one line: no line events)  # fmt: skip
        return "Hangs()"


class Fails:
    def __repr__(self) -> str:
        raise ValueError("no")


def test_reprs_are_bounded_in_time_and_size() -> None:
    started = time.monotonic()
    assert safe_repr(Hangs(), 80, 0.2) == "<tests.Hangs object: its repr took longer than 0.2 s>"
    assert safe_repr([Hangs()], 80, 0.2) == "<list object: its repr took longer than 0.2 s>"
    assert time.monotonic() - started < 2
    assert safe_repr(Fails(), 80, 1) == "<tests.Fails object: its repr failed (ValueError)>"
    cut = safe_repr("x" * 1000, 50, 1)
    assert len(cut) <= 50 and cut.startswith("'xxx") and "..." in cut
