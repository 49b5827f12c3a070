"""The file tools Read, Write and Edit.

Paths resolve against the context's root; a path outside it makes ``check_permission`` ask
the user. A file must have been read (and be unchanged since) before Edit changes it or
Write replaces it. The open notebook is never written here: NotebookEdit changes its cells.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from pathlib import Path
from typing import Any

from nbagent.core.access import paths
from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.tools.checkpoints.hooks import record_file, record_too_large, too_large
from nbagent.tools.checkpoints.review import file_review
from nbagent.tools.checkpoints.review_mode import reviewed
from nbagent.tools.context import ToolContext
from nbagent.tools.files.paths import (
    refuse_open_notebook,
    resolve,
    shown,
)
from nbagent.tools.files.stamps import ChangedOnDisk, FileStamp, atomic_write
from nbagent.tools.notebook.file import header, render_cells
from nbagent.tools.notebook.locate import snapshot
from nbagent.tools.python.sizes import human_bytes

_PROBE = 8192
_QUOTE_CHARS = 500
_SNIPPET_CONTEXT = 3
_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_BINARY_SIGNATURES = (
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x7fELF", "an executable"),
    (b"SQLite format 3\0", "an SQLite database"),
)


def image_type(head: bytes) -> str | None:
    """Return the media type of an image the API accepts (PNG, JPEG, GIF, WebP), from its bytes.

    Args:
        head: The file's first bytes.
    """
    for signature, media_type in _IMAGE_SIGNATURES:
        if head.startswith(signature):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def binary_kind(head: bytes) -> str | None:
    """Say what kind of binary file starts with these bytes, or None for text.

    Args:
        head: The file's first bytes.
    """
    for signature, kind in _BINARY_SIGNATURES:
        if head.startswith(signature):
            return kind
    return "binary data" if b"\0" in head else None


def _existing_file(context: ToolContext, file_path: str) -> tuple[Path, str]:
    """Resolve a path that must name an existing file."""
    path = resolve(context, file_path)
    name = shown(context, path)
    if not path.exists():
        raise ToolError(f"File does not exist: {name}")
    if path.is_dir():
        raise ToolError(f"{name} is a folder, not a file: list it with Glob.")
    return path, name


def _check_fresh(context: ToolContext, path: Path, name: str, then: str) -> FileStamp:
    """Require that the model read the file and that it has not changed since.

    Returns:
        The stamp the file had when it was read.
    """
    stamp = context.reads.stamp(path)
    if stamp is None:
        raise ToolError(f"{name} has not been read yet. Read it first, then {then}.")
    if not stamp.still_matches(path):
        raise ToolError(_changed(name, then))
    return stamp


def _changed(name: str, then: str) -> str:
    return (
        f"{name} has changed on disk since it was last read (by the user or another "
        f"program). Read it again, then {then}."
    )


def _write_over(path: Path, name: str, data: bytes, expect: FileStamp, then: str) -> None:
    """Replace a file the model read, unless another program saved it meanwhile."""
    try:
        atomic_write(path, data, expect)
    except ChangedOnDisk as changed:
        if changed.maybe_kept:
            raise ToolError(
                f"The change may not be in {name}: another program saved it at the moment the "
                f"change was written, and the file now holds that save. Read it again to see, "
                f"then {then}."
            ) from None
        raise ToolError(_changed(name, then)) from None


def read_tool(context: ToolContext) -> Tool:
    """Build the Read tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="Read",
        read_only=True,
        search_hint="open view show file contents cat image notebook",
        touches=paths("read", "file_path"),
    )
    def read(file_path: str, offset: int | None = None, limit: int | None = None) -> Any:
        """Read a file: text with line numbers, an image, or a notebook's cells.

        Text comes back `cat -n` style (line number, tab, line) from `offset` on; very long
        lines are cut, and a long file comes back in parts (the answer says how to go on).
        PNG, JPEG, GIF and WebP images come back as images. A `.ipynb` file comes back as
        its cells with ids, sources and outputs (for notebooks, `offset` and `limit` count
        cells). Other binary files are refused.

        Args:
            file_path: The file, absolute or relative to the working folder.
            offset: The first line to show (1 = the first line); for long files.
            limit: How many lines to show.
        """
        if offset is not None and offset < 1:
            raise ToolError("offset is a line number: it starts at 1.")
        if limit is not None and limit < 1:
            raise ToolError("limit must be at least 1.")
        path, name = _existing_file(context, file_path)
        if path.suffix.lower() == ".ipynb":
            return _read_notebook(context, path, name, offset or 1, limit)
        with path.open("rb") as stream:
            head = stream.read(_PROBE)
        media_type = image_type(head)
        if media_type:
            return _read_image(context, path, name, media_type)
        kind = binary_kind(head)
        if kind:
            raise ToolError(
                f"{name} is a binary file ({kind}); Read shows text files, images (PNG, "
                "JPEG, GIF, WebP) and notebooks. Inspect it with Bash (`file`, `xxd | head`) "
                "or load it with Python."
            )
        return _read_text(context, path, name, offset or 1, limit or limits.read_lines)

    more = f" Without `limit`, {limits.read_lines} lines are shown."
    return dataclasses.replace(read, description=read.description + more)


def _read_text(context: ToolContext, path: Path, name: str, start: int, count: int) -> ToolResult:
    """Read lines ``start`` to ``start + count - 1``, numbered, within the character limit."""
    limits = context.limits
    digest = hashlib.sha256()
    size = 0
    lines: list[str] = []
    used = 0
    total = 0
    stopped: int | None = None
    undecodable = False
    with path.open("rb") as stream:
        for raw in stream:
            digest.update(raw)
            size += len(raw)
            total += 1
            if total < start or total >= start + count or stopped is not None:
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text, undecodable = raw.decode("utf-8", "replace"), True
            text = text.removesuffix("\n").removesuffix("\r")
            if len(text) > limits.line_chars:
                extra = len(text) - limits.line_chars
                text = text[: limits.line_chars] + f"… [line cut: {extra:,} more characters]"
            line = f"{total:>6}\t{text}"
            if lines and used + len(line) > limits.read_chars:
                stopped = total
                continue
            lines.append(line)
            used += len(line) + 1
    context.reads.note(path, FileStamp(size, digest.hexdigest()))
    if total == 0:
        return ToolResult(f"(The file {name} is empty.)", metadata={"summary": "empty file"})
    if start > total:
        raise ToolError(
            f"{name} has {total} line{'s' if total != 1 else ''}; offset {start} is past its end."
        )
    end = start + len(lines) - 1
    notes = []
    if stopped is not None:
        notes.append(
            f"[Stopped after line {end}: one Read returns at most {limits.read_chars:,} "
            f"characters. Read on with offset={stopped}.]"
        )
    elif end < total:
        notes.append(f"[Showing lines {start}-{end} of {total}. Read on with offset={end + 1}.]")
    if undecodable:
        notes.append("[The file is not valid UTF-8: bytes that are not are shown as �.]")
    whole = start == 1 and end == total
    said = plural(total, "line") if whole else f"lines {start}-{end} of {total:,}"
    return ToolResult("\n".join(lines + notes), metadata={"summary": said})


def _read_image(context: ToolContext, path: Path, name: str, media_type: str) -> ToolResult:
    data = path.read_bytes()
    if len(data) > context.limits.image_bytes:
        raise ToolError(
            f"{name} is a {len(data) / 1e6:.1f} MB image; Read returns images up to "
            f"{context.limits.image_bytes / 1e6:.2f} MB. Save a smaller copy (e.g. with PIL) "
            "and read that."
        )
    context.reads.note(path, FileStamp.of_bytes(data))
    return ToolResult(
        content=[
            {"type": "text", "text": f"Image {name} ({media_type}, {len(data):,} bytes)"},
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": media_type,
                    "data": base64.b64encode(data).decode("ascii"),
                },
            },
        ],
        metadata={"summary": f"{media_type.split('/')[1].upper()} image, {human_bytes(len(data))}"},
    )


def _read_notebook(
    context: ToolContext, path: Path, name: str, start: int, count: int | None
) -> ToolResult:
    seen = snapshot(context, path, name)
    notebook = seen.notebook
    total = len(notebook.cells)
    if total and start > total:
        raise ToolError(f"{name} has {total} cells; offset {start} is past its end.")
    indices = range(start - 1, min(total, start - 1 + count) if count else total)
    running = context.cell_id()
    rendering = render_cells(
        notebook,
        indices,
        running,
        outputs=True,
        output_chars=context.limits.cell_output_chars,
        budget=context.limits.read_chars,
    )
    seen.remember(context, rendering.ids)
    parts = [" ".join(p for p in (header(notebook, name, running), seen.note) if p), rendering.text]
    last = rendering.stopped_at if rendering.stopped_at is not None else indices.stop
    if last < total:
        parts.append(
            f"[Showing cells {start}-{last} of {total}. Read on with offset={last + 1}, "
            "or use NotebookRead.]"
        )
    said = (
        plural(total, "cell")
        if start == 1 and last >= total
        else f"cells {start}-{last} of {total}"
    )
    return ToolResult("\n".join(part for part in parts if part), metadata={"summary": said})


def write_tool(context: ToolContext) -> Tool:
    """Build the Write tool.

    Args:
        context: The tools' context.
    """

    @tool(
        name="Write",
        search_hint="create new file save overwrite",
        touches=paths("write", "file_path"),
    )
    def write(file_path: str, content: str) -> ToolResult:
        """Create a file, or replace a whole file, with the given content.

        Folders on the way are created. An existing file must have been Read first; to
        change part of a file prefer Edit. Notebook cells are changed with NotebookEdit.

        Args:
            file_path: The file, absolute or relative to the working folder.
            content: The complete new content.
        """
        path = resolve(context, file_path, write=True)
        name = shown(context, path)
        refuse_open_notebook(context, path, "Write")
        if path.is_dir():
            raise ToolError(f"{name} is a folder, not a file.")
        existed = path.exists()
        data = content.encode("utf-8")
        if existed:
            stamp = _check_fresh(context, path, name, "write over it")
            large = too_large(path)
            before: bytes | None = None if large else path.read_bytes()
            _write_over(path, name, data, stamp, "write over it")
        else:
            large, before = False, None
            atomic_write(path, data)
        context.reads.note(path, FileStamp.of_bytes(data))
        if large:
            record_too_large(context, path, "Write")
            review = f"Replaced {name}: too large to keep in a checkpoint or to show a diff."
        else:
            record_file(context, path, before, data, "Write")
            review = file_review(name, before, data)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "Wrote" if existed else "Created"
        size = f"{len(data):,} byte{'s' if len(data) != 1 else ''}"
        said = f"{'replaced' if existed else 'created'}, {plural(lines, 'line')}"
        return ToolResult(
            f"{verb} {name} ({lines} line{'s' if lines != 1 else ''}, {size}).",
            metadata={"summary": said, "review": review},
        )

    return reviewed(write, context)


def edit_tool(context: ToolContext) -> Tool:
    """Build the Edit tool.

    Args:
        context: The tools' context.
    """

    @tool(
        name="Edit",
        search_hint="modify change replace text in file patch",
        touches=paths("write", "file_path"),
    )
    def edit(
        file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> ToolResult:
        """Replace an exact piece of text in a file that was Read before.

        `old_string` must occur exactly once (copy it from Read's output without the line
        number prefix, with its whitespace), unless `replace_all` is true. An empty
        `old_string` creates a new file holding `new_string`.

        Args:
            file_path: The file, absolute or relative to the working folder.
            old_string: The exact text to replace.
            new_string: The text to put in its place.
            replace_all: Replace every occurrence instead of requiring a single one.
        """
        path = resolve(context, file_path, write=True)
        name = shown(context, path)
        refuse_open_notebook(context, path, "Edit")
        if old_string == new_string:
            raise ToolError("old_string and new_string are the same: there is nothing to change.")
        if old_string == "" and not path.exists():
            data = new_string.encode("utf-8")
            atomic_write(path, data)
            context.reads.note(path, FileStamp.of_bytes(data))
            record_file(context, path, None, data, "Edit")
            review = file_review(name, None, data)
            return ToolResult(f"Created {name}.", metadata={"summary": "created", "review": review})
        path, name = _existing_file(context, file_path)
        stamp = _check_fresh(context, path, name, "edit it")
        try:
            old_data = path.read_bytes()
            text = old_data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"{name} is not UTF-8 text; Edit would damage it. Change it with Bash instead."
            ) from None
        new_text, first, new, count = _replace(text, name, old_string, new_string, replace_all)
        data = new_text.encode("utf-8")
        _write_over(path, name, data, stamp, "edit it")
        context.reads.note(path, FileStamp.of_bytes(data))
        record_file(context, path, old_data, data, "Edit")
        review = file_review(name, old_data, data)
        ending = "s" if count != 1 else ""
        return ToolResult(
            f"Edited {name}: replaced {count} occurrence{ending}.\n"
            + _snippet(new_text, first, new),
            metadata={"summary": plural(count, "replacement"), "review": review},
        )

    return reviewed(edit, context)


def _replace(
    text: str, name: str, old: str, new: str, replace_all: bool
) -> tuple[str, int, str, int]:
    """Apply the replacement.

    Returns the new text, where the first change starts, the replacement as inserted (line
    endings adapted to the file) and how many occurrences were replaced.
    """
    if old == "":
        if text:
            raise ToolError(
                f"old_string is empty, but {name} is not: give the text to replace, or use "
                "Write to replace the whole file."
            )
        return new, 0, new, 1
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {name}. Copy it exactly from Read's output, "
            f"whitespace and indentation included.\nString: {_quote(old)}"
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string was found {count} times in {name}, but replace_all is false. Include "
            "more surrounding lines to make it unique, or set replace_all to true to replace "
            f"every occurrence.\nString: {_quote(old)}"
        )
    first = text.index(old)
    replaced = count if replace_all else 1
    return text.replace(old, new, replaced), first, new, replaced


def _quote(text: str) -> str:
    if len(text) <= _QUOTE_CHARS:
        return text
    return text[:_QUOTE_CHARS] + f"… ({len(text) - _QUOTE_CHARS:,} more characters)"


def _snippet(text: str, first: int, inserted: str) -> str:
    """Show the changed lines with a few around them, numbered like Read."""
    lines = text.split("\n")
    start_line = text.count("\n", 0, first)
    end_line = start_line + inserted.removesuffix("\n").count("\n")
    low = max(0, start_line - _SNIPPET_CONTEXT)
    high = min(len(lines), end_line + _SNIPPET_CONTEXT + 1)
    return "\n".join(f"{n + 1:>6}\t{lines[n].removesuffix(chr(13))}" for n in range(low, high))
