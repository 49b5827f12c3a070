"""File stamps, atomic writes, and writes that never overwrite another writer's save."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.files import stamps as fsutil
from nbagent.tools.files.stamps import ChangedOnDisk, FileStamp, atomic_write
from tests.tools.helpers import save_around_the_swap


def test_a_stamp_survives_a_touch_but_not_a_change(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one")
    stamp = FileStamp.of(path)
    assert stamp == FileStamp.of_bytes(b"one") == FileStamp(3, stamp.sha256)
    os.utime(path, ns=(0, 10**9))
    assert stamp.still_matches(path)
    path.write_text("two")
    assert not stamp.still_matches(path)
    path.unlink()
    assert not stamp.still_matches(path)


def test_a_change_that_keeps_the_size_and_the_mtime_is_seen(tmp_path: Path) -> None:
    """On a filesystem with a coarse clock a save can leave the mtime as it was."""
    path = tmp_path / "f.txt"
    path.write_text("one")
    before = path.stat()
    stamp = FileStamp.of(path)
    path.write_text("owe")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
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


def test_an_expected_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    atomic_write(path, b"the model's edit", expect=FileStamp.of(path))
    assert path.read_bytes() == b"the model's edit"
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


def test_a_file_saved_by_someone_else_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    stamp = FileStamp.of(path)
    path.write_bytes(b"the user's save")
    with pytest.raises(ChangedOnDisk):
        atomic_write(path, b"the model's edit", expect=stamp)
    assert path.read_bytes() == b"the user's save"
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


def test_a_deleted_file_is_not_brought_back(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    stamp = FileStamp.of(path)
    path.unlink()
    with pytest.raises(ChangedOnDisk):
        atomic_write(path, b"the model's edit", expect=stamp)
    assert list(tmp_path.iterdir()) == []


def test_a_save_between_the_check_and_the_swap_is_swapped_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    swaps = save_around_the_swap(path, monkeypatch, b"the user's save", None)
    with pytest.raises(ChangedOnDisk) as refused:
        atomic_write(path, b"the model's edit", expect=FileStamp.of(path))
    assert not refused.value.maybe_kept
    assert path.read_bytes() == b"the user's save"
    assert len(swaps) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


def test_a_save_landing_on_the_new_file_between_the_swaps_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other writer saves before the swap (the conflict) and again between the swap and
    the swap back: its last save, the newest, is what the file holds."""
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    swaps = save_around_the_swap(path, monkeypatch, b"first save", b"second save")
    with pytest.raises(ChangedOnDisk) as refused:
        atomic_write(path, b"the model's edit", expect=FileStamp.of(path))
    assert refused.value.maybe_kept
    assert path.read_bytes() == b"second save"
    assert len(swaps) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


def test_a_save_right_after_the_swap_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's edit went in; a save by the user right after it replaces it (that is the
    other writer's decision), and nothing is left behind."""
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    save_around_the_swap(path, monkeypatch, None, b"the user's save")
    atomic_write(path, b"the model's edit", expect=FileStamp.of(path))
    assert path.read_bytes() == b"the user's save"
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


def test_without_swapping_the_file_is_checked_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fsutil, "exchange", lambda first, second: False)
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"read by the model")
    stamp = FileStamp.of(path)
    atomic_write(path, b"the model's edit", expect=stamp)
    assert path.read_bytes() == b"the model's edit"
    with pytest.raises(ChangedOnDisk):
        atomic_write(path, b"a second edit", expect=stamp)
    assert path.read_bytes() == b"the model's edit"
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


@given(
    read=st.binary(max_size=64),
    saved_by_user=st.one_of(st.none(), st.binary(max_size=64)),
    edit=st.binary(max_size=64),
)
def test_the_file_ends_with_the_edit_only_if_nobody_else_saved(
    tmp_path_factory: pytest.TempPathFactory,
    read: bytes,
    saved_by_user: bytes | None,
    edit: bytes,
) -> None:
    path = tmp_path_factory.mktemp("race") / "nb.ipynb"
    path.write_bytes(read)
    stamp = FileStamp.of(path)
    if saved_by_user is not None:
        path.write_bytes(saved_by_user)
    try:
        atomic_write(path, edit, expect=stamp)
    except ChangedOnDisk:
        assert saved_by_user is not None and saved_by_user != read
        assert path.read_bytes() == saved_by_user
    else:
        assert saved_by_user in (None, read)
        assert path.read_bytes() == edit
    assert [p.name for p in path.parent.iterdir()] == ["nb.ipynb"]


def test_temporary_files_of_dead_writers_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"{}")
    orphan = tmp_path / f".nb.ipynb.nbagent-{dead.stdout.strip()}-0a1b.tmp"
    live = tmp_path / f".nb.ipynb.nbagent-{os.getpid()}-2c3d.tmp"
    foreign = tmp_path / ".nb.ipynb.jupyter-12.tmp"
    other_file = tmp_path / ".other.ipynb.nbagent-1-0a1b.tmp"
    for leftover in (orphan, live, foreign, other_file):
        leftover.write_bytes(b"half a notebook")
    atomic_write(path, b"{ }")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["nb.ipynb", live.name, foreign.name, other_file.name]
    )
