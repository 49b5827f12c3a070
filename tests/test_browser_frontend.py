"""What the extension says on its comm, and the console after a reload, in a real JupyterLab.

JupyterLab (the project's, with this checkout's extension) in Debian's Chromium. Its ``hello``
names JupyterLab, its version and the extension's; a rename or a move of the notebook is said
(``path``, on the same subshell, with the same client id) and closing the tab says ``bye``.
After a reload the kernel closes the comms it opened for the page before: JupyterLab logged
"Comm not found for comm id …" for each, until the extension took in, at connecting, the comms
the kernel already had; now the console has none of it and the agent still edits the notebook.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jupyterlab
import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser_notebook import CELLS, PANEL_READY, run_cell, wait_until_ran
from tests.test_browser_versions import EXTENSION_VERSION, RECORD, Console, make_notebook
from tests.tools.rtc import Server, jupyter_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, fake_api: FakeAnthropicServer
) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("lab")
    python = lab_setup("plain", base)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with jupyter_server(python, base, LAB_OPTIONS, env=env) as server:
        yield server


def open_notebook(browser: Any, lab: Server, name: str) -> tuple[Any, Console]:
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    console = Console(page)
    page.goto(f"{lab.url}lab/tree/{name}?token={lab.token}", timeout=90_000)
    ready(page)
    return page, console


def ready(page: Any) -> None:
    page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
    page.evaluate(RECORD)


def sent(page: Any, op: str) -> list[dict[str, Any]]:
    return [said for said in page.evaluate("window.nbagentSent") if said["data"]["op"] == op]


def agent_answers(page: Any, fake_api: FakeAnthropicServer, *replies: Any) -> None:
    """Run the ``%%agent`` cell (the last one) with the model's replies; wait for its end."""
    fake_api.wait_idle()
    fake_api.enqueue(*replies)
    last = page.evaluate("window.jupyterapp.shell.currentWidget.content.model.cells.length") - 1
    before = page.evaluate(
        f"window.jupyterapp.shell.currentWidget.content.model.cells.get({last}).executionCount"
    )
    run_cell(page, last, wait=False)
    wait_until(
        lambda: page.evaluate(
            "() => { const panel = window.jupyterapp.shell.currentWidget;"
            " const cells = panel.content.model.cells;"
            " const cell = cells.get(cells.length - 1);"
            f" return cell.executionCount !== null && cell.executionCount !== {before or 'null'}"
            " && panel.sessionContext.session.kernel.status === 'idle'; }"
        ),
        "the agent's cell ran",
    )


def test_a_renamed_or_moved_notebook_is_said_on_the_comm(lab: Server, tmp_path: Path) -> None:
    nbformat.write(make_notebook(), lab.root / "frontend.ipynb")
    lab.call("PUT", "api/contents/moved", {"type": "directory"})
    with chromium() as browser:
        page, console = open_notebook(browser, lab, "frontend.ipynb")
        run_cell(page, 0)
        hello = wait_until(lambda: sent(page, "hello"), "hello")[-1]
        assert hello["data"]["path"] == "frontend.ipynb"
        assert hello["data"]["versions"] == {
            "app": "JupyterLab",
            "version": jupyterlab.__version__,
            "extension": EXTENSION_VERSION,
        }
        assert hello["data"]["app"] == f"JupyterLab {jupyterlab.__version__}"
        assert hello["data"]["subshell"] is True and hello["subshell"]

        contents = "window.jupyterapp.serviceManager.contents"
        page.evaluate(f"{contents}.rename('frontend.ipynb', 'renamed.ipynb')")
        wait_until(lambda: len(sent(page, "path")) == 1, "the rename is said")
        page.evaluate(f"{contents}.rename('renamed.ipynb', 'moved/renamed.ipynb')")
        paths = wait_until(lambda: len(sent(page, "path")) == 2 and sent(page, "path"), "moved")
        client = hello["data"]["client"]
        assert [said["data"] for said in paths] == [
            {"op": "path", "client": client, "path": "renamed.ipynb"},
            {"op": "path", "client": client, "path": "moved/renamed.ipynb"},
        ]
        assert {said["subshell"] for said in paths} == {hello["subshell"]}
        assert page.get_by_role("tab", name="renamed.ipynb").count()
        shot = screenshot(page, "frontend-renamed-and-moved", tmp_path)

        # Saved first: closing a notebook with unsaved outputs asks first.
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        wait_until(
            lambda: page.evaluate("!window.jupyterapp.shell.currentWidget.context.model.dirty"),
            "saved",
        )
        page.evaluate("window.jupyterapp.shell.currentWidget.close()")
        byes = wait_until(lambda: sent(page, "bye"), "bye")
        assert [said["data"] for said in byes] == [{"op": "bye", "client": client}]
        assert console.of_the_extension() == []
    assert shot.exists()
    assert (lab.root / "moved" / "renamed.ipynb").exists()


def test_after_a_reload_no_comm_errors_and_the_agent_still_edits(
    lab: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    name = "reload.ipynb"
    nbformat.write(make_notebook(), lab.root / name)
    with chromium() as browser:
        page, console = open_notebook(browser, lab, name)
        run_cell(page, 0)  # the kernel opens a comm
        agent_answers(page, fake_api, Reply.text("Before the reload."))  # and another
        page.reload()
        ready(page)
        # Each of the next two cells opens a comm and closes one the page before the reload
        # was given (the kernel keeps the previous one open, see FrontEndChannel.open).
        agent_answers(page, fake_api, Reply.text("After the reload."))
        agent_answers(
            page,
            fake_api,
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use(
                "NotebookEdit",
                {"edit_mode": "insert", "cell_id": "data", "new_source": "after = 'reload'"},
            ),
            Reply.text("Inserted after the reload."),
        )
        cells = page.evaluate(CELLS)
        assert [source for _, source, _ in cells][2] == "after = 'reload'"
        wait_until_ran(page, len(cells) - 1)
        assert len(sent(page, "hello")) == 2  # one per comm the kernel opened since the reload
        page.locator(".jp-Notebook .jp-Cell").nth(3).scroll_into_view_if_needed()
        shot = screenshot(page, "frontend-after-reload", tmp_path)
        assert [m for m in console.messages if "Comm not found" in m] == []
        assert console.of_the_extension() == []
    assert shot.exists()
