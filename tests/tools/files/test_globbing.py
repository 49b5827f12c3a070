"""Glob patterns, the shared folder walk, and the Glob tool."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool
from nbagent.policy.combining import decide
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools import Limits, ToolContext
from nbagent.tools.files.globbing import glob_regex, split_pattern, walk_files
from tests.tools.helpers import LazyTools, error, summary, text


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**", "src/a/b.txt", True),
        ("src/**/test_*.py", "src/test_x.py", True),
        ("src/**/test_*.py", "src/a/b/test_x.py", True),
        ("src/**/test_*.py", "lib/test_x.py", False),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "c.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("*.{py,ipynb}", "nb.ipynb", True),
        ("*.{py,ipynb}", "nb.txt", False),
        ("{src,lib}/**/*.py", "lib/x/y.py", True),
        ("a+b(1).txt", "a+b(1).txt", True),
        ("*", ".hidden", True),
    ],
)
def test_glob_patterns(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


@pytest.mark.parametrize("pattern", ["[abc", "{a,b"])
def test_unclosed_globs_are_errors(pattern: str) -> None:
    with pytest.raises(ToolError, match="is not closed"):
        glob_regex(pattern)


_SEGMENT = st.text(alphabet="abcXYZ019_-. +()", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)


@given(st.lists(_SEGMENT, min_size=1, max_size=5))
def test_literal_paths_match_themselves_and_double_star_matches_all(parts: list[str]) -> None:
    path = "/".join(parts)
    assert glob_regex(re.sub(r"([*?\[{])", r"[\1]", path)).fullmatch(path)
    assert glob_regex("**").fullmatch(path)
    assert glob_regex("**/" + parts[-1].replace("{", "[{]").replace("[", "[[]")).fullmatch(path)


def test_absolute_patterns_are_split_at_the_first_wildcard() -> None:
    assert split_pattern("/data/raw/*.csv", None) == ("/data/raw", "*.csv")
    assert split_pattern("/data/**/x.csv", "ignored") == ("/data", "**/x.csv")
    assert split_pattern("*.csv", "sub") == ("sub", "*.csv")
    assert split_pattern("*.csv", None) == (".", "*.csv")


def tree(root: Path) -> None:
    for name in (
        "a.py",
        "b.txt",
        "src/c.py",
        "src/deep/d.py",
        ".git/config.py",
        "__pycache__/x.py",
        "node_modules/m.py",
        ".env",
    ):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    (root / "link.py").symlink_to(root / "a.py")
    (root / "linkdir").symlink_to(root / "src")


def test_the_walk_skips_tool_folders_and_links_in_ripgrep_order(root: Path) -> None:
    tree(root)
    (root / "a-b.txt").write_text("")
    (root / "a").mkdir()
    (root / "a" / "z.txt").write_text("")
    walked = [p.relative_to(root).as_posix() for p in walk_files(root)]
    assert walked == [".env", "a/z.txt", "a-b.txt", "a.py", "b.txt", "src/c.py", "src/deep/d.py"]


def test_glob_lists_matches_newest_first(root: Path, tools: dict[str, Tool]) -> None:
    tree(root)
    for age, name in enumerate(["src/deep/d.py", "src/c.py", "a.py"]):
        os.utime(root / name, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    assert text(tools["Glob"], pattern="**/*.py") == "src/deep/d.py\nsrc/c.py\na.py"
    assert text(tools["Glob"], pattern="*.py", path="src") == "src/c.py"
    assert text(tools["Glob"], pattern="*.csv") == "No files found"
    assert text(tools["Glob"], pattern=str(root / "src" / "**" / "d.py")) == "src/deep/d.py"
    assert summary(tools["Glob"], pattern="**/*.py") == "3 files"
    assert summary(tools["Glob"], pattern="*.py", path="src") == "1 file"
    assert summary(tools["Glob"], pattern="*.csv") == "no files"


def test_glob_truncates_long_lists(root: Path) -> None:
    for i in range(5):
        (root / f"f{i}.txt").write_text("")
    glob = LazyTools(ToolContext(root=root, limits=Limits(glob_results=2)))
    out = text(glob["Glob"], pattern="*.txt").split("\n")
    assert len(out) == 3 and out[2] == (
        "(Results are truncated: showing 2 of 5 files. Use a narrower pattern or path.)"
    )
    assert summary(glob["Glob"], pattern="*.txt") == "2 of 5 files"


def test_glob_bad_folders_and_outside_the_root(root: Path, tools: dict[str, Tool]) -> None:
    (root / "f.txt").write_text("")
    assert error(tools["Glob"], pattern="*", path="missing") == "Folder does not exist: missing"
    assert error(tools["Glob"], pattern="*", path="f.txt") == "f.txt is a file, not a folder."
    policy = PermissionPolicy(root=root)
    glob = tools["Glob"]
    assert decide(glob, {"pattern": "*", "path": ".."}, policy).behavior == "ask"
    assert decide(glob, {"pattern": "/etc/*.conf"}, policy).message.startswith(
        "Allow the agent to read /etc?"
    )
    assert decide(glob, {"pattern": "**/*.py"}, policy).behavior == "allow"
