"""Running the tool calls of one model turn: permission, concurrency, errors.

Consecutive concurrency-safe calls run together on worker threads; every other call runs
alone, in order. The workers are daemon threads of the runner's own, not a
``ThreadPoolExecutor``'s, which are joined at exit: a call abandoned past its time limit must
not keep the interpreter (and so a kernel shutdown or restart) waiting for it. A tool never
kills the loop: a ``ToolError`` becomes an ``is_error`` result with its message, and any other
exception is logged with its traceback and reported to the model the same way.

Questions to the person and ``main_thread`` tools always run on the cell's thread
(:mod:`nbagent.loop.cellthread`): a runner on a worker thread (a sub-agent's) posts them there,
and the cell's thread serves them one at a time while it waits for its workers. Each batch
of worker calls has a :class:`~nbagent.core.cancellation.Cancellation`, cancelled at its time limit,
on Stop and when the run ends: the calls see it (a sub-agent stops before its next model
request or tool call), and the runner gives the work they started a moment to stop before it
reports them ended.
"""

from __future__ import annotations

import contextvars
import json
import queue
import re
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from nbagent.core.cancellation import ENDED, STOPPED, TIME_LIMIT, Cancellation, Cancelled
from nbagent.core.errors import ToolError
from nbagent.core.events import (
    CallStatus,
    Event,
    PermissionAnswered,
    PermissionRequested,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
)
from nbagent.core.secrets import get_logger, redact_content
from nbagent.core.tool import RESULT_BLOCK_TYPES, Tool, ToolResult
from nbagent.loop import cellthread
from nbagent.loop.cellthread import CellThread, Scope
from nbagent.policy.calls import describe_request
from nbagent.policy.combining import decide
from nbagent.policy.decisions import Asker, Policy
from nbagent.policy.permissions import PermissionPolicy

logger = get_logger("nbagent")

INTERRUPTED_MESSAGE = "Interrupted by the user before this tool call finished."
"""What the model is told about a call the user interrupted."""

DEFAULT_CALL_TIMEOUT = 300.0
"""Seconds a tool call on a worker thread may take by default."""

MAX_RESULT_CHARS = 100_000
"""Longest text a tool result sends the model by default."""

CANCEL_GRACE = 2.0
"""Seconds the work started by cancelled calls (a sub-agent's tool call or model request) has
to see the cancellation and stop, before the calls are reported ended anyway."""

_SURROGATE = re.compile("[\ud800-\udfff]")

_progress: ContextVar[Callable[[Event], None] | None] = ContextVar("nbagent_progress", default=None)
_call_id: ContextVar[str] = ContextVar("nbagent_call_id", default="")


def current_call_id() -> str:
    """The tool_use id of the tool call running here (empty outside one): what a checkpoint
    names a change by, for the call's Undo button."""
    return _call_id.get()


def emit(event: Event) -> None:
    """Report an event from inside a running tool (shown under its card); no-op elsewhere.

    Args:
        event: What happened (a sub-agent's event, a task list change, ...).
    """
    report = _progress.get()
    if report is not None:
        report(event)


@dataclass
class CallOutcome:
    """How one tool call ended."""

    id: str
    """The tool_use id."""
    name: str
    """The tool's name."""
    input: dict[str, Any]
    """The input the model gave."""
    status: CallStatus
    """ok, error, denied or interrupted."""
    result: ToolResult
    """What goes back to the model."""
    duration: float = 0.0
    """Seconds spent running it."""
    permission: str = ""
    """The decision and the rule that made it, when one applied."""

    def block(self) -> dict[str, Any]:
        """Return the ``tool_result`` block for the next user message."""
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.id,
            "content": self.result.content,
        }
        if self.result.is_error:
            block["is_error"] = True
        return block

    def finished(self) -> ToolCallFinished:
        """Return the event that reports this outcome."""
        return ToolCallFinished(
            id=self.id,
            name=self.name,
            status=self.status,
            content=self.result.content,
            duration=self.duration,
            permission=self.permission,
            summary=str(self.result.metadata.get("summary") or ""),
            review=str(self.result.metadata.get("review") or ""),
        )


def interrupted(call: Mapping[str, Any], duration: float = 0.0) -> CallOutcome:
    """Return the outcome of a call the user interrupted.

    Args:
        call: The tool_use block.
        duration: Seconds it ran before the interrupt (0 for a call that never started).
    """
    return CallOutcome(
        id=call["id"],
        name=call["name"],
        input=dict(call.get("input") or {}),
        status="interrupted",
        result=ToolResult(content=INTERRUPTED_MESSAGE, is_error=True),
        duration=duration,
    )


@dataclass
class ToolRunner:
    """Runs tool_use blocks against the tools a resolver finds."""

    resolve: Callable[[str], Tool]
    """Finds the tool of a name; raises ToolError (with the model's message) when it cannot."""
    policy: Policy | None = None
    """The agent-wide permission policy."""
    asker: Asker | None = None
    """Asks the user when a decision is ``ask``; without one, such calls are denied."""
    max_workers: int = 8
    """Concurrency-safe calls run at once at most."""
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    """Seconds a call on a worker thread may take before the model is told it timed out (its
    daemon thread is left to finish alone, or to end with the interpreter)."""
    max_result_chars: int = MAX_RESULT_CHARS
    """Longest text a result may send the model; the rest is cut with a note."""
    _running: set[tuple[_Batch, Cancellation]] = field(default_factory=set, init=False, repr=False)

    def run(
        self, calls: list[dict[str, Any]], outcomes: dict[str, CallOutcome]
    ) -> Generator[Event, None, None]:
        """Run the calls of one turn, yielding start and finish events.

        Args:
            calls: The tool_use blocks, in the model's order.
            outcomes: Filled with each outcome as it ends (by tool_use id), so that a caller
                interrupted half-way knows which calls finished.

        Yields:
            ToolCallStarted, ToolProgress (what the tools report while they run) and
            ToolCallFinished events, with PermissionRequested and PermissionAnswered around a
            question to the user. Every call of a batch is permitted (or refused) first: a
            person's answer takes as long as it takes and never counts against
            :attr:`call_timeout`. Tools marked ``main_thread`` then run on the cell's thread;
            the others on daemon worker threads, under the time limit, with their progress
            shown as it comes (consecutive concurrency-safe calls together, the rest one at a
            time). Questions and ``main_thread`` tools go to the cell's thread from a runner
            on a worker thread too (a sub-agent's).

        Raises:
            Cancelled: The work this run belongs to was cancelled (a sub-agent's parent call
                was stopped or abandoned); the calls not finished did not run, or were left.
        """
        outer = cellthread.current()
        cell = outer.cell if outer is not None else CellThread()
        scope = Scope(cell, Cancellation(outer.cancel if outer is not None else None))
        progress: queue.SimpleQueue[ToolProgress] = queue.SimpleQueue()
        try:
            for batch in self._batches(calls):
                scope.cancel.check()
                for call, _ in batch:
                    yield ToolCallStarted(call["id"], call["name"], dict(call.get("input") or {}))
                permitted: list[tuple[dict[str, Any], Tool | ToolError, str]] = []
                for call, tool in batch:
                    refusal, note = yield from self._permit(call, tool, scope)
                    if refusal is None:
                        permitted.append((call, tool, note))
                    else:
                        outcomes[refusal.id] = refusal
                        yield refusal.finished()
                if not permitted:
                    continue
                call, tool, note = permitted[0]
                if isinstance(tool, Tool) and tool.main_thread:
                    work = partial(self._run_one, call, tool, note, progress, scope)
                    outcome = cell.call(work, scope.cancel)
                    yield from _drain(progress)
                    outcomes[outcome.id] = outcome
                    yield outcome.finished()
                    continue
                yield from self._run_batch(permitted, outcomes, progress, scope)
        finally:
            scope.cancel.cancel(ENDED)
            if outer is None:
                cell.close()

    def close(self) -> None:
        """Cancel the calls of a run still going: those queued never start, those running
        are told to stop (a sub-agent stops before its next request or call)."""
        for jobs, deadline in list(self._running):
            jobs.cancel()
            deadline.cancel(ENDED)

    def _run_batch(
        self,
        batch: list[tuple[dict[str, Any], Tool | ToolError, str]],
        outcomes: dict[str, CallOutcome],
        progress: queue.SimpleQueue[ToolProgress],
        scope: Scope,
    ) -> Generator[Event, None, None]:
        """Run a batch on worker threads under the time limit, yielding progress and finishes.

        While it waits, the cell's thread serves the questions and main-thread calls the
        workers post. At the time limit (or on Stop, or when the run stops early) the batch's
        token is cancelled: calls not started never start, and what the running ones started
        has :data:`CANCEL_GRACE` seconds to stop before they are reported timed out (or the
        Stop goes on up); their threads are left to end alone.
        """
        deadline = Cancellation(scope.cancel)
        timer = threading.Timer(self.call_timeout, deadline.cancel, (TIME_LIMIT,))
        timer.daemon = True
        tokens = [Cancellation(deadline) for _ in batch]
        jobs = _Batch(
            [
                partial(self._run_in_batch, c, t, note, progress, Scope(scope.cell, token))
                for (c, t, note), token in zip(batch, tokens, strict=True)
            ],
            self.max_workers,
        )
        calls = dict(zip(jobs.futures, (call for call, _, _ in batch), strict=True))
        token_of = dict(zip(jobs.futures, tokens, strict=True))
        pending = set(calls)
        self._running.add((jobs, deadline))
        timer.start()
        reason = ENDED
        try:
            while pending:
                done, pending = wait(pending, timeout=0.05, return_when=FIRST_COMPLETED)
                yield from _drain(progress)
                if scope.cell.serve():
                    yield from _drain(progress)
                if deadline.cancelled:
                    jobs.cancel()
                    _settle(token_of[f] for f in pending)
                    scope.cancel.check()  # cancelled from above: not this batch's time limit
                finished = []
                for future in done:
                    outcome, cut_short = future.result()
                    finished.append(self._timed_out(calls[future]) if cut_short else outcome)
                if deadline.cancelled:
                    finished += [self._timed_out(calls[f]) for f in pending]
                    pending = set()
                for outcome in finished:
                    outcomes[outcome.id] = outcome
                    yield outcome.finished()
        except KeyboardInterrupt:
            reason = STOPPED
            raise
        finally:
            timer.cancel()
            jobs.cancel()
            deadline.cancel(reason)
            if pending:
                _settle(token_of[f] for f in pending)
            self._running.discard((jobs, deadline))

    def _run_in_batch(
        self,
        call: dict[str, Any],
        tool: Tool | ToolError,
        note: str,
        progress: queue.SimpleQueue[ToolProgress],
        scope: Scope,
    ) -> _Ended:
        """Run a call of a batch; its outcome, and whether its time was up before it ended
        (what it says may then be of its cancellation: it is reported timed out)."""
        outcome = self._run_one(call, tool, note, progress, scope)
        return outcome, scope.cancel.cancelled

    def _timed_out(self, call: dict[str, Any]) -> CallOutcome:
        """The outcome of a call still running past the time limit (its thread is left)."""
        logger.warning("Tool %s timed out after %s s", call["name"], self.call_timeout)
        message = (
            f"The tool did not finish within {self.call_timeout:g} s and was abandoned; "
            "try a smaller task or other input."
        )
        return _unrun(call, "error", message, duration=self.call_timeout)

    def _batches(
        self, calls: list[dict[str, Any]]
    ) -> list[list[tuple[dict[str, Any], Tool | ToolError]]]:
        """Group consecutive concurrency-safe calls; every other call (a ``main_thread``
        one included) is a batch of one."""
        batches: list[list[tuple[dict[str, Any], Tool | ToolError]]] = []
        for call in calls:
            try:
                tool: Tool | ToolError = self.resolve(call["name"])
            except ToolError as exc:
                tool = exc
            if _concurrent(tool) and batches and all(_concurrent(t) for _, t in batches[-1]):
                batches[-1].append((call, tool))
            else:
                batches.append([(call, tool)])
        return batches

    def _permit(
        self, call: dict[str, Any], tool: Tool | ToolError, scope: Scope
    ) -> Generator[Event, None, tuple[CallOutcome | None, str]]:
        """Decide whether a call may run, asking the user (on the cell's thread) when the
        policy says so.

        Returns:
            The refusal's outcome (None when the call may run), and the note for its card.

        Raises:
            Cancelled: The question was withdrawn (the run's work was cancelled meanwhile).
        """
        if isinstance(tool, ToolError):
            return None, ""
        tool_input = dict(call.get("input") or {})
        try:
            decision = decide(tool, tool_input, self.policy)
        except ToolError as exc:
            return _unrun(call, "error", redact_content(str(exc))), ""
        except Exception as exc:
            logger.exception("The permission check of %s failed", tool.name)
            message = f"{tool.name}'s permission check failed: {type(exc).__name__}: {exc}"
            return _unrun(call, "error", redact_content(message)), ""
        note = f"{decision.behavior}: {decision.rule}" if decision.rule else ""
        if decision.behavior == "deny":
            message = decision.message or f"Permission to use {tool.name} was denied."
            return _refused(call, message, note), note
        if decision.behavior == "allow":
            return None, note
        request = PermissionRequested(
            call["id"],
            tool.name,
            decision.request or describe_request(tool, tool_input),
            decision.message,
            decision.always if isinstance(self.policy, PermissionPolicy) else "",
        )
        if self.asker is None:
            answer = None
        else:
            yield request
            answer = scope.cell.call(partial(self.asker, request), scope.cancel, question=True)
        if answer is None:
            message = "This call needs the user's approval, and no one can be asked here."
            return _refused(call, message, "nobody could be asked"), note
        rule = ""
        if answer == "always" and isinstance(self.policy, PermissionPolicy) and request.always:
            rule = self.policy.add("allow", request.always).text
        yield PermissionAnswered(call["id"], answer, rule)
        if answer == "no":
            return _refused(call, "The user refused this call.", "refused by the user"), note
        return None, f"allowed from now on: {rule}" if rule else "approved by the user"

    def _run_one(
        self,
        call: dict[str, Any],
        tool: Tool | ToolError,
        note: str,
        progress: queue.SimpleQueue[ToolProgress],
        scope: Scope,
    ) -> CallOutcome:
        """Run a permitted call in its scope, with its progress reported, and make whatever
        happens an outcome; a call whose scope was cancelled before it started does not run."""
        token = _progress.set(lambda event: progress.put(ToolProgress(call["id"], event)))
        named = _call_id.set(str(call.get("id", "")))
        try:
            with cellthread.within(scope), scope.cancel.acting():
                if scope.cancel.cancelled:
                    return interrupted(call)
                return self._execute(call, tool, note)
        finally:
            _call_id.reset(named)
            _progress.reset(token)

    def _execute(self, call: dict[str, Any], tool: Tool | ToolError, note: str) -> CallOutcome:
        """Run the tool and turn whatever happens into an outcome (the result capped and
        redacted); a tool whose question was withdrawn is interrupted."""
        tool_input = dict(call.get("input") or {})

        def outcome(status: CallStatus, result: ToolResult, **extra: Any) -> CallOutcome:
            content = valid_unicode(_capped(result.content, self.max_result_chars))
            redacted = replace(result, content=redact_content(content))
            return CallOutcome(call["id"], call["name"], tool_input, status, redacted, **extra)

        if isinstance(tool, ToolError):
            return outcome("error", ToolResult(content=str(tool), is_error=True))
        started = time.perf_counter()
        try:
            result = _sendable(tool.call(tool_input))
            status: CallStatus = "error" if result.is_error else "ok"
        except Cancelled:
            return interrupted(call, time.perf_counter() - started)
        except ToolError as exc:
            result, status = ToolResult(content=str(exc), is_error=True), "error"
        except Exception as exc:
            logger.exception("Tool %s failed", tool.name)
            content = f"Tool {tool.name} failed: {type(exc).__name__}: {exc}"
            result, status = ToolResult(content=content, is_error=True), "error"
        return outcome(status, result, duration=time.perf_counter() - started, permission=note)


def _concurrent(tool: Tool | ToolError) -> bool:
    """Whether a call of the tool may run beside others on worker threads."""
    return isinstance(tool, Tool) and tool.concurrency_safe and not tool.main_thread


def _settle(tokens: Iterable[Cancellation]) -> None:
    """Give the work started by cancelled calls :data:`CANCEL_GRACE` seconds in all to stop:
    each call may still be running itself, but nothing it started."""
    until = time.monotonic() + CANCEL_GRACE
    for token in tokens:
        token.settle(1, max(0.0, until - time.monotonic()))


_Ended = tuple[CallOutcome, bool]
"""How a call of a batch ended, and whether its time was up by then."""


class _Batch:
    """The calls of one batch, run on up to ``workers`` daemon threads of its own.

    Daemon threads are never joined at exit, unlike a ``ThreadPoolExecutor``'s workers, so a
    call that hangs cannot hold up the interpreter's exit. Each job runs in a copy of the
    context variables of the thread that made the batch: in a kernel, they say which request
    the tool's prints, displays and stdin prompts belong to. (A plain thread would fall back
    to ipykernel's last-handled message, which may be a front end's comm message on a
    subshell: a prompt would then go to no cell and never be answered.)
    """

    def __init__(self, jobs: list[Callable[[], _Ended]], workers: int) -> None:
        self.futures: list[Future[_Ended]] = [Future() for _ in jobs]
        """One future per job, in order."""
        self._queue: queue.SimpleQueue[tuple[Future[_Ended], Callable[[], _Ended]]] = (
            queue.SimpleQueue()
        )
        for future, job in zip(self.futures, jobs, strict=True):
            self._queue.put((future, partial(contextvars.copy_context().run, job)))
        for number in range(min(workers, len(jobs))):
            name = f"nbagent-tool-{number}"
            threading.Thread(target=self._work, name=name, daemon=True).start()

    def cancel(self) -> None:
        """Make sure the jobs not started yet never start (running ones go on)."""
        for future in self.futures:
            future.cancel()

    def _work(self) -> None:
        """Run queued jobs until none is left, skipping the cancelled ones."""
        while True:
            try:
                future, job = self._queue.get_nowait()
            except queue.Empty:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # noqa: BLE001 - re-raised by result(), as in a pool
                future.set_exception(exc)


def _refused(call: dict[str, Any], message: str, note: str) -> CallOutcome:
    """The outcome of a call that was not allowed to run: the model is told why."""
    return _unrun(call, "denied", message, permission=note)


def _unrun(call: dict[str, Any], status: CallStatus, message: str, **extra: Any) -> CallOutcome:
    """The outcome of a call whose tool gave no result: an error with the model's message."""
    tool_input = dict(call.get("input") or {})
    result = ToolResult(content=message, is_error=True)
    return CallOutcome(call["id"], call["name"], tool_input, status, result, **extra)


def _drain(progress: queue.SimpleQueue[ToolProgress]) -> Generator[ToolProgress, None, None]:
    """Yield what the running tools have reported so far."""
    while True:
        try:
            yield progress.get_nowait()
        except queue.Empty:
            return


def valid_unicode(value: Any) -> Any:
    """Replace lone surrogates in every string of a JSON value with U+FFFD.

    A string decoded with ``surrogateescape`` (file names, subprocess output) cannot be
    encoded as UTF-8, so a request holding one could never be sent, nor any request after it.

    Args:
        value: A string, or lists and dicts of them (other values are returned as they are).
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [valid_unicode(item) for item in value]
    if isinstance(value, dict):
        return {valid_unicode(k): valid_unicode(v) for k, v in value.items()}
    return value


def _sendable(result: ToolResult) -> ToolResult:
    """Make sure a result's content can go into a request, and into every later one.

    Text blocks must hold text; empty ones are dropped (the API refuses them), and a result
    left with no block says so.

    Raises:
        ToolError: A block has a type a tool_result cannot carry, a text block holds no
            string, or a value is not strict JSON (NaN, an object).
    """
    content = result.content
    if isinstance(content, str):
        return result
    if not isinstance(content, list):
        raise ToolError(
            f"The tool returned content of type {type(content).__name__}; "
            "a result is text or a list of content blocks."
        )
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in RESULT_BLOCK_TYPES:
            raise ToolError(
                f"The tool returned a content block ({index}) of type {kind!r}; a result may "
                f"hold only {', '.join(sorted(RESULT_BLOCK_TYPES))} blocks."
            )
        if kind == "text" and not isinstance(block.get("text"), str):
            raise ToolError(
                f"The tool returned a text block ({index}) whose text is a "
                f"{type(block.get('text')).__name__}, not a string."
            )
    try:
        json.dumps(content, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolError(
            f"The tool returned content that cannot be sent to the model: {exc}"
        ) from exc
    sendable = without_empty_texts(content)
    return result if sendable is content else replace(result, content=sendable)


def without_empty_texts(content: list[dict[str, Any]]) -> list[dict[str, Any]] | str:
    """A result's blocks without the empty text blocks the API refuses.

    Args:
        content: The blocks of a tool result.

    Returns:
        The same list when it has none (and is not empty); else the blocks left, or
        ``"(no output)"`` when none is.
    """
    kept = [b for b in content if not _is_text(b) or b["text"].strip()]
    if kept and len(kept) == len(content):
        return content
    return kept or "(no output)"


def _capped(content: str | list[dict[str, Any]], limit: int) -> str | list[dict[str, Any]]:
    """Cut the text of a result to ``limit`` characters in all, saying how much was left out.

    Text blocks share one budget: those past it are cut or left out, other blocks are kept.
    """
    if isinstance(content, str):
        if len(content) <= limit:
            return content
        return (
            f"{content[:limit]}\n\n(output cut: {len(content):,} characters, the first "
            f"{limit:,} shown)"
        )
    total = sum(len(b["text"]) for b in content if _is_text(b))
    if total <= limit:
        return content
    budget, capped = limit, []
    for block in content:
        if _is_text(block):
            kept = block["text"][:budget]
            budget -= len(kept)
            if kept.strip():
                capped.append({**block, "text": kept})
        else:
            capped.append(block)
    note = f"(output cut: {total:,} characters of text, the first {limit:,} shown)"
    return [*capped, {"type": "text", "text": note}]


def _is_text(block: dict[str, Any]) -> bool:
    """Tell whether a content block is a text block."""
    return block.get("type") == "text" and isinstance(block.get("text"), str)
