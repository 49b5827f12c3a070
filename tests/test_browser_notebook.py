"""The agent edits and runs the notebook open in a real JupyterLab, in Debian's Chromium.

Both setups people have: plain JupyterLab, and JupyterLab with jupyter-collaboration (from
its own environment, ``$NBAGENT_RTC_ENV``). nbagent's JupyterLab extension comes from this
checkout. The user runs the set-up cells, types in a markdown cell without saving, and runs a
``%%agent`` cell; the scripted model reads the notebook, inserts a cell that draws a
matplotlib figure, runs it and answers. The page shows the new cell and its figure without a
reload; the model saw the user's unsaved typing and got the figure as an image block; a save
raises no "File Changed" dialog and the file holds the cell, its outputs and the typing.
Screenshots in the light and the dark theme; the saved notebook rendered by nbconvert.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.tools.rtc import KERNEL, RTC_ENV, Server, jupyter_server

pytestmark = pytest.mark.slow

NAME = "sales.ipynb"
TYPED = "Typed by the user, not saved."
PLOT = (
    "import matplotlib.pyplot as plt\n"
    "plt.figure(figsize=(5, 3))\n"
    "plt.plot(data, marker='o')\n"
    "plt.title('Monthly revenue')\n"
    "print('points:', len(data))"
)

PANEL_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    if (!panel || !panel.context.isReady || !kernel || kernel.status !== 'idle') return false;
    const cells = panel.content.model.cells.length;
    return cells > 0 && document.querySelectorAll('.jp-Notebook .jp-Cell').length === cells;
}"""

WATCH_STATUSES = """() => {
    window.statuses = [];
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    kernel.iopubMessage.connect((_, message) => {
        if (message.header.msg_type === 'status') {
            window.statuses.push(message.content.execution_state + ' '
                + message.parent_header.msg_type);
        }
    });
}"""
"""Record every status the kernel publishes, with the type of the message that caused it."""

CELLS = """() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells.map(
    cell => [cell.cell_type, cell.source, (cell.outputs || []).map(o => o.output_type)])"""


def make_notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext nbagent\n%config NbAgent.permission_mode = 'bypassPermissions'",
            id="setup",
        ),
        nbformat.v4.new_code_cell("data = [3, 1, 4, 1, 5, 9, 2, 6]", id="data"),
        nbformat.v4.new_markdown_cell("Notes", id="notes"),
        nbformat.v4.new_code_cell("%%agent\nPlot the data.", id="agent"),
    ]
    return notebook


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(scope="module", params=["plain", "collaboration"])
def lab(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    fake_api: FakeAnthropicServer,
) -> Iterator[Server]:
    """JupyterLab with this checkout's nbagent extension, plain or with collaboration."""
    base = tmp_path_factory.mktemp(f"lab-{request.param}")
    python = lab_setup(request.param, base)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with jupyter_server(python, base, LAB_OPTIONS, env=env) as server:
        nbformat.write(make_notebook(), server.root / NAME)
        yield server


def run_cell(page: Any, index: int, wait: bool = True) -> None:
    """Run one cell as the user does (select it, run it), and wait until it is done."""
    page.evaluate(f"window.jupyterapp.shell.currentWidget.content.activeCellIndex = {index}")
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-cell')")
    if wait:
        wait_until_ran(page, index)


def wait_until_ran(page: Any, index: int) -> None:
    """Wait until a cell has run and the kernel is idle again."""
    wait_until(
        lambda: page.evaluate(
            "() => { const panel = window.jupyterapp.shell.currentWidget;"
            f" const cell = panel.content.model.cells.get({index});"
            " return cell.executionCount !== null"
            " && panel.sessionContext.session.kernel.status === 'idle'; }"
        ),
        f"cell {index} ran",
    )


def script(fake_api: FakeAnthropicServer) -> None:
    """The model: read the notebook, insert the plot cell after 'data', run it, answer."""

    def inserted(body: dict[str, Any]) -> Reply:
        said = body["messages"][-1]["content"][-1]["content"]
        found = re.search(r"Inserted code cell (\S+)", said)
        assert found, said
        return Reply.tool_use("NotebookRun", {"cell_id": found.group(1)})

    fake_api.enqueue(
        Reply.tool_use("NotebookRead", {}),
        Reply.tool_use(
            "NotebookEdit", {"edit_mode": "insert", "cell_id": "data", "new_source": PLOT}
        ),
        inserted,
        # Delayed, so that the page can be looked at while the agent still works.
        Reply.text("The plot is in the cell below the data: revenue peaks in month 6.", delay=3),
    )


def test_the_agent_inserts_and_runs_a_figure_cell_the_user_sees(
    lab: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_api.wait_idle()
    first = len(fake_api.requests)
    path = lab.root / NAME
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1100})
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        page.goto(f"{lab.url}lab/tree/{NAME}?token={lab.token}", timeout=90_000)
        page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
        page.evaluate("window.nbagentNoReload = true")  # gone if the page ever reloads
        run_cell(page, 0)
        run_cell(page, 1)

        # The user edits the markdown cell and does not save.
        page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex = 2")
        page.evaluate("window.jupyterapp.commands.execute('notebook:enter-edit-mode')")
        page.keyboard.press("Control+End")
        page.keyboard.type("\n" + TYPED)
        wait_until(lambda: TYPED in page.evaluate(CELLS)[2][1], "the typing shows")

        # From here on: at the page's start the widgets' manager asks the kernel for its
        # widgets with a comm of its own (statuses of its comm_msg), whenever it gets to it.
        page.evaluate(WATCH_STATUSES)
        script(fake_api)
        run_cell(page, 3, wait=False)
        cells = wait_until(lambda: len(page.evaluate(CELLS)) == 5 and page.evaluate(CELLS), "5")
        assert [(kind, source.splitlines()[0]) for kind, source, _ in cells] == [
            ("code", "%load_ext nbagent"),
            ("code", "data = [3, 1, 4, 1, 5, 9, 2, 6]"),
            ("code", "import matplotlib.pyplot as plt"),
            ("markdown", "Notes"),
            ("code", "%%agent"),
        ]
        assert cells[2][1] == PLOT and cells[2][2] == ["stream", "display_data"]
        assert TYPED in cells[3][1]
        plot = page.locator(".jp-Notebook .jp-Cell").nth(2)
        plot.locator(".jp-RenderedImage img").wait_for(timeout=30_000)
        # The figure is there and the model's answer is not: the extension's answers, on their
        # subshell, made the kernel publish no status (JupyterLab would show it idle).
        statuses = page.evaluate("window.statuses")
        assert statuses and not [s for s in statuses if s.endswith("comm_msg")], statuses
        wait_until_ran(page, 4)
        assert "points: 8" in plot.locator(".jp-OutputArea").inner_text()
        agent_count = page.evaluate(
            "window.jupyterapp.shell.currentWidget.content.model.cells.get(4).executionCount"
        )
        assert plot.locator(".jp-InputPrompt").inner_text().strip() == f"[{agent_count}]:"
        answer = page.locator(".jp-Notebook .jp-Cell").nth(4).locator(".jp-OutputArea")
        wait_until(lambda: "revenue peaks in month 6" in answer.inner_text(), "the answer")
        assert page.evaluate("window.nbagentNoReload") is True
        plot.scroll_into_view_if_needed()
        assert screenshot(page, f"run-figure-{lab_kind(lab)}-light", tmp_path).exists()
        page.evaluate(
            "window.jupyterapp.commands.execute('apputils:change-theme',"
            " {theme: 'JupyterLab Dark'})"
        )
        page.wait_for_function(
            "document.body.dataset.jpThemeLight === 'false'"
            " && !document.querySelector('#jupyterlab-splash')"
        )
        assert screenshot(page, f"run-figure-{lab_kind(lab)}-dark", tmp_path).exists()

        # A save asks nothing ("File Changed" would), and the file holds what the page shows.
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        saved = wait_until(lambda: _saved_cells(path, 5), "the file holds the five cells", 30)
        assert page.locator(".jp-Dialog").count() == 0 and dialogs == []
        assert saved[2].source == PLOT and TYPED in saved[3].source
        assert [o.output_type for o in saved[2].outputs] == ["stream", "display_data"]
        assert "image/png" in saved[2].outputs[1].data
        assert page.evaluate("window.nbagentNoReload") is True

    requests = [r.body for r in fake_api.requests[first:]]
    read = requests[1]["messages"][-1]["content"][-1]["content"]
    assert TYPED in read and "Read from the notebook as JupyterLab 4" in read
    if lab_kind(lab) == "plain":  # with collaboration the server saves as the user types
        assert "shows it (with changes not yet saved)" in read
    ran = requests[3]["messages"][-1]["content"][-1]["content"]
    assert [block["type"] for block in ran] == ["text", "image"]
    assert "Its outputs are in the cell, in the notebook." in ran[0]["text"]
    html = _nbconvert(path, tmp_path)
    assert html.count("<img") >= 1 and "Monthly revenue" in html
    assert "revenue peaks in month 6" in html


def lab_kind(lab: Server) -> str:
    return "rtc" if str(RTC_ENV) in " ".join(map(str, lab.process.args)) else "plain"


def _saved_cells(path: Path, count: int) -> list[Any] | None:
    try:
        cells = nbformat.read(path, as_version=4).cells
    except ValueError:  # read in the middle of a save
        return None
    ready = len(cells) == count and len(cells[2].get("outputs", ())) == 2
    return list(cells) if ready else None


def _nbconvert(path: Path, folder: Path) -> str:
    """The saved notebook as nbconvert's HTML (kept as ``<name>.html`` beside the screenshots)."""
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(folder), path],
        check=True,
        capture_output=True,
    )
    return (folder / path.with_suffix(".html").name).read_text()
