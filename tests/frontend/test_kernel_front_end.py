"""The notebook tools in a real kernel, with a front end on the comm (FrontEndPeer) or none.

The agent reads the notebook the user sees (typing not yet saved included), inserts a cell that
draws a matplotlib figure, runs it, and looks at it: the front end shows the cell with its
outputs and execution count, the file is never written, and the next request to the API
carries the figure as an image block. Without a front end, an edit of the kernel's notebook is
refused with what to enable, and a run shows its outputs under the ``%%agent`` cell.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.frontend_peer import FrontEndPeer
from tests.kernels import execute, kernel

pytestmark = pytest.mark.slow

PLOT = (
    "import matplotlib.pyplot as plt\n"
    "plt.plot(data, marker='o')\n"
    "plt.title('Monthly revenue')\n"
    "print('plotted', len(data))"
)


def make_notebook(path: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Sales", id="intro"),
        nbformat.v4.new_code_cell("data = [3, 1, 4, 1, 5]", id="data"),
        nbformat.v4.new_code_cell("%%agent\nPlot the data.", id="agent"),
    ]
    nbformat.write(notebook, path)
    return path


def last_result(body: dict[str, Any]) -> Any:
    """The content of the last tool_result of a request."""
    block = body["messages"][-1]["content"][-1]
    assert block["type"] == "tool_result"
    return block["content"]


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block["type"] == "text")


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    return make_notebook(tmp_path / "analysis.ipynb")


@pytest.fixture
def session(notebook: Path, fake_api: FakeAnthropicServer) -> Iterator[tuple[Any, Any]]:
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(notebook),
    }
    with kernel(env, cwd=str(notebook.parent)) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, "data = [3, 1, 4, 1, 5]").status == "ok"
        yield manager, client


def insert_then_run(fake_api: FakeAnthropicServer) -> None:
    """Script: read the notebook, insert the plot cell after 'data', run it, answer."""

    def insert(body: dict[str, Any]) -> Reply:
        return Reply.tool_use(
            "NotebookEdit",
            {"edit_mode": "insert", "cell_id": "data", "new_source": PLOT},
        )

    def run(body: dict[str, Any]) -> Reply:
        inserted = re.search(r"Inserted code cell (\S+)", result_text(last_result(body)))
        assert inserted, last_result(body)
        return Reply.tool_use("NotebookRun", {"cell_id": inserted.group(1)})

    fake_api.enqueue(Reply.tool_use("NotebookRead", {}), insert, run, Reply.text("Plotted."))


def test_the_agent_inserts_runs_and_sees_a_figure_in_the_notebook_the_user_sees(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    saved = notebook.read_bytes()
    peer = FrontEndPeer(manager, notebook)
    try:
        peer.type("data", "\n# typed, not saved")
        insert_then_run(fake_api)
        asked: list[str] = []
        run = execute(
            client,
            "%%agent\nPlot the data.",
            stdin=lambda prompt: asked.append(prompt) or "y",
            cell_id="agent",
        )
        assert run.status == "ok", run.error
    finally:
        peer.close()
    requests = [r.body for r in fake_api.requests]
    read = result_text(last_result(requests[1]))
    assert "Read from the notebook as TestLab 1.0 shows it (with changes not yet saved)" in read
    assert "# typed, not saved" in read
    assert len(asked) == 2 and "Allow NotebookEdit" in asked[0]
    assert "Run cell" in asked[1] and PLOT in asked[1]  # the question shows the code
    cells = peer.notebook.cells
    assert [c.id for c in cells][:2] == ["intro", "data"] and cells[2].source == PLOT
    plot = cells[2]
    assert plot.execution_count == run.execution_count  # the %%agent cell's own count
    kinds = [o.output_type for o in plot.outputs]
    assert "stream" in kinds and "display_data" in kinds
    assert plot.outputs[kinds.index("stream")].text == "plotted 5\n"
    assert "image/png" in plot.outputs[kinds.index("display_data")].data
    assert peer.runs == [(plot.id, True), (plot.id, False)]
    assert peer.statuses == 0  # the answers never made the kernel look idle
    ran = last_result(requests[3])
    assert isinstance(ran, list)
    text = result_text(ran)
    assert f"Ran cell {plot.id} (In [{plot.execution_count}])" in text
    assert "Its outputs are in the cell, in the notebook." in text
    assert "[image 1: image/png" in text
    images = [b for b in ran if b["type"] == "image"]
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"
    assert notebook.read_bytes() == saved  # the file behind the front end was never written
    # The figure and the print went to the plot cell, not to the %%agent cell's own outputs.
    assert not any("image/png" in o.get("data", {}) for o in run.outputs)
    assert not any(o.get("text") == "plotted 5\n" for o in run.outputs)


def test_without_a_front_end_an_edit_of_the_open_notebook_is_refused(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    _, client = session
    saved = notebook.read_bytes()
    execute(client, "%config NbAgent.permission_mode = 'acceptEdits'")
    fake_api.enqueue(
        Reply.tool_use("NotebookRead", {}),
        Reply.tool_use("NotebookEdit", {"edit_mode": "insert", "new_source": "x = 1"}),
        Reply.text("I could not edit it."),
    )
    run = execute(client, "%%agent\nAdd a cell.", cell_id="agent")
    assert run.status == "ok", run.error
    requests = [r.body for r in fake_api.requests]
    read = result_text(last_result(requests[1]))
    assert "[Read from the file, saved" in read and "not saved is not included" in read
    refused = requests[2]["messages"][-1]["content"][-1]
    assert refused["is_error"] is True
    assert "was not changed: it is open in a front end that nbagent cannot reach" in (
        result_text(refused["content"])
    )
    assert notebook.read_bytes() == saved


def test_without_a_front_end_a_run_shows_its_outputs_under_the_agent_cell(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    _, client = session
    fake_api.enqueue(
        Reply.tool_use("NotebookRun", {"cell_id": "data"}),
        Reply.text("Ran it."),
    )
    execute(client, "%config NbAgent.permission_mode = 'bypassPermissions'")
    execute(client, "del data")
    run = execute(client, "%%agent\nRun the data cell.", cell_id="agent")
    assert run.status == "ok", run.error
    said = result_text(last_result(fake_api.requests[1].body))
    assert "Ran cell data" in said and "finished" in said
    assert "Its outputs are shown below the %%agent cell" in said
    assert execute(client, "print(data)").text.strip() == "[3, 1, 4, 1, 5]"


def test_a_front_end_without_subshells_is_not_used(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook, subshell=False)
    try:
        fake_api.enqueue(Reply.tool_use("NotebookRead", {}), Reply.text("Read."))
        run = execute(client, "%%agent\nRead it.", cell_id="agent")
        assert run.status == "ok", run.error
    finally:
        peer.close()
    read = result_text(last_result(fake_api.requests[1].body))
    assert "[Read from the file, saved" in read
    assert peer.requests == []
