"""Glob patterns and the folder walk that Glob and Grep share; the Glob tool.

Both tools skip the same folders (version control, caches, virtual environments: see
``SKIPPED_NAMES``) and never follow symbolic links, the way ripgrep does with
``--no-ignore --hidden`` and those folders excluded. Glob patterns follow the usual rules:
``*`` and ``?`` stay within one path segment, ``**`` crosses folders, ``[abc]`` / ``[!abc]``
are classes and ``{a,b}`` alternatives.

>>> bool(glob_regex("src/**/*.py").fullmatch("src/a/b/c.py"))
True
>>> bool(glob_regex("*.{py,txt}").fullmatch("notes.txt"))
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.tools.context import ToolContext
from nbagent.tools.files.paths import inside_root, readable, resolve, shown, skipped_note

SKIPPED_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".ipynb_checkpoints",
        "__pycache__",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Names that Glob and Grep skip: folders never entered, and files of these names (a
``.git`` file in a worktree) never listed."""

_GLOB_CHARS = frozenset("*?[{")


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob pattern into a regular expression over ``/``-separated paths.

    Args:
        pattern: The glob.

    Returns:
        A compiled expression; use ``fullmatch``.

    Raises:
        ToolError: A ``[`` or ``{`` is not closed.
    """
    return re.compile(_translate(pattern, 0, in_braces=False)[0], re.DOTALL)


def _translate(pattern: str, i: int, in_braces: bool) -> tuple[str, int]:
    """Translate from ``i`` until the end (or the ``}`` / ``,`` that ends a brace item)."""
    out: list[str] = []
    while i < len(pattern):
        char = pattern[i]
        if in_braces and char in ",}":
            return "".join(out), i
        if pattern.startswith("**", i):
            before_ok = i == 0 or pattern[i - 1] == "/"
            after = i + 2
            if before_ok and pattern.startswith("/", after):
                out.append("(?:.*/)?")
                i = after + 1
            elif before_ok and after == len(pattern):
                out.append(".*")
                i = after
            else:
                out.append("[^/]*")
                i = after
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                raise ToolError(f"Invalid glob {pattern!r}: a '[' is not closed.")
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            escaped = body.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
            out.append(f"[^/{escaped}]" if negate else f"[{escaped}]")
            i = end + 1
        elif char == "{":
            items: list[str] = []
            i += 1
            while True:
                item, i = _translate(pattern, i, in_braces=True)
                items.append(item)
                if i >= len(pattern):
                    raise ToolError(f"Invalid glob {pattern!r}: a '{{' is not closed.")
                if pattern[i] == "}":
                    i += 1
                    break
                i += 1
            out.append("(?:" + "|".join(items) + ")")
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out), i


def has_magic(text: str) -> bool:
    """Tell whether a path segment holds glob syntax.

    Args:
        text: A path segment.
    """
    return any(char in _GLOB_CHARS for char in text)


def walk_files(base: Path) -> Iterator[Path]:
    """Yield the regular files under ``base``, depth first, each folder's entries by name.

    The order is ripgrep's ``--sort path``. Symbolic links and ``SKIPPED_NAMES`` are skipped;
    unreadable folders are passed over.

    Args:
        base: A folder.
    """
    try:
        entries = sorted(os.scandir(base), key=lambda entry: os.fsencode(entry.name))
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink() or entry.name in SKIPPED_NAMES:
            continue
        if entry.is_dir():
            yield from walk_files(Path(entry.path))
        elif entry.is_file():
            yield Path(entry.path)


def split_pattern(pattern: str, path: str | None) -> tuple[str, str]:
    """Split an absolute (or ``~``) glob into the folder to walk and the pattern below it.

    Args:
        pattern: The glob the model gave.
        path: The folder it gave, if any.

    Returns:
        ``(folder, pattern)``: the folder as given (``.`` when none) and a relative pattern.
    """
    if not (pattern.startswith("/") or pattern.startswith("~")):
        return path or ".", pattern
    parts = pattern.split("/")
    fixed = 0
    while fixed < len(parts) - 1 and not has_magic(parts[fixed]):
        fixed += 1
    return "/".join(parts[:fixed]) or "/", "/".join(parts[fixed:])


def glob_tool(context: ToolContext) -> Tool:
    """Build the Glob tool.

    Args:
        context: The tools' context.
    """
    limit = context.limits.glob_results

    @tool(
        name="Glob",
        read_only=True,
        search_hint="find files by name pattern list folder wildcard",
        touches=lambda i: [Touch("read", split_pattern(i.get("pattern", ""), i.get("path"))[0])],
    )
    def glob(pattern: str, path: str | None = None) -> ToolResult:
        """Find files by name with a glob pattern, newest first.

        `*` matches within one folder, `**` across folders: `**/*.py` finds Python files at
        every depth, `*.py` only at the top; `{a,b}` gives alternatives. Version-control,
        cache and virtual-environment folders are skipped, and symbolic links not followed.
        Paths come back relative to the working folder, ready for Read.

        Args:
            pattern: The glob, relative to `path` (or absolute).
            path: The folder to search; the working folder by default.
        """
        folder_text, relative = split_pattern(pattern, path)
        folder = resolve(context, folder_text)
        if not folder.exists():
            raise ToolError(f"Folder does not exist: {shown(context, folder)}")
        if not folder.is_dir():
            raise ToolError(f"{shown(context, folder)} is a file, not a folder.")
        regex = glob_regex(relative.lstrip("/") or "**")
        matched = [
            p for p in walk_files(folder) if regex.fullmatch(p.relative_to(folder).as_posix())
        ]
        allowed = readable(context)
        found = [p for p in matched if allowed(p)]
        note = skipped_note(len(matched) - len(found))
        if not found:
            text = f"No files found\n{note}" if note else "No files found"
            return ToolResult(text, metadata={"summary": "no files"})
        found.sort(key=lambda p: (-_mtime(p), str(p)))
        lines = [shown(context, p) for p in found[:limit]]
        if len(found) > limit:
            lines.append(
                f"(Results are truncated: showing {limit} of {len(found)} files. "
                "Use a narrower pattern or path.)"
            )
        if not inside_root(context, folder):
            lines.insert(0, f"(Paths under {folder}, outside the working folder.)")
        if note:
            lines.append(note)
        said = plural(len(found), "file")
        if len(found) > limit:
            said = f"{limit:,} of {said}"
        return ToolResult("\n".join(lines), metadata={"summary": said})

    return glob


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
