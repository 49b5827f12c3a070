"""File stamps and atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nbagent.tools.fsutil import FileStamp, atomic_write


def test_a_stamp_survives_a_touch_but_not_a_change(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one")
    stamp = FileStamp.of(path)
    assert stamp == FileStamp.of_bytes(path, b"one")
    os.utime(path, ns=(0, stamp.mtime_ns + 10**9))
    assert stamp.still_matches(path)
    path.write_text("two")
    os.utime(path, ns=(0, stamp.mtime_ns + 2 * 10**9))
    assert not stamp.still_matches(path)
    path.unlink()
    assert not stamp.still_matches(path)


def test_atomic_write_keeps_permissions_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text("old")
    path.chmod(0o750)
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert path.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["script.sh"]


def test_a_new_file_gets_the_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "deep" / "new.txt", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "deep" / "new.txt").stat().st_mode & 0o777 == 0o640


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "keep.txt"
    path.write_text("precious")

    with pytest.raises(TypeError):
        atomic_write(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
