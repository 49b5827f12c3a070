"""Big outputs as digests: what the model needs of a long output, and where to read the rest.

Notebook outputs fill a context fastest: a long log, a DataFrame of 10,000 rows. The model is
given instead:

- of a long text, its head and its tail, with how much was left out between them and the
  tool call that reads it (:func:`text_digest`);
- of a DataFrame (pandas, polars or any table with ``shape``, ``dtypes``, ``head`` and
  ``tail``), its shape, its column types, its first and last rows (:func:`frame_digest`),
  in place of its HTML and text renderings (:func:`with_frame_digest`).
"""

from __future__ import annotations

from typing import Any

FRAME_ROWS = 5
"""The rows shown from each end of a DataFrame."""

HEAD_SHARE = 2 / 3
"""The share of a long text's room given to its head (the rest to its tail)."""


def text_digest(text: str, limit: int, more: str) -> str:
    """A long text's head and tail, cut at line boundaries, saying what was left out.

    Args:
        text: The text.
        limit: Characters kept at most (the note comes on top).
        more: How to read the rest, e.g. ``NotebookRead cell_id="ab12"``.

    Returns:
        The text, whole if it fits.
    """
    if len(text) <= limit:
        return text
    head_room = int(limit * HEAD_SHARE)
    head_end = text.rfind("\n", 0, head_room)
    head_end = head_end if head_end > 0 else head_room
    tail_room = limit - head_end
    tail_start = text.find("\n", len(text) - tail_room)
    tail_start = len(text) - tail_room if tail_start < 0 else tail_start + 1
    middle = text[head_end:tail_start]
    lines = middle.count("\n")
    note = (
        f"[… {len(middle):,} characters ({lines:,} lines) left out between the head and the "
        f"tail; {more}]"
    )
    return f"{text[:head_end].rstrip()}\n{note}\n{text[tail_start:]}"


def is_frame(value: Any) -> bool:
    """Whether a value is a table: two-dimensional, with column types, a head and a tail."""
    shape = getattr(value, "shape", None)
    return (
        isinstance(shape, tuple)
        and len(shape) == 2
        and all(callable(getattr(value, name, None)) for name in ("head", "tail"))
        and getattr(value, "dtypes", None) is not None
    )


def frame_digest(frame: Any, rows: int = FRAME_ROWS) -> str:
    """A DataFrame's shape, column types, first and last rows.

    Args:
        frame: The table (:func:`is_frame`).
        rows: Rows from each end.

    Returns:
        E.g. ``DataFrame: 10,000 rows × 3 columns`` then ``dtypes:`` and the rows.
    """
    length, width = frame.shape
    kind = type(frame).__name__
    parts = [f"{kind}: {length:,} rows × {width:,} columns", "dtypes:", _dtypes(frame)]
    if length <= 2 * rows:
        parts += ["rows:", str(frame)]
    else:
        parts += [f"first {rows} rows:", str(frame.head(rows))]
        parts += [f"last {rows} rows:", str(frame.tail(rows))]
    return "\n".join(parts)


def _dtypes(frame: Any) -> str:
    """The column types, one a line."""
    dtypes = frame.dtypes
    if hasattr(dtypes, "items"):  # pandas: a Series of dtypes by column
        return "\n".join(f"  {name}: {dtype}" for name, dtype in dtypes.items())
    columns = getattr(frame, "columns", [])
    return "\n".join(f"  {name}: {dtype}" for name, dtype in zip(columns, dtypes, strict=False))


def with_frame_digest(outputs: list[dict[str, Any]], result: Any) -> list[dict[str, Any]]:
    """The outputs of a run, its result replaced by a digest when that result is a table.

    Args:
        outputs: The run's nbformat outputs.
        result: The value the run's ``execute_result`` shows (``CellRun.result``).

    Returns:
        The outputs; the ``execute_result`` of a table shown as its digest (text only).
    """
    if not is_frame(result) or not any(o.get("output_type") == "execute_result" for o in outputs):
        return outputs
    try:
        digest = frame_digest(result)
    except Exception:  # a table type whose head or tail fails: show what it printed
        return outputs
    return [
        {**output, "data": {"text/plain": digest}}
        if output.get("output_type") == "execute_result"
        else output
        for output in outputs
    ]
