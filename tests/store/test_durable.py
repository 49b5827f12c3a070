"""Appended files synced to disk off the writer's path (nbagent.store.durable)."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

from nbagent.store import durable, journal
from nbagent.store.journal import ConversationLog


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files synced, in order (each really synced), with a short delay."""
    seen: list[Path] = []
    done = threading.Condition()
    real = durable._fsync

    def recording(path: Path) -> None:
        real(path)
        with done:
            seen.append(path)
            done.notify_all()

    monkeypatch.setattr(durable, "_fsync", recording)
    monkeypatch.setattr(durable, "DELAY", 0.05)
    return seen


def mine(seen: list[Path], folder: Path) -> list[Path]:
    """The files synced of a folder (the process's own syncer syncs other tests' files)."""
    return [path for path in seen if path.parent == folder]


def wait_for(seen: list[Path], folder: Path, count: int) -> None:
    for _ in range(600):
        if len(mine(seen, folder)) >= count:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"{len(mine(seen, folder))} of {count} files synced")


def test_many_writes_to_a_file_are_synced_once_soon_after(
    synced: list[Path], tmp_path: Path
) -> None:
    durable.DELAY = 0.5  # restored by the fixture's monkeypatch
    syncer = durable._Syncer()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (first, second, first, first):
        path.write_text("x\n")
        syncer.later(path)
    wait_for(synced, tmp_path, 2)
    threading.Event().wait(0.2)
    assert sorted(mine(synced, tmp_path)) == [first, second]


def test_sync_now_syncs_what_waits_at_once(synced: list[Path], tmp_path: Path) -> None:
    syncer = durable._Syncer()
    durable.DELAY = 60.0  # restored by the fixture's monkeypatch
    path = tmp_path / "a.jsonl"
    path.write_text("x\n")
    syncer.later(path)
    syncer.now()
    assert mine(synced, tmp_path) == [path]


def test_a_file_removed_before_its_sync_is_skipped(tmp_path: Path) -> None:
    durable._fsync(tmp_path / "gone.jsonl")  # no error


def test_an_append_does_not_wait_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later: list[Path] = []
    monkeypatch.setattr(journal, "sync_later", later.append)
    log = ConversationLog.create(tmp_path / "notebook-0", "/n.ipynb", "m")  # and the key
    inline: list[int] = []
    monkeypatch.setattr(journal.os, "fsync", inline.append)
    log.append({"i": 0, "message": {"role": "user", "content": "hi"}})
    assert inline == [] and later == [log.path, log.path]
    assert log.path.read_bytes().count(b"\n") == 2


def test_a_forked_child_starts_with_nothing_to_sync(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("x\n")
    durable.sync_later(path)
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()

    def child() -> None:
        syncer = durable._syncer
        theirs.send((syncer._thread is None, list(syncer._due)))

    process = context.Process(target=child)
    process.start()
    assert ours.recv() == (True, [])
    process.join(30)
