"""Running a cell's source in the kernel with IPython's semantics, its outputs captured.

:func:`run_source` runs code as ``%%capture`` runs a nested cell: through ``shell.run_cell``
(input transformers, magics, the display hook, ``post_execute`` hooks, so matplotlib's
inline figures are flushed), with stdout, stderr, displays, the result and the error taken
as nbformat outputs, in order, instead of going to the running ``%%agent`` cell. The run
is not stored in the history and does not advance the execution count: the outputs carry
the count of the ``%%agent`` cell that ran them. A time limit stops the code as Ctrl-C does.
"""

from __future__ import annotations

import _thread
import functools
import io
import signal
import sys
import threading
import tokenize
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

STREAM_CHARS = 1_000_000
"""Characters of stdout and stderr each that a run keeps for the notebook (the rest is cut)."""


@dataclass
class CellRun:
    """What running a cell produced."""

    outputs: list[dict[str, Any]] = field(default_factory=list)
    """The outputs, as nbformat 4 output dicts, in the order they came."""
    error: BaseException | None = None
    """The exception the code raised (a syntax error included), or None."""
    timed_out: bool = False
    """Whether the time limit stopped it."""
    result: Any = None
    """The value its last expression showed (its ``execute_result``), if any."""

    @property
    def interrupted(self) -> bool:
        """Whether the user stopped it (Ctrl-C, not the time limit)."""
        return isinstance(self.error, KeyboardInterrupt) and not self.timed_out


class _Recorder:
    """Collects a run's outputs as nbformat dicts."""

    def __init__(
        self,
        execution_count: int | None,
        stream_chars: int,
        on_change: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> None:
        self.outputs: list[dict[str, Any]] = []
        self.on_change = on_change
        self.execution_count = execution_count
        self.stream_chars = stream_chars
        self.value: Any = None
        """The value shown as the ``execute_result``."""
        self._streamed = {"stdout": 0, "stderr": 0}
        self._clear_on_next = False

    def _add(self, output: dict[str, Any]) -> None:
        if self._clear_on_next:
            self._clear()
        self.outputs.append(output)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.outputs)

    def _clear(self) -> None:
        """Drop the outputs so far: what is cut is counted again from here."""
        self.outputs.clear()
        self._streamed = {"stdout": 0, "stderr": 0}
        self._clear_on_next = False

    def stream(self, name: str, text: str) -> None:
        if self._clear_on_next:
            self._clear()
        room = self.stream_chars - self._streamed[name]
        if room <= 0:
            return
        if len(text) > room:
            text = text[:room] + f"\n[output cut: more than {self.stream_chars:,} characters]\n"
        self._streamed[name] += len(text)
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
            self._changed()
        else:
            self._add({"output_type": "stream", "name": name, "text": text})

    def display(self, data: dict[str, Any], metadata: Any, transient: Any, update: bool) -> None:
        display_id = (transient or {}).get("display_id")
        if update:
            for output in self.outputs:
                if output.get("_display_id") == display_id:
                    output.update(data=data, metadata=metadata or {})
            self._changed()
            return
        output = {"output_type": "display_data", "data": data, "metadata": metadata or {}}
        if display_id:
            output["_display_id"] = display_id
        self._add(output)

    def result(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        self._add(
            {
                "output_type": "execute_result",
                "data": data,
                "metadata": metadata,
                "execution_count": self.execution_count,
            }
        )

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self._add(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}
        )

    def clear(self, wait: bool) -> None:
        if wait:
            self._clear_on_next = True
        else:
            self._clear()
            self._changed()

    def finished(self) -> list[dict[str, Any]]:
        for output in self.outputs:
            output.pop("_display_id", None)
        return self.outputs


class _Stream(io.TextIOBase):
    """A text stream that hands what is written to the recorder."""

    def __init__(self, recorder: _Recorder, name: str) -> None:
        self._recorder = recorder
        self.name = name

    def write(self, text: str) -> int:
        self._recorder.stream(self.name, text)
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False


@functools.cache
def _publisher_class() -> type:
    """IPython's display publisher, recording instead of sending (made once: IPython is
    imported only when a cell first runs)."""
    from IPython.core.displaypub import DisplayPublisher

    class RecordingPublisher(DisplayPublisher):
        """Hands each display and ``clear_output`` to a recorder."""

        def __init__(self, recorder: _Recorder, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.recorder = recorder

        def publish(
            self,
            data: Any,
            metadata: Any = None,
            source: Any = None,
            *,
            transient: Any = None,
            update: bool = False,
            **kwargs: Any,
        ) -> None:
            """Record a display instead of sending it."""
            self.recorder.display(data, metadata, transient, update)

        def clear_output(self, wait: bool = False) -> None:
            """Record a ``clear_output``."""
            self.recorder.clear(wait)

        def set_parent(self, parent: Any) -> None:
            """Take no parent: ipykernel sets one whenever a message comes in, a front end's
            answer on its subshell included, while the cell runs."""

    return RecordingPublisher


def _display_hook(shell: Any, recorder: _Recorder, source: str) -> Any:
    """The display hook of the run: a final expression's value becomes an execute_result."""
    from IPython.core.displayhook import DisplayHook

    try:
        quiet = DisplayHook.semicolon_at_end_of_expression(source)
    except (SyntaxError, ValueError, tokenize.TokenError):  # the run reports it
        quiet = False

    def hook(value: Any = None) -> None:
        if value is None or quiet:
            return
        data, metadata = shell.display_formatter.format(value)
        recorder.value = value
        recorder.result(data, metadata)

    return hook


class _Deadline:
    """Interrupts the main thread once ``seconds`` pass, unless stopped first.

    A real SIGINT, as Ctrl-C sends (``_thread.interrupt_main`` only takes effect when the
    main thread next runs Python code, so a blocking sleep or read would run on).
    """

    def __init__(self, seconds: float | None) -> None:
        self.fired = False
        self._active = True
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire) if seconds else None
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._active:
                self.fired = True
                if hasattr(signal, "pthread_kill"):
                    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                else:  # Windows
                    _thread.interrupt_main()

    def stop(self) -> None:
        with self._lock:
            self._active = False
        if self._timer is not None:
            self._timer.cancel()


@contextmanager
def _captured(shell: Any, recorder: _Recorder, source: str) -> Iterator[None]:
    """Send a run's stdout, stderr, displays, result and traceback to the recorder.

    Everything is put back on every way out, an interrupt in the middle of the swap included.
    """
    saved = (sys.stdout, sys.stderr, sys.displayhook, shell.display_pub)
    exec_result, trap_hook = shell.displayhook.exec_result, shell.display_trap.hook
    own_traceback = vars(shell).get("_showtraceback")  # an instance's own, if it has one

    def show_traceback(etype: Any, evalue: Any, stb: list[str]) -> None:
        recorder.error(getattr(etype, "__name__", str(etype)), str(evalue), list(stb))

    try:
        sys.stdout, sys.stderr = _Stream(recorder, "stdout"), _Stream(recorder, "stderr")
        # The display trap sets sys.displayhook when no cell is running (else it already has).
        sys.displayhook = shell.display_trap.hook = _display_hook(shell, recorder, source)
        shell.display_pub = _publisher_class()(recorder, shell=shell)
        shell._showtraceback = show_traceback
        yield
    finally:
        sys.stdout, sys.stderr, sys.displayhook, shell.display_pub = saved
        if own_traceback is None:
            vars(shell).pop("_showtraceback", None)
        else:
            shell._showtraceback = own_traceback
        shell.displayhook.exec_result, shell.display_trap.hook = exec_result, trap_hook


def running_count(shell: Any) -> int | None:
    """The execution count of the cell running now (the ``%%agent`` cell), or None.

    The running cell's own result knows its count. Code run meanwhile on a kernel subshell
    (the front end's channel) may have cleared that result as its own cell ended; IPython 9
    (the oldest nbagent supports) advances ``shell.execution_count`` as a cell starts, so the
    running cell's count is then one less.
    """
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    if isinstance(count, int):
        return count
    following = getattr(shell, "execution_count", None)
    return following - 1 if isinstance(following, int) and following > 1 else None


def run_source(
    shell: Any,
    source: str,
    execution_count: int | None,
    timeout: float | None = None,
    stream_chars: int = STREAM_CHARS,
    on_change: Callable[[list[dict[str, Any]]], None] | None = None,
) -> CellRun:
    """Run code as a cell of the kernel's, capturing its outputs. Main thread only.

    Args:
        shell: The IPython shell.
        source: The cell's source.
        execution_count: The count the outputs carry (that of the running ``%%agent`` cell).
        timeout: Seconds before the code is interrupted (None: no limit).
        stream_chars: Characters of stdout and stderr each kept.
        on_change: Called with the outputs so far each time they change (on the main
            thread, in the middle of the cell's own code: it must return at once).

    Returns:
        The outputs and the error, if any. A Ctrl-C during the run ends it with a
        ``KeyboardInterrupt`` error (:attr:`CellRun.interrupted`); it is not raised.
    """
    recorder = _Recorder(execution_count, stream_chars, on_change)
    run = CellRun()
    deadline: _Deadline | None = None
    try:
        with _captured(shell, recorder, source):
            deadline = _Deadline(timeout)
            try:
                result = shell.run_cell(source, store_history=False, silent=False)
            finally:
                deadline.stop()
        run.error = result.error_before_exec or result.error_in_exec
    except KeyboardInterrupt as exc:  # the deadline or a Ctrl-C outside the cell's own code
        run.error = exc
    finally:
        if deadline is not None:
            deadline.stop()
    run.timed_out = deadline is not None and deadline.fired
    run.timed_out = run.timed_out and isinstance(run.error, KeyboardInterrupt)
    if run.timed_out:
        recorder.outputs = [o for o in recorder.outputs if o["output_type"] != "error"]
        message = f"stopped by nbagent after {timeout:g} s (the tool time limit)"
        recorder.error("TimeoutError", message, [f"TimeoutError: {message}"])
    run.outputs = recorder.finished()
    run.result = recorder.value
    return run
