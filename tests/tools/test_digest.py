"""Big outputs as digests: a long text's head and tail, a DataFrame's shape, types and ends."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.digest import frame_digest, is_frame, text_digest, with_frame_digest

MORE = "read cell ab12"


@given(st.text(alphabet="ab\n", max_size=3000), st.integers(min_value=20, max_value=2000))
def test_a_digest_keeps_the_head_and_tail_within_the_limit(text: str, limit: int) -> None:
    """A text that fits is kept whole; a longer one becomes its head, a note naming what was
    left out and how to read it, and its tail: together no longer than the limit."""
    digest = text_digest(text, limit, MORE)
    if len(text) <= limit:
        assert digest == text
        return
    head, rest = digest.split("\n[… ", 1)
    note, tail = rest.split("]\n", 1)
    assert text.startswith(head) and text.endswith(tail)
    assert MORE in note
    assert len(head) + len(tail) <= limit
    left_out = int(note.split(" characters", 1)[0].replace(",", ""))
    assert left_out > 0 and len(head) <= len(text) - len(tail) - left_out


def test_a_long_log_keeps_its_last_lines() -> None:
    """The end of a log (where the error or the result is) survives."""
    log = "\n".join(f"step {k}" for k in range(10_000)) + "\nDONE: accuracy 0.93"
    digest = text_digest(log, 500, MORE)
    assert digest.startswith("step 0\nstep 1\n")
    assert digest.endswith("step 9999\nDONE: accuracy 0.93")
    assert "lines) left out" in digest and len(digest) < 700


def test_a_dataframe_digest_has_shape_dtypes_head_and_tail() -> None:
    frame = pd.DataFrame({"city": [f"c{k}" for k in range(1000)], "temp": range(1000)})
    assert is_frame(frame) and not is_frame([1, 2]) and not is_frame(frame["temp"])
    digest = frame_digest(frame)
    assert digest.startswith("DataFrame: 1,000 rows × 2 columns\ndtypes:\n  city: ")
    assert "temp: int64" in digest and "c0" in digest and "c999" in digest
    assert "c500" not in digest
    small = frame_digest(frame.head(3))
    assert "rows:" in small and "c2" in small


def test_a_run_whose_result_is_a_frame_shows_the_digest() -> None:
    """The execute_result of a DataFrame (looked up in Out by the run's count) is replaced by
    its digest; other outputs, and other results, stay."""
    frame = pd.DataFrame({"x": range(100)})
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "hi\n"},
        {
            "output_type": "execute_result",
            "execution_count": 7,
            "data": {"text/plain": "big", "text/html": "<table>…</table>"},
            "metadata": {},
        },
    ]
    shown = with_frame_digest(outputs, {7: frame}, 7)
    assert shown[0] == outputs[0]
    assert shown[1]["data"] == {"text/plain": frame_digest(frame)}
    assert with_frame_digest(outputs, {7: "text"}, 7) == outputs
    assert with_frame_digest(outputs, {}, None) == outputs
