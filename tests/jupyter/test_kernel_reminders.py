"""Kernel changes told to the model: cells the person ran, an interrupt, a restart (real kernel)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from nbagent.jupyter.kernel_reminders import KernelChanges
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.tools.notebook.record import ExecutionRecord
from tests.kernels import execute, kernel

REMINDER = "<system-reminder>"


def _last_user_texts(body: dict[str, Any]) -> list[str]:
    message = body["messages"][-1]
    assert message["role"] == "user"
    texts = [block["text"] for block in message["content"] if block.get("type") == "text"]
    return [t for t in texts if "deferred tools" not in t]  # the tool announcements aside


@pytest.mark.slow
def test_person_runs_interrupts_and_a_restart_reach_the_model(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(tmp_path / "analysis.ipynb"),
    }
    with kernel(env, cwd=str(tmp_path)) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        fake_api.enqueue(Reply.text("First answer."))
        assert execute(client, "%%agent\nHello.", cell_id="agent-1").status == "ok"
        execute(client, "data = [1, 2]", cell_id="load-data")
        execute(client, "1 / 0", cell_id="oops")
        timer = threading.Timer(1.5, manager.interrupt_kernel)
        timer.start()
        execute(client, "import time\ntime.sleep(30)", cell_id="slow")
        timer.join()
        fake_api.enqueue(Reply.text("Second answer."))
        assert execute(client, "%%agent\nWhat now?", cell_id="agent-2").status == "ok"
        fake_api.enqueue(Reply.text("Third answer."))
        assert execute(client, "%%agent\nAnd now?", cell_id="agent-3").status == "ok"

        manager.restart_kernel(now=True)
        client.wait_for_ready(timeout=60)
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, "%agent resume").status == "ok"
        execute(client, "x = 1", cell_id="after-restart")
        fake_api.enqueue(Reply.text("Fourth answer."))
        assert execute(client, "%%agent\nStill there?", cell_id="agent-4").status == "ok"

    first, second, third, fourth = (_last_user_texts(r.body) for r in fake_api.requests)
    assert first == ["Hello."]  # a new conversation: nothing to tell
    assert second[0] == "What now?" and second[1].startswith(REMINDER)
    told = second[1]
    assert "cell load-data" in told and "bound data" in told
    assert "cell oops" in told and "ZeroDivisionError: division by zero" in told
    assert "cell slow" in told and "interrupted" in told and "partial" in told
    assert "agent-1" not in told  # the agent's own cells are not the person's runs
    assert third == ["And now?"]  # nothing ran in between
    assert fourth[0] == "Still there?" and "The kernel restarted" in fourth[1]
    assert "cell after-restart" in fourth[1] and "variable" in fourth[1]
    assert "%agent resume" not in fourth[1] and "load_ext" not in fourth[1]
    # cache-safe: each request's messages begin with the previous request's, unchanged
    for before, after in zip(fake_api.requests[1:3], fake_api.requests[2:4], strict=True):
        sent = before.body["messages"]
        assert after.body["messages"][: len(sent) - 1] == sent[:-1]


def _add(record: ExecutionRecord, cell_id: str, **kw: Any) -> None:
    values = {"execution_count": 1, "source": "x", "started": 0.0, "duration": 0.5}
    record.add(cell_id=cell_id, error=None, **(values | kw))


def test_a_long_list_is_cut_to_the_last_runs() -> None:
    record = ExecutionRecord()
    changes = KernelChanges(record)
    assert changes([]) is None
    for number in range(30):
        _add(record, f"c{number}")
    told = changes([{"role": "user", "content": "hi"}])
    assert told is not None and "30 runs" in told and "... 18 earlier" in told
    assert "cell c29" in told and "cell c17 " not in told
    sent = [{"role": "user", "content": [{"type": "text", "text": told}]}]
    assert changes(sent) is None


def test_a_reminder_whose_request_failed_is_told_again() -> None:
    record = ExecutionRecord()
    changes = KernelChanges(record)
    history: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    changes(history)  # a turn: nothing to tell
    _add(record, "ran-between")
    told = changes(history)
    assert told is not None and "cell ran-between" in told
    again = changes(history)  # the request failed: the prompt and the reminder left the history
    assert again == told
    history.append({"role": "user", "content": [{"type": "text", "text": again}]})
    assert changes(history) is None
