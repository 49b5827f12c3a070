"""NotebookRun's time limit within the person's maximum, and the queue for after the turn."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.errors import ToolError
from nbagent.tools.notebook.run_queue import QueuedRun, RunQueue


@given(
    st.floats(min_value=0.001, max_value=1e6),
    st.floats(min_value=0.001, max_value=1e6),
    st.floats(min_value=0.001, max_value=1e4),
)
def test_a_limit_is_the_one_asked_within_the_maximum(
    asked: float, maximum: float, default: float
) -> None:
    runs = RunQueue(max_seconds=maximum)
    assert runs.limit(None, default) == min(default, maximum)
    if asked <= maximum:
        assert runs.limit(asked, default) == asked
    else:
        with pytest.raises(ToolError, match="c.NbAgent.max_run_seconds"):
            runs.limit(asked, default)


@pytest.mark.parametrize("asked", [0, -1, "60", True])
def test_a_limit_that_is_not_a_positive_number_is_refused(asked: object) -> None:
    with pytest.raises(ToolError, match="timeout must be"):
        RunQueue().limit(asked, 300)  # type: ignore[arg-type]


def test_the_queue_runs_each_cell_once_and_empties_when_taken() -> None:
    runs = RunQueue()
    assert runs.add(QueuedRun("a", "x = 1")) == 1
    assert runs.add(QueuedRun("b", "y = 2")) == 2
    with pytest.raises(ToolError, match="queued already"):
        runs.add(QueuedRun("a", "x = 1"))
    assert [r.cell_id for r in runs.take()] == ["a", "b"]
    assert runs.take() == []
