"""nbagent.loop.execution: the worker threads of ToolRunner, and what an abandoned call leaves.

A call that hangs past ``call_timeout`` is abandoned on its thread. Those threads are daemon
threads, so neither a Python process nor a kernel waits for them at exit (a
``ThreadPoolExecutor`` joins its workers at exit: a kernel shutdown waited for the hung tool,
forever, or until Jupyter killed the kernel).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from nbagent.core.events import (
    Notice,
    PermissionAnswered,
    PermissionRequested,
    ToolCallFinished,
    ToolCallStarted,
)
from nbagent.core.tool import Tool
from nbagent.loop.execution import CallOutcome, ToolRunner, emit
from nbagent.policy.decisions import PermissionAnswer
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply
from tests.kernels import execute, kernel

ROOT = Path(__file__).resolve().parents[1]
"""The checkout, where a child Python finds this nbagent."""


def calls(*names: str) -> list[dict[str, Any]]:
    """tool_use blocks calling ``names``, in order, with ids ``toolu_0``, ``toolu_1``, ..."""
    return [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}
        for i, name in enumerate(names)
    ]


def safe(name: str, handler: Any) -> Tool:
    """A concurrency-safe tool (run on a worker thread, beside others like it)."""
    return Tool(name=name, handler=handler, read_only=True, concurrency_safe=True)


def runner_of(*tools: Tool, **options: Any) -> ToolRunner:
    """A runner that knows ``tools`` by name."""
    by_name = {tool.name: tool for tool in tools}
    return ToolRunner(by_name.__getitem__, **options)


def run(runner: ToolRunner, *names: str) -> dict[str, CallOutcome]:
    """Run the calls of one turn to the end; return the outcomes by tool_use id."""
    outcomes: dict[str, CallOutcome] = {}
    list(runner.run(calls(*names), outcomes))
    return outcomes


ABANDON_AND_EXIT = textwrap.dedent(
    """
    import threading
    from nbagent.loop.execution import ToolRunner
    from nbagent.core.tool import Tool

    hang = Tool(name="Hang", handler=lambda: threading.Event().wait(), read_only=True)
    outcomes = {}
    runner = ToolRunner(lambda name: hang, call_timeout=0.2)
    list(runner.run([{"type": "tool_use", "id": "t", "name": "Hang", "input": {}}], outcomes))
    print(outcomes["t"].status, outcomes["t"].result.content, flush=True)
    """
)


def test_an_abandoned_call_does_not_keep_the_interpreter_from_exiting() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", ABANDON_AND_EXIT], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        told = child.stdout.readline()
        abandoned = time.monotonic()
        code = child.wait(timeout=5)
    finally:
        child.kill()
    assert told.startswith("error The tool did not finish within 0.2 s and was abandoned")
    assert code == 0 and time.monotonic() - abandoned < 3


def test_workers_are_daemon_threads_named_for_nbagent() -> None:
    seen: list[threading.Thread] = []
    outcomes = run(runner_of(safe("Who", lambda: seen.append(threading.current_thread()))), "Who")
    assert outcomes["toolu_0"].status == "ok"
    assert seen[0].daemon and seen[0].name.startswith("nbagent-tool-")
    assert seen[0] is not threading.main_thread()


def test_concurrency_safe_calls_run_together_up_to_max_workers() -> None:
    lock, running, most = threading.Lock(), [0], [0]

    def busy() -> str:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.1)
        with lock:
            running[0] -= 1
        return "done"

    started = time.monotonic()
    outcomes = run(runner_of(safe("Busy", busy), max_workers=3), *["Busy"] * 7)
    assert [o.status for o in outcomes.values()] == ["ok"] * 7
    assert most[0] == 3 and 0.3 <= time.monotonic() - started < 0.9  # three rounds


def test_calls_queued_when_the_run_stops_never_start() -> None:
    """An interrupt (the caller closing the generator) cancels the calls not started yet."""
    release, ran = threading.Event(), []

    def wait_for_release() -> str:
        ran.append("started")
        emit(Notice("waiting"))
        release.wait(5)
        return "done"

    runner = runner_of(safe("Wait", wait_for_release), max_workers=1)
    events = runner.run(calls("Wait", "Wait"), {})
    kinds = [type(next(events)).__name__ for _ in range(3)]
    assert kinds == ["ToolCallStarted", "ToolCallStarted", "ToolProgress"]  # one runs
    events.close()
    release.set()
    time.sleep(0.2)
    assert ran == ["started"]


def test_an_exception_the_runner_does_not_turn_into_a_result_reaches_the_caller() -> None:
    """Not a silent hang until the time limit: the worker hands it over, as a pool did."""

    def leave() -> None:
        raise SystemExit(3)

    started = time.monotonic()
    with pytest.raises(SystemExit):
        run(runner_of(safe("Leave", leave), call_timeout=30), "Leave")
    assert time.monotonic() - started < 5


SETUP = """\
import threading, nbagent
from nbagent.core.tool import Tool
nbagent.registry.register(
    Tool(name="Hang", description="Never returns.", handler=lambda: threading.Event().wait()),
    replace=True,
)
get_ipython().run_line_magic("config", "NbAgent.call_timeout = 0.5")
"""


@pytest.mark.slow
def test_a_kernel_with_an_abandoned_call_shuts_down_at_once(
    fake_api: FakeAnthropicServer,
) -> None:
    """Before the fix the kernel never exited by itself (Jupyter killed it after 2.6 s). How
    long it takes is not asserted: IPython's exit collects garbage, seconds on a loaded machine."""
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, SETUP).status == "ok"
        assert execute(client, "%agent allow Hang").status == "ok"
        fake_api.enqueue(Reply.tool_use("Hang"), Reply.text("The tool hung."))
        assert "The tool hung." in execute(client, "%%agent\nRun Hang.").text
        started = time.monotonic()
        client.shutdown()
        while manager.is_alive() and time.monotonic() - started < 60:
            time.sleep(0.05)
        assert not manager.is_alive(), "the kernel waited for the abandoned call"


def bash_calls(*commands: str) -> list[dict[str, Any]]:
    """tool_use blocks calling Bash with ``commands``, in order."""
    return [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": command}}
        for i, command in enumerate(commands)
    ]


def asking_runner(
    answers: list[PermissionAnswer], asked: list[PermissionRequested], **options: Any
) -> ToolRunner:
    """A runner for a Bash that echoes, whose asker gives ``answers`` in turn."""
    bash = Tool(name="Bash", handler=lambda command: f"ran {command}")

    def asker(request: PermissionRequested) -> PermissionAnswer:
        asked.append(request)
        return answers.pop(0)

    return runner_of(bash, policy=PermissionPolicy(root=ROOT), asker=asker, **options)


def test_a_question_comes_between_the_start_and_the_run_of_its_call() -> None:
    asked: list[PermissionRequested] = []
    events = list(asking_runner(["yes"], asked).run(bash_calls("git status -s"), {}))
    kinds = [type(e) for e in events]
    assert kinds == [ToolCallStarted, PermissionRequested, PermissionAnswered, ToolCallFinished]
    [request] = asked
    assert (request.request, request.always) == ("git status -s", "Bash(git status:*)")
    assert events[-1].status == "ok" and events[-1].permission == "approved by the user"


def test_the_time_a_person_takes_to_answer_is_not_the_calls_time() -> None:
    asked: list[PermissionRequested] = []
    runner = asking_runner(["yes"], asked, call_timeout=0.05)
    slow = runner.asker

    def thinking(request: PermissionRequested) -> PermissionAnswer | None:
        time.sleep(0.3)  # longer than the time limit: a person reads the command
        return slow(request)  # type: ignore[misc]

    runner.asker = thinking
    outcomes: dict[str, CallOutcome] = {}
    list(runner.run(bash_calls("make"), outcomes))
    assert outcomes["toolu_0"].status == "ok" and outcomes["toolu_0"].result.content == "ran make"


def test_always_adds_the_rule_and_the_same_subcommand_is_not_asked_again() -> None:
    asked: list[PermissionRequested] = []
    runner = asking_runner(["always", "no"], asked)
    outcomes: dict[str, CallOutcome] = {}
    events = list(runner.run(bash_calls("git status", "git status -s", "git push"), outcomes))
    answered = [e for e in events if isinstance(e, PermissionAnswered)]
    assert [(a.answer, a.rule) for a in answered] == [
        ("always", "Bash(git status:*)"),
        ("no", ""),
    ]
    assert [r.request for r in asked] == ["git status", "git push"]
    assert outcomes["toolu_0"].permission == "allowed from now on: Bash(git status:*)"
    assert outcomes["toolu_1"].permission == "allow: allow rule Bash(git status:*)"
    assert outcomes["toolu_2"].status == "denied"
    assert outcomes["toolu_2"].result.content == "The user refused this call."
