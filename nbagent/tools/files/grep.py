"""The Grep tool: ripgrep when it is on PATH, else a Python search with the same results.

Both searches produce the same records (file, line number, text, match or context), in
ripgrep's ``--sort path`` order, and one renderer turns them into the text the model reads,
so the two paths give the same output for any pattern both regex dialects read alike.
What both search: every regular file under the path except ``SKIPPED_NAMES`` and binary
files (a NUL byte), hidden files included, ``.gitignore`` not applied, links not followed.
Lines end at ``\n`` (a ``\r`` before it is not part of the line, so ``$`` matches there);
a lone ``\r`` (old Mac line ends) is where the two engines may disagree.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.tools.context import ToolContext
from nbagent.tools.files.globbing import SKIPPED_NAMES, glob_regex, walk_files
from nbagent.tools.files.paths import readable, resolve, shown, skipped_note
from nbagent.tools.output import cap_text

OutputMode = Literal["files_with_matches", "content", "count"]

_BINARY_PROBE = 8192


@dataclass(frozen=True)
class Line:
    """One line that a search reports."""

    number: int
    """Its line number, from 1."""
    text: str
    """Its text, without the line ending."""
    match: bool
    """It matches (else it is context around a match)."""


@dataclass(frozen=True)
class Query:
    """What to search for and where."""

    pattern: str
    """The regular expression."""
    folder: Path
    """The folder searched; a file's folder when one file is searched."""
    file: Path | None
    """The one file searched, or None to search the folder."""
    glob: str | None
    """Keep only files whose name (or, with a ``/``, path below the folder) matches;
    a leading ``!`` keeps those that do not."""
    ignore_case: bool
    """Match without regard to case."""
    context: int
    """Lines of context before and after each match."""
    first_only: bool
    """Stop at a file's first match (enough to list files)."""


Results = dict[Path, list[Line]]
"""Reported lines by file, files in search order."""


def search_ripgrep(rg: str, query: Query, timeout: float) -> Results:
    """Search with ripgrep.

    Args:
        rg: The ripgrep executable.
        query: The search.
        timeout: Seconds to wait.

    Raises:
        ToolError: ripgrep reported an error or did not finish in time.
    """
    args = [rg, "--json", "--sort", "path", "--hidden", "--no-ignore", "--no-config", "--crlf"]
    args += ["--ignore-case"] if query.ignore_case else ["--case-sensitive"]
    if query.context:
        args += ["--context", str(query.context)]
    if query.first_only:
        args += ["--max-count", "1"]
    if query.glob:
        args += ["--glob", query.glob]
    args += [f"--glob=!{name}" for name in sorted(SKIPPED_NAMES)]
    args += ["--regexp", query.pattern, "--", query.file.name if query.file else "."]
    try:
        done = subprocess.run(
            args,
            cwd=query.folder,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolError(
            f"Grep took longer than {timeout:g} s; search a narrower path or glob."
        ) from None
    results = _parse_json(done.stdout, query.folder)
    if done.returncode not in (0, 1) and not results:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise ToolError(f"Grep failed (ripgrep): {message}")
    return results


def _parse_json(stdout: bytes, folder: Path) -> Results:
    """Turn ripgrep's JSON lines into results."""
    results: Results = {}
    for raw in stdout.splitlines():
        event = json.loads(raw)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        path = folder / _text(data["path"]).removeprefix("./")
        text = _text(data["lines"]).removesuffix("\n").removesuffix("\r")
        results.setdefault(path, []).append(
            Line(data["line_number"], text, event["type"] == "match")
        )
    return results


def _text(field: dict[str, str]) -> str:
    """Read ripgrep's ``{"text": ...}`` or ``{"bytes": base64}``."""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field["bytes"]).decode("utf-8", "replace")


def search_python(query: Query) -> Results:
    """Search with Python's ``re``, reporting what ripgrep would.

    Args:
        query: The search.

    Raises:
        ToolError: The pattern is not a valid regular expression.
    """
    regex = compile_pattern(query.pattern, query.ignore_case)
    results: Results = {}
    for path in _files(query):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if not data or b"\0" in data:
            continue
        lines = data.decode("utf-8", "replace").split("\n")
        if data.endswith(b"\n"):
            lines.pop()
        hits = [i for i, line in enumerate(lines) if regex.search(line.removesuffix("\r"))]
        if query.first_only:
            hits = hits[:1]
        if hits:
            results[path] = _with_context(lines, hits, query.context)
    return results


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """Compile the pattern as the Python search uses it.

    Args:
        pattern: The regular expression.
        ignore_case: Match without regard to case.

    Raises:
        ToolError: The pattern is not valid.
    """
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression {pattern!r}: {exc}") from None


def _files(query: Query) -> Iterator[Path]:
    """The files to search, filtered by the glob as ripgrep filters them.

    A keeping glob applies to files only; an excluding (``!``) glob also prunes every folder
    it matches. Without a ``/`` a glob matches names, with one paths below the folder.
    """
    if query.file is not None:
        yield query.file
        return
    glob = query.glob or ""
    negate = glob.startswith("!")
    glob = glob.removeprefix("!")
    regex = glob_regex(glob.lstrip("/")) if glob else None
    for path in walk_files(query.folder):
        if regex is None:
            yield path
            continue
        parts = path.relative_to(query.folder).parts
        subjects = (
            ["/".join(parts[: i + 1]) for i in range(len(parts))] if "/" in glob else list(parts)
        )
        if negate:
            if not any(regex.fullmatch(subject) for subject in subjects):
                yield path
        elif regex.fullmatch(subjects[-1]):
            yield path


def _with_context(lines: list[str], hits: list[int], context: int) -> list[Line]:
    hit_set = set(hits)
    shown_at: set[int] = set()
    for hit in hits:
        shown_at.update(range(max(0, hit - context), min(len(lines), hit + context + 1)))
    return [Line(i + 1, lines[i].removesuffix("\r"), i in hit_set) for i in sorted(shown_at)]


def render(
    results: Results,
    mode: OutputMode,
    name: Callable[[Path], str],
    head_limit: int | None,
    line_chars: int,
    context: int,
) -> str:
    """Render results as the model reads them.

    Args:
        results: The search results.
        mode: ``files_with_matches`` (paths), ``content`` (``path:line:text``; context lines
            as ``path-line-text``, groups split by ``--``) or ``count`` (``path:n``).
        name: Turns a path into the text shown for it.
        head_limit: Entries (paths, lines or counts) shown at most.
        line_chars: Characters of one line shown at most.
        context: The context asked for (separators are drawn only with context).
    """
    if not results:
        return "No matches found"
    if mode == "files_with_matches":
        entries = [name(path) for path in results]
        head = f"Found {len(entries)} file{'s' if len(entries) != 1 else ''}"
        return _limited([head], entries, head_limit, "files")
    if mode == "count":
        counts = [(path, sum(line.match for line in lines)) for path, lines in results.items()]
        entries = [f"{name(path)}:{n}" for path, n in counts]
        total = sum(n for _, n in counts)
        tail = f"Found {total} matching line{'s' if total != 1 else ''} in {len(counts)} files."
        return _limited([], entries, head_limit, "files") + "\n\n" + tail
    return _limited(
        [], list(_content_lines(results, name, line_chars, context)), head_limit, "lines"
    )


def _content_lines(
    results: Results, name: Callable[[Path], str], line_chars: int, context: int
) -> Iterator[str]:
    previous: tuple[Path, int] | None = None
    for path, lines in results.items():
        label = name(path)
        for line in lines:
            if context and previous and (previous[0] != path or previous[1] + 1 != line.number):
                yield "--"
            text = line.text
            if len(text) > line_chars:
                text = text[:line_chars] + f"… [{len(text) - line_chars:,} more characters]"
            mark = ":" if line.match else "-"
            yield f"{label}{mark}{line.number}{mark}{text}"
            previous = (path, line.number)


def summarize_results(results: Results, mode: OutputMode) -> str:
    """Say what a search found in a few words, for the transcript.

    Args:
        results: The search results.
        mode: The output mode (``files_with_matches`` stops at each file's first match, so
            it counts files only).

    Returns:
        ``no matches``, ``3 files`` or ``7 matches in 3 files``.
    """
    if not results:
        return "no matches"
    files = plural(len(results), "file")
    if mode == "files_with_matches":
        return files
    matches = sum(line.match for lines in results.values() for line in lines)
    return f"{plural(matches, 'match', 'matches')} in {files}"


def _limited(head: list[str], entries: list[str], limit: int | None, unit: str) -> str:
    if limit is not None and len(entries) > limit:
        note = f"(Showing the first {limit} of {len(entries)} {unit}: raise head_limit for more.)"
        entries = [*entries[:limit], note]
    return "\n".join([*head, *entries])


def grep_tool(context: ToolContext) -> Tool:
    """Build the Grep tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="Grep",
        read_only=True,
        search_hint="search file contents regex ripgrep find text in files",
        touches=lambda i: [Touch("read", i.get("path") or ".")],
    )
    def grep(
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        output_mode: OutputMode = "files_with_matches",
        ignore_case: bool = False,
        context_lines: int = 0,
        head_limit: int | None = None,
    ) -> ToolResult:
        """Search file contents with a regular expression (ripgrep syntax).

        Searches every text file under the path, hidden files included, except
        version-control, cache and virtual-environment folders; binary files are skipped.

        Args:
            pattern: The regular expression, matched within single lines.
            path: A file or folder to search; the working folder by default.
            glob: Only files matching this glob: `*.py` matches names, `src/**/*.py` paths
                below `path`; a leading `!` excludes instead.
            output_mode: `files_with_matches` lists files, `content` shows matching lines as
                `path:line:text`, `count` gives matching lines per file.
            ignore_case: Match regardless of case.
            context_lines: Lines shown before and after each match (content mode).
            head_limit: Show only the first N files, lines or counts.
        """
        if context_lines < 0 or (head_limit is not None and head_limit < 1):
            raise ToolError("context_lines must be 0 or more and head_limit 1 or more.")
        target = resolve(context, path or ".")
        if not target.exists():
            raise ToolError(f"Path does not exist: {shown(context, target)}")
        is_file = target.is_file()
        if is_file and _is_binary(target):
            raise ToolError(f"{shown(context, target)} is a binary file; Grep searches text.")
        compile_pattern(pattern, ignore_case)
        query = Query(
            pattern=pattern,
            folder=target.parent if is_file else target,
            file=target if is_file else None,
            glob=glob or None,
            ignore_case=ignore_case,
            context=context_lines if output_mode == "content" else 0,
            first_only=output_mode == "files_with_matches",
        )
        rg = shutil.which("rg")
        found = search_ripgrep(rg, query, limits.bash_timeout) if rg else search_python(query)
        allowed = readable(context)
        results = {file: lines for file, lines in found.items() if allowed(file)}
        text = render(
            results,
            output_mode,
            lambda p: shown(context, p),
            head_limit,
            limits.line_chars,
            query.context,
        )
        if note := skipped_note(len(found) - len(results)):
            text = f"{text}\n{note}"
        return ToolResult(
            cap_text(text, limits.output_chars, "narrow the search or set head_limit"),
            metadata={"summary": summarize_results(results, output_mode)},
        )

    return grep


def _is_binary(path: Path) -> bool:
    with path.open("rb") as stream:
        return b"\0" in stream.read(_BINARY_PROBE)
