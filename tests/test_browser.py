"""The widgets in a real JupyterLab, driven by Playwright in Debian's Chromium."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.components import CHROMIUM_HOW, require
from tests.jupyterlab_server import CHROMIUM, LabServer, chromium, jupyterlab, screenshot

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).resolve().parents[1] / "example_notebooks" / "00_quick_tour.ipynb"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    require(CHROMIUM.exists(), f"Debian's chromium at {CHROMIUM}", CHROMIUM_HOW)
    root = tmp_path_factory.mktemp("lab") / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    with jupyterlab(root, env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: LabServer) -> Iterator[Any]:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(lab.page(f"lab/tree/{NOTEBOOK.name}"))
        page.wait_for_selector(".jp-Notebook", timeout=60_000)
        page.wait_for_function(
            "window.jupyterapp && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.sessionContext"
            " && window.jupyterapp.shell.currentWidget.sessionContext.session"
            " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
            " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
            " === 'idle'",
            timeout=60_000,
        )
        page.evaluate("window.jupyterapp.commands.execute('editmenu:clear-all')")
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        yield page


def test_the_agent_cell_shows_cards_search_table_and_banner(page: Any, tmp_path: Path) -> None:
    card = page.locator("details.nbagent-call").first
    card.wait_for(timeout=60_000)
    assert page.locator("details.nbagent-call").count() == 2
    banner = page.locator(".jp-OutputArea-output strong", has_text="deferred tools available")
    assert "convert_temperature" in banner.first.inner_text()
    table = page.locator(".jp-OutputArea-output table", has_text="context").first
    assert "'convert' name part (10)" in table.inner_text()
    assert page.get_by_text("69.8 °F").count() >= 1
    card.scroll_into_view_if_needed()
    assert card.get_attribute("open") is None
    card.locator("summary").click()
    page.wait_for_function("document.querySelector('details.nbagent-call').open === true")
    assert '"query": "convert temperature"' in card.inner_text()
    assert screenshot(page, "agent-cell", tmp_path).stat().st_size > 10_000


def test_the_registry_browser_filters_in_the_page(page: Any, tmp_path: Path) -> None:
    browser = page.locator(".jp-OutputArea-output input[placeholder^='filter']")
    browser.wait_for(timeout=60_000)
    rows = page.locator("details.nbagent-tool")
    assert rows.count() >= 2  # ToolSearch, convert_temperature and the session's own tools
    browser.fill("fahrenheit")
    page.wait_for_function("document.querySelectorAll('details.nbagent-tool').length === 1")
    rows.first.locator("summary").click()
    assert "value" in rows.first.locator("table.nbagent-parameters").inner_text()
    screenshot(page, "registry-browser", tmp_path)
