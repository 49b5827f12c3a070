"""The shorter GIL switch interval while nbagent's background work runs."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core import switching
from nbagent.core.switching import SHORT_INTERVAL, lower, restore, short_switch_interval


@pytest.fixture(autouse=True)
def persons_interval() -> Iterator[float]:
    """The person's interval before each test, put back after it."""
    before = sys.getswitchinterval()
    yield before
    sys.setswitchinterval(before)


def test_the_interval_is_short_inside_and_the_persons_after() -> None:
    sys.setswitchinterval(0.004)
    with short_switch_interval():
        assert sys.getswitchinterval() == pytest.approx(SHORT_INTERVAL, rel=0.02)
    assert sys.getswitchinterval() == pytest.approx(0.004, rel=0.02)


def test_a_shorter_interval_of_the_persons_is_kept() -> None:
    sys.setswitchinterval(0.0001)
    with short_switch_interval():
        assert sys.getswitchinterval() == pytest.approx(0.0001, rel=0.02)
    assert sys.getswitchinterval() == pytest.approx(0.0001, rel=0.02)


def test_an_interval_the_person_sets_meanwhile_is_kept() -> None:
    sys.setswitchinterval(0.005)
    with short_switch_interval():
        sys.setswitchinterval(0.002)
    assert sys.getswitchinterval() == pytest.approx(0.002, rel=0.02)


def test_the_interval_comes_back_after_an_error() -> None:
    sys.setswitchinterval(0.005)
    with pytest.raises(RuntimeError), short_switch_interval():
        raise RuntimeError("boom")
    assert sys.getswitchinterval() == pytest.approx(0.005, rel=0.02)


@given(st.integers(min_value=1, max_value=6))
def test_nested_holders_on_threads_restore_once_the_last_ends(holders: int) -> None:
    sys.setswitchinterval(0.005)
    for _ in range(holders):
        lower()
    seen: list[float] = []

    def end_one() -> None:
        restore()
        seen.append(sys.getswitchinterval())

    threads = [threading.Thread(target=end_one) for _ in range(holders)]
    for thread in threads:
        thread.start()
        thread.join()
    assert seen[:-1] == pytest.approx([SHORT_INTERVAL] * (holders - 1), rel=0.02)
    assert seen[-1] == pytest.approx(0.005, rel=0.02)
    assert switching._holders == 0


def test_a_restore_without_a_lower_changes_nothing() -> None:
    sys.setswitchinterval(0.003)
    restore()
    assert sys.getswitchinterval() == pytest.approx(0.003, rel=0.02)
