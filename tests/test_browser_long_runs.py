"""Long runs in a real JupyterLab (Debian's Chromium): streamed, queued, interrupted.

A cell that prints for 20 s, run by the agent (NotebookRun), shows its lines in the notebook
while the agent waits; a run queued for after the agent's turn (``when="after_turn"``) runs as
a normal cell and the conversation goes on by itself in a new ``%%agent`` cell below; an
interrupt stops a run and the agent waiting on it, and a queued run and what would have gone
on after it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser_notebook import PANEL_READY
from tests.tools.rtc import KERNEL, Server, jupyter_server

pytestmark = pytest.mark.slow

NAME = "training.ipynb"
TRAIN = (
    "import time\nfor epoch in range(20):\n    print('epoch', epoch, flush=True)\n    time.sleep(1)"
)
SHORT = "import time\nfor step in range(3):\n    print('step', step, flush=True)\n    time.sleep(1)"

PANEL = "window.jupyterapp.shell.currentWidget"
CELL_JS = f"""(id) => {{
    const widget = {PANEL}.content.widgets.find(w => w.model.id === id);
    if (!widget) return null;
    const area = widget.node.querySelector('.jp-OutputArea');
    return {{text: area ? area.innerText : '', count: widget.model.executionCount,
             prompt: widget.node.querySelector('.jp-InputPrompt').innerText.trim()}};
}}"""
SOURCES = f"() => {PANEL}.content.model.toJSON().cells.map(c => [c.id, c.source])"
BUSY = f"() => {PANEL}.sessionContext.session.kernel.status === 'busy'"


def make_notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext nbagent\n%config NbAgent.permission_mode = 'bypassPermissions'",
            id="setup",
        ),
        nbformat.v4.new_code_cell(TRAIN, id="train"),
        nbformat.v4.new_code_cell(SHORT, id="short"),
        nbformat.v4.new_code_cell("%%agent\nTrain the model.", id="agent"),
    ]
    return notebook


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, fake_api: FakeAnthropicServer
) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("lab-long-runs")
    python = lab_setup("plain", base)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with jupyter_server(python, base, LAB_OPTIONS, env=env) as server:
        nbformat.write(make_notebook(), server.root / NAME)
        yield server


def run(page: Any, cell_id: str) -> None:
    """Run a cell as the person does (select it, run it)."""
    index = [c[0] for c in page.evaluate(SOURCES)].index(cell_id)
    page.evaluate(f"{PANEL}.content.activeCellIndex = {index}")
    # not awaited: the command's promise ends with the run
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-cell'); }")


def cell(page: Any, cell_id: str) -> dict[str, Any]:
    return page.evaluate(CELL_JS, cell_id)


def idle(page: Any) -> bool:
    return page.evaluate(f"() => {PANEL}.sessionContext.session.kernel.status === 'idle'")


def started(shown: dict[str, Any]) -> bool:
    """Whether the training cell runs again, past its first epoch."""
    text = shown["text"]
    return shown["prompt"] == "[*]:" and "epoch 1" in text and "epoch 19" not in text


def interrupt(page: Any) -> None:
    page.evaluate(f"{PANEL}.sessionContext.session.kernel.interrupt()")


def test_long_runs_stream_queue_and_stop(
    lab: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1400})
        page.goto(f"{lab.url}lab/tree/{NAME}?token={lab.token}", timeout=90_000)
        page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
        run(page, "setup")
        wait_until(lambda: cell(page, "setup")["count"] and idle(page), "set up")

        # 1. The agent runs a cell printing for 20 s: its lines show while the agent waits.
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "train", "timeout": 60}),
            Reply.text("Trained for 20 epochs."),
        )
        first = len(fake_api.requests)
        run(page, "agent")
        seen: list[str] = []
        states: list[Any] = []
        while "Trained for 20 epochs." not in cell(page, "agent")["text"]:
            now = cell(page, "train")
            states.append((now["prompt"], now["text"][-20:], cell(page, "agent")["text"][-60:]))
            if now["prompt"] == "[*]:" and now["text"] and (not seen or seen[-1] != now["text"]):
                seen.append(now["text"])
                if "epoch 5" in now["text"] and not (tmp_path / "streaming.png").exists():
                    screenshot(page, "streaming", tmp_path)
            assert len(fake_api.requests) < first + 3
            time.sleep(0.2)
        assert len(seen) >= 5, (
            states,
            cell(page, "agent"),
            cell(page, "train"),
        )  # the output grew while it ran, not once at its end
        assert "epoch 19" not in seen[0] and "epoch 19" in cell(page, "train")["text"]
        assert len(fake_api.requests) == first + 2  # the agent waited for the run

        # 2. A run queued for after the turn runs as a normal cell; a new agent cell goes on.
        wait_until(lambda: idle(page), "idle")
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "short", "when": "after_turn"}),
            Reply.text("The short run is queued."),
            Reply.text("The short run printed three steps."),
        )
        before = len(page.evaluate(SOURCES))
        run(page, "agent")
        added = wait_until(
            lambda: next(
                (c for c in page.evaluate(SOURCES) if c[1].startswith("%%agent --after short")),
                None,
            ),
            "the agent cell that goes on",
            60,
        )
        wait_until(
            lambda: "printed three steps" in cell(page, added[0])["text"] and idle(page),
            "the conversation went on",
        )
        ids = [c[0] for c in page.evaluate(SOURCES)]
        assert len(ids) == before + 1 and ids.index(added[0]) == ids.index("agent") + 1
        assert "step 2" in cell(page, "short")["text"]
        prompt = fake_api.requests[-1].body["messages"][-1]["content"][0]["text"]
        assert "Cell short (In [" in prompt and "step 2" in prompt
        screenshot(page, "queued-went-on", tmp_path)

        # 3a. An interrupt stops a run the agent waits on, and the agent.
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "train"}), Reply.text("never sent")
        )
        asked = len(fake_api.requests)
        run(page, "agent")
        wait_until(lambda: started(cell(page, "train")), "the run started")
        interrupt(page)
        wait_until(lambda: idle(page), "stopped")
        assert "KeyboardInterrupt" in cell(page, "train")["text"]
        assert "interrupted" in cell(page, "agent")["text"]
        assert len(fake_api.requests) == asked + 1

        # 3b. An interrupt stops a queued run, and nothing goes on after it.
        fake_api.wait_idle()
        fake_api.replace_script(
            [
                Reply.tool_use("NotebookRun", {"cell_id": "train", "when": "after_turn"}),
                Reply.text("Queued the training again."),
            ]
        )
        asked = len(fake_api.requests)
        cells_before = len(page.evaluate(SOURCES))
        run(page, "agent")
        wait_until(lambda: started(cell(page, "train")), "the queued run started")
        interrupt(page)
        wait_until(lambda: idle(page), "stopped")
        time.sleep(3)
        assert "KeyboardInterrupt" in cell(page, "train")["text"]
        assert len(page.evaluate(SOURCES)) == cells_before  # no agent cell added
        assert len(fake_api.requests) == asked + 2 and idle(page)
        screenshot(page, "queued-interrupted", tmp_path)
