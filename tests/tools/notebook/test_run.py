"""NotebookRun and RunCode's figures in a real kernel, with a front end on the comm.

Bad input gets a clear error and loses nothing: an unknown cell, a markdown cell, the agent's
own cell, a cell that raises (the cell shows the error as Jupyter would, the model gets the
traceback), an endless loop stopped with Ctrl-C, an output type the API cannot take.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.frontend.test_kernel_front_end import last_result, result_text
from tests.frontend_peer import FrontEndPeer
from tests.kernels import execute, kernel

pytestmark = pytest.mark.slow

CELLS = {
    "notes": ("markdown", "Some notes."),
    "boom": ("code", "print('about to fail')\n1 / 0"),
    "spin": (
        "code",
        "import time\nopen('spinning', 'w').close()\nwhile True:\n    time.sleep(0.01)",
    ),
    "pdf": (
        "code",
        "from IPython.display import display\ndisplay({'application/pdf': 'JVBERi0='}, raw=True)",
    ),
    "agent": ("code", "%%agent\nRun things."),
}


@pytest.fixture
def world(tmp_path: Path, fake_api: FakeAnthropicServer) -> Iterator[tuple[Any, Any, FrontEndPeer]]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell(source, id=cell_id)
        if kind == "markdown"
        else nbformat.v4.new_code_cell(source, id=cell_id)
        for cell_id, (kind, source) in CELLS.items()
    ]
    path = tmp_path / "runs.ipynb"
    nbformat.write(notebook, path)
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(path),
    }
    with kernel(env, cwd=str(tmp_path)) as (manager, client):
        execute(client, "%load_ext nbagent")
        execute(client, "%config NbAgent.permission_mode = 'bypassPermissions'")
        peer = FrontEndPeer(manager, path)
        try:
            yield manager, client, peer
        finally:
            peer.close()


def results(fake_api: FakeAnthropicServer) -> list[Any]:
    """Each tool result the model got, in order."""
    return [last_result(r.body) for r in fake_api.requests[1:]]


def test_cells_that_cannot_be_run_say_why(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    _, client, peer = world
    fake_api.enqueue(
        Reply.tool_use("NotebookRun", {"cell_id": "nope"}),
        Reply.tool_use("NotebookRun", {"cell_id": "notes"}),
        Reply.tool_use("NotebookRun", {"cell_id": "agent"}),
        Reply.text("Done."),
    )
    assert execute(client, "%%agent\nRun things.", cell_id="agent").status == "ok"
    unknown, markdown, agent = (result_text(r) for r in results(fake_api))
    assert unknown.startswith("No cell with id 'nope' in runs.ipynb. Its cell ids are: notes,")
    assert markdown.startswith("Cell notes is a markdown cell; NotebookRun runs code cells.")
    assert (
        agent == "Cell agent is the cell running this agent: NotebookRun does not run agent cells."
    )
    assert peer.runs == []


def test_a_cell_that_raises_shows_the_error_and_the_model_gets_the_traceback(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    _, client, peer = world
    fake_api.enqueue(Reply.tool_use("NotebookRun", {"cell_id": "boom"}), Reply.text("Broke."))
    assert execute(client, "%%agent\nRun boom.", cell_id="agent").status == "ok"
    block = fake_api.requests[1].body["messages"][-1]["content"][-1]
    said = result_text(block["content"])
    assert block["is_error"] is True
    assert "raised ZeroDivisionError" in said and "about to fail" in said
    assert "ZeroDivisionError: division by zero" in said and "\x1b[" not in said
    outputs = peer.cell("boom").outputs
    assert [o.output_type for o in outputs] == ["stream", "error"]
    assert outputs[1].ename == "ZeroDivisionError"
    assert execute(client, "print('still fine')").text.strip() == "still fine"


def test_ctrl_c_stops_a_running_cell_and_the_agent(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    manager, client, peer = world
    fake_api.enqueue(Reply.tool_use("NotebookRun", {"cell_id": "spin"}), Reply.text("unused"))

    def interrupt_once_it_runs() -> None:
        for _ in range(3000):  # the cell creates the file, then loops until interrupted
            if flag.exists():
                manager.interrupt_kernel()
                return
            time.sleep(0.01)

    flag = tmp_path / "spinning"

    interrupter = threading.Thread(target=interrupt_once_it_runs)
    interrupter.start()
    run = execute(client, "%%agent -o result\nSpin.", cell_id="agent")
    interrupter.join()
    assert run.status == "ok", run.error
    assert execute(client, "print(result.stop_reason)").text.strip() == "interrupted"
    card = re.search(r"interrupted after (\d+\.\d) s", run.text)  # how long it ran, not 0.0
    assert card and float(card.group(1)) > 0, run.text
    assert peer.runs == [("spin", True), ("spin", False)]
    assert peer.cell("spin").outputs[-1].ename == "KeyboardInterrupt"
    assert execute(client, "print('usable')").text.strip() == "usable"


def test_an_output_the_api_cannot_take_is_named(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    _, client, peer = world
    fake_api.enqueue(Reply.tool_use("NotebookRun", {"cell_id": "pdf"}), Reply.text("ok"))
    assert execute(client, "%%agent\nRun pdf.", cell_id="agent").status == "ok"
    said = result_text(results(fake_api)[0])
    assert "[application/pdf output not sent: the API takes PNG, JPEG, GIF, WebP]" in said
    assert "application/pdf" in peer.cell("pdf").outputs[0].data


def test_run_code_returns_the_figures_its_code_draws(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    _, client, _ = world
    code = "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [3, 5])\nprint('drawn')"
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:RunCode"}),
        Reply.tool_use("RunCode", {"code": code}),
        Reply.text("A bar chart."),
    )
    run = execute(client, "%%agent\nDraw.", cell_id="agent")
    assert run.status == "ok", run.error
    content = results(fake_api)[1]
    assert isinstance(content, list)
    assert "stdout:\ndrawn" in result_text(content)
    assert "displayed:\n[image 1: image/png" in result_text(content)
    assert [b["source"]["media_type"] for b in content if b["type"] == "image"] == ["image/png"]
    assert any("image/png" in o.get("data", {}) for o in run.outputs)  # the user sees it too


def test_a_figure_is_whole_when_the_front_end_answers_while_it_is_drawn(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    """The front end's answer to "the cell runs" comes while the cell draws its figure; an
    answer must not flush (show and close) the figure half drawn."""
    _, client, peer = world
    code = (
        "import matplotlib.pyplot as plt\n"
        "from nbagent.jupyter.session import Session\n"
        "plt.figure(figsize=(4, 3))\n"
        "channel = Session.of(get_ipython()).frontend\n"
        "channel.request(channel.front_end(), 'read')  # the front end answers meanwhile\n"
        "plt.plot([1, 3, 2]);"
    )

    def run_inserted(body: dict[str, Any]) -> Reply:
        inserted = result_text(last_result(body)).split()[3]
        return Reply.tool_use("NotebookRun", {"cell_id": inserted})

    fake_api.enqueue(
        Reply.tool_use("NotebookRead", {"overview": True}),
        Reply.tool_use(
            "NotebookEdit", {"edit_mode": "insert", "cell_id": "notes", "new_source": code}
        ),
        run_inserted,
        Reply.text("ok"),
    )
    run = execute(client, "%%agent\nDraw.", cell_id="agent")
    assert run.status == "ok", run.error
    ran = next((c for c in peer.notebook.cells if c.source == code), None)
    assert ran is not None, [result_text(r) for r in results(fake_api)]
    figures = [o for o in ran.outputs if o.output_type == "display_data"]
    assert len(figures) == 1 and "image/png" in figures[0].data
    assert "with 1 Axes" in figures[0].data["text/plain"]
    said = result_text(results(fake_api)[2])
    assert said.count("[image ") == 1


def test_the_summary_says_how_a_run_ended(world: tuple[Any, Any, FrontEndPeer]) -> None:
    _, client, _ = world
    code = (
        "import json, time, nbagent\n"
        "while 'NotebookRun' not in nbagent.registry:  # built beside the first cell\n"
        "    time.sleep(0.05)\n"
        "run = nbagent.registry.get('NotebookRun')\n"
        "print(json.dumps([run.call({'cell_id': c}).metadata['summary'] for c in ('boom', 'pdf')]))"
    )
    ran = execute(client, code, cell_id="agent")
    assert ran.status == "ok", ran.error
    said = ran.text.strip().splitlines()[-1]  # after the outputs the runs showed
    assert json.loads(said) == ["raised ZeroDivisionError", "finished, 1 output"]
