"""The execution record: bounded, ordered, per cell."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.notebook.record import (
    MESSAGE_CHARS,
    SOURCE_CHARS,
    ExecutionRecord,
    source_digest,
)


def _add(record: ExecutionRecord, cell_id: str | None, source: str = "x = 1", **kw):
    values = {
        "execution_count": None,
        "started": 0.0,
        "duration": 0.1,
        "error": None,
    } | kw
    return record.add(cell_id=cell_id, source=source, **values)


def test_a_run_is_kept_with_its_cell_and_outcome() -> None:
    record = ExecutionRecord(kernel_started=5.0)
    ok = _add(record, "a", execution_count=1, bound=("x",))
    failed = _add(record, "b", "1/0", error=ZeroDivisionError("division by zero"))
    assert (ok.number, failed.number) == (1, 2)
    assert ok.outcome == "ok" and ok.bound == ("x",)
    assert failed.outcome == "ZeroDivisionError: division by zero"
    assert record.last_error is failed
    assert record.last_run("a") is ok and record.last_run("c") is None
    assert record.runs(since=1) == [failed]
    assert record.kernel_started == 5.0


def test_an_interrupt_is_its_own_outcome() -> None:
    run = _add(ExecutionRecord(), "a", error=KeyboardInterrupt())
    assert run.interrupted and run.outcome == "interrupted"


def test_an_agent_cell_is_marked() -> None:
    assert _add(ExecutionRecord(), "a", "%%agent\nhello").agent_cell


def test_long_sources_and_messages_are_cut_but_digested_whole() -> None:
    source = "y = 2\n" * SOURCE_CHARS
    run = _add(ExecutionRecord(), "a", source, error=ValueError("v" * 10_000))
    assert len(run.source) == SOURCE_CHARS and run.digest == source_digest(source)
    assert len(run.message) == MESSAGE_CHARS


@given(st.lists(st.sampled_from("abcdefgh"), max_size=60))
def test_the_record_stays_bounded(cells: list[str]) -> None:
    record = ExecutionRecord(runs=10, cells=4)
    for cell in cells:
        _add(record, cell)
    runs = record.runs()
    assert len(runs) == min(10, len(cells))
    assert [r.number for r in runs] == list(range(len(cells) - len(runs) + 1, len(cells) + 1))
    recent = list(dict.fromkeys(reversed(cells)))[:4]
    assert all(record.last_run(c) is not None for c in recent)
    assert sum(record.last_run(c) is not None for c in "abcdefgh") == len(recent)


def test_an_attribution_holds_inside_its_block_only() -> None:
    record = ExecutionRecord()
    with record.attributed("cell", 7):
        seen = record.attribution()
    assert seen is not None and (seen.cell_id, seen.execution_count) == ("cell", 7)
    assert record.attribution() is None
