"""The notebook the agent works on is the one open in JupyterLab, whatever its name.

A new notebook is ``Untitled.ipynb`` until its first save, where JupyterLab asks for a name.
In a real JupyterLab with nbagent's extension, in Debian's Chromium, the user types cells
into a new notebook and runs an ``%%agent`` cell: the model reads the notebook the page shows
(its file has no cells yet). The user saves it as ``sales.ipynb`` through JupyterLab's rename
dialog, and another ``Untitled.ipynb`` appears beside it; the next ``%%agent`` cell reads and
edits ``sales.ipynb`` as the page shows it, and the other notebook is never read or written.

Without the extension (disabled, as ``jupyter labextension disable`` does), a read says that
nbagent cannot see the notebook and how to enable the extension, instead of "0 cells"; a new
cell the model adds appears below the ``%%agent`` cell when it ends (``set_next_input``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser_permissions import (
    NOTEBOOK_READY,
    SOURCES,
    cell,
    dismiss_listing_race,
    new_notebook,
    press_in_cell,
    type_cells,
    wait_for_text,
    wait_until_ran,
)
from tests.tools.rtc import Server, jupyter_server

pytestmark = pytest.mark.slow

SETUP = "%load_ext nbagent\n%config NbAgent.permission_mode = 'bypassPermissions'"
DATA = "data = [3, 1, 4]"
WHERE = (
    "from nbagent.jupyter.session import Session\n"
    "print(Session.of(get_ipython()).frontend.stated())"
)
FIRST = "%%agent\nWhat is in this notebook?"
SECOND = "%%agent\nAdd a cell that sums the data."
TOTAL = "total = sum(data)"
BELOW = "print('added below')"


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(scope="module", params=["extension", "disabled"])
def lab(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    fake_api: FakeAnthropicServer,
) -> Iterator[Server]:
    """Plain JupyterLab with this checkout's extension, enabled or disabled; no autosave (the
    new notebook's file stays as JupyterLab made it until the user saves)."""
    base = tmp_path_factory.mktemp(f"lab-{request.param}")
    python = lab_setup("plain", base)
    settings = base / "config" / "lab" / "user-settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    if request.param == "disabled":
        (base / "config" / "labconfig").mkdir(parents=True)
        disabled = {"disabledExtensions": {"nbagent-frontend": True}}
        (base / "config" / "labconfig" / "page_config.json").write_text(json.dumps(disabled))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with jupyter_server(python, base, LAB_OPTIONS, env=env) as server:
        yield server


def ready_path(page: Any) -> Any:
    """The open notebook's path once its kernel is idle (waited for: a kernel just started
    is busy for a moment now and then, answering the front end)."""
    return page.wait_for_function(NOTEBOOK_READY, timeout=90_000, polling=100).json_value()


def results(fake_api: FakeAnthropicServer, first: int) -> list[str]:
    """What the model was told of each call since request ``first``, in order."""
    said = []
    for request in fake_api.requests[first:]:
        block = request.body["messages"][-1]["content"][-1]
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block["content"]
            if not isinstance(content, str):
                content = "\n".join(b["text"] for b in content if b["type"] == "text")
            said.append(content)
    return said


def insert_after_data(source: str) -> Any:
    """The model's second step: insert a cell after the cell that defines ``data``."""

    def insert(body: dict[str, Any]) -> Reply:
        read = body["messages"][-1]["content"][-1]["content"]
        data_cell = r'<cell index="\d+" id="([^"]+)" type="code"[^>]*>\n' + re.escape(DATA)
        found = re.search(data_cell, read)
        assert found, read
        return Reply.tool_use(
            "NotebookEdit", {"edit_mode": "insert", "cell_id": found.group(1), "new_source": source}
        )

    return insert


def add_cell_below(page: Any, index: int, source: str) -> None:
    """Select a cell, add one below it (the toolbar's +) and type into it."""
    page.evaluate(
        "index => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = index;"
        " return window.jupyterapp.commands.execute('notebook:insert-cell-below'); }",
        index,
    )
    cell(page, index + 1).locator(".cm-content").click()
    page.keyboard.insert_text(source)


def save_as(page: Any, name: str, folder: Path) -> None:
    """Save as a person does (Ctrl+S); at the first save JupyterLab asks for a name."""
    page.keyboard.press("Control+s")
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text("Rename file").wait_for()
    dialog.locator("input.jp-mod-styled").first.fill(name)
    assert screenshot(page, "rename-dialog", folder).exists()
    dialog.get_by_role("button", name="Rename and Save").click()
    page.wait_for_function(
        "name => { const panel = window.jupyterapp.shell.currentWidget;"
        " return panel.context.path === name && !panel.context.model.dirty; }",
        arg=name,
    )
    dismiss_listing_race(page, name)


@pytest.mark.parametrize("lab", ["extension"], indirect=True)
def test_after_a_rename_the_agent_reads_and_edits_the_renamed_notebook_never_the_old_name(
    lab: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    with chromium() as browser:
        page = new_notebook(browser, lab, "nbagent test")
        assert ready_path(page) == "Untitled.ipynb"
        type_cells(page, (SETUP, DATA, WHERE, FIRST))
        for index in range(3):
            press_in_cell(page, index, "Control+Enter")
            wait_until_ran(page, index)
        fake_api.wait_idle()
        first = len(fake_api.requests)
        fake_api.enqueue(Reply.tool_use("NotebookRead", {}), Reply.text("Four cells."))
        press_in_cell(page, 3, "Control+Enter")
        wait_until_ran(page, 3)
        wait_for_text(cell(page, 3).locator(".jp-OutputArea").first, "Four cells.", "answer")
        [unsaved] = results(fake_api, first)

        save_as(page, "sales.ipynb", tmp_path)
        # A new notebook takes the free name (as File > New > Notebook would make it).
        other = nbformat.v4.new_notebook()
        other.cells = [nbformat.v4.new_markdown_cell("# Unrelated", id="unrelated")]
        lab.call("PUT", "api/contents/Untitled.ipynb", {"type": "notebook", "content": other})
        unrelated = (lab.root / "Untitled.ipynb").read_bytes()
        # The extension told the kernel the new path as it was renamed (no cell ran since).
        press_in_cell(page, 2, "Control+Enter")
        wait_until_ran(page, 2)
        where = cell(page, 2).locator(".jp-OutputArea").first
        wait_for_text(where, "path='sales.ipynb'", "the kernel knows the new path")

        add_cell_below(page, 3, SECOND)
        first = len(fake_api.requests)
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            insert_after_data(TOTAL),
            Reply.text("The total is in the cell after the data.", delay=2),
        )
        press_in_cell(page, 4, "Control+Enter")
        sources = wait_until(
            lambda: TOTAL in page.evaluate(SOURCES) and page.evaluate(SOURCES), "the new cell"
        )
        assert sources == [SETUP, DATA, TOTAL, WHERE, FIRST, SECOND]
        cell(page, 2).scroll_into_view_if_needed()
        assert screenshot(page, "renamed-edited", tmp_path).exists()
        wait_until_ran(page, 5)
        answer = cell(page, 5).locator(".jp-OutputArea").first
        wait_for_text(answer, "The total is in the cell after the data.", "the answer")
        answer.scroll_into_view_if_needed()
        assert screenshot(page, "renamed-answered", tmp_path).exists()
        read, inserted = results(fake_api, first)

    assert unsaved.startswith("Notebook Untitled.ipynb: 4 cells")
    assert "Read from the notebook as JupyterLab 4" in unsaved and DATA in unsaved
    assert json.loads((lab.root / "sales.ipynb").read_text())["cells"]  # saved since
    assert read.startswith("Notebook sales.ipynb: 5 cells") and "Unrelated" not in read
    assert "Read from the notebook as JupyterLab 4" in read and SECOND in read
    assert inserted.startswith("Inserted code cell ") and "of sales.ipynb" in inserted
    assert (lab.root / "Untitled.ipynb").read_bytes() == unrelated


@pytest.mark.parametrize("lab", ["disabled"], indirect=True)
def test_without_the_extension_a_read_says_so_and_a_new_cell_appears_below_the_agent_cell(
    lab: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    with chromium() as browser:
        page = new_notebook(browser, lab, "nbagent test")
        assert ready_path(page) == "Untitled.ipynb"
        type_cells(page, (SETUP, DATA, FIRST))
        for index in range(2):
            press_in_cell(page, index, "Control+Enter")
            wait_until_ran(page, index)
        fake_api.wait_idle()
        first = len(fake_api.requests)
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use("NotebookEdit", {"edit_mode": "insert", "new_source": BELOW}),
            Reply.text("A cell will appear below."),
        )
        press_in_cell(page, 2, "Control+Enter")
        wait_until_ran(page, 2)
        sources = wait_until(
            lambda: len(page.evaluate(SOURCES)) == 4 and page.evaluate(SOURCES), "the new cell"
        )
        assert sources == [SETUP, DATA, FIRST, BELOW]
        output = cell(page, 2).locator(".jp-OutputArea").first
        wait_for_text(output, "A cell will appear below.", "the answer")
        output.scroll_into_view_if_needed()
        assert screenshot(page, "no-extension", tmp_path).exists()
        read, inserted = results(fake_api, first)

    assert read.startswith("Untitled.ipynb is open but nbagent cannot see it, and its file (saved ")
    assert "has no cells: what the notebook shows has not been saved." in read
    assert "No front end with nbagent's extension answered" in read
    assert "`jupyter labextension enable nbagent-frontend`" in read and "0 cells" not in read
    assert inserted.startswith("The new code cell (1 line) was not inserted where the notebook")
    assert "(not at the top, as asked" in inserted
