"""What an edit's card opens on: the change as a diff, and what undo cannot take back.

A cell's source before and after as a unified diff, an inserted or deleted cell whole (its
lines all ``+`` or all ``-``), a file's unified diff. The text is words and fenced blocks, as a
permission question is, so a card shows it highlighted
(:func:`~nbagent.render.codeview.code_html`) and nbconvert as code.
"""

from __future__ import annotations

import difflib
from typing import Any

from nbagent.render.codeview import cell_diff, fenced, short_id
from nbagent.tools.checkpoints.model import Change

REVIEW_CHARS = 6000
"""Characters of a diff a card shows at most (the rest is counted)."""

DIFF_BYTES = 1024 * 1024
"""Bytes of a file, before and after together, past which its card shows no diff."""

UNTRACKED_REVIEW = (
    "Not in a checkpoint: %agent undo does not take back what this call changed (files it "
    "wrote, variables it set)."
)
"""What the card of a Bash or RunCode call says."""


def cell_review(change: Change, name: str, language: str = "python") -> str:
    """The diff of a cell change, under a line that says what it was.

    Args:
        change: The change.
        name: How the notebook is shown.
        language: The language of the cell's code.
    """
    before, after = change.before, change.after
    cell = after if after is not None else before
    kind = cell.get("cell_type", "code") if cell is not None else "code"
    language = language if kind == "code" else ("markdown" if kind == "markdown" else "text")
    where = f"cell {short_id(change.cell_id)} of {name}"
    if before is None:
        return f"Inserted {kind} {where}:\n" + _whole(_source(after), "+", language)
    if after is None:
        return f"Deleted {kind} {where}:\n" + _whole(_source(before), "-", language)
    diff = cell_diff(_source(before), _source(after))
    if before.get("cell_type") != after.get("cell_type"):
        where += f" ({before.get('cell_type')} to {after.get('cell_type')})"
    if not diff:
        return f"Replaced {where}, its source unchanged."
    return f"Replaced {where}:\n" + fenced(_capped(diff), f"diff {language}")


def file_review(name: str, before: bytes | None, after: bytes) -> str:
    """The unified diff of a file a tool wrote.

    Args:
        name: How the file is shown.
        before: Its bytes before (None: it did not exist).
        after: Its bytes after.
    """
    if len(before or b"") + len(after) > DIFF_BYTES:
        return f"{'Changed' if before is not None else 'Created'} {name} (too large to diff)."
    try:
        old = before.decode("utf-8") if before is not None else ""
        new = after.decode("utf-8")
    except UnicodeDecodeError:
        return f"{'Changed' if before is not None else 'Created'} {name} (not text: no diff)."
    if before is None:
        return f"Created {name}:\n" + _whole(new, "+", "text")
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), f"{name} (before)", f"{name} (after)", lineterm=""
    )
    diff = "\n".join(list(lines)[2:])
    return f"Changed {name}:\n" + fenced(_capped(diff), "diff text") if diff else ""


def _whole(source: str, mark: str, language: str) -> str:
    lines = source.split("\n")
    hunk = f"@@ -{'1,' + str(len(lines)) if mark == '-' else '0,0'} +"
    hunk += f"{'1,' + str(len(lines)) if mark == '+' else '0,0'} @@"
    return fenced(_capped("\n".join([hunk, *(mark + line for line in lines)])), f"diff {language}")


def _capped(diff: str) -> str:
    if len(diff) <= REVIEW_CHARS:
        return diff
    cut = diff[:REVIEW_CHARS].rsplit("\n", 1)[0]
    return f"{cut}\n[{len(diff) - len(cut):,} more characters]"


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source
