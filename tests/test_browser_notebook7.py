"""Notebook 7.6: a new notebook, named after its first save, read and edited as the page shows it.

In Notebook 7.6 (the project's environment's, beside its JupyterLab) in Debian's Chromium, a
person makes a new notebook from the file browser's New menu: it opens in a tab of its own as
``Untitled.ipynb``, whose file has one empty cell. They type ``%load_ext nbagent``, some data
and an ``%%agent`` cell: the model reads the notebook as the page shows it and inserts a cell
after the data, which appears in the page; the file is unchanged. Their first save keeps the
name (Notebook 7.6 asks for none there, unlike JupyterLab), and they rename the notebook as
Notebook has them do, by clicking its name at the top: ``sales.ipynb``. The next ``%%agent``
cell reads ``sales.ipynb`` as the page shows it. The person saves and reloads the page: it shows
the same cells and answers, the file holds them, no ``Untitled.ipynb`` is left, and an
``%%agent`` cell after the reload reads ``sales.ipynb`` through the page again. The page's
console has no error of the extension. Screenshots of each step.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.components import require
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser_permissions import (
    NOTEBOOK_READY,
    SOURCES,
    cell,
    press_in_cell,
    type_cells,
    wait_for_text,
    wait_until_ran,
)
from tests.test_browser_rename import DATA, SETUP, add_cell_below, insert_after_data, results
from tests.test_browser_versions import Console
from tests.tools.rtc import Server, jupyter_server

pytestmark = pytest.mark.slow

FIRST = "%%agent\nAdd a cell that sums the data."
TOTAL = "total = sum(data)"
ADDED = "The total is in the cell after the data."
SECOND = "%%agent\nWhat is in this notebook now?"
FIVE = "Five cells: the total is computed after the data."
THIRD = "%%agent\nAnd after the reload?"
SIX = "Six cells, as before the reload."
PATH = "() => window.jupyterapp.shell.currentWidget.context.path"
"""The path of the notebook the page shows."""


def notebook_version() -> str:
    """The version of Notebook in this environment ("" when it has none)."""
    try:
        return version("notebook")
    except PackageNotFoundError:
        return ""


NOTEBOOK = notebook_version()


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, fake_api: FakeAnthropicServer
) -> Iterator[Server]:
    """A Jupyter server with Notebook 7.6 and this checkout's extension, no autosave (a file
    changes only when the person saves)."""
    release = tuple(int(part) for part in NOTEBOOK.split(".")[:2] if part.isdigit())
    require(release >= (7, 6), "Notebook 7.6 in this environment", "pip install -e '.[test]'")
    base = tmp_path_factory.mktemp("notebook7")
    python = lab_setup("plain", base)
    settings = base / "config" / "lab" / "user-settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    options = (*LAB_OPTIONS, "--JupyterNotebookApp.expose_app_in_browser=True")
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with jupyter_server(python, base, options, env=env) as running:
        yield running


def new_notebook(browser: Any, server: Server) -> Any:
    """Open Notebook's file browser and make a notebook with the test kernel from its New menu,
    as a person does; return the notebook's tab once its kernel is idle."""
    tree = browser.new_page(viewport={"width": 1200, "height": 900})
    tree.goto(f"{server.url}tree?token={server.token}", timeout=90_000)
    tree.get_by_text("New", exact=True).click()
    with tree.expect_popup() as opened:
        tree.locator(".lm-Menu-item", has_text="nbagent test").click()
    page = opened.value
    page.set_viewport_size({"width": 1200, "height": 900})
    page.wait_for_function(NOTEBOOK_READY, timeout=90_000, polling=100)
    return page


def save(page: Any, name: str) -> None:
    """Save as a person does (Ctrl+S) and wait until the notebook is ``name``, saved."""
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "name => { const panel = window.jupyterapp.shell.currentWidget;"
        " return panel.context.path === name && !panel.context.model.dirty; }",
        arg=name,
    )


def rename(page: Any, name: str, folder: Path) -> None:
    """Rename the notebook as a person does in Notebook: click its name at the top of the page
    and give the new one."""
    page.locator("#jp-title h1").click()
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text("Rename File").wait_for()
    dialog.locator("input").first.fill(name)
    assert screenshot(page, "notebook7-rename-dialog", folder).exists()
    dialog.get_by_role("button", name="Rename").click()
    page.wait_for_function(
        "name => window.jupyterapp.shell.currentWidget.context.path === name", arg=name
    )


def answer_of(page: Any, index: int) -> Any:
    """The output area of a cell, as the page shows it."""
    return cell(page, index).locator(".jp-OutputArea").first


def file_cells(path: Path) -> list[tuple[str, str]]:
    """The source of each cell of a notebook file, and its outputs as JSON text."""
    cells = json.loads(path.read_text())["cells"]
    return [("".join(c["source"]), json.dumps(c.get("outputs", []))) for c in cells]


def test_a_new_notebook_named_after_its_first_save_is_read_and_edited_through_the_page(
    server: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    shown = f"Read from the notebook as Notebook {NOTEBOOK} shows it"
    with chromium() as browser:
        page = new_notebook(browser, server)
        console = Console(page)
        assert page.evaluate(PATH) == "Untitled.ipynb"
        created = file_cells(server.root / "Untitled.ipynb")
        type_cells(page, (SETUP, DATA, FIRST))
        for index in range(2):
            press_in_cell(page, index, "Control+Enter")
            wait_until_ran(page, index)
        fake_api.wait_idle()
        first = len(fake_api.requests)
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}), insert_after_data(TOTAL), Reply.text(ADDED)
        )
        press_in_cell(page, 2, "Control+Enter")
        sources = wait_until(
            lambda: TOTAL in page.evaluate(SOURCES) and page.evaluate(SOURCES), "the new cell"
        )
        assert sources == [SETUP, DATA, TOTAL, FIRST]
        wait_until_ran(page, 3)
        wait_for_text(answer_of(page, 3), ADDED, "the first answer")
        assert screenshot(page, "notebook7-untitled-edited", tmp_path).exists()
        unsaved, inserted = results(fake_api, first)
        untitled = file_cells(server.root / "Untitled.ipynb")

        page.keyboard.press("Escape")
        save(page, "Untitled.ipynb")  # the first save asks for no name in Notebook 7.6
        asked = page.locator(".jp-Dialog").count()
        saved = file_cells(server.root / "Untitled.ipynb")
        rename(page, "sales.ipynb", tmp_path)
        url_after_rename = page.url
        title_after_rename = page.locator("#jp-title h1").inner_text()

        add_cell_below(page, 3, SECOND)
        first = len(fake_api.requests)
        fake_api.enqueue(Reply.tool_use("NotebookRead", {}), Reply.text(FIVE))
        press_in_cell(page, 4, "Control+Enter")
        wait_until_ran(page, 4)
        wait_for_text(answer_of(page, 4), FIVE, "the second answer")
        [renamed] = results(fake_api, first)
        page.keyboard.press("Escape")
        save(page, "sales.ipynb")
        assert screenshot(page, "notebook7-renamed-read", tmp_path).exists()

        page.reload()
        page.wait_for_function(NOTEBOOK_READY, timeout=90_000, polling=100)
        reloaded_path = page.evaluate(PATH)
        reloaded_title = page.locator("#jp-title h1").inner_text()
        reloaded = page.evaluate(SOURCES)
        seen = [answer_of(page, index).inner_text() for index in (3, 4)]
        assert screenshot(page, "notebook7-reloaded", tmp_path).exists()
        on_disk = file_cells(server.root / "sales.ipynb")

        add_cell_below(page, 4, THIRD)
        first = len(fake_api.requests)
        fake_api.enqueue(Reply.tool_use("NotebookRead", {}), Reply.text(SIX))
        press_in_cell(page, 5, "Control+Enter")
        wait_until_ran(page, 5)
        wait_for_text(answer_of(page, 5), SIX, "the answer after the reload")
        [after_reload] = results(fake_api, first)
        answer_of(page, 5).scroll_into_view_if_needed()
        assert screenshot(page, "notebook7-after-reload", tmp_path).exists()
        errors = console.of_the_extension()

    # Notebook made the file with one empty cell; the page showed the edit, the file stayed so.
    assert created == [("", "[]")] and untitled == created
    assert unsaved.startswith("Notebook Untitled.ipynb: 3 cells") and shown in unsaved
    assert DATA in unsaved and FIRST in unsaved
    assert inserted.startswith("Inserted code cell ") and "of Untitled.ipynb" in inserted
    assert asked == 0 and [source for source, _ in saved] == [SETUP, DATA, TOTAL, FIRST]
    assert url_after_rename.split("?")[0].endswith("/notebooks/sales.ipynb")
    assert title_after_rename == reloaded_title == "sales"
    assert renamed.startswith("Notebook sales.ipynb: 5 cells") and shown in renamed
    assert TOTAL in renamed and SECOND in renamed
    assert errors == []
    assert reloaded_path == "sales.ipynb"
    assert reloaded == [SETUP, DATA, TOTAL, FIRST, SECOND]
    assert ADDED in seen[0] and FIVE in seen[1]
    assert [source for source, _ in on_disk] == reloaded
    assert ADDED in on_disk[3][1] and FIVE in on_disk[4][1]
    assert not (server.root / "Untitled.ipynb").exists()
    assert after_reload.startswith("Notebook sales.ipynb: 6 cells") and shown in after_reload
