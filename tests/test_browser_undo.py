"""Undo in a real JupyterLab (plain, and with jupyter-collaboration), in Debian's Chromium.

The agent replaces a markdown cell, inserts a code cell and writes a file; the user then types
in a cell the agent did not touch. The "Undo all" button under the ``%%agent`` cell puts the
notebook back as it was, where the page shows it (no reload, no "File Changed" dialog), keeps
the typing and removes the file; ``%agent redo`` in a new cell brings the agent's changes back
and ``%agent undo`` takes them away again. Screenshots in the light theme.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser import set_theme
from tests.test_browser_notebook import PANEL_READY, lab_kind, run_cell
from tests.tools.rtc import KERNEL, Server, jupyter_server

pytestmark = pytest.mark.slow

NAME = "undo.ipynb"
TYPED = "  # the user's"

SOURCES = """() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells.map(
    cell => cell.source)"""


def make_notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext nbagent\n%config NbAgent.permission_mode = 'bypassPermissions'",
            id="setup",
        ),
        nbformat.v4.new_code_cell("data = [3, 1, 4]", id="data"),
        nbformat.v4.new_markdown_cell("Notes", id="notes"),
        nbformat.v4.new_code_cell("%%agent\nTidy up.", id="agent"),
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
    base = tmp_path_factory.mktemp(f"undo-{request.param}")
    python = lab_setup(request.param, base)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with jupyter_server(python, base, LAB_OPTIONS, env=env) as server:
        nbformat.write(make_notebook(), server.root / NAME)
        yield server


METADATA = """() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells.map(
    cell => cell.metadata)"""


def marked(page: Any) -> list[str]:
    """What the marked cells say, top to bottom (the extension's mark)."""
    return list(
        page.evaluate(
            "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell.nbagent-changed'))"
            ".map(cell => cell.dataset.nbagentChanged)"
        )
    )


def run_command(page: Any, source: str) -> None:
    """Add a code cell at the end, as the user would, run it and wait until it ran (cells
    above it may come and go meanwhile)."""
    page.evaluate(
        "() => { const notebook = window.jupyterapp.shell.currentWidget.content;"
        " notebook.activeCellIndex = notebook.model.cells.length - 1; }"
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:insert-cell-below')")
    page.evaluate(
        "(source) => window.jupyterapp.shell.currentWidget.content.activeCell.model"
        ".sharedModel.setSource(source)",
        source,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-cell')")
    wait_until(
        lambda: page.evaluate(
            "(source) => { const panel = window.jupyterapp.shell.currentWidget;"
            " const cells = Array.from(panel.content.model.cells);"
            " const cell = cells.find(c => c.sharedModel.getSource() === source);"
            " return cell && cell.executionCount !== null"
            " && panel.sessionContext.session.kernel.status === 'idle'; }",
            source,
        ),
        f"{source} ran",
    )


def test_the_undo_button_and_the_commands_restore_the_notebook_the_user_sees(
    lab: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_api.wait_idle()
    report = lab.root / "report.txt"
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1100})
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        page.goto(f"{lab.url}lab/tree/{NAME}?token={lab.token}", timeout=90_000)
        page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
        page.evaluate("window.nbagentNoReload = true")  # gone if the page ever reloads
        run_cell(page, 0)
        run_cell(page, 1)
        original = page.evaluate(SOURCES)
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use("NotebookEdit", {"cell_id": "notes", "new_source": "Summary"}),
            Reply.tool_use(
                "NotebookEdit",
                {"edit_mode": "insert", "cell_id": "data", "new_source": "total = sum(data)"},
            ),
            Reply.tool_use("Write", {"file_path": "report.txt", "content": "done\n"}),
            Reply.text("Tidied."),
        )
        run_cell(page, 3)
        edited = [
            "%load_ext nbagent",
            "data = [3, 1, 4]",
            "total = sum(data)",
            "Summary",
            "%%agent",
        ]
        wait_until(
            lambda: [s.split("\n")[0] for s in page.evaluate(SOURCES)] == edited, "the edits"
        )
        assert report.read_text() == "done\n"
        agent = page.locator(".jp-Notebook .jp-Cell").filter(has_text="Tidy up.")
        wait_until(lambda: "Tidied." in agent.locator(".jp-Cell-outputArea").inner_text(), "answer")
        button = agent.get_by_role("button", name="Undo all")
        button.wait_for(timeout=30_000)
        assert agent.locator("button.widget-button").count() == 4  # Undo all, one per edit
        # The cells the agent inserted or changed are marked (metadata, drawn by the extension).
        wait_until(lambda: marked(page) == ["inserted", "edited"], "the marks")
        # The card of the replaced cell opens on its diff.
        agent.locator("details.nbagent-call").nth(1).locator("summary").click()
        assert "-Notes" in agent.locator(".nbagent-review").first.inner_text()
        agent.scroll_into_view_if_needed()
        assert screenshot(page, f"undo-before-{lab_kind(lab)}", tmp_path).exists()
        set_theme(page, "JupyterLab Dark")  # the diff and the buttons, in the dark theme too
        agent.scroll_into_view_if_needed()
        assert screenshot(page, f"undo-before-{lab_kind(lab)}-dark", tmp_path).exists()
        set_theme(page, "JupyterLab Light")

        # The user types in a cell the agent did not touch, then clicks Undo all.
        page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex = 1")
        page.evaluate("window.jupyterapp.commands.execute('notebook:enter-edit-mode')")
        page.keyboard.press("Control+End")
        page.keyboard.type(TYPED)
        page.evaluate("window.jupyterapp.commands.execute('notebook:enter-command-mode')")
        button.click()
        expected = [*original]
        expected[1] += TYPED
        wait_until(lambda: page.evaluate(SOURCES) == expected, "the notebook as it was")
        wait_until(lambda: "Undid checkpoint" in agent.inner_text(), "the undo's report")
        wait_until(lambda: marked(page) == [], "no marks left")
        notes = page.locator(".jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown").first
        wait_until(lambda: notes.inner_text().strip() == "Notes", "the page draws the old notes")
        assert not report.exists()
        assert screenshot(page, f"undo-after-{lab_kind(lab)}", tmp_path).exists()

        # %agent redo brings the changes back, marks included.
        run_command(page, "%agent redo")
        wait_until(lambda: "Summary" in page.evaluate(SOURCES), "the redo")
        assert report.read_text() == "done\n"
        wait_until(lambda: marked(page) == ["inserted", "edited"], "the marks are back")
        # The user types in the cell the agent inserted: its mark goes, and %agent undo
        # leaves it as the user has it while it restores the rest.
        page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex = 2")
        page.evaluate("window.jupyterapp.commands.execute('notebook:enter-edit-mode')")
        page.keyboard.press("Control+End")
        page.keyboard.type("  # kept")
        page.evaluate("window.jupyterapp.commands.execute('notebook:enter-command-mode')")
        wait_until(lambda: marked(page) == ["edited"], "the typed-in cell is no longer marked")
        assert "nbagent" not in page.evaluate(METADATA)[2]
        run_command(page, "%agent undo")
        kept = [*expected[:2], "total = sum(data)  # kept", *expected[2:4]]
        wait_until(lambda: page.evaluate(SOURCES)[:5] == kept, "the undo, the typing kept")
        assert not report.exists() and marked(page) == []
        assert page.evaluate("window.nbagentNoReload") is True
        assert page.locator(".jp-Dialog").count() == 0 and dialogs == []
