"""A JupyterLab older than nbagent supports is told, in the cell and to the model, what it needs.

JupyterLab 4.3 (``tests/lab_versions.UNSUPPORTED``) has no kernel subshells: nbagent's
extension says hello there (after the ``%load_ext`` cell, as its answer waits for the kernel),
and the kernel does not use it. The next ``%%agent`` cell says, once, that JupyterLab 4.3.8 is
older than nbagent supports and which versions it needs (not "install nbagent in the
environment that runs JupyterLab", which it is); the model's NotebookRead says the same, and
a new cell the model adds appears below the ``%%agent`` cell when it ends. Screenshot.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.jupyterlab_server import chromium, screenshot, wait_until
from tests.lab_versions import UNSUPPORTED
from tests.test_browser_notebook import CELLS, PANEL_READY, run_cell
from tests.test_browser_permissions import cell, wait_for_text
from tests.test_browser_versions import make_notebook, serve
from tests.tools.rtc import Server

pytestmark = pytest.mark.slow

NEEDS = (
    "JupyterLab 4.3.8 is older than nbagent supports: it needs JupyterLab 4.4 or Notebook 7.4 "
    "(or newer)"
)
BELOW = "print('added below')"


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab43(
    tmp_path_factory: pytest.TempPathFactory, fake_api: FakeAnthropicServer
) -> Iterator[Server]:
    """JupyterLab 4.3 with this checkout's extension."""
    with serve(UNSUPPORTED, tmp_path_factory.mktemp("lab43"), fake_api) as server:
        yield server


def said(fake_api: FakeAnthropicServer, first: int) -> list[str]:
    """What the model was told of each call since request ``first``."""
    results = []
    for request in fake_api.requests[first:]:
        block: Any = request.body["messages"][-1]["content"][-1]
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block["content"]
            if not isinstance(content, str):
                content = "\n".join(b["text"] for b in content if b["type"] == "text")
            results.append(content)
    return results


def test_an_older_jupyterlab_is_told_the_version_nbagent_needs(
    lab43: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    name = "old.ipynb"
    nbformat.write(make_notebook(), lab43.root / name)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        page.goto(f"{lab43.url}lab/tree/{name}?token={lab43.token}", timeout=90_000)
        page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
        run_cell(page, 0)
        run_cell(page, 1)
        fake_api.wait_idle()
        first = len(fake_api.requests)
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use("NotebookEdit", {"edit_mode": "insert", "new_source": BELOW}),
            Reply.text("JupyterLab needs an upgrade; a cell will appear below."),
        )
        run_cell(page, 2)
        cells = wait_until(
            lambda: len(page.evaluate(CELLS)) == 4 and page.evaluate(CELLS), "the new cell"
        )
        assert [source for _, source, _ in cells][3] == BELOW
        output = cell(page, 2).locator(".jp-OutputArea").first
        wait_for_text(output, "a cell will appear below", "the answer")
        shown = output.inner_text()
        output.scroll_into_view_if_needed()
        assert screenshot(page, "jupyterlab-4.3-told-what-it-needs", tmp_path).exists()
    read, inserted = said(fake_api, first)
    assert "nbagent cannot see this notebook" in shown and NEEDS in shown
    assert "install nbagent in the environment" not in shown
    assert "old.ipynb is open but nbagent cannot see it: this is its file" in read
    assert NEEDS in read and "install nbagent in the environment" not in read
    assert inserted.startswith("The new code cell (1 line) was not inserted where")
