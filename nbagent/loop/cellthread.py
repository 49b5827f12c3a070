"""The cell's thread: one queue of questions and main-thread work, and cancellation.

A run starts on one thread, the cell's (in a kernel, the main thread running the ``%%agent``
cell): its :class:`CellThread`. Worker threads (concurrency-safe tool calls, sub-agents) never
ask the person themselves, and never run a ``main_thread`` tool: they post the work to the
cell's thread (:meth:`CellThread.call`) and wait. The cell's thread serves the posted work one
job at a time, in order, while it waits for the workers of a turn (:meth:`CellThread.serve`).
So only one question is ever open on stdin, and it is asked on the thread the kernel sends its
answer to; :mod:`nbagent.loop.stdin` takes only the reply to that very request: an answer goes to
the question it was typed for.

Everything a run starts carries a :class:`~nbagent.core.cancellation.Cancellation`, passed down
as the run's :class:`Scope` (a context variable, which worker threads inherit). Stop, a time
limit or the end of the run cancels it, and with it every child: sub-agents check it before
each model request and each tool call, streams are closed at their next event, queued work is
withdrawn, and a question being asked is withdrawn at once (in a kernel, where ``input()``
polls; elsewhere its answer, when it comes, does nothing).
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from nbagent.core.cancellation import ENDED, STOPPED, Cancellation, Cancelled
from nbagent.core.secrets import ONE_LINE, get_logger, redact
from nbagent.loop import stdin

logger = get_logger("nbagent")

T = TypeVar("T")

WITHDRAW_SIGNAL: signal.Signals | None = getattr(signal, "SIGUSR2", None)
"""The signal simulated (never sent) to interrupt a question being asked on the main thread;
None where the platform has none (the question's answer is then ignored when it comes)."""


class _Withdrawn(BaseException):
    """Raised on the cell's thread, inside a question whose call was cancelled.

    A BaseException, so that ``except Exception`` in ``input()`` (ipykernel logs and goes on)
    or in an asker does not swallow it.
    """


@dataclass(frozen=True)
class Scope:
    """Where work of a run belongs: the cell's thread, and the token that cancels it."""

    cell: CellThread
    """The thread questions and main-thread tools go to."""
    cancel: Cancellation
    """Cancelled when the work must stop."""


_scope: ContextVar[Scope | None] = ContextVar("nbagent_scope", default=None)


def current() -> Scope | None:
    """The scope of the work running here; None outside every run's tool calls."""
    return _scope.get()


def cancellation() -> Cancellation | None:
    """The token of the work running here; None outside every run's tool calls."""
    scope = _scope.get()
    return scope.cancel if scope is not None else None


@contextlib.contextmanager
def within(scope: Scope) -> Iterator[None]:
    """Make ``scope`` the current one for the ``with`` block (on this thread).

    Args:
        scope: The scope of the work the block does.
    """
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)


def acting(cancel: Cancellation | None) -> contextlib.AbstractContextManager[None]:
    """:meth:`Cancellation.acting` of a token, or nothing without one.

    Args:
        cancel: The token, or None.
    """
    return cancel.acting() if cancel is not None else contextlib.nullcontext()


def question(work: Callable[[], T]) -> T:
    """Ask the person through ``work`` (which waits for their answer), on the cell's thread.

    Every question of nbagent goes through here: a permission question, AskUserQuestion, a
    plan's approval. On the cell's thread it is asked at once; from any other thread it is
    posted to the cell's thread and waited for. Either way it is withdrawn when the work it
    belongs to is cancelled, even while it waits.

    Args:
        work: Asks and returns the answer (``input()``, a test's answerer).

    Returns:
        What ``work`` returned.

    Raises:
        Cancelled: The question was withdrawn; its answer, if one comes, does nothing.
    """
    scope = _scope.get()
    if scope is None:
        return work()
    return scope.cell.call(work, scope.cancel, question=True)


def ask(prompt: str) -> str:
    """Ask the person on stdin, as :func:`question` does, and return what they typed.

    Args:
        prompt: The prompt, as ``input()`` takes it; the environment's secrets are redacted
            (the page shows the question, and a front end without nbagent's extension keeps
            it in the cell's output), and tokens found by their shape within one line, but not
            blocks over several lines, which could hide a line of what the person is asked
            about.

    Returns:
        The answer.

    Raises:
        Cancelled: The question was withdrawn; its answer, if one comes, does nothing.
        StdinNotImplementedError: No stdin (a front end without input, ``nbconvert``).
        EOFError: stdin is closed.
    """
    return question(partial(stdin.ask, redact(prompt, shapes=ONE_LINE)))


class _Job(Generic[T]):
    """Work posted to the cell's thread, and its result once it ran."""

    def __init__(self, work: Callable[[], T], cancel: Cancellation, question: bool) -> None:
        self.work = work
        self.cancel = cancel
        self.question = question
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def finish(self, value: T) -> None:
        """Hand the result to the poster."""
        self._value = value
        self._done.set()

    def fail(self, error: BaseException) -> None:
        """Hand an exception to the poster."""
        self._error = error
        self._done.set()

    def result(self) -> T:
        """Wait for the job to run or to be withdrawn; its result, or its exception."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class CellThread:
    """The thread a run started on, and the questions and calls others post to it.

    Made on that thread. On the main thread it catches :data:`WITHDRAW_SIGNAL` until
    :meth:`close`, to withdraw a question being asked there.
    """

    def __init__(self) -> None:
        self.thread = threading.current_thread()
        """The cell's thread."""
        self._lock = threading.Lock()
        self._jobs: deque[_Job[Any]] = deque()
        self._closed = False
        self._question: Cancellation | None = None
        self._previous: Any = None
        self._catches = False
        if WITHDRAW_SIGNAL is not None and self.thread is threading.main_thread():
            try:
                self._previous = signal.signal(WITHDRAW_SIGNAL, self._on_signal)
                self._catches = True
            except ValueError:  # not the main interpreter
                pass

    @property
    def here(self) -> bool:
        """Whether the caller is on the cell's thread."""
        return threading.current_thread() is self.thread

    def call(self, work: Callable[[], T], cancel: Cancellation, *, question: bool = False) -> T:
        """Run work on the cell's thread and return its result.

        On the cell's thread it runs at once. From another thread it is queued, and the caller
        waits until the cell's thread has run it, or until it is withdrawn: cancelled before
        it started, or the cell's thread stopped serving (:meth:`close`). Work that started
        runs to its end, but a question in it is withdrawn when ``cancel`` is cancelled.

        Args:
            work: What to run (with ``cancel``'s scope current).
            cancel: Withdraws the work when cancelled.
            question: The work asks the person: withdrawn even while it runs.

        Returns:
            What ``work`` returned.

        Raises:
            Cancelled: The work was withdrawn (it did not run, or its answer was dropped).
        """
        if self.here:
            return self._run(work, cancel, question)
        job: _Job[T] = _Job(work, cancel, question)
        with self._lock:
            if self._closed:
                raise Cancelled(ENDED)
            self._jobs.append(job)
        unlink = cancel.on_cancel(partial(self._unqueue, job))
        try:
            return job.result()
        finally:
            unlink()

    def serve(self) -> bool:
        """Run the next posted job, if any (on the cell's thread only).

        A Stop (KeyboardInterrupt) while it runs withdraws it and goes on up.

        Returns:
            Whether a job ran.
        """
        if not self.here:
            return False
        with self._lock:
            if not self._jobs:
                return False
            job = self._jobs.popleft()
        try:
            value = self._run(job.work, job.cancel, job.question)
        except (Cancelled, _Withdrawn) as exc:
            job.fail(exc if isinstance(exc, Cancelled) else Cancelled(job.cancel.reason))
        except Exception as exc:  # noqa: BLE001 - the poster's to handle, as if it ran there
            job.fail(exc)
        except BaseException:
            job.fail(Cancelled(STOPPED))
            raise
        else:
            job.finish(value)
        return True

    def close(self) -> None:
        """Stop serving: withdraw the queued jobs and every later one; release the signal."""
        with self._lock:
            self._closed = True
            jobs, self._jobs = list(self._jobs), deque()
        for job in jobs:
            job.fail(Cancelled(ENDED))
        if self._catches and self.here:
            self._catches = False
            signal.signal(WITHDRAW_SIGNAL, self._previous)  # type: ignore[arg-type]

    def _run(self, work: Callable[[], T], cancel: Cancellation, question: bool) -> T:
        """Run work here, in its scope; a question is withdrawn when ``cancel`` is cancelled."""
        cancel.check()
        with within(Scope(self, cancel)):
            if not question:
                return work()
            try:
                answer = self._asked(work, cancel)
            except _Withdrawn:
                stdin.withdraw(cancel.reason)
                raise Cancelled(cancel.reason) from None
            cancel.check()  # answered as it was withdrawn: the answer does nothing
            return answer

    def _asked(self, work: Callable[[], T], cancel: Cancellation) -> T:
        """Run a question, interruptible by its withdrawal while it waits.

        The question being asked is one attribute, set and put back in single steps on this
        thread: the signal handler, which runs here too, sees it as it is.
        """
        outer = self._question
        unlink = cancel.on_cancel(self._withdraw_asked)
        try:
            self._question = cancel
            return work()
        finally:
            self._question = outer
            unlink()

    def _unqueue(self, job: _Job[Any]) -> None:
        """Withdraw a job whose work was cancelled, if it has not started."""
        with self._lock:
            if job not in self._jobs:
                return
            self._jobs.remove(job)
        job.fail(Cancelled(job.cancel.reason))

    def _withdraw_asked(self) -> None:
        """Interrupt the question being asked on the cell's thread (called on cancelling).

        The handler checks again, there: a question answered meanwhile is left alone.
        """
        asked = self._question
        if self._catches and not self.here and asked is not None and asked.cancelled:
            _thread.interrupt_main(WITHDRAW_SIGNAL)

    def _on_signal(self, signum: int, frame: Any) -> None:
        """Withdraw the question being asked, if its work was cancelled (on the main thread)."""
        asked = self._question
        if asked is not None and asked.cancelled:
            raise _Withdrawn
        if callable(self._previous):
            self._previous(signum, frame)
