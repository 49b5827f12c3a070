"""Bounded output: cutting text at a line, keeping the start and end of a stream."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.output import HeadTail, cap_text


def test_cap_text_cuts_at_a_line_and_says_so() -> None:
    assert cap_text("short", 10, "x") == "short"
    assert cap_text("aaa\nbbb\nccc\n", 9, "use offset") == (
        "aaa\nbbb\n[Output cut at 7 characters (2 more lines): use offset.]"
    )


@given(chunks=st.lists(st.text(max_size=50), max_size=30), limit=st.integers(2, 200))
def test_head_tail_keeps_the_ends_and_counts_the_rest(chunks: list[str], limit: int) -> None:
    buffer = HeadTail(limit)
    for chunk in chunks:
        buffer.write(chunk)
    whole = "".join(chunks)
    assert buffer.total == len(whole)
    kept = buffer.text()
    if len(whole) <= limit - limit % 2:
        assert kept == whole
    else:
        head, _, rest = kept.partition("\n[... ")
        cut, _, tail = rest.partition(" characters cut from the middle ...]\n")
        assert whole.startswith(head) and whole.endswith(tail)
        assert len(head) + int(cut.replace(",", "")) + len(tail) == len(whole)
