"""NotebookRun beyond one run now, in a real kernel with a front end on the comm: "stale",
the time limit the model asks for (within c.NbAgent.max_run_seconds), outputs streamed into
the cell while it runs, and runs queued for after the turn with the ``--after`` cell."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.frontend.test_kernel_front_end import last_result, result_text
from tests.frontend_peer import FrontEndPeer
from tests.kernels import execute, kernel

pytestmark = pytest.mark.slow

PRINTER = "import time\nfor i in range(6):\n    print('step', i, flush=True)\n    time.sleep(0.4)"


@contextmanager
def world(
    tmp_path: Path, fake_api: FakeAnthropicServer, cells: dict[str, str], mode: str = "default"
) -> Iterator[tuple[Any, Any, FrontEndPeer]]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(src, id=cid) for cid, src in cells.items()]
    path = tmp_path / "runs.ipynb"
    nbformat.write(notebook, path)
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(path),
    }
    with kernel(env, cwd=str(tmp_path)) as (manager, client):
        execute(client, "%load_ext nbagent")
        execute(client, f"%config NbAgent.permission_mode = {mode!r}")
        peer = FrontEndPeer(manager, path)
        try:
            yield manager, client, peer
        finally:
            peer.close()


def _results(fake_api: FakeAnthropicServer) -> list[str]:
    return [result_text(last_result(r.body)) for r in fake_api.requests[1:]]


def test_stale_runs_changed_and_new_cells_in_order_asking_once(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    cells = {
        "a": "a = 1",
        "b": "b = a + 1",
        "boom": "1 / 0",
        "c": "c = 3",
        "agent": "%%agent\nRun what is stale.",
    }
    with world(tmp_path, fake_api, cells) as (_, client, peer):
        execute(client, "a = 1", cell_id="a")
        execute(client, "c = 3", cell_id="c")
        peer.type("a", "\na2 = 2")  # changed since it ran: stale; c ran as it is: not
        prompts: list[str] = []

        def answer(prompt: str) -> str:
            prompts.append(prompt)
            return "y"

        fake_api.enqueue(Reply.tool_use("NotebookRun", {"cell_id": "stale"}), Reply.text("Ran."))
        run = execute(client, cells["agent"], cell_id="agent", stdin=answer)
        assert run.status == "ok", run.error
        (said,) = _results(fake_api)
        assert len(prompts) == 1 and "run 3 stale cells in the kernel, in order" in prompts[0]
        for name in ("# cell a (stale)", "# cell b (never ran)", "# cell boom (never ran)"):
            assert name in prompts[0]
        assert "# cell c" not in prompts[0]
        assert said.startswith("Ran 3 stale cells of 3, in notebook order; stopped at the error")
        assert said.index("Ran cell a ") < said.index("Ran cell b ") < said.index("Ran cell boom")
        assert "ZeroDivisionError" in said
        check = execute(client, "print(a2, b)")
        assert check.text.strip() == "2 2"


def test_the_time_limit_is_the_models_within_the_persons_maximum(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    cells = {"sleepy": "import time\ntime.sleep(30)", "agent": "%%agent\nSleep."}
    with world(tmp_path, fake_api, cells, mode="bypassPermissions") as (_, client, _peer):
        execute(client, "%config NbAgent.max_run_seconds = 1.5")
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "sleepy", "timeout": 2}), Reply.text("No.")
        )
        assert execute(client, cells["agent"], cell_id="agent").status == "ok"
        execute(client, "%config NbAgent.max_run_seconds = 5")
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "sleepy", "timeout": 1}), Reply.text("ok")
        )
        assert execute(client, cells["agent"], cell_id="agent").status == "ok"
        refused = execute(client, "%config NbAgent.max_run_seconds = 0")
    above, stopped = (result_text(last_result(fake_api.requests[i].body)) for i in (1, 3))
    assert "timeout 2 s is above the longest the person allows" in above
    assert "c.NbAgent.max_run_seconds = 1.5" in above and 'when="after_turn"' in above
    assert "stopped after 1 s (the time limit)" in stopped
    assert "max_run_seconds must be more than 0" in refused.text + str(refused.outputs)


def test_outputs_stream_into_the_cell_while_it_runs(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    cells = {"printer": PRINTER, "agent": "%%agent\nPrint."}
    with world(tmp_path, fake_api, cells, mode="bypassPermissions") as (_, client, peer):
        fake_api.enqueue(Reply.tool_use("NotebookRun", {"cell_id": "printer"}), Reply.text("ok"))
        assert execute(client, cells["agent"], cell_id="agent").status == "ok"
        streamed = [text for cell, text in peer.streamed if cell == "printer"]
        final = peer.cell("printer").outputs
    shown = [t for t in streamed if t]
    assert len(shown) >= 3, streamed  # several updates while it ran, not one at the end
    assert shown[0].startswith("step 0") and "step 5" not in shown[0]
    assert all(later.startswith(earlier) for earlier, later in zip(shown, shown[1:], strict=False))
    assert final[0]["text"].endswith("step 5\n")
    assert peer.runs[-1] == ("printer", False)


def test_a_queued_run_goes_on_after_it_ends_but_not_after_an_interrupt(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    cells = {
        "printer": PRINTER,
        "sleepy": "import time\ntime.sleep(30)",
        "agent": "%%agent\nTrain.",
    }
    with world(tmp_path, fake_api, cells, mode="bypassPermissions") as (manager, client, peer):
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "printer", "when": "after_turn"}),
            Reply.text("Queued the training."),
        )
        ended = execute(client, cells["agent"], cell_id="agent")
        assert "Runs next, as normal cells: `printer`" in ended.text
        assert "Cell printer is queued" in _results(fake_api)[0]
        (queue,) = peer.queued
        assert queue["cells"] == ["printer"] and queue["after"] == "agent"
        assert queue["continue"] is True
        assert queue["source"].startswith("%%agent --after printer\n")
        # the front end runs the queued cell as a normal cell, then the agent cell it adds
        ran = execute(client, PRINTER, cell_id="printer")
        with peer._lock:
            peer.notebook.cells[0].outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=ran.text)
            ]
        fake_api.enqueue(Reply.text("Training went fine."))
        going_on = execute(client, queue["source"], cell_id="cont-1")
        assert going_on.status == "ok" and "Training went fine." in going_on.text
        prompt = fake_api.requests[-1].body["messages"][-1]["content"][0]["text"]
        assert "The runs you queued for after your turn ended:" in prompt
        assert f"Cell printer (In [{ran.execution_count}]): ok after" in prompt
        assert "step 5" in prompt

        requests = len(fake_api.requests)
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "sleepy", "when": "after_turn"}),
            Reply.text("Queued."),
        )
        execute(client, cells["agent"], cell_id="agent")
        queue = peer.queued[-1]
        timer = threading.Timer(1.5, manager.interrupt_kernel)
        timer.start()
        execute(client, cells["sleepy"], cell_id="sleepy")
        timer.join()
        stopped = execute(client, queue["source"], cell_id="cont-2")
        assert "Not continued" in stopped.text and "interrupted" in stopped.text
        assert len(fake_api.requests) == requests + 2  # the queueing turn's two, no more
