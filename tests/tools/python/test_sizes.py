"""Tests of nbagent.tools.python.sizes: byte counts as a person reads them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.tools.python.sizes import human_bytes


@settings(max_examples=30)
@given(st.integers(0, 2**50))
def test_human_bytes(count: int) -> None:
    text = human_bytes(count)
    number, unit = text.split()
    assert unit in ("B", "KB", "MB", "GB")
    scale = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[unit]
    assert abs(float(number) * scale - count) <= 0.05 * scale + 1
