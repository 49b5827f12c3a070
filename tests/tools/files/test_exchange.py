"""Swapping two paths in one step."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nbagent.tools.files.exchange import exchange

pytestmark = pytest.mark.skipif(
    sys.platform not in ("linux", "darwin"), reason="swapping is built for Linux and macOS"
)


def test_two_files_swap(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_text("A")
    second.write_text("B")
    assert exchange(first, second)
    assert (first.read_text(), second.read_text()) == ("B", "A")


def test_a_missing_path_is_an_error_and_changes_nothing(tmp_path: Path) -> None:
    first = tmp_path / "a"
    first.write_text("A")
    with pytest.raises(FileNotFoundError):
        exchange(first, tmp_path / "missing")
    assert first.read_text() == "A"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
