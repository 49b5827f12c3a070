"""Safe summaries of values: bounded reprs, no properties run, numpy and pandas understood."""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.tools.summary import (
    ReprTimeout,
    Summary,
    bounded,
    human_bytes,
    instance_dict,
    safe_repr,
    summarize,
)


class Point:
    """A plain class: object.__repr__, attributes in __dict__."""

    def __init__(self) -> None:
        self.x = 1
        self.y = [1, 2]


class Hangs:
    """A repr that spins for 3 s (long enough to be stopped, short enough not to hang tests)."""

    def __repr__(self) -> str:
        end = time.monotonic() + 3
        while time.monotonic() < end: pass  # noqa: E701 (one line: no line events)  # fmt: skip
        return "Hangs()"


class Fails:
    def __repr__(self) -> str:
        raise ValueError("no")


class Watched:
    """Counts how often its property and its __len__ run: they must never run."""

    runs = 0

    @property
    def shape(self) -> tuple[int, int]:
        Watched.runs += 1
        return (1, 1)

    @property
    def dtype(self) -> str:
        Watched.runs += 1
        return "x"

    def __len__(self) -> int:
        Watched.runs += 1
        return 1

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        Watched.runs += 1
        return pd.DataFrame

    @property  # type: ignore[misc]
    def __dict__(self) -> dict[str, Any]:
        Watched.runs += 1
        return {"secret": 1}


def test_builtins() -> None:
    assert summarize(42, 80, 0.5) == Summary("int", "", "", "", "42")
    assert summarize("hi", 80, 0.5) == Summary("str", "len 2", "", "51 B", "'hi'")
    assert summarize(list(range(100)), 80, 0.5).preview == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]"
    assert summarize({"a": Point()}, 80, 0.5) == Summary(
        "dict", "len 1", "", "", "{'a': <tests.Point object>}"
    )
    assert summarize(10**5000, 80, 0.5).preview == "<int of 16,610 bits>"


def test_numpy_and_pandas() -> None:
    array = np.arange(12.0).reshape(3, 4)
    summary = summarize(array, 200, 1)
    assert (summary.type, summary.shape, summary.dtype, summary.size) == (
        "numpy.ndarray",
        "3×4",
        "float64",
        "96 B",
    )
    assert summary.preview.startswith("[[ 0. 1. 2. 3.]")
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    summary = summarize(frame, 80, 1)
    assert (summary.type, summary.shape, summary.dtype) == ("pandas.DataFrame", "3×2", "")
    assert summary.preview == "columns: a, b" and summary.size.endswith("B")
    series = summarize(pd.Series([1.5, 2.5], name="s"), 80, 1)
    assert (series.shape, series.dtype, series.preview) == ("2", "float64", "[1.5 2.5]")
    assert summarize(np.float64(2.5), 80, 1).shape == "scalar"


def test_functions_and_classes() -> None:
    def f(a: int, b: int = 2) -> int:
        return a + b

    assert summarize(f, 80, 1).preview == "f(a: 'int', b: 'int' = 2) -> 'int'"
    assert summarize(Point, 80, 1) == Summary("type", "", "", "", "class Point")


def test_unknown_code_never_runs() -> None:
    Watched.runs = 0
    value = Watched()
    summary = summarize(value, 80, 1)
    assert summary.type == "tests.Watched" and summary.shape == "" and summary.dtype == ""
    assert instance_dict(value) == {}
    assert Watched.runs == 0


def test_reprs_are_bounded_in_time_and_size() -> None:
    started = time.monotonic()
    assert safe_repr(Hangs(), 80, 0.2) == "<tests.Hangs object: its repr took longer than 0.2 s>"
    assert safe_repr([Hangs()], 80, 0.2) == "<list object: its repr took longer than 0.2 s>"
    assert time.monotonic() - started < 2
    assert safe_repr(Fails(), 80, 1) == "<tests.Fails object: its repr failed (ValueError)>"
    cut = safe_repr("x" * 1000, 50, 1)
    assert len(cut) <= 50 and cut.startswith("'xxx") and "..." in cut


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


@settings(max_examples=30)
@given(st.integers(0, 2**50))
def test_human_bytes(count: int) -> None:
    text = human_bytes(count)
    number, unit = text.split()
    assert unit in ("B", "KB", "MB", "GB")
    scale = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[unit]
    assert abs(float(number) * scale - count) <= 0.05 * scale + 1
