"""nbagent.loop.cellthread: work posted to the cell's thread, questions withdrawn, cancellation."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from nbagent.core.cancellation import ENDED, TIME_LIMIT, Cancellation, Cancelled
from nbagent.loop import cellthread
from nbagent.loop.cellthread import CellThread, Scope


def serve_until(cell: CellThread, workers: list[threading.Thread], timeout: float = 10) -> None:
    """Serve the cell's queue (on this, its thread) until the workers are done."""
    until = time.monotonic() + timeout
    while any(w.is_alive() for w in workers):
        assert time.monotonic() < until, "the workers did not finish"
        if not cell.serve():
            time.sleep(0.01)


def start(target: Callable[[], Any]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_work_posted_by_workers_runs_on_the_cell_thread_one_job_at_a_time() -> None:
    cell = CellThread()
    running, most, results = [0], [0], {}
    lock = threading.Lock()

    def job(number: int) -> tuple[int, bool]:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return number, threading.current_thread() is threading.main_thread()

    def post(number: int) -> None:
        results[number] = cell.call(lambda: job(number), Cancellation())

    try:
        serve_until(cell, [start(lambda n=n: post(n)) for n in range(8)])  # type: ignore[misc]
    finally:
        cell.close()
    assert results == {n: (n, True) for n in range(8)}  # each poster got its own result
    assert most[0] == 1


def test_on_the_cell_thread_work_runs_at_once() -> None:
    cell = CellThread()
    try:
        assert cell.call(lambda: threading.current_thread(), Cancellation()) is cell.thread
    finally:
        cell.close()


def test_an_exception_of_posted_work_reaches_its_poster() -> None:
    cell = CellThread()
    caught: list[BaseException] = []

    def fail() -> None:
        raise EOFError("stdin closed")

    def post() -> None:
        try:
            cell.call(fail, Cancellation(), question=True)
        except EOFError as exc:
            caught.append(exc)

    try:
        serve_until(cell, [start(post)])
    finally:
        cell.close()
    assert [str(e) for e in caught] == ["stdin closed"]


def test_work_cancelled_before_it_is_served_never_runs() -> None:
    cell = CellThread()
    cancel, ran, caught = Cancellation(), [], []

    def post() -> None:
        try:
            cell.call(lambda: ran.append("ran"), cancel)
        except Cancelled as exc:
            caught.append(str(exc))

    worker = start(post)
    time.sleep(0.1)  # posted, not served
    cancel.cancel(TIME_LIMIT)
    worker.join(5)
    assert not cell.serve()
    cell.close()
    assert caught == [TIME_LIMIT] and ran == []


def test_closing_withdraws_the_queued_work_and_every_later_call() -> None:
    cell = CellThread()
    caught: list[str] = []

    def post() -> None:
        try:
            cell.call(lambda: "answer", Cancellation())
        except Cancelled as exc:
            caught.append(str(exc))

    first = start(post)
    time.sleep(0.1)
    cell.close()
    first.join(5)
    second = start(post)
    second.join(5)
    assert caught == [ENDED, ENDED]


def test_a_question_being_asked_is_withdrawn_when_its_work_is_cancelled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On the main thread the question is interrupted where it waits (as ipykernel's
    ``input()`` does, polling); its answer never comes, and the withdrawal is said."""
    cell = CellThread()
    cancel = Cancellation()
    left: list[str] = []

    def person() -> str:
        try:
            while True:
                time.sleep(0.01)
        finally:
            left.append("interrupted")

    timer = threading.Timer(0.2, cancel.cancel, (TIME_LIMIT,))
    timer.start()
    try:
        with pytest.raises(Cancelled, match=TIME_LIMIT):
            cell.call(person, cancel, question=True)
    finally:
        cell.close()
    assert left == ["interrupted"]
    assert f"Question withdrawn: {TIME_LIMIT}. An answer typed now does nothing." in (
        capsys.readouterr().out
    )


def test_an_answer_that_comes_as_its_question_is_withdrawn_does_nothing() -> None:
    """Off the main thread a question cannot be interrupted: its answer is dropped."""
    outcome: list[Any] = []
    cancel = Cancellation()

    def home() -> None:
        cell = CellThread()

        def person() -> str:
            cancel.cancel(TIME_LIMIT)  # withdrawn while the person types
            return "y"

        try:
            outcome.append(cell.call(person, cancel, question=True))
        except Cancelled as exc:
            outcome.append(exc)
        finally:
            cell.close()

    start(home).join(5)
    assert [type(o) for o in outcome] == [Cancelled]


def test_a_question_asked_from_a_worker_goes_to_the_cell_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[str, bool]] = []

    def typed(prompt: str) -> str:
        asked.append((prompt, threading.current_thread() is threading.main_thread()))
        return "blue"

    monkeypatch.setattr("builtins.input", typed)
    cell = CellThread()
    answers: list[str] = []

    def worker() -> None:
        with cellthread.within(Scope(cell, Cancellation())):
            answers.append(cellthread.ask("Which colour? "))

    try:
        serve_until(cell, [start(worker)])
    finally:
        cell.close()
    assert asked == [("Which colour? ", True)] and answers == ["blue"]


def test_without_a_run_a_question_is_plain_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt: f"typed at {prompt}")
    assert cellthread.current() is None
    assert cellthread.ask("here? ") == "typed at here? "


def test_a_child_is_cancelled_with_its_parent_for_the_same_reason() -> None:
    parent = Cancellation()
    child, told = Cancellation(parent), []
    grandchild = Cancellation(child)
    grandchild.on_cancel(lambda: told.append(grandchild.reason))
    child.cancel(TIME_LIMIT)
    assert not parent.cancelled
    assert grandchild.cancelled and told == [TIME_LIMIT]
    child.cancel(ENDED)  # the second time changes nothing
    assert child.reason == TIME_LIMIT
    late: list[str] = []
    grandchild.on_cancel(lambda: late.append("at once"))
    assert late == ["at once"]
    with pytest.raises(Cancelled, match=TIME_LIMIT):
        grandchild.check()


def test_settle_waits_for_the_work_running_under_a_token() -> None:
    parent = Cancellation()
    child = Cancellation(parent)
    inside, release = threading.Event(), threading.Event()

    def work() -> None:
        with child.acting():
            inside.set()
            release.wait(5)

    worker = start(work)
    inside.wait(5)
    parent.cancel(ENDED)
    assert not parent.settle(0, timeout=0.05)  # the work runs under the child
    release.set()
    assert parent.settle(0, timeout=5)
    worker.join(5)
