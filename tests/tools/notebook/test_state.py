"""NotebookState in a real kernel, with a front end on the comm and JupyterLab's cellIds."""

from __future__ import annotations

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
    "intro": ("markdown", "# Analysis"),
    "load": ("code", "x = 1\nnames = ['a']"),
    "derive": ("code", "y = x + 1"),
    "broken": ("code", "1 / 0"),
    "later": ("code", "z = y * 2"),
    "agent": ("code", "%%agent\nWhat state?"),
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
    path = tmp_path / "state.ipynb"
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


def test_the_state_names_counts_outcomes_stale_and_never_run_cells(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    _, client, peer = world
    ran = {name: execute(client, CELLS[name][1], cell_id=name) for name in ("load", "derive")}
    execute(client, CELLS["broken"][1], cell_id="broken")
    peer.type("derive", "\nw = 0")  # edited after it ran: stale
    fake_api.enqueue(Reply.tool_use("NotebookState", {}), Reply.text("Seen."))
    assert execute(client, CELLS["agent"][1], cell_id="agent").status == "ok"
    said = result_text(last_result(fake_api.requests[1].body))
    lines = {line.split()[1]: line for line in said.splitlines() if line.startswith("[")}
    assert said.startswith("Kernel started ")
    assert "last error: cell broken at" in said and "ZeroDivisionError" in said
    assert "state.ipynb: Read from the notebook as TestLab 1.0 shows it" in said
    assert lines["load"].startswith(f"[1] load In [{ran['load'].execution_count}]: ok, ")
    assert "defined names (list), x (int)" in lines["load"] and "STALE" not in lines["load"]
    assert "STALE" in lines["derive"] and "defined y (int)" in lines["derive"]
    assert "ZeroDivisionError: division by zero" in lines["broken"]
    assert lines["later"] == "[4] later never ran in this kernel: 'z = y * 2'"
    assert lines["agent"] == "[5] agent %%agent cell"
    assert "intro" not in lines


def test_a_cell_the_agent_ran_is_its_own_in_the_state(
    world: tuple[Any, Any, FrontEndPeer], fake_api: FakeAnthropicServer
) -> None:
    _, client, _ = world
    execute(client, CELLS["load"][1], cell_id="load")
    execute(client, CELLS["derive"][1], cell_id="derive")
    fake_api.enqueue(
        Reply.tool_use("NotebookRun", {"cell_id": "later"}),
        Reply.tool_use("NotebookState", {}),
        Reply.text("Seen."),
    )
    agent = execute(client, CELLS["agent"][1], cell_id="agent")
    said = result_text(last_result(fake_api.requests[2].body))
    line = next(line for line in said.splitlines() if line.startswith("[4] later"))
    assert line.startswith(f"[4] later In [{agent.execution_count}], by the agent: ok, ")
    assert "defined z (int)" in line
