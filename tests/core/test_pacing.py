"""Paced imports: nbagent's background threads pause between modules; others never do."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core import pacing
from nbagent.core.pacing import MAX_REST, SLICE, paced_imports


class FakeClock:
    """A thread CPU clock that advances by a step at each reading, and records the sleeps."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.sleeps: list[float] = []

    def thread_time(self) -> float:
        self.now += self.step
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Ten new modules on the path, each importing the next."""
    names = [f"paced_fixture_{tmp_path.name}_{i}".replace("-", "_") for i in range(10)]
    for name, following in zip(names, [*names[1:], None], strict=True):
        (tmp_path / f"{name}.py").write_text(f"import {following}\n" if following else "")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield names
    for name in names:
        sys.modules.pop(name, None)


def import_on(thread_name: str, module: str) -> None:
    """Import a module on a new thread of a name, and wait for it."""
    thread = threading.Thread(target=__import__, args=(module,), name=thread_name)
    thread.start()
    thread.join()


def test_a_paced_thread_pauses_between_modules(
    modules: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock(step=SLICE)
    monkeypatch.setattr(
        pacing, "time", SimpleNamespace(thread_time=clock.thread_time, sleep=clock.sleep)
    )
    with paced_imports():
        import_on("nbagent-start-up", modules[0])
    assert clock.sleeps
    assert all(0 < seconds <= MAX_REST for seconds in clock.sleeps)


def test_other_threads_never_pause(modules: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock(step=SLICE)
    monkeypatch.setattr(
        pacing, "time", SimpleNamespace(thread_time=clock.thread_time, sleep=clock.sleep)
    )
    with paced_imports():
        import_on("someone-else", modules[0])
    assert clock.sleeps == []


def test_pacing_ends_with_the_last_block() -> None:
    with paced_imports():
        with paced_imports():
            assert sum(finder is pacing._pacer for finder in sys.meta_path) == 1
        assert pacing._pacer in sys.meta_path
    assert pacing._pacer not in sys.meta_path


def test_pacing_ends_after_an_error() -> None:
    with pytest.raises(RuntimeError), paced_imports():
        raise RuntimeError("boom")
    assert pacing._pacer not in sys.meta_path


@given(st.floats(min_value=0, max_value=0.1))
def test_a_pause_is_as_long_as_the_work_at_most_the_cap(step: float) -> None:
    clock = FakeClock(step=step)
    finder = pacing._Pacer()
    original = pacing.time
    pacing.time = SimpleNamespace(thread_time=clock.thread_time, sleep=clock.sleep)  # type: ignore[assignment]
    try:
        result = threading.Thread(
            target=lambda: [finder.find_spec("x") for _ in range(3)], name="nbagent-mcp"
        )
        result.start()
        result.join()
    finally:
        pacing.time = original  # type: ignore[assignment]
    for seconds in clock.sleeps:  # the work since the last pause, capped
        assert SLICE <= seconds <= MAX_REST or seconds == MAX_REST
    assert bool(clock.sleeps) == (2 * step >= SLICE)  # work adds up over the modules


def test_the_main_thread_waiting_for_a_module_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a thread imports a module, the main thread importing it too waits, and the
    pacer sees it (so a paced thread stops pausing)."""
    gate = ModuleType("pacing_gate_fixture")
    gate.entered = threading.Event()  # type: ignore[attr-defined]
    gate.release = threading.Event()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pacing_gate_fixture", gate)
    name = f"pacing_blocked_{tmp_path.name}".replace("-", "_")
    (tmp_path / f"{name}.py").write_text(
        "import pacing_gate_fixture as g\ng.entered.set()\ng.release.wait(30)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importer = threading.Thread(target=__import__, args=(name,))
    importer.start()
    assert gate.entered.wait(30)
    seen: list[bool] = []

    def watch() -> None:
        for _ in range(3000):
            if pacing._main_thread_waits_for_an_import():
                seen.append(True)
                break
            threading.Event().wait(0.01)
        gate.release.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    __import__(name)  # waits for the importer
    watcher.join()
    importer.join()
    sys.modules.pop(name, None)
    assert seen == [True]
    assert not pacing._main_thread_waits_for_an_import()


def test_a_paced_thread_does_not_pause_while_the_main_thread_waits(
    modules: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock(step=SLICE)
    fake = SimpleNamespace(thread_time=clock.thread_time, sleep=clock.sleep)
    monkeypatch.setattr(pacing, "time", fake)
    monkeypatch.setattr(pacing, "_main_thread_waits_for_an_import", lambda: True)
    with paced_imports():
        import_on("nbagent-start-up", modules[0])
    assert clock.sleeps == []
