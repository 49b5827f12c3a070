"""Tests of nbagent.render.transcript.summaries: a call's main argument and result in one line,
tool names grouped by server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.render.transcript.items import Call
from nbagent.render.transcript.summaries import (
    ARGUMENT_CHARS,
    LINE_CHARS,
    grouped,
    main_argument,
    result_summary,
)


def test_grouping_by_server() -> None:
    assert (
        grouped(["mcp__a__x", "mcp__b__y", "mcp__a__z", "Read"])
        == "mcp__a__ (2), mcp__b__ (1), Read"
    )


@pytest.mark.parametrize(
    ("tool_input", "shown"),
    [
        ({"command": "pytest -q\npytest -x"}, "pytest -q …"),
        (
            {"file_path": "/home/me/" + "d/" * 60 + "sales.csv"},
            "…" + ("d/" * 60 + "sales.csv")[-59:],
        ),
        ({"query": "weather"}, '"weather"'),
        ({"pattern": "TODO", "path": "src"}, '"TODO"'),
        ({"cell_id": "sales-df", "new_source": "x"}, "sales-df"),
        ({"cell_id": "0f3c9a2e-5b7d-4e1a-9c8b-2d4f6a8b0c1e"}, "0f3c9a2e"),
        ({"url": "https://example.com"}, "https://example.com"),
        ({"value": 21, "to": "F"}, "value=21, to='F'"),
        ({}, ""),
    ],
)
def test_the_main_argument_of_a_call(tool_input: dict, shown: str) -> None:  # type: ignore[type-arg]
    assert main_argument(tool_input) == shown


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(
    st.dictionaries(
        st.sampled_from(["command", "file_path", "query", "x", "cell_id"]) | st.text(max_size=10),
        JSON,
        max_size=4,
    )
)
def test_a_main_argument_is_one_short_line(tool_input: dict) -> None:  # type: ignore[type-arg]
    shown = main_argument(tool_input)
    assert "\n" not in shown and "\r" not in shown and len(shown) <= ARGUMENT_CHARS


@given(
    st.sampled_from(["ok", "error", "denied", "interrupted", "running", "waiting"]),
    st.text(max_size=300),
    st.text(max_size=200),
    st.floats(min_value=0, max_value=1e5),
)
def test_a_result_summary_is_one_short_line(
    status: str, result: str, summary: str, duration: float
) -> None:
    call = Call("c", "Echo", {}, status=status, result=result, summary=summary, duration=duration)
    said = result_summary(call)
    assert said and "\n" not in said and len(said) <= LINE_CHARS + 30
