"""The agent's notebook edits in a real JupyterLab with real-time collaboration, in Chromium.

JupyterLab (from the jupyter-collaboration environment, ``$NBAGENT_RTC_ENV``) has a notebook
open in Debian's Chromium, driven by Playwright; the user types in a cell; NotebookEdit,
called in this process as the kernel would, inserts a cell and replaces another. The page
shows both at once, without a reload, and keeps the user's unsaved typing; the file the
server then saves holds both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.tools.notebook.live import LiveDocuments
from nbagent.tools.notebook.locate import LIVE
from tests.components import CHROMIUM_HOW, RTC_HOW, require
from tests.jupyterlab_server import CHROMIUM, LAB_OPTIONS, chromium, screenshot
from tests.tools.helpers import text
from tests.tools.rtc import (
    KERNEL,
    RTC_ENV,
    RTC_PYTHON,
    Server,
    has_collaboration,
    jupyter_server,
    make_notebook,
    saved_sources,
    tools_for,
)

pytestmark = pytest.mark.slow

NAME = "analysis.ipynb"

NOTEBOOK_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const context = panel && panel.context;
    if (!context || !context.isReady || !context.model.collaborative) return false;
    // With real-time collaboration the cells come only from the server's Y document: they are
    // there once the collaborative provider has synced.
    const cells = context.model.sharedModel.cells.length;
    return cells > 0 && document.querySelectorAll('.jp-Notebook .jp-Cell').length === cells;
}"""
"""True once the notebook panel is ready, synced with its room, and every cell is drawn."""

CELLS_SHOWN = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')).map(cell => {
    const rendered = cell.querySelector('.jp-RenderedMarkdown');
    if (cell.classList.contains('jp-mod-rendered') && rendered) {
        return rendered.textContent.replace('\\u00b6', '').trim();  // less the heading's anchor
    }
    const lines = cell.querySelectorAll('.jp-InputArea-editor .cm-line');
    return Array.from(lines, line => line.textContent).join('\\n');
})"""
"""The cells as the page draws them: a code cell's editor lines, a rendered markdown cell's
text."""

TYPED = "  # noted by the user"
MORE = ", typed on"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """JupyterLab with jupyter-collaboration, serving a notebook of four cells.

    The notebook names its kernel (this interpreter's), as a saved notebook does, so that
    JupyterLab starts it instead of asking which. The settings live in the server's own config
    folder (``JUPYTER_CONFIG_DIR``).
    """
    require(CHROMIUM.exists(), f"Debian's chromium at {CHROMIUM}", CHROMIUM_HOW)
    require(
        has_collaboration(RTC_PYTHON), f"a jupyter-collaboration environment at {RTC_ENV}", RTC_HOW
    )
    with jupyter_server(RTC_PYTHON, tmp_path_factory.mktemp("rtc-lab"), LAB_OPTIONS) as server:
        notebook = make_notebook()
        notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
        nbformat.write(notebook, server.root / NAME)
        # No "get notified about Jupyter news?" toast over the notebook.
        settings = server.root.parent / "config" / "lab" / "user-settings" / "@jupyterlab"
        (settings / "apputils-extension").mkdir(parents=True)
        (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        yield server


@pytest.fixture
def page(lab: Server) -> Iterator[Any]:
    """The notebook open in Chromium, its collaborative document synced."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{lab.url}lab/tree/{NAME}?token={lab.token}", timeout=90_000)
        page.wait_for_function(NOTEBOOK_READY, timeout=90_000, polling=100)
        yield page


def cells_shown(page: Any) -> list[str]:
    """The cells as the page draws them."""
    return list(page.evaluate(CELLS_SHOWN))


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30) -> float:
    """Poll until ``check()`` is truthy; return the seconds it took.

    Raises:
        AssertionError: Not within the timeout (saying what was awaited and the last value).
    """
    started = time.perf_counter()
    while not (last := check()):
        if time.perf_counter() - started > timeout:
            raise AssertionError(f"{what}: not within {timeout:g} s (last: {last!r})")
        time.sleep(0.02)
    return time.perf_counter() - started


def test_the_agents_edits_show_in_jupyterlab_at_once_and_keep_the_users_typing(
    lab: Server, page: Any, tmp_path: Path
) -> None:
    path = (lab.root / NAME).resolve()
    first = ["Analysis", "data = [1, 2, 3]", "total = sum(data)", "%%agent\nTidy up"]
    wait_until(lambda: cells_shown(page) == first, "the page shows the notebook")
    page.evaluate("window.nbagentNoReload = true")  # gone if the page ever reloads

    # The user clicks into the third cell and types at its end (not saved).
    page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(TYPED)
    wait_until(lambda: cells_shown(page)[2] == "total = sum(data)" + TYPED, "the typing shows")

    # The agent, in this process as in the kernel, reads the live document: the typing is there.
    live = LiveDocuments(runtime_dir=lab.runtime_dir)
    try:
        tools = tools_for(lab.root, path, live)
        wait_until(lambda: TYPED in text(tools["NotebookRead"]), "NotebookRead sees the typing", 10)
        assert LIVE in text(tools["NotebookRead"])
        started = time.perf_counter()
        text(
            tools["NotebookEdit"],
            edit_mode="insert",
            cell_id="load",
            new_source="mean = sum(data) / len(data)",
        )
        text(tools["NotebookEdit"], cell_id="load", new_source="data = [4, 5, 6]")
        sent = time.perf_counter() - started
    finally:
        live.close()

    # The page shows both edits at once, without a reload, and the typing is still there.
    expected = [
        "Analysis",
        "data = [4, 5, 6]",
        "mean = sum(data) / len(data)",
        "total = sum(data)" + TYPED,
        "%%agent\nTidy up",
    ]
    shown = wait_until(lambda: cells_shown(page) == expected, "the page shows the edits")
    print(f"\nedits sent in {sent * 1000:.0f} ms, shown {shown * 1000:.0f} ms later")
    assert shown < 2.0, f"the page took {shown:.1f} s to show the edits"
    assert page.evaluate("window.nbagentNoReload") is True

    # The user types on, in the same cell, and the server saves everything to the file.
    page.keyboard.type(MORE)
    expected[3] += MORE
    wait_until(lambda: cells_shown(page) == expected, "the page shows the further typing")
    on_disk = ["# Analysis", *expected[1:]]
    assert saved_sources(path, on_disk, timeout=30) == on_disk
    assert page.evaluate("window.nbagentNoReload") is True
    assert screenshot(page, "rtc-browser", tmp_path).stat().st_size > 10_000
