"""The notebook tools in a real kernel, with a front end on the comm (FrontEndPeer) or none.

The agent reads the notebook the user sees (typing not yet saved included), inserts a cell that
draws a matplotlib figure, runs it, and looks at it: the front end shows the cell with its
outputs and execution count, the file is never written, and the next request to the API
carries the figure as an image block. The notebook is the one the front end shows: after a
rename, the new name (never an unrelated notebook that took the old one). Without a front end,
a read says that nbagent cannot see the notebook and what to enable, a new cell goes below the
``%%agent`` cell in the execute reply (``set_next_input``), other edits are refused before the
user is asked, and a run shows its outputs under the ``%%agent`` cell. A front end too old for
nbagent is told, in the cell and to the model, which version it needs.
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
    # Each question shows the code, then what the call would do.
    assert len(asked) == 2
    assert asked[0].startswith(f"{PLOT}\n\nAllow NotebookEdit: insert a code cell after cell data")
    assert asked[1].startswith(f"{PLOT}\n\nAllow NotebookRun: run cell ")
    cells = peer.notebook.cells
    assert [c.id for c in cells][:2] == ["intro", "data"] and cells[2].source == PLOT
    plot = cells[2]
    assert plot.execution_count == run.execution_count  # the %%agent cell's own count
    kinds = [o.output_type for o in plot.outputs]
    assert "stream" in kinds and "display_data" in kinds
    assert plot.outputs[kinds.index("stream")].text == "plotted 5\n"
    assert "image/png" in plot.outputs[kinds.index("display_data")].data
    # shown running (its outputs streamed in as they came), then finished, once
    assert peer.runs[0] == (plot.id, True) and peer.runs[-1] == (plot.id, False)
    assert set(peer.runs[:-1]) == {(plot.id, True)}
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


def test_the_agent_replaces_a_cell_the_user_sees_once_asked_with_its_diff(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook)
    try:
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use("NotebookEdit", {"cell_id": "data", "new_source": "data = [2, 7]"}),
            Reply.text("Replaced."),
        )
        asked: list[str] = []
        run = execute(
            client,
            "%%agent\nUse other data.",
            stdin=lambda prompt: asked.append(prompt) or "y",
            cell_id="agent",
        )
        assert run.status == "ok", run.error
    finally:
        peer.close()
    assert len(asked) == 1 and asked[0].startswith(
        "@@ -1 +1 @@\n-data = [3, 1, 4, 1, 5]\n+data = [2, 7]\n\n"
        "Allow NotebookEdit: replace cell data in analysis.ipynb?"
    )
    said = result_text(last_result(fake_api.requests[-1].body))
    assert said.startswith("Replaced cell data in analysis.ipynb (code, 1 line).")
    assert [c.source for c in peer.notebook.cells] == [
        "# Sales",
        "data = [2, 7]",
        "%%agent\nPlot the data.",
    ]


def test_without_a_front_end_a_new_cell_goes_below_the_agent_cell_and_other_edits_are_refused(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    _, client = session
    saved = notebook.read_bytes()
    fake_api.enqueue(
        Reply.tool_use("NotebookRead", {}),
        Reply.tool_use("NotebookEdit", {"cell_id": "data", "new_source": "data = [0]"}),
        Reply.tool_use(
            "NotebookEdit", {"edit_mode": "insert", "cell_id": "data", "new_source": "x = 1"}
        ),
        Reply.tool_use("NotebookEdit", {"edit_mode": "insert", "new_source": "y = 2"}),
        Reply.text("A cell with x = 1 appears below."),
    )
    asked: list[str] = []
    run = execute(
        client,
        "%%agent\nAdd a cell.",
        stdin=lambda prompt: asked.append(prompt) or "y",
        cell_id="agent",
    )
    assert run.status == "ok", run.error
    said = [result_text(last_result(r.body)) for r in fake_api.requests[1:]]
    assert "analysis.ipynb is open but nbagent cannot see it: this is its file, saved" in said[0]
    assert "`jupyter labextension enable nbagent-frontend`" in said[0]
    assert said[1].startswith("analysis.ipynb was not changed: it is open, but nbagent cannot")
    assert said[1].endswith(
        "Only a new code cell can be added to a notebook nbagent cannot see: NotebookEdit with "
        "edit_mode insert puts it below the %%agent cell, where it appears when this cell ends."
    )
    assert said[2].startswith(
        "The new code cell (1 line) was not inserted where the notebook is open: nbagent cannot "
        "see it there. It was handed to the front end the way Jupyter's protocol allows "
        "(set_next_input): it appears directly below the %%agent cell when this cell finishes "
        "(not after cell data, as asked: below the %%agent cell is the only place it can go)"
    )
    assert "It has not run, and its id is not known" in said[2]
    assert said[3].startswith("The cell was not added: one new cell already waits to appear")
    # Only the insert that could be made was asked about; the others were refused first.
    assert len(asked) == 1 and "Allow NotebookEdit" in asked[0]
    assert run.payload == [{"source": "set_next_input", "text": "x = 1", "replace": False}]
    assert notebook.read_bytes() == saved
    assert execute(client, "1 + 1").payload == []  # the payload went with its own cell


def test_the_notebook_renamed_in_the_front_end_is_read_and_edited_never_its_old_name(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    untitled = make_notebook(tmp_path / "Untitled.ipynb")
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(untitled),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    with kernel(env, cwd=str(tmp_path)) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        peer = FrontEndPeer(manager, untitled)
        try:
            # The user saves the new notebook under a name; a new notebook takes the old one.
            renamed = untitled.rename(tmp_path / "sales.ipynb")
            other = nbformat.v4.new_notebook()
            other.cells = [nbformat.v4.new_markdown_cell("# Unrelated", id="unrelated")]
            nbformat.write(other, untitled)
            unrelated = untitled.read_bytes()
            peer.rename("sales.ipynb")
            fake_api.enqueue(
                Reply.tool_use("NotebookRead", {}),
                Reply.tool_use(
                    "NotebookEdit",
                    {"edit_mode": "insert", "cell_id": "data", "new_source": "total = 1"},
                ),
                Reply.text("Done."),
            )
            execute(client, "%config NbAgent.permission_mode = 'acceptEdits'")
            run = execute(client, "%%agent\nAdd a total.", cell_id="agent")
            assert run.status == "ok", run.error
        finally:
            peer.close()
        said = [result_text(last_result(r.body)) for r in fake_api.requests[1:]]
        assert said[0].startswith("Notebook sales.ipynb: 3 cells")
        assert "Read from the notebook as TestLab 1.0 shows it" in said[0]
        assert "Unrelated" not in said[0]
        assert said[1].startswith("Inserted code cell ") and "of sales.ipynb" in said[1]
        assert [c.source for c in peer.notebook.cells][2] == "total = 1"
        # The front end is gone: its notebook's file is read, with why; never the old name's.
        fake_api.enqueue(Reply.tool_use("NotebookRead", {}), Reply.text("Read."))
        run = execute(client, "%%agent\nRead it.", cell_id="agent")
        assert run.status == "ok", run.error
        read = result_text(last_result(fake_api.requests[-1].body))
        assert read.startswith("Notebook sales.ipynb: 3 cells")
        assert "sales.ipynb is open but nbagent cannot see it" in read
        assert "TestLab 1.0 showed this notebook before but did not answer now" in read
        assert "Unrelated" not in read
        assert untitled.read_bytes() == unrelated and renamed.exists()


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


def test_a_front_end_too_old_is_told_in_the_cell_and_to_the_model_what_it_needs(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    old = {"app": "JupyterLab", "version": "4.2.5", "extension": "0.2.0"}
    peer = FrontEndPeer(manager, notebook, subshell=False, versions=old)
    try:
        # As at %load_ext: the old front end's hello reaches the kernel after the cell.
        reopen = (
            "from nbagent.jupyter.session import Session\nSession.of(get_ipython()).frontend.open()"
        )
        assert execute(client, reopen).status == "ok"
        fake_api.enqueue(Reply.tool_use("NotebookRead", {}), Reply.text("Read."))
        run = execute(client, "%%agent\nRead it.", cell_id="agent")
        assert run.status == "ok", run.error
        fake_api.enqueue(Reply.text("Again."))
        again = execute(client, "%%agent\nAgain.", cell_id="agent")
    finally:
        peer.close()
    needs = "it needs JupyterLab 4.4 or Notebook 7.4 (or newer)"
    assert "nbagent cannot see this notebook" in run.text
    assert "JupyterLab 4.2.5 is older than nbagent supports" in run.text and needs in run.text
    assert "(`pip install -U 'jupyterlab>=4.4'`)" in run.text  # the command as code
    assert "nbagent cannot see this notebook" not in again.text  # said once
    read = result_text(last_result(fake_api.requests[1].body))
    assert "analysis.ipynb is open but nbagent cannot see it" in read and needs in read
    assert "install nbagent in the environment" not in read
    assert peer.requests == []
