"""Tests of nbagent.catalogue.promotion: counting per user, the promotion rule, concurrent
kernels."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.catalogue.promotion import UsageStore

DAY = 86_400.0


def test_counts_are_per_user_and_most_used_first(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    alice, bob = UsageStore(db, user="alice"), UsageStore(db, user="bob")
    for tool in ["read", "read", "edit", "read", "edit", "grep"]:
        alice.record(tool, when=100.0)
    bob.record("grep", when=50.0)
    assert [(u.tool, u.uses) for u in alice.usage()] == [("read", 3), ("edit", 2), ("grep", 1)]
    assert [(u.tool, u.uses, u.last_used) for u in bob.usage()] == [("grep", 1, 50.0)]


def test_promotion_needs_enough_recent_uses(tmp_path: Path) -> None:
    store = UsageStore(tmp_path / "u.db", user="me")
    now = 1_000 * DAY
    for _ in range(5):
        store.record("often", when=now - DAY)
    for _ in range(2):
        store.record("rarely", when=now)
    for _ in range(9):
        store.record("stale", when=now - 60 * DAY)
    assert store.promoted(now=now) == ["often"]
    assert store.promoted(now=now, window_days=90) == ["stale", "often"]
    assert store.promoted(now=now, min_uses=2) == ["often", "rarely"]
    assert store.promoted(now=now, candidates=["rarely", "stale"], min_uses=1) == ["rarely"]
    assert store.promoted(now=now, window_days=90, limit=1) == ["stale"]


def test_last_used_only_moves_forward_and_forget_clears(tmp_path: Path) -> None:
    store = UsageStore(tmp_path / "u.db", user="me")
    store.record("t", when=10.0)
    store.record("t", when=5.0)
    [usage] = store.usage()
    assert (usage.uses, usage.last_used) == (2, 10.0)
    store.record("u")
    store.forget("t")
    assert [u.tool for u in store.usage()] == ["u"]
    store.forget()
    assert store.usage() == []


def test_the_database_is_in_wal_mode_under_a_created_directory(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "usage.sqlite3"
    UsageStore(path, user="me").record("t")
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30))
def test_counts_equal_the_calls_recorded(tmp_path_factory, calls: list[str]) -> None:
    store = UsageStore(tmp_path_factory.mktemp("db") / "u.db", user="me")
    for call in calls:
        store.record(call)
    assert {u.tool: u.uses for u in store.usage()} == {c: calls.count(c) for c in set(calls)}


def _hammer(path: str, user: str, calls: int) -> None:
    store = UsageStore(Path(path), user=user)
    for i in range(calls):
        store.record(f"tool{i % 3}")


def test_concurrent_kernels_lose_no_count(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite3"
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_hammer, args=(str(path), user, 60))
        for user in ["me", "me", "me", "other"]
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert {u.tool: u.uses for u in UsageStore(path, user="me").usage()} == {
        "tool0": 60,
        "tool1": 60,
        "tool2": 60,
    }
    assert sum(u.uses for u in UsageStore(path, user="other").usage()) == 60
