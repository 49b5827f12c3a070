"""Sub-agents in a real kernel (jupyter_client): each answer reaches the question it was typed
for, main-thread tools run on the main thread, and nothing of a sub-agent happens after Stop,
its call's time limit or a withdrawn question."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from nbagent.orchestration.subagent import SUBAGENT_SYSTEM
from nbagent.testing import FakeAnthropicServer, Reply
from tests.kernels import execute, kernel

pytestmark = pytest.mark.slow

SETUP = """\
import threading, nbagent
from pathlib import Path
from nbagent.core.tool import Tool

ran = []

def bash(command: str) -> str:
    ran.append((command, threading.current_thread() is threading.main_thread()))
    return f"ran {command}"

def note(text: str) -> str:
    with Path("notes.txt").open("a") as notes:
        notes.write(text + "\\n")
    return "noted"

def schema(name):
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}

nbagent.registry.register(
    Tool(name="Bash", description="Runs a command (here: notes that it ran).",
         input_schema=schema("command"), handler=bash, main_thread=True),
    replace=True,
)
nbagent.registry.register(
    Tool(name="Note", description="Adds a line to notes.txt.", input_schema=schema("text"),
         handler=note, read_only=True),
    replace=True,
)
"""

MODE = "print(get_ipython().magics_manager.registry['AgentMagics'].session.policy().mode)"


def results_in(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message."""
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def started(fake_api: FakeAnthropicServer, tmp_path: Path) -> Any:
    """A kernel in ``tmp_path`` with nbagent, its built-in tools, and SETUP's Bash and Note."""
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    return kernel(env, cwd=str(tmp_path))


def load(client: Any) -> None:
    assert execute(client, "%load_ext nbagent").status == "ok"
    assert execute(client, "%tools Bash").status == "ok"  # the built-in tools are in
    assert execute(client, SETUP).status == "ok"


def test_two_sub_agents_asking_at_once_each_answer_reaches_its_question(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Before: the refused command ran and the approved one did not in 6 trials of 16."""
    trials = 16
    prompts: list[str] = []

    def person(prompt: str) -> str:
        prompts.append(prompt)
        return "y" if "echo safe" in prompt else "n"

    with started(fake_api, tmp_path) as (_, client):
        load(client)
        for trial in range(trials):

            def reply(body: dict[str, Any], trial: int = trial) -> Reply:
                if body.get("system") != SUBAGENT_SYSTEM:
                    if results_in(body):
                        return Reply.text("Both done.")
                    return Reply.tool_uses(
                        ("Agent", {"description": "safe", "prompt": f"echo safe {trial}"}),
                        ("Agent", {"description": "risky", "prompt": f"rm -rf risky {trial}"}),
                    )
                if results_in(body):
                    return Reply.text(str(results_in(body)[0]["content"]))
                command = body["messages"][-1]["content"][0]["text"]
                return Reply.tool_use("Bash", {"command": command})

            fake_api.enqueue(*[reply] * 6)
            run = execute(client, "%%agent --new\nRun both.", stdin=person)
            assert run.status == "ok", run.error
            assert "Both done." in run.text
        check = execute(client, "print(ran)")
    assert check.text.strip() == str([(f"echo safe {t}", True) for t in range(trials)])
    assert len(prompts) == 2 * trials
    assert all(p.startswith("Allow Bash: ") for p in prompts), prompts


def endless_sub_agent(body: dict[str, Any]) -> Reply:
    """The parent starts one sub-agent, which notes things, slowly, until it is stopped."""
    if body.get("system") != SUBAGENT_SYSTEM:
        if results_in(body):
            return Reply.text("Gave up on it.")
        return Reply.tool_use("Agent", {"description": "notes", "prompt": "Take notes."})
    return Reply.tool_use("Note", {"text": f"note {len(body['messages'])}"}, delay=0.1)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def assert_nothing_more(fake_api: FakeAnthropicServer, notes: Path) -> None:
    """No model request and no note after the cell ended (waiting a while for one)."""
    requests, written = len(fake_api.requests), lines(notes)
    time.sleep(3)
    assert len(fake_api.requests) == requests
    assert lines(notes) == written


def test_stop_during_a_sub_agent_leaves_no_request_and_no_write_after_the_cell(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Before: the sub-agent made more requests and wrote files after its card said
    interrupted, while the person ran other cells."""
    fake_api.enqueue(*[endless_sub_agent] * 60)
    notes = tmp_path / "notes.txt"
    with started(fake_api, tmp_path) as (manager, client):
        load(client)

        def stop_after_two_notes() -> None:
            until = time.monotonic() + 60
            while len(lines(notes)) < 2 and time.monotonic() < until:
                time.sleep(0.02)
            manager.interrupt_kernel()

        stopper = threading.Thread(target=stop_after_two_notes, daemon=True)
        stopper.start()
        run = execute(client, "%%agent -o result\nGo.")
        stopper.join(10)
        assert run.status == "ok", run.error
        check = execute(client, "print(result.stop_reason, result.tool_calls[0].status)")
        assert check.text.strip() == "interrupted interrupted"
        assert_nothing_more(fake_api, notes)


def test_a_sub_agent_past_its_time_limit_leaves_no_request_and_no_write_after_the_cell(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Before: the abandoned sub-agent went on, making requests and writing notes."""
    fake_api.enqueue(*[endless_sub_agent] * 60)
    notes = tmp_path / "notes.txt"
    with started(fake_api, tmp_path) as (_, client):
        load(client)
        assert execute(client, "%config NbAgent.call_timeout = 2").status == "ok"
        run = execute(client, "%%agent -o result\nGo.")
        assert run.status == "ok", run.error
        assert "Gave up on it." in run.text and lines(notes)
        check = execute(client, "print(result.tool_calls[0].error)")
        assert "abandoned" in check.text
        assert_nothing_more(fake_api, notes)


def test_a_late_yes_to_a_withdrawn_plan_question_changes_nothing(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Before: the yes typed after the call was abandoned switched the mode to default."""

    def reply(body: dict[str, Any]) -> Reply:
        if body.get("system") != SUBAGENT_SYSTEM:
            if results_in(body):
                return Reply.text("No plan approved.")
            return Reply.tool_use("Agent", {"description": "plan", "prompt": "Plan it."})
        if results_in(body):
            return Reply.tool_use("ExitPlanMode", {"plan": "1. Change everything."})
        return Reply.tool_use("ToolSearch", {"query": "select:ExitPlanMode"})

    fake_api.enqueue(*[reply] * 4)  # the sub-agent makes no request after its question
    prompts: list[str] = []

    def leave_unanswered(prompt: str) -> None:
        prompts.append(prompt)

    with started(fake_api, tmp_path) as (_, client):
        load(client)
        setup = "%config NbAgent.permission_mode = 'plan'\n%config NbAgent.call_timeout = 2"
        assert execute(client, setup).status == "ok"
        run = execute(client, "%%agent\nPlan.", stdin=leave_unanswered)
        assert run.status == "ok", run.error
        assert prompts == ["Approve this plan? [y/N] "] and "No plan approved." in run.text
        client.input("y")  # typed after the cell ended
        time.sleep(3)
        assert execute(client, MODE).text.strip() == "plan"
        assert "Question withdrawn: its call reached its time limit." in run.text
        # The next question gets its own answer; the late one is said to have done nothing.
        fake_api.enqueue(Reply.tool_use("Bash", {"command": "echo after"}), Reply.text("Done."))
        assert execute(client, "%config NbAgent.permission_mode = 'default'").status == "ok"
        after = execute(client, "%%agent\nOne more.", stdin=lambda prompt: "n")
        assert "Your answer 'y' did nothing: that question had been withdrawn." in after.text
        assert execute(client, "print(ran)").text.strip() == "[]"
